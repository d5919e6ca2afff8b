//! Writes small ELF64 AArch64 executables for tests, fuzz seeds and host
//! harnesses: an ELF header, the given program headers at offset 64 and a
//! payload of `len` bytes around them. Only what the parser reads is
//! filled in (and `p_paddr`, as a linker writes it); everything else,
//! `e_ehsize` among it, stays 0, so a file is byte for byte what the
//! callers wrote by hand before this module.
//!
//! Compiled for this crate's tests and with the `elf-writer` feature
//! (enabled only in other crates' `[dev-dependencies]`): it allocates, and
//! the kernel and user programs never write ELF files.
use super::{ELF_HEADER_SIZE, PROGRAM_HEADER_SIZE};
use alloc::vec::Vec;

/// `PT_LOAD`: a segment to load.
pub const PT_LOAD: u32 = super::PT_LOAD;
/// `PT_NOTE`: a program header the loaders skip.
pub const PT_NOTE: u32 = 4;
/// `PF_X`: executable.
pub const PF_X: u32 = super::PF_X;
/// `PF_W`: writable.
pub const PF_W: u32 = super::PF_W;
/// `PF_R`: readable.
pub const PF_R: u32 = super::PF_R;

/// One ELF64 program header, every field as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramHeader {
    /// `p_type`.
    pub kind: u32,
    /// `p_flags`: `PF_R`, `PF_W`, `PF_X`.
    pub flags: u32,
    /// `p_offset`: where the segment's file bytes start.
    pub offset: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_paddr`; the parser ignores it.
    pub paddr: u64,
    /// `p_filesz`.
    pub file_size: u64,
    /// `p_memsz`.
    pub mem_size: u64,
    /// `p_align`; the parser ignores it.
    pub align: u64,
}

/// A `PT_LOAD` header with `p_paddr` = `p_vaddr` and `p_align` 0.
pub const fn load(
    flags: u32,
    offset: u64,
    vaddr: u64,
    file_size: u64,
    mem_size: u64,
) -> ProgramHeader {
    ProgramHeader {
        kind: PT_LOAD,
        flags,
        offset,
        vaddr,
        paddr: vaddr,
        file_size,
        mem_size,
        align: 0,
    }
}

/// The byte at `offset` of a file [`elf`] writes (outside the headers): a
/// pattern that changes within and across pages, so a byte copied from
/// the wrong place shows.
pub const fn pattern(offset: usize) -> u8 {
    (offset as u8) ^ ((offset >> 8) as u8) ^ 0x5a
}

/// An AArch64 executable of `len` bytes starting at `entry`, with
/// `headers` at offset 64 and [`pattern`] bytes everywhere else past the
/// 64-byte ELF header.
pub fn elf(entry: u64, headers: &[ProgramHeader], len: usize) -> Vec<u8> {
    elf_filled(entry, headers, len, pattern)
}

/// The layout `servers/sdk/user.ld` and init's linker script give, as
/// [`elf`] writes it: entry 0x40_0010; text RX at 4 MiB (file 0x1000,
/// 0x1800 bytes), rodata R at 0x40_2000 (file 0x3000, 0x100 bytes),
/// data+bss RW at 0x40_3000 (file 0x4000, 0x20 bytes, 0x2010 in memory);
/// 0x4020 bytes in all.
pub fn three_segments() -> Vec<u8> {
    elf(
        0x40_0010,
        &[
            load(PF_R | PF_X, 0x1000, 0x40_0000, 0x1800, 0x1800),
            load(PF_R, 0x3000, 0x40_2000, 0x100, 0x100),
            load(PF_R | PF_W, 0x4000, 0x40_3000, 0x20, 0x2010),
        ],
        0x4020,
    )
}

/// As [`elf`], with `fill(offset)` as the byte at every offset past the
/// ELF header that no program header covers.
///
/// Panics if `len` cannot hold the ELF header and `headers`.
pub fn elf_filled(
    entry: u64,
    headers: &[ProgramHeader],
    len: usize,
    fill: impl Fn(usize) -> u8,
) -> Vec<u8> {
    let mut file: Vec<u8> = (0..len).map(fill).collect();
    file[..ELF_HEADER_SIZE].fill(0);
    file[0..4].copy_from_slice(b"\x7fELF");
    file[4] = super::ELFCLASS64;
    file[5] = super::ELFDATA2LSB;
    file[6] = super::EV_CURRENT;
    file[16..18].copy_from_slice(&super::ET_EXEC.to_le_bytes());
    file[18..20].copy_from_slice(&super::EM_AARCH64.to_le_bytes());
    file[24..32].copy_from_slice(&entry.to_le_bytes());
    file[32..40].copy_from_slice(&(ELF_HEADER_SIZE as u64).to_le_bytes());
    file[54..56].copy_from_slice(&(PROGRAM_HEADER_SIZE as u16).to_le_bytes());
    file[56..58].copy_from_slice(&(headers.len() as u16).to_le_bytes());
    for (i, h) in headers.iter().enumerate() {
        let at = ELF_HEADER_SIZE + PROGRAM_HEADER_SIZE * i;
        let ph = &mut file[at..at + PROGRAM_HEADER_SIZE];
        ph[0..4].copy_from_slice(&h.kind.to_le_bytes());
        ph[4..8].copy_from_slice(&h.flags.to_le_bytes());
        ph[8..16].copy_from_slice(&h.offset.to_le_bytes());
        ph[16..24].copy_from_slice(&h.vaddr.to_le_bytes());
        ph[24..32].copy_from_slice(&h.paddr.to_le_bytes());
        ph[32..40].copy_from_slice(&h.file_size.to_le_bytes());
        ph[40..48].copy_from_slice(&h.mem_size.to_le_bytes());
        ph[48..56].copy_from_slice(&h.align.to_le_bytes());
    }
    file
}
