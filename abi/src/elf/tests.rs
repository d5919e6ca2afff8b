//! Host tests of the ELF checks: what a linker lays out is accepted, and
//! each malformed header or segment is refused with its own reason.

use super::*;
use std::vec;
use std::vec::Vec;

const PT_NOTE: u32 = 4;

/// One program header as the test writes it.
#[derive(Clone, Copy)]
struct Ph {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    file_size: u64,
    mem_size: u64,
}

fn load(flags: u32, offset: u64, vaddr: u64, file_size: u64, mem_size: u64) -> Ph {
    Ph {
        kind: PT_LOAD,
        flags,
        offset,
        vaddr,
        file_size,
        mem_size,
    }
}

/// An AArch64 executable of `len` bytes (pattern bytes after the headers)
/// with `headers` at offset 64.
fn elf(entry: u64, headers: &[Ph], len: usize) -> Vec<u8> {
    let mut file: Vec<u8> = (0..len).map(|i| (i as u8) ^ 0x5a).collect();
    file[..64].fill(0);
    file[0..4].copy_from_slice(b"\x7fELF");
    file[4] = ELFCLASS64;
    file[5] = ELFDATA2LSB;
    file[6] = EV_CURRENT;
    file[16..18].copy_from_slice(&ET_EXEC.to_le_bytes());
    file[18..20].copy_from_slice(&EM_AARCH64.to_le_bytes());
    file[24..32].copy_from_slice(&entry.to_le_bytes());
    file[32..40].copy_from_slice(&64u64.to_le_bytes());
    file[54..56].copy_from_slice(&56u16.to_le_bytes());
    file[56..58].copy_from_slice(&(headers.len() as u16).to_le_bytes());
    for (i, h) in headers.iter().enumerate() {
        let at = 64 + 56 * i;
        file[at..at + 56].fill(0);
        file[at..at + 4].copy_from_slice(&h.kind.to_le_bytes());
        file[at + 4..at + 8].copy_from_slice(&h.flags.to_le_bytes());
        file[at + 8..at + 16].copy_from_slice(&h.offset.to_le_bytes());
        file[at + 16..at + 24].copy_from_slice(&h.vaddr.to_le_bytes());
        file[at + 32..at + 40].copy_from_slice(&h.file_size.to_le_bytes());
        file[at + 40..at + 48].copy_from_slice(&h.mem_size.to_le_bytes());
    }
    file
}

/// The layout `servers/sdk/user.ld` and init's linker script give: text
/// RX at 4 MiB, rodata R, data+bss RW with bss past the file bytes.
fn three_segments() -> Vec<u8> {
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

fn refused(file: &[u8]) -> ElfError {
    parse(file).expect_err("must be refused")
}

fn code() -> Ph {
    load(PF_R | PF_X, 0x1000, 0x40_0000, 0x100, 0x100)
}

fn with_code(segments: &[Ph]) -> Vec<u8> {
    let mut all = vec![code()];
    all.extend_from_slice(segments);
    elf(0x40_0000, &all, 0x3000)
}

#[test]
fn a_linker_layout_parses_into_sorted_segments_with_their_rights() {
    let file = three_segments();
    let image = parse(&file).unwrap();
    assert_eq!(image.entry, 0x40_0010);
    let rights: Vec<_> = image
        .segments()
        .iter()
        .map(|s| (s.vaddr, s.rights))
        .collect();
    assert_eq!(
        rights,
        [
            (0x40_0000, MapRights::ReadExecute),
            (0x40_2000, MapRights::Read),
            (0x40_3000, MapRights::ReadWrite)
        ]
    );
    assert_eq!(image.segments()[2].file_size, 0x20);
    assert_eq!(image.segments()[2].mem_size, 0x2010);
    assert_eq!(image.page_count(), 2 + 1 + 3);
}

#[test]
fn segments_come_back_sorted_whatever_the_header_order() {
    let file = elf(
        0x40_0000,
        &[
            load(PF_R | PF_W, 0x2000, 0x50_0000, 8, 8),
            load(PF_R | PF_X, 0x1000, 0x40_0000, 8, 8),
        ],
        0x3000,
    );
    let image = parse(&file).unwrap();
    assert_eq!(image.segments()[0].vaddr, 0x40_0000);
    assert_eq!(image.segments()[1].vaddr, 0x50_0000);
}

#[test]
fn non_loadable_and_empty_headers_are_skipped() {
    let note = Ph {
        kind: PT_NOTE,
        flags: PF_R | PF_W | PF_X,
        offset: u64::MAX,
        vaddr: 0,
        file_size: u64::MAX,
        mem_size: u64::MAX,
    };
    let empty = load(PF_R | PF_W | PF_X, 0, 0, 0, 0);
    let code = load(PF_R | PF_X, 0x1000, 0x40_0000, 0x10, 0x10);
    let file = elf(0x40_0000, &[note, empty, code], 0x1010);
    assert_eq!(parse(&file).unwrap().segments().len(), 1);
}

#[test]
fn malformed_headers_are_refused_with_their_reason() {
    let good = elf(0x40_0000, &[code()], 0x1100);
    assert!(parse(&good).is_ok());
    assert_eq!(refused(&[]), ElfError::Truncated);
    assert_eq!(refused(b"not an elf"), ElfError::Truncated);
    assert_eq!(refused(&good[..63]), ElfError::Truncated);
    let patched = |at: usize, bytes: &[u8]| {
        let mut file = good.clone();
        file[at..at + bytes.len()].copy_from_slice(bytes);
        file
    };
    assert_eq!(refused(&patched(0, b"\x7fELG")), ElfError::NotElf);
    assert_eq!(refused(&patched(4, &[1])), ElfError::NotElf64LittleEndian);
    assert_eq!(refused(&patched(5, &[2])), ElfError::NotElf64LittleEndian);
    assert_eq!(refused(&patched(6, &[0])), ElfError::NotElf64LittleEndian);
    assert_eq!(refused(&patched(16, &[3, 0])), ElfError::NotExecutable);
    assert_eq!(refused(&patched(18, &[62, 0])), ElfError::NotAarch64);
    assert_eq!(
        refused(&patched(54, &[32, 0])),
        ElfError::BadProgramHeaderSize
    );
    assert_eq!(
        refused(&patched(56, &[17, 0])),
        ElfError::TooManyProgramHeaders
    );
    // Program headers past the end.
    assert_eq!(
        refused(&patched(32, &0x10e0u64.to_le_bytes())),
        ElfError::Truncated
    );
    assert_eq!(refused(&patched(56, &[0, 0])), ElfError::NoSegments);
    assert_eq!(
        refused(&patched(24, &0x40_0100u64.to_le_bytes())),
        ElfError::EntryOutsideCode
    );
}

/// The host fuzzer's first finding (`fuzz/corpus/elf_image/
/// program-header-offset-overflow`): an offset near `u64::MAX` must be
/// refused, not wrap past the end of the file.
#[test]
fn program_header_offset_near_the_top_is_truncated_not_wrapped() {
    let good = elf(0x40_0000, &[code()], 0x1100);
    for offset in [u64::MAX, u64::MAX - 2, u64::MAX - 60] {
        let mut file = good.clone();
        file[32..40].copy_from_slice(&offset.to_le_bytes());
        assert_eq!(refused(&file), ElfError::Truncated, "{offset:#x}");
    }
}

#[test]
fn bad_segments_are_refused_with_their_reason() {
    let rw =
        |offset, vaddr, file_size, mem_size| load(PF_R | PF_W, offset, vaddr, file_size, mem_size);
    assert_eq!(
        refused(&with_code(&[load(
            PF_R | PF_W | PF_X,
            0x2000,
            0x50_0000,
            8,
            8
        )])),
        ElfError::WritableAndExecutable
    );
    assert_eq!(
        refused(&with_code(&[load(0, 0x2000, 0x50_0000, 8, 8)])),
        ElfError::NoAccess
    );
    assert_eq!(
        refused(&with_code(&[rw(0x2000, 0x50_0000, 9, 8)])),
        ElfError::FileSizeAboveMemorySize
    );
    assert_eq!(
        refused(&with_code(&[rw(0x2000, 0x50_0000, 0x1001, 0x1001)])),
        ElfError::SegmentOutsideFile
    );
    assert_eq!(
        refused(&with_code(&[rw(u64::MAX - 7, 0x50_0ff8, 8, 8)])),
        ElfError::SegmentOutsideFile
    );
    assert_eq!(
        refused(&with_code(&[rw(0x2008, 0x50_0000, 8, 8)])),
        ElfError::Misaligned
    );
    // Page 0 (anywhere in it, not only address 0), the top of the image
    // range, wrapping sizes and the kernel half.
    for vaddr in [0, 8, 0xff8] {
        assert_eq!(
            refused(&with_code(&[rw(0x2000 + vaddr, vaddr, 8, 8)])),
            ElfError::OutsideImageRange,
            "{vaddr:#x}"
        );
    }
    assert_eq!(
        refused(&with_code(&[rw(0x2000, IMAGE_END - 0x1000, 8, 0x1001)])),
        ElfError::OutsideImageRange
    );
    assert_eq!(
        refused(&with_code(&[rw(0x2000, IMAGE_END, 8, 8)])),
        ElfError::OutsideImageRange
    );
    assert_eq!(
        refused(&with_code(&[rw(0x2000, 0x50_0000, 8, u64::MAX)])),
        ElfError::OutsideImageRange
    );
    for kernel in [0xffff_0000_0000_0000, 0xffff_ffff_c000_0000] {
        assert_eq!(
            refused(&with_code(&[rw(0x2000, kernel, 8, 8)])),
            ElfError::OutsideImageRange
        );
    }
    // Exactly up to the end is fine.
    assert!(parse(&with_code(&[rw(0x2000, IMAGE_END - 0x1000, 8, 0x1000)])).is_ok());
}

#[test]
fn code_in_the_kernel_half_is_refused() {
    let kernel = 0xffff_0000_0000_0000;
    let file = elf(
        kernel,
        &[load(PF_R | PF_X, 0x1000, kernel, 0x100, 0x100)],
        0x1100,
    );
    assert_eq!(refused(&file), ElfError::OutsideImageRange);
}

#[test]
fn the_image_range_is_the_user_half_without_page_zero() {
    assert_eq!(IMAGE_START, PAGE_SIZE);
    assert_eq!(IMAGE_END, 1 << 48);
}

#[test]
fn segments_sharing_a_page_overlap_in_either_order() {
    let tail_of_code = load(PF_R, 0x2100, 0x40_0100, 8, 8);
    assert_eq!(refused(&with_code(&[tail_of_code])), ElfError::Overlap);
    let before = load(PF_R, 0x2ff0, 0x3f_fff0, 0x10, 0x20);
    assert_eq!(refused(&with_code(&[before])), ElfError::Overlap);
    let adjacent = load(PF_R, 0x2000, 0x40_1000, 8, 8);
    assert!(parse(&with_code(&[adjacent])).is_ok());
}

#[test]
fn segment_and_page_counts_are_bounded() {
    let pages = |n: u64| load(PF_R | PF_W, 0x2000, 0x100_0000, 0, n * 4096);
    assert!(parse(&with_code(&[pages(MAX_PAGES as u64 - 1)])).is_ok());
    assert_eq!(
        refused(&with_code(&[pages(MAX_PAGES as u64)])),
        ElfError::TooManyPages
    );
    let many: Vec<Ph> = (0..MAX_SEGMENTS as u64)
        .map(|i| load(PF_R, 0x2000, 0x100_0000 + 0x1000 * i, 8, 8))
        .collect();
    assert_eq!(refused(&with_code(&many)), ElfError::TooManySegments);
    assert!(parse(&with_code(&many[1..])).is_ok());
}

#[test]
fn a_page_limit_of_its_own_changes_only_the_page_check() {
    // One page of code and `n` pages of bss.
    let file = |n: u64| with_code(&[load(PF_R | PF_W, 0x2000, 0x100_0000, 0, n * 4096)]);
    let big = file(MAX_PAGES as u64);
    assert_eq!(parse(&big), Err(ElfError::TooManyPages));
    let image = parse_within(&big, MAX_PAGES + 1).unwrap();
    assert_eq!(image.page_count(), MAX_PAGES + 1);
    assert_eq!(
        parse_within(&file(9), 9),
        Err(ElfError::TooManyPages),
        "a limit below MAX_PAGES holds too"
    );
    assert!(parse_within(&file(8), 9).is_ok());
    // Every other refusal is the same under any limit.
    let bad = with_code(&[load(PF_R | PF_W | PF_X, 0x2000, 0x50_0000, 8, 8)]);
    assert_eq!(
        parse_within(&bad, usize::MAX),
        Err(ElfError::WritableAndExecutable)
    );
}

#[test]
fn every_truncation_of_a_valid_file_is_refused_without_panicking() {
    let file = three_segments();
    for len in 0..file.len() {
        assert!(parse(&file[..len]).is_err(), "{len}");
    }
}

#[test]
fn random_bytes_in_the_headers_never_panic() {
    let mut seed = 0x1234_5678_u64;
    let base = three_segments();
    for _ in 0..2000 {
        let mut file = base.clone();
        for _ in 0..8 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed as usize) % 232;
            file[at] = (seed >> 32) as u8;
        }
        let _ = parse(&file);
    }
}
