//! Capabilities: the slot pool, the object table, the derivation tree and
//! Untyped memory, as one value the kernel keeps in a static.
//!
//! The scheme (`docs/capabilities.md` says it at length):
//!
//! 1. **One CNode per CSpace.** A thread's CSpace is a single CNode and a
//!    capability pointer is an index into it, so a lookup is one bounds
//!    check and one array read. CNodes are blocks of `2^radix` slots in a
//!    global pool.
//! 2. **Every capability has a place in the derivation tree.** An object's
//!    first capability is a root (made at boot) or a child of the Untyped
//!    capability it was retyped from; copies and mints are children of
//!    their source. Delete removes a capability's descendants before it;
//!    revoke removes only the descendants.
//! 3. **The last capability destroys the object.** The kernel hears of it
//!    through `on_destroy` and wakes whoever waited on the object; a
//!    destroyed CNode deletes what its slots hold; when the last object
//!    carved from an Untyped goes, the Untyped's watermark returns to 0.
//! 4. **Check first, then change.** Every operation validates everything
//!    before it writes anything, so a failed operation changes nothing.
//! 5. **Bounded, iterative, no heap.** Fixed arrays sized by const
//!    generics; deletion walks the tree with an explicit cursor and a
//!    work list threaded through the object table, never by recursion.

mod cdt;
mod delete;
mod derive;
pub mod error;
pub mod ids;
mod invariants;
pub mod object;
pub mod object_size;
mod reply;
mod retype;
mod slot_pool;
pub mod word;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod test_support;

pub use error::CapError;
pub use ids::{CNodeId, ObjectId, SlotId};
pub use invariants::InvariantViolation;
pub use object::{ObjectBody, ObjectHeader, ObjectState};
pub use reply::REPLY_RIGHTS;
pub use retype::{RetypePlan, RetypedObjects, MAX_RETYPE_COUNT};
pub use word::{CapWord, Capability};

use abi::cap::{CapType, Rights};
use cdt::Cdt;
use object::ObjectTable;
use object_size::{MAX_CNODE_RADIX, MIN_CNODE_RADIX, PAGE_SIZE};
use slot_pool::SlotPool;

/// All capabilities and the objects they name: `SLOTS` slots shared by all
/// CNodes, `OBJECTS` object headers.
// Tests compare snapshots to show that a failed operation changed nothing.
#[cfg_attr(test, derive(Clone, PartialEq, Eq))]
pub struct CapSpace<const SLOTS: usize, const OBJECTS: usize> {
    caps: [Capability; SLOTS],
    cdt: Cdt<SLOTS>,
    pool: SlotPool<SLOTS>,
    objects: ObjectTable<OBJECTS>,
    /// The last epoch given out (see `ObjectHeader::epoch`).
    epochs: u64,
}

impl<const SLOTS: usize, const OBJECTS: usize> Default for CapSpace<SLOTS, OBJECTS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const SLOTS: usize, const OBJECTS: usize> CapSpace<SLOTS, OBJECTS> {
    /// An empty space: no CNode, no object.
    pub const fn new() -> Self {
        const {
            assert!(
                OBJECTS <= word::MAX_OBJECTS,
                "a capability names 2^24 objects"
            );
            assert!(SLOTS < u32::MAX as usize, "slot links are 32 bits");
        }
        CapSpace {
            caps: [Capability::NULL; SLOTS],
            cdt: Cdt::new(),
            pool: SlotPool::new(),
            objects: ObjectTable::new(),
            epochs: 0,
        }
    }

    /// A new epoch, never given out before.
    fn next_epoch(&mut self) -> u64 {
        self.epochs += 1;
        self.epochs
    }

    /// Makes an object the kernel owns at boot (Untyped RAM, init's TCB,
    /// VSpace and IPC buffer, the console, IRQ handlers). Its original
    /// capability goes in with `install_original`.
    ///
    /// An Untyped needs a non-zero, page-aligned multiple of pages; a
    /// Frame or VSpace exactly one aligned page; every other type no
    /// memory (`phys` and `size_bytes` 0). Memory may not overlap any
    /// other boot object's. CNodes come from `create_cnode`.
    pub fn create_object(
        &mut self,
        cap_type: CapType,
        phys: u64,
        size_bytes: u64,
    ) -> Result<ObjectId, CapError> {
        let page_aligned = phys.is_multiple_of(PAGE_SIZE) && size_bytes.is_multiple_of(PAGE_SIZE);
        let shape_ok = match cap_type {
            CapType::Untyped => page_aligned && size_bytes > 0,
            CapType::Frame | CapType::VSpace => page_aligned && size_bytes == PAGE_SIZE,
            CapType::Tcb
            | CapType::Endpoint
            | CapType::Notification
            | CapType::IrqHandler
            | CapType::DebugConsole => phys == 0 && size_bytes == 0,
            // CNodes come from `create_cnode`, filters only from retype,
            // Reply objects only from `create_reply`.
            CapType::Null | CapType::CNode | CapType::Filter | CapType::Reply => false,
        };
        let end = phys.checked_add(size_bytes);
        if !shape_ok || end.is_none() {
            return Err(CapError::InvalidArgument);
        }
        let overlaps = self.objects.iter().any(|(_, h)| {
            h.state != ObjectState::Free
                && h.parent_untyped.is_none()
                && h.size_bytes > 0
                && size_bytes > 0
                && h.phys < phys + size_bytes
                && phys < h.phys_end()
        });
        if overlaps {
            return Err(CapError::InvalidArgument);
        }
        let body = match cap_type {
            CapType::Untyped => ObjectBody::Untyped {
                watermark: 0,
                live_children: 0,
            },
            _ => ObjectBody::Plain,
        };
        let epoch = self.next_epoch();
        self.objects
            .allocate(ObjectHeader {
                cap_type,
                state: ObjectState::Created,
                size_bytes,
                phys,
                body,
                epoch,
                ..ObjectHeader::FREE
            })
            .ok_or(CapError::OutOfResources)
    }

    /// Makes a CNode of `2^radix` empty slots from the kernel's own pool
    /// (for init's CSpace at boot; user space makes CNodes by retype). Its
    /// original capability goes in with `install_original`.
    pub fn create_cnode(&mut self, radix: u8) -> Result<CNodeId, CapError> {
        if !(MIN_CNODE_RADIX..=MAX_CNODE_RADIX).contains(&radix) {
            return Err(CapError::InvalidArgument);
        }
        if self.objects.free_count() == 0 {
            return Err(CapError::OutOfResources);
        }
        let header = self.new_cnode_header(radix, 0, 0, None)?;
        let id = self
            .objects
            .allocate(header)
            .ok_or(CapError::OutOfResources)?;
        Ok(CNodeId(id))
    }

    /// A header for a new CNode, with its block of slots taken from the
    /// pool (the caller stores the header, or releases the block).
    fn new_cnode_header(
        &mut self,
        radix: u8,
        phys: u64,
        size_bytes: u64,
        parent_untyped: Option<ObjectId>,
    ) -> Result<ObjectHeader, CapError> {
        let first_slot = self.pool.allocate(radix).ok_or(CapError::OutOfResources)?;
        Ok(ObjectHeader {
            cap_type: CapType::CNode,
            state: ObjectState::Created,
            size_bytes,
            phys,
            parent_untyped,
            body: ObjectBody::CNode {
                first_slot: first_slot as u32,
                radix,
            },
            ..ObjectHeader::FREE
        })
    }

    /// The first pool slot and the radix of a live CNode.
    pub fn cnode_slots(&self, cnode: CNodeId) -> Result<(SlotId, u8), CapError> {
        match self.objects.get(cnode.object()) {
            Some(h) if h.live() => match h.body {
                ObjectBody::CNode { first_slot, radix } => Ok((SlotId(first_slot), radix)),
                _ => Err(CapError::InvalidCapability),
            },
            _ => Err(CapError::InvalidCapability),
        }
    }

    /// The slot a capability pointer `index` names in `cnode`. An index
    /// outside the CNode is `InvalidCapability`, as for an empty slot.
    pub fn slot(&self, cnode: CNodeId, index: u64) -> Result<SlotId, CapError> {
        let (first, radix) = self.cnode_slots(cnode)?;
        if index >= 1 << radix {
            return Err(CapError::InvalidCapability);
        }
        Ok(SlotId(first.0 + index as u32))
    }

    /// The capability in `slot`; an empty slot is `InvalidCapability`.
    pub fn lookup(&self, slot: SlotId) -> Result<Capability, CapError> {
        match self.caps.get(slot.index()) {
            Some(cap) if !cap.is_null() => Ok(*cap),
            _ => Err(CapError::InvalidCapability),
        }
    }

    /// What `slot` holds, empty or not (`None` past the table): for a
    /// caller that tests the type itself, which rules out an empty slot.
    #[inline(always)]
    pub fn slot_content(&self, slot: SlotId) -> Option<Capability> {
        self.caps.get(slot.index()).copied()
    }

    /// The capability in `slot`, if it is of `cap_type` and holds every
    /// right in `required`.
    pub fn lookup_typed(
        &self,
        slot: SlotId,
        cap_type: CapType,
        required: Rights,
    ) -> Result<Capability, CapError> {
        let cap = self.lookup(slot)?;
        if cap.cap_type() != cap_type {
            return Err(CapError::WrongCapabilityType);
        }
        if !required.is_subset_of(cap.rights()) {
            return Err(CapError::MissingRights);
        }
        Ok(cap)
    }

    /// The header of object `id`, unless the entry is free.
    pub fn object(&self, id: ObjectId) -> Option<&ObjectHeader> {
        self.objects
            .get(id)
            .filter(|h| h.state != ObjectState::Free)
    }

    /// The slot the capability in `slot` was derived from (`None` for an
    /// original, or an empty slot).
    pub fn parent(&self, slot: SlotId) -> Option<SlotId> {
        if slot.index() < SLOTS {
            self.cdt.parent(slot)
        } else {
            None
        }
    }

    /// Was the capability in `slot` derived, directly or not, from the one
    /// in `ancestor`?
    pub fn is_descendant(&self, slot: SlotId, ancestor: SlotId) -> bool {
        slot.index() < SLOTS && ancestor.index() < SLOTS && self.cdt.is_descendant(slot, ancestor)
    }

    /// Slots no CNode owns.
    pub fn free_slots(&self) -> usize {
        self.pool.free_count()
    }

    /// Unused object-table entries.
    pub fn free_objects(&self) -> usize {
        self.objects.free_count()
    }

    /// `slot` exists and belongs to a CNode.
    fn check_slot(&self, slot: SlotId) -> Result<(), CapError> {
        if slot.index() < SLOTS && self.pool.is_allocated(slot.index()) {
            Ok(())
        } else {
            Err(CapError::InvalidCapability)
        }
    }

    /// `slot` exists, belongs to a CNode and holds nothing
    /// (`InvalidCapability`, `SlotOccupied` otherwise).
    pub fn check_empty(&self, slot: SlotId) -> Result<(), CapError> {
        self.check_slot(slot)?;
        if self.caps[slot.index()].is_null() {
            Ok(())
        } else {
            Err(CapError::SlotOccupied)
        }
    }

    /// Writes `cap` into empty `slot` and counts it on its object (the
    /// caller has validated both and links the slot into the tree).
    fn store(&mut self, slot: SlotId, cap: Capability) {
        self.caps[slot.index()] = cap;
        if let Some(h) = self.objects.get_mut(cap.object()) {
            h.cap_count += 1;
            h.state = ObjectState::Live;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{Fixture, UNTYPED_BASE, UNTYPED_BYTES};
    use super::*;

    /// The size the kernel uses, built at compile time.
    static KERNEL_SIZED: CapSpace<4096, 1024> = CapSpace::new();

    #[test]
    fn the_kernel_sized_space_is_a_modest_static() {
        let bytes = core::mem::size_of_val(&KERNEL_SIZED);
        assert!(bytes <= 200 * 1024, "{bytes} bytes");
        assert_eq!(KERNEL_SIZED.free_slots(), 4096);
        assert_eq!(KERNEL_SIZED.free_objects(), 1024);
        assert_eq!(KERNEL_SIZED.check_invariants(), Ok(()));
    }

    #[test]
    fn lookup_checks_type_then_rights() {
        let mut f = Fixture::new();
        f.endpoint(2);
        f.space
            .mint(f.slot(2), f.slot(3), Rights::WRITE, None)
            .unwrap();
        let send = f
            .space
            .lookup_typed(f.slot(3), CapType::Endpoint, Rights::WRITE);
        assert_eq!(send.map(|c| c.rights()), Ok(Rights::WRITE));
        assert_eq!(
            f.space
                .lookup_typed(f.slot(3), CapType::Endpoint, Rights::READ),
            Err(CapError::MissingRights)
        );
        assert_eq!(
            f.space
                .lookup_typed(f.slot(3), CapType::Notification, Rights::NONE),
            Err(CapError::WrongCapabilityType)
        );
        assert_eq!(
            f.space
                .lookup_typed(f.slot(4), CapType::Endpoint, Rights::NONE),
            Err(CapError::InvalidCapability)
        );
        assert_eq!(
            f.space.lookup(SlotId(u32::MAX)),
            Err(CapError::InvalidCapability)
        );
    }

    #[test]
    fn capability_pointers_are_indexes_into_one_cnode() {
        let f = Fixture::new();
        let (first, radix) = f.space.cnode_slots(f.root).unwrap();
        assert_eq!(radix, 4);
        assert_eq!(f.space.slot(f.root, 15), Ok(SlotId(first.0 + 15)));
        assert_eq!(f.space.slot(f.root, 16), Err(CapError::InvalidCapability));
        assert_eq!(
            f.space.slot(f.root, u64::MAX),
            Err(CapError::InvalidCapability)
        );
        assert_eq!(
            f.space.slot(CNodeId(f.untyped), 0),
            Err(CapError::InvalidCapability),
            "an Untyped is no CNode"
        );
        assert_eq!(
            f.space.slot(CNodeId(ObjectId(31)), 0),
            Err(CapError::InvalidCapability)
        );
    }

    #[test]
    fn boot_objects_are_checked() {
        let mut f = Fixture::new();
        let bad = Err(CapError::InvalidArgument);
        let mut create = |t, phys, size| f.space.create_object(t, phys, size);
        assert_eq!(create(CapType::Untyped, 0x1000, 0), bad, "empty");
        assert_eq!(create(CapType::Untyped, 0x1800, 0x1000), bad, "misaligned");
        assert_eq!(create(CapType::Untyped, 0x1000, 0x1800), bad, "not pages");
        assert_eq!(
            create(CapType::Untyped, u64::MAX - 0xfff, 0x2000),
            bad,
            "wraps"
        );
        assert_eq!(create(CapType::Frame, 0x1000, 0x2000), bad, "two pages");
        assert_eq!(
            create(CapType::Endpoint, 0x1000, 0),
            bad,
            "memory for an endpoint"
        );
        assert_eq!(
            create(CapType::CNode, 0, 0),
            bad,
            "CNodes come from create_cnode"
        );
        assert_eq!(create(CapType::Null, 0, 0), bad);
        let inside = UNTYPED_BASE + UNTYPED_BYTES - 0x1000;
        assert_eq!(
            create(CapType::Frame, inside, 0x1000),
            bad,
            "overlaps the Untyped"
        );
        let after = UNTYPED_BASE + UNTYPED_BYTES;
        assert!(create(CapType::Frame, after, 0x1000).is_ok());
        assert_eq!(f.space.create_cnode(0), Err(CapError::InvalidArgument));
        assert_eq!(f.space.create_cnode(11), Err(CapError::InvalidArgument));
        f.check();
    }

    #[test]
    fn tables_run_out_with_out_of_resources() {
        let mut f = Fixture::new();
        while f.space.free_objects() > 0 {
            f.space.create_object(CapType::Endpoint, 0, 0).unwrap();
        }
        assert_eq!(
            f.space.create_object(CapType::Endpoint, 0, 0),
            Err(CapError::OutOfResources)
        );
        assert_eq!(f.space.create_cnode(1), Err(CapError::OutOfResources));
        let mut g = Fixture::new();
        g.space.create_cnode(5).unwrap();
        g.space.create_cnode(4).unwrap();
        assert_eq!(g.space.create_cnode(1), Err(CapError::OutOfResources));
        assert_eq!(g.space.free_slots(), 0);
    }
}
