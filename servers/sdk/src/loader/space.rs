//! Carrying out a plan: the steps that make memory and map it go through
//! [`SpaceBuilder`], so the loader's logic runs on the host against a
//! fake and in a task against the kernel ([`super::syscalls`]).

use super::plan::{self, PagePlan};
use super::{ElfError, Image};
use abi::vspace::MapRights;

/// What the loader needs from whoever owns the memory and the target
/// address space.
pub trait SpaceBuilder {
    /// A page of memory the builder made.
    type Frame;
    /// Why a step failed.
    type Error;

    /// A new page, all zeros.
    fn new_frame(&mut self) -> Result<Self::Frame, Self::Error>;

    /// Copies `bytes` into `frame` at byte `page_offset` (the loader keeps
    /// `page_offset + bytes.len()` within the page).
    fn write(
        &mut self,
        frame: &Self::Frame,
        page_offset: usize,
        bytes: &[u8],
    ) -> Result<(), Self::Error>;

    /// Maps `frame` into the target address space at `va` with `rights`.
    fn map(&mut self, frame: &Self::Frame, va: u64, rights: MapRights) -> Result<(), Self::Error>;
}

/// A checked ELF file and its image: what [`plan`] accepted, ready to
/// build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan<'file> {
    file: &'file [u8],
    image: Image,
}

/// Checks `file` (see [`super::elf::parse`]) and plans its pages.
pub fn plan(file: &[u8]) -> Result<Plan<'_>, ElfError> {
    let image = super::elf::parse(file)?;
    Ok(Plan { file, image })
}

impl<'file> Plan<'file> {
    /// Where the task starts.
    pub fn entry(&self) -> u64 {
        self.image.entry
    }

    /// The checked image (segments).
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// How many pages (frames) the image needs.
    pub fn page_count(&self) -> usize {
        self.image.page_count()
    }

    /// The pages, ascending by address.
    pub fn pages(&self) -> impl Iterator<Item = PagePlan> + '_ {
        plan::pages(&self.image)
    }

    /// Makes, fills and maps every page, in address order; stops at the
    /// first step that fails.
    pub fn build<B: SpaceBuilder>(&self, builder: &mut B) -> Result<(), B::Error> {
        for page in self.pages() {
            let frame = builder.new_frame()?;
            if !page.file_bytes.is_empty() {
                // In the file and in the page: the plan guarantees both.
                builder.write(&frame, page.page_offset, &self.file[page.file_bytes])?;
            }
            builder.map(&frame, page.va, page.rights)?;
        }
        Ok(())
    }
}
