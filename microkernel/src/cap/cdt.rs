//! The capability derivation tree (CDT): who was derived from whom.
//!
//! seL4 keeps its tree as one doubly linked list in depth-first order and
//! recovers parenthood by comparing neighbouring capabilities. We store
//! the tree explicitly instead — parent, first child and two sibling links
//! per slot (16 bytes) — so that "is X a descendant of Y", "delete every
//! descendant" and the invariant checker need no per-type rules: a
//! capability's children are exactly the capabilities copied, minted or
//! retyped from it. Every link update is O(1) except `transplant`, which
//! re-parents the moved capability's children.
use super::ids::{SlotId, SlotLink};

/// The four links of one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Links {
    pub(crate) parent: SlotLink,
    pub(crate) first_child: SlotLink,
    pub(crate) next_sibling: SlotLink,
    pub(crate) prev_sibling: SlotLink,
}

impl Links {
    /// A slot outside the tree.
    pub(crate) const CLEAR: Links = Links {
        parent: SlotLink::NONE,
        first_child: SlotLink::NONE,
        next_sibling: SlotLink::NONE,
        prev_sibling: SlotLink::NONE,
    };
}

/// The tree over all `SLOTS` slots. An empty slot is never in the tree;
/// a capability without a parent is a root (an object's original).
// Tests compare snapshots to show that a failed operation changed nothing.
#[cfg_attr(test, derive(Clone, PartialEq, Eq))]
pub(crate) struct Cdt<const SLOTS: usize> {
    links: [Links; SLOTS],
}

impl<const SLOTS: usize> Cdt<SLOTS> {
    /// No slot in the tree.
    pub(crate) const fn new() -> Self {
        Cdt {
            links: [Links::CLEAR; SLOTS],
        }
    }

    /// The links of `slot`.
    pub(crate) fn links(&self, slot: SlotId) -> Links {
        self.links[slot.index()]
    }

    /// The slot `slot`'s capability was derived from.
    pub(crate) fn parent(&self, slot: SlotId) -> Option<SlotId> {
        self.links[slot.index()].parent.get()
    }

    /// One of the capabilities derived from `slot`'s.
    pub(crate) fn first_child(&self, slot: SlotId) -> Option<SlotId> {
        self.links[slot.index()].first_child.get()
    }

    /// The next capability derived from the same parent.
    pub(crate) fn next_sibling(&self, slot: SlotId) -> Option<SlotId> {
        self.links[slot.index()].next_sibling.get()
    }

    /// Makes `child` (an unlinked slot) the newest child of `parent`.
    pub(crate) fn add_child(&mut self, parent: SlotId, child: SlotId) {
        let old_first = self.links[parent.index()].first_child;
        if let Some(old) = old_first.get() {
            self.links[old.index()].prev_sibling = SlotLink::to(child);
        }
        self.links[child.index()] = Links {
            parent: SlotLink::to(parent),
            first_child: SlotLink::NONE,
            next_sibling: old_first,
            prev_sibling: SlotLink::NONE,
        };
        self.links[parent.index()].first_child = SlotLink::to(child);
    }

    /// Takes `slot` out of the tree. The caller has removed its children
    /// first (delete works leaves first), so nothing points at it after.
    pub(crate) fn unlink_leaf(&mut self, slot: SlotId) {
        let Links {
            parent,
            next_sibling,
            prev_sibling,
            ..
        } = self.links[slot.index()];
        match prev_sibling.get() {
            Some(prev) => self.links[prev.index()].next_sibling = next_sibling,
            None => {
                if let Some(parent) = parent.get() {
                    self.links[parent.index()].first_child = next_sibling;
                }
            }
        }
        if let Some(next) = next_sibling.get() {
            self.links[next.index()].prev_sibling = prev_sibling;
        }
        self.links[slot.index()] = Links::CLEAR;
    }

    /// Puts unlinked slot `to` where `from` is in the tree (a move):
    /// same parent, same siblings, same children. `from` leaves the tree.
    pub(crate) fn transplant(&mut self, from: SlotId, to: SlotId) {
        let links = self.links[from.index()];
        self.links[from.index()] = Links::CLEAR;
        self.links[to.index()] = links;
        match links.prev_sibling.get() {
            Some(prev) => self.links[prev.index()].next_sibling = SlotLink::to(to),
            None => {
                if let Some(parent) = links.parent.get() {
                    self.links[parent.index()].first_child = SlotLink::to(to);
                }
            }
        }
        if let Some(next) = links.next_sibling.get() {
            self.links[next.index()].prev_sibling = SlotLink::to(to);
        }
        let mut child = links.first_child.get();
        while let Some(c) = child {
            self.links[c.index()].parent = SlotLink::to(to);
            child = self.next_sibling(c);
        }
    }

    /// Is `slot` a (strict) descendant of `ancestor`? Walks up at most
    /// `SLOTS` links, so a corrupted cycle cannot hang the caller.
    pub(crate) fn is_descendant(&self, slot: SlotId, ancestor: SlotId) -> bool {
        let mut current = self.parent(slot);
        for _ in 0..SLOTS {
            match current {
                None => return false,
                Some(p) if p == ancestor => return true,
                Some(p) => current = self.parent(p),
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn children<const N: usize>(cdt: &Cdt<N>, parent: SlotId) -> Vec<u32> {
        let mut out = Vec::new();
        let mut child = cdt.first_child(parent);
        while let Some(c) = child {
            assert_eq!(cdt.parent(c), Some(parent));
            out.push(c.0);
            child = cdt.next_sibling(c);
        }
        out
    }

    #[test]
    fn children_are_listed_newest_first() {
        let mut cdt = Cdt::<8>::new();
        cdt.add_child(SlotId(0), SlotId(1));
        cdt.add_child(SlotId(0), SlotId(2));
        cdt.add_child(SlotId(2), SlotId(3));
        assert_eq!(children(&cdt, SlotId(0)), vec![2, 1]);
        assert!(cdt.is_descendant(SlotId(3), SlotId(0)));
        assert!(!cdt.is_descendant(SlotId(0), SlotId(3)));
        assert!(!cdt.is_descendant(SlotId(1), SlotId(2)));
    }

    #[test]
    fn unlinking_keeps_the_sibling_list() {
        let mut cdt = Cdt::<8>::new();
        for c in 1..=3 {
            cdt.add_child(SlotId(0), SlotId(c));
        }
        cdt.unlink_leaf(SlotId(2));
        assert_eq!(children(&cdt, SlotId(0)), vec![3, 1]);
        cdt.unlink_leaf(SlotId(3));
        assert_eq!(children(&cdt, SlotId(0)), vec![1]);
        cdt.unlink_leaf(SlotId(1));
        assert_eq!(children(&cdt, SlotId(0)), Vec::<u32>::new());
        assert_eq!(cdt.links(SlotId(1)), Links::CLEAR);
    }

    #[test]
    fn transplant_moves_parent_siblings_and_children() {
        let mut cdt = Cdt::<8>::new();
        cdt.add_child(SlotId(0), SlotId(1));
        cdt.add_child(SlotId(0), SlotId(2));
        cdt.add_child(SlotId(0), SlotId(3));
        cdt.add_child(SlotId(2), SlotId(4));
        cdt.add_child(SlotId(2), SlotId(5));
        cdt.transplant(SlotId(2), SlotId(7));
        assert_eq!(children(&cdt, SlotId(0)), vec![3, 7, 1]);
        assert_eq!(children(&cdt, SlotId(7)), vec![5, 4]);
        assert_eq!(cdt.links(SlotId(2)), Links::CLEAR);
        cdt.transplant(SlotId(0), SlotId(6));
        assert_eq!(children(&cdt, SlotId(6)), vec![3, 7, 1]);
        assert_eq!(cdt.parent(SlotId(6)), None);
    }
}
