//! Retype: carving new objects out of Untyped memory.
//!
//! An Untyped hands out memory upwards from a watermark. Each new object
//! is aligned to its own (power-of-two) size, so the only waste is
//! alignment padding. Memory is never handed out twice: it comes back only
//! when every object carved from the Untyped is gone, and then all of it
//! at once (the watermark returns to 0) — "revoking an Untyped reclaims
//! everything made from it".
use super::object::ObjectBody;
use super::object_size::{object_alignment, object_size};
use super::{CNodeId, CapError, CapSpace, Capability, ObjectHeader, ObjectId, ObjectState, SlotId};
use abi::cap::{CapType, Rights};

/// Most objects one retype makes (bounds the kernel's work per call).
pub const MAX_RETYPE_COUNT: usize = 64;

/// The objects one retype made, in destination-slot order.
pub type RetypedObjects = heapless::Vec<ObjectId, MAX_RETYPE_COUNT>;

/// A retype that has been checked and not yet done: where its objects
/// will lie. Memory work on that range (zeroing) may happen before
/// [`CapSpace::commit_retype`]; it stays valid while the Untyped's
/// [`epoch`](super::ObjectHeader::epoch) is `epoch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetypePlan {
    untyped_slot: SlotId,
    untyped: ObjectId,
    new_type: CapType,
    size_param: u64,
    size: u64,
    dst_cnode: CNodeId,
    dst_index: u64,
    count: u64,
    /// The first byte the objects take (physical).
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// The Untyped's epoch when the plan was made.
    pub epoch: u64,
}

impl<const SLOTS: usize, const OBJECTS: usize> CapSpace<SLOTS, OBJECTS> {
    /// Makes `count` objects of `new_type` from the Untyped capability in
    /// `untyped_slot` (which needs `write`) and puts their original
    /// capabilities, with every right, into slots `dst_index ..
    /// dst_index + count` of `dst_cnode`, as children of `untyped_slot`'s
    /// capability. `size_param` is the radix of a CNode, log2 of the size
    /// of an Untyped, the page-table pages of a VSpace besides its root,
    /// and 0 for the fixed-size types.
    ///
    /// Everything is checked before anything changes: the capability, the
    /// type and size, the count (1 ..= `MAX_RETYPE_COUNT`), that the
    /// destination range lies inside the CNode and is empty, that the
    /// Untyped has room, that the object table and (for CNodes) the slot
    /// pool have room.
    pub fn retype(
        &mut self,
        untyped_slot: SlotId,
        new_type: CapType,
        size_param: u64,
        dst_cnode: CNodeId,
        dst_index: u64,
        count: u64,
    ) -> Result<RetypedObjects, CapError> {
        let plan = self.plan_retype(
            untyped_slot,
            new_type,
            size_param,
            dst_cnode,
            dst_index,
            count,
        )?;
        self.commit_retype(&plan)
    }

    /// Checks a retype as [`CapSpace::retype`] does and says where its
    /// objects will lie, changing nothing.
    pub fn plan_retype(
        &self,
        untyped_slot: SlotId,
        new_type: CapType,
        size_param: u64,
        dst_cnode: CNodeId,
        dst_index: u64,
        count: u64,
    ) -> Result<RetypePlan, CapError> {
        let untyped_cap = self.lookup_typed(untyped_slot, CapType::Untyped, Rights::WRITE)?;
        let size = object_size(new_type, size_param)?;
        if !(1..=MAX_RETYPE_COUNT as u64).contains(&count) {
            return Err(CapError::InvalidArgument);
        }
        let (first_slot, radix) = self.cnode_slots(dst_cnode)?;
        let in_cnode = dst_index
            .checked_add(count)
            .is_some_and(|end| end <= 1 << radix);
        if !in_cnode {
            return Err(CapError::InvalidArgument);
        }
        for i in 0..count {
            self.check_empty(SlotId(first_slot.0 + (dst_index + i) as u32))?;
        }
        let untyped_id = untyped_cap.object();
        let untyped = *self.object(untyped_id).ok_or(CapError::InvalidCapability)?;
        let ObjectBody::Untyped { watermark, .. } = untyped.body else {
            return Err(CapError::WrongCapabilityType);
        };
        let start = untyped
            .phys
            .checked_add(watermark)
            .and_then(|free| free.checked_next_multiple_of(object_alignment(new_type, size)))
            .ok_or(CapError::NotEnoughMemory)?;
        let end = size
            .checked_mul(count)
            .and_then(|bytes| start.checked_add(bytes))
            .filter(|end| *end <= untyped.phys_end())
            .ok_or(CapError::NotEnoughMemory)?;
        if self.objects.free_count() < count as usize {
            return Err(CapError::OutOfResources);
        }
        Ok(RetypePlan {
            untyped_slot,
            untyped: untyped_id,
            new_type,
            size_param,
            size,
            dst_cnode,
            dst_index,
            count,
            start,
            end,
            epoch: untyped.epoch,
        })
    }

    /// Does the retype `plan` describes; it must have been made by
    /// [`CapSpace::plan_retype`] with nothing changed since (within the
    /// same syscall). It can still fail for want of CNode slots in the
    /// pool (`OutOfResources`), changing nothing.
    pub fn commit_retype(&mut self, plan: &RetypePlan) -> Result<RetypedObjects, CapError> {
        let RetypePlan {
            untyped_slot,
            untyped: untyped_id,
            new_type,
            size_param,
            size,
            dst_cnode,
            dst_index,
            count,
            start,
            end,
            ..
        } = *plan;
        let (first_slot, _) = self.cnode_slots(dst_cnode)?;
        let dst = |i: u64| SlotId(first_slot.0 + (dst_index + i) as u32);
        let untyped_phys = self
            .object(untyped_id)
            .ok_or(CapError::InvalidCapability)?
            .phys;
        let cnode_blocks = self.allocate_cnode_blocks(new_type, size_param, count)?;

        // Nothing can fail from here on.
        let mut made = RetypedObjects::new();
        for i in 0..count {
            let body = match new_type {
                CapType::Untyped => ObjectBody::Untyped {
                    watermark: 0,
                    live_children: 0,
                },
                CapType::CNode => ObjectBody::CNode {
                    first_slot: cnode_blocks.get(i as usize).copied().unwrap_or(0),
                    radix: size_param as u8,
                },
                _ => ObjectBody::Plain,
            };
            let epoch = self.next_epoch();
            let header = ObjectHeader {
                cap_type: new_type,
                state: ObjectState::Created,
                size_bytes: size,
                phys: start + i * size,
                parent_untyped: Some(untyped_id),
                body,
                epoch,
                ..ObjectHeader::FREE
            };
            let Some(id) = self.objects.allocate(header) else {
                break;
            };
            self.store(dst(i), Capability::new(new_type, Rights::ALL, id));
            self.cdt.add_child(untyped_slot, dst(i));
            let _ = made.push(id);
        }
        let epoch = self.next_epoch();
        if let Some(header) = self.objects.get_mut(untyped_id) {
            header.epoch = epoch;
            if let ObjectBody::Untyped {
                watermark,
                live_children,
            } = &mut header.body
            {
                *watermark = end - untyped_phys;
                *live_children += made.len() as u32;
            }
        }
        Ok(made)
    }

    /// For a CNode retype, takes `count` blocks of `2^radix` slots from
    /// the pool, all or none.
    fn allocate_cnode_blocks(
        &mut self,
        new_type: CapType,
        radix: u64,
        count: u64,
    ) -> Result<heapless::Vec<u32, MAX_RETYPE_COUNT>, CapError> {
        let mut blocks = heapless::Vec::new();
        if new_type != CapType::CNode {
            return Ok(blocks);
        }
        let radix = radix as u8;
        for _ in 0..count {
            match self.pool.allocate(radix) {
                Some(base) => {
                    let _ = blocks.push(base as u32);
                }
                None => {
                    for base in &blocks {
                        self.pool.release(*base as usize, radix);
                    }
                    return Err(CapError::OutOfResources);
                }
            }
        }
        Ok(blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fixture, UNTYPED_BASE, UNTYPED_BYTES};
    use super::*;

    fn watermark(f: &Fixture, id: ObjectId) -> (u64, u32) {
        match f.space.object(id).unwrap().body {
            ObjectBody::Untyped {
                watermark,
                live_children,
            } => (watermark, live_children),
            other => panic!("not an untyped: {other:?}"),
        }
    }

    #[test]
    fn objects_are_carved_in_order_as_children() {
        let mut f = Fixture::new();
        let made = f
            .space
            .retype(f.slot(0), CapType::Endpoint, 0, f.root, 2, 3)
            .unwrap();
        assert_eq!(made.len(), 3);
        for (i, id) in made.iter().enumerate() {
            let slot = f.slot(2 + i as u64);
            let cap = f
                .space
                .lookup_typed(slot, CapType::Endpoint, Rights::ALL)
                .unwrap();
            assert_eq!(cap.object(), *id);
            assert_eq!(f.space.parent(slot), Some(f.slot(0)));
            let h = f.space.object(*id).unwrap();
            assert_eq!(h.phys, UNTYPED_BASE + 16 * i as u64);
            assert_eq!((h.size_bytes, h.parent_untyped), (16, Some(f.untyped)));
        }
        assert_eq!(watermark(&f, f.untyped), (48, 3));
        f.check();
    }

    #[test]
    fn objects_are_aligned_to_their_size() {
        let mut f = Fixture::new();
        f.space
            .retype(f.slot(0), CapType::Endpoint, 0, f.root, 2, 1)
            .unwrap();
        let tcb = f
            .space
            .retype(f.slot(0), CapType::Tcb, 0, f.root, 3, 1)
            .unwrap();
        assert_eq!(f.space.object(tcb[0]).unwrap().phys, UNTYPED_BASE + 1024);
        let ut = f
            .space
            .retype(f.slot(0), CapType::Untyped, 14, f.root, 4, 1)
            .unwrap();
        assert_eq!(
            f.space.object(ut[0]).unwrap().phys,
            UNTYPED_BASE + 16 * 1024
        );
        assert_eq!(watermark(&f, f.untyped), (32 * 1024, 3));
        f.check();
    }

    #[test]
    fn a_vspace_is_its_root_and_table_pages_page_aligned() {
        let mut f = Fixture::new();
        f.space
            .retype(f.slot(0), CapType::Endpoint, 0, f.root, 2, 1)
            .unwrap();
        let made = f
            .space
            .retype(f.slot(0), CapType::VSpace, 2, f.root, 3, 2)
            .unwrap();
        for (i, id) in made.iter().enumerate() {
            let h = f.space.object(*id).unwrap();
            assert_eq!(h.phys, UNTYPED_BASE + 4096 * (1 + 3 * i as u64));
            assert_eq!(h.size_bytes, 3 * 4096);
        }
        assert_eq!(watermark(&f, f.untyped), (7 * 4096, 3));
        f.check();
    }

    #[test]
    fn an_untyped_runs_out() {
        let mut f = Fixture::new();
        let half_bits = (UNTYPED_BYTES / 2).trailing_zeros() as u64;
        assert_eq!(
            f.space
                .retype(f.slot(0), CapType::Untyped, half_bits, f.root, 2, 3),
            Err(CapError::NotEnoughMemory)
        );
        assert_eq!(watermark(&f, f.untyped), (0, 0));
        f.space
            .retype(f.slot(0), CapType::Untyped, half_bits, f.root, 2, 2)
            .unwrap();
        assert_eq!(watermark(&f, f.untyped), (UNTYPED_BYTES, 2));
        assert_eq!(
            f.space
                .retype(f.slot(0), CapType::Endpoint, 0, f.root, 15, 1),
            Err(CapError::NotEnoughMemory)
        );
        f.check();
    }

    #[test]
    fn bad_arguments_change_nothing() {
        let mut f = Fixture::new();
        let ep = f.endpoint(2);
        let before = (f.space.free_objects(), f.space.free_slots());
        let mut retype =
            |t, param, index, count| f.space.retype(f.slot(0), t, param, f.root, index, count);
        assert_eq!(
            retype(CapType::Endpoint, 0, 3, 0),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            retype(CapType::Endpoint, 0, 3, 65),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            retype(CapType::Endpoint, 0, 15, 2),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            retype(CapType::Endpoint, 0, u64::MAX, 2),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            retype(CapType::Endpoint, 1, 3, 1),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            retype(CapType::CNode, 11, 3, 1),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            retype(CapType::IrqHandler, 0, 3, 1),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            retype(CapType::Endpoint, 0, 1, 2),
            Err(CapError::SlotOccupied)
        );
        assert_eq!(
            f.space
                .retype(f.slot(2), CapType::Endpoint, 0, f.root, 3, 1),
            Err(CapError::WrongCapabilityType)
        );
        assert_eq!(
            f.space
                .retype(f.slot(9), CapType::Endpoint, 0, f.root, 3, 1),
            Err(CapError::InvalidCapability)
        );
        assert_eq!(
            f.space
                .retype(f.slot(0), CapType::Endpoint, 0, CNodeId(ep), 3, 1),
            Err(CapError::InvalidCapability),
            "the destination is no CNode"
        );
        f.space
            .mint(f.slot(0), f.slot(3), Rights::READ, None)
            .unwrap();
        assert_eq!(
            f.space
                .retype(f.slot(3), CapType::Endpoint, 0, f.root, 4, 1),
            Err(CapError::MissingRights)
        );
        assert_eq!(before, (f.space.free_objects(), f.space.free_slots()));
        assert_eq!(watermark(&f, f.untyped), (0, 0));
        f.check();
    }

    #[test]
    fn a_full_object_table_or_slot_pool_refuses() {
        let mut f = Fixture::new();
        let big = f
            .space
            .retype(f.slot(0), CapType::CNode, 5, f.root, 2, 1)
            .unwrap();
        let big = CNodeId(big[0]);
        let free = f.space.free_objects() as u64;
        assert_eq!(
            f.space
                .retype(f.slot(0), CapType::Endpoint, 0, big, 0, free + 1),
            Err(CapError::OutOfResources)
        );
        let slots_before = f.space.free_slots();
        assert_eq!(slots_before, 16);
        assert_eq!(
            f.space.retype(f.slot(0), CapType::CNode, 4, f.root, 3, 2),
            Err(CapError::OutOfResources),
            "the second block does not fit: the first is given back"
        );
        assert_eq!(f.space.free_slots(), slots_before);
        f.check();
    }

    #[test]
    fn the_watermark_returns_when_the_last_child_goes() {
        let mut f = Fixture::new();
        f.space
            .retype(f.slot(0), CapType::Endpoint, 0, f.root, 2, 2)
            .unwrap();
        f.space.delete(f.slot(2), |_, _| {}).unwrap();
        assert_eq!(
            watermark(&f, f.untyped),
            (32, 1),
            "memory is not reused piecemeal"
        );
        f.space.delete(f.slot(3), |_, _| {}).unwrap();
        assert_eq!(watermark(&f, f.untyped), (0, 0));
        f.check();
    }

    #[test]
    fn revoking_an_untyped_reclaims_grandchildren() {
        let mut f = Fixture::new();
        let child = f
            .space
            .retype(f.slot(0), CapType::Untyped, 13, f.root, 2, 1)
            .unwrap();
        f.space
            .retype(f.slot(2), CapType::Notification, 0, f.root, 3, 4)
            .unwrap();
        assert_eq!(watermark(&f, child[0]), (64, 4));
        let mut destroyed = 0;
        f.space.revoke(f.slot(0), |_, _| destroyed += 1).unwrap();
        assert_eq!(destroyed, 5);
        assert_eq!(watermark(&f, f.untyped), (0, 0));
        assert_eq!(f.space.free_objects(), 32 - 2);
        f.check();
    }
}
