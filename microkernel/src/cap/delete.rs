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
//!   work list threaded through the object table (each CNode can be on it
//!   once: it is `Dying` and unreachable), and the list is drained before
//!   the operation returns. Its slots are released only once empty.
use super::object::ObjectBody;
use super::{CapError, CapSpace, Capability, ObjectId, ObjectState, SlotId};
use abi::cap::CapType;

impl<const SLOTS: usize, const OBJECTS: usize> CapSpace<SLOTS, OBJECTS> {
    /// Deletes the capability in `slot` after every capability derived
    /// from it. Each object whose last capability goes is destroyed and
    /// reported to `on_destroy` (so the kernel can wake the threads that
    /// wait on it); a destroyed CNode's slots are deleted in turn.
    pub fn delete<F: FnMut(ObjectId, CapType)>(
        &mut self,
        slot: SlotId,
        mut on_destroy: F,
    ) -> Result<(), CapError> {
        self.lookup(slot)?;
        self.remove_descendants(slot, &mut on_destroy);
        if !self.caps[slot.index()].is_null() {
            self.remove_leaf(slot, &mut on_destroy);
        }
        self.drain_dying(&mut on_destroy);
        Ok(())
    }

    /// Deletes every capability derived from the one in `slot`, which
    /// stays — unless a CNode that only those descendants kept alive holds
    /// it or one of its ancestors: destroying that CNode deletes what it
    /// holds, with their descendants, and so this capability too.
    pub fn revoke<F: FnMut(ObjectId, CapType)>(
        &mut self,
        slot: SlotId,
        mut on_destroy: F,
    ) -> Result<(), CapError> {
        self.lookup(slot)?;
        self.remove_descendants(slot, &mut on_destroy);
        self.drain_dying(&mut on_destroy);
        Ok(())
    }

    /// Removes every strict descendant of `root`, leaves first.
    fn remove_descendants<F: FnMut(ObjectId, CapType)>(
        &mut self,
        root: SlotId,
        on_destroy: &mut F,
    ) {
        let mut cursor = root;
        loop {
            if let Some(child) = self.cdt.first_child(cursor) {
                cursor = child;
                continue;
            }
            if cursor == root {
                return;
            }
            let Some(parent) = self.cdt.parent(cursor) else {
                return;
            };
            self.remove_leaf(cursor, on_destroy);
            cursor = parent;
        }
    }

    /// Takes the capability out of `slot`, which has no children, and
    /// destroys its object if it was the last.
    fn remove_leaf<F: FnMut(ObjectId, CapType)>(&mut self, slot: SlotId, on_destroy: &mut F) {
        let cap = self.caps[slot.index()];
        self.caps[slot.index()] = Capability::NULL;
        self.cdt.unlink_leaf(slot);
        let id = cap.object();
        let Some(header) = self.objects.get_mut(id) else {
            return;
        };
        header.cap_count = header.cap_count.saturating_sub(1);
        if header.cap_count > 0 {
            return;
        }
        let cap_type = header.cap_type;
        if let ObjectBody::CNode { .. } = header.body {
            header.state = ObjectState::Dying;
            self.objects.push_dying(id);
        } else {
            self.release_object(id);
        }
        on_destroy(id, cap_type);
    }

    /// Empties every dying CNode and releases it.
    fn drain_dying<F: FnMut(ObjectId, CapType)>(&mut self, on_destroy: &mut F) {
        while let Some(cnode) = self.objects.pop_dying() {
            if let Some(ObjectBody::CNode { first_slot, radix }) =
                self.objects.get(cnode).map(|h| h.body)
            {
                // Slots are only ever emptied while deleting, so one pass
                // over the block finds everything.
                for index in first_slot..first_slot + (1 << radix) {
                    let slot = SlotId(index);
                    if self.caps[slot.index()].is_null() {
                        continue;
                    }
                    self.remove_descendants(slot, on_destroy);
                    if !self.caps[slot.index()].is_null() {
                        self.remove_leaf(slot, on_destroy);
                    }
                }
            }
            self.release_object(cnode);
        }
    }

    /// Frees a destroyed object's entry (and a CNode's slots) and gives
    /// its memory back to its Untyped's accounting.
    fn release_object(&mut self, id: ObjectId) {
        let Some(header) = self.objects.get(id).copied() else {
            return;
        };
        if let ObjectBody::CNode { first_slot, radix } = header.body {
            self.pool.release(first_slot as usize, radix);
        }
        self.objects.release(id);
        let Some(parent) = header.parent_untyped else {
            return;
        };
        let epoch = self.next_epoch();
        if let Some(untyped) = self.objects.get_mut(parent) {
            if let ObjectBody::Untyped {
                watermark,
                live_children,
            } = &mut untyped.body
            {
                *live_children = live_children.saturating_sub(1);
                if *live_children == 0 {
                    *watermark = 0;
                    untyped.epoch = epoch;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::Fixture;
    use super::*;
    use abi::cap::Rights;

    /// Records what `on_destroy` reported.
    fn record(log: &mut Vec<(ObjectId, CapType)>) -> impl FnMut(ObjectId, CapType) + '_ {
        |id, t| log.push((id, t))
    }

    #[test]
    fn deleting_a_copy_keeps_the_object() {
        let mut f = Fixture::new();
        let ep = f.endpoint(2);
        f.space.copy(f.slot(2), f.slot(3)).unwrap();
        let mut log = Vec::new();
        f.space.delete(f.slot(3), record(&mut log)).unwrap();
        assert!(log.is_empty());
        assert_eq!(f.space.object(ep).unwrap().cap_count, 1);
        f.check();
    }

    #[test]
    fn the_last_capability_destroys_the_object() {
        let mut f = Fixture::new();
        let ep = f.endpoint(2);
        let mut log = Vec::new();
        f.space.delete(f.slot(2), record(&mut log)).unwrap();
        assert_eq!(log, vec![(ep, CapType::Endpoint)]);
        assert!(f.space.object(ep).is_none());
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
        let mut log = Vec::new();
        f.space.delete(f.slot(2), record(&mut log)).unwrap();
        for i in 2..=6 {
            assert_eq!(f.space.lookup(f.slot(i)), Err(CapError::InvalidCapability));
        }
        assert_eq!(log, vec![(ep, CapType::Endpoint)], "destroyed exactly once");
        f.check();
    }

    #[test]
    fn revoke_keeps_the_capability() {
        let mut f = Fixture::new();
        let ep = f.endpoint(2);
        f.space.copy(f.slot(2), f.slot(3)).unwrap();
        f.space.copy(f.slot(3), f.slot(4)).unwrap();
        f.space.copy(f.slot(2), f.slot(5)).unwrap();
        let mut log = Vec::new();
        f.space.revoke(f.slot(3), record(&mut log)).unwrap();
        assert!(f.space.lookup(f.slot(3)).is_ok() && f.space.lookup(f.slot(5)).is_ok());
        assert!(f.space.lookup(f.slot(4)).is_err());
        f.space.revoke(f.slot(2), record(&mut log)).unwrap();
        assert!(f.space.lookup(f.slot(3)).is_err() && f.space.lookup(f.slot(5)).is_err());
        assert_eq!(f.space.object(ep).unwrap().cap_count, 1);
        assert!(log.is_empty());
        f.check();
    }

    #[test]
    fn empty_slots_are_refused() {
        let mut f = Fixture::new();
        let nothing = |_: ObjectId, _: CapType| panic!("nothing to destroy");
        assert_eq!(
            f.space.delete(f.slot(9), nothing),
            Err(CapError::InvalidCapability)
        );
        assert_eq!(
            f.space.revoke(f.slot(9), nothing),
            Err(CapError::InvalidCapability)
        );
        assert_eq!(
            f.space.delete(SlotId(u32::MAX - 1), nothing),
            Err(CapError::InvalidCapability)
        );
        f.check();
    }

    #[test]
    fn a_long_chain_is_deleted_without_recursion() {
        let mut f = Fixture::new();
        f.endpoint(2);
        for i in 3..16 {
            f.space.copy(f.slot(i - 1), f.slot(i)).unwrap();
        }
        f.space.delete(f.slot(2), |_, _| {}).unwrap();
        assert!((2..16).all(|i| f.space.lookup(f.slot(i)).is_err()));
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
        let free_before = f.space.free_slots();
        let mut log = Vec::new();
        f.space.delete(f.slot(3), record(&mut log)).unwrap();
        assert_eq!(
            log,
            vec![(inner.object(), CapType::CNode), (ep, CapType::Endpoint)]
        );
        assert_eq!(f.space.free_slots(), free_before + 4);
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
        let mut log = Vec::new();
        f.space.delete(a_0, record(&mut log)).unwrap();
        assert_eq!(log.len(), 2);
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
        f.space.delete(own, |_, _| {}).unwrap();
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
        let mut log = Vec::new();
        f.space.delete(f.slot(0), record(&mut log)).unwrap();
        assert_eq!(
            log,
            vec![(made[0], CapType::Endpoint), (f.untyped, CapType::Untyped)]
        );
        f.check();
    }
}
