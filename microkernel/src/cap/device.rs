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
mod tests {
    use super::super::test_support::Fixture;
    use super::super::{Capability, InvariantViolation};
    use super::*;
    use abi::cap::Rights;

    /// Where the test's device block is (outside object memory).
    const DEVICE_BASE: u64 = 0x0a00_0000;

    /// The fixture with a 16 KiB device Untyped in root slot 2.
    fn with_device() -> (Fixture, ObjectId) {
        let mut f = Fixture::new();
        let at = f.pool(128);
        let device = f
            .space
            .create_device_untyped(DEVICE_BASE, 4 * 4096, at)
            .unwrap();
        let cap = Capability::new(CapType::Untyped, Rights::ALL, device);
        f.space.install_original(f.slot(2), cap).unwrap();
        f.check();
        (f, device)
    }

    fn frames(f: &mut Fixture, target: u64, count: u64) -> Result<(), CapError> {
        let plan = f.space.plan_device_retype(
            f.slot(2),
            f.slot(0),
            CapType::Frame,
            0,
            f.root,
            target,
            count,
        )?;
        assert!(plan.is_device());
        f.space.commit_retype(&plan).map(|_| ())
    }

    #[test]
    fn device_frames_take_the_devices_pages_and_the_payers_records() {
        let (mut f, device) = with_device();
        frames(&mut f, 3, 2).unwrap();
        for (i, slot) in [3, 4].into_iter().enumerate() {
            let cap = f.space.slot_content(f.slot(slot)).unwrap();
            let body = *f.space.get::<kind::Frame>(cap.object()).unwrap();
            assert_eq!(body.phys, DEVICE_BASE + 4096 * i as u64);
            assert_eq!(body.device.get(), Some(device));
            assert_eq!(
                f.space.parent(f.slot(slot)),
                Some(f.slot(0)),
                "the payer's child"
            );
            assert_eq!(
                f.space.object(cap.object()).unwrap().parent(),
                Some(f.untyped)
            );
        }
        let d = f.untyped_body(device);
        assert_eq!((d.bottom, d.live_children), (2 * 4096, 2));
        let u = f.untyped_body(f.untyped);
        assert_eq!((u.bottom, u.live_children), (0, 2), "records only");
        // A plain retype from a device Untyped is refused.
        assert_eq!(
            f.space.retype(f.slot(2), CapType::Frame, 0, f.root, 5, 1),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(frames(&mut f, 5, 3), Err(CapError::NotEnoughMemory));
        f.check();
    }

    #[test]
    fn revoking_the_device_destroys_its_frames_and_both_ends_come_home() {
        let (mut f, device) = with_device();
        frames(&mut f, 3, 2).unwrap();
        f.space.copy(f.slot(3), f.slot(5)).unwrap();
        f.space.revoke(f.slot(2)).unwrap();
        assert_eq!(f.settle().len(), 2, "both Frames");
        for slot in [3, 4, 5] {
            assert!(f
                .space
                .slot_content(f.slot(slot))
                .is_none_or(|c| c.is_null()));
        }
        assert_eq!(f.untyped_body(device).bottom, 0);
        assert_eq!(f.untyped_body(f.untyped).live_children, 0);
        f.check();
    }

    #[test]
    fn revoking_the_payer_destroys_the_device_frames() {
        let (mut f, device) = with_device();
        frames(&mut f, 3, 4).unwrap();
        f.space.revoke(f.slot(0)).unwrap();
        assert_eq!(f.settle().len(), 4);
        assert_eq!(f.untyped_body(device).live_children, 0);
        assert_eq!(f.untyped_body(device).bottom, 0);
        frames(&mut f, 3, 4).unwrap();
        f.check();
    }

    #[test]
    fn destroying_the_device_untyped_takes_its_frames_with_it() {
        let (mut f, _) = with_device();
        frames(&mut f, 3, 1).unwrap();
        f.space.delete(f.slot(2)).unwrap();
        assert_eq!(f.settle().len(), 2, "the device Untyped and its Frame");
        assert!(f.space.slot_content(f.slot(3)).is_none_or(|c| c.is_null()));
        f.check();
    }

    #[test]
    fn the_invariants_see_a_device_frame_outside_its_device() {
        let (mut f, device) = with_device();
        frames(&mut f, 3, 1).unwrap();
        let cap = f.space.slot_content(f.slot(3)).unwrap();
        f.space.get_mut::<kind::Frame>(cap.object()).unwrap().phys = DEVICE_BASE + 3 * 4096;
        assert_eq!(
            f.space.check_invariants(),
            Err(InvariantViolation::ChildOutsideUntyped(cap.object()))
        );
        f.space.get_mut::<kind::Frame>(cap.object()).unwrap().phys = DEVICE_BASE;
        f.space
            .get_mut::<kind::Untyped>(device)
            .unwrap()
            .live_children = 2;
        assert_eq!(
            f.space.check_invariants(),
            Err(InvariantViolation::BadWatermark(device))
        );
    }
}
