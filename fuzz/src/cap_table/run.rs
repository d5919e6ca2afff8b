//! Running one operation and checking what it promises.

use super::op::{size_param, Op, Selector};
use super::snapshot::{descendants, full_slots, live_objects, owned_slots, slots_of_type};
use super::snapshot::{object_ids, Snapshot};
use super::{check_invariants, Space, OBJECTS, SLOTS, UNTYPED_BASE};
use abi::cap::{CapType, Rights};
use microkernel::cap::{CNodeId, CapError, Capability, ObjectBody, ObjectId, ObjectState, SlotId};
use std::collections::BTreeSet;

/// Runs `op` on `space` and checks, besides the operation's own promise:
/// a failure changed nothing, `on_destroy` reported exactly the objects
/// that went (each once), every invariant holds.
pub(super) fn step(space: &mut Space, op: Op) {
    let mut before = Snapshot::of(space);
    let live_before = live_objects(space);
    let mut destroyed = Vec::new();
    let result = execute(space, op, &mut before, &mut destroyed);
    if result.is_err() {
        assert!(
            Snapshot::of(space) == before,
            "{op:?} failed with {result:?} but changed state"
        );
    }
    let live_after = live_objects(space);
    let went: BTreeSet<ObjectId> = live_before.difference(&live_after).copied().collect();
    let reported: BTreeSet<ObjectId> = destroyed.iter().copied().collect();
    assert_eq!(
        reported.len(),
        destroyed.len(),
        "{op:?} destroyed an object twice"
    );
    assert_eq!(
        went, reported,
        "{op:?}: on_destroy missed or invented an object"
    );
    check_invariants(space, &op);
}

/// Carries `op` out. `before` is the state a failure must leave; an
/// operation that changes state before its fallible part (making a boot
/// object, then installing its capability) updates it.
fn execute(
    space: &mut Space,
    op: Op,
    before: &mut Snapshot,
    destroyed: &mut Vec<ObjectId>,
) -> Result<(), CapError> {
    let full = full_slots(space);
    let owned = owned_slots(space);
    let unowned = unowned_slot(space);
    let pick = |candidates: &[SlotId], selector| pick(candidates, unowned, selector);
    match op {
        Op::BootObject {
            kind,
            shape,
            rights,
            dst,
        } => {
            let dst = pick(&owned, dst);
            let id = make_boot_object(space, kind, shape)?;
            *before = Snapshot::of(space);
            let cap_type = space.object(id).map_or(CapType::Null, |h| h.cap_type);
            let cap = Capability::new(cap_type, rights_from(rights), id);
            space.install_original(dst, cap)?;
            assert_eq!(space.lookup(dst), Ok(cap));
            assert_eq!(space.parent(dst), None, "an original with a parent");
            Ok(())
        }
        Op::Forge {
            object,
            cap_type,
            rights,
            dst,
        } => {
            let id = ObjectId(u32::from(object) % (OBJECTS as u32 + 2));
            let cap_type = CapType::ALL[usize::from(cap_type) % CapType::ALL.len()];
            let was = space.object(id).copied();
            let cap = Capability::new(cap_type, rights_from(rights), id);
            space.install_original(pick(&owned, dst), cap)?;
            let fresh = was.is_some_and(|h| h.state == ObjectState::Created);
            assert!(fresh, "an original installed for {was:?}");
            assert_eq!(was.map(|h| h.cap_type), Some(cap_type));
            Ok(())
        }
        Op::Copy { src, dst } => {
            let (src, dst) = (pick(&full, src), pick(&owned, dst));
            space.copy(src, dst)?;
            assert_eq!(space.lookup(dst), space.lookup(src), "copy changed the cap");
            assert_eq!(space.parent(dst), Some(src));
            Ok(())
        }
        Op::Mint {
            src,
            dst,
            rights,
            badge,
        } => {
            let (src, dst) = (pick(&full, src), pick(&owned, dst));
            let rights = rights_from(rights);
            let badge = (badge != 0).then(|| u64::from(badge - 1));
            space.mint(src, dst, rights, badge)?;
            check_mint(space, src, dst, rights, badge);
            Ok(())
        }
        Op::Move { src, dst } => {
            let (src, dst) = (pick(&full, src), pick(&owned, dst));
            let cap = space.lookup(src);
            let parent = space.parent(src);
            let children: Vec<SlotId> = full
                .iter()
                .copied()
                .filter(|s| space.parent(*s) == Some(src))
                .collect();
            space.move_cap(src, dst)?;
            assert_eq!(space.lookup(dst), cap);
            assert_eq!(space.lookup(src), Err(CapError::InvalidCapability));
            assert_eq!(space.parent(dst), parent, "move changed the parent");
            for child in children {
                assert_eq!(space.parent(child), Some(dst), "move lost a child");
            }
            Ok(())
        }
        Op::Delete { slot } => {
            let slot = pick(&full, slot);
            let gone = descendants(space, slot);
            let result = space.delete(slot, |id, _| destroyed.push(id));
            assert!(space.lookup(slot).is_err(), "delete left the capability");
            for d in gone {
                assert!(
                    space.lookup(d).is_err(),
                    "{d:?} outlived deleting its ancestor"
                );
            }
            result
        }
        Op::Revoke { slot } => {
            let slot = pick(&full, slot);
            let cap = space.lookup(slot);
            let gone = descendants(space, slot);
            let cnodes = live_cnodes(space);
            let result = space.revoke(slot, |id, _| destroyed.push(id));
            for d in gone {
                assert!(
                    space.lookup(d).is_err(),
                    "{d:?} outlived revoking its ancestor"
                );
            }
            let cnode_died = destroyed.iter().any(|id| cnodes.contains(id));
            check_revoked(space, slot, cap, cnode_died);
            result
        }
        Op::Retype {
            untyped,
            new_type,
            param,
            cnode,
            index,
            count,
        } => {
            let untypeds = slots_of_type(space, CapType::Untyped);
            let src = pick(
                if untyped.is_multiple_of(2) {
                    &untypeds
                } else {
                    &full
                },
                untyped / 2,
            );
            let new_type = CapType::ALL[usize::from(new_type) % CapType::ALL.len()];
            let size = size_param(new_type, param);
            let cnode = pick_cnode(space, cnode);
            let index = dst_index(space, cnode, index);
            let count = if count == 0xff {
                65
            } else {
                u64::from(count % 6)
            };
            let untyped_id = space.lookup(src).map(|c| c.object());
            let made = space.retype(src, new_type, size, cnode, index, count)?;
            assert_eq!(made.len() as u64, count);
            for (i, id) in made.iter().enumerate() {
                let dst = space.slot(cnode, index + i as u64);
                let want = Capability::new(new_type, Rights::ALL, *id);
                assert_eq!(dst.and_then(|d| space.lookup(d)), Ok(want));
                assert_eq!(dst.map(|d| space.parent(d)), Ok(Some(src)));
                let carved_from = space.object(*id).and_then(|h| h.parent_untyped);
                assert_eq!(Ok(carved_from), untyped_id.map(Some));
            }
            Ok(())
        }
    }
}

/// A boot object of `kind` (see `Op::BootObject`), shaped by `shape`.
fn make_boot_object(space: &mut Space, kind: u8, shape: u8) -> Result<ObjectId, CapError> {
    const PAGE: u64 = 4096;
    // Pages around the boot Untyped (whose first four pages overlap it);
    // 0xff: a misaligned address, which must be refused.
    let phys = if shape == 0xff {
        UNTYPED_BASE + 0x123
    } else {
        UNTYPED_BASE + u64::from(shape % 32) * PAGE
    };
    match kind {
        0 => space.create_object(CapType::Endpoint, 0, 0),
        1 => space.create_object(CapType::Notification, 0, 0),
        2 => space.create_cnode(shape % 4).map(|c| c.object()),
        3 => space.create_object(CapType::Untyped, phys, (1 + u64::from(shape >> 6)) * PAGE),
        _ => space.create_object(CapType::Frame, phys, PAGE),
    }
}

/// The low six bits: always defined rights.
fn rights_from(raw: u8) -> Rights {
    Rights::from_raw(u64::from(raw & 0x3f)).unwrap_or(Rights::NONE)
}

/// A minted capability has exactly the rights asked for (a subset of its
/// parent's), is the child of its source, and carries the badge asked for
/// or else its source's.
fn check_mint(space: &Space, src: SlotId, dst: SlotId, rights: Rights, badge: Option<u64>) {
    let (parent, child) = match (space.lookup(src), space.lookup(dst)) {
        (Ok(p), Ok(c)) => (p, c),
        other => panic!("mint succeeded but left {other:?}"),
    };
    assert_eq!(child.rights(), rights);
    assert!(
        child.rights().is_subset_of(parent.rights()),
        "mint widened rights"
    );
    assert_eq!(space.parent(dst), Some(src));
    assert_eq!(
        (child.cap_type(), child.object()),
        (parent.cap_type(), parent.object())
    );
    match badge {
        Some(b) => {
            assert!(!parent.is_badged(), "a badged capability was badged again");
            assert!(matches!(
                parent.cap_type(),
                CapType::Endpoint | CapType::Notification
            ));
            assert_eq!((child.badge(), child.is_badged()), (b, true));
        }
        None => assert_eq!(
            (child.badge(), child.is_badged()),
            (parent.badge(), parent.is_badged())
        ),
    }
}

/// After revoking the capability that was `cap` in `slot`: it stays (unless
/// a CNode only its descendants kept alive held it or an ancestor), and if
/// it is the only capability to an Untyped, all of that memory is back.
fn check_revoked(space: &Space, slot: SlotId, cap: Result<Capability, CapError>, cnode_died: bool) {
    let Ok(cap) = cap else {
        return;
    };
    match space.lookup(slot) {
        Ok(now) => assert_eq!(now, cap, "revoke changed the capability"),
        Err(_) => assert!(cnode_died, "revoke removed the capability itself"),
    }
    let Some(header) = space.object(cap.object()) else {
        return;
    };
    if header.cap_type == CapType::Untyped && header.cap_count == 1 {
        let reclaimed = matches!(
            header.body,
            ObjectBody::Untyped {
                watermark: 0,
                live_children: 0
            }
        );
        assert!(
            reclaimed,
            "revoke left the Untyped's memory in use: {header:?}"
        );
        let child_alive = object_ids().any(|id| {
            space
                .object(id)
                .is_some_and(|h| h.live() && h.parent_untyped == Some(cap.object()))
        });
        assert!(
            !child_alive,
            "revoke left an object carved from the Untyped"
        );
    }
}

/// Candidate `selector` of `candidates`; the value past them names a stray
/// slot: one past the pool (even selectors) or `unowned`, a pool slot no
/// CNode owns (odd selectors).
fn pick(candidates: &[SlotId], unowned: SlotId, selector: Selector) -> SlotId {
    let i = usize::from(selector) % (candidates.len() + 1);
    match candidates.get(i) {
        Some(slot) => *slot,
        None if selector.is_multiple_of(2) => SlotId(SLOTS as u32 + u32::from(selector)),
        None => unowned,
    }
}

/// The first pool slot no CNode owns (not even one made at boot whose
/// original is not installed yet), or the last possible id if all are.
fn unowned_slot(space: &Space) -> SlotId {
    let owned: Vec<(u32, u8)> = object_ids()
        .filter_map(|id| space.object(id))
        .filter_map(|h| match h.body {
            ObjectBody::CNode { first_slot, radix } => Some((first_slot, radix)),
            _ => None,
        })
        .collect();
    (0..SLOTS as u32)
        .find(|s| {
            !owned
                .iter()
                .any(|(first, radix)| (*first..*first + (1 << radix)).contains(s))
        })
        .map_or(SlotId(u32::MAX), SlotId)
}

/// A CNode with a capability, by `selector`; the value past them names
/// any object-table entry (mostly not a CNode, which must be refused).
fn pick_cnode(space: &Space, selector: Selector) -> CNodeId {
    let cnodes = live_cnodes(space);
    let i = usize::from(selector) % (cnodes.len() + 1);
    CNodeId(
        cnodes
            .get(i)
            .copied()
            .unwrap_or(ObjectId(u32::from(selector) % (OBJECTS as u32 + 2))),
    )
}

/// The CNodes that have a capability.
fn live_cnodes(space: &Space) -> Vec<ObjectId> {
    object_ids()
        .filter(|id| {
            space
                .object(*id)
                .is_some_and(|h| h.state == ObjectState::Live && h.cap_type == CapType::CNode)
        })
        .collect()
}

/// The first destination index: 240 and above far out of range; else
/// `index % 16`, moved (for even values) to the first empty slot at or
/// after it, so that retypes find room.
fn dst_index(space: &Space, cnode: CNodeId, index: u8) -> u64 {
    if index >= 240 {
        return u64::MAX - u64::from(255 - index);
    }
    let start = u64::from(index % 16);
    if index % 2 == 1 {
        return start;
    }
    (start..16)
        .find(|i| {
            space
                .slot(cnode, *i)
                .is_ok_and(|s| space.lookup(s).is_err())
        })
        .unwrap_or(start)
}
