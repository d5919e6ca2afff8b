//! The capability table: random sequences of operations on a small
//! `microkernel::cap::Objects` (every object a record in object memory on
//! the heap), with every invariant checked after every step.

mod op;
mod run;
mod snapshot;

use super::bytes::Bytes;
use abi::cap::{CapType, Rights};
use arch::object_memory::{kind, GRANULE};
use microkernel::cap::{CapError, Capability, FreedPages, Memory, ObjectRef, ObjectState, Objects};
use op::Op;
use snapshot::{every_full_slot, full_slots, record_granules};
use std::collections::BTreeMap;

/// The page size: the pool hands out pages, boot objects have pages.
const PAGE: u64 = 4096;
/// Radix of the root CNode (16 slots).
const ROOT_RADIX: u8 = 4;
/// Pages of the kernel's own pool for the records of the objects it makes
/// (the root CNode, the boot Untyped's record, boot objects): small, so
/// that it runs out, as the object table and the slot pool used to.
const POOL_PAGES: u64 = 32;
/// Where object memory starts: the pool first, the boot RAM right after.
const MEMORY_BASE: u64 = UNTYPED_BASE - POOL_PAGES * PAGE;
/// Where the boot Untyped starts: the first page of the boot RAM.
const UNTYPED_BASE: u64 = 0x8000_0000;
/// Its size: small enough that retype runs out now and then.
const UNTYPED_BYTES: u64 = 16 * 1024;
/// Pages of RAM the kernel makes boot Untypeds and Frames over: the boot
/// Untyped's four and 32 after them, so that every shape `Op::BootObject`
/// spells fits, and the first ones overlap the boot Untyped while it
/// lives.
const BOOT_RAM_PAGES: u64 = 36;
/// Bytes of object memory: the pool and the boot RAM.
const MEMORY_BYTES: u64 = (POOL_PAGES + BOOT_RAM_PAGES) * PAGE;
/// Most operations one input runs (bounds the time per input).
const MAX_STEPS: usize = 512;

/// The capability layer under test and what the kernel keeps beside it:
/// the pages its own records are on.
struct Space {
    objects: Objects,
    pool: Pool,
}

/// The kernel's own pages for the records of the objects it makes itself
/// (as `kernel/object/lifecycle.rs` takes them from its frame pool): first fit, a
/// record's pages contiguous, given back when `reap` frees the record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Pool {
    /// The first page of each record on the pool → its pages.
    used: BTreeMap<u64, u64>,
}

impl Pool {
    /// Room for a record of `bytes`: its first page, or `None` when the
    /// pool is full.
    fn allocate(&mut self, bytes: u64) -> Option<u64> {
        let pages = bytes.div_ceil(PAGE).max(1);
        // From page 1: page 0 holds granule 0, which holds no record.
        let at = (1..=POOL_PAGES.checked_sub(pages)?)
            .map(|page| MEMORY_BASE + page * PAGE)
            .find(|at| {
                let end = at + pages * PAGE;
                !self
                    .used
                    .iter()
                    .any(|(start, n)| *start < end && *at < start + n * PAGE)
            })?;
        self.used.insert(at, pages);
        Some(at)
    }

    /// The record at `at` is gone (or was never made): its pages are free.
    fn give_back(&mut self, at: u64) {
        assert!(
            self.used.remove(&at).is_some(),
            "pool page {at:#x} given back twice"
        );
    }

    /// `reap` freed a record on the pool: it must be one handed out, with
    /// all of its pages.
    fn reaped(&mut self, freed: FreedPages) {
        assert_eq!(
            self.used.get(&freed.phys),
            Some(&freed.pages),
            "reap gave back pages the pool did not hand out: {freed:?}"
        );
        self.give_back(freed.phys);
    }
}

/// Runs the operations `data` spells on a space set up like init's (a
/// root CNode whose capability is in its slot 1, an Untyped in slot 0,
/// both records on the kernel's pool).
///
/// Checks after every step: `check_invariants` (the derivation tree, the
/// object list and capability counts, Untyped memory: records at the top,
/// memory at the bottom, nothing shared); a failed operation changed
/// nothing (`Objects::snapshot`, and which granules of object memory hold
/// what); `take_destroyed` named exactly the objects that went, each once,
/// with their type, and `reap` then freed exactly their records and gave
/// back exactly the pool pages of the kernel-made ones; and the promise of
/// the operation (see `run.rs`). At the end, revoking each Untyped's
/// original gives back all of its memory, and deleting every capability
/// frees every record and pool page but those of the objects the kernel
/// made and never gave a capability to.
pub fn cap_table_ops(data: &[u8]) {
    let mut space = set_up();
    let mut input = Bytes::new(data);
    for _ in 0..MAX_STEPS {
        if input.is_empty() {
            break;
        }
        let op = Op::read(&mut input);
        run::step(&mut space, op);
    }
    reclaim_untypeds(&mut space);
    delete_everything(&mut space);
}

/// The root CNode and the Untyped, their records on the pool.
fn set_up() -> Space {
    let mut space = Space {
        objects: Objects::new(),
        pool: Pool::default(),
    };
    let memory = Memory::on_heap(MEMORY_BASE, MEMORY_BYTES as usize);
    assert!(space.objects.install_memory(memory));
    let set_up = (|| {
        let bytes = Objects::record_bytes(CapType::CNode, ROOT_RADIX).unwrap_or(PAGE);
        let at = space.pool.allocate(bytes).ok_or(CapError::OutOfResources)?;
        let root = space.objects.create_cnode(ROOT_RADIX, at)?;
        let root_cap = Capability::new(CapType::CNode, Rights::ALL, root.object());
        let root_slot = space.objects.slot(root, 1)?;
        space.objects.install_original(root_slot, root_cap)?;
        let bytes = Objects::record_bytes(CapType::Untyped, 0).unwrap_or(PAGE);
        let at = space.pool.allocate(bytes).ok_or(CapError::OutOfResources)?;
        let untyped =
            space
                .objects
                .create_object(CapType::Untyped, UNTYPED_BASE, UNTYPED_BYTES, at)?;
        let untyped_cap = Capability::new(CapType::Untyped, Rights::ALL, untyped);
        let untyped_slot = space.objects.slot(root, 0)?;
        space.objects.install_original(untyped_slot, untyped_cap)
    })();
    if let Err(e) = set_up {
        panic!("setting up the space failed: {e:?}");
    }
    check_invariants(&space.objects, &"setting up");
    space
}

fn check_invariants(objects: &Objects, after: &dyn core::fmt::Debug) {
    if let Err(violation) = objects.check_invariants() {
        panic!("invariant violated after {after:?}: {violation:?}");
    }
}

/// Revokes the original of every Untyped the kernel made (the boot
/// Untyped, and those `Op::BootObject` made) that is still there, one at
/// a time: every byte carved from it must come back.
fn reclaim_untypeds(space: &mut Space) {
    let mut revoked: Vec<ObjectRef> = Vec::new();
    loop {
        // An original of a kernel-made Untyped is a root of the tree (a
        // carved one's has its Untyped's capability as parent). Object ids
        // are reused: a reference tells this Untyped from a later one.
        let objects = &space.objects;
        let next = full_slots(objects).into_iter().find_map(|slot| {
            let cap = objects.lookup(slot).ok()?;
            let untyped = objects.reference(cap.object())?;
            let root = cap.cap_type() == CapType::Untyped && objects.parent(slot).is_none();
            (root && !revoked.contains(&untyped)).then_some((slot, untyped))
        });
        let Some((slot, untyped)) = next else {
            return;
        };
        revoked.push(untyped);
        assert_eq!(space.objects.revoke(slot), Ok(()));
        run::settle(space);
        check_invariants(&space.objects, &"revoking an Untyped's original");
        // The original may have lived in a CNode carved from the Untyped
        // itself; then the revoke destroyed that CNode and the Untyped with
        // it.
        let Some(id) = space.objects.resolve(untyped, CapType::Untyped) else {
            continue;
        };
        run::check_reclaimed(&space.objects, id, "revoking its original");
    }
}

/// Deletes every capability, in every CNode's slots (also those of a
/// CNode the kernel made and never gave a capability to, which a retype
/// may have filled); then nothing may be left but the objects the kernel
/// made and never gave a capability to (they stay `Created`): their
/// records are all object memory holds and all the pool hands out.
///
/// (This replaces the old count of free object-table entries and pool
/// slots: neither table exists any more. What leaked would now be a
/// record, a granule or a pool page, and those are what is checked.)
fn delete_everything(space: &mut Space) {
    while let Some(slot) = every_full_slot(&space.objects).first().copied() {
        assert_eq!(space.objects.delete(slot), Ok(()));
        assert!(
            space.objects.lookup(slot).is_err(),
            "delete left {slot:?} full"
        );
        run::settle(space);
        check_invariants(&space.objects, &"deleting everything");
    }
    let objects = &space.objects;
    let mut held = vec![false; objects.memory().granules()];
    let mut on_pool = BTreeMap::new();
    for id in objects.iter() {
        let header = objects.object(id).copied();
        assert!(
            header.is_some_and(|h| h.state == ObjectState::Created
                && h.cap_count == 0
                && h.parent().is_none()),
            "{id:?} outlived every capability: {header:?}"
        );
        let granules = record_granules(objects, id);
        for g in granules.clone() {
            held[g as usize] = true;
        }
        let in_place = objects
            .get::<kind::Untyped>(id)
            .is_some_and(|u| u.home < u.size);
        if !in_place {
            let bytes = granules.len() as u64 * GRANULE as u64;
            on_pool.insert(objects.memory().phys_of(id.granule()), bytes.div_ceil(PAGE));
        }
    }
    // (Granule 0 is reserved, never a record's: ids are never 0.)
    let stray =
        (1..held.len() as u32).find(|g| !held[*g as usize] && !objects.memory().is_free(*g));
    assert_eq!(
        stray, None,
        "a granule of object memory outlived every record on it"
    );
    assert_eq!(space.pool.used, on_pool, "a pool page leaked");
    let stray = every_full_slot(objects).first().copied();
    assert_eq!(stray, None, "a capability outlived deleting everything");
}
