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
            || !cap.has_type(CapType::IrqHandler)
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
        if cap.has_type(CapType::Reply) {
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
        if cap.has_type(CapType::Reply) {
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
mod tests;
