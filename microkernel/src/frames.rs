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

    /// `pages` physically contiguous frames, page aligned, from the
    /// untouched part of a RAM range (for kernel tables that need no
    /// further alignment). `None` when no range has room.
    pub fn allocate_pages(&mut self, pages: u64) -> Option<u64> {
        let bytes = pages.checked_mul(PAGE_SIZE)?;
        let range = self.ranges.iter_mut().find(|r| r.size >= bytes)?;
        let start = range.start;
        range.start += bytes;
        range.size -= bytes;
        self.allocated += pages;
        Some(start)
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

    /// Takes every free frame out of the allocator as naturally aligned
    /// power-of-two blocks (what an Untyped is), at most `N` of them,
    /// largest first, but leaves at least `keep` pages: the root task's
    /// "all free RAM". Blocks that do not fit in `N` or make up `keep`
    /// stay free (the smallest); the second value counts their pages. Give
    /// the blocks back with `give_back` when their Untypeds are gone.
    pub fn take_as_blocks<const N: usize>(&mut self, keep: u64) -> (Vec<PhysRange, N>, u64) {
        // Pass 1: how many blocks of each size there are, to take the
        // largest `N` (whole size classes, then part of one).
        let mut per_size = [0usize; 64];
        self.freed.sort_unstable();
        self.for_each_block(|block| per_size[block.size.trailing_zeros() as usize] += 1);
        let mut quota = [0usize; 64];
        let mut left = N;
        for bits in (0..64).rev() {
            quota[bits] = per_size[bits].min(left);
            left -= quota[bits];
        }
        // Then give up the smallest taken blocks until `keep` pages stay.
        let total = self.available();
        let mut taken_pages: u64 = (0..64)
            .map(|bits| (quota[bits] as u64) << bits)
            .sum::<u64>()
            / PAGE_SIZE;
        for (bits, count) in quota.iter_mut().enumerate() {
            while *count > 0 && total - taken_pages < keep {
                *count -= 1;
                taken_pages -= (1u64 << bits) / PAGE_SIZE;
            }
        }
        // Pass 2: the same blocks in the same order; take those within
        // the quota, give the rest back.
        let mut taken: Vec<PhysRange, N> = Vec::new();
        let mut kept_pages = 0;
        let mut take_or_keep = |block: PhysRange, allocator: &mut FrameAllocator| {
            let bits = block.size.trailing_zeros() as usize;
            if quota[bits] > 0 && taken.push(block).is_ok() {
                quota[bits] -= 1;
                allocator.allocated += block.size / PAGE_SIZE;
            } else {
                kept_pages += block.size / PAGE_SIZE;
                allocator.return_block(block);
            }
        };
        // The reuse stack's frames as they are now: blocks the range pass
        // gives back may append frames to it (when the range table is
        // full), and those are already counted as kept.
        let sorted = self.freed.len();
        let ranges = core::mem::take(&mut self.ranges);
        for range in &ranges {
            split_into_blocks(*range, |block| take_or_keep(block, self));
        }
        // The reuse stack is consumed in place (it is too large to copy
        // onto the kernel stack); blocks given back may append to it, past
        // the frames being read.
        let mut index = 0;
        while index < sorted {
            let start = self.freed[index];
            let mut size = PAGE_SIZE;
            index += 1;
            while index < sorted && self.freed[index] == start + size {
                size += PAGE_SIZE;
                index += 1;
            }
            split_into_blocks(PhysRange { start, size }, |block| take_or_keep(block, self));
        }
        let appended = self.freed.len() - sorted;
        for i in 0..appended {
            self.freed[i] = self.freed[sorted + i];
        }
        self.freed.truncate(appended);
        (taken, kept_pages)
    }

    /// Calls `visit` with every block `take_as_blocks` would make.
    fn for_each_block(&self, mut visit: impl FnMut(PhysRange)) {
        for range in &self.ranges {
            split_into_blocks(*range, &mut visit);
        }
        for run in runs(&self.freed) {
            split_into_blocks(run, &mut visit);
        }
    }

    /// Returns a block from `take_as_blocks`.
    pub fn give_back(&mut self, block: PhysRange) {
        self.allocated = self.allocated.saturating_sub(block.size / PAGE_SIZE);
        self.return_block(block);
    }

    /// Puts free memory back: joined to a range it touches, else as a new
    /// range, else frame by frame on the reuse stack (else lost, counted).
    fn return_block(&mut self, block: PhysRange) {
        if let Some(range) = self.ranges.iter_mut().find(|r| r.end() == block.start) {
            range.size += block.size;
            return;
        }
        if let Some(range) = self.ranges.iter_mut().find(|r| block.end() == r.start) {
            range.start = block.start;
            range.size += block.size;
            return;
        }
        if self.ranges.push(block).is_ok() {
            return;
        }
        let mut frame = block.start;
        while frame < block.end() {
            self.free_skipped(frame);
            frame += PAGE_SIZE;
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

    /// Whether any page of `range` is free to hand out: memory that must
    /// stay the kernel's (the system image, mapped into the root in
    /// place) is checked with this before it is used.
    pub fn holds_any(&self, range: PhysRange) -> bool {
        let overlaps = |start: u64, size: u64| start < range.end() && range.start < start + size;
        self.ranges.iter().any(|r| overlaps(r.start, r.size))
            || self.freed.iter().any(|&frame| overlaps(frame, PAGE_SIZE))
    }
}

/// Cuts `range` (page aligned) into naturally aligned power-of-two
/// blocks, lowest address first, each as large as its start's alignment
/// and the rest of the range allow.
pub fn split_into_blocks(range: PhysRange, mut visit: impl FnMut(PhysRange)) {
    /// The largest Untyped (the 48-bit physical address space).
    const MAX_BLOCK: u64 = 1 << 47;
    let mut start = range.start;
    let end = range.end();
    while start < end {
        let alignment = if start == 0 {
            MAX_BLOCK
        } else {
            1 << start.trailing_zeros()
        };
        let fits = 1 << (63 - (end - start).leading_zeros());
        let size = alignment.min(fits).min(MAX_BLOCK);
        visit(PhysRange { start, size });
        start += size;
    }
}

/// The runs of consecutive frames in a sorted list of frames.
fn runs(sorted: &[u64]) -> impl Iterator<Item = PhysRange> + '_ {
    let mut index = 0;
    core::iter::from_fn(move || {
        let start = *sorted.get(index)?;
        let mut size = PAGE_SIZE;
        index += 1;
        while sorted.get(index) == Some(&(start + size)) {
            size += PAGE_SIZE;
            index += 1;
        }
        Some(PhysRange { start, size })
    })
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
mod tests;
