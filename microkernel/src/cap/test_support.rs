//! A small capability space set up the way the kernel sets up init's, for
//! the unit and property tests.
use super::{CNodeId, CapSpace, Capability, ObjectId, SlotId};
use abi::cap::{CapType, Rights};

/// Slots in the test space.
pub(crate) const SLOTS: usize = 64;
/// Objects in the test space.
pub(crate) const OBJECTS: usize = 32;
/// Where the test Untyped starts.
pub(crate) const UNTYPED_BASE: u64 = 0x8000_0000;
/// Its size: 64 KiB.
pub(crate) const UNTYPED_BYTES: u64 = 64 * 1024;
/// A slot no CNode owns (the root CNode has pool slots 0..16).
pub(crate) const UNOWNED_SLOT: SlotId = SlotId(40);
/// The root CNode's radix.
pub(crate) const ROOT_RADIX: u8 = 4;

/// The test space.
pub(crate) type SmallSpace = CapSpace<SLOTS, OBJECTS>;

/// A root CNode (16 slots) whose own capability is in its slot 1, and an
/// Untyped (64 KiB unless asked otherwise) whose capability is in slot 0.
pub(crate) struct Fixture {
    pub(crate) space: SmallSpace,
    pub(crate) root: CNodeId,
    pub(crate) untyped: ObjectId,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture::with_untyped(UNTYPED_BYTES)
    }

    /// The same with an Untyped of `untyped_bytes`.
    pub(crate) fn with_untyped(untyped_bytes: u64) -> Fixture {
        let mut space = SmallSpace::new();
        let root = space.create_cnode(ROOT_RADIX).unwrap();
        let root_cap = Capability::new(CapType::CNode, Rights::ALL, root.object());
        let root_slot = space.slot(root, 1).unwrap();
        space.install_original(root_slot, root_cap).unwrap();
        let untyped = space
            .create_object(CapType::Untyped, UNTYPED_BASE, untyped_bytes)
            .unwrap();
        let untyped_cap = Capability::new(CapType::Untyped, Rights::ALL, untyped);
        let untyped_slot = space.slot(root, 0).unwrap();
        space.install_original(untyped_slot, untyped_cap).unwrap();
        Fixture {
            space,
            root,
            untyped,
        }
    }

    /// Slot `index` of the root CNode.
    pub(crate) fn slot(&self, index: u64) -> SlotId {
        self.space.slot(self.root, index).unwrap()
    }

    /// A boot-made endpoint whose original is in root slot `index`.
    pub(crate) fn endpoint(&mut self, index: u64) -> ObjectId {
        let id = self.space.create_object(CapType::Endpoint, 0, 0).unwrap();
        let cap = Capability::new(CapType::Endpoint, Rights::ALL, id);
        self.space.install_original(self.slot(index), cap).unwrap();
        id
    }

    /// The invariants hold.
    pub(crate) fn check(&self) {
        if let Err(violation) = self.space.check_invariants() {
            panic!("invariant violated: {violation:?}");
        }
    }
}
