//! The permission vocabulary of a mapping and its encoding into leaf
//! descriptors, with the MAIR_EL1 value that matches the AttrIndx used.
//!
//! Rules every [`Permissions`] obeys (checked by [`Permissions::new`] and,
//! on the way back, by decoding):
//! - W^X: nothing is both writable and executable, at any EL.
//! - User mappings are never executable at EL1 (PXN = 1), are non-global
//!   (nG = 1, ASID-tagged) and are the only ones EL0 can reach.
//! - Kernel mappings are never accessible at EL0, never executable at EL0
//!   (UXN = 1) and are global (nG = 0).
//! - Data mappings (not executable) are UXN and PXN; device memory is never
//!   executable.

use super::descriptor::{leaf_bits, AccessPermission, BlockPageDescriptor, SHAREABILITY_INNER};

/// AttrIndx of Normal memory, Inner/Outer Write-Back Read/Write-Allocate.
pub const MAIR_INDEX_NORMAL: u8 = 0;
/// AttrIndx of Device-nGnRE memory.
pub const MAIR_INDEX_DEVICE: u8 = 1;

/// MAIR Attr<n> nibble for Normal memory: Write-Back Non-transient,
/// Read-Allocate, Write-Allocate (0b1111).
const MAIR_NORMAL_WRITE_BACK_RW_ALLOCATE: u64 = 0b1111;
/// Attr<n>[7:4] describe the outer, [3:0] the inner cacheability.
const MAIR_OUTER_SHIFT: u32 = 4;
/// Attr<n> for Normal Inner+Outer Write-Back RW-Allocate: 0xFF.
const MAIR_ATTR_NORMAL: u64 =
    (MAIR_NORMAL_WRITE_BACK_RW_ALLOCATE << MAIR_OUTER_SHIFT) | MAIR_NORMAL_WRITE_BACK_RW_ALLOCATE;
/// Attr<n> for Device-nGnRE: [7:4] = 0b0000 (Device), [3:2] = 0b01 (nGnRE).
const MAIR_ATTR_DEVICE_NGNRE: u64 = 0b0000_0100;
/// Bits per Attr<n> field of MAIR_EL1.
const MAIR_ATTR_BITS: u32 = 8;

/// The MAIR_EL1 value matching [`MAIR_INDEX_NORMAL`] and
/// [`MAIR_INDEX_DEVICE`] (0x04FF). Unused slots are 0 (Device-nGnRnE).
pub const fn mair_el1() -> u64 {
    (MAIR_ATTR_NORMAL << (MAIR_ATTR_BITS * MAIR_INDEX_NORMAL as u32))
        | (MAIR_ATTR_DEVICE_NGNRE << (MAIR_ATTR_BITS * MAIR_INDEX_DEVICE as u32))
}

/// The memory type of a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// RAM: Normal, Write-Back cacheable, Inner Shareable.
    Normal,
    /// MMIO: Device-nGnRE. (SH is written as Inner Shareable; the hardware
    /// treats Device memory as Outer Shareable regardless.)
    Device,
}

impl MemoryKind {
    const fn mair_index(self) -> u8 {
        match self {
            Self::Normal => MAIR_INDEX_NORMAL,
            Self::Device => MAIR_INDEX_DEVICE,
        }
    }
}

/// Who a mapping is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// EL1 only; global (nG = 0).
    Kernel,
    /// EL0 (and EL1 unless PAN hides it); ASID-tagged (nG = 1).
    User,
}

/// Data access granted to the owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    ReadOnly,
    /// Read and write.
    ReadWrite,
}

/// Why a set of permissions (or a descriptor read back) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionError {
    /// Writable and executable at once (W^X).
    WritableAndExecutable,
    /// Executable device memory.
    ExecutableDevice,
    /// A descriptor whose bits no valid [`Permissions`] encodes to.
    UnrecognisedDescriptor,
}

/// Validated permissions of a mapping: owner, access, executability and
/// memory type. Only rule-abiding values can exist (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permissions {
    owner: Owner,
    access: Access,
    executable: bool,
    memory: MemoryKind,
}

impl Permissions {
    /// Kernel text: EL1 read + execute.
    pub const KERNEL_RX: Self = Self::preset(Owner::Kernel, Access::ReadOnly, true);
    /// Kernel read-only data.
    pub const KERNEL_RO: Self = Self::preset(Owner::Kernel, Access::ReadOnly, false);
    /// Kernel data, stacks and the linear map of RAM.
    pub const KERNEL_RW: Self = Self::preset(Owner::Kernel, Access::ReadWrite, false);
    /// User text: EL0 read + execute.
    pub const USER_RX: Self = Self::preset(Owner::User, Access::ReadOnly, true);
    /// User read-only data.
    pub const USER_RO: Self = Self::preset(Owner::User, Access::ReadOnly, false);
    /// User data, stacks, IPC buffers.
    pub const USER_RW: Self = Self::preset(Owner::User, Access::ReadWrite, false);
    /// Kernel MMIO: EL1 read/write Device-nGnRE, never executable.
    pub const DEVICE: Self = Self {
        owner: Owner::Kernel,
        access: Access::ReadWrite,
        executable: false,
        memory: MemoryKind::Device,
    };

    /// User MMIO, read-only: EL0 read Device-nGnRE, never executable.
    pub const USER_DEVICE_RO: Self = Self {
        owner: Owner::User,
        access: Access::ReadOnly,
        executable: false,
        memory: MemoryKind::Device,
    };
    /// User MMIO: EL0 read/write Device-nGnRE, never executable.
    pub const USER_DEVICE_RW: Self = Self {
        owner: Owner::User,
        access: Access::ReadWrite,
        executable: false,
        memory: MemoryKind::Device,
    };

    const fn preset(owner: Owner, access: Access, executable: bool) -> Self {
        Self {
            owner,
            access,
            executable,
            memory: MemoryKind::Normal,
        }
    }

    /// Builds permissions, refusing W^X violations and executable device
    /// memory. `executable` means executable by the owner's EL only.
    pub const fn new(
        owner: Owner,
        access: Access,
        executable: bool,
        memory: MemoryKind,
    ) -> Result<Self, PermissionError> {
        if executable && matches!(access, Access::ReadWrite) {
            return Err(PermissionError::WritableAndExecutable);
        }
        if executable && matches!(memory, MemoryKind::Device) {
            return Err(PermissionError::ExecutableDevice);
        }
        Ok(Self {
            owner,
            access,
            executable,
            memory,
        })
    }

    /// Who the mapping is for.
    pub const fn owner(self) -> Owner {
        self.owner
    }

    /// The data access granted.
    pub const fn access(self) -> Access {
        self.access
    }

    /// Whether the owner's EL may execute from the mapping.
    pub const fn is_executable(self) -> bool {
        self.executable
    }

    /// The memory type.
    pub const fn memory(self) -> MemoryKind {
        self.memory
    }

    /// A valid leaf descriptor with these permissions, AF = 1, SH = Inner
    /// Shareable, and neither output address nor page bit set yet.
    pub(crate) fn leaf_template(self) -> BlockPageDescriptor {
        BlockPageDescriptor::from(self.template_word())
    }

    /// `leaf_template` as its word.
    fn template_word(self) -> u64 {
        let flag = |on: bool, bit: u64| if on { bit } else { 0 };
        let kernel = matches!(self.owner, Owner::Kernel);
        let access = match (self.owner, self.access) {
            (Owner::Kernel, Access::ReadWrite) => AccessPermission::El1ReadWrite,
            (Owner::Kernel, Access::ReadOnly) => AccessPermission::El1ReadOnly,
            (Owner::User, Access::ReadWrite) => AccessPermission::El1El0ReadWrite,
            (Owner::User, Access::ReadOnly) => AccessPermission::El1El0ReadOnly,
        };
        leaf_bits::VALID
            | (self.memory.mair_index() as u64) << leaf_bits::ATTR_INDEX_SHIFT
            | (access as u64) << leaf_bits::ACCESS_SHIFT
            | (SHAREABILITY_INNER as u64) << leaf_bits::SHAREABILITY_SHIFT
            | leaf_bits::ACCESS_FLAG
            | flag(!kernel, leaf_bits::NOT_GLOBAL)
            | flag(
                !(kernel && self.executable),
                leaf_bits::PRIVILEGED_EXECUTE_NEVER,
            )
            | flag(
                kernel || !self.executable,
                leaf_bits::UNPRIVILEGED_EXECUTE_NEVER,
            )
    }

    /// Decodes the permissions of a leaf, refusing any descriptor that
    /// [`Self::leaf_template`] would not have produced. (On the word's
    /// bits: it runs on every translation.)
    pub(crate) fn from_leaf(leaf: BlockPageDescriptor) -> Result<Self, PermissionError> {
        let raw = u64::from(leaf);
        let memory = match ((raw >> leaf_bits::ATTR_INDEX_SHIFT) & 0b111) as u8 {
            MAIR_INDEX_NORMAL => MemoryKind::Normal,
            MAIR_INDEX_DEVICE => MemoryKind::Device,
            _ => return Err(PermissionError::UnrecognisedDescriptor),
        };
        // AP[2:1]: bit 1 (AP[2]) read-only, bit 0 (AP[1]) EL0 access.
        let ap = (raw >> leaf_bits::ACCESS_SHIFT) & 0b11;
        let owner = if ap & 0b01 != 0 {
            Owner::User
        } else {
            Owner::Kernel
        };
        let access = if ap & 0b10 != 0 {
            Access::ReadOnly
        } else {
            Access::ReadWrite
        };
        let executable = match owner {
            Owner::Kernel => raw & leaf_bits::PRIVILEGED_EXECUTE_NEVER == 0,
            Owner::User => raw & leaf_bits::UNPRIVILEGED_EXECUTE_NEVER == 0,
        };
        let permissions = Self::new(owner, access, executable, memory)?;
        let attributes = raw & !(leaf_bits::OUTPUT_ADDRESS | leaf_bits::IS_PAGE);
        if attributes == permissions.template_word() {
            Ok(permissions)
        } else {
            Err(PermissionError::UnrecognisedDescriptor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Permissions; 7] = [
        Permissions::KERNEL_RX,
        Permissions::KERNEL_RO,
        Permissions::KERNEL_RW,
        Permissions::USER_RX,
        Permissions::USER_RO,
        Permissions::USER_RW,
        Permissions::DEVICE,
    ];

    fn page(permissions: Permissions, address: u64) -> u64 {
        u64::from(
            permissions
                .leaf_template()
                .with_is_page(true)
                .with_output_address(address >> 12),
        )
    }

    #[test]
    fn mair_holds_write_back_normal_at_0_and_device_ngnre_at_1() {
        assert_eq!(mair_el1(), 0x04FF);
    }

    #[test]
    fn known_entries_match_hand_computed_values() {
        // valid|page, AttrIndx 0, AP 00, SH 11, AF, PXN (53), UXN (54).
        assert_eq!(
            page(Permissions::KERNEL_RW, 0x4008_0000),
            0x0060_0000_4008_0703
        );
        // Kernel text: AP 10 (RO), UXN only.
        assert_eq!(
            page(Permissions::KERNEL_RX, 0x4008_0000),
            0x0040_0000_4008_0783
        );
        // User text: AP 11, nG, PXN only.
        assert_eq!(
            page(Permissions::USER_RX, 0x4010_0000),
            0x0020_0000_4010_0FC3
        );
        // User data: AP 01, nG, PXN + UXN.
        assert_eq!(
            page(Permissions::USER_RW, 0x4010_0000),
            0x0060_0000_4010_0F43
        );
        // Device: AttrIndx 1, AP 00, PXN + UXN.
        assert_eq!(
            page(Permissions::DEVICE, 0x0900_0000),
            0x0060_0000_0900_0707
        );
    }

    #[test]
    fn writable_executable_and_executable_device_are_refused() {
        for owner in [Owner::Kernel, Owner::User] {
            assert_eq!(
                Permissions::new(owner, Access::ReadWrite, true, MemoryKind::Normal),
                Err(PermissionError::WritableAndExecutable)
            );
            assert_eq!(
                Permissions::new(owner, Access::ReadOnly, true, MemoryKind::Device),
                Err(PermissionError::ExecutableDevice)
            );
        }
    }

    #[test]
    fn presets_obey_every_rule() {
        for permissions in ALL {
            let rebuilt = Permissions::new(
                permissions.owner(),
                permissions.access(),
                permissions.is_executable(),
                permissions.memory(),
            );
            assert_eq!(rebuilt, Ok(permissions));
            let leaf = permissions.leaf_template();
            let user = permissions.owner() == Owner::User;
            let writable = permissions.access() == Access::ReadWrite;
            assert!(leaf.access_flag());
            assert_eq!(leaf.shareability(), SHAREABILITY_INNER);
            assert_eq!(leaf.not_global(), user, "{permissions:?}");
            assert!(
                !writable || (leaf.privileged_execute_never() && leaf.unprivileged_execute_never())
            );
            if user {
                assert!(leaf.privileged_execute_never(), "{permissions:?}");
            } else {
                assert!(leaf.unprivileged_execute_never(), "{permissions:?}");
                assert!(matches!(
                    leaf.access(),
                    AccessPermission::El1ReadWrite | AccessPermission::El1ReadOnly
                ));
            }
            if permissions.memory() == MemoryKind::Device {
                assert!(leaf.privileged_execute_never() && leaf.unprivileged_execute_never());
            }
        }
    }

    #[test]
    fn decoding_round_trips_and_refuses_foreign_bits() {
        for permissions in ALL {
            let leaf = BlockPageDescriptor::from(page(permissions, 0x4000_0000));
            assert_eq!(Permissions::from_leaf(leaf), Ok(permissions));
        }
        let kernel_rw = BlockPageDescriptor::from(page(Permissions::KERNEL_RW, 0x4000_0000));
        let refused = [
            kernel_rw.with_privileged_execute_never(false),
            kernel_rw.with_not_global(true),
            kernel_rw.with_access_flag(false),
            kernel_rw.with_attr_index(5),
            kernel_rw.with_access(AccessPermission::El1El0ReadWrite),
        ];
        assert_eq!(
            Permissions::from_leaf(refused[0]),
            Err(PermissionError::WritableAndExecutable)
        );
        for leaf in &refused[1..] {
            assert_eq!(
                Permissions::from_leaf(*leaf),
                Err(PermissionError::UnrecognisedDescriptor)
            );
        }
    }
}
