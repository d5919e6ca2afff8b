//! Reply objects: one saved answer to one `Call`.
//!
//! A Reply object is made by `ReplySave` from the reply a server owes, not
//! by retype: it takes one entry of the object table and no memory (the
//! kernel keeps which caller it answers in a fixed table of its own,
//! indexed by the object). Its only capability is an original, a root of
//! the derivation tree with no children: it cannot be copied or minted
//! (`InvalidArgument`), only moved, so deleting that one capability (by
//! hand, after a use, or with the CNode holding it) destroys the object,
//! and the kernel then tells the caller no answer will come.
use super::{CapError, CapSpace, Capability, ObjectHeader, ObjectId, ObjectState, SlotId};
use abi::cap::{CapType, Rights};

/// The rights of a Reply capability: `write`, which `Send` needs.
pub const REPLY_RIGHTS: Rights = Rights::WRITE;

impl<const SLOTS: usize, const OBJECTS: usize> CapSpace<SLOTS, OBJECTS> {
    /// Makes a Reply object and puts its capability into empty `slot`,
    /// as a root of the derivation tree. `InvalidCapability` for a slot
    /// no CNode owns, `SlotOccupied`, `OutOfResources` with the object
    /// table full; nothing changes on failure.
    pub fn create_reply(&mut self, slot: SlotId) -> Result<ObjectId, CapError> {
        self.check_empty(slot)?;
        let id = self
            .objects
            .allocate(ObjectHeader {
                cap_type: CapType::Reply,
                state: ObjectState::Created,
                ..ObjectHeader::FREE
            })
            .ok_or(CapError::OutOfResources)?;
        self.store(slot, Capability::new(CapType::Reply, REPLY_RIGHTS, id));
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fixture, UNOWNED_SLOT};
    use super::*;

    #[test]
    fn a_reply_capability_is_a_childless_root_with_write_only() {
        let mut f = Fixture::new();
        let reply = f.space.create_reply(f.slot(5)).unwrap();
        let cap = f.space.lookup(f.slot(5)).unwrap();
        assert_eq!(
            (cap.cap_type(), cap.rights(), cap.object()),
            (CapType::Reply, Rights::WRITE, reply)
        );
        assert_eq!(f.space.parent(f.slot(5)), None);
        assert_eq!(f.space.object(reply).unwrap().cap_count, 1);
        f.check();
    }

    #[test]
    fn a_bad_target_changes_nothing() {
        let mut f = Fixture::new();
        let before = f.space.clone();
        assert_eq!(f.space.create_reply(f.slot(0)), Err(CapError::SlotOccupied));
        assert_eq!(
            f.space.create_reply(UNOWNED_SLOT),
            Err(CapError::InvalidCapability)
        );
        assert!(f.space == before);
        while f.space.free_objects() > 0 {
            f.space.create_object(CapType::Endpoint, 0, 0).unwrap();
        }
        assert_eq!(
            f.space.create_reply(f.slot(5)),
            Err(CapError::OutOfResources)
        );
        assert_eq!(f.space.lookup(f.slot(5)), Err(CapError::InvalidCapability));
    }

    #[test]
    fn it_moves_but_is_never_copied_or_minted() {
        let mut f = Fixture::new();
        let reply = f.space.create_reply(f.slot(5)).unwrap();
        let before = f.space.clone();
        assert_eq!(
            f.space.copy(f.slot(5), f.slot(6)),
            Err(CapError::InvalidArgument)
        );
        assert_eq!(
            f.space.mint(f.slot(5), f.slot(6), Rights::WRITE, None),
            Err(CapError::InvalidArgument)
        );
        assert!(f.space == before);
        f.space.move_cap(f.slot(5), f.slot(6)).unwrap();
        assert_eq!(f.space.lookup(f.slot(6)).unwrap().object(), reply);
        f.check();
    }

    #[test]
    fn deleting_it_destroys_the_object() {
        let mut f = Fixture::new();
        let reply = f.space.create_reply(f.slot(5)).unwrap();
        let mut destroyed = Vec::new();
        f.space
            .delete(f.slot(5), |id, t| destroyed.push((id, t)))
            .unwrap();
        assert_eq!(destroyed, vec![(reply, CapType::Reply)]);
        assert!(f.space.object(reply).is_none());
        f.check();
    }
}
