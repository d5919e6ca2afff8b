//! Free slots of the caller's own CNode: which are empty, handed out in
//! contiguous runs (a `Retype` of several objects and the ELF loader
//! each want consecutive slots) and given back when their capabilities
//! are gone.
//!
//! The allocator only keeps the books: it makes no syscall. Whoever frees
//! a slot has deleted its capability (`Task::destroy` does both).

use core::ops::Range;

/// Most slots one allocator manages (a 4096-slot CNode, radix 12).
pub const MAX_MANAGED_SLOTS: u64 = 4096;
const WORDS: usize = (MAX_MANAGED_SLOTS / 64) as usize;

/// Why slots could not be handed out or given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotError {
    /// No run of that many free slots (the count asked for).
    Exhausted(u64),
    /// The range to manage is empty, reversed or larger than
    /// [`MAX_MANAGED_SLOTS`].
    BadRange,
    /// A slot given back is outside the managed range or already free.
    NotAllocated(u64),
}

/// The free slots of `first..end` of a CNode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotAllocator {
    first: u64,
    end: u64,
    /// Bit `i` set: slot `first + i` is handed out.
    used: [u64; WORDS],
}

impl SlotAllocator {
    /// Manages `slots` (all empty now): for the root task
    /// `abi::bootinfo::ROOT_FIRST_FREE_SLOT..1 << ROOT_CNODE_RADIX`.
    pub fn new(slots: Range<u64>) -> Result<SlotAllocator, SlotError> {
        let count = slots
            .end
            .checked_sub(slots.start)
            .ok_or(SlotError::BadRange)?;
        if count == 0 || count > MAX_MANAGED_SLOTS {
            return Err(SlotError::BadRange);
        }
        Ok(SlotAllocator {
            first: slots.start,
            end: slots.end,
            used: [0; WORDS],
        })
    }

    /// The range managed.
    pub fn range(&self) -> Range<u64> {
        self.first..self.end
    }

    /// How many slots are free.
    pub fn free_count(&self) -> u64 {
        let used: u32 = self.used.iter().map(|w| w.count_ones()).sum();
        self.end - self.first - u64::from(used)
    }

    fn is_used(&self, slot: u64) -> bool {
        let i = slot - self.first;
        self.used[(i / 64) as usize] & (1 << (i % 64)) != 0
    }

    fn set(&mut self, slot: u64, used: bool) {
        let i = slot - self.first;
        let word = &mut self.used[(i / 64) as usize];
        if used {
            *word |= 1 << (i % 64);
        } else {
            *word &= !(1 << (i % 64));
        }
    }

    /// One free slot (the lowest).
    pub fn alloc(&mut self) -> Result<u64, SlotError> {
        self.alloc_range(1).map(|r| r.start)
    }

    /// The lowest run of `count` consecutive free slots (`count` ≥ 1).
    pub fn alloc_range(&mut self, count: u64) -> Result<Range<u64>, SlotError> {
        if count == 0 {
            return Err(SlotError::Exhausted(0));
        }
        let mut start = self.first;
        let mut run = 0;
        for slot in self.first..self.end {
            if self.is_used(slot) {
                run = 0;
                start = slot + 1;
                continue;
            }
            run += 1;
            if run == count {
                for taken in start..start + count {
                    self.set(taken, true);
                }
                return Ok(start..start + count);
            }
        }
        Err(SlotError::Exhausted(count))
    }

    /// Gives `slot` back (its capability is deleted already).
    pub fn free(&mut self, slot: u64) -> Result<(), SlotError> {
        if !(self.first..self.end).contains(&slot) || !self.is_used(slot) {
            return Err(SlotError::NotAllocated(slot));
        }
        self.set(slot, false);
        Ok(())
    }

    /// Gives every slot of `slots` back; checks them all first, so a bad
    /// range changes nothing.
    pub fn free_range(&mut self, slots: Range<u64>) -> Result<(), SlotError> {
        if let Some(bad) = slots
            .clone()
            .find(|&s| !(self.first..self.end).contains(&s) || !self.is_used(s))
        {
            return Err(SlotError::NotAllocated(bad));
        }
        for slot in slots {
            self.set(slot, false);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_come_lowest_first_and_in_runs() {
        let mut slots = SlotAllocator::new(80..90).unwrap();
        assert_eq!(slots.alloc(), Ok(80));
        assert_eq!(slots.alloc_range(3), Ok(81..84));
        assert_eq!(slots.free_count(), 6);
        slots.free(81).unwrap();
        // A hole of one does not hold a run of two.
        assert_eq!(slots.alloc_range(2), Ok(84..86));
        assert_eq!(slots.alloc(), Ok(81));
        assert_eq!(slots.alloc_range(5), Err(SlotError::Exhausted(5)));
        assert_eq!(slots.alloc_range(4), Ok(86..90));
        assert_eq!(slots.alloc(), Err(SlotError::Exhausted(1)));
        assert_eq!(slots.free_count(), 0);
    }

    #[test]
    fn freeing_checks_every_slot_first() {
        let mut slots = SlotAllocator::new(10..20).unwrap();
        let run = slots.alloc_range(4).unwrap();
        assert_eq!(slots.free(9), Err(SlotError::NotAllocated(9)));
        assert_eq!(slots.free(20), Err(SlotError::NotAllocated(20)));
        assert_eq!(slots.free_range(12..16), Err(SlotError::NotAllocated(14)));
        assert_eq!(slots.free_count(), 6, "a refused range freed nothing");
        slots.free_range(run.clone()).unwrap();
        assert_eq!(slots.free(10), Err(SlotError::NotAllocated(10)), "twice");
        assert_eq!(slots.alloc_range(10), Ok(10..20));
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(SlotAllocator::new(5..5), Err(SlotError::BadRange));
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 6..5;
        assert_eq!(SlotAllocator::new(reversed), Err(SlotError::BadRange));
        assert_eq!(
            SlotAllocator::new(0..MAX_MANAGED_SLOTS + 1),
            Err(SlotError::BadRange)
        );
        let mut all = SlotAllocator::new(0..MAX_MANAGED_SLOTS).unwrap();
        assert_eq!(all.alloc_range(MAX_MANAGED_SLOTS), Ok(0..MAX_MANAGED_SLOTS));
        assert_eq!(all.alloc_range(0), Err(SlotError::Exhausted(0)));
    }
}
