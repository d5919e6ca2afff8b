//! Translation-table geometry (levels, indices) and [`TableMemory`], the one
//! way the mapper reaches table memory.

use super::address::{PhysAddr, PAGE_SHIFT};

/// Entries in one 4 KiB table of 8-byte descriptors.
pub const ENTRIES_PER_TABLE: usize = 512;
/// Virtual-address bits one level resolves: log2 of [`ENTRIES_PER_TABLE`].
const INDEX_BITS: u32 = 9;
/// Mask for one level's index.
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

/// Access to translation-table memory.
///
/// The kernel implements this twice: before the MMU is on, a table's
/// physical address is directly accessible; afterwards it is reached through
/// the kernel's phys→virt offset. Implementations must not panic or format;
/// see the module docs for why.
pub trait TableMemory {
    /// Allocates a zeroed, 4 KiB-aligned 4 KiB table and returns its physical
    /// address, or `None` when no table memory is left.
    fn allocate_table(&mut self) -> Option<PhysAddr>;
    /// Reads entry `index` (`< ENTRIES_PER_TABLE`) of the table at `table`.
    fn read_entry(&self, table: PhysAddr, index: usize) -> u64;
    /// Writes entry `index` (`< ENTRIES_PER_TABLE`) of the table at `table`.
    fn write_entry(&mut self, table: PhysAddr, index: usize, value: u64);
}

/// A lookup level. With a 4 KiB granule and 48-bit addresses the walk starts
/// at L0 and ends at L3; L1 and L2 may hold blocks, L3 holds pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// 512 GiB per entry; tables only.
    Zero,
    /// 1 GiB per entry; tables or 1 GiB blocks.
    One,
    /// 2 MiB per entry; tables or 2 MiB blocks.
    Two,
    /// 4 KiB per entry; pages only.
    Three,
}

impl Level {
    /// The level a walk starts at.
    pub const FIRST: Self = Self::Zero;

    /// How many levels lie below this one.
    pub(crate) const fn levels_below(self) -> u32 {
        match self {
            Self::Zero => 3,
            Self::One => 2,
            Self::Two => 1,
            Self::Three => 0,
        }
    }

    /// Bit position of the lowest virtual-address bit this level indexes.
    const fn shift(self) -> u32 {
        PAGE_SHIFT + INDEX_BITS * self.levels_below()
    }

    /// Bytes of address space one entry at this level covers.
    pub const fn entry_size(self) -> u64 {
        1 << self.shift()
    }

    /// The index of `va` in a table at this level. Only bits [47:12] take
    /// part, so an upper-half (TTBR1) address indexes like its low 48 bits.
    pub const fn index(self, va: u64) -> usize {
        // The mask keeps the value below 512, so the cast cannot truncate.
        ((va >> self.shift()) & INDEX_MASK) as usize
    }

    /// Whether an entry at this level may map memory directly (block or
    /// page) rather than point to a table.
    pub(crate) const fn may_be_leaf(self) -> bool {
        !matches!(self, Self::Zero)
    }

    /// Whether a leaf at this level is a block (L1, L2) rather than a page.
    pub(crate) const fn leaf_is_block(self) -> bool {
        matches!(self, Self::One | Self::Two)
    }

    /// The next level down, if any.
    pub const fn next(self) -> Option<Self> {
        match self {
            Self::Zero => Some(Self::One),
            Self::One => Some(Self::Two),
            Self::Two => Some(Self::Three),
            Self::Three => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_sizes_are_512g_1g_2m_4k() {
        assert_eq!(Level::Zero.entry_size(), 512 << 30);
        assert_eq!(Level::One.entry_size(), 1 << 30);
        assert_eq!(Level::Two.entry_size(), 2 << 20);
        assert_eq!(Level::Three.entry_size(), 4 << 10);
    }

    #[test]
    fn indices_use_bits_47_to_12() {
        // 0x0000_0080_4020_1000: L0 = 1, L1 = 1, L2 = 1, L3 = 1.
        let va = (1 << 39) | (1 << 30) | (1 << 21) | (1 << 12);
        for level in [Level::Zero, Level::One, Level::Two, Level::Three] {
            assert_eq!(level.index(va), 1);
        }
    }

    #[test]
    fn ttbr1_indices_ignore_the_top_16_bits() {
        assert_eq!(Level::Zero.index(0xFFFF_0000_0000_0000), 0);
        assert_eq!(Level::Zero.index(0xFFFF_FF80_0000_0000), 511);
        assert_eq!(Level::One.index(0xFFFF_0000_4000_0000), 1);
        let top = 0xFFFF_FFFF_FFFF_F000;
        for level in [Level::Zero, Level::One, Level::Two, Level::Three] {
            assert_eq!(level.index(top), 511);
        }
    }
}
