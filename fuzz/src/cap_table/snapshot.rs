//! What a capability space shows through its public interface: enough to
//! tell whether a failed operation changed anything, and which objects an
//! operation destroyed.

use super::{Space, OBJECTS, SLOTS};
use abi::cap::CapType;
use microkernel::cap::{
    CapError, Capability, ObjectBody, ObjectHeader, ObjectId, ObjectState, SlotId,
};
use std::collections::BTreeSet;

/// Every slot's content and parent, every object's header, the free
/// counts.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Snapshot {
    slots: Vec<(Result<Capability, CapError>, Option<SlotId>)>,
    objects: Vec<Option<ObjectHeader>>,
    free_slots: usize,
    free_objects: usize,
}

impl Snapshot {
    pub(super) fn of(space: &Space) -> Snapshot {
        Snapshot {
            slots: (0..SLOTS as u32)
                .map(|i| (space.lookup(SlotId(i)), space.parent(SlotId(i))))
                .collect(),
            objects: object_ids().map(|id| space.object(id).copied()).collect(),
            free_slots: space.free_slots(),
            free_objects: space.free_objects(),
        }
    }
}

/// Every id of the object table.
pub(super) fn object_ids() -> impl Iterator<Item = ObjectId> {
    (0..OBJECTS as u32).map(ObjectId)
}

/// Objects that exist (made, not destroyed).
pub(super) fn live_objects(space: &Space) -> BTreeSet<ObjectId> {
    object_ids()
        .filter(|id| space.object(*id).is_some_and(|h| h.live()))
        .collect()
}

/// Slots of the CNodes that have a capability (the slots user space can
/// name), in pool order. A CNode made at boot whose original was never
/// installed owns slots too, but nothing can name them.
pub(super) fn owned_slots(space: &Space) -> Vec<SlotId> {
    let mut slots: Vec<SlotId> = object_ids()
        .filter_map(|id| space.object(id).filter(|h| h.state == ObjectState::Live))
        .filter_map(|h| match h.body {
            ObjectBody::CNode { first_slot, radix } => Some((first_slot, radix)),
            _ => None,
        })
        .flat_map(|(first, radix)| (first..first + (1 << radix)).map(SlotId))
        .collect();
    slots.sort_unstable();
    slots
}

/// Owned slots that hold a capability.
pub(super) fn full_slots(space: &Space) -> Vec<SlotId> {
    owned_slots(space)
        .into_iter()
        .filter(|s| space.lookup(*s).is_ok())
        .collect()
}

/// Owned slots that hold a capability of `cap_type`.
pub(super) fn slots_of_type(space: &Space, cap_type: CapType) -> Vec<SlotId> {
    full_slots(space)
        .into_iter()
        .filter(|s| space.lookup(*s).map(|c| c.cap_type()) == Ok(cap_type))
        .collect()
}

/// Capabilities derived, directly or not, from the one in `of`.
pub(super) fn descendants(space: &Space, of: SlotId) -> Vec<SlotId> {
    full_slots(space)
        .into_iter()
        .filter(|s| space.is_descendant(*s, of))
        .collect()
}
