//! The names of things in a capability space: slots, objects, CNodes.
//!
//! Each is a plain index wrapped in its own type so that a slot number can
//! never be passed where an object number is meant.

/// A slot in the global slot pool (not a capability pointer: a CNode and an
/// index within it make one, see `CapSpace::slot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SlotId(pub u32);

impl SlotId {
    /// The slot's index in the pool.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// An entry of the object table. Ids are reused once an object has been
/// destroyed (after `on_destroy` reported it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub u32);

impl ObjectId {
    /// The object's index in the table.
    pub const fn index(self) -> usize {
        self.0 as usize
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
