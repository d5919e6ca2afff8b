//! Running one operation and checking what it promises.

use super::op::{size_param, Op, Selector};
use super::snapshot::{all_objects, descendants, full_slots, live_cnodes, live_objects};
use super::snapshot::{own_memory, owned_slots, record_granules, slots_of_type};
use super::snapshot::{Snapshot, SLOTS_PER_GRANULE};
use super::{check_invariants, Space, BOOT_RAM_PAGES, MEMORY_BASE, MEMORY_BYTES};
use super::{PAGE, UNTYPED_BASE};
use abi::cap::{CapType, Rights};
use arch::object_memory::kind;
use microkernel::cap::{CNodeId, CapError, Capability, ObjectId, ObjectState, Objects, SlotId};
use microkernel::cap::{RetypedObjects, UntypedBody};
use std::collections::BTreeMap;

/// An object `take_destroyed` named: its id, its type, its serial number.
pub(super) type Destroyed = (ObjectId, CapType, u64);

/// A check that must wait until the destroyed objects' records are freed
/// (an Untyped's ends come home only in `reap`).
#[derive(Clone, Copy)]
enum Pending {
    Nothing,
    /// `revoke` of `cap` in `slot` succeeded.
    Revoked {
        slot: SlotId,
        cap: Capability,
    },
}

/// Runs `op` on `space` and checks, besides the operation's own promise:
/// a failure changed nothing, `take_destroyed` named exactly the objects
/// that went (each once, with its type), `reap` freed them, every
/// invariant holds.
pub(super) fn step(space: &mut Space, op: Op) {
    let mut before = Snapshot::of(space);
    let live_before = live_objects(&space.objects);
    let result = execute(space, op, &mut before);
    let destroyed = settle(space);
    match result {
        Ok(Pending::Revoked { slot, cap }) => check_revoked(&space.objects, slot, cap, &destroyed),
        Ok(Pending::Nothing) => {}
        Err(e) => assert!(
            Snapshot::of(space) == before,
            "{op:?} failed with {e:?} but changed state"
        ),
    }
    let live_after = live_objects(&space.objects);
    let went: BTreeMap<ObjectId, (u64, CapType)> = live_before
        .into_iter()
        .filter(|(id, was)| live_after.get(id) != Some(was))
        .collect();
    let reported: BTreeMap<ObjectId, (u64, CapType)> = destroyed
        .iter()
        .map(|(id, cap_type, serial)| (*id, (*serial, *cap_type)))
        .collect();
    assert_eq!(
        reported.len(),
        destroyed.len(),
        "{op:?} destroyed an object twice"
    );
    assert_eq!(
        went, reported,
        "{op:?}: take_destroyed missed or invented an object"
    );
    check_invariants(&space.objects, &op);
}

/// What the kernel does when an entry ends: hears of each destroyed object
/// (`take_destroyed`, oldest first, once each), then frees the records
/// (`reap`) and puts the pool pages of its own objects' records back.
///
/// Checks: each object named was destroyed (its record still there to
/// read, of the type named, with no capability); `reap` frees exactly the
/// records of the objects named and gives back exactly the pool pages of
/// the kernel-made ones among them, each once.
pub(super) fn settle(space: &mut Space) -> Vec<Destroyed> {
    let objects = &mut space.objects;
    let mut destroyed = Vec::new();
    let mut pages_due = BTreeMap::new();
    while let Some((id, cap_type)) = objects.take_destroyed() {
        let header = objects.object(id).copied().filter(|h| {
            h.state == ObjectState::Retired && h.cap_type == cap_type && h.cap_count == 0
        });
        let Some(header) = header else {
            panic!(
                "take_destroyed named {cap_type:?} {id:?}, but its record is {:?}",
                objects.object(id)
            );
        };
        // A record the kernel made is on its pool, but for an Untyped's
        // made in place (in its own last granules).
        let in_place = objects
            .get::<kind::Untyped>(id)
            .is_some_and(|u| u.home < u.size);
        if header.parent().is_none() && !in_place {
            let at = objects.memory().phys_of(id.granule());
            let pages = space.pool.used.get(&at).copied();
            let Some(pages) = pages else {
                panic!("kernel-made {cap_type:?} {id:?} has its record off the pool, at {at:#x}");
            };
            pages_due.insert(at, pages);
        }
        destroyed.push((id, cap_type, header.serial));
    }
    assert!(!objects.has_destroyed(), "take_destroyed stopped early");
    let mut freed = Vec::new();
    objects.reap(|pages| freed.push(pages));
    assert!(!objects.has_retired(), "reap left a retired record");
    for (id, cap_type, _) in &destroyed {
        assert!(
            objects.object(*id).is_none(),
            "reap left the record of {cap_type:?} {id:?}"
        );
    }
    let given: BTreeMap<u64, u64> = freed.iter().map(|p| (p.phys, p.pages)).collect();
    assert_eq!(given.len(), freed.len(), "reap gave the same pages twice");
    assert_eq!(
        given, pages_due,
        "reap gave back other pages than the destroyed kernel objects' records"
    );
    for pages in freed {
        space.pool.reaped(pages);
    }
    destroyed
}

/// Carries `op` out. `before` is the state a failure must leave; an
/// operation that changes state before its fallible part (making a boot
/// object, then installing its capability) updates it.
fn execute(space: &mut Space, op: Op, before: &mut Snapshot) -> Result<Pending, CapError> {
    let full = full_slots(&space.objects);
    let owned = owned_slots(&space.objects);
    let strays = Strays::of(&space.objects);
    let pick = |candidates: &[SlotId], selector| strays.pick(candidates, selector);
    match op {
        Op::BootObject {
            kind,
            shape,
            rights,
            dst,
        } => {
            let dst = pick(&owned, dst);
            let id = make_boot_object(space, kind, shape, rights)?;
            *before = Snapshot::of(space);
            let objects = &mut space.objects;
            let cap_type = objects.object(id).map_or(CapType::Null, |h| h.cap_type);
            let cap = Capability::new(cap_type, rights_from(rights), id);
            let room = owned.contains(&dst) && objects.lookup(dst).is_err();
            let installed = objects.install_original(dst, cap);
            assert!(
                installed.is_ok() || !room,
                "the original of a fresh {cap_type:?} was refused an empty slot: {installed:?}"
            );
            installed?;
            assert_eq!(objects.lookup(dst), Ok(cap));
            assert_eq!(objects.parent(dst), None, "an original with a parent");
            let header = objects.object(id);
            assert!(
                header.is_some_and(|h| h.state == ObjectState::Live && h.cap_count == 1),
                "an installed original left {header:?}"
            );
            Ok(Pending::Nothing)
        }
        Op::Forge {
            object,
            cap_type,
            rights,
            dst,
        } => {
            let objects = &mut space.objects;
            let id = any_object(objects, object);
            let cap_type = CapType::ALL[usize::from(cap_type) % CapType::ALL.len()];
            let was = objects.object(id).copied();
            let cap = Capability::new(cap_type, rights_from(rights), id);
            objects.install_original(pick(&owned, dst), cap)?;
            let fresh = was.is_some_and(|h| h.state == ObjectState::Created);
            assert!(fresh, "an original installed for {was:?}");
            assert_eq!(was.map(|h| h.cap_type), Some(cap_type));
            Ok(Pending::Nothing)
        }
        Op::Copy { src, dst } => {
            let (src, dst) = (pick(&full, src), pick(&owned, dst));
            let objects = &mut space.objects;
            objects.copy(src, dst)?;
            let cap = objects.lookup(src);
            assert_eq!(objects.lookup(dst), cap, "copy changed the cap");
            assert_eq!(objects.parent(dst), Some(src));
            assert_ne!(
                cap.map(|c| c.cap_type()),
                Ok(CapType::Reply),
                "a Reply capability was copied"
            );
            Ok(Pending::Nothing)
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
            space.objects.mint(src, dst, rights, badge)?;
            check_mint(&space.objects, src, dst, rights, badge);
            Ok(Pending::Nothing)
        }
        Op::Move { src, dst } => {
            let (src, dst) = (pick(&full, src), pick(&owned, dst));
            let objects = &mut space.objects;
            let cap = objects.lookup(src);
            let parent = objects.parent(src);
            let children: Vec<SlotId> = full
                .iter()
                .copied()
                .filter(|s| objects.parent(*s) == Some(src))
                .collect();
            objects.move_cap(src, dst)?;
            assert_eq!(objects.lookup(dst), cap);
            assert_eq!(objects.lookup(src), Err(CapError::InvalidCapability));
            assert_eq!(objects.parent(dst), parent, "move changed the parent");
            for child in children {
                assert_eq!(objects.parent(child), Some(dst), "move lost a child");
            }
            Ok(Pending::Nothing)
        }
        Op::Delete { slot } => {
            let slot = pick(&full, slot);
            let objects = &mut space.objects;
            let gone = descendants(objects, slot);
            let result = objects.delete(slot);
            assert!(objects.lookup(slot).is_err(), "delete left the capability");
            for d in gone {
                assert!(
                    objects.lookup(d).is_err(),
                    "{d:?} outlived deleting its ancestor"
                );
            }
            result.map(|()| Pending::Nothing)
        }
        Op::Revoke { slot } => {
            let slot = pick(&full, slot);
            let objects = &mut space.objects;
            let cap = objects.lookup(slot);
            let gone = descendants(objects, slot);
            let result = objects.revoke(slot);
            for d in gone {
                assert!(
                    objects.lookup(d).is_err(),
                    "{d:?} outlived revoking its ancestor"
                );
            }
            result?;
            let cap = cap.expect("revoke succeeded on an empty slot");
            Ok(Pending::Revoked { slot, cap })
        }
        Op::Retype {
            untyped,
            new_type,
            param,
            cnode,
            index,
            count,
        } => {
            let objects = &mut space.objects;
            let untypeds = slots_of_type(objects, CapType::Untyped);
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
            let cnode = pick_cnode(objects, cnode);
            let index = dst_index(objects, cnode, index);
            let count = if count == 0xff {
                65
            } else {
                u64::from(count % 6)
            };
            let untyped_id = objects.lookup(src).map(|c| c.object());
            let was = untyped_id
                .ok()
                .and_then(|id| objects.get::<kind::Untyped>(id).copied());
            let made = objects.retype(src, new_type, size, cnode, index, count)?;
            let Some(was) = was else {
                panic!("retype succeeded from {src:?}, which holds no Untyped");
            };
            let retyped = Retyped {
                src,
                new_type,
                cnode,
                index,
                count,
            };
            check_retyped(objects, &retyped, &made, &was);
            Ok(Pending::Nothing)
        }
    }
}

/// A boot object of `kind` (see `Op::BootObject`), shaped by `shape`, its
/// record where `rights` says, made as the kernel makes its own objects.
///
/// The kernel makes an Untyped or a Frame only over RAM that it owns and
/// that no other object it made has: the capability layer no longer checks
/// that (it did before records moved into object memory: a boot object
/// overlapping another's memory was `InvalidArgument`); it is its caller's
/// promise, so such a request is refused here, before the layer sees it,
/// with the same error. A request the layer must grant (a valid shape,
/// free memory, a record on the pool) must be granted, and one it must
/// refuse (a misaligned range, CNode radix 0, a record where none can go)
/// refused, changing nothing.
fn make_boot_object(
    space: &mut Space,
    kind: u8,
    shape: u8,
    rights: u8,
) -> Result<ObjectId, CapError> {
    // Pages of the boot RAM (whose first four are the boot Untyped's);
    // 0xff: a misaligned address, which must be refused.
    let phys = if shape == 0xff {
        UNTYPED_BASE + 0x123
    } else {
        UNTYPED_BASE + u64::from(shape % 32) * PAGE
    };
    let (cap_type, phys, size, radix) = match kind {
        0 => (CapType::Endpoint, 0, 0, 0),
        1 => (CapType::Notification, 0, 0, 0),
        2 => (CapType::CNode, 0, 0, shape % 4),
        3 => (
            CapType::Untyped,
            phys,
            (1 + u64::from(shape >> 6)) * PAGE,
            0,
        ),
        _ => (CapType::Frame, phys, PAGE, 0),
    };
    let aligned = phys.is_multiple_of(PAGE);
    if size > 0 && aligned && !kernel_owns(&space.objects, phys, size) {
        return Err(CapError::InvalidArgument);
    }
    let valid = aligned && (cap_type != CapType::CNode || radix >= 1);
    if cap_type == CapType::Untyped && shape & 0x20 != 0 {
        let made = space.objects.create_untyped_in_place(phys, size);
        match made {
            Ok(id) => check_made(&space.objects, id, cap_type, (phys, size), radix, None),
            Err(e) => assert!(
                !valid,
                "create_untyped_in_place refused {size:#x} free bytes at {phys:#x}: {e:?}"
            ),
        }
        return made;
    }
    let bytes = Objects::record_bytes(cap_type, radix).unwrap_or(PAGE);
    let stray = rights >> 6 == 0b11;
    let record_at = if stray {
        stray_record(&space.objects, rights & 0b11)
    } else {
        // The pool is full: the kernel has no page for the record.
        space.pool.allocate(bytes).ok_or(CapError::OutOfResources)?
    };
    let made = match cap_type {
        CapType::CNode => space
            .objects
            .create_cnode(radix, record_at)
            .map(|c| c.object()),
        _ => space.objects.create_object(cap_type, phys, size, record_at),
    };
    match made {
        Ok(id) => {
            assert!(
                valid && !stray,
                "a {cap_type:?} was made over {size:#x} bytes at {phys:#x} \
                 (radix {radix}), its record at {record_at:#x}"
            );
            check_made(
                &space.objects,
                id,
                cap_type,
                (phys, size),
                radix,
                Some(record_at),
            );
        }
        Err(e) => {
            assert!(
                !valid || stray,
                "a {cap_type:?} over {size:#x} free bytes at {phys:#x} (radix {radix}), \
                 its record on the pool at {record_at:#x}, was refused: {e:?}"
            );
            if !stray {
                space.pool.give_back(record_at);
            }
        }
    }
    made
}

/// Is `size` bytes at `phys` the kernel's to make an object over: inside
/// the boot RAM, and no memory of an object the kernel made?
fn kernel_owns(objects: &Objects, phys: u64, size: u64) -> bool {
    let end = phys + size;
    let boot_ram = UNTYPED_BASE..UNTYPED_BASE + BOOT_RAM_PAGES * PAGE;
    let taken = objects.iter().any(|id| {
        objects.object(id).is_some_and(|h| h.parent().is_none())
            && own_memory(objects, id).is_some_and(|(start, stop)| start < end && phys < stop)
    });
    phys >= boot_ram.start && end <= boot_ram.end && !taken
}

/// A place no record can go: on another record (the newest's start), off
/// a granule boundary, past the end of object memory, below its start.
fn stray_record(objects: &Objects, which: u8) -> u64 {
    let past_the_end = MEMORY_BASE + MEMORY_BYTES;
    match which {
        0 => objects
            .iter()
            .next()
            .map_or(past_the_end, |id| objects.memory().phys_of(id.granule())),
        1 => MEMORY_BASE + 8,
        2 => past_the_end,
        _ => MEMORY_BASE - PAGE,
    }
}

/// A boot object just made is what was asked for: `Created`, no
/// capability, no Untyped, its record where it was put (`record_at`; for
/// an Untyped made in place, its last granules), its body describing its
/// memory (`own`) or its slots, all empty.
fn check_made(
    objects: &Objects,
    id: ObjectId,
    cap_type: CapType,
    (phys, size): (u64, u64),
    radix: u8,
    record_at: Option<u64>,
) {
    let header = objects.object(id).copied();
    assert!(
        header.is_some_and(|h| h.cap_type == cap_type
            && h.state == ObjectState::Created
            && h.cap_count == 0
            && h.parent().is_none()),
        "a new {cap_type:?} is {header:?}"
    );
    let at = objects.memory().phys_of(id.granule());
    let record = Objects::record_bytes(cap_type, radix).unwrap_or(0);
    match record_at {
        Some(record_at) => assert_eq!(at, record_at, "the record went elsewhere"),
        None => assert_eq!(
            at + record,
            phys + size,
            "an Untyped made in place keeps its record in its last granules"
        ),
    }
    match cap_type {
        CapType::Untyped => {
            let u = objects.get::<kind::Untyped>(id).copied();
            let home = if record_at.is_some() {
                size
            } else {
                size - record
            };
            let fresh = UntypedBody {
                phys,
                size,
                bottom: 0,
                top: home,
                home,
                live_children: 0,
                pinned: 0,
                epoch: u.map_or(0, |u| u.epoch),
                device: false,
            };
            assert_eq!(u, Some(fresh), "a new Untyped");
        }
        CapType::Frame => {
            let f = objects.get::<kind::Frame>(id);
            assert!(
                f.is_some_and(|f| f.phys == phys && f.mapping.is_none()),
                "a new Frame is {f:?}"
            );
        }
        CapType::CNode => {
            let body = objects.get::<kind::CNode>(id).copied();
            assert_eq!(body.map(|b| (b.radix, b.users)), Some((radix, None)));
            let slots = objects.memory().elements::<kind::CNode>(id.granule());
            assert_eq!(slots.map(|(_, count)| count), Some(1 << radix));
            let full = super::snapshot::slots_of(objects, id).find(|s| objects.lookup(*s).is_ok());
            assert_eq!(full, None, "a new CNode holds a capability");
        }
        _ => {}
    }
}

/// The low six bits: always defined rights.
fn rights_from(raw: u8) -> Rights {
    Rights::from_raw(u64::from(raw & 0x3f)).unwrap_or(Rights::NONE)
}

/// A minted capability has exactly the rights asked for (a subset of its
/// parent's), is the child of its source, and carries the badge asked for
/// or else its source's; a Reply capability is never minted.
fn check_mint(objects: &Objects, src: SlotId, dst: SlotId, rights: Rights, badge: Option<u64>) {
    let (parent, child) = match (objects.lookup(src), objects.lookup(dst)) {
        (Ok(p), Ok(c)) => (p, c),
        other => panic!("mint succeeded but left {other:?}"),
    };
    assert_eq!(child.rights(), rights);
    assert!(
        child.rights().is_subset_of(parent.rights()),
        "mint widened rights"
    );
    assert_eq!(objects.parent(dst), Some(src));
    assert_eq!(
        (child.cap_type(), child.object()),
        (parent.cap_type(), parent.object())
    );
    assert_ne!(
        parent.cap_type(),
        CapType::Reply,
        "a Reply capability was minted"
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

/// A retype that succeeded: from the Untyped capability in `src`, `count`
/// objects of `new_type` into slots `index..` of `cnode`.
struct Retyped {
    src: SlotId,
    new_type: CapType,
    cnode: CNodeId,
    index: u64,
    count: u64,
}

/// Each object made has its original, with every right, in its slot as a
/// child of the Untyped's capability, and is carved from that Untyped: its
/// record among the records just handed out from the top (a smaller
/// Untyped's at its own top instead), its memory among the memory just
/// handed out from the bottom. The Untyped (`was` before) counts them,
/// its ends only moved towards each other, and its epoch is new.
fn check_retyped(objects: &Objects, r: &Retyped, made: &RetypedObjects, was: &UntypedBody) {
    assert_eq!(made.len() as u64, r.count);
    let untyped = objects.lookup(r.src).map(|c| c.object());
    let now = untyped
        .ok()
        .and_then(|id| objects.get::<kind::Untyped>(id).copied());
    let (Ok(untyped), Some(now)) = (untyped, now) else {
        panic!("retype lost its Untyped: {untyped:?}");
    };
    for (i, id) in made.iter().enumerate() {
        let dst = objects.slot(r.cnode, r.index + i as u64);
        let want = Capability::new(r.new_type, Rights::ALL, *id);
        assert_eq!(dst.and_then(|d| objects.lookup(d)), Ok(want));
        assert_eq!(dst.map(|d| objects.parent(d)), Ok(Some(r.src)));
        let header = objects.object(*id).copied();
        assert!(
            header.is_some_and(|h| h.parent() == Some(untyped)
                && h.cap_type == r.new_type
                && h.state == ObjectState::Live
                && h.cap_count == 1),
            "a retyped {:?} is {header:?}",
            r.new_type
        );
        let record = objects.memory().phys_of(id.granule());
        if r.new_type != CapType::Untyped {
            assert!(
                record >= now.phys + now.top && record < was.phys + was.top,
                "a retyped {:?}'s record at {record:#x} is not in what was handed out",
                r.new_type
            );
        }
        if let Some((start, end)) = own_memory(objects, *id) {
            assert!(
                start >= was.phys + was.bottom && end <= now.phys + now.bottom,
                "a retyped {:?}'s memory {start:#x}..{end:#x} is not what was handed out",
                r.new_type
            );
        }
    }
    assert_eq!(
        u64::from(now.live_children),
        u64::from(was.live_children) + r.count,
        "the Untyped miscounts its children"
    );
    assert!(
        now.bottom >= was.bottom && now.top <= was.top,
        "an end of the Untyped moved back: {was:?} -> {now:?}"
    );
    assert_ne!(now.epoch, was.epoch, "retype kept the Untyped's epoch");
}

/// After revoking the capability that was `cap` in `slot`: it stays (unless
/// a CNode only its descendants kept alive held it or an ancestor), and if
/// it stayed and is the only capability to an Untyped, all of that memory
/// is back. (Only if it stayed: when a dying CNode took it, the one left
/// may be another capability to the Untyped, through which objects
/// carved from it rightly live on.)
fn check_revoked(objects: &Objects, slot: SlotId, cap: Capability, destroyed: &[Destroyed]) {
    let cnode_died = destroyed.iter().any(|(_, t, _)| *t == CapType::CNode);
    match objects.lookup(slot) {
        Ok(now) => assert_eq!(now, cap, "revoke changed the capability"),
        Err(_) => {
            assert!(cnode_died, "revoke removed the capability itself");
            return;
        }
    }
    let Some(header) = objects.object(cap.object()) else {
        return;
    };
    if header.cap_type == CapType::Untyped && header.cap_count == 1 {
        check_reclaimed(objects, cap.object(), "revoke");
    }
}

/// Untyped `id` has all of its memory back (both ends home, no child
/// counted or pinned) and no record carved from it is left.
pub(super) fn check_reclaimed(objects: &Objects, id: ObjectId, what: &str) {
    let body = objects.get::<kind::Untyped>(id).copied();
    let reclaimed = body
        .is_some_and(|u| u.bottom == 0 && u.top == u.home && u.live_children == 0 && u.pinned == 0);
    assert!(
        reclaimed,
        "{what} left the Untyped's memory in use: {body:?}"
    );
    let child = objects
        .iter()
        .find(|c| objects.object(*c).is_some_and(|h| h.parent() == Some(id)));
    assert_eq!(child, None, "{what} left an object carved from the Untyped");
}

/// The stray slots of one step.
struct Strays {
    /// Slot ids from here on are past object memory.
    end: u32,
    /// Slot-sized places no CNode owns: right before the first and right
    /// after the last slot of each CNode with a capability (the last of
    /// its head's granules, the first after its slots).
    edges: Vec<SlotId>,
}

impl Strays {
    fn of(objects: &Objects) -> Strays {
        let edges = live_cnodes(objects)
            .into_iter()
            .filter_map(|c| {
                objects
                    .memory()
                    .elements::<kind::CNode>(c.object().granule())
            })
            .flat_map(|(first, count)| [first as u32 - 1, first as u32 + count as u32])
            .map(SlotId)
            .collect();
        Strays {
            end: objects.memory().granules() as u32 * SLOTS_PER_GRANULE,
            edges,
        }
    }

    /// Candidate `selector` of `candidates`; the value past them names a
    /// stray slot: one past object memory (even selectors) or a place no
    /// CNode owns (odd selectors).
    fn pick(&self, candidates: &[SlotId], selector: Selector) -> SlotId {
        let i = usize::from(selector) % (candidates.len() + 1);
        match candidates.get(i) {
            Some(slot) => *slot,
            None if selector.is_multiple_of(2) => SlotId(self.end + u32::from(selector)),
            None => self
                .edges
                .get(usize::from(selector >> 1) % self.edges.len().max(1))
                .copied()
                .unwrap_or(SlotId(0)),
        }
    }
}

/// Object `selector` of every object (in id order); the two values past
/// them name a granule inside a record (the second of the first record
/// longer than one) and one past object memory.
fn any_object(objects: &Objects, selector: Selector) -> ObjectId {
    let ids = all_objects(objects);
    let i = usize::from(selector) % (ids.len() + 2);
    let past_the_end = ObjectId(objects.memory().granules() as u32 + u32::from(selector));
    match ids.get(i) {
        Some(id) => *id,
        None if i == ids.len() => ids
            .iter()
            .find(|id| record_granules(objects, **id).len() > 1)
            .map_or(past_the_end, |id| ObjectId(id.0 + 1)),
        None => past_the_end,
    }
}

/// A CNode with a capability, by `selector`; the value past them names
/// any object (mostly not a CNode, which must be refused; maybe one made
/// at boot and never given a capability, whose slots are real), or a
/// granule that starts none.
fn pick_cnode(objects: &Objects, selector: Selector) -> CNodeId {
    let cnodes = live_cnodes(objects);
    let i = usize::from(selector) % (cnodes.len() + 1);
    cnodes
        .get(i)
        .copied()
        .unwrap_or_else(|| CNodeId(any_object(objects, selector)))
}

/// The first destination index: 240 and above far out of range; else
/// `index % 16`, moved (for even values) to the first empty slot at or
/// after it, so that retypes find room.
fn dst_index(objects: &Objects, cnode: CNodeId, index: u8) -> u64 {
    if index >= 240 {
        return u64::MAX - u64::from(255 - index);
    }
    let start = u64::from(index % 16);
    if index % 2 == 1 {
        return start;
    }
    (start..16)
        .find(|i| {
            objects
                .slot(cnode, *i)
                .is_ok_and(|s| objects.lookup(s).is_err())
        })
        .unwrap_or(start)
}
