//! Loading a task from an ELF file into an address space the caller
//! holds a capability to.
//!
//! Three steps, each its own file:
//!
//! 1. [`elf::parse`] checks the file — an ELF64 little-endian AArch64
//!    executable whose loadable segments lie inside the file and inside
//!    `IMAGE_START..IMAGE_END`, keep offset ≡ address (mod page), hold no
//!    more file bytes than memory bytes, are never writable and executable,
//!    share no page, and number at most [`MAX_SEGMENTS`] with at most
//!    [`MAX_PAGES`] pages in all; the entry point lies in code. Every
//!    refusal is an [`ElfError`]; no input makes it panic (the
//!    `task_image` fuzz target holds it to that).
//! 2. [`plan::pages`] turns the segments into one [`PagePlan`] per page:
//!    its address, its rights, which file bytes go where in it; the rest
//!    is zero.
//! 3. [`Plan::build`] makes, fills and maps each page through a
//!    [`SpaceBuilder`]; [`load_elf`] is the builder over the kernel's
//!    `Retype`, `FrameMap` and `FrameUnmap`.
//!
//! Nothing here allocates: a plan is a fixed array of segments and an
//! iterator over their pages.

pub mod elf;
pub mod plan;
mod space;
mod syscalls;

pub use elf::{parse, Image, Segment, PAGE_SIZE};
pub use plan::PagePlan;
pub use space::{plan, Plan, SpaceBuilder};
pub use syscalls::{load_elf, LoadError, LoadFailure, LoadedTask, TaskMemory};

/// Lowest address a segment may start at: page 0 stays unmapped so a null
/// pointer faults.
pub const IMAGE_START: u64 = PAGE_SIZE;
/// One past the highest address a segment may reach: the end of the user
/// half (48-bit addresses). Where the image goes inside it is the ELF's
/// business; a segment over a page the root maps too (the stack, the IPC
/// buffer) makes one of the two `FrameMap`s fail with `AlreadyMapped`.
pub const IMAGE_END: u64 = 1 << 48;
/// Most program headers a file may have (loadable or not).
pub const MAX_PROGRAM_HEADERS: usize = 16;
/// Most non-empty loadable segments.
pub const MAX_SEGMENTS: usize = 8;
/// Most pages an image may need (1 MiB): bounds the frames and slots one
/// load takes.
pub const MAX_PAGES: usize = 256;

/// Why an ELF file was refused as a task image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// Shorter than an ELF header, or a header lies past the end.
    Truncated,
    /// No ELF magic.
    NotElf,
    /// Not 64-bit little-endian ELF of the current version.
    NotElf64LittleEndian,
    /// Not an executable (`ET_EXEC`): relocatable or shared files are not
    /// loaded.
    NotExecutable,
    /// Not for AArch64.
    NotAarch64,
    /// Program headers smaller than ELF64's 56 bytes.
    BadProgramHeaderSize,
    /// More than [`MAX_PROGRAM_HEADERS`] program headers.
    TooManyProgramHeaders,
    /// More than [`MAX_SEGMENTS`] loadable segments.
    TooManySegments,
    /// No loadable segment with memory.
    NoSegments,
    /// A segment is neither readable, writable nor executable.
    NoAccess,
    /// A segment asks to be writable and executable.
    WritableAndExecutable,
    /// A segment has more file bytes than memory bytes.
    FileSizeAboveMemorySize,
    /// A segment's file bytes lie (partly) outside the file.
    SegmentOutsideFile,
    /// A segment's file offset and address differ modulo the page size.
    Misaligned,
    /// A segment reaches below [`IMAGE_START`] or above [`IMAGE_END`].
    OutsideImageRange,
    /// Two segments touch the same page.
    Overlap,
    /// The segments need more than [`MAX_PAGES`] pages.
    TooManyPages,
    /// The entry point is not inside an executable segment.
    EntryOutsideCode,
}

#[cfg(test)]
mod tests;
