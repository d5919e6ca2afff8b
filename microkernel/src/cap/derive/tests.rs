//! Tests of `derive`.

use super::super::test_support::{Fixture, UNOWNED_SLOT};
use super::*;

#[test]
fn install_original_needs_a_fresh_object_of_the_same_type() {
    let mut f = Fixture::new();
    let ep = f.create_object(CapType::Endpoint, 0, 0).unwrap();
    let wrong = Capability::new(CapType::Notification, Rights::ALL, ep);
    assert_eq!(
        f.space.install_original(f.slot(2), wrong),
        Err(CapError::WrongCapabilityType)
    );
    let cap = Capability::new(CapType::Endpoint, Rights::ALL, ep);
    assert_eq!(
        f.space.install_original(f.slot(0), cap),
        Err(CapError::SlotOccupied)
    );
    f.space.install_original(f.slot(2), cap).unwrap();
    assert_eq!(
        f.space.install_original(f.slot(3), cap),
        Err(CapError::InvalidArgument),
        "a second original"
    );
    let nowhere = Capability::new(CapType::Endpoint, Rights::ALL, crate::cap::ObjectId(99));
    assert_eq!(
        f.space.install_original(f.slot(3), nowhere),
        Err(CapError::InvalidArgument)
    );
    f.check();
}

#[test]
fn copy_makes_an_identical_child() {
    let mut f = Fixture::new();
    let ep = f.endpoint(2);
    f.space
        .mint(f.slot(2), f.slot(3), Rights::WRITE, Some(7))
        .unwrap();
    f.space.copy(f.slot(3), f.slot(4)).unwrap();
    assert_eq!(f.space.lookup(f.slot(4)), f.space.lookup(f.slot(3)));
    assert_eq!(f.space.parent(f.slot(4)), Some(f.slot(3)));
    assert_eq!(f.space.object(ep).unwrap().cap_count, 3);
    f.check();
}

#[test]
fn copy_errors_change_nothing() {
    let mut f = Fixture::new();
    f.endpoint(2);
    assert_eq!(
        f.space.copy(f.slot(5), f.slot(6)),
        Err(CapError::InvalidCapability)
    );
    assert_eq!(
        f.space.copy(f.slot(2), f.slot(0)),
        Err(CapError::SlotOccupied)
    );
    assert_eq!(
        f.space.copy(f.slot(2), f.slot(2)),
        Err(CapError::SlotOccupied)
    );
    assert_eq!(
        f.space.copy(f.slot(2), UNOWNED_SLOT),
        Err(CapError::InvalidCapability),
        "a slot no CNode owns"
    );
    assert_eq!(f.space.lookup(f.slot(6)), Err(CapError::InvalidCapability));
    f.check();
}

#[test]
fn mint_narrows_rights_and_badges_once() {
    let mut f = Fixture::new();
    f.endpoint(2);
    f.space
        .mint(f.slot(2), f.slot(3), Rights::READ_WRITE, Some(0))
        .unwrap();
    let minted = f.space.lookup(f.slot(3)).unwrap();
    assert!(minted.is_badged());
    assert_eq!((minted.badge(), minted.rights()), (0, Rights::READ_WRITE));
    assert_eq!(
        f.space.mint(f.slot(3), f.slot(4), Rights::READ, Some(1)),
        Err(CapError::InvalidArgument),
        "a badge of 0 is still a badge"
    );
    assert_eq!(
        f.space.mint(f.slot(3), f.slot(4), Rights::ALL, None),
        Err(CapError::MissingRights)
    );
    f.space
        .mint(f.slot(3), f.slot(4), Rights::READ, None)
        .unwrap();
    let narrower = f.space.lookup(f.slot(4)).unwrap();
    assert_eq!((narrower.badge(), narrower.rights()), (0, Rights::READ));
    assert!(narrower.is_badged());
    f.check();
}

#[test]
fn only_endpoints_and_notifications_take_badges() {
    let mut f = Fixture::new();
    assert_eq!(
        f.space.mint(f.slot(0), f.slot(3), Rights::READ, Some(5)),
        Err(CapError::InvalidArgument),
        "an Untyped"
    );
    let n = f.create_object(CapType::Notification, 0, 0).unwrap();
    let cap = Capability::new(CapType::Notification, Rights::ALL, n);
    f.space.install_original(f.slot(2), cap).unwrap();
    f.space
        .mint(f.slot(2), f.slot(3), Rights::WRITE, Some(0b100))
        .unwrap();
    assert_eq!(f.space.lookup(f.slot(3)).unwrap().badge(), 0b100);
    f.check();
}

#[test]
fn move_keeps_the_tree_and_the_count() {
    let mut f = Fixture::new();
    let ep = f.endpoint(2);
    f.space.copy(f.slot(2), f.slot(3)).unwrap();
    f.space.copy(f.slot(3), f.slot(4)).unwrap();
    f.space.move_cap(f.slot(3), f.slot(7)).unwrap();
    assert_eq!(f.space.lookup(f.slot(3)), Err(CapError::InvalidCapability));
    assert_eq!(f.space.parent(f.slot(7)), Some(f.slot(2)));
    assert_eq!(f.space.parent(f.slot(4)), Some(f.slot(7)));
    assert_eq!(f.space.object(ep).unwrap().cap_count, 3);
    assert_eq!(
        f.space.move_cap(f.slot(3), f.slot(8)),
        Err(CapError::InvalidCapability)
    );
    assert_eq!(
        f.space.move_cap(f.slot(7), f.slot(4)),
        Err(CapError::SlotOccupied)
    );
    f.check();
}
