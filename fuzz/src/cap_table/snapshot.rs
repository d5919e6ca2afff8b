//! What a capability space shows: enough to tell whether a failed
//! operation changed anything, and which objects an operation destroyed.

use super::{Pool, Space};
use abi::cap::CapType;
use arch::object_memory::{kind, GRANULE};
use microkernel::cap::{CNodeId, ObjectId, ObjectState, Objects, Slot, SlotId};
use std::collections::BTreeMap;

/// Slot-sized places in a granule (slot ids count them).
pub(super) const SLOTS_PER_GRANULE: u32 = (GRANULE / core::mem::size_of::<Slot>()) as u32;

/// Everything a failed operation must leave as it was: what the
/// capability layer holds (`Objects::snapshot`: every object's header,
/// Untyped and CNode bodies, every slot with its derivation links), what
/// each granule of object memory holds, and the kernel's pool.
///
/// (The old free slot and object counts have no equivalent: there is no
/// slot pool or object table any more; the granules say what they said.)
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Snapshot {
    objects: microkernel::cap::Snapshot,
    granules: Vec<Granule>,
    pool: Pool,
}

/// What one granule of object memory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Granule {
    Free,
    /// The start of a record of this type.
    Record(CapType),
    /// CNode slots.
    Slots,
    /// The rest of a record.
    Rest,
}

impl Snapshot {
    pub(super) fn of(space: &Space) -> Snapshot {
        let memory = space.objects.memory();
        let granules = (0..memory.granules() as u32)
            .map(|g| match memory.kind_at(g) {
                _ if memory.is_free(g) => Granule::Free,
                Some(t) => Granule::Record(t),
                None if memory
                    .element::<kind::CNode>(u64::from(g * SLOTS_PER_GRANULE))
                    .is_some() =>
                {
                    Granule::Slots
                }
                None => Granule::Rest,
            })
            .collect();
        Snapshot {
            objects: space.objects.snapshot(),
            granules,
            pool: space.pool.clone(),
        }
    }
}

/// Objects that exist (made, not destroyed), with their serial numbers
/// (ids are reused once a record is freed) and types.
pub(super) fn live_objects(objects: &Objects) -> BTreeMap<ObjectId, (u64, CapType)> {
    objects
        .iter()
        .filter_map(|id| {
            let h = objects.object(id).filter(|h| h.live())?;
            Some((id, (h.serial, h.cap_type)))
        })
        .collect()
}

/// Every object, in id order.
pub(super) fn all_objects(objects: &Objects) -> Vec<ObjectId> {
    let mut ids: Vec<ObjectId> = objects.iter().collect();
    ids.sort_unstable();
    ids
}

/// The CNodes that have a capability, in id order.
pub(super) fn live_cnodes(objects: &Objects) -> Vec<CNodeId> {
    all_objects(objects)
        .into_iter()
        .filter(|id| {
            objects
                .object(*id)
                .is_some_and(|h| h.state == ObjectState::Live && h.cap_type == CapType::CNode)
        })
        .map(CNodeId)
        .collect()
}

/// The slots of `cnode` (none if it is no CNode).
pub(super) fn slots_of(objects: &Objects, cnode: ObjectId) -> impl Iterator<Item = SlotId> {
    let (first, count) = objects
        .memory()
        .elements::<kind::CNode>(cnode.granule())
        .unwrap_or((0, 0));
    (first..first + count as u64).map(|i| SlotId(i as u32))
}

/// Slots of the CNodes that have a capability (the slots user space can
/// name), in slot order. A CNode made at boot whose original was never
/// installed has slots too, but nothing can name them.
pub(super) fn owned_slots(objects: &Objects) -> Vec<SlotId> {
    let mut slots: Vec<SlotId> = live_cnodes(objects)
        .into_iter()
        .flat_map(|cnode| slots_of(objects, cnode.object()))
        .collect();
    slots.sort_unstable();
    slots
}

/// Owned slots that hold a capability.
pub(super) fn full_slots(objects: &Objects) -> Vec<SlotId> {
    owned_slots(objects)
        .into_iter()
        .filter(|s| objects.lookup(*s).is_ok())
        .collect()
}

/// The slots of every CNode, with a capability or not, that hold one.
pub(super) fn every_full_slot(objects: &Objects) -> Vec<SlotId> {
    let mut slots: Vec<SlotId> = objects
        .iter()
        .flat_map(|id| slots_of(objects, id))
        .filter(|s| objects.lookup(*s).is_ok())
        .collect();
    slots.sort_unstable();
    slots
}

/// Owned slots that hold a capability of `cap_type`.
pub(super) fn slots_of_type(objects: &Objects, cap_type: CapType) -> Vec<SlotId> {
    full_slots(objects)
        .into_iter()
        .filter(|s| objects.lookup(*s).map(|c| c.cap_type()) == Ok(cap_type))
        .collect()
}

/// Capabilities derived, directly or not, from the one in `of`.
pub(super) fn descendants(objects: &Objects, of: SlotId) -> Vec<SlotId> {
    full_slots(objects)
        .into_iter()
        .filter(|s| objects.is_descendant(*s, of))
        .collect()
}

/// The granules the record of `id` covers.
pub(super) fn record_granules(objects: &Objects, id: ObjectId) -> core::ops::Range<u32> {
    let cap_type = objects.object(id).map_or(CapType::Null, |h| h.cap_type);
    let radix = objects.get::<kind::CNode>(id).map_or(0, |c| c.radix);
    let bytes = Objects::record_bytes(cap_type, radix).unwrap_or(0);
    id.granule()..id.granule() + (bytes / GRANULE as u64) as u32
}

/// The memory of its own an object has (a Frame's page, a VSpace's pages,
/// an Untyped's range): `(start, end)`, physical.
pub(super) fn own_memory(objects: &Objects, id: ObjectId) -> Option<(u64, u64)> {
    if let Some(u) = objects.get::<kind::Untyped>(id) {
        return Some((u.phys, u.phys + u.size));
    }
    if let Some(f) = objects.get::<kind::Frame>(id) {
        return Some((f.phys, f.phys + super::PAGE));
    }
    objects
        .get::<kind::VSpace>(id)
        .map(|v| (v.phys, v.phys + v.pages * super::PAGE))
}
