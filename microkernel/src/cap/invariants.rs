//! The capability layer's invariants, checked on demand.
//!
//! The fuzzer calls `check_invariants` after every batch in debug builds
//! and the property tests after every step. It allocates nothing and
//! only reads; its cost is O(SLOTS × OBJECTS) at worst, which is why the
//! kernel does not call it on every syscall.
use super::cdt::Links;
use super::object::ObjectBody;
use super::object_size::{object_alignment, MAX_CNODE_RADIX, MIN_CNODE_RADIX};
use super::{CapSpace, ObjectId, ObjectState, SlotId};
use abi::cap::{CapType, Rights};

/// The first invariant found broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvariantViolation {
    /// A capability sits in a slot no CNode owns.
    SlotOutsideCNode(SlotId),
    /// Reserved rights are set, or a badge where none can be.
    MalformedCapability(SlotId),
    /// The capability names a free or dying object, or one of another type.
    DanglingCapability(SlotId),
    /// An empty slot still has derivation links.
    EmptySlotLinked(SlotId),
    /// A link of this slot is not answered by the slot it points to.
    BrokenLink(SlotId),
    /// The capability's parent slot is empty.
    ParentEmpty(SlotId),
    /// The capability is neither a copy of its parent's object nor carved
    /// from it (or an original of a retyped object has no parent).
    BadDerivation(SlotId),
    /// A Reply capability has a parent or a child, or its object has more
    /// than one capability, memory or an Untyped: it was copied or carved,
    /// which nothing may do.
    ReplyNotSingle(SlotId),
    /// Walking the tree from its roots does not reach every capability
    /// (a cycle, or a lost subtree).
    Unreachable {
        /// Capabilities in slots.
        caps: usize,
        /// Capabilities reached from the roots.
        reached: usize,
    },
    /// The object's `cap_count` differs from the capabilities naming it.
    CapCountMismatch(ObjectId),
    /// A live object no capability names.
    ObjectWithoutCapability(ObjectId),
    /// An object is still being destroyed after an operation returned.
    ObjectMidDestroy(ObjectId),
    /// The object table's free count differs from its free entries.
    ObjectLeak,
    /// The slot pool's free count differs from the slots no CNode owns.
    SlotLeak,
    /// A CNode's block of slots is malformed or overlaps another's.
    CNodeOverlap(ObjectId),
    /// The per-type state does not match the object's type.
    BadBody(ObjectId),
    /// The object's Untyped is not a live Untyped.
    OrphanedChild(ObjectId),
    /// The object lies outside the used part of its Untyped, or is not
    /// aligned to its size.
    ChildOutsideUntyped(ObjectId),
    /// Two objects share memory.
    MemoryOverlap(ObjectId, ObjectId),
    /// An Untyped's live-children count is wrong, or its watermark is
    /// beyond its end or not back at 0 with no children.
    BadWatermark(ObjectId),
}

use InvariantViolation as V;

impl<const SLOTS: usize, const OBJECTS: usize> CapSpace<SLOTS, OBJECTS> {
    /// Checks every invariant of `docs/capabilities.md`; the first broken
    /// one is returned.
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        self.check_slots()?;
        self.check_tree_reaches_everything()?;
        self.check_objects()?;
        self.check_slot_accounting()?;
        self.check_memory()
    }

    /// Each slot on its own: ownership, well-formed capability, live
    /// object, links answered, derivation rule.
    fn check_slots(&self) -> Result<(), InvariantViolation> {
        for index in 0..SLOTS {
            let slot = SlotId(index as u32);
            let cap = self.caps[index];
            let links = self.cdt.links(slot);
            if cap.is_null() {
                if links != Links::CLEAR {
                    return Err(V::EmptySlotLinked(slot));
                }
                continue;
            }
            if !self.pool.is_allocated(index) {
                return Err(V::SlotOutsideCNode(slot));
            }
            let badgeable = matches!(cap.cap_type(), CapType::Endpoint | CapType::Notification);
            if !cap.rights().is_subset_of(Rights::ALL)
                || (cap.is_badged() && !badgeable)
                || (!cap.is_badged() && cap.badge() != 0)
            {
                return Err(V::MalformedCapability(slot));
            }
            let header = match self.objects.get(cap.object()) {
                Some(h) if h.state == ObjectState::Live && h.cap_type == cap.cap_type() => h,
                _ => return Err(V::DanglingCapability(slot)),
            };
            self.check_links(slot, links)?;
            if cap.cap_type() == CapType::Reply
                && (links.parent.get().is_some()
                    || links.first_child.get().is_some()
                    || header.cap_count != 1
                    || header.size_bytes != 0
                    || header.parent_untyped.is_some())
            {
                return Err(V::ReplyNotSingle(slot));
            }
            match links.parent.get() {
                None if header.parent_untyped.is_some() => return Err(V::BadDerivation(slot)),
                None => {}
                Some(parent) => {
                    let parent_cap = self.caps[parent.index()];
                    let copy = parent_cap.object() == cap.object();
                    let carved = parent_cap.cap_type() == CapType::Untyped
                        && header.parent_untyped == Some(parent_cap.object());
                    if !copy && !carved {
                        return Err(V::BadDerivation(slot));
                    }
                }
            }
        }
        Ok(())
    }

    /// Every link of `slot` points at a slot with a capability that links
    /// back.
    fn check_links(&self, slot: SlotId, links: Links) -> Result<(), InvariantViolation> {
        let valid = |s: SlotId| s.index() < SLOTS && !self.caps[s.index()].is_null();
        let broken = Err(V::BrokenLink(slot));
        if let Some(parent) = links.parent.get() {
            if !valid(parent) {
                return Err(V::ParentEmpty(slot));
            }
        }
        match links.prev_sibling.get() {
            Some(prev) => {
                if !valid(prev)
                    || self.cdt.next_sibling(prev) != Some(slot)
                    || self.cdt.parent(prev) != links.parent.get()
                {
                    return broken;
                }
            }
            None => {
                if let Some(parent) = links.parent.get() {
                    if self.cdt.first_child(parent) != Some(slot) {
                        return broken;
                    }
                }
            }
        }
        if let Some(next) = links.next_sibling.get() {
            if !valid(next) || self.cdt.links(next).prev_sibling.get() != Some(slot) {
                return broken;
            }
        }
        if let Some(child) = links.first_child.get() {
            let child_links = if valid(child) {
                self.cdt.links(child)
            } else {
                return broken;
            };
            if child_links.parent.get() != Some(slot) || child_links.prev_sibling.get().is_some() {
                return broken;
            }
        }
        Ok(())
    }

    /// A depth-first walk from every root reaches each capability once.
    fn check_tree_reaches_everything(&self) -> Result<(), InvariantViolation> {
        let caps = self.caps.iter().filter(|c| !c.is_null()).count();
        let mut reached = 0;
        let mut budget = 2 * SLOTS + 1;
        for index in 0..SLOTS {
            let root = SlotId(index as u32);
            if self.caps[index].is_null() || self.cdt.parent(root).is_some() {
                continue;
            }
            let mut node = root;
            'walk: loop {
                reached += 1;
                budget = budget.saturating_sub(1);
                if budget == 0 {
                    break 'walk;
                }
                if let Some(child) = self.cdt.first_child(node) {
                    node = child;
                    continue;
                }
                loop {
                    if node == root {
                        break 'walk;
                    }
                    if let Some(next) = self.cdt.next_sibling(node) {
                        node = next;
                        break;
                    }
                    match self.cdt.parent(node) {
                        Some(parent) => node = parent,
                        None => break 'walk,
                    }
                }
            }
        }
        if reached == caps {
            Ok(())
        } else {
            Err(V::Unreachable { caps, reached })
        }
    }

    /// Object states, capability counts and the per-type state.
    fn check_objects(&self) -> Result<(), InvariantViolation> {
        let mut free = 0;
        for (id, header) in self.objects.iter() {
            let counted = self
                .caps
                .iter()
                .filter(|c| !c.is_null() && c.object() == id)
                .count();
            match header.state {
                ObjectState::Free => {
                    free += 1;
                    continue;
                }
                ObjectState::Dying => return Err(V::ObjectMidDestroy(id)),
                ObjectState::Live if counted == 0 => return Err(V::ObjectWithoutCapability(id)),
                ObjectState::Created | ObjectState::Live => {}
            }
            if (header.state == ObjectState::Created && counted != 0)
                || header.cap_count as usize != counted
            {
                return Err(V::CapCountMismatch(id));
            }
            let body_fits = match header.body {
                ObjectBody::Plain => !matches!(
                    header.cap_type,
                    CapType::Untyped | CapType::CNode | CapType::Null
                ),
                ObjectBody::Untyped { .. } => header.cap_type == CapType::Untyped,
                ObjectBody::CNode { .. } => header.cap_type == CapType::CNode,
            };
            if !body_fits {
                return Err(V::BadBody(id));
            }
        }
        if let Some(id) = self.objects.peek_dying() {
            return Err(V::ObjectMidDestroy(id));
        }
        if free != self.objects.free_count() {
            return Err(V::ObjectLeak);
        }
        Ok(())
    }

    /// CNode blocks are aligned, inside the pool, disjoint, and together
    /// exactly the slots the pool counts as used.
    fn check_slot_accounting(&self) -> Result<(), InvariantViolation> {
        let mut owned = 0;
        for (id, header) in self.objects.iter() {
            let ObjectBody::CNode { first_slot, radix } = header.body else {
                continue;
            };
            let (first, size) = (first_slot as usize, 1usize << radix);
            let well_formed = (MIN_CNODE_RADIX..=MAX_CNODE_RADIX).contains(&radix)
                && first.is_multiple_of(size)
                && first + size <= SLOTS
                && (first..first + size).all(|i| self.pool.is_allocated(i));
            let overlaps = self.objects.iter().any(|(other, h)| match h.body {
                ObjectBody::CNode {
                    first_slot: o,
                    radix: r,
                } => other != id && (o as usize) < first + size && first < o as usize + (1 << r),
                _ => false,
            });
            if !well_formed || overlaps {
                return Err(V::CNodeOverlap(id));
            }
            owned += size;
        }
        let allocated = (0..SLOTS).filter(|i| self.pool.is_allocated(*i)).count();
        if owned != allocated || self.pool.free_count() + allocated != SLOTS {
            return Err(V::SlotLeak);
        }
        Ok(())
    }

    /// Objects carved from an Untyped lie below its watermark, aligned and
    /// disjoint; boot objects with memory are disjoint too.
    fn check_memory(&self) -> Result<(), InvariantViolation> {
        for (id, header) in self.objects.iter() {
            if header.state == ObjectState::Free {
                continue;
            }
            if let Some(parent_id) = header.parent_untyped {
                let parent = self.objects.get(parent_id).copied();
                let watermark = match parent.map(|p| (p.state, p.body)) {
                    Some((ObjectState::Live, ObjectBody::Untyped { watermark, .. })) => watermark,
                    _ => return Err(V::OrphanedChild(id)),
                };
                let base = parent.map_or(0, |p| p.phys);
                let alignment = object_alignment(header.cap_type, header.size_bytes);
                let shaped = header.size_bytes.is_power_of_two()
                    || (header.cap_type == CapType::VSpace
                        && header.size_bytes.is_multiple_of(alignment));
                let inside = shaped
                    && alignment > 0
                    && header.phys.is_multiple_of(alignment)
                    && header.phys >= base
                    && header.phys_end() <= base.saturating_add(watermark);
                if !inside {
                    return Err(V::ChildOutsideUntyped(id));
                }
            }
            if let ObjectBody::Untyped {
                watermark,
                live_children,
            } = header.body
            {
                let children = self
                    .objects
                    .iter()
                    .filter(|(_, h)| h.state != ObjectState::Free && h.parent_untyped == Some(id))
                    .count();
                if children != live_children as usize
                    || watermark > header.size_bytes
                    || (children == 0 && watermark != 0)
                {
                    return Err(V::BadWatermark(id));
                }
            }
            // Siblings (same Untyped, or both made at boot) never overlap;
            // an object and its own Untyped of course do.
            for (other_id, other) in self.objects.iter() {
                let siblings = other_id > id
                    && other.state != ObjectState::Free
                    && other.parent_untyped == header.parent_untyped
                    && header.size_bytes > 0
                    && other.size_bytes > 0;
                if siblings && header.phys < other.phys_end() && other.phys < header.phys_end() {
                    return Err(V::MemoryOverlap(id, other_id));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::Fixture;
    use super::super::Capability;
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
        f.space.create_reply(f.slot(8)).unwrap();
        f.check();
        // A copy made behind `copy`'s back, as a child.
        let s = f.slot(9);
        let cap = f.space.lookup(f.slot(8)).unwrap();
        f.space.store(s, cap);
        f.space.cdt.add_child(f.slot(8), s);
        assert_eq!(
            f.space.check_invariants(),
            Err(V::ReplyNotSingle(f.slot(8)))
        );
    }

    #[test]
    fn a_wrong_cap_count_is_found() {
        let mut f = busy();
        let ep = id_in(&f, 2);
        f.space.objects.get_mut(ep).unwrap().cap_count += 1;
        assert_eq!(f.space.check_invariants(), Err(V::CapCountMismatch(ep)));
    }

    #[test]
    fn a_capability_dropped_without_unlinking_is_found() {
        let mut f = busy();
        let s = f.slot(2);
        f.space.caps[s.index()] = Capability::NULL;
        assert_eq!(f.space.check_invariants(), Err(V::EmptySlotLinked(s)));
    }

    #[test]
    fn a_carved_object_as_a_root_is_found() {
        let mut f = busy();
        let s = f.slot(5);
        f.space.cdt.unlink_leaf(s);
        assert_eq!(f.space.check_invariants(), Err(V::BadDerivation(s)));
    }

    #[test]
    fn a_copy_under_the_wrong_parent_is_found() {
        let mut f = busy();
        let s = f.slot(3);
        f.space.cdt.unlink_leaf(s);
        f.space.cdt.add_child(f.slot(5), s);
        assert_eq!(f.space.check_invariants(), Err(V::BadDerivation(s)));
    }

    #[test]
    fn a_capability_to_a_freed_object_is_found() {
        let mut f = busy();
        let ep = id_in(&f, 2);
        f.space.objects.release(ep);
        assert_eq!(
            f.space.check_invariants(),
            Err(V::DanglingCapability(f.slot(2)))
        );
    }

    #[test]
    fn a_lowered_watermark_is_found() {
        let mut f = busy();
        let untyped = f.untyped;
        if let ObjectBody::Untyped { watermark, .. } =
            &mut f.space.objects.get_mut(untyped).unwrap().body
        {
            *watermark = 16;
        }
        let violation = f.space.check_invariants();
        assert!(
            matches!(violation, Err(V::ChildOutsideUntyped(_))),
            "{violation:?}"
        );
    }

    #[test]
    fn overlapping_siblings_are_found() {
        let mut f = busy();
        let (a, b) = (id_in(&f, 5), id_in(&f, 6));
        let phys = f.space.objects.get(a).unwrap().phys;
        f.space.objects.get_mut(b).unwrap().phys = phys;
        assert_eq!(f.space.check_invariants(), Err(V::MemoryOverlap(a, b)));
    }

    #[test]
    fn a_leaked_slot_is_found() {
        let mut f = busy();
        f.space.pool.allocate(1);
        assert_eq!(f.space.check_invariants(), Err(V::SlotLeak));
    }

    #[test]
    fn a_live_object_without_capabilities_is_found() {
        let mut f = busy();
        let ep = f.space.create_object(CapType::Endpoint, 0, 0).unwrap();
        f.check();
        f.space.objects.get_mut(ep).unwrap().state = ObjectState::Live;
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
        f.space.cdt.unlink_leaf(b);
        f.space.cdt.add_child(b, a);
        f.space.cdt.add_child(a, b);
        assert!(matches!(
            f.space.check_invariants(),
            Err(V::Unreachable { .. } | V::BrokenLink(_))
        ));
    }
}
