//! The TCR_EL1 value for this MMU layout: both halves 48 bits, 4 KiB
//! granules, table walks Inner/Outer Write-Back Write-Allocate and Inner
//! Shareable (matching the leaf attributes), the ASID taken from TTBR0.

use super::address::VIRT_ADDR_BITS;
use super::asid::AsidBits;
use super::descriptor::SHAREABILITY_INNER;

/// T0SZ = T1SZ: the region size is 2^(64 - TnSZ) = 2^48 bytes.
const REGION_SIZE_OFFSET: u64 = 64 - VIRT_ADDR_BITS as u64;
/// IRGNn/ORGNn = 0b01: Normal, Write-Back Read-Allocate Write-Allocate
/// cacheable table walks.
const WALK_CACHE_WRITE_BACK_WRITE_ALLOCATE: u64 = 0b01;
/// TG0 = 0b00: 4 KiB granule for TTBR0.
const TG0_4KIB: u64 = 0b00;
/// TG1 = 0b10: 4 KiB granule for TTBR1 (TG1 encodes sizes differently).
const TG1_4KIB: u64 = 0b10;

const T0SZ_SHIFT: u32 = 0;
const IRGN0_SHIFT: u32 = 8;
const ORGN0_SHIFT: u32 = 10;
const SH0_SHIFT: u32 = 12;
const TG0_SHIFT: u32 = 14;
const T1SZ_SHIFT: u32 = 16;
/// A1 (bit 22) stays 0: the ASID comes from TTBR0_EL1, the user half.
const IRGN1_SHIFT: u32 = 24;
const ORGN1_SHIFT: u32 = 26;
const SH1_SHIFT: u32 = 28;
const TG1_SHIFT: u32 = 30;
const IPS_SHIFT: u32 = 32;
/// AS (bit 36): 1 = 16-bit ASIDs.
const AS_SHIFT: u32 = 36;
// EPD0/EPD1 (7, 23) = 0: both halves walk. TBI0/TBI1 (37, 38) = 0: the top
// byte takes part in translation, so tagged pointers fault. HA/HD (39, 40)
// = 0: no hardware access-flag or dirty-state updates (AF is always set).

/// Physical address size, as ID_AA64MMFR0_EL1.PARange reports it and
/// TCR_EL1.IPS encodes it (same encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhysicalAddressRange {
    /// 0b0000: 32 bits, 4 GiB.
    Bits32 = 0b0000,
    /// 0b0001: 36 bits, 64 GiB.
    Bits36 = 0b0001,
    /// 0b0010: 40 bits, 1 TiB.
    Bits40 = 0b0010,
    /// 0b0011: 42 bits, 4 TiB.
    Bits42 = 0b0011,
    /// 0b0100: 44 bits, 16 TiB.
    Bits44 = 0b0100,
    /// 0b0101: 48 bits, 256 TiB.
    Bits48 = 0b0101,
}

/// ID_AA64MMFR0_EL1.PARange is bits [3:0].
const PARANGE_MASK: u64 = 0b1111;

impl PhysicalAddressRange {
    /// Reads PARange from an ID_AA64MMFR0_EL1 value. Ranges above 48 bits
    /// (52-bit FEAT_LPA) are capped at 48: the descriptors here hold 48-bit
    /// output addresses only.
    pub const fn from_id_aa64mmfr0(mmfr0: u64) -> Self {
        match mmfr0 & PARANGE_MASK {
            0b0000 => Self::Bits32,
            0b0001 => Self::Bits36,
            0b0010 => Self::Bits40,
            0b0011 => Self::Bits42,
            0b0100 => Self::Bits44,
            _ => Self::Bits48,
        }
    }

    /// Address bits in this range.
    pub const fn bits(self) -> u32 {
        match self {
            Self::Bits32 => 32,
            Self::Bits36 => 36,
            Self::Bits40 => 40,
            Self::Bits42 => 42,
            Self::Bits44 => 44,
            Self::Bits48 => 48,
        }
    }
}

/// TCR_EL1 for both halves at 48 bits with 4 KiB granules, Inner/Outer
/// Write-Back Write-Allocate Inner Shareable walks, IPS = `pa_range`, the
/// ASID size given by `asid_bits` and taken from TTBR0_EL1 (A1 = 0).
pub const fn tcr_el1(pa_range: PhysicalAddressRange, asid_bits: AsidBits) -> u64 {
    let shareability = SHAREABILITY_INNER as u64;
    let cache = WALK_CACHE_WRITE_BACK_WRITE_ALLOCATE;
    let lower_half = (REGION_SIZE_OFFSET << T0SZ_SHIFT)
        | (cache << IRGN0_SHIFT)
        | (cache << ORGN0_SHIFT)
        | (shareability << SH0_SHIFT)
        | (TG0_4KIB << TG0_SHIFT);
    let upper_half = (REGION_SIZE_OFFSET << T1SZ_SHIFT)
        | (cache << IRGN1_SHIFT)
        | (cache << ORGN1_SHIFT)
        | (shareability << SH1_SHIFT)
        | (TG1_4KIB << TG1_SHIFT);
    let sixteen_bit_asids = matches!(asid_bits, AsidBits::Sixteen) as u64;
    lower_half | upper_half | ((pa_range as u64) << IPS_SHIFT) | (sixteen_bit_asids << AS_SHIFT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcr_matches_hand_computed_value() {
        // T0SZ 16 | IRGN0 01 | ORGN0 01 | SH0 11 | TG0 00 = 0x3510;
        // T1SZ 16 | IRGN1 01 | ORGN1 01 | SH1 11 | TG1 10 = 0xB510 << 16;
        // IPS 0b101 (48 bits) << 32; AS << 36.
        assert_eq!(
            tcr_el1(PhysicalAddressRange::Bits48, AsidBits::Sixteen),
            0x0000_0015_B510_3510
        );
        assert_eq!(
            tcr_el1(PhysicalAddressRange::Bits40, AsidBits::Eight),
            0x0000_0002_B510_3510
        );
    }

    #[test]
    fn parange_is_read_from_bits_3_to_0_and_capped_at_48() {
        assert_eq!(
            PhysicalAddressRange::from_id_aa64mmfr0(0x0000_0000_0000_1122),
            PhysicalAddressRange::Bits40
        );
        assert_eq!(PhysicalAddressRange::from_id_aa64mmfr0(0b0110).bits(), 48);
        assert_eq!(PhysicalAddressRange::from_id_aa64mmfr0(0b0000).bits(), 32);
    }
}
