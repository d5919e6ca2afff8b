//! Physical and virtual addresses, and the two halves of the virtual address
//! space that TTBR0_EL1 and TTBR1_EL1 translate.

/// Size of a translation granule and of a page: 4 KiB.
pub const PAGE_SIZE: u64 = 1 << PAGE_SHIFT;
/// log2 of [`PAGE_SIZE`].
pub(crate) const PAGE_SHIFT: u32 = 12;
/// Virtual address bits per half (T0SZ = T1SZ = 64 - 48).
pub const VIRT_ADDR_BITS: u32 = 48;
/// Output address bits the descriptor format holds (no FEAT_LPA/LPA2).
pub const PHYS_ADDR_BITS: u32 = 48;

/// First address of the upper (kernel, TTBR1) half.
const UPPER_HALF_BASE: u64 = !0 << VIRT_ADDR_BITS;
/// One past the last address of the lower (user, TTBR0) half.
const LOWER_HALF_END: u64 = 1 << VIRT_ADDR_BITS;
/// One past the highest physical address a descriptor can hold.
pub(crate) const PHYS_ADDR_END: u64 = 1 << PHYS_ADDR_BITS;

/// A physical (output) address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhysAddr(u64);

impl PhysAddr {
    /// Wraps a raw physical address.
    pub const fn new(address: u64) -> Self {
        Self(address)
    }

    /// The raw address.
    pub const fn as_u64(self) -> u64 {
        self.0
    }
}

/// A virtual (input) address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VirtAddr(u64);

impl VirtAddr {
    /// Wraps a raw virtual address.
    pub const fn new(address: u64) -> Self {
        Self(address)
    }

    /// The raw address.
    pub const fn as_u64(self) -> u64 {
        self.0
    }
}

/// Which half of the virtual address space a translation table serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    /// `0..2^48`, translated through TTBR0_EL1: user space (and the boot
    /// identity map).
    Lower,
    /// `0xFFFF_0000_0000_0000..=u64::MAX`, translated through TTBR1_EL1: the
    /// kernel.
    Upper,
}

impl Half {
    /// Whether `[start, start + size)` lies wholly in this half. `size` must
    /// be non-zero.
    pub const fn contains(self, start: u64, size: u64) -> bool {
        // `last` rather than `end` so a range ending at 2^64 does not overflow.
        let last = match start.checked_add(size - 1) {
            Some(last) => last,
            None => return false,
        };
        match self {
            Self::Lower => last < LOWER_HALF_END,
            Self::Upper => start >= UPPER_HALF_BASE,
        }
    }
}

/// Whether `value` is a multiple of `alignment` (a power of two).
pub(crate) const fn is_aligned(value: u64, alignment: u64) -> bool {
    value & (alignment - 1) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_are_the_48_bit_ranges_at_either_end() {
        assert!(Half::Lower.contains(0, PAGE_SIZE));
        assert!(Half::Lower.contains(LOWER_HALF_END - PAGE_SIZE, PAGE_SIZE));
        assert!(!Half::Lower.contains(LOWER_HALF_END - PAGE_SIZE, 2 * PAGE_SIZE));
        assert!(Half::Upper.contains(0xFFFF_0000_0000_0000, PAGE_SIZE));
        assert!(Half::Upper.contains(u64::MAX - PAGE_SIZE + 1, PAGE_SIZE));
        assert!(!Half::Upper.contains(0xFFFE_FFFF_FFFF_F000, 2 * PAGE_SIZE));
        assert!(!Half::Upper.contains(u64::MAX - PAGE_SIZE + 1, 2 * PAGE_SIZE));
    }
}
