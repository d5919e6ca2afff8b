//! The plan's shared objects: endpoints, notifications, shared memory,
//! device memory and files, made once from one child Untyped of the
//! root's (so the tasks that share them can be rebuilt without them).

use crate::tasks::{Failure, Why};
use abi::bootinfo::{BootInfo, MAX_BOOT_DEVICE_UNTYPEDS, ROOT_CNODE_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::CapType;
use abi::system::plan::{ObjectPlan, Plan, MAX_OBJECTS};
use abi::vspace::{MapRights, FRAME_MAP_START};
use sdk::ipc::Cptr;
use sdk::syscall::{cnode, retype, retype_device_frames};
use sdk::task::Supervisor;
use sdk::vspace::{Frame, VSpace};

/// Where the root maps a page it fills (a file's copy, a boot-info
/// block): the first page of its frame window.
pub const SCRATCH_VA: u64 = FRAME_MAP_START;
/// The root's own VSpace.
pub const OWN_VSPACE: VSpace = VSpace(Cptr(ROOT_VSPACE_SLOT));
/// Bytes of one Frame's record in the Untyped that pays for it.
const FRAME_RECORD_BYTES: u64 = 128;
/// Bytes of an endpoint's or notification's record.
const SMALL_RECORD_BYTES: u64 = 64;
/// Device Frames skipped per `Retype` on the way to a device's page.
const SKIP_BATCH: u64 = 32;

/// One object made: the root's capability to it (the first of its
/// Frames for memory) and its pages.
#[derive(Clone, Copy, Debug)]
pub struct Made {
    /// The root's slot of its capability (of its first Frame).
    pub slot: u64,
    /// Pages (memory, device, file; 0 otherwise).
    pub pages: u64,
}

/// The objects, by plan index.
pub struct Objects {
    made: heapless::Vec<Made, MAX_OBJECTS>,
    /// The Untyped they were made from (also pays device Frames).
    pub untyped: Cptr,
    /// Per device Untyped of the boot information: pages of it already
    /// made into Frames (Frames come from a device Untyped's bottom up).
    device_pages_used: [u64; MAX_BOOT_DEVICE_UNTYPEDS],
}

impl Objects {
    /// Makes every object of `plan`.
    // A frame of its own: inlined, every step's locals would share
    // one frame bigger than the root's 128 KiB stack.
    #[inline(never)]
    pub fn make(
        plan: &Plan<'static>,
        info: &BootInfo,
        supervisor: &mut Supervisor,
    ) -> Result<Objects, Failure> {
        let fail = |what, why| Failure::system(what, why);
        let untyped_slot = supervisor
            .slots
            .alloc()
            .map_err(|_| fail("a slot", Why::Slots))?;
        supervisor
            .memory
            .carve(shared_bits(plan), untyped_slot)
            .map_err(|e| fail("memory for the shared objects", Why::Memory(e)))?;
        let mut objects = Objects {
            made: heapless::Vec::new(),
            untyped: Cptr(untyped_slot),
            device_pages_used: [0; MAX_BOOT_DEVICE_UNTYPEDS],
        };
        for object in plan.objects() {
            let made = objects
                .make_one(plan, info, supervisor, &object)
                .map_err(|why| Failure::object(object.name_static(), why))?;
            // The plan has at most MAX_OBJECTS objects (`Plan::open`).
            let _ = objects.made.push(made);
        }
        Ok(objects)
    }

    /// Object `index`.
    pub fn get(&self, index: u16) -> Made {
        self.made[usize::from(index)]
    }

    fn make_one(
        &mut self,
        plan: &Plan<'static>,
        info: &BootInfo,
        supervisor: &mut Supervisor,
        object: &ObjectPlan<'static>,
    ) -> Result<Made, Why> {
        let pages = object.pages().unwrap_or(0);
        let first = if pages == 0 {
            supervisor.slots.alloc().map_err(|_| Why::Slots)?
        } else {
            supervisor
                .slots
                .alloc_range(pages)
                .map_err(|_| Why::Slots)?
                .start
        };
        let made = Made { slot: first, pages };
        match *object {
            ObjectPlan::Endpoint { .. } => {
                retype(self.untyped.0, CapType::Endpoint, 0, first, 1).map_err(Why::Code)?
            }
            ObjectPlan::Notification { .. } => {
                retype(self.untyped.0, CapType::Notification, 0, first, 1).map_err(Why::Code)?
            }
            ObjectPlan::Memory { .. } => {
                retype(self.untyped.0, CapType::Frame, 0, first, pages).map_err(Why::Code)?
            }
            ObjectPlan::File { file, .. } => {
                retype(self.untyped.0, CapType::Frame, 0, first, pages).map_err(Why::Code)?;
                let bytes = plan
                    .file(file)
                    .ok_or(Why::Plan("its file is not in the image"))?;
                fill_file(first, bytes)?;
            }
            ObjectPlan::Device { physical, .. } => {
                self.make_device_frames(info, supervisor, physical, first, pages)?
            }
        }
        Ok(made)
    }

    /// The Frames of `pages` pages of device memory at `physical`, at
    /// `first..`: from the device Untyped covering it, skipping (making
    /// and deleting) the pages of the block below it.
    fn make_device_frames(
        &mut self,
        info: &BootInfo,
        supervisor: &mut Supervisor,
        physical: u64,
        first: u64,
        pages: u64,
    ) -> Result<(), Why> {
        let index = info
            .device_covering(physical)
            .ok_or(Why::Plan("no device memory the kernel hands out covers it"))?;
        let block = info.devices[index];
        let device = BootInfo::device_untyped_slot(index);
        let page = (physical - block.base) / 4096;
        let used = &mut self.device_pages_used[index];
        if page < *used {
            return Err(Why::Plan(
                "it overlaps, or lies below, device memory made before it in the same block \
                 (list devices by address)",
            ));
        }
        if (physical - block.base) + pages * 4096 > block.bytes() {
            return Err(Why::Plan("it runs past the device block that holds it"));
        }
        let mut skip = page - *used;
        if skip > 0 {
            let scratch = supervisor
                .slots
                .alloc_range(SKIP_BATCH)
                .map_err(|_| Why::Slots)?;
            while skip > 0 {
                let batch = skip.min(SKIP_BATCH);
                retype_device_frames(device, self.untyped.0, scratch.start, batch)
                    .map_err(Why::Code)?;
                for slot in scratch.start..scratch.start + batch {
                    cnode::delete(ROOT_CNODE_SLOT, slot).map_err(Why::Code)?;
                }
                skip -= batch;
            }
            let _ = supervisor.slots.free_range(scratch);
        }
        retype_device_frames(device, self.untyped.0, first, pages).map_err(Why::Code)?;
        *used = page + pages;
        Ok(())
    }

    /// Whether the plan made Frames from device Untyped `index` (the
    /// privileged task is not given such a block).
    pub fn uses_device(&self, index: usize) -> bool {
        self.device_pages_used[index] > 0
    }
}

/// Copies `bytes` into the Frames at `first..`, after an 8-byte length.
fn fill_file(first: u64, bytes: &[u8]) -> Result<(), Why> {
    let length = (bytes.len() as u64).to_le_bytes();
    let mut rest = bytes;
    let mut slot = first;
    let mut offset = length.len();
    let mut header = Some(length);
    while header.is_some() || !rest.is_empty() {
        let view = Frame(Cptr(slot))
            .map_view(OWN_VSPACE, SCRATCH_VA, MapRights::ReadWrite)
            .map_err(Why::Code)?;
        let mut start = 0;
        if let Some(length) = header.take() {
            view.write_bytes(0, &length).map_err(Why::Code)?;
            start = offset;
        }
        let take = rest.len().min(4096 - start);
        view.write_bytes(start as u64, &rest[..take])
            .map_err(Why::Code)?;
        rest = &rest[take..];
        Frame(Cptr(slot)).unmap().map_err(Why::Code)?;
        slot += 1;
        offset = 0;
    }
    Ok(())
}

/// log2 of the Untyped the shared objects need: their pages and records,
/// rounded up to a power of two, at least 64 KiB.
pub fn shared_bits(plan: &Plan<'static>) -> u8 {
    let bytes: u64 = plan
        .objects()
        .map(|object| match object {
            ObjectPlan::Endpoint { .. } | ObjectPlan::Notification { .. } => SMALL_RECORD_BYTES,
            ObjectPlan::Memory { pages, .. } => u64::from(pages) * (4096 + FRAME_RECORD_BYTES),
            ObjectPlan::File { .. } => object.pages().unwrap_or(0) * (4096 + FRAME_RECORD_BYTES),
            // Device pages are the device's; skipped pages' records are
            // deleted at once.
            ObjectPlan::Device { pages, .. } => {
                (u64::from(pages) + SKIP_BATCH) * FRAME_RECORD_BYTES
            }
        })
        .sum();
    bits_for(bytes.max(64 << 10))
}

/// log2 of the smallest power of two at least `bytes`.
pub fn bits_for(bytes: u64) -> u8 {
    (64 - (bytes.max(2) - 1).leading_zeros()) as u8
}

/// Names of objects live in the image, which the root keeps mapped.
trait StaticName {
    fn name_static(&self) -> &'static str;
}

impl StaticName for ObjectPlan<'static> {
    fn name_static(&self) -> &'static str {
        match *self {
            ObjectPlan::Endpoint { name }
            | ObjectPlan::Notification { name }
            | ObjectPlan::Memory { name, .. }
            | ObjectPlan::Device { name, .. }
            | ObjectPlan::File { name, .. } => name,
        }
    }
}
