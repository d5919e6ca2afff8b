//! Delete and revoke: taking capabilities out, and destroying objects
//! whose last capability went.
//!
//! Everything here is iterative and bounded:
//!
//! - A subtree of the derivation tree is removed in post-order with one
//!   cursor: go down to a leaf, remove it, step back to its parent. Each
//!   capability is visited a bounded number of times, whatever the depth.
//! - Destroying a CNode must delete everything its slots hold, which may
//!   destroy further CNodes. Instead of recursing, a dying CNode goes on a
//!   work list threaded through the headers (each CNode can be on it
//!   once: it is `Dying` and unreachable), and the list is drained before
//!   the operation returns.
//! - A destroyed object is not freed at once: it goes on the destroyed
//!   list, where the kernel finds it (`take_destroyed`) to let go of it
//!   (wake its waiters, end the threads it alone kept going), and its
//!   record is freed by `reap` once the kernel entry is over, so that no
//!   id the kernel still holds in that entry names freed memory.
use super::object_size::PAGE_SIZE;
use super::{CapError, Capability, FreedPages, ObjectId, ObjectState, Objects, SlotId};
use crate::ids::ObjectLink;
use abi::cap::CapType;
use arch::object_memory::kind;

impl Objects {
    /// Deletes the capability in `slot` after every capability derived
    /// from it. Each object whose last capability goes is destroyed (see
    /// `take_destroyed`); a destroyed CNode's slots are deleted in turn.
    pub fn delete(&mut self, slot: SlotId) -> Result<(), CapError> {
        self.lookup(slot)?;
        self.remove_descendants(slot);
        if self.slot_content(slot).is_some_and(|c| !c.is_null()) {
            self.remove_leaf(slot);
        }
        self.drain_dying();
        self.release_frames_of_destroyed_devices();
        Ok(())
    }

    /// Deletes every capability derived from the one in `slot`, which
    /// stays — unless a CNode that only those descendants kept alive holds
    /// it or one of its ancestors: destroying that CNode deletes what it
    /// holds, with their descendants, and so this capability too.
    pub fn revoke(&mut self, slot: SlotId) -> Result<(), CapError> {
        let cap = self.lookup(slot)?;
        self.remove_descendants(slot);
        self.drain_dying();
        // A device Untyped's Frames are children of the RAM Untypeds that
        // paid their records, not of it: revoking it takes them back too.
        if cap.has_type(CapType::Untyped)
            && self.slot_content(slot) == Some(cap)
            && self
                .get::<kind::Untyped>(cap.object())
                .is_some_and(|u| u.device)
        {
            self.release_device_frames(cap.object());
        }
        self.release_frames_of_destroyed_devices();
        Ok(())
    }

    /// Removes every strict descendant of `root`, leaves first.
    pub(super) fn remove_descendants(&mut self, root: SlotId) {
        let mut cursor = root;
        loop {
            if let Some(child) = self.first_child(cursor) {
                cursor = child;
                continue;
            }
            if cursor == root {
                return;
            }
            let Some(parent) = self.parent(cursor) else {
                return;
            };
            self.remove_leaf(cursor);
            cursor = parent;
        }
    }

    /// Takes the capability out of `slot`, which has no children, and
    /// destroys its object if it was the last.
    pub(super) fn remove_leaf(&mut self, slot: SlotId) {
        let Some(cap) = self.slot_content(slot) else {
            return;
        };
        if let Some(entry) = self.slot_entry_mut(slot) {
            entry.cap = Capability::NULL;
        }
        self.unlink_leaf(slot);
        let id = cap.object();
        let Some(header) = self.header_mut(id) else {
            return;
        };
        header.cap_count = header.cap_count.saturating_sub(1);
        if header.cap_count > 0 {
            return;
        }
        if header.cap_type == CapType::CNode {
            header.state = ObjectState::Dying;
            let dying = core::mem::replace(&mut self.dying, ObjectLink::to(id));
            if let Some(h) = self.header_mut(id) {
                h.next_work = dying;
            }
        } else {
            self.destroyed_push(id);
        }
    }

    /// Empties every dying CNode, which is then destroyed.
    fn drain_dying(&mut self) {
        while let Some(cnode) = self.dying.get() {
            self.dying = self.object(cnode).map_or(ObjectLink::NONE, |h| h.next_work);
            if let Some((first, count)) = self.memory().elements::<kind::CNode>(cnode.granule()) {
                // Slots are only ever emptied while deleting, so one pass
                // over them finds everything.
                for index in first..first + count as u64 {
                    let slot = SlotId(index as u32);
                    if self.slot_content(slot).is_none_or(|c| c.is_null()) {
                        continue;
                    }
                    self.remove_descendants(slot);
                    if self.slot_content(slot).is_some_and(|c| !c.is_null()) {
                        self.remove_leaf(slot);
                    }
                }
            }
            self.destroyed_push(cnode);
        }
    }

    /// Puts `id`, whose last capability is gone, at the end of the
    /// destroyed list.
    fn destroyed_push(&mut self, id: ObjectId) {
        if let Some(h) = self.header_mut(id) {
            h.state = ObjectState::Destroyed;
            h.next_work = ObjectLink::NONE;
        }
        match self.destroyed_tail.get() {
            Some(tail) => {
                if let Some(h) = self.header_mut(tail) {
                    h.next_work = ObjectLink::to(id);
                }
            }
            None => self.destroyed = ObjectLink::to(id),
        }
        self.destroyed_tail = ObjectLink::to(id);
    }

    /// The oldest destroyed object the kernel has not been told of, with
    /// its type; it is retired (its record is freed by the next `reap`).
    /// The kernel lets go of it before asking for the next: its body is
    /// still there to read.
    pub fn take_destroyed(&mut self) -> Option<(ObjectId, CapType)> {
        let id = self.destroyed.get()?;
        let header = *self.object(id)?;
        self.destroyed = header.next_work;
        if self.destroyed.get().is_none() {
            self.destroyed_tail = ObjectLink::NONE;
        }
        let retired = self.retired;
        if let Some(h) = self.header_mut(id) {
            h.state = ObjectState::Retired;
            h.next_work = retired;
        }
        self.retired = ObjectLink::to(id);
        Some((id, header.cap_type))
    }

    /// Keeps the record of `id`, just taken by `take_destroyed`, for as
    /// long as the kernel still uses it (a Filter still attached): it is
    /// pinned until `retire_pinned`. `false` if `id` is not the object
    /// `take_destroyed` gave last.
    pub fn pin(&mut self, id: ObjectId) -> bool {
        if self.retired.get() != Some(id) {
            return false;
        }
        let Some(header) = self.object(id).copied() else {
            return false;
        };
        self.retired = header.next_work;
        if let Some(h) = self.header_mut(id) {
            h.state = ObjectState::Pinned;
            h.next_work = ObjectLink::NONE;
        }
        if let Some(parent) = header.parent() {
            if let Some(untyped) = self.get_mut::<kind::Untyped>(parent) {
                untyped.pinned += 1;
            }
        }
        true
    }

    /// The kernel is done with pinned object `id`: its record is freed by
    /// the next `reap`.
    pub fn retire_pinned(&mut self, id: ObjectId) {
        let Some(header) = self.object(id).copied() else {
            return;
        };
        if header.state != ObjectState::Pinned {
            return;
        }
        if let Some(parent) = header.parent() {
            if let Some(untyped) = self.get_mut::<kind::Untyped>(parent) {
                untyped.pinned = untyped.pinned.saturating_sub(1);
            }
        }
        let retired = self.retired;
        if let Some(h) = self.header_mut(id) {
            h.state = ObjectState::Retired;
            h.next_work = retired;
        }
        self.retired = ObjectLink::to(id);
    }

    /// The pinned objects carved from Untyped `untyped` (an O(objects)
    /// walk, for the rare destruction of an Untyped that has some).
    pub fn pinned_children(&self, untyped: ObjectId) -> impl Iterator<Item = ObjectId> + '_ {
        self.iter().filter(move |id| {
            self.object(*id)
                .is_some_and(|h| h.state == ObjectState::Pinned && h.parent() == Some(untyped))
        })
    }

    /// Is an object destroyed that the kernel has not been told of?
    pub fn has_destroyed(&self) -> bool {
        self.destroyed.get().is_some()
    }

    /// Is a retired record waiting to be freed?
    #[inline(always)]
    pub fn has_retired(&self) -> bool {
        self.retired.get().is_some()
    }

    /// Frees every retired record: its granules are free again, its
    /// Untyped counts one child fewer (and, at none, has all its memory
    /// back), and a record on the kernel's own pages is handed to `freed`
    /// to give back to the pool.
    pub fn reap(&mut self, mut freed: impl FnMut(FreedPages)) {
        while let Some(id) = self.retired.get() {
            let Some(header) = self.object(id).copied() else {
                self.retired = ObjectLink::NONE;
                return;
            };
            self.retired = header.next_work;
            let bytes = self.record_size(id, header.cap_type);
            // An Untyped whose record is in its own memory gives back no
            // page of the kernel's (its memory is its owner's to give back).
            let in_place = self
                .get::<kind::Untyped>(id)
                .is_some_and(|u| u.home < u.size);
            let device = self
                .get::<kind::Frame>(id)
                .and_then(|frame| frame.device.get());
            self.unlink(id);
            self.free_record(id, header.cap_type);
            // A device Frame's page goes back to its device Untyped too.
            if let Some(device) = device {
                self.child_freed(device);
            }
            match header.parent() {
                Some(parent) => self.child_freed(parent),
                None if in_place => {}
                None => freed(FreedPages {
                    phys: self.memory().phys_of(id.granule()),
                    pages: bytes.div_ceil(PAGE_SIZE),
                }),
            }
        }
    }

    /// The bytes the record of `id` (of `cap_type`) takes.
    fn record_size(&self, id: ObjectId, cap_type: CapType) -> u64 {
        let radix = self.get::<kind::CNode>(id).map_or(0, |cnode| cnode.radix);
        Self::record_bytes(cap_type, radix).unwrap_or(0)
    }

    /// Frees the record of `id` as the kind it is.
    fn free_record(&mut self, id: ObjectId, cap_type: CapType) {
        let g = id.granule();
        let m = self.memory_mut();
        let freed = match cap_type {
            CapType::Untyped => m.destroy::<kind::Untyped>(g).is_some(),
            CapType::CNode => m.destroy::<kind::CNode>(g).is_some(),
            CapType::Tcb => m.destroy::<kind::Tcb>(g).is_some(),
            CapType::Endpoint => m.destroy::<kind::Endpoint>(g).is_some(),
            CapType::Notification => m.destroy::<kind::Notification>(g).is_some(),
            CapType::Reply => m.destroy::<kind::Reply>(g).is_some(),
            CapType::Frame => m.destroy::<kind::Frame>(g).is_some(),
            CapType::VSpace => m.destroy::<kind::VSpace>(g).is_some(),
            CapType::IrqHandler => m.destroy::<kind::IrqHandler>(g).is_some(),
            CapType::DebugConsole => m.destroy::<kind::DebugConsole>(g).is_some(),
            CapType::Filter => m.destroy::<kind::Filter>(g).is_some(),
            CapType::IrqControl => m.destroy::<kind::IrqControl>(g).is_some(),
            CapType::Inspector => m.destroy::<kind::Inspector>(g).is_some(),
            CapType::Null => false,
        };
        debug_assert!(freed, "a retired record is of its header's type");
    }

    /// One object carved from `parent` was freed: at none left, all of
    /// the Untyped's memory is free again (a new epoch).
    pub(super) fn child_freed(&mut self, parent: ObjectId) {
        let epoch = self.next_serial();
        if let Some(untyped) = self.get_mut::<kind::Untyped>(parent) {
            untyped.live_children = untyped.live_children.saturating_sub(1);
            if untyped.live_children == 0 {
                untyped.bottom = 0;
                untyped.top = untyped.home;
                untyped.epoch = epoch;
            }
        }
    }
}

#[cfg(test)]
mod tests;
