//! Loading a program into a space the kernel builds: the shared ELF
//! checks (`abi::elf`) with the kernel's page limit, every segment in the
//! user half with its own rights and bytes, and nothing kept on refusal.

use super::*;
use arch::boards::PhysRange;
use arch::mmu::{AsidAllocator, AsidBits};
use std::collections::HashMap;
use std::vec::Vec;

const RAM: PhysRange = PhysRange {
    start: 0x4000_0000,
    size: 4 << 20,
};

/// RAM as pages, allocated on first touch; all zero until written.
#[derive(Default)]
struct Ram(HashMap<u64, Vec<u8>>);

impl Ram {
    fn page(&mut self, pa: u64) -> &mut Vec<u8> {
        assert!((RAM.start..RAM.end()).contains(&pa), "{pa:#x} outside RAM");
        self.0
            .entry(pa & !(PAGE_SIZE - 1))
            .or_insert_with(|| vec![0; PAGE_SIZE as usize])
    }
}

impl PhysMemory for Ram {
    fn read_phys(&self, pa: u64, out: &mut [u8]) {
        let at = (pa % PAGE_SIZE) as usize;
        match self.0.get(&(pa & !(PAGE_SIZE - 1))) {
            Some(page) => out.copy_from_slice(&page[at..at + out.len()]),
            None => out.fill(0),
        }
    }
    fn write_phys(&mut self, pa: u64, data: &[u8]) {
        let at = (pa % PAGE_SIZE) as usize;
        self.page(pa)[at..at + data.len()].copy_from_slice(data);
    }
    fn read_phys_u64(&self, pa: u64) -> u64 {
        let mut word = [0; 8];
        self.read_phys(pa, &mut word);
        u64::from_le_bytes(word)
    }
    fn write_phys_u64(&mut self, pa: u64, value: u64) {
        self.write_phys(pa, &value.to_le_bytes());
    }
    fn zero_frame(&mut self, pa: u64) {
        self.page(pa).fill(0);
    }
}

const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

/// An AArch64 executable with `segments` `(flags, vaddr, bytes,
/// mem_size)`, each segment's bytes at a fresh page of the file with
/// offset ≡ address (mod page), as a linker lays them out.
fn elf(entry: u64, segments: &[(u32, u64, &[u8], u64)]) -> Vec<u8> {
    let mut file = vec![0u8; PAGE_SIZE as usize];
    file[0..4].copy_from_slice(b"\x7fELF");
    file[4..7].copy_from_slice(&[2, 1, 1]);
    file[16..18].copy_from_slice(&2u16.to_le_bytes());
    file[18..20].copy_from_slice(&183u16.to_le_bytes());
    file[24..32].copy_from_slice(&entry.to_le_bytes());
    file[32..40].copy_from_slice(&64u64.to_le_bytes());
    file[54..56].copy_from_slice(&56u16.to_le_bytes());
    file[56..58].copy_from_slice(&(segments.len() as u16).to_le_bytes());
    for (i, (flags, vaddr, bytes, mem_size)) in segments.iter().enumerate() {
        file.resize(file.len().next_multiple_of(PAGE_SIZE as usize), 0);
        let offset = file.len() as u64 + vaddr % PAGE_SIZE;
        file.resize(offset as usize, 0);
        file.extend_from_slice(bytes);
        let ph = 64 + 56 * i;
        file[ph..ph + 4].copy_from_slice(&1u32.to_le_bytes());
        file[ph + 4..ph + 8].copy_from_slice(&flags.to_le_bytes());
        file[ph + 8..ph + 16].copy_from_slice(&offset.to_le_bytes());
        file[ph + 16..ph + 24].copy_from_slice(&vaddr.to_le_bytes());
        file[ph + 32..ph + 40].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        file[ph + 40..ph + 48].copy_from_slice(&mem_size.to_le_bytes());
    }
    file
}

struct Machine {
    ram: Ram,
    frames: FrameAllocator,
    asids: AsidAllocator,
}

impl Machine {
    fn new() -> Machine {
        let mut frames = FrameAllocator::new();
        frames.add_ram(RAM, &[]);
        Machine {
            ram: Ram::default(),
            frames,
            asids: AsidAllocator::new(AsidBits::Eight),
        }
    }

    fn load(&mut self, file: &[u8]) -> Result<(AddressSpace, u64), SpaceError> {
        let asid = self.asids.assign(None, None).asid;
        AddressSpace::load(&mut self.ram, &mut self.frames, asid, file)
    }

    fn read(&self, space: &AddressSpace, va: u64, len: usize) -> Option<Vec<u8>> {
        let mut out = vec![0; len];
        space.copy_from_user(&self.ram, va, &mut out).ok()?;
        Some(out)
    }
}

/// Init's layout: text RX at 4 MiB, rodata R, data and bss RW, each
/// starting on a page of its own.
fn init_like() -> Vec<u8> {
    elf(
        0x40_0008,
        &[
            (
                PF_R | PF_X,
                0x40_0000,
                &[0xc0, 0x03, 0x5f, 0xd6, 1, 2, 3, 4, 5],
                9,
            ),
            (PF_R, 0x40_2000, b"rodata", 0x1800),
            (PF_R | PF_W, 0x40_4000, b"data", 0x3000),
        ],
    )
}

#[test]
fn each_segment_is_mapped_with_its_rights_and_bytes_and_zeros_past_them() {
    let mut machine = Machine::new();
    let (space, entry) = machine.load(&init_like()).expect("init's layout loads");
    assert_eq!(entry, 0x40_0008);
    assert_eq!(machine.read(&space, 0x40_0004, 5).unwrap(), [1, 2, 3, 4, 5]);
    assert_eq!(machine.read(&space, 0x40_2000, 6).unwrap(), b"rodata");
    assert_eq!(machine.read(&space, 0x40_4000, 4).unwrap(), b"data");
    // Past the file bytes (the rest of the page, and bss pages): zeros.
    assert_eq!(machine.read(&space, 0x40_0009, 8).unwrap(), [0; 8]);
    assert_eq!(machine.read(&space, 0x40_3ff8, 8).unwrap(), [0; 8]);
    assert_eq!(machine.read(&space, 0x40_6ff8, 8).unwrap(), [0; 8]);
    // Only data is writable; nothing between or past the segments and
    // nothing on page 0 is mapped.
    assert!(space
        .check_user_writable(&machine.ram, 0x40_4000, 0x3000)
        .is_ok());
    for va in [0x40_0000, 0x40_2000] {
        assert!(space.check_user_writable(&machine.ram, va, 1).is_err());
    }
    for va in [0, 0x40_1000, 0x40_7000] {
        assert_eq!(machine.read(&space, va, 1), None, "{va:#x}");
    }
    // Its pages, the stack, the IPC buffer, and its page tables.
    let pages = 1 + 2 + 3;
    assert!(space.frame_count() > pages + USER_STACK_PAGES as usize + 1);
    space.release(&mut machine.frames);
    assert_eq!(machine.frames.allocated(), 0);
}

#[test]
fn a_refused_file_takes_no_frame_and_says_why() {
    let mut machine = Machine::new();
    let kernel = 0xffff_0000_0000_0000;
    let refusals: [(Vec<u8>, ElfError); 5] = [
        (
            elf(kernel, &[(PF_R | PF_X, kernel, &[0; 4], 4)]),
            ElfError::OutsideImageRange,
        ),
        (
            elf(
                0x40_0000,
                &[(PF_R | PF_X, 0x40_0000, &[0; 4], 4), (PF_R, 8, &[0; 4], 4)],
            ),
            ElfError::OutsideImageRange,
        ),
        (
            elf(0x40_0000, &[(PF_R | PF_W | PF_X, 0x40_0000, &[0; 4], 4)]),
            ElfError::WritableAndExecutable,
        ),
        (
            elf(
                0x40_0000,
                &[
                    (PF_R | PF_X, 0x40_0000, &[0; 4], 4),
                    (PF_R, 0x40_0800, &[0; 4], 4),
                ],
            ),
            ElfError::Overlap,
        ),
        (
            elf(0x50_0000, &[(PF_R | PF_X, 0x40_0000, &[0; 4], 4)]),
            ElfError::EntryOutsideCode,
        ),
    ];
    for (file, why) in refusals {
        assert_eq!(machine.load(&file).err(), Some(SpaceError::Elf(why)));
        assert_eq!(machine.frames.allocated(), 0, "{why:?}");
    }
}

#[test]
fn the_page_limit_is_what_a_space_can_hold_not_the_sdks() {
    let bss = |pages: usize| {
        elf(
            0x40_0000,
            &[
                (PF_R | PF_X, 0x40_0000, &[0; 4], 4),
                (PF_R | PF_W, 0x100_0000, &[], pages as u64 * PAGE_SIZE),
            ],
        )
    };
    // Above the SDK's bound for one task: the kernel loads it.
    let mut machine = Machine::new();
    let (space, _) = machine.load(&bss(abi::elf::MAX_PAGES)).unwrap();
    assert_eq!(machine.read(&space, 0x100_0000, 1).unwrap(), [0]);
    space.release(&mut machine.frames);
    // Past what MAX_FRAMES leaves for the program: refused before a frame
    // is taken.
    assert_eq!(
        parse_program(&bss(MAX_PROGRAM_PAGES)).err(),
        Some(ElfError::TooManyPages)
    );
    assert_eq!(
        machine.load(&bss(MAX_PROGRAM_PAGES)).err(),
        Some(SpaceError::Elf(ElfError::TooManyPages))
    );
    assert_eq!(machine.frames.allocated(), 0);
    assert!(parse_program(&bss(MAX_PROGRAM_PAGES - 1)).is_ok());
}

#[test]
fn user_permissions_follow_the_rights() {
    assert_eq!(user_permissions(MapRights::Read), Permissions::USER_RO);
    assert_eq!(user_permissions(MapRights::ReadWrite), Permissions::USER_RW);
    assert_eq!(
        user_permissions(MapRights::ReadExecute),
        Permissions::USER_RX
    );
}
