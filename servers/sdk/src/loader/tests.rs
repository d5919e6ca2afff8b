//! Host tests of planning and building (against a fake address space),
//! and of `load_elf`'s checks before any syscall. The ELF checks
//! themselves are `abi::elf`'s, tested there.

use super::*;
use abi::vspace::MapRights;
use std::collections::BTreeMap;
use std::vec::Vec;

const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
const PT_LOAD: u32 = 1;

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

/// The byte at `offset` of every test file: a pattern, so a misplaced
/// copy shows.
fn pattern(offset: usize) -> u8 {
    (offset as u8) ^ ((offset >> 8) as u8) ^ 0x5a
}

/// An AArch64 executable of `len` bytes (pattern bytes after the headers)
/// with `headers` at offset 64.
fn elf(entry: u64, headers: &[Ph], len: usize) -> Vec<u8> {
    let mut file: Vec<u8> = (0..len).map(pattern).collect();
    file[..64].fill(0);
    file[0..4].copy_from_slice(b"\x7fELF");
    file[4] = 2;
    file[5] = 1;
    file[6] = 1;
    file[16..18].copy_from_slice(&2u16.to_le_bytes());
    file[18..20].copy_from_slice(&183u16.to_le_bytes());
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

/// The layout `servers/sdk/user.ld` gives: text RX at 4 MiB, rodata R,
/// data+bss RW with bss past the file bytes.
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

/// A fake address space: frames are byte arrays, mappings a map from
/// address to (frame, rights). `fail_at` makes the n-th step fail.
#[derive(Default)]
struct FakeSpace {
    frames: Vec<[u8; 4096]>,
    mappings: BTreeMap<u64, (usize, MapRights)>,
    steps: usize,
    fail_at: Option<usize>,
}

#[derive(Debug, PartialEq, Eq)]
struct StepFailed(usize);

impl FakeSpace {
    fn step(&mut self) -> Result<(), StepFailed> {
        self.steps += 1;
        if self.fail_at == Some(self.steps) {
            return Err(StepFailed(self.steps));
        }
        Ok(())
    }

    /// The byte mapped at `va`, if any.
    fn byte(&self, va: u64) -> Option<u8> {
        let (frame, _) = self.mappings.get(&(va & !0xfff))?;
        Some(self.frames[*frame][(va & 0xfff) as usize])
    }
}

impl SpaceBuilder for FakeSpace {
    type Frame = usize;
    type Error = StepFailed;

    fn new_frame(&mut self) -> Result<usize, StepFailed> {
        self.step()?;
        self.frames.push([0; 4096]);
        Ok(self.frames.len() - 1)
    }

    fn write(&mut self, frame: &usize, offset: usize, bytes: &[u8]) -> Result<(), StepFailed> {
        self.step()?;
        assert!(offset + bytes.len() <= 4096, "write past the page");
        self.frames[*frame][offset..offset + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    fn map(&mut self, frame: &usize, va: u64, rights: MapRights) -> Result<(), StepFailed> {
        self.step()?;
        assert_eq!(va % 4096, 0);
        assert!(
            self.mappings.insert(va, (*frame, rights)).is_none(),
            "{va:#x} mapped twice"
        );
        Ok(())
    }
}

/// Builds `file` into a fake space and checks every byte of every page
/// against the segments: file bytes where the segment has them, zero
/// elsewhere.
fn build_and_check(file: &[u8]) -> FakeSpace {
    let plan = plan(file).expect("a valid image");
    let mut space = FakeSpace::default();
    plan.build(&mut space).expect("the fake never fails");
    assert_eq!(space.frames.len(), plan.page_count());
    assert_eq!(space.mappings.len(), plan.page_count());
    for segment in plan.image().segments() {
        for va in segment.first_page()..segment.end_page() {
            let want = if va >= segment.vaddr && va - segment.vaddr < segment.file_size {
                file[(segment.offset + va - segment.vaddr) as usize]
            } else {
                0
            };
            assert_eq!(space.byte(va), Some(want), "{va:#x}");
            assert_eq!(space.mappings[&(va & !0xfff)].1, segment.rights);
        }
    }
    space
}

#[test]
fn the_plan_names_each_page_and_its_file_bytes() {
    let file = three_segments();
    let plan = plan(&file).unwrap();
    let pages: Vec<PagePlan> = plan.pages().collect();
    let want = [
        (0x40_0000, MapRights::ReadExecute, 0x1000..0x2000, 0),
        (0x40_1000, MapRights::ReadExecute, 0x2000..0x2800, 0),
        (0x40_2000, MapRights::Read, 0x3000..0x3100, 0),
        (0x40_3000, MapRights::ReadWrite, 0x4000..0x4020, 0),
        // bss only: zero pages.
        (0x40_4000, MapRights::ReadWrite, 0..0, 0),
        (0x40_5000, MapRights::ReadWrite, 0..0, 0),
    ];
    assert_eq!(pages.len(), want.len());
    for (page, (va, rights, bytes, offset)) in pages.iter().zip(want) {
        assert_eq!(
            (
                page.va,
                page.rights,
                page.file_bytes.clone(),
                page.page_offset
            ),
            (va, rights, bytes, offset)
        );
    }
}

#[test]
fn building_copies_file_bytes_and_leaves_the_rest_zero() {
    let space = build_and_check(&three_segments());
    // Past the file bytes of the data segment: bss is zero.
    assert_eq!(space.byte(0x40_3020), Some(0));
    assert_eq!(space.byte(0x40_6000), None, "nothing past the image");
}

#[test]
fn a_segment_starting_and_ending_inside_pages_keeps_its_offsets() {
    // Offset 0x1234 ≡ address 0x50_0234 (mod page); 0x2000 file bytes
    // spill over three pages, memory ends inside a fourth.
    let file = elf(
        0x50_0234,
        &[load(PF_R | PF_X, 0x1234, 0x50_0234, 0x2000, 0x2e00)],
        0x4000,
    );
    let plan = plan(&file).unwrap();
    let pages: Vec<PagePlan> = plan.pages().collect();
    assert_eq!(pages.len(), 4);
    assert_eq!(pages[0].page_offset, 0x234);
    assert_eq!(pages[0].file_bytes, 0x1234..0x2000);
    assert_eq!(pages[1].file_bytes, 0x2000..0x3000);
    assert_eq!(pages[2].file_bytes, 0x3000..0x3234);
    assert_eq!(pages[3].file_bytes, 0..0);
    build_and_check(&file);
}

#[test]
fn a_building_step_that_fails_stops_the_build() {
    let file = three_segments();
    let plan = plan(&file).unwrap();
    let mut all = FakeSpace::default();
    plan.build(&mut all).unwrap();
    for fail_at in 1..=all.steps {
        let mut space = FakeSpace {
            fail_at: Some(fail_at),
            ..FakeSpace::default()
        };
        assert_eq!(plan.build(&mut space), Err(StepFailed(fail_at)));
        assert_eq!(space.steps, fail_at, "no step after the failure");
    }
}

fn memory(slots: core::ops::Range<u64>, scratch: u64) -> TaskMemory {
    use crate::ipc::Cptr;
    use crate::vspace::VSpace;
    TaskMemory {
        untyped: Cptr(5),
        own: VSpace(Cptr(6)),
        target: VSpace(Cptr(7)),
        slots,
        scratch,
    }
}

#[test]
fn load_elf_checks_everything_before_its_first_syscall() {
    let window = abi::vspace::FRAME_MAP_START;
    let file = three_segments();
    let nothing_used = |error| LoadFailure {
        error,
        slots_used: 20..20,
    };
    assert_eq!(
        load_elf(&file[..10], &memory(20..40, window)),
        Err(nothing_used(LoadError::Elf(ElfError::Truncated)))
    );
    for scratch in [0, 0x40_0000, window + 8, abi::IPC_BUFFER_ADDRESS] {
        assert_eq!(
            load_elf(&file, &memory(20..40, scratch)),
            Err(nothing_used(LoadError::ScratchOutsideWindow))
        );
    }
    assert_eq!(
        load_elf(&file, &memory(20..25, window)),
        Err(nothing_used(LoadError::NotEnoughSlots {
            needed: 6,
            available: 5
        }))
    );
    assert_eq!(
        load_elf(
            &file,
            &memory(core::ops::Range { start: 20, end: 10 }, window)
        ),
        Err(nothing_used(LoadError::NotEnoughSlots {
            needed: 6,
            available: 0
        }))
    );
    // On the host every syscall fails: the first Retype stops the load
    // with no slot used.
    assert_eq!(
        load_elf(&file, &memory(20..26, window)),
        Err(nothing_used(LoadError::Retype(
            abi::ErrorCode::InvalidSyscall
        )))
    );
}
