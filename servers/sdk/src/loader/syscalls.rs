//! The loader over the kernel's syscalls: frames retyped from an Untyped
//! capability into a range of the caller's slots, filled through a scratch
//! mapping in the caller's own address space, then mapped into the
//! target's.

use super::space::{plan, SpaceBuilder};
use super::{ElfError, PAGE_SIZE};
use crate::ipc::Cptr;
use crate::syscall::retype;
use crate::vspace::{Frame, VSpace};
use abi::cap::CapType;
use abi::vspace::{is_frame_map_address, MapRights};
use abi::ErrorCode;
use core::ops::Range;

/// The capabilities and addresses the loader may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskMemory {
    /// An Untyped capability (write) the frames are retyped from.
    pub untyped: Cptr,
    /// The caller's own address space (write), for the scratch mapping.
    pub own: VSpace,
    /// The task's address space (write): where the image goes.
    pub target: VSpace,
    /// Empty slots of the caller's CNode, one per page of the image.
    pub slots: Range<u64>,
    /// A free page of the caller's frame-mapping window
    /// (`abi::vspace::FRAME_MAP_START..FRAME_MAP_END`): each frame is
    /// mapped there while it is filled, then unmapped.
    pub scratch: u64,
}

/// A loaded image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedTask {
    /// The entry point, for the task's first PC.
    pub entry: u64,
    /// The slots now holding the image's Frame capabilities (a prefix of
    /// `TaskMemory::slots`). Deleting them unmaps the image.
    pub slots: Range<u64>,
}

/// Why loading stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The ELF file was refused; nothing was done.
    Elf(ElfError),
    /// The scratch address is not a page of the frame-mapping window;
    /// nothing was done.
    ScratchOutsideWindow,
    /// Fewer slots than pages; nothing was done.
    NotEnoughSlots {
        /// Pages the image needs.
        needed: usize,
        /// Slots in `TaskMemory::slots`.
        available: u64,
    },
    /// `Retype` of a frame failed (the Untyped is full, a slot is taken).
    Retype(ErrorCode),
    /// Mapping a frame at the scratch address failed.
    MapScratch(ErrorCode),
    /// Unmapping a frame from the scratch address failed.
    UnmapScratch(ErrorCode),
    /// Mapping a frame into the target address space failed.
    MapTarget(ErrorCode),
}

/// A failed load: why, and the slots that hold frames made before it
/// stopped (the caller deletes them; empty when nothing was done).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadFailure {
    /// Why it stopped.
    pub error: LoadError,
    /// Slots holding frames the load made.
    pub slots_used: Range<u64>,
}

impl LoadFailure {
    fn before_any_step(error: LoadError, memory: &TaskMemory) -> LoadFailure {
        LoadFailure {
            error,
            slots_used: memory.slots.start..memory.slots.start,
        }
    }
}

/// Loads the task image `file` into `memory.target`: checks the file, then
/// for each page retypes a frame into the next slot of `memory.slots`,
/// copies the page's bytes into it through `memory.scratch`, and maps it
/// into the target with its segment's rights.
pub fn load_elf(file: &[u8], memory: &TaskMemory) -> Result<LoadedTask, LoadFailure> {
    let plan = plan(file).map_err(|e| LoadFailure::before_any_step(LoadError::Elf(e), memory))?;
    if !is_frame_map_address(memory.scratch) {
        return Err(LoadFailure::before_any_step(
            LoadError::ScratchOutsideWindow,
            memory,
        ));
    }
    let available = memory.slots.end.saturating_sub(memory.slots.start);
    if plan.page_count() as u64 > available {
        return Err(LoadFailure::before_any_step(
            LoadError::NotEnoughSlots {
                needed: plan.page_count(),
                available,
            },
            memory,
        ));
    }
    let mut builder = KernelSpace {
        memory,
        next_slot: memory.slots.start,
    };
    match plan.build(&mut builder) {
        Ok(()) => Ok(LoadedTask {
            entry: plan.entry(),
            slots: memory.slots.start..builder.next_slot,
        }),
        Err(error) => Err(LoadFailure {
            error,
            slots_used: memory.slots.start..builder.next_slot,
        }),
    }
}

/// [`SpaceBuilder`] through syscalls.
struct KernelSpace<'a> {
    memory: &'a TaskMemory,
    /// The slot the next frame goes to (slots before it hold frames).
    next_slot: u64,
}

impl SpaceBuilder for KernelSpace<'_> {
    type Frame = Frame;
    type Error = LoadError;

    fn new_frame(&mut self) -> Result<Frame, LoadError> {
        // `load_elf` checked there is a slot for every page.
        let slot = self.next_slot;
        retype(self.memory.untyped.0, CapType::Frame, 0, slot, 1).map_err(LoadError::Retype)?;
        self.next_slot += 1;
        Ok(Frame(Cptr(slot)))
    }

    fn write(&mut self, frame: &Frame, page_offset: usize, bytes: &[u8]) -> Result<(), LoadError> {
        let view = frame
            .map_view(self.memory.own, self.memory.scratch, MapRights::ReadWrite)
            .map_err(LoadError::MapScratch)?;
        let written = view.write_bytes(page_offset as u64, bytes);
        let unmapped = frame.unmap().map_err(LoadError::UnmapScratch);
        written.map_err(LoadError::MapScratch)?;
        unmapped
    }

    fn map(&mut self, frame: &Frame, va: u64, rights: MapRights) -> Result<(), LoadError> {
        debug_assert_eq!(va % PAGE_SIZE, 0);
        frame
            .map(self.memory.target, va, rights)
            .map_err(LoadError::MapTarget)
    }
}
