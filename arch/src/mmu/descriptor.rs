//! VMSAv8-64 stage 1 descriptor formats for the 4 KiB granule with 48-bit
//! output addresses (Arm ARM D8, "VMSAv8-64 translation table format
//! descriptors"), and the classification of a raw entry by its low two bits.

use modular_bitfield::prelude::*;

use super::address::{PhysAddr, PAGE_SHIFT};
use super::table::Level;

/// SH[1:0] = 0b11: Inner Shareable. Also the encoding TCR_EL1.SHn uses.
pub(crate) const SHAREABILITY_INNER: u8 = 0b11;

/// AP[2:1]: who may read and write. Any EL0-writable region is also treated
/// as privileged-execute-never by the hardware.
#[derive(Specifier, Clone, Copy, Debug, PartialEq, Eq)]
#[bits = 2]
pub enum AccessPermission {
    /// 0b00: EL1 read/write, EL0 no access.
    El1ReadWrite = 0b00,
    /// 0b01: EL1 and EL0 read/write.
    El1El0ReadWrite = 0b01,
    /// 0b10: EL1 read-only, EL0 no access.
    El1ReadOnly = 0b10,
    /// 0b11: EL1 and EL0 read-only.
    El1El0ReadOnly = 0b11,
}

/// A table descriptor (L0..L2, bits[1:0] = 0b11): the next-level table.
/// The hierarchical APTable/XNTable/PXNTable bits are left zero: permissions
/// live in the leaf entries only.
#[bitfield(bits = 64)]
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableDescriptor {
    /// Bit 0: the entry is valid.
    pub valid: bool,
    /// Bit 1: 1 = table descriptor.
    pub is_table: bool,
    #[skip]
    __: B10,
    /// Bits [47:12]: physical address of the next-level table, >> 12.
    pub next_table: B36,
    #[skip]
    __: B11,
    /// Bit 59: PXNTable.
    pub pxn_table: bool,
    /// Bit 60: XNTable (UXNTable).
    pub xn_table: bool,
    /// Bits [62:61]: APTable.
    pub ap_table: B2,
    /// Bit 63: NSTable.
    pub ns_table: bool,
}

/// A block (L1/L2, bits[1:0] = 0b01) or page (L3, bits[1:0] = 0b11)
/// descriptor. For a block the output address bits below the block size are
/// RES0; the mapper only writes aligned addresses.
#[bitfield(bits = 64)]
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockPageDescriptor {
    /// Bit 0: the entry is valid.
    pub valid: bool,
    /// Bit 1: 1 = page (at L3), 0 = block (at L1/L2).
    pub is_page: bool,
    /// Bits [4:2]: AttrIndx, an index into MAIR_EL1.
    pub attr_index: B3,
    /// Bit 5: NS (only meaningful from Secure state).
    pub non_secure: bool,
    /// Bits [7:6]: AP[2:1].
    pub access: AccessPermission,
    /// Bits [9:8]: SH, shareability.
    pub shareability: B2,
    /// Bit 10: AF, the access flag. Always set: no access-flag faults.
    pub access_flag: bool,
    /// Bit 11: nG. Set for ASID-tagged (user) entries.
    pub not_global: bool,
    /// Bits [47:12]: output address >> 12.
    pub output_address: B36,
    #[skip]
    __: B2,
    /// Bit 50: GP, BTI guarded page.
    pub guarded: bool,
    /// Bit 51: DBM, dirty bit modifier.
    pub dirty_bit_modifier: bool,
    /// Bit 52: contiguous hint.
    pub contiguous: bool,
    /// Bit 53: PXN, privileged (EL1) execute-never.
    pub privileged_execute_never: bool,
    /// Bit 54: UXN, unprivileged (EL0) execute-never.
    pub unprivileged_execute_never: bool,
    /// Bits [58:55]: reserved for software.
    pub software: B4,
    #[skip]
    __: B5,
}

/// The fields of a [`BlockPageDescriptor`] as bits of its word, for the
/// code that reads or builds leaves on every translation (the bitfield
/// type is a byte array: built field by field it cost some 40
/// instructions a walk). A test checks each against the bitfield.
pub(crate) mod leaf_bits {
    /// Bit 0: valid.
    pub const VALID: u64 = 1 << 0;
    /// Bit 1: a page (at L3), not a block.
    pub const IS_PAGE: u64 = 1 << 1;
    /// Bits [4:2]: AttrIndx.
    pub const ATTR_INDEX_SHIFT: u32 = 2;
    /// Bits [7:6]: AP[2:1].
    pub const ACCESS_SHIFT: u32 = 6;
    /// Bits [9:8]: SH.
    pub const SHAREABILITY_SHIFT: u32 = 8;
    /// Bit 10: AF.
    pub const ACCESS_FLAG: u64 = 1 << 10;
    /// Bit 11: nG.
    pub const NOT_GLOBAL: u64 = 1 << 11;
    /// Bits [47:12]: the output address.
    pub const OUTPUT_ADDRESS: u64 = ((1 << 36) - 1) << 12;
    /// Bit 53: PXN.
    pub const PRIVILEGED_EXECUTE_NEVER: u64 = 1 << 53;
    /// Bit 54: UXN.
    pub const UNPRIVILEGED_EXECUTE_NEVER: u64 = 1 << 54;
}

impl BlockPageDescriptor {
    /// The output address with the low bits a leaf of `level` ignores cleared.
    pub(crate) fn base_address(self, level: Level) -> u64 {
        (self.output_address() << PAGE_SHIFT) & !(level.entry_size() - 1)
    }
}

impl TableDescriptor {
    /// A valid table descriptor for the table at `table`, or `None` if the
    /// address does not fit the descriptor.
    pub(crate) fn pointing_to(table: PhysAddr) -> Option<Self> {
        Self::new()
            .with_valid(true)
            .with_is_table(true)
            .with_next_table_checked(table.as_u64() >> PAGE_SHIFT)
            .ok()
    }

    /// The next-level table's physical address.
    pub(crate) fn table_address(self) -> PhysAddr {
        PhysAddr::new(self.next_table() << PAGE_SHIFT)
    }
}

/// What a raw entry is, by its low two bits and the level it sits at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
///
/// The descriptors are carried as their raw words: the bitfield types are
/// byte arrays (alignment 1), and an enum of them was built and read back
/// byte by byte in memory on every walk.
pub(crate) enum Entry {
    /// Bit 0 clear: faults; nothing mapped.
    Invalid,
    /// A table descriptor at L0..L2 (a `TableDescriptor`).
    Table(u64),
    /// A block at L1/L2 or a page at L3 (a `BlockPageDescriptor`).
    Leaf(u64),
    /// A block at L0 or bits[1:0] = 0b01 at L3: reserved, never written here.
    Reserved,
}

/// bits[1:0] of a descriptor.
const TYPE_MASK: u64 = 0b11;
const TYPE_BLOCK: u64 = 0b01;
const TYPE_TABLE_OR_PAGE: u64 = 0b11;

impl Entry {
    /// Classifies `raw`, found in a table at `level`.
    pub(crate) fn decode(raw: u64, level: Level) -> Self {
        match (raw & TYPE_MASK, level) {
            (TYPE_TABLE_OR_PAGE, Level::Three) => Self::Leaf(raw),
            (TYPE_TABLE_OR_PAGE, _) => Self::Table(raw),
            (TYPE_BLOCK, Level::One | Level::Two) => Self::Leaf(raw),
            (TYPE_BLOCK, _) => Self::Reserved,
            _ => Self::Invalid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_page_fields_sit_at_arm_arm_bit_positions() {
        let field = |d: BlockPageDescriptor| u64::from(d);
        let zero = BlockPageDescriptor::new();
        assert_eq!(field(zero.with_valid(true)), 1 << 0);
        assert_eq!(field(zero.with_is_page(true)), 1 << 1);
        assert_eq!(field(zero.with_attr_index(0b111)), 0b111 << 2);
        assert_eq!(field(zero.with_non_secure(true)), 1 << 5);
        assert_eq!(
            field(zero.with_access(AccessPermission::El1El0ReadWrite)),
            1 << 6
        );
        assert_eq!(
            field(zero.with_access(AccessPermission::El1ReadOnly)),
            1 << 7
        );
        assert_eq!(field(zero.with_shareability(SHAREABILITY_INNER)), 0b11 << 8);
        assert_eq!(field(zero.with_access_flag(true)), 1 << 10);
        assert_eq!(field(zero.with_not_global(true)), 1 << 11);
        assert_eq!(field(zero.with_output_address(1)), 1 << 12);
        assert_eq!(
            field(zero.with_output_address((1 << 36) - 1)),
            0x0000_FFFF_FFFF_F000
        );
        assert_eq!(field(zero.with_guarded(true)), 1 << 50);
        assert_eq!(field(zero.with_dirty_bit_modifier(true)), 1 << 51);
        assert_eq!(field(zero.with_contiguous(true)), 1 << 52);
        assert_eq!(field(zero.with_privileged_execute_never(true)), 1 << 53);
        assert_eq!(field(zero.with_unprivileged_execute_never(true)), 1 << 54);
        assert_eq!(field(zero.with_software(0b1111)), 0b1111 << 55);
    }

    #[test]
    fn table_fields_sit_at_arm_arm_bit_positions() {
        let table = TableDescriptor::pointing_to(PhysAddr::new(0x4008_1000));
        assert_eq!(table.map(u64::from), Some(0x4008_1003));
        let zero = TableDescriptor::new();
        assert_eq!(u64::from(zero.with_pxn_table(true)), 1 << 59);
        assert_eq!(u64::from(zero.with_xn_table(true)), 1 << 60);
        assert_eq!(u64::from(zero.with_ap_table(0b11)), 0b11 << 61);
        assert_eq!(u64::from(zero.with_ns_table(true)), 1 << 63);
        assert_eq!(TableDescriptor::pointing_to(PhysAddr::new(1 << 48)), None);
    }

    #[test]
    fn the_leaf_bits_are_the_bitfields_fields() {
        use super::leaf_bits::*;
        let zero = BlockPageDescriptor::new();
        let word = |d: BlockPageDescriptor| u64::from(d);
        assert_eq!(word(zero.with_valid(true)), VALID);
        assert_eq!(word(zero.with_is_page(true)), IS_PAGE);
        assert_eq!(word(zero.with_attr_index(0b111)), 0b111 << ATTR_INDEX_SHIFT);
        assert_eq!(
            word(zero.with_access(AccessPermission::El1El0ReadOnly)),
            0b11 << ACCESS_SHIFT
        );
        assert_eq!(
            word(zero.with_shareability(0b11)),
            0b11 << SHAREABILITY_SHIFT
        );
        assert_eq!(word(zero.with_access_flag(true)), ACCESS_FLAG);
        assert_eq!(word(zero.with_not_global(true)), NOT_GLOBAL);
        assert_eq!(
            word(zero.with_output_address((1 << 36) - 1)),
            OUTPUT_ADDRESS
        );
        assert_eq!(
            word(zero.with_privileged_execute_never(true)),
            PRIVILEGED_EXECUTE_NEVER
        );
        assert_eq!(
            word(zero.with_unprivileged_execute_never(true)),
            UNPRIVILEGED_EXECUTE_NEVER
        );
        for (access, raw) in [
            (AccessPermission::El1ReadWrite, 0b00),
            (AccessPermission::El1El0ReadWrite, 0b01),
            (AccessPermission::El1ReadOnly, 0b10),
            (AccessPermission::El1El0ReadOnly, 0b11),
        ] {
            assert_eq!(word(zero.with_access(access)) >> ACCESS_SHIFT, raw);
        }
    }

    #[test]
    fn entries_are_classified_by_type_bits_and_level() {
        assert_eq!(Entry::decode(0x4000_0002, Level::Two), Entry::Invalid);
        assert!(matches!(
            Entry::decode(0x4000_0003, Level::Zero),
            Entry::Table(_)
        ));
        assert!(matches!(
            Entry::decode(0x4000_0001, Level::One),
            Entry::Leaf(_)
        ));
        assert!(matches!(
            Entry::decode(0x4000_0003, Level::Three),
            Entry::Leaf(_)
        ));
        assert_eq!(Entry::decode(0x4000_0001, Level::Zero), Entry::Reserved);
        assert_eq!(Entry::decode(0x4000_0001, Level::Three), Entry::Reserved);
    }

    #[test]
    fn block_base_ignores_bits_below_the_block_size() {
        let block = BlockPageDescriptor::from(0x4020_1000 | 0b01);
        assert_eq!(block.base_address(Level::Two), 0x4020_0000);
        assert_eq!(block.base_address(Level::Three), 0x4020_1000);
    }
}
