//! A small capability space set up the way the kernel sets up init's, for
//! the unit and property tests.
use super::object::UntypedBody;
use super::{CNodeId, CapError, Capability, Memory, ObjectId, Objects, SlotId};
use abi::cap::{CapType, Rights};
use arch::object_memory::kind;

/// Where object memory starts: the kernel's pool of pages for its own
/// records comes first (`POOL_BYTES`), the test Untyped right after.
pub(crate) const MEMORY_BASE: u64 = 0x8000_0000 - POOL_BYTES;
/// The pool for records the kernel makes (boot objects, the root CNode).
pub(crate) const POOL_BYTES: u64 = 1 << 20;
/// Where the test Untyped starts.
pub(crate) const UNTYPED_BASE: u64 = 0x8000_0000;
/// Its size: 64 KiB.
pub(crate) const UNTYPED_BYTES: u64 = 64 * 1024;
/// A slot number no CNode has (past the end of object memory).
pub(crate) const UNOWNED_SLOT: SlotId = SlotId(u32::MAX - 1);
/// The root CNode's radix.
pub(crate) const ROOT_RADIX: u8 = 4;

/// A root CNode (16 slots) whose own capability is in its slot 1, and an
/// Untyped (64 KiB unless asked otherwise) whose capability is in slot 0.
pub(crate) struct Fixture {
    pub(crate) space: Objects,
    pub(crate) root: CNodeId,
    pub(crate) untyped: ObjectId,
    /// The root CNode's slot 0.
    pub(crate) first_slot: SlotId,
    /// The next free page of the pool.
    next_page: u64,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture::with_untyped(UNTYPED_BYTES)
    }

    /// The same with an Untyped of `untyped_bytes`.
    pub(crate) fn with_untyped(untyped_bytes: u64) -> Fixture {
        let mut space = Objects::new();
        let bytes = (POOL_BYTES + untyped_bytes) as usize;
        assert!(space.install_memory(Memory::on_heap(MEMORY_BASE, bytes)));
        let mut f = Fixture {
            space,
            root: CNodeId(ObjectId(0)),
            untyped: ObjectId(0),
            first_slot: SlotId(0),
            // Page 0 holds granule 0, which holds no record.
            next_page: MEMORY_BASE + 4096,
        };
        f.root = f.create_cnode(ROOT_RADIX).unwrap();
        f.first_slot = f.space.slot(f.root, 0).unwrap();
        let root_cap = Capability::new(CapType::CNode, Rights::ALL, f.root.object());
        let root_slot = f.slot(1);
        f.space.install_original(root_slot, root_cap).unwrap();
        f.untyped = f
            .create_object(CapType::Untyped, UNTYPED_BASE, untyped_bytes)
            .unwrap();
        let untyped_cap = Capability::new(CapType::Untyped, Rights::ALL, f.untyped);
        let untyped_slot = f.slot(0);
        f.space.install_original(untyped_slot, untyped_cap).unwrap();
        f
    }

    /// Room on the pool for a record of `bytes`.
    pub(crate) fn pool(&mut self, bytes: u64) -> u64 {
        let at = self.next_page;
        self.next_page += bytes.div_ceil(4096) * 4096;
        assert!(self.next_page <= UNTYPED_BASE, "the test pool is full");
        at
    }

    /// A kernel-made object, its record on the pool.
    pub(crate) fn create_object(
        &mut self,
        cap_type: CapType,
        phys: u64,
        size: u64,
    ) -> Result<ObjectId, CapError> {
        let bytes = Objects::record_bytes(cap_type, 0).unwrap_or(64);
        let at = self.pool(bytes);
        self.space.create_object(cap_type, phys, size, at)
    }

    /// A kernel-made CNode, its record on the pool.
    pub(crate) fn create_cnode(&mut self, radix: u8) -> Result<CNodeId, CapError> {
        let bytes = Objects::record_bytes(CapType::CNode, radix).unwrap_or(64);
        let at = self.pool(bytes);
        self.space.create_cnode(radix, at)
    }

    /// Slot `index` of the root CNode.
    pub(crate) fn slot(&self, index: u64) -> SlotId {
        self.space.slot(self.root, index).unwrap()
    }

    /// A kernel-made endpoint whose original is in root slot `index`.
    pub(crate) fn endpoint(&mut self, index: u64) -> ObjectId {
        let id = self.create_object(CapType::Endpoint, 0, 0).unwrap();
        let cap = Capability::new(CapType::Endpoint, Rights::ALL, id);
        self.space.install_original(self.slot(index), cap).unwrap();
        id
    }

    /// The Untyped's body.
    pub(crate) fn untyped_body(&self, id: ObjectId) -> UntypedBody {
        *self.space.get::<kind::Untyped>(id).expect("an Untyped")
    }

    /// Takes every destroyed object off the list, oldest first, and frees
    /// the records (as the kernel does at the end of an entry).
    pub(crate) fn settle(&mut self) -> Vec<(ObjectId, CapType)> {
        let mut destroyed = Vec::new();
        while let Some(entry) = self.space.take_destroyed() {
            destroyed.push(entry);
        }
        self.space.reap(|_| {});
        destroyed
    }

    /// The invariants hold.
    pub(crate) fn check(&self) {
        if let Err(violation) = self.space.check_invariants() {
            panic!("invariant violated: {violation:?}");
        }
    }
}
