//! Physical page frames for user memory and user page tables.
//!
//! Until capabilities and Untyped memory arrive, the kernel hands out
//! frames itself: RAM from the board description, minus the kernel image,
//! the device tree and firmware reservations. Freed frames go on a bounded
//! free stack and are reused first; when that stack is full a freed frame
//! is counted as lost (reported, never silent).

use arch::boards::PhysRange;
use arch::layout::PAGE_SIZE;
use heapless::Vec;

/// Most free RAM ranges tracked.
const MAX_RANGES: usize = 16;
/// Most freed frames remembered for reuse.
const FREE_STACK: usize = 1024;

/// Hands out 4 KiB frames.
pub struct FrameAllocator {
    ranges: Vec<PhysRange, MAX_RANGES>,
    freed: Vec<u64, FREE_STACK>,
    allocated: u64,
    lost: u64,
}

impl Default for FrameAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameAllocator {
    /// An allocator with no memory.
    pub const fn new() -> Self {
        FrameAllocator {
            ranges: Vec::new(),
            freed: Vec::new(),
            allocated: 0,
            lost: 0,
        }
    }

    /// Adds `ram` minus every range in `reserved` (page-rounded inwards).
    pub fn add_ram(&mut self, ram: PhysRange, reserved: &[PhysRange]) {
        let mut pieces: Vec<PhysRange, MAX_RANGES> = Vec::new();
        let _ = pieces.push(ram);
        for hole in reserved {
            let mut next: Vec<PhysRange, MAX_RANGES> = Vec::new();
            for piece in &pieces {
                for part in subtract(*piece, *hole).into_iter().flatten() {
                    let _ = next.push(part);
                }
            }
            pieces = next;
        }
        for piece in pieces {
            let start = piece.start.div_ceil(PAGE_SIZE) * PAGE_SIZE;
            let end = piece.end() & !(PAGE_SIZE - 1);
            if end > start
                && self
                    .ranges
                    .push(PhysRange {
                        start,
                        size: end - start,
                    })
                    .is_err()
            {
                self.lost += (end - start) / PAGE_SIZE;
            }
        }
    }

    /// A free frame's physical address, or `None` when RAM is exhausted.
    /// The frame's contents are whatever was there: callers zero it.
    pub fn allocate(&mut self) -> Option<u64> {
        let frame = match self.freed.pop() {
            Some(frame) => frame,
            None => {
                let range = self.ranges.iter_mut().find(|r| r.size >= PAGE_SIZE)?;
                let frame = range.start;
                range.start += PAGE_SIZE;
                range.size -= PAGE_SIZE;
                frame
            }
        };
        self.allocated += 1;
        Some(frame)
    }

    /// `pages` physically contiguous frames, aligned to their total size
    /// rounded up to a power of two (an Untyped's alignment), taken from
    /// the untouched part of a RAM range. `None` when no range has room.
    pub fn allocate_contiguous(&mut self, pages: u64) -> Option<u64> {
        let bytes = pages.checked_mul(PAGE_SIZE)?;
        let align = bytes.next_power_of_two();
        for range in self.ranges.iter_mut() {
            let start = range.start.checked_add(align - 1)? & !(align - 1);
            let skip = start - range.start;
            if range.size >= skip.checked_add(bytes)? {
                // The skipped frames stay free for `allocate`.
                let skipped = PhysRange {
                    start: range.start,
                    size: skip,
                };
                range.start = start + bytes;
                range.size -= skip + bytes;
                self.allocated += pages;
                let mut frame = skipped.start;
                while frame < skipped.end() {
                    self.free_skipped(frame);
                    frame += PAGE_SIZE;
                }
                return Some(start);
            }
        }
        None
    }

    fn free_skipped(&mut self, frame: u64) {
        if self.freed.push(frame).is_err() {
            self.lost += 1;
        }
    }

    /// Returns a frame obtained from `allocate`.
    pub fn free(&mut self, frame: u64) {
        self.allocated = self.allocated.saturating_sub(1);
        if self.freed.push(frame).is_err() {
            self.lost += 1;
        }
    }

    /// Frames currently handed out.
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Frames still available.
    pub fn available(&self) -> u64 {
        self.freed.len() as u64 + self.ranges.iter().map(|r| r.size / PAGE_SIZE).sum::<u64>()
    }

    /// Frames that could not be tracked and are lost until reboot.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

/// `range` minus `hole`: up to two pieces.
fn subtract(range: PhysRange, hole: PhysRange) -> [Option<PhysRange>; 2] {
    if hole.size == 0 || hole.end() <= range.start || hole.start >= range.end() {
        return [Some(range), None];
    }
    let below = (hole.start > range.start).then(|| PhysRange {
        start: range.start,
        size: hole.start - range.start,
    });
    let above = (hole.end() < range.end()).then(|| PhysRange {
        start: hole.end(),
        size: range.end() - hole.end(),
    });
    [below, above]
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn unaligned_ram_is_rounded_inwards() {
        let mut frames = FrameAllocator::new();
        frames.add_ram(range(0x1800, 0x2000), &[]);
        assert_eq!(frames.available(), 1);
        assert_eq!(frames.allocate(), Some(0x2000));
        assert_eq!(frames.allocate(), None);
    }
}
