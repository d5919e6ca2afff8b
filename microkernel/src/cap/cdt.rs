//! The capability derivation tree (CDT): who was derived from whom.
//!
//! seL4 keeps its tree as one doubly linked list in depth-first order and
//! recovers parenthood by comparing neighbouring capabilities. We store
//! the tree explicitly instead — parent, first child and two sibling links
//! in every slot (16 bytes of its 32) — so that "is X a descendant of Y",
//! "delete every descendant" and the invariant checker need no per-type
//! rules: a capability's children are exactly the capabilities copied,
//! minted or retyped from it. Every link update is O(1) except
//! `transplant`, which re-parents the moved capability's children.
use super::object::Links;
use super::Objects;
use crate::ids::{SlotId, SlotLink};

impl Objects {
    /// The links of `slot` (clear for no slot).
    pub(crate) fn links(&self, slot: SlotId) -> Links {
        self.slot_entry(slot).map_or(Links::CLEAR, |e| e.links)
    }

    /// Changes the links of `slot` (nothing for no slot).
    fn edit_links(&mut self, slot: SlotId, edit: impl FnOnce(&mut Links)) {
        if let Some(entry) = self.slot_entry_mut(slot) {
            edit(&mut entry.links);
        }
    }

    /// One of the capabilities derived from `slot`'s.
    pub(crate) fn first_child(&self, slot: SlotId) -> Option<SlotId> {
        self.links(slot).first_child.get()
    }

    /// The next capability derived from the same parent.
    pub(crate) fn next_sibling(&self, slot: SlotId) -> Option<SlotId> {
        self.links(slot).next_sibling.get()
    }

    /// Makes `child` (an unlinked slot) the newest child of `parent`.
    pub(crate) fn add_child(&mut self, parent: SlotId, child: SlotId) {
        let old_first = self.links(parent).first_child;
        if let Some(old) = old_first.get() {
            self.edit_links(old, |l| l.prev_sibling = SlotLink::to(child));
        }
        self.edit_links(child, |l| {
            *l = Links {
                parent: SlotLink::to(parent),
                first_child: SlotLink::NONE,
                next_sibling: old_first,
                prev_sibling: SlotLink::NONE,
            }
        });
        self.edit_links(parent, |l| l.first_child = SlotLink::to(child));
    }

    /// Takes `slot` out of the tree. The caller has removed its children
    /// first (delete works leaves first), so nothing points at it after.
    pub(crate) fn unlink_leaf(&mut self, slot: SlotId) {
        let Links {
            parent,
            next_sibling,
            prev_sibling,
            ..
        } = self.links(slot);
        match prev_sibling.get() {
            Some(prev) => self.edit_links(prev, |l| l.next_sibling = next_sibling),
            None => {
                if let Some(parent) = parent.get() {
                    self.edit_links(parent, |l| l.first_child = next_sibling);
                }
            }
        }
        if let Some(next) = next_sibling.get() {
            self.edit_links(next, |l| l.prev_sibling = prev_sibling);
        }
        self.edit_links(slot, |l| *l = Links::CLEAR);
    }

    /// Puts unlinked slot `to` where `from` is in the tree (a move):
    /// same parent, same siblings, same children. `from` leaves the tree.
    pub(crate) fn transplant(&mut self, from: SlotId, to: SlotId) {
        let links = self.links(from);
        self.edit_links(from, |l| *l = Links::CLEAR);
        self.edit_links(to, |l| *l = links);
        match links.prev_sibling.get() {
            Some(prev) => self.edit_links(prev, |l| l.next_sibling = SlotLink::to(to)),
            None => {
                if let Some(parent) = links.parent.get() {
                    self.edit_links(parent, |l| l.first_child = SlotLink::to(to));
                }
            }
        }
        if let Some(next) = links.next_sibling.get() {
            self.edit_links(next, |l| l.prev_sibling = SlotLink::to(to));
        }
        let mut child = links.first_child.get();
        while let Some(c) = child {
            self.edit_links(c, |l| l.parent = SlotLink::to(to));
            child = self.next_sibling(c);
        }
    }

    /// Is `slot` a (strict) descendant of `ancestor`? Walks up at most as
    /// many links as object memory has slots, so a corrupted cycle cannot
    /// hang the caller.
    pub(crate) fn cdt_is_descendant(&self, slot: SlotId, ancestor: SlotId) -> bool {
        let mut current = self.parent(slot);
        for _ in 0..self.slot_capacity() {
            match current {
                None => return false,
                Some(p) if p == ancestor => return true,
                Some(p) => current = self.parent(p),
            }
        }
        false
    }

    /// How many slots object memory could hold at most.
    pub(crate) fn slot_capacity(&self) -> usize {
        self.memory().granules() * 2
    }
}

#[cfg(test)]
mod tests;
