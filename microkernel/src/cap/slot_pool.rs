//! The global slot pool: which slots belong to a CNode.
//!
//! A CNode of radix `r` owns `2^r` consecutive slots starting at a multiple
//! of `2^r`. Aligned power-of-two blocks fragment no worse than a buddy
//! allocator, and a plain first-fit scan over the aligned positions finds
//! them without any free-list state. CNodes are made rarely (at retype),
//! so an O(SLOTS) scan is fine; lookups never touch the pool.

/// Which slots are in use by some CNode.
// Tests compare snapshots to show that a failed operation changed nothing.
#[cfg_attr(test, derive(Clone, PartialEq, Eq))]
pub(crate) struct SlotPool<const SLOTS: usize> {
    allocated: [bool; SLOTS],
    free: usize,
}

impl<const SLOTS: usize> SlotPool<SLOTS> {
    /// A pool with every slot free.
    pub(crate) const fn new() -> Self {
        SlotPool {
            allocated: [false; SLOTS],
            free: SLOTS,
        }
    }

    /// Slots no CNode owns.
    pub(crate) fn free_count(&self) -> usize {
        self.free
    }

    /// Does some CNode own slot `index`?
    pub(crate) fn is_allocated(&self, index: usize) -> bool {
        self.allocated.get(index).copied().unwrap_or(false)
    }

    /// Takes the first free, aligned block of `2^radix` slots; returns its
    /// first index, or `None` if no such block is free.
    pub(crate) fn allocate(&mut self, radix: u8) -> Option<usize> {
        let size = 1usize.checked_shl(radix.into())?;
        if size > SLOTS {
            return None;
        }
        let base = (0..=SLOTS - size)
            .step_by(size)
            .find(|&base| self.allocated[base..base + size].iter().all(|used| !used))?;
        self.allocated[base..base + size].fill(true);
        self.free -= size;
        Some(base)
    }

    /// Returns the block `allocate` gave out.
    pub(crate) fn release(&mut self, base: usize, radix: u8) {
        let size = 1usize << radix;
        let block = &mut self.allocated[base..base + size];
        self.free += block.iter().filter(|used| **used).count();
        block.fill(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_and_disjoint() {
        let mut pool = SlotPool::<16>::new();
        assert_eq!(pool.allocate(1), Some(0));
        assert_eq!(pool.allocate(2), Some(4), "aligned to its size, not at 2");
        assert_eq!(pool.allocate(1), Some(2));
        assert_eq!(pool.allocate(3), Some(8));
        assert_eq!(pool.free_count(), 0);
        assert_eq!(pool.allocate(1), None);
    }

    #[test]
    fn released_blocks_are_reused() {
        let mut pool = SlotPool::<8>::new();
        assert_eq!(pool.allocate(2), Some(0));
        assert_eq!(pool.allocate(2), Some(4));
        pool.release(0, 2);
        assert_eq!(pool.free_count(), 4);
        assert!(!pool.is_allocated(0) && pool.is_allocated(4));
        assert_eq!(pool.allocate(3), None, "no aligned block of 8 is free");
        assert_eq!(pool.allocate(2), Some(0));
    }

    #[test]
    fn oversized_requests_fail() {
        let mut pool = SlotPool::<8>::new();
        assert_eq!(pool.allocate(4), None);
        assert_eq!(pool.allocate(200), None);
        assert!(!pool.is_allocated(100));
    }
}
