//! Capability types and rights, as user space names them.
//!
//! A capability is a kernel-held reference to one object plus the rights
//! it grants on it. User space never sees the capability itself, only the
//! slot it lives in; these types are the vocabulary for asking the kernel
//! what a slot holds and for minting capabilities with fewer rights.
//! `docs/capabilities.md` says what each right allows on each type.
use modular_bitfield::prelude::*;

/// The kind of object a capability refers to.
///
/// Numbers are stable ABI: new types take new numbers.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CapType {
    /// No capability: an empty slot.
    Null = 0,
    /// A range of physical memory from which objects are made (retype).
    Untyped = 1,
    /// A table of capability slots (a thread's CSpace is one CNode).
    CNode = 2,
    /// A thread control block.
    Tcb = 3,
    /// A rendezvous point for synchronous IPC.
    Endpoint = 4,
    /// A word of signal bits for asynchronous notification.
    Notification = 5,
    /// The right to answer one `Call`.
    Reply = 6,
    /// A 4 KiB page of physical memory that can be mapped.
    Frame = 7,
    /// An address space (the root page table).
    VSpace = 8,
    /// The right to receive and acknowledge one interrupt line.
    IrqHandler = 9,
    /// The right to print on the kernel's debug console.
    DebugConsole = 10,
    /// A seccomp-like policy filter: rules loaded with `FilterLoad` and
    /// attached to threads with `TcbAttachFilter` (see `docs/policy.md`).
    Filter = 11,
    /// The right to make an IrqHandler for any interrupt the kernel does
    /// not keep (`IrqControlGet`); only the kernel makes it (the root
    /// task's).
    IrqControl = 12,
    /// The right to read every thread's state and every CSpace
    /// (`InspectThread`, `InspectCaps`; `abi::inspect`); only the kernel
    /// makes it (the root task's).
    Inspector = 13,
}

impl CapType {
    /// Every type, in number order.
    pub const ALL: [CapType; 14] = [
        CapType::Null,
        CapType::Untyped,
        CapType::CNode,
        CapType::Tcb,
        CapType::Endpoint,
        CapType::Notification,
        CapType::Reply,
        CapType::Frame,
        CapType::VSpace,
        CapType::IrqHandler,
        CapType::DebugConsole,
        CapType::Filter,
        CapType::IrqControl,
        CapType::Inspector,
    ];

    /// Decodes a type number; `None` for a number no type has.
    pub const fn from_raw(raw: u64) -> Option<CapType> {
        if raw < Self::ALL.len() as u64 {
            Some(Self::ALL[raw as usize])
        } else {
            None
        }
    }

    /// The type's number.
    pub const fn raw(self) -> u8 {
        self as u8
    }

    /// A short lower-case name, for traces and reports.
    pub const fn name(self) -> &'static str {
        match self {
            CapType::Null => "null",
            CapType::Untyped => "untyped",
            CapType::CNode => "cnode",
            CapType::Tcb => "tcb",
            CapType::Endpoint => "endpoint",
            CapType::Notification => "notification",
            CapType::Reply => "reply",
            CapType::Frame => "frame",
            CapType::VSpace => "vspace",
            CapType::IrqHandler => "irq_handler",
            CapType::DebugConsole => "debug_console",
            CapType::Filter => "filter",
            CapType::IrqControl => "irq_control",
            CapType::Inspector => "inspector",
        }
    }

    /// The type named `name` (as [`CapType::name`] spells it), for rule
    /// files (`rules`).
    pub fn from_name(name: &str) -> Option<CapType> {
        CapType::ALL.iter().copied().find(|t| t.name() == name)
    }
}

/// What a capability allows on its object. Which operation each right
/// unlocks depends on the object type (see `docs/capabilities.md`).
///
/// Layout (low to high): `read`, `write`, `grant`, `grant_reply`, `trace`,
/// `policy`, two reserved bits that must be zero.
#[bitfield(bits = 8)]
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Specifier)]
pub struct Rights {
    /// Receive, wait, read registers, map readable.
    pub read: bool,
    /// Send, signal, configure, modify, map writable, retype.
    pub write: bool,
    /// Transfer capabilities through an endpoint.
    pub grant: bool,
    /// Call through an endpoint: the receiver gets a reply capability.
    pub grant_reply: bool,
    /// TCB: observe the thread (attach a tracer).
    pub trace: bool,
    /// TCB: install or change the thread's policy filter.
    pub policy: bool,
    #[skip]
    __: B2,
}

/// The bits a `Rights` value may have set.
const DEFINED_RIGHTS: u8 = 0b0011_1111;

impl Rights {
    /// Every right.
    pub const ALL: Rights = Rights::from_bytes([DEFINED_RIGHTS]);
    /// No right at all.
    pub const NONE: Rights = Rights::from_bytes([0]);
    /// Only `read`.
    pub const READ: Rights = Rights::from_bytes([1 << 0]);
    /// Only `write`.
    pub const WRITE: Rights = Rights::from_bytes([1 << 1]);
    /// Only `grant`.
    pub const GRANT: Rights = Rights::from_bytes([1 << 2]);
    /// Only `grant_reply`.
    pub const GRANT_REPLY: Rights = Rights::from_bytes([1 << 3]);
    /// Only `trace`.
    pub const TRACE: Rights = Rights::from_bytes([1 << 4]);
    /// Only `policy`.
    pub const POLICY: Rights = Rights::from_bytes([1 << 5]);
    /// `read` and `write`.
    pub const READ_WRITE: Rights = Rights::from_bytes([0b11]);

    /// Decodes rights user space passed in a register: `None` if a
    /// reserved or out-of-range bit is set.
    pub const fn from_raw(raw: u64) -> Option<Rights> {
        if raw & !(DEFINED_RIGHTS as u64) != 0 {
            None
        } else {
            Some(Rights::from_bytes([raw as u8]))
        }
    }

    /// The rights as their bit pattern.
    pub const fn raw(self) -> u8 {
        self.into_bytes()[0]
    }

    /// Does `other` hold every right `self` holds?
    pub const fn is_subset_of(self, other: Rights) -> bool {
        self.raw() & !other.raw() == 0
    }

    /// The rights both hold.
    pub const fn intersection(self, other: Rights) -> Rights {
        Rights::from_bytes([self.raw() & other.raw()])
    }

    /// The rights either holds.
    pub const fn union(self, other: Rights) -> Rights {
        Rights::from_bytes([self.raw() | other.raw()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_round_trip() {
        for (i, t) in CapType::ALL.iter().enumerate() {
            assert_eq!(t.raw() as usize, i);
            assert_eq!(CapType::from_raw(i as u64), Some(*t));
            assert!(!t.name().is_empty());
            assert_eq!(CapType::from_name(t.name()), Some(*t));
        }
        assert_eq!(CapType::from_name("Endpoint"), None);
        assert_eq!(CapType::from_raw(CapType::ALL.len() as u64), None);
        assert_eq!(CapType::from_raw(u64::MAX), None);
    }

    #[test]
    fn rights_layout_is_stable() {
        let r = Rights::new()
            .with_read(true)
            .with_grant(true)
            .with_policy(true);
        assert_eq!(r.raw(), 0b10_0101);
        assert_eq!(Rights::READ.union(Rights::WRITE), Rights::READ_WRITE);
        assert!(Rights::ALL.read() && Rights::ALL.write() && Rights::ALL.grant());
        assert!(Rights::ALL.grant_reply() && Rights::ALL.trace() && Rights::ALL.policy());
        assert_eq!(Rights::NONE.raw(), 0);
    }

    #[test]
    fn reserved_bits_are_refused() {
        assert_eq!(Rights::from_raw(0b11_1111), Some(Rights::ALL));
        assert_eq!(Rights::from_raw(0b100_0000), None);
        assert_eq!(Rights::from_raw(0x100), None);
    }

    #[test]
    fn subset_and_intersection() {
        assert!(Rights::READ.is_subset_of(Rights::READ_WRITE));
        assert!(!Rights::READ_WRITE.is_subset_of(Rights::READ));
        assert!(Rights::NONE.is_subset_of(Rights::NONE));
        assert!(Rights::ALL.is_subset_of(Rights::ALL));
        assert_eq!(
            Rights::READ_WRITE.intersection(Rights::WRITE),
            Rights::WRITE
        );
        assert_eq!(Rights::GRANT.intersection(Rights::WRITE), Rights::NONE);
    }
}
