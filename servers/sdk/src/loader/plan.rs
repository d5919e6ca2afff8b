//! The page plan of a checked image: for each page of each segment, where
//! it goes, how it is mapped, and which bytes of the file it holds.

use super::elf::{Image, Segment, PAGE_SIZE};
use abi::vspace::MapRights;
use core::ops::Range;

/// One page of a task's image.
///
/// The page holds `file[file_bytes]` starting at byte `page_offset`;
/// every other byte of it is zero (the part of the segment past its file
/// bytes, and the bytes of the page before the segment starts or after it
/// ends).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagePlan {
    /// Where the page goes in the task's address space (page aligned).
    pub va: u64,
    /// How it is mapped.
    pub rights: MapRights,
    /// The file bytes it holds (empty for a page of zeros).
    pub file_bytes: Range<usize>,
    /// Where in the page `file_bytes` start.
    pub page_offset: usize,
}

/// The pages of `image`, ascending by address.
pub fn pages(image: &Image) -> impl Iterator<Item = PagePlan> + '_ {
    image.segments().iter().flat_map(segment_pages)
}

fn segment_pages(segment: &Segment) -> impl Iterator<Item = PagePlan> + '_ {
    (0..segment.page_count())
        .map(move |index| page(segment, segment.first_page() + index * PAGE_SIZE))
}

/// The plan of the page at `va` of `segment`. A checked segment keeps
/// every sum below `IMAGE_END` and every offset inside the file, so the
/// arithmetic cannot overflow and the range fits in `usize`.
fn page(segment: &Segment, va: u64) -> PagePlan {
    let file_end = segment.vaddr + segment.file_size;
    let start = va.max(segment.vaddr);
    let end = (va + PAGE_SIZE).min(file_end);
    let (file_bytes, page_offset) = if start < end {
        let from = segment.offset + (start - segment.vaddr);
        (
            from as usize..(from + (end - start)) as usize,
            (start - va) as usize,
        )
    } else {
        (0..0, 0)
    };
    PagePlan {
        va,
        rights: segment.rights,
        file_bytes,
        page_offset,
    }
}
