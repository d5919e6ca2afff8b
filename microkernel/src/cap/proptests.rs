//! Property tests: random sequences of capability operations on a small
//! space, with every invariant checked after every step.
//!
//! Besides `check_invariants`, each step checks the property its
//! operation promises: a failed operation changes nothing; after delete or
//! revoke of X no descendant of X remains; a mint never widens rights; a
//! copy never changes the badge; `on_destroy` reports exactly the objects
//! that went; revoking the only capability to an Untyped leaves its
//! watermark at 0 and nothing carved from it alive. Each sequence ends by
//! deleting everything, which must give back every slot and object.
use super::object::ObjectBody;
use super::test_support::{Fixture, SmallSpace, OBJECTS, SLOTS};
use super::{CNodeId, CapError, ObjectId, ObjectState, SlotId};
use abi::cap::{CapType, Rights};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// Types retype is asked for (including ones it refuses).
const RETYPE_TYPES: [CapType; 9] = [
    CapType::Untyped,
    CapType::CNode,
    CapType::Tcb,
    CapType::Endpoint,
    CapType::Notification,
    CapType::Reply,
    CapType::Frame,
    CapType::VSpace,
    CapType::IrqHandler,
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
    /// `ReplySave`'s part: a Reply capability into any owned slot.
    SaveReply {
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
        1 => any::<u8>().prop_map(|dst| Op::SaveReply { dst }),
    ]
}

fn pick<T: Copy>(items: &[T], selector: u8) -> Option<T> {
    (!items.is_empty()).then(|| items[selector as usize % items.len()])
}

fn owned_slots(space: &SmallSpace) -> Vec<SlotId> {
    (0..SLOTS)
        .filter(|i| space.pool.is_allocated(*i))
        .map(|i| SlotId(i as u32))
        .collect()
}

fn full_slots(space: &SmallSpace) -> Vec<SlotId> {
    owned_slots(space)
        .into_iter()
        .filter(|s| space.lookup(*s).is_ok())
        .collect()
}

fn empty_slots(space: &SmallSpace) -> Vec<SlotId> {
    owned_slots(space)
        .into_iter()
        .filter(|s| space.lookup(*s).is_err())
        .collect()
}

fn live_objects(space: &SmallSpace) -> BTreeSet<ObjectId> {
    space
        .objects
        .iter()
        .filter(|(_, h)| h.live())
        .map(|(id, _)| id)
        .collect()
}

fn descendants(space: &SmallSpace, of: SlotId) -> Vec<SlotId> {
    full_slots(space)
        .into_iter()
        .filter(|s| space.is_descendant(*s, of))
        .collect()
}

/// Runs `op`, checking the properties it promises.
fn step(space: &mut SmallSpace, op: &Op) -> Result<(), TestCaseError> {
    let before = space.clone();
    let live_before = live_objects(space);
    let full = full_slots(space);
    let owned = owned_slots(space);
    let mut destroyed = Vec::new();
    let result: Result<(), CapError> = match *op {
        Op::Retype {
            untyped,
            kind,
            param,
            cnode,
            index,
            count,
        } => {
            let cnodes: Vec<CNodeId> = space
                .objects
                .iter()
                .filter(|(_, h)| h.live() && h.cap_type == CapType::CNode)
                .map(|(id, _)| CNodeId(id))
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
            let Some(slot) = pick(&full, slot) else {
                return Ok(());
            };
            let gone = descendants(space, slot);
            let r = space.delete(slot, |id, _| destroyed.push(id));
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
            let cap = space.lookup(slot)?;
            let gone = descendants(space, slot);
            let r = space.revoke(slot, |id, _| destroyed.push(id));
            for d in gone {
                prop_assert!(space.lookup(d).is_err(), "a descendant outlived revoke");
            }
            // The capability stays, unless a CNode only its descendants
            // kept alive held it or one of its ancestors: destroying that
            // CNode deletes those (with their descendants) too.
            let cnode_died = destroyed
                .iter()
                .any(|id| before.object(*id).map(|h| h.cap_type) == Some(CapType::CNode));
            match space.lookup(slot) {
                Ok(now) => prop_assert_eq!(now, cap, "revoke changed the capability"),
                Err(_) => prop_assert!(cnode_died, "revoke removed the capability"),
            }
            let untyped = space.object(cap.object()).copied();
            if let Some(h) = untyped.filter(|h| h.cap_type == CapType::Untyped && h.cap_count == 1)
            {
                let reclaimed = matches!(
                    h.body,
                    ObjectBody::Untyped {
                        watermark: 0,
                        live_children: 0
                    }
                );
                prop_assert!(reclaimed, "revoke left the watermark up");
                let child_alive = space
                    .objects
                    .iter()
                    .any(|(_, c)| c.live() && c.parent_untyped == Some(cap.object()));
                prop_assert!(!child_alive, "revoke left a carved object alive");
            }
            r
        }
        Op::BootObject { kind, dst } => {
            let Some(dst) = pick(&empty_slots(space), dst) else {
                return Ok(());
            };
            let made = match kind {
                0 => space.create_object(CapType::Endpoint, 0, 0),
                1 => space.create_object(CapType::Notification, 0, 0),
                _ => space.create_cnode(1).map(|c| c.object()),
            };
            match made {
                Ok(id) => {
                    let t = space.object(id).map_or(CapType::Null, |h| h.cap_type);
                    let cap = super::Capability::new(t, Rights::ALL, id);
                    space.install_original(dst, cap)
                }
                Err(e) => Err(e),
            }
        }
        Op::SaveReply { dst } => {
            let Some(dst) = pick(&owned, dst) else {
                return Ok(());
            };
            let r = space.create_reply(dst);
            if let Ok(id) = r {
                let cap = space.lookup(dst)?;
                prop_assert_eq!((cap.cap_type(), cap.object()), (CapType::Reply, id));
                prop_assert_eq!(space.parent(dst), None);
            }
            r.map(|_| ())
        }
    };
    if result.is_err() {
        prop_assert!(
            *space == before,
            "{:?} failed with {:?} but changed state",
            op,
            result
        );
    }
    let live_after = live_objects(space);
    let went: BTreeSet<ObjectId> = live_before.difference(&live_after).copied().collect();
    let reported: BTreeSet<ObjectId> = destroyed.iter().copied().collect();
    prop_assert_eq!(
        reported.len(),
        destroyed.len(),
        "an object was destroyed twice"
    );
    prop_assert_eq!(went, reported, "on_destroy missed or invented an object");
    if let Err(violation) = space.check_invariants() {
        return Err(TestCaseError::fail(format!("after {op:?}: {violation:?}")));
    }
    Ok(())
}

/// Deletes every capability; the space must be empty again.
fn delete_everything(space: &mut SmallSpace) -> Result<(), TestCaseError> {
    while let Some(slot) = full_slots(space).first().copied() {
        prop_assert_eq!(space.delete(slot, |_, _| {}), Ok(()));
        prop_assert_eq!(space.check_invariants(), Ok(()));
    }
    let lingering = space
        .objects
        .iter()
        .filter(|(_, h)| h.state != ObjectState::Free && h.state != ObjectState::Created)
        .count();
    prop_assert_eq!(lingering, 0);
    let created = space
        .objects
        .iter()
        .filter(|(_, h)| h.state == ObjectState::Created)
        .count();
    prop_assert_eq!(
        space.free_objects() + created,
        OBJECTS,
        "an object entry leaked"
    );
    prop_assert_eq!(space.free_slots(), SLOTS, "a slot leaked");
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
    f.space.revoke(original, |_, _| {})?;
    prop_assert_eq!(f.space.check_invariants(), Ok(()));
    // The original may have lived in a CNode carved from the Untyped
    // itself; then revoke destroyed that CNode and the Untyped with it.
    let reclaimed = match f.space.object(f.untyped).map(|h| h.body) {
        None => true,
        Some(body) => matches!(
            body,
            ObjectBody::Untyped {
                watermark: 0,
                live_children: 0
            }
        ),
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
            step(&mut f.space, op)?;
        }
        reclaim_untyped(&mut f)?;
        delete_everything(&mut f.space)?;
    }
}
