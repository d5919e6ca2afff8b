//! Tests of `retype`.

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
