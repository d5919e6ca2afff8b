//! What every object's record starts with, and the bodies the capability
//! layer itself keeps: an Untyped's, a CNode's and a slot's.
//!
//! The header is the capability layer's whole knowledge of an object: its
//! type, where it is in its life, which Untyped paid for it and how many
//! capabilities refer to it. What the object *does* (a thread's registers,
//! an endpoint's queue) is the body that follows the header in the same
//! record (`layout.rs` says which body each type has).
use super::word::Capability;
use crate::ids::{ObjectId, ObjectLink, SlotLink};
use crate::thread::ThreadId;
use abi::cap::CapType;

/// Where an object is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectState {
    /// Made (by the kernel) but its original capability is not installed
    /// yet.
    Created,
    /// At least one capability refers to it.
    Live,
    /// A CNode whose last capability is gone while its slots are being
    /// emptied. Only seen inside a delete; never between operations.
    Dying,
    /// Its last capability is gone: the kernel is told (once, by
    /// `Objects::take_destroyed`) so that it can let go of it, and the
    /// record is freed when the kernel entry that destroyed it ends
    /// (`Objects::reap`). No capability reaches it, and every
    /// [`ObjectRef`](super::ObjectRef) to it resolves to nothing.
    Destroyed,
    /// Destroyed and let go of by the kernel: waiting to be freed.
    Retired,
    /// Destroyed, but still in use by the kernel (a Filter attached to a
    /// thread: a deleted capability never lifts a restriction): no
    /// capability reaches it, and its record stays until the kernel is
    /// done with it (`Objects::retire_pinned`). Its Untyped counts it as a
    /// child until then.
    Pinned,
}

/// What the capability layer knows about one object: the first 32 bytes
/// of its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    /// The object's type (every capability to it has this type).
    pub cap_type: CapType,
    /// Where it is in its life.
    pub state: ObjectState,
    /// Capabilities that refer to it.
    pub cap_count: u32,
    /// The Untyped that paid for it; none for an object the kernel made
    /// from its own pool of pages (at boot, or for the root task).
    pub parent_untyped: ObjectLink,
    /// Unique over the kernel's life: tells this object from any other
    /// ever made at the same place (see `ObjectRef`).
    pub serial: u64,
    /// The next object on the list of every object, and the previous one.
    pub(crate) next: ObjectLink,
    pub(crate) previous: ObjectLink,
    /// The next object on the work list it is on (a dying CNode's, or the
    /// destroyed and retired objects').
    pub(crate) next_work: ObjectLink,
}

impl ObjectHeader {
    /// A header for a new object of `cap_type`.
    pub(crate) fn new(cap_type: CapType, parent_untyped: Option<ObjectId>, serial: u64) -> Self {
        ObjectHeader {
            cap_type,
            state: ObjectState::Created,
            cap_count: 0,
            parent_untyped: parent_untyped.into(),
            serial,
            next: ObjectLink::NONE,
            previous: ObjectLink::NONE,
            next_work: ObjectLink::NONE,
        }
    }

    /// Does the object exist (made, and not being destroyed)?
    pub fn live(&self) -> bool {
        matches!(self.state, ObjectState::Created | ObjectState::Live)
    }

    /// The Untyped that paid for it, if one did.
    pub fn parent(&self) -> Option<ObjectId> {
        self.parent_untyped.get()
    }
}

/// An Untyped: a range of RAM from which objects are carved, from both
/// ends. Memory that user space or the MMU reaches (Frames, page tables,
/// smaller Untypeds) is taken from the bottom upwards, aligned as it must
/// be; the kernel's records for the objects made are taken from the top
/// downwards, packed. The Untyped is full when the two meet. An Untyped
/// carved from another keeps its own record in its last granules (so the
/// parent pays nothing for it at its top, and a child can be as large as
/// its parent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UntypedBody {
    /// Physical address of the range.
    pub phys: u64,
    /// Its size in bytes (a power of two, at least a page).
    pub size: u64,
    /// Bytes from the start handed out as memory (the next memory goes at
    /// or above this offset).
    pub bottom: u64,
    /// Offset of the lowest record handed out (`home` when none is): the
    /// next record goes right below it.
    pub top: u64,
    /// Where `top` returns to when everything carved is gone: the size,
    /// or, for an Untyped carved from another, the offset of its own
    /// record (which it keeps at its top, so that a child can take all of
    /// its parent's memory).
    pub home: u64,
    /// Objects carved from it that still have their record. When the last
    /// one goes both ends return (`bottom` 0, `top` its `home`).
    pub live_children: u32,
    /// How many of those are pinned (`ObjectState::Pinned`).
    pub pinned: u32,
    /// A value that names the state of its free memory: new (never seen
    /// before, in any Untyped) whenever it hands memory out or takes all
    /// of it back. Work done on its free memory between two syscalls (a
    /// preempted retype's zeroing) is still valid exactly while this is
    /// unchanged.
    pub epoch: u64,
    /// A device Untyped: its range is MMIO, not RAM. Only Frames are
    /// retyped from it, never zeroed, their records paid by a RAM Untyped
    /// (`Objects::plan_device_retype`); it holds no record itself (its own
    /// is on the kernel's pages), and `live_children` counts its Frames.
    pub device: bool,
}

impl UntypedBody {
    /// An Untyped over `size` bytes at `phys` with nothing handed out,
    /// whose records may use its memory up to offset `home`.
    pub(crate) fn new(phys: u64, size: u64, home: u64, epoch: u64) -> Self {
        UntypedBody {
            phys,
            size,
            bottom: 0,
            top: home,
            home,
            live_children: 0,
            pinned: 0,
            epoch,
            device: false,
        }
    }

    /// The free range between the two ends, as physical addresses.
    pub fn free(&self) -> (u64, u64) {
        (self.phys + self.bottom, self.phys + self.top)
    }
}

/// A CNode's body: its size, and the threads whose CSpace it is. Its
/// `2^radix` slots follow the record as its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CNodeBody {
    /// log2 of the slot count.
    pub radix: u8,
    /// The first of the threads whose CSpace it is (linked through
    /// `Thread::cspace_links`): when it is destroyed they have none.
    pub users: Option<ThreadId>,
}

/// The four derivation-tree links of one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Links {
    pub(crate) parent: SlotLink,
    pub(crate) first_child: SlotLink,
    pub(crate) next_sibling: SlotLink,
    pub(crate) prev_sibling: SlotLink,
}

impl Links {
    /// A slot outside the tree.
    pub(crate) const CLEAR: Links = Links {
        parent: SlotLink::NONE,
        first_child: SlotLink::NONE,
        next_sibling: SlotLink::NONE,
        prev_sibling: SlotLink::NONE,
    };
}

/// One CNode slot: a capability (or none) and its place in the
/// derivation tree. 32 bytes, two to a granule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Slot {
    pub(crate) cap: Capability,
    pub(crate) links: Links,
}

impl Slot {
    /// An empty slot.
    pub const EMPTY: Slot = Slot {
        cap: Capability::NULL,
        links: Links::CLEAR,
    };
}

const _: () = assert!(core::mem::size_of::<Slot>() == 32);
