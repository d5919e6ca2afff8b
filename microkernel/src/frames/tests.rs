//! Tests of `frames`.

use super::*;

fn range(start: u64, size: u64) -> PhysRange {
    PhysRange { start, size }
}

#[test]
fn reserved_ranges_are_never_handed_out() {
    let mut frames = FrameAllocator::new();
    let image = range(0x4008_0000, 0x10_0000);
    let dtb = range(0x4000_0000, 0x2000);
    frames.add_ram(range(0x4000_0000, 0x40_0000), &[image, dtb]);
    let total = frames.available();
    assert_eq!(total, (0x40_0000 - 0x10_0000 - 0x2000) / PAGE_SIZE);
    let mut seen = std::collections::HashSet::new();
    while let Some(frame) = frames.allocate() {
        assert_eq!(frame % PAGE_SIZE, 0);
        assert!(!(image.start..image.end()).contains(&frame));
        assert!(!(dtb.start..dtb.end()).contains(&frame));
        assert!(seen.insert(frame), "frame handed out twice");
    }
    assert_eq!(seen.len() as u64, total);
    assert_eq!(frames.allocated(), total);
}

#[test]
fn a_reserved_range_is_held_by_no_page_of_the_pool() {
    let mut frames = FrameAllocator::new();
    let image = range(0x2_0000, 0x1800);
    frames.add_ram(range(0, 0x10_0000), &[image]);
    assert!(!frames.holds_any(image), "its last page is partly kept too");
    assert!(frames.holds_any(range(0x1_f000, 0x1000)));
    assert!(frames.holds_any(range(0x2_2000, 0x10)));
    let frame = frames.allocate().expect("a frame");
    assert!(!frames.holds_any(range(frame, 0x1000)));
    frames.free(frame);
    assert!(frames.holds_any(range(frame, 0x1000)), "freed: free again");
}

#[test]
fn freed_frames_are_reused() {
    let mut frames = FrameAllocator::new();
    frames.add_ram(range(0x1000, 0x3000), &[]);
    let a = frames.allocate().unwrap();
    let b = frames.allocate().unwrap();
    frames.free(a);
    assert_eq!(frames.allocate(), Some(a));
    assert_ne!(a, b);
    assert_eq!(frames.lost(), 0);
}

#[test]
fn contiguous_runs_are_aligned_and_skipped_frames_stay_usable() {
    let mut frames = FrameAllocator::new();
    frames.add_ram(range(0x1000, 0x20_0000), &[]);
    let total = frames.available();
    let run = frames.allocate_contiguous(4).unwrap();
    assert_eq!(run % 0x4000, 0);
    assert_eq!(frames.allocated(), 4);
    assert_eq!(
        frames.available(),
        total - 4,
        "frames skipped for alignment stay free"
    );
    assert_eq!(frames.allocate_contiguous(1 << 20), None);
}

fn check_blocks(blocks: &[PhysRange]) {
    for block in blocks {
        assert!(block.size.is_power_of_two() && block.size >= PAGE_SIZE);
        assert_eq!(
            block.start % block.size,
            0,
            "{block:?} is not naturally aligned"
        );
    }
    for (i, a) in blocks.iter().enumerate() {
        for b in &blocks[i + 1..] {
            assert!(
                a.end() <= b.start || b.end() <= a.start,
                "{a:?} overlaps {b:?}"
            );
        }
    }
}

#[test]
fn all_free_memory_becomes_aligned_blocks_and_comes_back() {
    let mut frames = FrameAllocator::new();
    frames.add_ram(
        range(0x4000_0000, 0x4000_0000),
        &[range(0x4020_0000, 0x23_000)],
    );
    // Some frames on the reuse stack, two of them adjacent.
    let a = frames.allocate().unwrap();
    let b = frames.allocate().unwrap();
    let c = frames.allocate_contiguous(8).unwrap();
    frames.free(b);
    frames.free(a);
    let total = frames.available();
    let (blocks, kept) = frames.take_as_blocks::<64>(0);
    check_blocks(&blocks);
    assert_eq!(kept, 0);
    let taken: u64 = blocks.iter().map(|b| b.size / PAGE_SIZE).sum();
    assert_eq!(taken, total, "every free frame is in a block");
    assert_eq!(frames.available(), 0);
    assert!(blocks
        .iter()
        .all(|b| c + 8 * PAGE_SIZE <= b.start || b.end() <= c));
    assert_eq!(frames.allocate(), None);
    for block in blocks {
        frames.give_back(block);
    }
    assert_eq!(frames.available(), total);
    assert_eq!(frames.lost(), 0);
    assert!(
        frames.allocate_contiguous(1 << 17).is_some(),
        "ranges joined again"
    );
}

#[test]
fn blocks_beyond_the_limit_stay_free_smallest_first() {
    let mut frames = FrameAllocator::new();
    frames.add_ram(range(0x1000, 0x20_0000 - 0x1000), &[]);
    let total = frames.available();
    let (blocks, kept) = frames.take_as_blocks::<3>(0);
    check_blocks(&blocks);
    let sizes: std::vec::Vec<u64> = blocks.iter().map(|b| b.size).collect();
    assert_eq!(sizes, [0x4_0000, 0x8_0000, 0x10_0000].to_vec());
    let taken: u64 = sizes.iter().sum::<u64>() / PAGE_SIZE;
    assert_eq!(taken + kept, total);
    assert_eq!(frames.available(), kept);
    let mut seen = std::collections::HashSet::new();
    while let Some(frame) = frames.allocate() {
        assert!(blocks.iter().all(|b| frame < b.start || frame >= b.end()));
        assert!(seen.insert(frame));
    }
    assert_eq!(seen.len() as u64, kept);
}

#[test]
fn the_smallest_blocks_stay_when_pages_must_be_kept() {
    let mut frames = FrameAllocator::new();
    frames.add_ram(range(0x1000, 0x20_0000 - 0x1000), &[]);
    let total = frames.available();
    let (blocks, kept) = frames.take_as_blocks::<64>(5);
    check_blocks(&blocks);
    // 4 KiB + 8 KiB + 16 KiB blocks (7 pages) are the fewest smallest
    // that make up 5 pages.
    assert_eq!(kept, 7);
    assert_eq!(frames.available(), 7);
    let taken: u64 = blocks.iter().map(|b| b.size / PAGE_SIZE).sum();
    assert_eq!(taken + kept, total);
    assert!(blocks.iter().all(|b| b.start >= 0x8000));
}

#[test]
fn kept_pieces_beyond_the_range_table_are_counted_once() {
    // Sixteen ranges of four pages, each cut 4 + 8 + 4 KiB: the 8 KiB
    // blocks are taken, and the 32 pieces left around them do not fit
    // in the range table: half go on the reuse stack.
    let mut frames = FrameAllocator::new();
    for i in 0..MAX_RANGES as u64 {
        frames.add_ram(range(i << 20 | 0x1000, 0x4000), &[]);
    }
    let (blocks, kept) = frames.take_as_blocks::<16>(0);
    check_blocks(&blocks);
    assert!(blocks.iter().all(|b| b.size == 0x2000));
    assert_eq!(kept, 32);
    assert_eq!(frames.available(), 32);
    assert_eq!(frames.lost(), 0);
    for block in blocks {
        frames.give_back(block);
    }
    assert_eq!(frames.available(), 64);
}

#[test]
fn unaligned_ram_is_rounded_inwards() {
    let mut frames = FrameAllocator::new();
    frames.add_ram(range(0x1800, 0x2000), &[]);
    assert_eq!(frames.available(), 1);
    assert_eq!(frames.allocate(), Some(0x2000));
    assert_eq!(frames.allocate(), None);
}
