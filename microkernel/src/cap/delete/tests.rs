//! Tests of `delete`.

use super::super::test_support::Fixture;
use super::*;
use abi::cap::Rights;

#[test]
fn deleting_a_copy_keeps_the_object() {
    let mut f = Fixture::new();
    let ep = f.endpoint(2);
    f.space.copy(f.slot(2), f.slot(3)).unwrap();
    f.space.delete(f.slot(3)).unwrap();
    assert!(f.settle().is_empty());
    assert_eq!(f.space.object(ep).unwrap().cap_count, 1);
    f.check();
}

#[test]
fn the_last_capability_destroys_the_object_and_the_entry_frees_it() {
    let mut f = Fixture::new();
    let ep = f.endpoint(2);
    f.space.delete(f.slot(2)).unwrap();
    assert_eq!(
        f.space.object(ep).map(|h| h.state),
        Some(ObjectState::Destroyed)
    );
    assert_eq!(f.space.take_destroyed(), Some((ep, CapType::Endpoint)));
    assert_eq!(f.space.take_destroyed(), None, "told once");
    assert_eq!(
        f.space.object(ep).map(|h| h.state),
        Some(ObjectState::Retired)
    );
    let mut freed = Vec::new();
    f.space.reap(|pages| freed.push(pages));
    assert!(f.space.object(ep).is_none());
    assert_eq!(freed.len(), 1, "a kernel-made record gives its page back");
    f.check();
}

#[test]
fn delete_removes_descendants_first() {
    let mut f = Fixture::new();
    let ep = f.endpoint(2);
    f.space
        .mint(f.slot(2), f.slot(3), Rights::WRITE, Some(1))
        .unwrap();
    f.space.copy(f.slot(3), f.slot(4)).unwrap();
    f.space.copy(f.slot(2), f.slot(5)).unwrap();
    f.space.copy(f.slot(5), f.slot(6)).unwrap();
    f.space.delete(f.slot(2)).unwrap();
    for i in 2..=6 {
        assert_eq!(f.space.lookup(f.slot(i)), Err(CapError::InvalidCapability));
    }
    assert_eq!(
        f.settle(),
        vec![(ep, CapType::Endpoint)],
        "destroyed exactly once"
    );
    f.check();
}

#[test]
fn revoke_keeps_the_capability() {
    let mut f = Fixture::new();
    let ep = f.endpoint(2);
    f.space.copy(f.slot(2), f.slot(3)).unwrap();
    f.space.copy(f.slot(3), f.slot(4)).unwrap();
    f.space.copy(f.slot(2), f.slot(5)).unwrap();
    f.space.revoke(f.slot(3)).unwrap();
    assert!(f.space.lookup(f.slot(3)).is_ok() && f.space.lookup(f.slot(5)).is_ok());
    assert!(f.space.lookup(f.slot(4)).is_err());
    f.space.revoke(f.slot(2)).unwrap();
    assert!(f.space.lookup(f.slot(3)).is_err() && f.space.lookup(f.slot(5)).is_err());
    assert_eq!(f.space.object(ep).unwrap().cap_count, 1);
    assert!(f.settle().is_empty());
    f.check();
}

#[test]
fn empty_slots_are_refused() {
    let mut f = Fixture::new();
    assert_eq!(f.space.delete(f.slot(9)), Err(CapError::InvalidCapability));
    assert_eq!(f.space.revoke(f.slot(9)), Err(CapError::InvalidCapability));
    assert_eq!(
        f.space.delete(SlotId(u32::MAX - 1)),
        Err(CapError::InvalidCapability)
    );
    assert!(f.settle().is_empty());
    f.check();
}

#[test]
fn a_long_chain_is_deleted_without_recursion() {
    let mut f = Fixture::new();
    f.endpoint(2);
    for i in 3..16 {
        f.space.copy(f.slot(i - 1), f.slot(i)).unwrap();
    }
    f.space.delete(f.slot(2)).unwrap();
    assert!((2..16).all(|i| f.space.lookup(f.slot(i)).is_err()));
    f.settle();
    f.check();
}

#[test]
fn a_destroyed_cnode_deletes_what_it_holds() {
    let mut f = Fixture::new();
    let ep = f.endpoint(2);
    let made = f
        .space
        .retype(f.slot(0), CapType::CNode, 2, f.root, 3, 1)
        .unwrap();
    let inner = crate::cap::CNodeId(made[0]);
    let inner_0 = f.space.slot(inner, 0).unwrap();
    let inner_1 = f.space.slot(inner, 1).unwrap();
    f.space.copy(f.slot(2), inner_0).unwrap();
    f.space.move_cap(f.slot(2), inner_1).unwrap();
    f.space.delete(f.slot(3)).unwrap();
    assert_eq!(
        f.settle(),
        vec![(ep, CapType::Endpoint), (inner.object(), CapType::CNode)],
        "what it held first, then the CNode itself"
    );
    assert!(f.space.slot(inner, 0).is_err(), "its slots went with it");
    f.check();
}

#[test]
fn cnodes_holding_each_others_last_capability_both_go() {
    let mut f = Fixture::new();
    let made = f
        .space
        .retype(f.slot(0), CapType::CNode, 1, f.root, 4, 2)
        .unwrap();
    let (a, b) = (crate::cap::CNodeId(made[0]), crate::cap::CNodeId(made[1]));
    let a_0 = f.space.slot(a, 0).unwrap();
    let b_0 = f.space.slot(b, 0).unwrap();
    f.space.move_cap(f.slot(4), b_0).unwrap();
    f.space.move_cap(f.slot(5), a_0).unwrap();
    f.space.delete(a_0).unwrap();
    assert_eq!(f.settle().len(), 2);
    assert!(f.space.object(a.object()).is_none() && f.space.object(b.object()).is_none());
    f.check();
}

#[test]
fn a_cnode_holding_its_own_last_capability_goes() {
    let mut f = Fixture::new();
    let made = f
        .space
        .retype(f.slot(0), CapType::CNode, 1, f.root, 4, 1)
        .unwrap();
    let inner = crate::cap::CNodeId(made[0]);
    let own = f.space.slot(inner, 1).unwrap();
    f.space.move_cap(f.slot(4), own).unwrap();
    f.space.delete(own).unwrap();
    f.settle();
    assert!(f.space.object(inner.object()).is_none());
    f.check();
}

#[test]
fn an_untyped_goes_after_what_was_made_from_it() {
    let mut f = Fixture::new();
    let made = f
        .space
        .retype(f.slot(0), CapType::Endpoint, 0, f.root, 5, 1)
        .unwrap();
    f.space.delete(f.slot(0)).unwrap();
    assert_eq!(
        f.settle(),
        vec![(made[0], CapType::Endpoint), (f.untyped, CapType::Untyped)]
    );
    f.check();
}

#[test]
fn a_pinned_object_keeps_its_record_and_its_memory_until_retired() {
    let mut f = Fixture::new();
    let made = f
        .space
        .retype(f.slot(0), CapType::Filter, 0, f.root, 2, 1)
        .unwrap();
    f.space.delete(f.slot(2)).unwrap();
    assert_eq!(f.space.take_destroyed(), Some((made[0], CapType::Filter)));
    assert!(f.space.pin(made[0]));
    f.space.reap(|_| {});
    assert_eq!(
        f.space.object(made[0]).map(|h| h.state),
        Some(ObjectState::Pinned)
    );
    assert_eq!(f.untyped_body(f.untyped).pinned, 1);
    f.check();
    f.space.retire_pinned(made[0]);
    f.space.reap(|_| {});
    assert!(f.space.object(made[0]).is_none());
    assert_eq!(f.untyped_body(f.untyped).live_children, 0);
    f.check();
}
