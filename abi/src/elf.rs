//! Reading a program's ELF file: the header and its loadable segments,
//! every field checked before it is used.
//!
//! The one parser for every program Portcullis loads: the kernel's
//! `AddressSpace::load` (the init ELF embedded in the image) and the SDK's
//! task loader (`sdk::loader`, the tasks the root task builds). It accepts
//! an ELF64 little-endian AArch64 executable whose program-header table
//! lies in the file and whose loadable segments lie inside the file and
//! inside [`IMAGE_START`]`..`[`IMAGE_END`] (the user half without page 0),
//! keep offset ≡ address (mod page), hold no more file bytes than memory
//! bytes, have some permission and are never writable and executable,
//! share no page, and number at most [`MAX_SEGMENTS`] with at most a page
//! limit of pages in all; the entry point lies in an executable segment.
//! Every refusal is an [`ElfError`]; no input makes it panic (the
//! `elf_image` fuzz target holds it to that). It allocates nothing.

use crate::vspace::{MapRights, USER_MAP_END, USER_MAP_START};

/// Bytes in a page.
pub const PAGE_SIZE: u64 = 4096;
/// Lowest address a segment may start at: page 0 stays unmapped so a null
/// pointer faults.
pub const IMAGE_START: u64 = USER_MAP_START;
/// One past the highest address a segment may reach: the end of the user
/// half (48-bit addresses). Where the image goes inside it is the ELF's
/// business; a segment over a page its loader maps too (a stack, the IPC
/// buffer) makes one of the two mappings fail.
pub const IMAGE_END: u64 = USER_MAP_END;
/// Most program headers a file may have (loadable or not).
pub const MAX_PROGRAM_HEADERS: usize = 16;
/// Most non-empty loadable segments.
pub const MAX_SEGMENTS: usize = 8;
/// Most pages an image may need (1.75 MiB) under [`parse`]: bounds the
/// frames and slots one load takes (init, whose programs the root task
/// loads, is about 260). A loader with a bound of its own passes it to
/// [`parse_within`] instead.
pub const MAX_PAGES: usize = 448;

/// Why an ELF file was refused.
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
    /// The segments need more pages than the limit ([`MAX_PAGES`] for
    /// [`parse`]).
    TooManyPages,
    /// The entry point is not inside an executable segment.
    EntryOutsideCode,
}

const ELF_HEADER_SIZE: usize = 64;
const PROGRAM_HEADER_SIZE: usize = 56;
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const EV_CURRENT: u8 = 1;
const ET_EXEC: u16 = 2;
const EM_AARCH64: u16 = 183;
const PT_LOAD: u32 = 1;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

/// One loadable segment, checked: inside the file and the image range,
/// offset ≡ address (mod page), file bytes ≤ memory bytes, not W+X.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Where its first byte goes in the program's address space.
    pub vaddr: u64,
    /// Bytes in memory; those past `file_size` are zero.
    pub mem_size: u64,
    /// Offset of its bytes in the file.
    pub offset: u64,
    /// Bytes taken from the file.
    pub file_size: u64,
    /// How its pages are mapped.
    pub rights: MapRights,
}

impl Segment {
    /// The first page the segment touches.
    pub const fn first_page(&self) -> u64 {
        self.vaddr & !(PAGE_SIZE - 1)
    }

    /// One past the last page the segment touches (page aligned; cannot
    /// overflow for a checked segment, which ends below `IMAGE_END`).
    pub const fn end_page(&self) -> u64 {
        (self.vaddr + self.mem_size + PAGE_SIZE - 1) & !(PAGE_SIZE - 1)
    }

    /// How many pages the segment touches.
    pub const fn page_count(&self) -> u64 {
        (self.end_page() - self.first_page()) / PAGE_SIZE
    }
}

/// The checked contents of a program's ELF file: entry point and loadable
/// segments in ascending address order, none sharing a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Image {
    /// Entry point (inside an executable segment).
    pub entry: u64,
    segments: [Segment; MAX_SEGMENTS],
    count: usize,
}

impl Image {
    /// The loadable segments, ascending by address.
    pub fn segments(&self) -> &[Segment] {
        &self.segments[..self.count]
    }

    /// Pages the image needs, in all (at most the limit it was parsed
    /// with).
    pub fn page_count(&self) -> usize {
        self.segments()
            .iter()
            .map(|s| s.page_count() as usize)
            .sum()
    }
}

/// The `N` bytes at `at`, or `Truncated`; the end is computed with
/// `checked_add` because offsets come from the file.
fn bytes_at<const N: usize>(file: &[u8], at: u64) -> Result<[u8; N], ElfError> {
    let start = usize::try_from(at).map_err(|_| ElfError::Truncated)?;
    let end = start.checked_add(N).ok_or(ElfError::Truncated)?;
    let bytes = file.get(start..end).ok_or(ElfError::Truncated)?;
    let mut out = [0u8; N];
    out.copy_from_slice(bytes);
    Ok(out)
}

fn u16_at(file: &[u8], at: u64) -> Result<u16, ElfError> {
    bytes_at(file, at).map(u16::from_le_bytes)
}

fn u32_at(file: &[u8], at: u64) -> Result<u32, ElfError> {
    bytes_at(file, at).map(u32::from_le_bytes)
}

fn u64_at(file: &[u8], at: u64) -> Result<u64, ElfError> {
    bytes_at(file, at).map(u64::from_le_bytes)
}

/// Checks `file` and lists its loadable segments, with at most
/// [`MAX_PAGES`] pages in all.
pub fn parse(file: &[u8]) -> Result<Image, ElfError> {
    parse_within(file, MAX_PAGES)
}

/// Checks `file` and lists its loadable segments, with at most
/// `max_pages` pages in all: for a loader whose own bound differs from
/// [`MAX_PAGES`] (the kernel's, which loads the init ELF into its own
/// frames). Every other check is [`parse`]'s.
pub fn parse_within(file: &[u8], max_pages: usize) -> Result<Image, ElfError> {
    if file.len() < ELF_HEADER_SIZE {
        return Err(ElfError::Truncated);
    }
    if file[0..4] != *b"\x7fELF" {
        return Err(ElfError::NotElf);
    }
    if file[4] != ELFCLASS64 || file[5] != ELFDATA2LSB || file[6] != EV_CURRENT {
        return Err(ElfError::NotElf64LittleEndian);
    }
    if u16_at(file, 16)? != ET_EXEC {
        return Err(ElfError::NotExecutable);
    }
    if u16_at(file, 18)? != EM_AARCH64 {
        return Err(ElfError::NotAarch64);
    }
    let entry = u64_at(file, 24)?;
    let ph_offset = u64_at(file, 32)?;
    let ph_entry_size = u16_at(file, 54)?;
    let ph_count = u16_at(file, 56)?;
    if usize::from(ph_entry_size) < PROGRAM_HEADER_SIZE {
        return Err(ElfError::BadProgramHeaderSize);
    }
    if usize::from(ph_count) > MAX_PROGRAM_HEADERS {
        return Err(ElfError::TooManyProgramHeaders);
    }
    // The whole table lies in the file, loadable entries or not.
    let table_end = ph_offset.checked_add(u64::from(ph_count) * u64::from(ph_entry_size));
    if table_end.is_none_or(|end| end > file.len() as u64) {
        return Err(ElfError::Truncated);
    }

    let mut image = Image {
        entry,
        segments: [Segment {
            vaddr: 0,
            mem_size: 0,
            offset: 0,
            file_size: 0,
            rights: MapRights::Read,
        }; MAX_SEGMENTS],
        count: 0,
    };
    for index in 0..u64::from(ph_count) {
        // index < 2^16 and entry size < 2^16: the product cannot overflow.
        let at = ph_offset
            .checked_add(index * u64::from(ph_entry_size))
            .ok_or(ElfError::Truncated)?;
        if u32_at(file, at)? != PT_LOAD {
            continue;
        }
        let mem_size = u64_at(file, at + 40)?;
        if mem_size == 0 {
            // Nothing to map (an empty section's segment).
            continue;
        }
        let segment = segment(
            file.len() as u64,
            u32_at(file, at + 4)?,
            u64_at(file, at + 8)?,
            u64_at(file, at + 16)?,
            u64_at(file, at + 32)?,
            mem_size,
        )?;
        if image.count == MAX_SEGMENTS {
            return Err(ElfError::TooManySegments);
        }
        image.segments[image.count] = segment;
        image.count += 1;
    }
    if image.count == 0 {
        return Err(ElfError::NoSegments);
    }
    let segments = &mut image.segments[..image.count];
    segments.sort_unstable_by_key(|s| s.vaddr);
    for pair in segments.windows(2) {
        if pair[0].end_page() > pair[1].first_page() {
            return Err(ElfError::Overlap);
        }
    }
    if image.page_count() > max_pages {
        return Err(ElfError::TooManyPages);
    }
    let entry_is_code = image.segments().iter().any(|s| {
        s.rights == MapRights::ReadExecute && entry >= s.vaddr && entry - s.vaddr < s.mem_size
    });
    if !entry_is_code {
        return Err(ElfError::EntryOutsideCode);
    }
    Ok(image)
}

/// Checks one `PT_LOAD` header's fields.
fn segment(
    file_len: u64,
    flags: u32,
    offset: u64,
    vaddr: u64,
    file_size: u64,
    mem_size: u64,
) -> Result<Segment, ElfError> {
    let rights = match (flags & PF_W != 0, flags & PF_X != 0) {
        (true, true) => return Err(ElfError::WritableAndExecutable),
        (true, false) => MapRights::ReadWrite,
        (false, true) => MapRights::ReadExecute,
        (false, false) if flags & PF_R != 0 => MapRights::Read,
        (false, false) => return Err(ElfError::NoAccess),
    };
    if file_size > mem_size {
        return Err(ElfError::FileSizeAboveMemorySize);
    }
    match offset.checked_add(file_size) {
        Some(end) if end <= file_len => {}
        _ => return Err(ElfError::SegmentOutsideFile),
    }
    if vaddr % PAGE_SIZE != offset % PAGE_SIZE {
        return Err(ElfError::Misaligned);
    }
    // IMAGE_END is page aligned, so the segment's last page ends at or
    // below it too.
    let inside = (IMAGE_START..IMAGE_END).contains(&vaddr) && mem_size <= IMAGE_END - vaddr;
    if !inside {
        return Err(ElfError::OutsideImageRange);
    }
    Ok(Segment {
        vaddr,
        mem_size,
        offset,
        file_size,
        rights,
    })
}

/// The image range is whole pages: a segment inside it touches only pages
/// inside it.
const _: () = assert!(IMAGE_START.is_multiple_of(PAGE_SIZE) && IMAGE_END.is_multiple_of(PAGE_SIZE));

#[cfg(any(test, feature = "elf-writer"))]
pub mod writer;

#[cfg(test)]
mod tests;
