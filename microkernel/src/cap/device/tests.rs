//! Tests of `device`.

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
