//! Retype: carving new objects out of Untyped memory.
//!
//! An Untyped hands out memory from both ends (`UntypedBody`): the memory
//! of a Frame, a VSpace or a smaller Untyped from the bottom upwards, each
//! aligned as it must be (a page, or an Untyped's own size), and every
//! object's record from the top downwards, packed at 64-byte granules. So
//! the only waste is alignment padding at the bottom. Memory is never
//! handed out twice: it comes back only when every object carved from the
//! Untyped is gone, and then all of it at once (both ends return) —
//! "revoking an Untyped reclaims everything made from it".
use super::object::UntypedBody;
use super::object_size::cost;
use super::{CNodeId, CapError, Capability, ObjectHeader, ObjectId, ObjectLink, Objects, SlotId};
use abi::cap::{CapType, Rights};
use arch::object_memory::kind;

/// Most objects one retype makes (bounds the kernel's work per call).
pub const MAX_RETYPE_COUNT: usize = 64;

/// The objects one retype made, in destination-slot order.
pub type RetypedObjects = heapless::Vec<ObjectId, MAX_RETYPE_COUNT>;

/// A retype that has been checked and not yet done: where its objects
/// will lie. Memory work on the objects' own memory (zeroing) may happen
/// before [`Objects::commit_retype`]; it stays valid while the Untyped's
/// [`epoch`](super::UntypedBody::epoch) is `epoch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetypePlan {
    untyped_slot: SlotId,
    untyped: ObjectId,
    new_type: CapType,
    size_param: u64,
    dst_cnode: CNodeId,
    dst_index: u64,
    count: u64,
    /// Bytes of memory of its own each object has (0 for most types).
    memory: u64,
    /// Bytes of each record.
    record: u64,
    /// The first byte the objects' own memory takes (physical); `end`
    /// when they have none.
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// The first byte their records take (physical).
    records: u64,
    /// The Untyped's epoch when the plan was made.
    pub epoch: u64,
    /// For Frames of a device Untyped (`untyped`): the RAM Untyped that
    /// pays their records, its capability's slot (the Frames' parent in
    /// the derivation tree) and its object.
    payer: Option<(SlotId, ObjectId)>,
}

impl RetypePlan {
    /// Are the objects Frames of device memory (never zeroed)?
    pub fn is_device(&self) -> bool {
        self.payer.is_some()
    }
}

impl Objects {
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
    /// Untyped has room for the memory and the records.
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

    /// The checks of a retype's targets: 1 ..= `MAX_RETYPE_COUNT` objects,
    /// `count` empty slots of `dst_cnode` from `dst_index` on.
    fn check_retype_targets(
        &self,
        dst_cnode: CNodeId,
        dst_index: u64,
        count: u64,
    ) -> Result<(), CapError> {
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
        Ok(())
    }

    /// Checks a retype as [`Objects::retype`] does and says where its
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
        let cost = cost(new_type, size_param)?;
        self.check_retype_targets(dst_cnode, dst_index, count)?;
        let untyped_id = untyped_cap.object();
        let untyped: UntypedBody = *self
            .get::<kind::Untyped>(untyped_id)
            .ok_or(CapError::InvalidCapability)?;
        if untyped.device {
            // Device memory is only ever Frames, and needs a payer.
            return Err(CapError::InvalidArgument);
        }
        let (free_start, free_end) = untyped.free();
        let start = if cost.memory == 0 {
            free_start
        } else {
            free_start
                .checked_next_multiple_of(cost.alignment)
                .ok_or(CapError::NotEnoughMemory)?
        };
        let end = cost
            .memory
            .checked_mul(count)
            .and_then(|bytes| start.checked_add(bytes))
            .ok_or(CapError::NotEnoughMemory)?;
        let records = cost
            .record
            .checked_mul(count)
            .and_then(|bytes| free_end.checked_sub(bytes))
            .filter(|records| *records >= end)
            .ok_or(CapError::NotEnoughMemory)?;
        Ok(RetypePlan {
            untyped_slot,
            untyped: untyped_id,
            new_type,
            size_param,
            dst_cnode,
            dst_index,
            count,
            memory: cost.memory,
            record: cost.record,
            start: if cost.memory == 0 { end } else { start },
            end,
            records,
            epoch: untyped.epoch,
            payer: None,
        })
    }

    /// Checks a retype of `count` Frames from the device Untyped in
    /// `device_slot` (`write`), their records paid by the RAM Untyped in
    /// `payer_slot` (`write`), and says where they will lie, changing
    /// nothing. The Frames' pages are the device's memory from its bottom
    /// up (never zeroed); their records come from the payer's top, and
    /// their capabilities are children of the payer's capability, so
    /// revoking either Untyped destroys them
    /// (`Objects::release_device_frames` for the device's side).
    ///
    /// Errors, in order: the device capability (`InvalidCapability`,
    /// `WrongCapabilityType`, `MissingRights`), `InvalidArgument` if it is
    /// a RAM Untyped, for any type but `Frame` or a size parameter not 0;
    /// the count and destination as `plan_retype`; the payer's capability
    /// (the same three errors), `InvalidArgument` if it is a device
    /// Untyped; `NotEnoughMemory` if the device has too few pages left or
    /// the payer too little room for the records.
    #[allow(clippy::too_many_arguments)]
    pub fn plan_device_retype(
        &self,
        device_slot: SlotId,
        payer_slot: SlotId,
        new_type: CapType,
        size_param: u64,
        dst_cnode: CNodeId,
        dst_index: u64,
        count: u64,
    ) -> Result<RetypePlan, CapError> {
        let device_cap = self.lookup_typed(device_slot, CapType::Untyped, Rights::WRITE)?;
        let device_id = device_cap.object();
        let device: UntypedBody = *self
            .get::<kind::Untyped>(device_id)
            .ok_or(CapError::InvalidCapability)?;
        if !device.device || new_type != CapType::Frame || size_param != 0 {
            return Err(CapError::InvalidArgument);
        }
        let cost = cost(new_type, size_param)?;
        self.check_retype_targets(dst_cnode, dst_index, count)?;
        let payer_cap = self.lookup_typed(payer_slot, CapType::Untyped, Rights::WRITE)?;
        let payer_id = payer_cap.object();
        let payer: UntypedBody = *self
            .get::<kind::Untyped>(payer_id)
            .ok_or(CapError::InvalidCapability)?;
        if payer.device {
            return Err(CapError::InvalidArgument);
        }
        // The pages: the device's, from its bottom (always page aligned).
        let start = device.phys + device.bottom;
        let end = cost
            .memory
            .checked_mul(count)
            .and_then(|bytes| start.checked_add(bytes))
            .filter(|end| *end <= device.phys + device.size)
            .ok_or(CapError::NotEnoughMemory)?;
        // The records: the payer's, from its top, above its bottom.
        let (payer_bottom, payer_top) = payer.free();
        let records = cost
            .record
            .checked_mul(count)
            .and_then(|bytes| payer_top.checked_sub(bytes))
            .filter(|records| *records >= payer_bottom)
            .ok_or(CapError::NotEnoughMemory)?;
        Ok(RetypePlan {
            untyped_slot: device_slot,
            untyped: device_id,
            new_type,
            size_param,
            dst_cnode,
            dst_index,
            count,
            memory: cost.memory,
            record: cost.record,
            start,
            end,
            records,
            epoch: device.epoch,
            payer: Some((payer_slot, payer_id)),
        })
    }

    /// Does the retype `plan` describes; it must have been made by
    /// [`Objects::plan_retype`] with nothing changed since (within the
    /// same syscall).
    pub fn commit_retype(&mut self, plan: &RetypePlan) -> Result<RetypedObjects, CapError> {
        let RetypePlan {
            untyped_slot,
            untyped: untyped_id,
            new_type,
            size_param,
            dst_cnode,
            dst_index,
            count,
            memory,
            record,
            start,
            end,
            records,
            payer,
            ..
        } = *plan;
        // The capabilities' parent and the records' Untyped: the payer's
        // for device Frames, else the Untyped's own.
        let (parent_slot, record_untyped) = payer.unwrap_or((untyped_slot, untyped_id));
        let device = if payer.is_some() {
            ObjectLink::to(untyped_id)
        } else {
            ObjectLink::NONE
        };
        let (first_slot, _) = self.cnode_slots(dst_cnode)?;
        let dst = |i: u64| SlotId(first_slot.0 + (dst_index + i) as u32);
        let mut made = RetypedObjects::new();
        for i in 0..count {
            let serial = self.next_serial();
            let header = ObjectHeader::new(new_type, Some(record_untyped), serial);
            let own = (start + i * memory, memory);
            let radix = if new_type == CapType::CNode {
                size_param as u8
            } else {
                0
            };
            // A smaller Untyped keeps its record at its own top.
            let at = if new_type == CapType::Untyped {
                own.0 + own.1 - Self::record_bytes(CapType::Untyped, 0).unwrap_or(0)
            } else {
                records + i * record
            };
            // The records' range was free in the Untyped (the plan), and
            // free memory of an Untyped holds no record: this cannot fail.
            let Ok(id) = self.place(new_type, at, header, own, radix) else {
                break;
            };
            if device.get().is_some() {
                if let Some(frame) = self.get_mut::<kind::Frame>(id) {
                    frame.device = device;
                }
            }
            self.store(dst(i), Capability::new(new_type, Rights::ALL, id));
            self.add_child(parent_slot, dst(i));
            let _ = made.push(id);
        }
        let epoch = self.next_serial();
        if let Some(untyped) = self.get_mut::<kind::Untyped>(untyped_id) {
            untyped.epoch = epoch;
            if memory > 0 {
                untyped.bottom = end - untyped.phys;
            }
            if payer.is_none() {
                untyped.top = records - untyped.phys;
            }
            untyped.live_children += made.len() as u32;
        }
        if payer.is_some() {
            if let Some(untyped) = self.get_mut::<kind::Untyped>(record_untyped) {
                untyped.epoch = epoch;
                untyped.top = records - untyped.phys;
                untyped.live_children += made.len() as u32;
            }
        }
        Ok(made)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fixture, UNTYPED_BASE, UNTYPED_BYTES};
    use super::*;

    /// `(bottom, top, live_children)` of an Untyped.
    fn ends(f: &Fixture, id: ObjectId) -> (u64, u64, u32) {
        let u = f.untyped_body(id);
        (u.bottom, u.top, u.live_children)
    }

    fn record(t: CapType) -> u64 {
        Objects::record_bytes(t, 0).unwrap()
    }

    #[test]
    fn records_are_packed_from_the_top_as_children() {
        let mut f = Fixture::new();
        let made = f
            .space
            .retype(f.slot(0), CapType::Endpoint, 0, f.root, 2, 3)
            .unwrap();
        assert_eq!(made.len(), 3);
        let top = UNTYPED_BASE + UNTYPED_BYTES - 3 * record(CapType::Endpoint);
        for (i, id) in made.iter().enumerate() {
            let slot = f.slot(2 + i as u64);
            let cap = f
                .space
                .lookup_typed(slot, CapType::Endpoint, Rights::ALL)
                .unwrap();
            assert_eq!(cap.object(), *id);
            assert_eq!(f.space.parent(slot), Some(f.slot(0)));
            let phys = f.space.memory().phys_of(id.granule());
            assert_eq!(phys, top + 64 * i as u64);
            assert_eq!(f.space.object(*id).unwrap().parent(), Some(f.untyped));
        }
        assert_eq!(ends(&f, f.untyped), (0, UNTYPED_BYTES - 192, 3));
        f.check();
    }

    #[test]
    fn memory_comes_from_the_bottom_aligned_and_records_from_the_top() {
        let mut f = Fixture::new();
        f.space
            .retype(f.slot(0), CapType::Endpoint, 0, f.root, 2, 1)
            .unwrap();
        let frames = f
            .space
            .retype(f.slot(0), CapType::Frame, 0, f.root, 3, 2)
            .unwrap();
        for (i, id) in frames.iter().enumerate() {
            let body = f.space.get::<kind::Frame>(*id).unwrap();
            assert_eq!(body.phys, UNTYPED_BASE + 4096 * i as u64);
        }
        // A smaller Untyped is aligned to its size, and keeps its own
        // record: its parent pays only its range.
        let child = f
            .space
            .retype(f.slot(0), CapType::Untyped, 14, f.root, 5, 1)
            .unwrap();
        let body = f.untyped_body(child[0]);
        assert_eq!(body.phys, UNTYPED_BASE + 16 * 1024);
        assert_eq!(body.home, 16 * 1024 - record(CapType::Untyped));
        let records = record(CapType::Endpoint) + 2 * record(CapType::Frame);
        assert_eq!(ends(&f, f.untyped), (32 * 1024, UNTYPED_BYTES - records, 4));
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
            let body = f.space.get::<kind::VSpace>(*id).unwrap();
            assert_eq!(body.phys, UNTYPED_BASE + 3 * 4096 * i as u64);
            assert_eq!(body.pages, 3);
        }
        assert_eq!(ends(&f, f.untyped).0, 6 * 4096);
        f.check();
    }

    #[test]
    fn a_child_may_take_all_of_its_parent() {
        let mut f = Fixture::new();
        let bits = UNTYPED_BYTES.trailing_zeros() as u64;
        let made = f
            .space
            .retype(f.slot(0), CapType::Untyped, bits, f.root, 2, 1)
            .unwrap();
        assert_eq!(ends(&f, f.untyped), (UNTYPED_BYTES, UNTYPED_BYTES, 1));
        assert_eq!(
            f.space
                .retype(f.slot(0), CapType::Endpoint, 0, f.root, 3, 1),
            Err(CapError::NotEnoughMemory),
            "nothing left for a record"
        );
        // Its own objects live inside it.
        f.space
            .retype(f.slot(2), CapType::Endpoint, 0, f.root, 3, 1)
            .unwrap();
        assert_eq!(f.untyped_body(made[0]).live_children, 1);
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
        assert_eq!(ends(&f, f.untyped), (0, UNTYPED_BYTES, 0));
        f.space
            .retype(f.slot(0), CapType::Untyped, half_bits, f.root, 2, 2)
            .unwrap();
        assert_eq!(ends(&f, f.untyped), (UNTYPED_BYTES, UNTYPED_BYTES, 2));
        assert_eq!(
            f.space
                .retype(f.slot(0), CapType::Endpoint, 0, f.root, 15, 1),
            Err(CapError::NotEnoughMemory)
        );
        // Frames and their records meet in the middle.
        let mut g = Fixture::with_untyped(4 * 4096);
        assert_eq!(
            g.space.retype(g.slot(0), CapType::Frame, 0, g.root, 2, 4),
            Err(CapError::NotEnoughMemory),
            "four pages hold three frames and their records"
        );
        g.space
            .retype(g.slot(0), CapType::Frame, 0, g.root, 2, 3)
            .unwrap();
        f.check();
        g.check();
    }

    #[test]
    fn bad_arguments_change_nothing() {
        let mut f = Fixture::new();
        let ep = f.endpoint(2);
        let before = f.space.snapshot();
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
            retype(CapType::CNode, 17, 3, 1),
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
        assert_eq!(f.space.snapshot(), before);
        f.space
            .mint(f.slot(0), f.slot(3), Rights::READ, None)
            .unwrap();
        assert_eq!(
            f.space
                .retype(f.slot(3), CapType::Endpoint, 0, f.root, 4, 1),
            Err(CapError::MissingRights)
        );
        assert_eq!(ends(&f, f.untyped), (0, UNTYPED_BYTES, 0));
        f.check();
    }

    #[test]
    fn the_ends_return_when_the_last_child_goes() {
        let mut f = Fixture::new();
        f.space
            .retype(f.slot(0), CapType::Endpoint, 0, f.root, 2, 2)
            .unwrap();
        f.space.delete(f.slot(2)).unwrap();
        f.settle();
        assert_eq!(
            ends(&f, f.untyped),
            (0, UNTYPED_BYTES - 128, 1),
            "memory is not reused piecemeal"
        );
        f.space.delete(f.slot(3)).unwrap();
        assert_eq!(
            ends(&f, f.untyped),
            (0, UNTYPED_BYTES - 128, 1),
            "only once the record is freed"
        );
        f.settle();
        assert_eq!(ends(&f, f.untyped), (0, UNTYPED_BYTES, 0));
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
        assert_eq!(ends(&f, child[0]).2, 4);
        f.space.revoke(f.slot(0)).unwrap();
        assert_eq!(f.settle().len(), 5);
        assert_eq!(ends(&f, f.untyped), (0, UNTYPED_BYTES, 0));
        f.check();
    }
}
