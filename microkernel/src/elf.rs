//! Reading the loadable segments of a user program's ELF file.
//!
//! The kernel only trusts what it checks: a little-endian ELF64 executable
//! for AArch64 whose loadable segments lie in the user half, inside the
//! file, page-aligned in their file offsets as the linker lays them out,
//! and never writable and executable at once.

use arch::layout::{is_user_range, PAGE_SIZE};

/// Why an ELF file was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// Not an ELF64 little-endian AArch64 executable.
    NotAnAarch64Executable,
    /// A header or segment lies outside the file.
    Truncated,
    /// A segment is outside the user half or wraps around.
    OutsideUserSpace,
    /// A segment asks to be writable and executable.
    WritableAndExecutable,
    /// Offsets and addresses disagree modulo the page size, or sizes do.
    BadLayout,
    /// More loadable segments than the kernel supports.
    TooManySegments,
}

/// Segment permission: read (`PF_R`).
pub const PF_R: u32 = 4;
/// Segment permission: write (`PF_W`).
pub const PF_W: u32 = 2;
/// Segment permission: execute (`PF_X`).
pub const PF_X: u32 = 1;

const PT_LOAD: u32 = 1;
const ET_EXEC: u16 = 2;
const EM_AARCH64: u16 = 183;
const MAX_SEGMENTS: usize = 8;

/// One loadable segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Where it goes in the user address space.
    pub vaddr: u64,
    /// Bytes in memory (the part past `file_size` is zero).
    pub mem_size: u64,
    /// Offset of its bytes in the file.
    pub offset: u64,
    /// Bytes present in the file.
    pub file_size: u64,
    /// `PF_*` flags.
    pub flags: u32,
}

impl Segment {
    /// Is the segment writable?
    pub fn writable(&self) -> bool {
        self.flags & PF_W != 0
    }

    /// Is the segment executable?
    pub fn executable(&self) -> bool {
        self.flags & PF_X != 0
    }
}

/// A checked user program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Entry point.
    pub entry: u64,
    /// Loadable segments, in file order.
    pub segments: heapless::Vec<Segment, MAX_SEGMENTS>,
}

/// The `N` bytes at `at`, or `Truncated`. The end is computed with
/// `checked_add`: offsets come from the file, and one near `usize::MAX`
/// must be refused, not wrap (found by the host fuzzer).
fn bytes_at<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N], ElfError> {
    let end = at.checked_add(N).ok_or(ElfError::Truncated)?;
    let bytes = data.get(at..end).ok_or(ElfError::Truncated)?;
    let mut word = [0u8; N];
    word.copy_from_slice(bytes);
    Ok(word)
}

fn u16_at(data: &[u8], at: usize) -> Result<u16, ElfError> {
    bytes_at(data, at).map(u16::from_le_bytes)
}

fn u32_at(data: &[u8], at: usize) -> Result<u32, ElfError> {
    bytes_at(data, at).map(u32::from_le_bytes)
}

fn u64_at(data: &[u8], at: usize) -> Result<u64, ElfError> {
    bytes_at(data, at).map(u64::from_le_bytes)
}

/// Checks `file` and lists its loadable segments.
pub fn parse(file: &[u8]) -> Result<Program, ElfError> {
    let ident = file.get(0..16).ok_or(ElfError::NotAnAarch64Executable)?;
    // Magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT.
    if ident[0..4] != *b"\x7fELF" || ident[4] != 2 || ident[5] != 1 || ident[6] != 1 {
        return Err(ElfError::NotAnAarch64Executable);
    }
    if u16_at(file, 16)? != ET_EXEC || u16_at(file, 18)? != EM_AARCH64 {
        return Err(ElfError::NotAnAarch64Executable);
    }
    let entry = u64_at(file, 24)?;
    let ph_offset = u64_at(file, 32)? as usize;
    let ph_entry_size = u16_at(file, 54)? as usize;
    let ph_count = u16_at(file, 56)? as usize;
    if ph_entry_size < 56 {
        return Err(ElfError::NotAnAarch64Executable);
    }
    let mut segments = heapless::Vec::new();
    for index in 0..ph_count {
        let at = ph_offset
            .checked_add(index * ph_entry_size)
            .ok_or(ElfError::Truncated)?;
        if u32_at(file, at)? != PT_LOAD {
            continue;
        }
        let segment = Segment {
            flags: u32_at(file, at + 4)?,
            offset: u64_at(file, at + 8)?,
            vaddr: u64_at(file, at + 16)?,
            file_size: u64_at(file, at + 32)?,
            mem_size: u64_at(file, at + 40)?,
        };
        check_segment(&segment, file.len() as u64)?;
        segments
            .push(segment)
            .map_err(|_| ElfError::TooManySegments)?;
    }
    let entry_is_code = segments
        .iter()
        .any(|s| s.executable() && entry >= s.vaddr && entry - s.vaddr < s.mem_size);
    if !entry_is_code {
        return Err(ElfError::BadLayout);
    }
    Ok(Program { entry, segments })
}

fn check_segment(segment: &Segment, file_len: u64) -> Result<(), ElfError> {
    if segment.writable() && segment.executable() {
        return Err(ElfError::WritableAndExecutable);
    }
    if segment.file_size > segment.mem_size {
        return Err(ElfError::BadLayout);
    }
    match segment.offset.checked_add(segment.file_size) {
        Some(end) if end <= file_len => {}
        _ => return Err(ElfError::Truncated),
    }
    if !is_user_range(segment.vaddr, segment.mem_size) || segment.vaddr == 0 {
        return Err(ElfError::OutsideUserSpace);
    }
    if segment.vaddr % PAGE_SIZE != segment.offset % PAGE_SIZE {
        return Err(ElfError::BadLayout);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a minimal AArch64 executable with the given segments
    /// `(vaddr, flags, bytes, mem_size)`.
    pub(crate) fn build_elf(entry: u64, segments: &[(u64, u32, &[u8], u64)]) -> std::vec::Vec<u8> {
        let ph_offset = 64usize;
        let data_start = 0x1000usize;
        let mut file = vec![0u8; data_start];
        file[0..4].copy_from_slice(b"\x7fELF");
        file[4] = 2;
        file[5] = 1;
        file[6] = 1;
        file[16..18].copy_from_slice(&ET_EXEC.to_le_bytes());
        file[18..20].copy_from_slice(&EM_AARCH64.to_le_bytes());
        file[24..32].copy_from_slice(&entry.to_le_bytes());
        file[32..40].copy_from_slice(&(ph_offset as u64).to_le_bytes());
        file[54..56].copy_from_slice(&56u16.to_le_bytes());
        file[56..58].copy_from_slice(&(segments.len() as u16).to_le_bytes());
        for (i, (vaddr, flags, bytes, mem_size)) in segments.iter().enumerate() {
            // Keep offset ≡ vaddr (mod page) as a linker does.
            let page_offset = (*vaddr % PAGE_SIZE) as usize;
            while !file.len().is_multiple_of(PAGE_SIZE as usize) {
                file.push(0);
            }
            let offset = file.len() + page_offset;
            file.resize(offset, 0);
            file.extend_from_slice(bytes);
            let ph = ph_offset + i * 56;
            file[ph..ph + 4].copy_from_slice(&PT_LOAD.to_le_bytes());
            file[ph + 4..ph + 8].copy_from_slice(&flags.to_le_bytes());
            file[ph + 8..ph + 16].copy_from_slice(&(offset as u64).to_le_bytes());
            file[ph + 16..ph + 24].copy_from_slice(&vaddr.to_le_bytes());
            file[ph + 32..ph + 40].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
            file[ph + 40..ph + 48].copy_from_slice(&mem_size.to_le_bytes());
        }
        file
    }

    #[test]
    fn accepts_a_well_formed_program() {
        let elf = build_elf(
            0x40_0000,
            &[
                (0x40_0000, PF_R | PF_X, &[1, 2, 3, 4], 4),
                (0x40_1000, PF_R | PF_W, &[5], 0x2000),
            ],
        );
        let program = parse(&elf).expect("valid");
        assert_eq!(program.entry, 0x40_0000);
        assert_eq!(program.segments.len(), 2);
        assert!(program.segments[0].executable());
        assert!(program.segments[1].writable());
        assert_eq!(program.segments[1].mem_size, 0x2000);
    }

    #[test]
    fn refuses_writable_code() {
        let elf = build_elf(0x40_0000, &[(0x40_0000, PF_R | PF_W | PF_X, &[0; 4], 4)]);
        assert_eq!(parse(&elf), Err(ElfError::WritableAndExecutable));
    }

    #[test]
    fn refuses_kernel_addresses_and_truncation() {
        let kernel = build_elf(
            0xFFFF_0000_0000_0000,
            &[(0xFFFF_0000_0000_0000, PF_R | PF_X, &[0; 4], 4)],
        );
        assert_eq!(parse(&kernel), Err(ElfError::OutsideUserSpace));
        let mut short = build_elf(0x40_0000, &[(0x40_0000, PF_R | PF_X, &[0; 64], 64)]);
        short.truncate(short.len() - 1);
        assert_eq!(parse(&short), Err(ElfError::Truncated));
        assert_eq!(parse(b"not an elf"), Err(ElfError::NotAnAarch64Executable));
        assert_eq!(parse(&[]), Err(ElfError::NotAnAarch64Executable));
    }

    #[test]
    fn program_header_offset_near_the_top_is_truncated_not_wrapped() {
        let mut elf = build_elf(0x40_0000, &[(0x40_0000, PF_R | PF_X, &[0; 4], 4)]);
        elf[32..40].copy_from_slice(&(u64::MAX - 2).to_le_bytes());
        assert_eq!(parse(&elf), Err(ElfError::Truncated));
    }

    #[test]
    fn entry_must_be_in_code() {
        let elf = build_elf(0x50_0000, &[(0x40_0000, PF_R | PF_X, &[0; 4], 4)]);
        assert_eq!(parse(&elf), Err(ElfError::BadLayout));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut seed = 0x1234_5678_u64;
        let base = build_elf(0x40_0000, &[(0x40_0000, PF_R | PF_X, &[0; 16], 16)]);
        for _ in 0..2000 {
            let mut file = base.clone();
            for _ in 0..8 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at = (seed as usize) % 200;
                file[at] = (seed >> 32) as u8;
            }
            let _ = parse(&file);
        }
    }
}
