//! The mapper's guarantees, checked against a `Vec`-backed table memory.

use super::fake_memory::FakeTableMemory;
use super::*;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const KERNEL_BASE: u64 = 0xFFFF_0000_0000_0000;
const RAM: u64 = 0x4000_0000;

fn kernel_table(budget: usize) -> (FakeTableMemory, PageTable) {
    let mut memory = FakeTableMemory::with_budget(budget);
    let table = PageTable::new(&mut memory, Half::Upper).expect("root");
    (memory, table)
}

fn user_table(budget: usize) -> (FakeTableMemory, PageTable) {
    let mut memory = FakeTableMemory::with_budget(budget);
    let table = PageTable::new(&mut memory, Half::Lower).expect("root");
    (memory, table)
}

fn mapping(va: u64, pa: u64, size: u64, permissions: Permissions) -> Mapping {
    Mapping {
        va: VirtAddr::new(va),
        pa: PhysAddr::new(pa),
        size,
        permissions,
        granularity: Granularity::Largest,
    }
}

fn pages(va: u64, pa: u64, size: u64, permissions: Permissions) -> Mapping {
    Mapping {
        granularity: Granularity::Pages,
        ..mapping(va, pa, size, permissions)
    }
}

fn level_at(memory: &FakeTableMemory, table: &PageTable, va: u64) -> Level {
    table
        .translate(memory, VirtAddr::new(va))
        .expect("mapped")
        .level
}

#[test]
fn aligned_ranges_use_1g_then_2m_blocks_then_pages() {
    let (mut memory, table) = kernel_table(8);
    let size = GIB + 2 * MIB + 8 * KIB;
    let request = mapping(KERNEL_BASE + RAM, RAM, size, Permissions::KERNEL_RW);
    assert_eq!(table.map(&mut memory, &request), Ok(()));
    assert_eq!(
        level_at(&memory, &table, KERNEL_BASE + RAM + 5 * MIB),
        Level::One
    );
    assert_eq!(
        level_at(&memory, &table, KERNEL_BASE + RAM + GIB),
        Level::Two
    );
    assert_eq!(
        level_at(&memory, &table, KERNEL_BASE + RAM + GIB + 2 * MIB + 4 * KIB),
        Level::Three
    );
    // Root, one L1, one L2 and one L3 table.
    assert_eq!(memory.tables_allocated(), 4);
    let translation = table.translate(&memory, VirtAddr::new(KERNEL_BASE + RAM + 0x1234_5678));
    assert_eq!(
        translation.map(|t| t.pa),
        Ok(PhysAddr::new(RAM + 0x1234_5678))
    );
}

#[test]
fn misaligned_physical_address_or_pages_only_forces_4k_pages() {
    let (mut memory, table) = kernel_table(8);
    let shifted = mapping(
        KERNEL_BASE + RAM,
        RAM + 4 * KIB,
        2 * MIB,
        Permissions::KERNEL_RW,
    );
    assert_eq!(table.map(&mut memory, &shifted), Ok(()));
    assert_eq!(level_at(&memory, &table, KERNEL_BASE + RAM), Level::Three);

    let image = pages(
        KERNEL_BASE + 2 * GIB,
        RAM + 2 * GIB,
        2 * MIB,
        Permissions::KERNEL_RX,
    );
    assert_eq!(table.map(&mut memory, &image), Ok(()));
    assert_eq!(
        level_at(&memory, &table, KERNEL_BASE + 2 * GIB + MIB),
        Level::Three
    );
}

#[test]
fn written_entries_have_the_hand_computed_encodings() {
    let (mut memory, table) = user_table(4);
    let request = mapping(0x40_0000, 0x4008_0000, 4 * KIB, Permissions::USER_RX);
    assert_eq!(table.map(&mut memory, &request), Ok(()));
    let l1 = memory.read_entry(table.root(), 0);
    // Table descriptors carry only address and type: no APTable/XNTable.
    assert_eq!(l1 & !0x0000_FFFF_FFFF_F000, 0b11);
    let l2 = memory.read_entry(PhysAddr::new(l1 & !0xFFF), 0);
    let l3 = memory.read_entry(PhysAddr::new(l2 & !0xFFF), 2);
    let leaf = memory.read_entry(PhysAddr::new(l3 & !0xFFF), 0);
    assert_eq!(
        leaf, 0x0020_0000_4008_0FC3,
        "user RX: AP 11, nG, AF, SH inner, PXN"
    );
}

#[test]
fn user_pages_are_never_executable_at_el1_and_round_trip() {
    let (mut memory, table) = user_table(8);
    for (index, permissions) in [
        Permissions::USER_RX,
        Permissions::USER_RO,
        Permissions::USER_RW,
    ]
    .into_iter()
    .enumerate()
    {
        let va = 0x1000_0000 + index as u64 * 4 * KIB;
        let request = pages(va, RAM + index as u64 * 4 * KIB, 4 * KIB, permissions);
        assert_eq!(table.map(&mut memory, &request), Ok(()));
        let translation = table.translate(&memory, VirtAddr::new(va)).expect("mapped");
        assert_eq!(translation.permissions, permissions);
    }
}

#[test]
fn remapping_identically_is_accepted_even_over_an_early_block() {
    let (mut memory, table) = kernel_table(8);
    // Early boot: one 2 MiB block for the kernel image.
    let early = mapping(
        KERNEL_BASE + RAM + 2 * MIB,
        RAM + 2 * MIB,
        2 * MIB,
        Permissions::KERNEL_RW,
    );
    assert_eq!(table.map(&mut memory, &early), Ok(()));
    // Later: all of RAM, which would be a 1 GiB block but for that table.
    let ram = mapping(KERNEL_BASE + RAM, RAM, 2 * GIB, Permissions::KERNEL_RW);
    assert_eq!(table.map(&mut memory, &ram), Ok(()));
    assert_eq!(
        level_at(&memory, &table, KERNEL_BASE + RAM + 3 * MIB),
        Level::Two
    );
    assert_eq!(
        level_at(&memory, &table, KERNEL_BASE + RAM + 100 * MIB),
        Level::Two
    );
    assert_eq!(
        level_at(&memory, &table, KERNEL_BASE + RAM + GIB),
        Level::One
    );
    let tables = memory.tables_allocated();
    // Again, and a page-granular request inside a block: no new tables.
    assert_eq!(table.map(&mut memory, &ram), Ok(()));
    let inside = pages(
        KERNEL_BASE + RAM + GIB + 8 * KIB,
        RAM + GIB + 8 * KIB,
        8 * KIB,
        Permissions::KERNEL_RW,
    );
    assert_eq!(table.map(&mut memory, &inside), Ok(()));
    assert_eq!(memory.tables_allocated(), tables);
}

#[test]
fn conflicting_remap_is_refused_before_anything_is_written() {
    let (mut memory, table) = user_table(8);
    let third_page = 0x20_2000;
    let existing = pages(third_page, RAM, 4 * KIB, Permissions::USER_RW);
    assert_eq!(table.map(&mut memory, &existing), Ok(()));

    let other_frame = pages(0x20_0000, RAM + MIB, 12 * KIB, Permissions::USER_RW);
    let other_rights = pages(third_page, RAM, 4 * KIB, Permissions::USER_RO);
    for request in [other_frame, other_rights] {
        assert_eq!(
            table.map(&mut memory, &request),
            Err(MapError::AlreadyMapped {
                va: VirtAddr::new(third_page)
            })
        );
    }
    assert_eq!(
        table.translate(&memory, VirtAddr::new(0x20_0000)),
        Err(MapError::NotMapped)
    );
    let unchanged = table
        .translate(&memory, VirtAddr::new(third_page))
        .expect("mapped");
    assert_eq!(
        (unchanged.pa, unchanged.permissions),
        (PhysAddr::new(RAM), Permissions::USER_RW)
    );
}

#[test]
fn unmap_clears_pages_skips_holes_and_reports_for_tlbi() {
    let (mut memory, table) = user_table(8);
    assert_eq!(
        table.map(
            &mut memory,
            &pages(0x1_0000, RAM, 16 * KIB, Permissions::USER_RW)
        ),
        Ok(())
    );
    let unmapped = table.unmap(&mut memory, VirtAddr::new(0x1_1000), 8 * KIB);
    assert_eq!(
        unmapped,
        Ok(Unmapped {
            va: VirtAddr::new(0x1_1000),
            size: 8 * KIB,
            leaves: 2,
            global: false
        })
    );
    for (va, mapped) in [
        (0x1_0000, true),
        (0x1_1000, false),
        (0x1_2000, false),
        (0x1_3000, true),
    ] {
        assert_eq!(
            table.translate(&memory, VirtAddr::new(va)).is_ok(),
            mapped,
            "{va:#x}"
        );
    }
    let again = table
        .unmap(&mut memory, VirtAddr::new(0x1_0000), GIB)
        .expect("holes are fine");
    assert_eq!(again.leaves, 2);
}

#[test]
fn unmapping_part_of_a_block_is_refused_and_a_whole_block_is_global() {
    let (mut memory, table) = kernel_table(8);
    let block = mapping(KERNEL_BASE + RAM, RAM, 2 * MIB, Permissions::KERNEL_RW);
    assert_eq!(table.map(&mut memory, &block), Ok(()));
    let part = table.unmap(&mut memory, VirtAddr::new(KERNEL_BASE + RAM), 4 * KIB);
    assert_eq!(
        part,
        Err(MapError::PartialBlock {
            va: VirtAddr::new(KERNEL_BASE + RAM)
        })
    );
    assert_eq!(level_at(&memory, &table, KERNEL_BASE + RAM), Level::Two);
    let whole = table
        .unmap(&mut memory, VirtAddr::new(KERNEL_BASE + RAM), 2 * MIB)
        .expect("whole block");
    assert_eq!((whole.leaves, whole.global), (1, true));
}

#[test]
fn ttbr1_and_ttbr0_index_with_the_low_48_bits() {
    let (mut memory, table) = kernel_table(8);
    let top = KERNEL_BASE | 0x0000_FF80_0000_0000;
    assert_eq!(
        table.map(
            &mut memory,
            &pages(top, RAM, 4 * KIB, Permissions::KERNEL_RO)
        ),
        Ok(())
    );
    assert_ne!(memory.read_entry(table.root(), 511), 0);
    assert_eq!(memory.read_entry(table.root(), 0), 0);

    let (mut memory, table) = user_table(8);
    let high_user = 0x0000_FF80_0000_0000;
    assert_eq!(
        table.map(
            &mut memory,
            &pages(high_user, RAM, 4 * KIB, Permissions::USER_RO)
        ),
        Ok(())
    );
    assert_ne!(memory.read_entry(table.root(), 511), 0);
}

#[test]
fn bad_requests_get_typed_errors() {
    let (mut memory, table) = user_table(8);
    let rw = Permissions::USER_RW;
    let cases = [
        (mapping(0x1000, RAM, 0, rw), MapError::EmptyRange),
        (mapping(0x1001, RAM, 4 * KIB, rw), MapError::Misaligned),
        (mapping(0x1000, RAM + 8, 4 * KIB, rw), MapError::Misaligned),
        (mapping(0x1000, RAM, 6 * KIB, rw), MapError::Misaligned),
        (
            mapping(KERNEL_BASE, RAM, 4 * KIB, rw),
            MapError::OutsideHalf,
        ),
        (
            mapping((1 << 48) - 4 * KIB, RAM, 8 * KIB, rw),
            MapError::OutsideHalf,
        ),
        (
            mapping(0x1000, 1 << 48, 4 * KIB, rw),
            MapError::PhysicalOutOfRange,
        ),
    ];
    for (request, error) in cases {
        assert_eq!(table.map(&mut memory, &request), Err(error), "{request:?}");
    }
    let (mut memory, kernel) = kernel_table(8);
    let user_in_kernel = mapping(KERNEL_BASE, RAM, 4 * KIB, rw);
    assert_eq!(
        kernel.map(&mut memory, &user_in_kernel),
        Err(MapError::UserMappingInKernelHalf)
    );
    let low = mapping(0x1000, RAM, 4 * KIB, Permissions::KERNEL_RW);
    assert_eq!(kernel.map(&mut memory, &low), Err(MapError::OutsideHalf));
    assert_eq!(
        kernel.translate(&memory, VirtAddr::new(0x1000)),
        Err(MapError::OutsideHalf)
    );
}

#[test]
fn table_exhaustion_is_an_error_not_a_panic() {
    // The root and one L1 table only: the L2 table cannot be allocated.
    let (mut memory, table) = user_table(2);
    let request = pages(0x1000, RAM, 4 * KIB, Permissions::USER_RW);
    assert_eq!(table.map(&mut memory, &request), Err(MapError::OutOfTables));
    let mut empty = FakeTableMemory::with_budget(0);
    assert_eq!(
        PageTable::new(&mut empty, Half::Lower),
        Err(MapError::OutOfTables)
    );
}

#[test]
fn tables_to_map_page_counts_the_missing_levels_and_matches_what_map_takes() {
    let (mut memory, table) = user_table(16);
    let count =
        |memory: &FakeTableMemory, va: u64| table.tables_to_map_page(memory, VirtAddr::new(va));
    let page = |va: u64| pages(va, RAM, 4 * KIB, Permissions::USER_RW);
    // An empty root: a level-1, a level-2 and a level-3 table.
    assert_eq!(count(&memory, 0x40_0000), Ok(3));
    table.map(&mut memory, &page(0x40_0000)).unwrap();
    // Mapped already: none; the same 2 MiB: none; another 2 MiB under the
    // same level-2 table: a level-3 one; another GiB: two; another 512 GiB:
    // three.
    assert_eq!(count(&memory, 0x40_0000), Ok(0));
    assert_eq!(count(&memory, 0x40_1000), Ok(0));
    assert_eq!(count(&memory, 0x60_0000), Ok(1));
    assert_eq!(count(&memory, GIB), Ok(2));
    assert_eq!(count(&memory, 1 << 39), Ok(3));
    for va in [0x60_0000, GIB, 1 << 39] {
        let expected = count(&memory, va).unwrap();
        let before = memory.tables_allocated();
        table.map(&mut memory, &page(va)).unwrap();
        assert_eq!(memory.tables_allocated() - before, expected, "{va:#x}");
    }
    assert_eq!(
        count(&memory, KERNEL_BASE),
        Err(MapError::OutsideHalf),
        "outside the table's half"
    );
}
