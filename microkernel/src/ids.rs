//! The names and limits every part of the kernel core shares: objects,
//! slots, CNodes, threads, priorities. A leaf module: it uses nothing
//! else of the crate, so that the modules that keep these things (the
//! capability layer, threads, the scheduler) need not use one another
//! for their names.
//!
//! Each name is a position in object memory wrapped in its own type, so
//! that a slot number can never be passed where an object number is
//! meant: an object is named by the granule its record starts at, a slot
//! by its index among all slot-sized places of object memory (see
//! `arch::object_memory`). Neither is ever stored by user space; it only
//! sees capability pointers.

use core::num::NonZeroU32;

/// A CNode slot: its index in object memory (the slot's physical offset
/// from the start of RAM over the slot size). A CNode's slots have
/// consecutive ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SlotId(pub u32);

impl SlotId {
    /// The slot's index, as object memory counts elements.
    pub const fn index(self) -> u64 {
        self.0 as u64
    }
}

/// An object: the granule its record starts at. Ids are reused once an
/// object's record has been freed; whatever must not confuse a new object
/// with an old one at the same place holds an [`ObjectRef`] instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub u32);

impl ObjectId {
    /// The granule.
    pub const fn granule(self) -> u32 {
        self.0
    }
}

/// A CNode: the object id of an object of type CNode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CNodeId(pub ObjectId);

impl CNodeId {
    /// The CNode's object.
    pub const fn object(self) -> ObjectId {
        self.0
    }
}

/// A reference to one object that outlives it harmlessly: the object's
/// id and its serial number (unique over the kernel's life). Once the
/// object is destroyed the reference resolves to nothing
/// (`Objects::resolve`), even if another object is made at the same place.
/// The kernel uses it wherever it names an object it must not keep alive
/// and need not hear of its end at once (a thread's fault endpoint, a
/// filter's policy server, an audit ring, the VSpace a Frame is mapped
/// into).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRef {
    /// Where the object is.
    pub id: ObjectId,
    /// Which object it was.
    pub serial: u64,
}

/// A compact optional slot number for the derivation tree's links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotLink(u32);

impl SlotLink {
    /// No slot.
    pub(crate) const NONE: SlotLink = SlotLink(u32::MAX);

    /// A link to `slot`.
    pub(crate) const fn to(slot: SlotId) -> SlotLink {
        SlotLink(slot.0)
    }

    /// The linked slot, if any.
    pub(crate) const fn get(self) -> Option<SlotId> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(SlotId(self.0))
        }
    }
}

impl From<Option<SlotId>> for SlotLink {
    fn from(slot: Option<SlotId>) -> Self {
        slot.map_or(SlotLink::NONE, SlotLink::to)
    }
}

/// A compact optional object id, for the links threaded through headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectLink(u32);

impl ObjectLink {
    /// No object.
    pub const NONE: ObjectLink = ObjectLink(u32::MAX);

    /// A link to `object`.
    pub const fn to(object: ObjectId) -> ObjectLink {
        ObjectLink(object.0)
    }

    /// The linked object, if any.
    pub const fn get(self) -> Option<ObjectId> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(ObjectId(self.0))
        }
    }
}

impl From<Option<ObjectId>> for ObjectLink {
    fn from(object: Option<ObjectId>) -> Self {
        object.map_or(ObjectLink::NONE, ObjectLink::to)
    }
}

/// A thread: the position of its TCB's record (the thread lives in it).
/// Never 0 (granule 0 of object memory holds no record), so an
/// `Option<ThreadId>` is 4 bytes and "none" is one compare with zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(NonZeroU32);

impl ThreadId {
    /// The thread of TCB `tcb`.
    pub const fn of(tcb: ObjectId) -> ThreadId {
        match NonZeroU32::new(tcb.0) {
            Some(granule) => ThreadId(granule),
            None => panic!("no record starts at granule 0"),
        }
    }

    /// Its TCB object.
    pub const fn object(self) -> ObjectId {
        ObjectId(self.0.get())
    }

    /// The granule its TCB's record starts at.
    #[inline(always)]
    pub const fn granule(self) -> u32 {
        self.0.get()
    }

    /// The thread at index `n` of a test's thread vector.
    #[cfg(test)]
    pub(crate) const fn nth(n: u32) -> ThreadId {
        ThreadId::of(ObjectId(n + 1))
    }

    /// Its index in a test's thread vector (`nth`'s inverse).
    #[cfg(test)]
    pub(crate) const fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// Priorities are 0 (lowest) ..= 255 (highest).
pub type Priority = u8;

/// One thread's attachment of a filter: the thread and the position of
/// the filter in its stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterUser {
    /// The confined thread.
    pub thread: ThreadId,
    /// Where in its stack (`Thread::filters`) the filter is.
    pub position: u8,
}

/// Most filters stacked on one thread.
pub const MAX_STACKED_FILTERS: usize = 8;
