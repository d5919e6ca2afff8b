//! Tests of `invariants`.

use super::super::test_support::Fixture;
use super::*;

/// A fixture with an endpoint in slot 2, a copy in 3, a CNode carved
/// into 4 and two notifications carved into 5 and 6.
fn busy() -> Fixture {
    let mut f = Fixture::new();
    f.endpoint(2);
    f.space.copy(f.slot(2), f.slot(3)).unwrap();
    f.space
        .retype(f.slot(0), CapType::CNode, 2, f.root, 4, 1)
        .unwrap();
    f.space
        .retype(f.slot(0), CapType::Notification, 0, f.root, 5, 2)
        .unwrap();
    f.check();
    f
}

fn id_in(f: &Fixture, index: u64) -> ObjectId {
    f.space.lookup(f.slot(index)).unwrap().object()
}

#[test]
fn a_copied_reply_capability_is_found() {
    let mut f = busy();
    f.space
        .retype(f.slot(0), CapType::Reply, 0, f.root, 8, 1)
        .unwrap();
    f.check();
    // A copy made behind `copy`'s back, as a child.
    let s = f.slot(9);
    let cap = f.space.lookup(f.slot(8)).unwrap();
    f.space.store(s, cap);
    f.space.add_child(f.slot(8), s);
    assert_eq!(
        f.space.check_invariants(),
        Err(V::ReplyNotSingle(f.slot(8)))
    );
}

#[test]
fn a_record_in_an_untypeds_room_not_carved_from_it_is_found() {
    let mut f = busy();
    // The CNode in slot 4 goes: its granules are a hole in the room,
    // above the notifications' records.
    let hole = id_in(&f, 4);
    let root = id_in(&f, 0);
    f.space.delete(f.slot(4)).unwrap();
    f.settle();
    f.check();
    // A record over the hole behind retype's back: carved from no
    // Untyped (memory used twice, or a record never freed).
    let stray = super::super::object::ObjectHeader::new(CapType::Endpoint, None, 0);
    f.space
        .memory_mut()
        .create::<kind::Endpoint>(
            hole.granule(),
            stray,
            crate::endpoint_queue::EndpointQueue::EMPTY,
        )
        .unwrap();
    assert_eq!(
        f.space.check_invariants(),
        Err(V::StrayRecordGranule(root, hole.granule()))
    );
}

#[test]
fn a_wrong_cap_count_is_found() {
    let mut f = busy();
    let ep = id_in(&f, 2);
    f.space.header_mut(ep).unwrap().cap_count += 1;
    assert_eq!(f.space.check_invariants(), Err(V::CapCountMismatch(ep)));
}

#[test]
fn a_capability_dropped_without_unlinking_is_found() {
    let mut f = busy();
    let s = f.slot(2);
    f.space.slot_entry_mut(s).unwrap().cap = Capability::NULL;
    assert_eq!(f.space.check_invariants(), Err(V::EmptySlotLinked(s)));
}

#[test]
fn a_carved_object_as_a_root_is_found() {
    let mut f = busy();
    let s = f.slot(5);
    f.space.unlink_leaf(s);
    assert_eq!(f.space.check_invariants(), Err(V::BadDerivation(s)));
}

#[test]
fn a_copy_under_the_wrong_parent_is_found() {
    let mut f = busy();
    let s = f.slot(3);
    f.space.unlink_leaf(s);
    f.space.add_child(f.slot(5), s);
    assert_eq!(f.space.check_invariants(), Err(V::BadDerivation(s)));
}

#[test]
fn a_capability_to_a_destroyed_object_is_found() {
    let mut f = busy();
    let ep = id_in(&f, 2);
    f.space.header_mut(ep).unwrap().state = ObjectState::Retired;
    assert_eq!(
        f.space.check_invariants(),
        Err(V::DanglingCapability(f.slot(2)))
    );
}

#[test]
fn a_raised_top_is_found() {
    let mut f = busy();
    let untyped = f.untyped;
    f.space.get_mut::<kind::Untyped>(untyped).unwrap().top += 64;
    let violation = f.space.check_invariants();
    assert!(
        matches!(
            violation,
            Err(V::ChildOutsideUntyped(_) | V::BadWatermark(_))
        ),
        "{violation:?}"
    );
}

#[test]
fn a_lost_child_count_is_found() {
    let mut f = busy();
    let untyped = f.untyped;
    f.space
        .get_mut::<kind::Untyped>(untyped)
        .unwrap()
        .live_children -= 1;
    assert_eq!(f.space.check_invariants(), Err(V::BadWatermark(untyped)));
}

#[test]
fn overlapping_siblings_are_found() {
    let mut f = Fixture::new();
    let made = f
        .space
        .retype(f.slot(0), CapType::Frame, 0, f.root, 2, 2)
        .unwrap();
    let phys = f.space.get::<kind::Frame>(made[0]).unwrap().phys;
    f.space.get_mut::<kind::Frame>(made[1]).unwrap().phys = phys;
    let violation = f.space.check_invariants();
    assert!(
        matches!(violation, Err(V::MemoryOverlap(..))),
        "{violation:?}"
    );
}

#[test]
fn a_broken_object_list_is_found() {
    let mut f = busy();
    f.space.count += 1;
    assert_eq!(f.space.check_invariants(), Err(V::ObjectLeak));
}

#[test]
fn a_live_object_without_capabilities_is_found() {
    let mut f = busy();
    let ep = f.create_object(CapType::Endpoint, 0, 0).unwrap();
    f.check();
    f.space.header_mut(ep).unwrap().state = ObjectState::Live;
    assert_eq!(
        f.space.check_invariants(),
        Err(V::ObjectWithoutCapability(ep))
    );
}

#[test]
fn a_cycle_is_found() {
    let mut f = busy();
    let (a, b) = (f.slot(2), f.slot(3));
    // Make 2 and 3 each other's parent: no root reaches them.
    f.space.unlink_leaf(b);
    f.space.add_child(b, a);
    f.space.add_child(a, b);
    assert!(matches!(
        f.space.check_invariants(),
        Err(V::Unreachable { .. } | V::BrokenLink(_))
    ));
}
