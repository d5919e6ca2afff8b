//! Loading a program into a space the kernel builds: the shared ELF
//! checks (`abi::elf`) with the kernel's page limit, every segment in the
//! user half with its own rights and bytes, and nothing kept on refusal.

use super::*;
use abi::elf::writer::{elf_filled, load, PF_R, PF_W, PF_X};
use arch::boards::PhysRange;
use arch::mmu::{AsidAllocator, AsidBits};
use std::collections::HashMap;
use std::vec::Vec;

const RAM: PhysRange = PhysRange {
    start: 0x4000_0000,
    size: 4 << 20,
};

/// RAM as pages, allocated on first touch; all zero until written. Every
/// store and every maintenance operation is logged, in order.
#[derive(Default)]
struct Ram {
    pages: HashMap<u64, Vec<u8>>,
    log: Vec<Event>,
}

/// One thing the address space did to memory or asked of the caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// `len` bytes stored at `pa` (a zeroed frame is 4096 bytes).
    Store { pa: u64, len: u64 },
    /// `sync_instruction_cache` of the frame at `pa`.
    Sync(u64),
    /// `publish_table_writes`.
    Publish,
    /// `flush_tlb_page(asid, va)`.
    FlushPage(u16, u64),
    /// `flush_tlb_all`.
    FlushAll,
}

impl Event {
    fn stores_into(self, page: u64) -> bool {
        matches!(self, Event::Store { pa, len } if pa < page + PAGE_SIZE && page < pa + len)
    }
}

impl Ram {
    fn page(&mut self, pa: u64) -> &mut Vec<u8> {
        assert!((RAM.start..RAM.end()).contains(&pa), "{pa:#x} outside RAM");
        self.pages
            .entry(pa & !(PAGE_SIZE - 1))
            .or_insert_with(|| vec![0; PAGE_SIZE as usize])
    }

    /// Where in the log the last event matching `what` is.
    fn last(&self, what: impl Fn(Event) -> bool) -> Option<usize> {
        self.log.iter().rposition(|&e| what(e))
    }
}

impl PhysMemory for Ram {
    fn read_phys(&self, pa: u64, out: &mut [u8]) {
        let at = (pa % PAGE_SIZE) as usize;
        match self.pages.get(&(pa & !(PAGE_SIZE - 1))) {
            Some(page) => out.copy_from_slice(&page[at..at + out.len()]),
            None => out.fill(0),
        }
    }
    fn write_phys(&mut self, pa: u64, data: &[u8]) {
        let at = (pa % PAGE_SIZE) as usize;
        self.page(pa)[at..at + data.len()].copy_from_slice(data);
        self.log.push(Event::Store {
            pa,
            len: data.len() as u64,
        });
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
        self.log.push(Event::Store { pa, len: PAGE_SIZE });
    }
}

impl MemoryMaintenance for Ram {
    fn sync_instruction_cache(&mut self, pa: u64) {
        self.log.push(Event::Sync(pa));
    }
    fn publish_table_writes(&mut self) {
        self.log.push(Event::Publish);
    }
    fn flush_tlb_page(&mut self, asid: u16, va: u64) {
        self.log.push(Event::FlushPage(asid, va));
    }
    fn flush_tlb_all(&mut self) {
        self.log.push(Event::FlushAll);
    }
}

/// A descriptor's output address (bits 47:12).
const OUTPUT_ADDRESS: u64 = 0x0000_ffff_ffff_f000;

/// The physical address of the L3 entry that maps `va` in the tables at
/// `root` (every level above it a table descriptor).
fn leaf_slot(ram: &Ram, root: u64, va: u64) -> u64 {
    let mut table = root;
    for level in 0..3 {
        let entry = ram.read_phys_u64(table + 8 * ((va >> (39 - 9 * level)) & 511));
        assert_eq!(entry & 0b11, 0b11, "no table at level {level} for {va:#x}");
        table = entry & OUTPUT_ADDRESS;
    }
    table + 8 * ((va >> 12) & 511)
}

/// Every table page reachable from `root`, the root included.
fn table_pages(ram: &Ram, root: u64) -> Vec<u64> {
    let mut found = vec![root];
    let mut level_tables = vec![root];
    for _ in 0..3 {
        let mut next = Vec::new();
        for table in level_tables {
            for index in 0..512 {
                let entry = ram.read_phys_u64(table + 8 * index);
                if entry & 0b11 == 0b11 {
                    next.push(entry & OUTPUT_ADDRESS);
                }
            }
        }
        found.extend(&next);
        level_tables = next;
    }
    found
}

/// Fails unless every store the log holds into a table of the space at
/// `root` comes before the last `Publish` (or TLB flush, which completes
/// stores first); returns how many tables the log saw stored.
fn assert_tables_published(ram: &Ram, root: u64) -> usize {
    let published =
        ram.last(|e| matches!(e, Event::Publish | Event::FlushPage(..) | Event::FlushAll));
    let mut stored_tables = 0;
    for table in table_pages(ram, root) {
        let Some(stored) = ram.last(|e| e.stores_into(table)) else {
            continue;
        };
        stored_tables += 1;
        assert!(
            published.is_some_and(|published| stored < published),
            "the table at {table:#x} was written (event {stored}) after the last publish ({published:?})"
        );
    }
    stored_tables
}

/// An AArch64 executable with `segments` `(flags, vaddr, bytes,
/// mem_size)`, each segment's bytes at a fresh page of the file with
/// offset ≡ address (mod page), as a linker lays them out; every other
/// byte past the headers 0.
fn elf(entry: u64, segments: &[(u32, u64, &[u8], u64)]) -> Vec<u8> {
    let page = PAGE_SIZE as usize;
    let mut headers = Vec::new();
    let mut end = page;
    for &(flags, vaddr, bytes, mem_size) in segments {
        let offset = end.next_multiple_of(page) as u64 + vaddr % PAGE_SIZE;
        headers.push(load(flags, offset, vaddr, bytes.len() as u64, mem_size));
        end = offset as usize + bytes.len();
    }
    let mut file = elf_filled(entry, &headers, end, |_| 0);
    for (header, (_, _, bytes, _)) in headers.iter().zip(segments) {
        let at = header.offset as usize;
        file[at..at + bytes.len()].copy_from_slice(bytes);
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
    space.release(&machine.ram, &mut machine.frames);
    assert_eq!(machine.frames.allocated(), 0);
}

#[test]
fn copies_to_user_land_only_in_writable_pages_and_a_refused_one_writes_nothing() {
    let mut machine = Machine::new();
    let (space, _) = machine.load(&init_like()).expect("init's layout loads");
    let bytes: Vec<u8> = (1..=40).collect();
    // Within one page, and across two.
    for va in [0x40_4010, 0x40_4ff0] {
        space
            .copy_to_user(&mut machine.ram, va, &bytes)
            .expect("writable");
        assert_eq!(machine.read(&space, va, bytes.len()).unwrap(), bytes);
    }
    // Read-only, executable or unmapped, within one page or past the end
    // of the writable ones: refused, and not a byte written.
    for va in [0x40_2010, 0x40_0010, 0x40_7010, 0x40_6ff0, 0x40_3ff0] {
        // Each of the two pages it touches, as far as it is readable.
        let pages = |machine: &Machine| {
            [va & !0xfff, (va & !0xfff) + 0x1000].map(|page| machine.read(&space, page, 0x1000))
        };
        let before = pages(&machine);
        assert!(
            space.copy_to_user(&mut machine.ram, va, &bytes).is_err(),
            "{va:#x}"
        );
        assert_eq!(pages(&machine), before, "{va:#x}");
    }
    // Nothing to copy: fine.
    assert!(space.copy_to_user(&mut machine.ram, 0x40_4000, &[]).is_ok());
    space.release(&machine.ram, &mut machine.frames);
}

#[test]
fn user_words_are_read_and_written_across_a_page_boundary_and_only_where_allowed() {
    use super::{UserAccess, UserWords};
    let mut machine = Machine::new();
    let (space, _) = machine.load(&init_like()).expect("init's layout loads");
    let words: Vec<u64> = (1..=36).map(|w| w * 0x0101_0101).collect();
    let as_bytes = |words: &[u64]| {
        words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<_>>()
    };
    let range =
        |machine: &Machine, va, access| space.user_words(&machine.ram, va, words.len(), access);
    // Within one page, and across two (at each word of the boundary).
    for va in [0x40_4010, 0x40_4ff0, 0x40_4ff8, 0x40_4f00] {
        let frame: UserWords = range(&machine, va, UserAccess::Write).expect("writable");
        frame.write(&mut machine.ram, 0, &words[..31]);
        frame.write(&mut machine.ram, 31, &words[31..]);
        assert_eq!(machine.read(&space, va, 8 * 36).unwrap(), as_bytes(&words));
        let mut back = [0u64; 31];
        frame.read_into(&machine.ram, 0, &mut back);
        assert_eq!(back[..], words[..31], "{va:#x}");
        assert_eq!(frame.read(&machine.ram, 35), words[35], "{va:#x}");
        // Clipped to the range: nothing read or written past it.
        assert_eq!(frame.read(&machine.ram, 36), 0);
        let past = machine.read(&space, va + 8 * 36, 8).unwrap();
        frame.write(&mut machine.ram, 35, &[7, 8]);
        assert_eq!(
            machine.read(&space, va + 8 * 35, 16).unwrap()[..8],
            7u64.to_le_bytes()
        );
        assert_eq!(
            machine.read(&space, va + 8 * 36, 8).unwrap(),
            past,
            "{va:#x}: the word past the range"
        );
        machine.ram.write_phys(
            space.translate_user(&machine.ram, va + 8 * 35).unwrap().0,
            &words[35].to_le_bytes(),
        );
    }
    // Read-only pages may be read, not written; executable pages are
    // readable too; unmapped ones, or a range that runs into one, neither.
    assert!(range(&machine, 0x40_2010, UserAccess::Read).is_ok());
    for va in [0x40_2010, 0x40_0010, 0x40_3ff0, 0x40_6ff0] {
        assert!(range(&machine, va, UserAccess::Write).is_err(), "{va:#x}");
    }
    for va in [0x40_1000, 0x40_6ff0, 0x40_7010, 0x40_0ff0] {
        assert!(range(&machine, va, UserAccess::Read).is_err(), "{va:#x}");
    }
    // Unaligned, empty, longer than a page, or past the top: refused.
    assert!(range(&machine, 0x40_4004, UserAccess::Read).is_err());
    for len in [0, 513] {
        assert!(space
            .user_words(&machine.ram, 0x40_4000, len, UserAccess::Read)
            .is_err());
    }
    assert!(space
        .user_words(&machine.ram, u64::MAX - 7, 2, UserAccess::Read)
        .is_err());
    space.release(&machine.ram, &mut machine.frames);
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
    space.release(&machine.ram, &mut machine.frames);
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

#[test]
fn every_executable_page_is_made_fetchable_after_its_bytes_and_before_its_entry() {
    let mut machine = Machine::new();
    let (space, _) = machine.load(&init_like()).expect("loads");
    let ram = &machine.ram;
    let frame = |va| {
        space
            .table
            .translate(&WalkMemory(ram), VirtAddr::new(va))
            .unwrap()
            .pa
            .as_u64()
    };
    let text = frame(0x40_0000);
    let synced = ram
        .last(|e| e == Event::Sync(text))
        .expect("the text page is synced");
    let filled = ram.last(|e| e.stores_into(text)).unwrap();
    let slot = leaf_slot(ram, space.root(), 0x40_0000);
    let mapped = ram.last(|e| e.stores_into(slot)).unwrap();
    assert!(
        filled < synced && synced < mapped,
        "text bytes at event {filled}, sync at {synced}, entry at {mapped}"
    );
    // Data is never fetched: no maintenance for it.
    for va in [0x40_2000, 0x40_4000, USER_STACK_TOP - PAGE_SIZE] {
        let data = frame(va);
        assert_eq!(ram.last(|e| e == Event::Sync(data)), None, "{va:#x}");
    }
}

#[test]
fn a_loaded_space_has_its_tables_published() {
    let mut machine = Machine::new();
    let (space, _) = machine.load(&init_like()).expect("loads");
    // The root and three levels below it for the program, three more for
    // the stack (the IPC buffer shares its L3 table): none unpublished.
    assert_eq!(
        assert_tables_published(&machine.ram, space.root()),
        1 + 3 + 3
    );
}

#[test]
fn a_frame_mapped_executable_is_synced_and_every_map_is_published() {
    let mut machine = Machine::new();
    let (mut space, _) = machine.load(&init_like()).expect("loads");
    let code = machine.frames.allocate().unwrap();
    machine.ram.write_phys(code, &[0xc0, 0x03, 0x5f, 0xd6]);
    // A fresh table level (1 GiB up) so that the map links new tables.
    let va = 0x4000_0000;
    machine.ram.log.clear();
    space
        .map_frame(
            &mut machine.ram,
            &mut machine.frames,
            code,
            va,
            Permissions::USER_RX,
        )
        .unwrap();
    let ram = &machine.ram;
    let synced = ram.last(|e| e == Event::Sync(code)).expect("synced");
    let mapped = ram
        .last(|e| e.stores_into(leaf_slot(ram, space.root(), va)))
        .unwrap();
    assert!(synced < mapped);
    // Its L1 entry, and the new L2 and L3 tables.
    assert_eq!(assert_tables_published(ram, space.root()), 3);

    let data = machine.frames.allocate().unwrap();
    machine.ram.log.clear();
    space
        .map_frame(
            &mut machine.ram,
            &mut machine.frames,
            data,
            va + PAGE_SIZE,
            Permissions::USER_RW,
        )
        .unwrap();
    assert_eq!(machine.ram.last(|e| matches!(e, Event::Sync(_))), None);
    assert_eq!(assert_tables_published(&machine.ram, space.root()), 1);
}

#[test]
fn a_space_in_a_vspace_object_has_its_root_published() {
    let mut ram = Ram::default();
    let asid = AsidAllocator::new(AsidBits::Eight).assign(None, None).asid;
    let space = AddressSpace::in_object(&mut ram, asid, RAM.start, 4).unwrap();
    assert_eq!(space.root(), RAM.start);
    assert_eq!(assert_tables_published(&ram, space.root()), 1);
}

#[test]
fn unmapping_clears_the_entry_then_flushes_the_page_by_asid() {
    let mut machine = Machine::new();
    let (mut space, _) = machine.load(&init_like()).expect("loads");
    let asid = space.asid().asid().as_u16();
    let slot = leaf_slot(&machine.ram, space.root(), 0x40_4000);
    machine.ram.log.clear();
    assert!(space.unmap_page(&mut machine.ram, 0x40_4000));
    assert_eq!(
        machine.ram.log,
        [
            Event::Store { pa: slot, len: 8 },
            Event::FlushPage(asid, 0x40_4000)
        ],
        "clear, then break: nothing else"
    );
    assert_eq!(machine.ram.read_phys_u64(slot), 0);
    // Nothing mapped there any more: no store, no flush.
    machine.ram.log.clear();
    assert!(!space.unmap_page(&mut machine.ram, 0x40_4000));
    assert!(machine.ram.log.is_empty());
}

#[test]
fn a_remembered_page_never_outlives_a_change_of_the_tables() {
    let mut machine = Machine::new();
    let (mut space, _) = machine.load(&init_like()).expect("loads");
    let data = 0x40_4000;
    let old = space.translate_user(&machine.ram, data + 8).unwrap();
    assert!(space
        .copy_to_user(&mut machine.ram, data + 8, b"kept")
        .is_ok());
    let pages: Vec<_> = space.recent.pages().collect();
    assert_eq!(pages, [data], "walked once, then remembered");
    let read = space.user_address(&machine.ram, data + 8, UserAccess::Read);
    assert_eq!(read, Ok(old.0));

    // Unmapped: the page is forgotten with the entry.
    assert!(space.unmap_page(&mut machine.ram, data));
    assert_eq!(space.recent.pages().count(), 0);
    assert_eq!(space.translate_user(&machine.ram, data), None);
    assert!(space.copy_to_user(&mut machine.ram, data, b"gone").is_err());

    // Mapped again, elsewhere and read-only: the new entry is what counts.
    let frame = machine.frames.allocate().unwrap();
    space
        .map_frame(
            &mut machine.ram,
            &mut machine.frames,
            frame,
            data,
            Permissions::USER_RO,
        )
        .unwrap();
    assert_eq!(
        space.translate_user(&machine.ram, data + 8),
        Some((frame + 8, Permissions::USER_RO))
    );
    assert!(space.copy_to_user(&mut machine.ram, data, b"ro").is_err());
    assert!(machine.read(&space, data, 2).is_some());

    // A third page takes the place of the oldest of the two kept.
    let text = 0x40_0000;
    let rodata = 0x40_2000;
    for page in [text, rodata] {
        assert!(space
            .user_address(&machine.ram, page, UserAccess::Read)
            .is_ok());
    }
    let pages: Vec<_> = space.recent.pages().collect();
    assert_eq!(pages, [rodata, text]);
    // Read-only pages are remembered as such.
    let write = space.user_address(&machine.ram, rodata, UserAccess::Write);
    assert_eq!(write, Err(UserAccessError::NotMapped));
}

#[test]
fn a_user_byte_is_read_at_any_offset_of_its_word_and_only_where_el0_may_read() {
    let mut machine = Machine::new();
    let (mut space, _) = machine.load(&init_like()).expect("loads");
    let data = 0x40_4000;
    assert!(space
        .copy_to_user(&mut machine.ram, data, &[1, 2, 3, 4, 5, 6, 7, 8, 9])
        .is_ok());
    for (offset, byte) in (1..=9).enumerate() {
        let read = space.read_user_byte(&machine.ram, data + offset as u64);
        assert_eq!(read, Ok(byte));
    }
    // Rodata reads; nothing mapped (page 0, a page unmapped) does not.
    assert_eq!(space.read_user_byte(&machine.ram, 0x40_2000), Ok(b'r'));
    assert!(space.read_user_byte(&machine.ram, 0).is_err());
    assert!(space.unmap_page(&mut machine.ram, data));
    assert!(space.read_user_byte(&machine.ram, data).is_err());
}
