//! Putting capabilities into slots: an object's original, copies, mints
//! and moves. Each checks every argument before it writes anything.
use super::{CapError, Capability, ObjectState, Objects, SlotId};
use abi::cap::{CapType, Rights};

impl Objects {
    /// Installs the first capability to an object made by `create_object`
    /// or `create_cnode` into empty `slot`, as a root of the derivation
    /// tree. An object that already has (or had) a capability is refused:
    /// every later capability must be derived from this one.
    pub fn install_original(&mut self, slot: SlotId, cap: Capability) -> Result<(), CapError> {
        self.check_empty(slot)?;
        let header = self.object(cap.object()).ok_or(CapError::InvalidArgument)?;
        if header.state != ObjectState::Created || cap.is_badged() {
            return Err(CapError::InvalidArgument);
        }
        if header.cap_type != cap.cap_type() {
            return Err(CapError::WrongCapabilityType);
        }
        self.store(slot, cap);
        Ok(())
    }

    /// Installs the first capability to an IrqHandler made by
    /// `create_object` into empty `slot`, as a child of the IrqControl
    /// capability in `control` that issued it (so revoking or deleting
    /// that capability takes the handler back), as seL4 derives its IRQ
    /// handler capabilities from IRQ control.
    pub fn install_issued(
        &mut self,
        control: SlotId,
        slot: SlotId,
        cap: Capability,
    ) -> Result<(), CapError> {
        if !self.lookup(control)?.has_type(CapType::IrqControl)
            || cap.cap_type() != CapType::IrqHandler
        {
            return Err(CapError::WrongCapabilityType);
        }
        self.install_original(slot, cap)?;
        self.add_child(control, slot);
        Ok(())
    }

    /// Copies the capability in `src` into empty `dst`: same rights, same
    /// badge, a child of `src` in the derivation tree.
    /// A Reply capability is never copied (`InvalidArgument`): it stands
    /// for the one answer its object may hold.
    pub fn copy(&mut self, src: SlotId, dst: SlotId) -> Result<(), CapError> {
        let cap = self.lookup(src)?;
        self.check_empty(dst)?;
        if cap.cap_type() == CapType::Reply {
            return Err(CapError::InvalidArgument);
        }
        self.store(dst, cap);
        self.add_child(src, dst);
        Ok(())
    }

    /// Derives from `src` into empty `dst` a capability with `rights` and,
    /// if given, `badge`; a child of `src` in the derivation tree.
    ///
    /// `rights` must be a subset of the source's (`MissingRights`
    /// otherwise: a mint never widens and never silently narrows what was
    /// asked). A badge can only be set on an unbadged Endpoint or
    /// Notification capability (`InvalidArgument` otherwise); without one
    /// the source's badge is kept. A Reply capability is never minted
    /// (`InvalidArgument`), as it is never copied.
    pub fn mint(
        &mut self,
        src: SlotId,
        dst: SlotId,
        rights: Rights,
        badge: Option<u64>,
    ) -> Result<(), CapError> {
        let cap = self.lookup(src)?;
        self.check_empty(dst)?;
        if cap.cap_type() == CapType::Reply {
            return Err(CapError::InvalidArgument);
        }
        if !rights.is_subset_of(cap.rights()) {
            return Err(CapError::MissingRights);
        }
        let badgeable = matches!(cap.cap_type(), CapType::Endpoint | CapType::Notification);
        let minted = match badge {
            None => cap.with_rights(rights),
            Some(badge) if badgeable && !cap.is_badged() => {
                cap.with_rights(rights).with_badge(badge)
            }
            Some(_) => return Err(CapError::InvalidArgument),
        };
        self.store(dst, minted);
        self.add_child(src, dst);
        Ok(())
    }

    /// Moves the capability in `src` to empty `dst`. It keeps its place in
    /// the derivation tree: its parent, its siblings and its children.
    pub fn move_cap(&mut self, src: SlotId, dst: SlotId) -> Result<(), CapError> {
        let cap = self.lookup(src)?;
        self.check_empty(dst)?;
        if let Some(entry) = self.slot_entry_mut(dst) {
            entry.cap = cap;
        }
        if let Some(entry) = self.slot_entry_mut(src) {
            entry.cap = Capability::NULL;
        }
        self.transplant(src, dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Fixture, UNOWNED_SLOT};
    use super::*;

    #[test]
    fn install_original_needs_a_fresh_object_of_the_same_type() {
        let mut f = Fixture::new();
        let ep = f.create_object(CapType::Endpoint, 0, 0).unwrap();
        let wrong = Capability::new(CapType::Notification, Rights::ALL, ep);
        assert_eq!(
            f.space.install_original(f.slot(2), wrong),
            Err(CapError::WrongCapabilityType)
        );
        let cap = Capability::new(CapType::Endpoint, Rights::ALL, ep);
        assert_eq!(
            f.space.install_original(f.slot(0), cap),
            Err(CapError::SlotOccupied)
        );
        f.space.install_original(f.slot(2), cap).unwrap();
        assert_eq!(
            f.space.install_original(f.slot(3), cap),
            Err(CapError::InvalidArgument),
            "a second original"
        );
        let nowhere = Capability::new(CapType::Endpoint, Rights::ALL, crate::cap::ObjectId(99));
        assert_eq!(
            f.space.install_original(f.slot(3), nowhere),
            Err(CapError::InvalidArgument)
        );
        f.check();
    }

    #[test]
    fn copy_makes_an_identical_child() {
        let mut f = Fixture::new();
        let ep = f.endpoint(2);
        f.space
            .mint(f.slot(2), f.slot(3), Rights::WRITE, Some(7))
            .unwrap();
        f.space.copy(f.slot(3), f.slot(4)).unwrap();
        assert_eq!(f.space.lookup(f.slot(4)), f.space.lookup(f.slot(3)));
        assert_eq!(f.space.parent(f.slot(4)), Some(f.slot(3)));
        assert_eq!(f.space.object(ep).unwrap().cap_count, 3);
        f.check();
    }

    #[test]
    fn copy_errors_change_nothing() {
        let mut f = Fixture::new();
        f.endpoint(2);
        assert_eq!(
            f.space.copy(f.slot(5), f.slot(6)),
            Err(CapError::InvalidCapability)
        );
        assert_eq!(
            f.space.copy(f.slot(2), f.slot(0)),
            Err(CapError::SlotOccupied)
        );
        assert_eq!(
            f.space.copy(f.slot(2), f.slot(2)),
            Err(CapError::SlotOccupied)
        );
        assert_eq!(
            f.space.copy(f.slot(2), UNOWNED_SLOT),
            Err(CapError::InvalidCapability),
            "a slot no CNode owns"
        );
        assert_eq!(f.space.lookup(f.slot(6)), Err(CapError::InvalidCapability));
        f.check();
    }

    #[test]
    fn mint_narrows_rights_and_badges_once() {
        let mut f = Fixture::new();
        f.endpoint(2);
        f.space
            .mint(f.slot(2), f.slot(3), Rights::READ_WRITE, Some(0))
            .unwrap();
        let minted = f.space.lookup(f.slot(3)).unwrap();
        assert!(minted.is_badged());
        assert_eq!((minted.badge(), minted.rights()), (0, Rights::READ_WRITE));
        assert_eq!(
            f.space.mint(f.slot(3), f.slot(4), Rights::READ, Some(1)),
            Err(CapError::InvalidArgument),
            "a badge of 0 is still a badge"
        );
        assert_eq!(
            f.space.mint(f.slot(3), f.slot(4), Rights::ALL, None),
            Err(CapError::MissingRights)
        );
        f.space
            .mint(f.slot(3), f.slot(4), Rights::READ, None)
            .unwrap();
        let narrower = f.space.lookup(f.slot(4)).unwrap();
        assert_eq!((narrower.badge(), narrower.rights()), (0, Rights::READ));
        assert!(narrower.is_badged());
        f.check();
    }

    #[test]
    fn only_endpoints_and_notifications_take_badges() {
        let mut f = Fixture::new();
        assert_eq!(
            f.space.mint(f.slot(0), f.slot(3), Rights::READ, Some(5)),
            Err(CapError::InvalidArgument),
            "an Untyped"
        );
        let n = f.create_object(CapType::Notification, 0, 0).unwrap();
        let cap = Capability::new(CapType::Notification, Rights::ALL, n);
        f.space.install_original(f.slot(2), cap).unwrap();
        f.space
            .mint(f.slot(2), f.slot(3), Rights::WRITE, Some(0b100))
            .unwrap();
        assert_eq!(f.space.lookup(f.slot(3)).unwrap().badge(), 0b100);
        f.check();
    }

    #[test]
    fn move_keeps_the_tree_and_the_count() {
        let mut f = Fixture::new();
        let ep = f.endpoint(2);
        f.space.copy(f.slot(2), f.slot(3)).unwrap();
        f.space.copy(f.slot(3), f.slot(4)).unwrap();
        f.space.move_cap(f.slot(3), f.slot(7)).unwrap();
        assert_eq!(f.space.lookup(f.slot(3)), Err(CapError::InvalidCapability));
        assert_eq!(f.space.parent(f.slot(7)), Some(f.slot(2)));
        assert_eq!(f.space.parent(f.slot(4)), Some(f.slot(7)));
        assert_eq!(f.space.object(ep).unwrap().cap_count, 3);
        assert_eq!(
            f.space.move_cap(f.slot(3), f.slot(8)),
            Err(CapError::InvalidCapability)
        );
        assert_eq!(
            f.space.move_cap(f.slot(7), f.slot(4)),
            Err(CapError::SlotOccupied)
        );
        f.check();
    }
}
