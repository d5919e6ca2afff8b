//! One capability-table operation, as the fuzz input spells it.
//!
//! Slots, CNodes and objects are named by selector bytes reduced modulo
//! the candidates when the step runs (the full slots for a source, the
//! owned slots for a destination, the CNodes with a capability, every
//! object), so most steps name something that exists; one selector value
//! past the candidates names a stray one (a slot past object memory, or a
//! slot-sized place no CNode owns right next to a CNode's slots; a granule
//! inside a record, or past object memory) to exercise the bounds checks.

use super::Bytes;
use abi::cap::CapType;

/// A selector: which of the candidates at the time of the step.
pub(super) type Selector = u8;

/// An operation and its arguments.
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    /// Make a boot object (`create_object` / `create_cnode`, its record
    /// on the kernel's pool; `create_untyped_in_place`) and install its
    /// original capability.
    BootObject {
        /// 0 Endpoint, 1 Notification, 2 CNode, 3 Untyped, 4 Frame.
        kind: u8,
        /// By kind: the CNode radix (low two bits, so 0 too, which must be
        /// refused); the first page in the boot RAM (low five bits; 0xff: a
        /// misaligned address, which must be refused), and for an Untyped
        /// its pages (1 + the top two bits) and where its record goes (bit
        /// 5 set: in its own last granules, `create_untyped_in_place`;
        /// clear: on the pool).
        shape: u8,
        /// The rights of the original (low six bits). Both top bits set:
        /// the record is put where no record can go (by the low two bits:
        /// on another record, off a granule boundary, past the end of
        /// object memory, below its start), which must be refused (an
        /// Untyped made in place has no say in where its record goes).
        rights: u8,
        /// Destination slot.
        dst: Selector,
    },
    /// `install_original` of a capability made up from raw fields, to an
    /// object that may already have capabilities (which must be refused).
    Forge {
        /// Object: among every object, in id order; the two values past
        /// them name a granule inside a record and one past object memory.
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
    /// `retype` (the only way Reply objects, like Filters, are made).
    Retype {
        /// Source slot (even: among Untyped capabilities; odd: any).
        untyped: Selector,
        /// The new type (modulo the type count, so refused types too).
        new_type: u8,
        /// Size parameter, biased towards valid values (see `size_param`).
        param: u8,
        /// Destination CNode, among those with a capability (the value
        /// past them: any object, or a granule that starts none, as
        /// `Forge` picks).
        cnode: Selector,
        /// First destination index (240 and above: far out of range).
        index: u8,
        /// Object count (modulo 6, so 0 and more than fit too; 0xff: 65,
        /// past `MAX_RETYPE_COUNT`).
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
/// radix 1..=3, an Untyped of 4..16 KiB, a VSpace with 1..=3 table pages
/// besides its root, 0 for fixed sizes), sometimes the raw byte.
pub(super) fn size_param(new_type: CapType, param: u8) -> u64 {
    if param >= 0xf0 {
        return u64::from(param);
    }
    match new_type {
        CapType::CNode => 1 + u64::from(param % 3),
        CapType::Untyped => 12 + u64::from(param % 3),
        CapType::VSpace => 1 + u64::from(param % 3),
        _ => 0,
    }
}
