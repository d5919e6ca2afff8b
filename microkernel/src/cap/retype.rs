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
mod tests;
