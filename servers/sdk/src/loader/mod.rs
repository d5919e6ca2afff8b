//! Loading a task from an ELF file into an address space the caller
//! holds a capability to.
//!
//! Three steps, each its own file (the first shared with the kernel):
//!
//! 1. [`elf::parse`] checks the file (the shared parser in `abi::elf`,
//!    the one the kernel loads init with too, re-exported here as
//!    [`elf`]): an ELF64 little-endian AArch64 executable whose loadable
//!    segments lie inside the file and inside `IMAGE_START..IMAGE_END`,
//!    keep offset ≡ address (mod page), hold no more file bytes than memory
//!    bytes, are never writable and executable, share no page, and number
//!    at most [`MAX_SEGMENTS`] with at most [`MAX_PAGES`] pages in all; the
//!    entry point lies in code. Every refusal is an [`ElfError`]; no input
//!    makes it panic (the `elf_image` fuzz target holds it to that).
//! 2. [`plan::pages`] turns the segments into one [`PagePlan`] per page:
//!    its address, its rights, which file bytes go where in it; the rest
//!    is zero.
//! 3. [`Plan::build`] makes, fills and maps each page through a
//!    [`SpaceBuilder`]; [`load_elf`] is the builder over the kernel's
//!    `Retype`, `FrameMap` and `FrameUnmap`.
//!
//! Nothing here allocates: a plan is a fixed array of segments and an
//! iterator over their pages.

pub use abi::elf;
pub mod plan;
mod space;
mod syscalls;

pub use elf::{
    parse, ElfError, Image, Segment, IMAGE_END, IMAGE_START, MAX_PAGES, MAX_PROGRAM_HEADERS,
    MAX_SEGMENTS, PAGE_SIZE,
};
pub use plan::PagePlan;
pub use space::{plan, Plan, SpaceBuilder};
pub use syscalls::{load_elf, LoadError, LoadFailure, LoadedTask, TaskMemory};

#[cfg(test)]
mod tests;
