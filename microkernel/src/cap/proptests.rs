//! Property tests: random sequences of capability operations on a small
//! space, with every invariant checked after every step.
//!
//! Besides `check_invariants`, each step checks the property its
//! operation promises: a failed operation changes nothing; after delete or
//! revoke of X no descendant of X remains; a mint never widens rights; a
//! copy never changes the badge; the destroyed list names exactly the
//! objects that went, once each; revoking the only capability to an
//! Untyped leaves both its ends home and nothing carved from it alive.
//! Each sequence ends by deleting everything, which must free every
//! record but the kernel-made ones never installed.
use super::test_support::Fixture;
use super::{CNodeId, CapError, ObjectId, ObjectState, Objects, SlotId};
use abi::cap::{CapType, Rights};
use arch::object_memory::kind;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// Types retype is asked for (including ones it refuses).
const RETYPE_TYPES: [CapType; 10] = [
    CapType::Untyped,
    CapType::CNode,
    CapType::Tcb,
    CapType::Endpoint,
    CapType::Notification,
    CapType::Reply,
    CapType::Frame,
    CapType::VSpace,
    CapType::IrqHandler,
    CapType::Filter,
];

/// One step. Slots and CNodes are chosen by selectors reduced modulo the
/// candidates at the time the step runs, so every step names something
/// that exists (or, for destinations, often something occupied).
#[derive(Clone, Debug)]
enum Op {
    Retype {
        untyped: u8,
        kind: usize,
        param: u8,
        cnode: u8,
        index: u64,
        count: u64,
    },
    Copy {
        src: u8,
        dst: u8,
    },
    Mint {
        src: u8,
        dst: u8,
        rights: u64,
        badge: Option<u64>,
    },
    Move {
        src: u8,
        dst: u8,
    },
    Delete {
        slot: u8,
    },
    Revoke {
        slot: u8,
    },
    BootObject {
        kind: u8,
        dst: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u8>(), 0..RETYPE_TYPES.len(), any::<u8>(), any::<u8>(), 0..16u64, 1..5u64)
            .prop_map(|(untyped, kind, param, cnode, index, count)| Op::Retype {
                untyped, kind, param, cnode, index, count
            }),
        3 => (any::<u8>(), any::<u8>()).prop_map(|(src, dst)| Op::Copy { src, dst }),
        3 => (any::<u8>(), any::<u8>(), 0..64u64, prop::option::of(0..4u64))
            .prop_map(|(src, dst, rights, badge)| Op::Mint { src, dst, rights, badge }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(src, dst)| Op::Move { src, dst }),
        2 => any::<u8>().prop_map(|slot| Op::Delete { slot }),
        2 => any::<u8>().prop_map(|slot| Op::Revoke { slot }),
        1 => (0..3u8, any::<u8>()).prop_map(|(kind, dst)| Op::BootObject { kind, dst }),
    ]
}

fn pick<T: Copy>(items: &[T], selector: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[selector as usize % items.len()])
}

fn owned_slots(space: &Objects) -> Vec<SlotId> {
    space
        .iter()
        .filter_map(|id| space.memory().elements::<kind::CNode>(id.granule()))
        .flat_map(|(first, count)| (first..first + count as u64).map(|i| SlotId(i as u32)))
        .collect()
}

fn full_slots(space: &Objects) -> Vec<SlotId> {
    owned_slots(space)
        .into_iter()
        .filter(|s| space.lookup(*s).is_ok())
        .collect()
}

fn empty_slots(space: &Objects) -> Vec<SlotId> {
    owned_slots(space)
        .into_iter()
        .filter(|s| space.lookup(*s).is_err())
        .collect()
}

fn live_objects(space: &Objects) -> BTreeSet<ObjectId> {
    space
        .iter()
        .filter(|id| space.object(*id).is_some_and(|h| h.live()))
        .collect()
}

fn descendants(space: &Objects, of: SlotId) -> Vec<SlotId> {
    full_slots(space)
        .into_iter()
        .filter(|s| space.is_descendant(*s, of))
        .collect()
}

/// Runs `op`, checking the properties it promises.
fn step(f: &mut Fixture, op: &Op) -> Result<(), TestCaseError> {
    let before = f.space.snapshot();
    let live_before = live_objects(&f.space);
    let full = full_slots(&f.space);
    let owned = owned_slots(&f.space);
    let result: Result<(), CapError> = match *op {
        Op::Retype {
            untyped,
            kind,
            param,
            cnode,
            index,
            count,
        } => {
            let space = &mut f.space;
            let cnodes: Vec<CNodeId> = space
                .iter()
                .filter(|id| {
                    space
                        .object(*id)
                        .is_some_and(|h| h.live() && h.cap_type == CapType::CNode)
                })
                .map(CNodeId)
                .collect();
            // Mostly an Untyped, sometimes anything (WrongCapabilityType).
            let untypeds: Vec<SlotId> = full
                .iter()
                .copied()
                .filter(|s| space.lookup(*s).map(|c| c.cap_type()) == Ok(CapType::Untyped))
                .collect();
            let sources = if untyped % 4 == 0 || untypeds.is_empty() {
                &full
            } else {
                &untypeds
            };
            let (Some(src), Some(cnode)) = (pick(sources, untyped / 4), pick(&cnodes, cnode))
            else {
                return Ok(());
            };
            // Half the time the first empty slot at or after `index`
            // (else many steps would only find occupied slots).
            let index = if index % 2 == 0 {
                (index..16)
                    .find(|i| {
                        space
                            .slot(cnode, *i)
                            .is_ok_and(|s| space.lookup(s).is_err())
                    })
                    .unwrap_or(index)
            } else {
                index
            };
            let new_type = RETYPE_TYPES[kind];
            let size_param = match new_type {
                CapType::Untyped => 12 + u64::from(param % 3),
                CapType::CNode => 1 + u64::from(param % 3),
                _ => u64::from(param == u8::MAX),
            };
            space
                .retype(src, new_type, size_param, cnode, index, count)
                .map(|made| {
                    assert_eq!(made.len() as u64, count);
                })
        }
        Op::Copy { src, dst } => {
            let space = &mut f.space;
            let (Some(src), Some(dst)) = (pick(&full, src), pick(&owned, dst)) else {
                return Ok(());
            };
            let r = space.copy(src, dst);
            if r.is_ok() {
                prop_assert_eq!(space.lookup(dst), space.lookup(src), "copy changed the cap");
            }
            r
        }
        Op::Mint {
            src,
            dst,
            rights,
            badge,
        } => {
            let space = &mut f.space;
            let (Some(src), Some(dst)) = (pick(&full, src), pick(&owned, dst)) else {
                return Ok(());
            };
            let rights = Rights::from_raw(rights).unwrap_or(Rights::NONE);
            let r = space.mint(src, dst, rights, badge);
            if r.is_ok() {
                let (parent, child) = (space.lookup(src)?, space.lookup(dst)?);
                prop_assert!(child.rights().is_subset_of(parent.rights()));
                prop_assert_eq!(space.parent(dst), Some(src));
                if parent.is_badged() {
                    prop_assert_eq!(child.badge(), parent.badge());
                }
            }
            r
        }
        Op::Move { src, dst } => {
            let space = &mut f.space;
            let (Some(src), Some(dst)) = (pick(&full, src), pick(&owned, dst)) else {
                return Ok(());
            };
            let cap = space.lookup(src)?;
            let r = space.move_cap(src, dst);
            if r.is_ok() {
                prop_assert_eq!(space.lookup(dst), Ok(cap));
                prop_assert_eq!(space.lookup(src), Err(CapError::InvalidCapability));
            }
            r
        }
        Op::Delete { slot } => {
            let space = &mut f.space;
            let Some(slot) = pick(&full, slot) else {
                return Ok(());
            };
            let gone = descendants(space, slot);
            let r = space.delete(slot);
            prop_assert!(space.lookup(slot).is_err(), "the capability stayed");
            for d in gone {
                prop_assert!(space.lookup(d).is_err(), "a descendant outlived delete");
            }
            r
        }
        Op::Revoke { slot } => {
            let Some(slot) = pick(&full, slot) else {
                return Ok(());
            };
            let cap = f.space.lookup(slot)?;
            let gone = descendants(&f.space, slot);
            let r = f.space.revoke(slot);
            for d in gone {
                prop_assert!(f.space.lookup(d).is_err(), "a descendant outlived revoke");
            }
            let destroyed = settle(f)?;
            // The capability stays, unless a CNode only its descendants
            // kept alive held it or one of its ancestors: destroying that
            // CNode deletes those (with their descendants) too.
            let cnode_died = destroyed.iter().any(|(_, t)| *t == CapType::CNode);
            match f.space.lookup(slot) {
                Ok(now) => prop_assert_eq!(now, cap, "revoke changed the capability"),
                Err(_) => prop_assert!(cnode_died, "revoke removed the capability"),
            }
            // An Untyped is reclaimed when the revoked capability is, after
            // it, the Untyped's only one. Not when the revoked one went
            // with a CNode that died and another capability to the
            // Untyped is left: what was retyped through that one lives.
            let untyped = f.space.object(cap.object()).copied();
            let still_there = f.space.lookup(slot) == Ok(cap);
            if still_there
                && untyped.is_some_and(|h| h.cap_type == CapType::Untyped && h.cap_count == 1)
            {
                let body = f.untyped_body(cap.object());
                let reclaimed =
                    body.bottom == 0 && body.top == body.home && body.live_children == 0;
                prop_assert!(reclaimed, "revoke left the Untyped's ends out");
                let child_alive = f.space.iter().any(|c| {
                    f.space
                        .object(c)
                        .is_some_and(|h| h.live() && h.parent() == Some(cap.object()))
                });
                prop_assert!(!child_alive, "revoke left a carved object alive");
            }
            return finish(f, op, r, before, live_before, destroyed);
        }
        Op::BootObject { kind, dst } => {
            let Some(dst) = pick(&empty_slots(&f.space), dst) else {
                return Ok(());
            };
            let made = match kind {
                0 => f.create_object(CapType::Endpoint, 0, 0),
                1 => f.create_object(CapType::Notification, 0, 0),
                _ => f.create_cnode(1).map(|c| c.object()),
            };
            match made {
                Ok(id) => {
                    let t = f.space.object(id).map_or(CapType::Null, |h| h.cap_type);
                    let cap = super::Capability::new(t, Rights::ALL, id);
                    f.space.install_original(dst, cap)
                }
                Err(e) => Err(e),
            }
        }
    };
    let destroyed = settle(f)?;
    finish(f, op, result, before, live_before, destroyed)
}

/// Takes the destroyed objects (oldest first, each once) and frees their
/// records, as the kernel does at the end of an entry.
fn settle(f: &mut Fixture) -> Result<Vec<(ObjectId, CapType)>, TestCaseError> {
    let destroyed = f.settle();
    let unique: BTreeSet<ObjectId> = destroyed.iter().map(|(id, _)| *id).collect();
    prop_assert_eq!(
        unique.len(),
        destroyed.len(),
        "an object was destroyed twice"
    );
    Ok(destroyed)
}

/// The checks every step ends with: a failed operation changed nothing
/// (but a creation's record on the pool, which the fixture keeps), the
/// destroyed list named exactly the objects that went, every invariant.
fn finish(
    f: &Fixture,
    op: &Op,
    result: Result<(), CapError>,
    before: super::Snapshot,
    live_before: BTreeSet<ObjectId>,
    destroyed: Vec<(ObjectId, CapType)>,
) -> Result<(), TestCaseError> {
    if result.is_err() && !matches!(op, Op::BootObject { .. }) {
        prop_assert!(
            f.space.snapshot() == before,
            "{:?} failed with {:?} but changed state",
            op,
            result
        );
    }
    let live_after = live_objects(&f.space);
    let went: BTreeSet<ObjectId> = live_before.difference(&live_after).copied().collect();
    let reported: BTreeSet<ObjectId> = destroyed.iter().map(|(id, _)| *id).collect();
    prop_assert_eq!(
        went,
        reported,
        "the destroyed list missed or invented an object"
    );
    if let Err(violation) = f.space.check_invariants() {
        return Err(TestCaseError::fail(format!("after {op:?}: {violation:?}")));
    }
    Ok(())
}

/// Deletes every capability; nothing may be left but objects the kernel
/// made and never gave a capability to.
fn delete_everything(f: &mut Fixture) -> Result<(), TestCaseError> {
    while let Some(slot) = full_slots(&f.space).first().copied() {
        prop_assert_eq!(f.space.delete(slot), Ok(()));
        settle(f)?;
        prop_assert_eq!(f.space.check_invariants(), Ok(()));
    }
    let lingering = f
        .space
        .iter()
        .filter(|id| {
            f.space
                .object(*id)
                .is_some_and(|h| h.state != ObjectState::Created)
        })
        .count();
    prop_assert_eq!(lingering, 0, "a record outlived every capability");
    Ok(())
}

/// Revokes the fixture Untyped's original, if it is still there: every
/// byte carved from it must come back.
fn reclaim_untyped(f: &mut Fixture) -> Result<(), TestCaseError> {
    // Object ids are reused: the id must still name an Untyped.
    let original = full_slots(&f.space).into_iter().find(|s| {
        let cap = f.space.lookup(*s).map(|c| (c.cap_type(), c.object()));
        f.space.parent(*s).is_none() && cap == Ok((CapType::Untyped, f.untyped))
    });
    let Some(original) = original else {
        return Ok(());
    };
    f.space.revoke(original)?;
    settle(f)?;
    prop_assert_eq!(f.space.check_invariants(), Ok(()));
    // The original may have lived in a CNode carved from the Untyped
    // itself; then revoke destroyed that CNode and the Untyped with it.
    let reclaimed = match f.space.get::<kind::Untyped>(f.untyped) {
        None => true,
        Some(body) => body.bottom == 0 && body.top == body.home && body.live_children == 0,
    };
    prop_assert!(reclaimed, "the Untyped kept memory after revoke");
    Ok(())
}

impl From<CapError> for TestCaseError {
    fn from(e: CapError) -> Self {
        TestCaseError::fail(format!("unexpected {e:?}"))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn random_operations_keep_every_invariant(ops in prop::collection::vec(op(), 1..64)) {
        // Small enough that retype runs out now and then.
        let mut f = Fixture::with_untyped(16 * 1024);
        for op in &ops {
            step(&mut f, op)?;
        }
        reclaim_untyped(&mut f)?;
        delete_everything(&mut f)?;
    }
}
