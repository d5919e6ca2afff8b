//! Tests of `cdt`.

use super::super::test_support::Fixture;
use super::*;

fn children(objects: &Objects, parent: SlotId) -> Vec<SlotId> {
    let mut out = Vec::new();
    let mut child = objects.first_child(parent);
    while let Some(c) = child {
        assert_eq!(objects.parent(c), Some(parent));
        out.push(c);
        child = objects.next_sibling(c);
    }
    out
}

#[test]
fn children_are_listed_newest_first() {
    let f = Fixture::new();
    let mut o = f.space;
    let s = |i| SlotId(f.first_slot.0 + i);
    o.add_child(s(0), s(1));
    o.add_child(s(0), s(2));
    o.add_child(s(2), s(3));
    assert_eq!(children(&o, s(0)), vec![s(2), s(1)]);
    assert!(o.cdt_is_descendant(s(3), s(0)));
    assert!(!o.cdt_is_descendant(s(0), s(3)));
    assert!(!o.cdt_is_descendant(s(1), s(2)));
}

#[test]
fn unlinking_keeps_the_sibling_list() {
    let f = Fixture::new();
    let mut o = f.space;
    let s = |i| SlotId(f.first_slot.0 + i);
    for c in 1..=3 {
        o.add_child(s(0), s(c));
    }
    o.unlink_leaf(s(2));
    assert_eq!(children(&o, s(0)), vec![s(3), s(1)]);
    o.unlink_leaf(s(3));
    assert_eq!(children(&o, s(0)), vec![s(1)]);
    o.unlink_leaf(s(1));
    assert_eq!(children(&o, s(0)), Vec::<SlotId>::new());
    assert_eq!(o.links(s(1)), Links::CLEAR);
}

#[test]
fn transplant_moves_parent_siblings_and_children() {
    let f = Fixture::new();
    let mut o = f.space;
    let s = |i| SlotId(f.first_slot.0 + i);
    o.add_child(s(8), s(1));
    o.add_child(s(8), s(2));
    o.add_child(s(8), s(3));
    o.add_child(s(2), s(4));
    o.add_child(s(2), s(5));
    o.transplant(s(2), s(7));
    assert_eq!(children(&o, s(8)), vec![s(3), s(7), s(1)]);
    assert_eq!(children(&o, s(7)), vec![s(5), s(4)]);
    assert_eq!(o.links(s(2)), Links::CLEAR);
    o.transplant(s(8), s(6));
    assert_eq!(children(&o, s(6)), vec![s(3), s(7), s(1)]);
    assert_eq!(o.parent(s(6)), None);
}
