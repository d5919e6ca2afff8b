//! One capability-table operation, as the fuzz input spells it.
//!
//! Slots, CNodes and objects are named by selector bytes reduced modulo
//! the candidates when the step runs (the full slots for a source, the
//! owned slots for a destination), so most steps name something that
//! exists; one selector value past the candidates names a stray slot (one
//! no CNode owns, or one past the pool) to exercise the bounds checks.

use super::Bytes;
use abi::cap::CapType;

/// A selector: which of the candidates at the time of the step.
pub(super) type Selector = u8;

/// An operation and its arguments.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    /// Make a boot object (`create_object` / `create_cnode`) and install
    /// its original capability.
    BootObject {
        /// 0 Endpoint, 1 Notification, 2 CNode, 3 Untyped, 4 Frame.
        kind: u8,
        /// CNode radix or page count / page number, by kind.
        shape: u8,
        /// The rights of the original (low six bits).
        rights: u8,
        /// Destination slot.
        dst: Selector,
    },
    /// `install_original` of a capability made up from raw fields, to an
    /// object that may already have capabilities (which must be refused).
    Forge {
        /// Object id (modulo the table size plus two).
        object: u8,
        /// Type number (modulo the type count).
        cap_type: u8,
        /// Rights (low six bits).
        rights: u8,
        /// Destination slot.
        dst: Selector,
    },
    /// `copy`.
    Copy {
        /// Source slot.
        src: Selector,
        /// Destination slot.
        dst: Selector,
    },
    /// `mint`.
    Mint {
        /// Source slot.
        src: Selector,
        /// Destination slot.
        dst: Selector,
        /// Rights asked for (low six bits).
        rights: u8,
        /// 0: no badge; otherwise badge `badge - 1`.
        badge: u8,
    },
    /// `move_cap`.
    Move {
        /// Source slot.
        src: Selector,
        /// Destination slot.
        dst: Selector,
    },
    /// `delete`.
    Delete {
        /// The slot.
        slot: Selector,
    },
    /// `revoke`.
    Revoke {
        /// The slot.
        slot: Selector,
    },
    /// `retype`.
    Retype {
        /// Source slot (even: among Untyped capabilities; odd: any).
        untyped: Selector,
        /// The new type (modulo the type count, so refused types too).
        new_type: u8,
        /// Size parameter, biased towards valid values (see `size_param`).
        param: u8,
        /// Destination CNode (the value past the CNodes: any object).
        cnode: Selector,
        /// First destination index (240 and above: far out of range).
        index: u8,
        /// Object count (modulo 6, so 0 and more than fit too).
        count: u8,
    },
}

/// Operations the input can name.
const KINDS: u8 = 8;

impl Op {
    /// The next operation in `input`.
    pub(super) fn read(input: &mut Bytes<'_>) -> Op {
        match input.u8() % KINDS {
            0 => Op::BootObject {
                kind: input.u8() % 5,
                shape: input.u8(),
                rights: input.u8(),
                dst: input.u8(),
            },
            1 => Op::Forge {
                object: input.u8(),
                cap_type: input.u8(),
                rights: input.u8(),
                dst: input.u8(),
            },
            2 => Op::Copy {
                src: input.u8(),
                dst: input.u8(),
            },
            3 => Op::Mint {
                src: input.u8(),
                dst: input.u8(),
                rights: input.u8(),
                badge: input.u8(),
            },
            4 => Op::Move {
                src: input.u8(),
                dst: input.u8(),
            },
            5 => Op::Delete { slot: input.u8() },
            6 => Op::Revoke { slot: input.u8() },
            _ => Op::Retype {
                untyped: input.u8(),
                new_type: input.u8(),
                param: input.u8(),
                cnode: input.u8(),
                index: input.u8(),
                count: input.u8(),
            },
        }
    }
}

/// A retype size parameter for `new_type`: mostly a valid one (a CNode
/// radix 1..=3, an Untyped of 4..16 KiB, 0 for fixed sizes), sometimes the
/// raw byte.
pub(super) fn size_param(new_type: CapType, param: u8) -> u64 {
    if param >= 0xf0 {
        return u64::from(param);
    }
    match new_type {
        CapType::CNode => 1 + u64::from(param % 3),
        CapType::Untyped => 12 + u64::from(param % 3),
        _ => 0,
    }
}
