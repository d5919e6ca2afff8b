//! The capability table: random sequences of operations on a small
//! `CapSpace`, with every invariant checked after every step.

mod op;
mod run;
mod snapshot;

use super::bytes::Bytes;
use abi::cap::{CapType, Rights};
use microkernel::cap::{CapSpace, Capability, ObjectBody, ObjectId, ObjectState, SlotId};
use op::Op;
use snapshot::{full_slots, object_ids};

/// Slots in the fuzzed space (shared by every CNode).
const SLOTS: usize = 64;
/// Object-table entries in the fuzzed space.
const OBJECTS: usize = 32;
/// The space under test: small, so tables run out.
type Space = CapSpace<SLOTS, OBJECTS>;

/// Radix of the root CNode (16 slots: pool slots 0..16).
const ROOT_RADIX: u8 = 4;
/// Where the boot Untyped starts.
const UNTYPED_BASE: u64 = 0x8000_0000;
/// Its size: small enough that retype runs out now and then.
const UNTYPED_BYTES: u64 = 16 * 1024;
/// Most operations one input runs (bounds the time per input).
const MAX_STEPS: usize = 512;

/// Runs the operations `data` spells on a space set up like init's (a
/// root CNode whose capability is in its slot 1, an Untyped in slot 0).
///
/// Checks after every step: `check_invariants` (the derivation tree, the
/// object and slot accounting, Untyped memory); a failed operation changed
/// nothing visible; `on_destroy` reported exactly the objects that went,
/// each once; and the promise of the operation (see `run.rs`). At the end,
/// revoking the Untyped's original gives back all of its memory, and
/// deleting every capability gives back every slot and object entry.
pub fn cap_table_ops(data: &[u8]) {
    let mut space = Space::new();
    let untyped = set_up(&mut space);
    let mut input = Bytes::new(data);
    for _ in 0..MAX_STEPS {
        if input.is_empty() {
            break;
        }
        let op = Op::read(&mut input);
        run::step(&mut space, op);
    }
    reclaim_untyped(&mut space, untyped);
    delete_everything(&mut space);
}

/// The root CNode and the Untyped; returns the Untyped's id.
fn set_up(space: &mut Space) -> ObjectId {
    let set_up = (|| {
        let root = space.create_cnode(ROOT_RADIX)?;
        let root_cap = Capability::new(CapType::CNode, Rights::ALL, root.object());
        space.install_original(space.slot(root, 1)?, root_cap)?;
        let untyped = space.create_object(CapType::Untyped, UNTYPED_BASE, UNTYPED_BYTES)?;
        let untyped_cap = Capability::new(CapType::Untyped, Rights::ALL, untyped);
        space.install_original(space.slot(root, 0)?, untyped_cap)?;
        Ok::<_, microkernel::cap::CapError>(untyped)
    })();
    match set_up {
        Ok(untyped) => untyped,
        Err(e) => panic!("setting up the space failed: {e:?}"),
    }
}

fn check_invariants(space: &Space, after: &dyn core::fmt::Debug) {
    if let Err(violation) = space.check_invariants() {
        panic!("invariant violated after {after:?}: {violation:?}");
    }
}

/// Revokes the boot Untyped's original, if it is still there: every byte
/// carved from it must come back.
fn reclaim_untyped(space: &mut Space, untyped: ObjectId) {
    let original = full_slots(space).into_iter().find(|s| {
        let cap = space.lookup(*s).map(|c| (c.cap_type(), c.object()));
        space.parent(*s).is_none() && cap == Ok((CapType::Untyped, untyped))
    });
    let Some(original) = original else {
        return;
    };
    assert_eq!(space.revoke(original, |_, _| {}), Ok(()));
    check_invariants(space, &"revoking the Untyped");
    // The original may have lived in a CNode carved from the Untyped
    // itself; then the revoke destroyed that CNode and the Untyped with it.
    if let Some(header) = space.object(untyped) {
        let reclaimed = matches!(
            header.body,
            ObjectBody::Untyped {
                watermark: 0,
                live_children: 0
            }
        );
        assert!(
            reclaimed,
            "the Untyped kept memory after revoke: {header:?}"
        );
    }
}

/// Deletes every capability; every slot and object entry must come back
/// (objects made but never given a capability stay `Created`).
fn delete_everything(space: &mut Space) {
    while let Some(slot) = full_slots(space).first().copied() {
        assert_eq!(space.delete(slot, |_, _| {}), Ok(()));
        check_invariants(space, &"deleting everything");
        assert!(space.lookup(slot).is_err(), "delete left {slot:?} full");
    }
    let created = object_ids()
        .filter_map(|id| space.object(id))
        .inspect(|h| assert_eq!(h.state, ObjectState::Created, "{h:?} outlived delete"))
        .count();
    assert_eq!(
        space.free_objects() + created,
        OBJECTS,
        "an object entry leaked"
    );
    // A CNode made at boot keeps its slots until its original is installed
    // (and then deleted): one whose install failed still owns them.
    let held_by_created: usize = object_ids()
        .filter_map(|id| space.object(id))
        .map(|h| match h.body {
            ObjectBody::CNode { radix, .. } => 1 << radix,
            _ => 0,
        })
        .sum();
    assert_eq!(space.free_slots() + held_by_created, SLOTS, "a slot leaked");
    let stray = (0..SLOTS as u32).find(|i| space.lookup(SlotId(*i)).is_ok());
    assert_eq!(stray, None, "a capability outlived its CNode");
}
