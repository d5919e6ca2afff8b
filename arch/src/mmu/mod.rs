//! The AArch64 stage 1 MMU of the EL1&0 regime, in safe, host-testable Rust:
//! descriptor formats, the permission vocabulary with the MAIR_EL1 and
//! TCR_EL1 values that match it, a page-table mapper, and the ASID allocator.
//!
//! Geometry: 4 KiB granule, 48-bit virtual addresses, four levels L0..L3.
//! TTBR0_EL1 translates the lower half `0..2^48` (user space, and the boot
//! identity map); TTBR1_EL1 the upper half `0xFFFF_0000_0000_0000..` (kernel).
//!
//! Design principles, in the order they constrain the code:
//! 1. **The mapper also runs before the MMU is on**, at a physical address
//!    that differs from its link address. So its code path has no trait
//!    objects, function pointers, statics holding references, heap, or
//!    formatting/panicking branches in the normal flow: only monomorphised
//!    generics, plain loops and `Result`.
//! 2. **Table memory is reached through [`TableMemory`]**, never through raw
//!    pointers here: the kernel implements it once for "physical ==
//!    accessible" (MMU off) and once through its phys→virt offset; the tests
//!    use a `Vec`-backed fake. This module needs no `unsafe`.
//! 3. **Permissions are validated when they are built** ([`Permissions::new`]);
//!    encoding a valid [`Permissions`] cannot produce a writable+executable,
//!    EL1-executable-user, EL0-accessible-kernel or executable-device entry.
//!    Reading an entry back re-checks the same rules.
//! 4. **Mapping is idempotent, never destructive**: an identical existing
//!    translation is accepted, a different one is refused. Conflicts are
//!    found in a dry run before anything is written.

mod address;
mod asid;
mod attributes;
mod descriptor;
mod mapper;
mod table;
mod tcr;

#[cfg(test)]
mod fake_memory;
#[cfg(test)]
mod mapper_tests;

pub use address::{Half, PhysAddr, VirtAddr, PAGE_SIZE, PHYS_ADDR_BITS, VIRT_ADDR_BITS};
pub use asid::{Asid, AsidAllocator, AsidBits, AsidWithGeneration, Assignment};
pub use attributes::{
    mair_el1, Access, MemoryKind, Owner, PermissionError, Permissions, MAIR_INDEX_DEVICE,
    MAIR_INDEX_NORMAL,
};
pub use descriptor::{AccessPermission, BlockPageDescriptor, TableDescriptor};
pub use mapper::{Granularity, MapError, Mapping, PageTable, Translation, Unmapped};
pub use table::{Level, TableMemory, ENTRIES_PER_TABLE};
pub use tcr::{tcr_el1, PhysicalAddressRange};
