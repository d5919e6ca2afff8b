//! The capability layer's invariants, checked on demand.
//!
//! The fuzzer checks them after every round and the property tests after
//! every step. It allocates nothing and only reads; its cost is
//! O(slots × objects) at worst, which is why the kernel does not call it
//! on every syscall.
use super::object::{Links, UntypedBody};
use super::object_size::{MAX_CNODE_RADIX, MIN_CNODE_RADIX, PAGE_SIZE};
use super::{Capability, ObjectId, ObjectState, Objects, SlotId};
use abi::cap::{CapType, Rights};
use arch::object_memory::{kind, GRANULE};

/// The first invariant found broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvariantViolation {
    /// Reserved rights are set, or a badge where none can be.
    MalformedCapability(SlotId),
    /// The capability names a missing or dying object, or one of another
    /// type.
    DanglingCapability(SlotId),
    /// An empty slot still has derivation links.
    EmptySlotLinked(SlotId),
    /// A link of this slot is not answered by the slot it points to.
    BrokenLink(SlotId),
    /// The capability's parent slot is empty.
    ParentEmpty(SlotId),
    /// The capability is neither a copy of its parent's object nor carved
    /// from it nor an IrqHandler issued by its IrqControl parent (or an original of a retyped object has no parent).
    BadDerivation(SlotId),
    /// A Reply capability has a child, or its object more than one
    /// capability: it was copied, which nothing may do.
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
    /// An object is still being destroyed (or not yet freed) between
    /// kernel entries.
    ObjectMidDestroy(ObjectId),
    /// The list of every object is broken or miscounted.
    ObjectLeak,
    /// A CNode's radix or slot count is wrong.
    CNodeOverlap(ObjectId),
    /// The header's type is not the type of its record.
    BadBody(ObjectId),
    /// The object's Untyped is not a live Untyped.
    OrphanedChild(ObjectId),
    /// The object's record or memory lies outside the used part of its
    /// Untyped, or its memory is not aligned.
    ChildOutsideUntyped(ObjectId),
    /// Two objects share memory.
    MemoryOverlap(ObjectId, ObjectId),
    /// An Untyped's live-children count is wrong, or its ends are out of
    /// order or not back home with no children.
    BadWatermark(ObjectId),
    /// A granule of the Untyped's record room is taken but part of no
    /// live object's record carved from it: a record destroyed without
    /// its granules freed (memory leaked), or one over another's (memory
    /// used twice).
    StrayRecordGranule(ObjectId, u32),
}

use InvariantViolation as V;

impl Objects {
    /// Checks every invariant of `docs/capabilities.md`; the first broken
    /// one is returned.
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        self.check_object_list()?;
        self.check_slots()?;
        self.check_tree_reaches_everything()?;
        self.check_objects()?;
        self.check_memory()
    }

    /// Every slot of every CNode, in object order.
    fn all_slots(&self) -> impl Iterator<Item = SlotId> + '_ {
        self.iter()
            .filter_map(|id| self.memory().elements::<kind::CNode>(id.granule()))
            .flat_map(|(first, count)| (first..first + count as u64).map(|i| SlotId(i as u32)))
    }

    /// The list of every object is linked both ways, counted right, and
    /// names only records whose header says their type.
    fn check_object_list(&self) -> Result<(), InvariantViolation> {
        let mut seen = 0;
        let mut previous = None;
        for id in self.iter() {
            seen += 1;
            if seen > self.count {
                return Err(V::ObjectLeak);
            }
            let header = self.object(id).ok_or(V::ObjectLeak)?;
            if header.previous.get() != previous {
                return Err(V::ObjectLeak);
            }
            if self.memory().kind_at(id.granule()) != Some(header.cap_type) {
                return Err(V::BadBody(id));
            }
            previous = Some(id);
        }
        if seen != self.count {
            return Err(V::ObjectLeak);
        }
        Ok(())
    }

    /// Each slot on its own: well-formed capability, live object, links
    /// answered, derivation rule.
    fn check_slots(&self) -> Result<(), InvariantViolation> {
        for slot in self.all_slots() {
            let cap = self.slot_content(slot).unwrap_or(Capability::NULL);
            let links = self.links(slot);
            if cap.is_null() {
                if links != Links::CLEAR {
                    return Err(V::EmptySlotLinked(slot));
                }
                continue;
            }
            let badgeable = matches!(cap.cap_type(), CapType::Endpoint | CapType::Notification);
            if !cap.rights().is_subset_of(Rights::ALL)
                || (cap.is_badged() && !badgeable)
                || (!cap.is_badged() && cap.badge() != 0)
            {
                return Err(V::MalformedCapability(slot));
            }
            let header = match self.object(cap.object()) {
                Some(h) if h.state == ObjectState::Live && h.cap_type == cap.cap_type() => h,
                _ => return Err(V::DanglingCapability(slot)),
            };
            self.check_links(slot, links)?;
            if cap.has_type(CapType::Reply)
                && (links.first_child.get().is_some() || header.cap_count != 1)
            {
                return Err(V::ReplyNotSingle(slot));
            }
            match links.parent.get() {
                None if header.parent().is_some() => return Err(V::BadDerivation(slot)),
                None => {}
                Some(parent) => {
                    let parent_cap = self.slot_content(parent).unwrap_or(Capability::NULL);
                    let copy = parent_cap.object() == cap.object();
                    let carved = parent_cap.has_type(CapType::Untyped)
                        && header.parent() == Some(parent_cap.object());
                    let issued = parent_cap.has_type(CapType::IrqControl)
                        && cap.has_type(CapType::IrqHandler);
                    if !copy && !carved && !issued {
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
        let valid = |s: SlotId| self.slot_content(s).is_some_and(|c| !c.is_null());
        let broken = Err(V::BrokenLink(slot));
        if let Some(parent) = links.parent.get() {
            if !valid(parent) {
                return Err(V::ParentEmpty(slot));
            }
        }
        match links.prev_sibling.get() {
            Some(prev) => {
                if !valid(prev)
                    || self.next_sibling(prev) != Some(slot)
                    || self.parent(prev) != links.parent.get()
                {
                    return broken;
                }
            }
            None => {
                if let Some(parent) = links.parent.get() {
                    if self.first_child(parent) != Some(slot) {
                        return broken;
                    }
                }
            }
        }
        if let Some(next) = links.next_sibling.get() {
            if !valid(next) || self.links(next).prev_sibling.get() != Some(slot) {
                return broken;
            }
        }
        if let Some(child) = links.first_child.get() {
            if !valid(child) {
                return broken;
            }
            let child_links = self.links(child);
            if child_links.parent.get() != Some(slot) || child_links.prev_sibling.get().is_some() {
                return broken;
            }
        }
        Ok(())
    }

    /// A depth-first walk from every root reaches each capability once.
    fn check_tree_reaches_everything(&self) -> Result<(), InvariantViolation> {
        let full = |s: SlotId| self.slot_content(s).is_some_and(|c| !c.is_null());
        let caps = self.all_slots().filter(|s| full(*s)).count();
        let mut reached = 0;
        let mut budget = 2 * caps + 1;
        for root in self.all_slots() {
            if !full(root) || self.parent(root).is_some() {
                continue;
            }
            let mut node = root;
            'walk: loop {
                reached += 1;
                budget = budget.saturating_sub(1);
                if budget == 0 {
                    break 'walk;
                }
                if let Some(child) = self.first_child(node) {
                    node = child;
                    continue;
                }
                loop {
                    if node == root {
                        break 'walk;
                    }
                    if let Some(next) = self.next_sibling(node) {
                        node = next;
                        break;
                    }
                    match self.parent(node) {
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

    /// Object states, capability counts and CNode shapes.
    fn check_objects(&self) -> Result<(), InvariantViolation> {
        for id in self.iter() {
            let Some(header) = self.object(id) else {
                return Err(V::ObjectLeak);
            };
            let counted = self
                .all_slots()
                .filter(|s| {
                    self.slot_content(*s)
                        .is_some_and(|c| !c.is_null() && c.object() == id)
                })
                .count();
            match header.state {
                ObjectState::Dying | ObjectState::Destroyed | ObjectState::Retired => {
                    return Err(V::ObjectMidDestroy(id))
                }
                // Kept by the kernel with no capability (the kernel's own
                // checks say why).
                ObjectState::Pinned if counted == 0 && header.cap_count == 0 => continue,
                ObjectState::Pinned => return Err(V::CapCountMismatch(id)),
                ObjectState::Live if counted == 0 => return Err(V::ObjectWithoutCapability(id)),
                ObjectState::Created | ObjectState::Live => {}
            }
            if (header.state == ObjectState::Created && counted != 0)
                || header.cap_count as usize != counted
            {
                return Err(V::CapCountMismatch(id));
            }
            if let Some(cnode) = self.get::<kind::CNode>(id) {
                let radix = cnode.radix;
                let count = self
                    .memory()
                    .elements::<kind::CNode>(id.granule())
                    .map_or(0, |(_, count)| count);
                if !(MIN_CNODE_RADIX..=MAX_CNODE_RADIX).contains(&radix) || count != 1 << radix {
                    return Err(V::CNodeOverlap(id));
                }
            }
        }
        if let Some(id) = self.dying.get().or(self.destroyed.get()) {
            return Err(V::ObjectMidDestroy(id));
        }
        Ok(())
    }

    /// The memory of its own an object has (Frame, VSpace, Untyped):
    /// `(start, end)`, or `None`.
    fn own_memory(&self, id: ObjectId) -> Option<(u64, u64)> {
        if let Some(u) = self.get::<kind::Untyped>(id) {
            return Some((u.phys, u.phys + u.size));
        }
        if let Some(f) = self.get::<kind::Frame>(id) {
            return Some((f.phys, f.phys + PAGE_SIZE));
        }
        self.get::<kind::VSpace>(id)
            .map(|v| (v.phys, v.phys + v.pages * PAGE_SIZE))
    }

    /// Objects carved from an Untyped lie in its used parts (records at
    /// the top, memory at the bottom, aligned), and no two objects'
    /// memory overlaps, except an object's own Untyped's.
    fn check_memory(&self) -> Result<(), InvariantViolation> {
        for id in self.iter() {
            let Some(header) = self.object(id).copied() else {
                continue;
            };
            let own = self.own_memory(id);
            if let Some(parent_id) = header.parent() {
                let parent: UntypedBody = match self.get::<kind::Untyped>(parent_id) {
                    Some(u) if self.object(parent_id).is_some_and(|h| h.live()) => *u,
                    _ => return Err(V::OrphanedChild(id)),
                };
                let record = self.memory().phys_of(id.granule());
                let record_bytes = self.record_size_of(id, header.cap_type);
                let record_inside = match self.get::<kind::Untyped>(id) {
                    // At its own top, past its records' room.
                    Some(own) => {
                        record == own.phys + own.home
                            && record + record_bytes == own.phys + own.size
                    }
                    None => {
                        record >= parent.phys + parent.top
                            && record + record_bytes <= parent.phys + parent.home
                    }
                };
                // A device Frame's page is its device Untyped's (a live
                // one, made by the kernel), its record its payer's.
                let device = self.get::<kind::Frame>(id).and_then(|f| f.device.get());
                let memory_parent = match device {
                    Some(d) => match self.get::<kind::Untyped>(d) {
                        Some(u)
                            if u.device
                                && self
                                    .object(d)
                                    .is_some_and(|h| h.live() && h.parent().is_none()) =>
                        {
                            *u
                        }
                        _ => return Err(V::OrphanedChild(id)),
                    },
                    None if parent.device => return Err(V::ChildOutsideUntyped(id)),
                    None => parent,
                };
                let memory_inside = own.is_none_or(|(start, end)| {
                    let alignment = if header.cap_type == CapType::Untyped {
                        end - start
                    } else {
                        PAGE_SIZE
                    };
                    start.is_multiple_of(alignment)
                        && start >= memory_parent.phys
                        && end <= memory_parent.phys + memory_parent.bottom
                });
                if !record_inside || !memory_inside {
                    return Err(V::ChildOutsideUntyped(id));
                }
            }
            if let Some(untyped) = self.get::<kind::Untyped>(id) {
                // A device Untyped's children are its Frames (their
                // records are their payers').
                let children = if untyped.device {
                    self.iter()
                        .filter(|c| self.memory_parent(*c) == Some(id))
                        .count()
                } else {
                    self.iter()
                        .filter(|c| self.object(*c).is_some_and(|h| h.parent() == Some(id)))
                        .count()
                };
                let pinned = self
                    .iter()
                    .filter(|c| {
                        self.object(*c).is_some_and(|h| {
                            h.parent() == Some(id) && h.state == ObjectState::Pinned
                        })
                    })
                    .count();
                if pinned != untyped.pinned as usize {
                    return Err(V::BadWatermark(id));
                }
                let home = untyped.bottom == 0 && untyped.top == untyped.home;
                if children != untyped.live_children as usize
                    || untyped.bottom > untyped.top
                    || untyped.top > untyped.home
                    || untyped.home > untyped.size
                    || (children == 0 && !home)
                {
                    return Err(V::BadWatermark(id));
                }
                self.check_record_room(id, untyped)?;
            }
            // Siblings (same Untyped, or both the kernel's) never share
            // memory; an object and its own Untyped of course do.
            let Some((start, end)) = own else {
                continue;
            };
            let memory_parent = self.memory_parent(id);
            for other in self.iter().filter(|o| *o > id) {
                let siblings = self.memory_parent(other) == memory_parent;
                if let (true, Some((s, e))) = (siblings, self.own_memory(other)) {
                    if start < e && s < end {
                        return Err(V::MemoryOverlap(id, other));
                    }
                }
            }
        }
        Ok(())
    }

    /// Every taken granule of `untyped`'s record room (`top..home`) is
    /// part of the record of a live object carved from it (free ones are
    /// the holes destroyed records left).
    fn check_record_room(
        &self,
        id: ObjectId,
        untyped: &UntypedBody,
    ) -> Result<(), InvariantViolation> {
        let memory = self.memory();
        // An Untyped outside object memory (a device range) holds none.
        let Some(mut granule) = memory.granule_of(untyped.phys + untyped.top) else {
            return Ok(());
        };
        let end = granule + ((untyped.home - untyped.top) / GRANULE as u64) as u32;
        while granule < end {
            if memory.is_free(granule) {
                granule += 1;
                continue;
            }
            let object = ObjectId(granule);
            let carved = self
                .object(object)
                .filter(|h| h.parent() == Some(id))
                .map(|h| self.record_size_of(object, h.cap_type));
            match carved {
                Some(bytes) if bytes >= GRANULE as u64 => {
                    granule += (bytes / GRANULE as u64) as u32;
                }
                _ => return Err(V::StrayRecordGranule(id, granule)),
            }
        }
        Ok(())
    }

    /// The Untyped whose memory `id`'s own memory is: a device Frame's
    /// device Untyped, else the Untyped that paid for it.
    fn memory_parent(&self, id: ObjectId) -> Option<ObjectId> {
        self.get::<kind::Frame>(id)
            .and_then(|f| f.device.get())
            .or_else(|| self.object(id).and_then(|h| h.parent()))
    }

    /// The bytes the record of `id` (of `cap_type`) takes.
    fn record_size_of(&self, id: ObjectId, cap_type: CapType) -> u64 {
        let radix = self.get::<kind::CNode>(id).map_or(0, |c| c.radix);
        Self::record_bytes(cap_type, radix).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;
