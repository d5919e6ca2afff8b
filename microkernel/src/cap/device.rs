//! Device memory: Untypeds over MMIO, and the Frames made from them.
//!
//! The kernel never writes device memory (a register write can do
//! anything), so a **device Untyped** differs from a RAM one in three
//! ways: its own record is on the kernel's pages (`create_device_untyped`),
//! only Frames are retyped from it, never zeroed, and their records are
//! paid by a RAM Untyped named in the same `Retype`
//! (`Objects::plan_device_retype`).
//!
//! The derivation: a device Frame's header names the RAM Untyped that
//! paid its record (as every retyped object's does), and its original
//! capability is a child of that Untyped's capability, so revoking or
//! deleting the RAM Untyped destroys it through the derivation tree as it
//! destroys any object made from it. The Frame's body names its device
//! Untyped (`FrameBody::device`), whose `live_children` counts its
//! Frames: revoking any capability to the device Untyped, or destroying
//! it, destroys every Frame made from it, found by a walk of every CNode
//! (`release_device_frames`: rare, and O(slots), only when it has live
//! Frames). Either way a device page is never handed out twice: the
//! device's bottom comes home only once its last Frame's record is freed.
use super::{CapError, ObjectHeader, ObjectId, ObjectState, Objects, SlotId};
use abi::cap::CapType;
use arch::object_memory::kind;

impl Objects {
    /// Makes a device Untyped for the kernel over `size_bytes` of MMIO at
    /// `phys` (a non-empty, page-aligned multiple of pages outside RAM),
    /// its record at physical `record_at` on the kernel's pages (see
    /// `create_object`). Its original capability goes in with
    /// `install_original`.
    pub fn create_device_untyped(
        &mut self,
        phys: u64,
        size_bytes: u64,
        record_at: u64,
    ) -> Result<ObjectId, CapError> {
        let id = self.create_object(CapType::Untyped, phys, size_bytes, record_at)?;
        if let Some(untyped) = self.get_mut::<kind::Untyped>(id) {
            untyped.device = true;
        }
        Ok(id)
    }

    /// Is `id` a device Untyped?
    pub fn is_device_untyped(&self, id: ObjectId) -> bool {
        self.get::<kind::Untyped>(id).is_some_and(|u| u.device)
    }

    /// Deletes every capability to every Frame made from device Untyped
    /// `device` (each Frame's original with its copies, its descendants),
    /// destroying them. Nothing else: a Frame's capabilities are only ever
    /// its original and what derives from it, so no CNode is destroyed.
    pub(super) fn release_device_frames(&mut self, device: ObjectId) {
        if self
            .get::<kind::Untyped>(device)
            .is_none_or(|u| u.live_children == 0)
        {
            return;
        }
        let mut cursor = self.all.get();
        while let Some(cnode) = cursor {
            cursor = self.object(cnode).and_then(|h| h.next.get());
            let Some((first, count)) = self.memory().elements::<kind::CNode>(cnode.granule())
            else {
                continue;
            };
            for index in first..first + count as u64 {
                let slot = SlotId(index as u32);
                if self.is_device_frame_original(slot, device) {
                    self.remove_descendants(slot);
                    self.remove_leaf(slot);
                }
            }
        }
    }

    /// Does `slot` hold a capability to a Frame of `device` whose parent
    /// is no capability to the same Frame (its original)?
    fn is_device_frame_original(&self, slot: SlotId, device: ObjectId) -> bool {
        let Some(cap) = self
            .slot_content(slot)
            .filter(|c| c.has_type(CapType::Frame))
        else {
            return false;
        };
        let of_device = self
            .get::<kind::Frame>(cap.object())
            .is_some_and(|f| f.device.get() == Some(device));
        of_device
            && self
                .parent(slot)
                .and_then(|p| self.slot_content(p))
                .is_none_or(|p| p.object() != cap.object() || !p.has_type(CapType::Frame))
    }

    /// The device Untypeds destroyed by this operation take their Frames
    /// with them.
    pub(super) fn release_frames_of_destroyed_devices(&mut self) {
        let mut cursor = self.destroyed.get();
        while let Some(id) = cursor {
            let header: Option<ObjectHeader> = self.object(id).copied();
            if header.is_some_and(|h| h.state == ObjectState::Destroyed)
                && self.is_device_untyped(id)
            {
                self.release_device_frames(id);
            }
            cursor = self.object(id).and_then(|h| h.next_work.get());
        }
    }
}

#[cfg(test)]
mod tests;
