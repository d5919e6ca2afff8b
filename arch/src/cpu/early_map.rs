//! The kernel's own translation tables: built before the MMU is on, then
//! extended (device window, linear map of RAM) once it is.
//!
//! `early_map_kernel` runs from `boot.s` with the MMU off, at the physical
//! load address, which differs from the link address. It therefore only
//! uses PC-relative addresses (statics reached through `adrp`), the
//! mapper's monomorphised code, and no formatting or panics: on failure it
//! returns null and the boot code stops.
//!
//! Tables come from a pool in .bss. Before the MMU is on a table's
//! physical address is also its address; afterwards it is reached through
//! the image window (`phys::phys_to_virt`).

use super::phys::{self, record_image_placement};
use crate::boards::Loader;
use crate::device_tree;
use crate::layout::{
    kernel_stack_guard_offset, DEVICE_BASE, DTB_WINDOW, KERNEL_STACK_SLOT_BYTES, KIMAGE_VBASE,
    LINEAR_BASE, MAX_CPUS, PAGE_SIZE, TEXT_OFFSET,
};
use crate::mmu::{
    mair_el1, tcr_el1, AsidBits, Granularity, Half, MapError, Mapping, PageTable, Permissions,
    PhysAddr, PhysicalAddressRange, TableMemory, VirtAddr, ENTRIES_PER_TABLE,
};
use aarch64_cpu::registers::{Readable, ID_AA64MMFR0_EL1};
use core::ptr::{addr_of, addr_of_mut};

/// Tables for the kernel half, the boot identity map, the device window
/// and the linear map (1 GiB blocks where RAM allows).
const POOL_TABLES: usize = 48;

/// SCTLR_EL1 with the MMU on: RES1 bits, M, C, SA, SA0, I, DZE, UCT and
/// WXN (any writable page is never executable: W^X as a hardware backstop).
const SCTLR_EL1_MMU_ON: u64 = 0x30d0_0800
    | (1 << 0)
    | (1 << 2)
    | (1 << 3)
    | (1 << 4)
    | (1 << 12)
    | (1 << 14)
    | (1 << 15)
    | (1 << 19);

#[repr(C, align(4096))]
struct TablePool {
    tables: [[u64; ENTRIES_PER_TABLE]; POOL_TABLES],
}

/// What `boot.s` loads into the MMU registers (field order is shared
/// with boot.s: mair, tcr, ttbr0, ttbr1, sctlr), on the boot core and
/// again on each secondary (`smp::SecondaryBoot`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BootMmuConfig {
    mair: u64,
    tcr: u64,
    ttbr0: u64,
    ttbr1: u64,
    sctlr: u64,
}

// SAFETY (for every access to these statics): only the boot core touches
// them (the secondaries get the MMU values through `smp::SecondaryBoot`
// and map nothing), at boot and from kernel code with interrupts masked,
// so there is never a concurrent access.
static mut POOL: TablePool = TablePool {
    tables: [[0; ENTRIES_PER_TABLE]; POOL_TABLES],
};
static mut POOL_USED: usize = 0;
static mut KERNEL_ROOT: u64 = 0;
/// Physical address of the device tree found at boot (`u64::MAX`: none;
/// 0 is a valid place for one).
static mut DEVICE_TREE_PA: u64 = u64::MAX;

static mut BOOT_CONFIG: BootMmuConfig = BootMmuConfig::EMPTY;

impl BootMmuConfig {
    /// Nothing built yet.
    pub(crate) const EMPTY: BootMmuConfig = BootMmuConfig {
        mair: 0,
        tcr: 0,
        ttbr0: 0,
        ttbr1: 0,
        sctlr: 0,
    };
}

extern "C" {
    static __image_start: u8;
    static __text_end: u8;
    static __rodata_end: u8;
    static __kernel_stacks: u8;
    static __kernel_stacks_end: u8;
    static __image_end: u8;
}

/// Table memory from the pool; `mmu_on` says how a table is reached.
struct PoolMemory {
    mmu_on: bool,
}

impl PoolMemory {
    fn table_ptr(&self, table: PhysAddr) -> *mut u64 {
        if self.mmu_on {
            phys::phys_to_virt(table.as_u64()) as *mut u64
        } else {
            table.as_u64() as *mut u64
        }
    }
}

impl TableMemory for PoolMemory {
    fn allocate_table(&mut self) -> Option<PhysAddr> {
        // SAFETY: see the statics' note; the pool tables are zero (bss) and
        // handed out once each.
        unsafe {
            let used = POOL_USED;
            if used >= POOL_TABLES {
                return None;
            }
            POOL_USED = used + 1;
            let address = addr_of_mut!(POOL.tables[used]) as u64;
            let pa = if self.mmu_on {
                phys::kernel_virt_to_phys(address)
            } else {
                address
            };
            Some(PhysAddr::new(pa))
        }
    }

    fn read_entry(&self, table: PhysAddr, index: usize) -> u64 {
        // SAFETY: `table` is a pool table (the mapper only passes tables it
        // got from `allocate_table` or found linked in them) and index < 512.
        unsafe {
            self.table_ptr(table)
                .add(index % ENTRIES_PER_TABLE)
                .read_volatile()
        }
    }

    fn write_entry(&mut self, table: PhysAddr, index: usize, value: u64) {
        // SAFETY: as `read_entry`.
        unsafe {
            self.table_ptr(table)
                .add(index % ENTRIES_PER_TABLE)
                .write_volatile(value)
        }
    }
}

fn symbol(s: *const u8) -> u64 {
    s as u64
}

/// Builds the boot tables with the MMU off. Called from boot.s with the
/// physical load address, the loader's `x0` and the entry level.
///
/// Returns the physical address of the MMU register values, or null if
/// the tables could not be built (boot.s then reports it and stops).
#[no_mangle]
pub extern "C" fn early_map_kernel(
    phys_base: u64,
    loader_x0: u64,
    entry_level: u64,
) -> *const BootMmuConfig {
    let loader = Loader::from_entry_level(entry_level);
    match build_boot_tables(phys_base, loader_x0, loader) {
        Ok(()) => addr_of!(BOOT_CONFIG),
        Err(_) => core::ptr::null(),
    }
}

fn build_boot_tables(phys_base: u64, loader_x0: u64, loader: Loader) -> Result<(), MapError> {
    // With the MMU off these are physical addresses (adrp is PC-relative).
    let (start, text_end, rodata_end, stacks, stacks_end, end) = (
        symbol(addr_of!(__image_start)),
        symbol(addr_of!(__text_end)),
        symbol(addr_of!(__rodata_end)),
        symbol(addr_of!(__kernel_stacks)),
        symbol(addr_of!(__kernel_stacks_end)),
        symbol(addr_of!(__image_end)),
    );
    // kernel.ld sizes the stack slots with numbers of its own: one that
    // disagrees with layout.rs would put a core's stack over its guard.
    if stacks_end - stacks != MAX_CPUS as u64 * KERNEL_STACK_SLOT_BYTES {
        return Err(MapError::Misaligned);
    }
    record_image_placement(phys_base, end - start);
    let mut memory = PoolMemory { mmu_on: false };
    let kernel = PageTable::new(&mut memory, Half::Upper)?;
    let identity = PageTable::new(&mut memory, Half::Lower)?;
    let to_va = |pa: u64| pa - phys_base + KIMAGE_VBASE + TEXT_OFFSET;
    let pages = |va: u64, pa: u64, size: u64, permissions: Permissions| Mapping {
        va: VirtAddr::new(va),
        pa: PhysAddr::new(pa),
        size,
        permissions,
        granularity: Granularity::Pages,
    };

    // The image, W^X: text RX, rodata R, data+bss RW, then each core's
    // kernel stack above an unmapped guard page.
    kernel.map(
        &mut memory,
        &pages(
            to_va(start),
            start,
            text_end - start,
            Permissions::KERNEL_RX,
        ),
    )?;
    kernel.map(
        &mut memory,
        &pages(
            to_va(text_end),
            text_end,
            rodata_end - text_end,
            Permissions::KERNEL_RO,
        ),
    )?;
    kernel.map(
        &mut memory,
        &pages(
            to_va(rodata_end),
            rodata_end,
            stacks - rodata_end,
            Permissions::KERNEL_RW,
        ),
    )?;
    for cpu in 0..MAX_CPUS {
        let bottom = stacks + kernel_stack_guard_offset(cpu) + PAGE_SIZE;
        kernel.map(
            &mut memory,
            &pages(
                to_va(bottom),
                bottom,
                KERNEL_STACK_SLOT_BYTES - PAGE_SIZE,
                Permissions::KERNEL_RW,
            ),
        )?;
    }
    if end > stacks_end {
        kernel.map(
            &mut memory,
            &pages(
                to_va(stacks_end),
                stacks_end,
                end - stacks_end,
                Permissions::KERNEL_RW,
            ),
        )?;
    }

    // The device tree, read-only: where x0 points, or where this loader
    // leaves one without saying so (QEMU's ELF boots only).
    for candidate in loader
        .device_tree_candidates(loader_x0)
        .into_iter()
        .flatten()
    {
        if let Some((dtb_start, dtb_size)) = device_tree_pages(candidate) {
            kernel.map(
                &mut memory,
                &pages(
                    DTB_WINDOW + dtb_start,
                    dtb_start,
                    dtb_size,
                    Permissions::KERNEL_RO,
                ),
            )?;
            // SAFETY: see the statics' note.
            unsafe { DEVICE_TREE_PA = candidate };
            break;
        }
    }

    // The identity map of the text, only for the instructions between
    // turning the MMU on and jumping to the link address: the boot core's
    // now, each secondary's when it is started (the table is kept for
    // them; `remove_identity_map` only takes it out of TTBR0).
    identity.map(
        &mut memory,
        &pages(start, start, text_end - start, Permissions::KERNEL_RX),
    )?;

    let mmfr0 = ID_AA64MMFR0_EL1.get();
    // SAFETY: see the statics' note.
    unsafe {
        KERNEL_ROOT = kernel.root().as_u64();
        BOOT_CONFIG = BootMmuConfig {
            mair: mair_el1(),
            tcr: tcr_el1(
                PhysicalAddressRange::from_id_aa64mmfr0(mmfr0),
                AsidBits::from_id_aa64mmfr0(mmfr0),
            ),
            ttbr0: identity.root().as_u64(),
            ttbr1: kernel.root().as_u64(),
            sctlr: SCTLR_EL1_MMU_ON,
        };
    }
    Ok(())
}

/// The page range holding the device tree at `address`, if one is there.
/// Reads the header with the MMU off (physical == address).
fn device_tree_pages(address: u64) -> Option<(u64, u64)> {
    if !address.is_multiple_of(8) {
        return None;
    }
    let mut header = [0u8; 8];
    for (i, byte) in header.iter_mut().enumerate() {
        // SAFETY: the candidates are x0 from the loader (a device tree or
        // ATAG list in RAM, or 0) and the fixed addresses above, all of
        // them readable memory on the boards that pass them; with the MMU
        // off a read has no side effect there.
        *byte = unsafe { ((address + i as u64) as *const u8).read_volatile() };
    }
    let size = device_tree::total_size(&header)? as u64;
    if size == 0 || size > (2 << 20) {
        return None;
    }
    let first = address & !(PAGE_SIZE - 1);
    let last = (address + size).div_ceil(PAGE_SIZE) * PAGE_SIZE;
    Some((first, last - first))
}

/// Physical address of the device tree found at boot, if any.
pub fn device_tree_address() -> Option<u64> {
    // SAFETY: see the statics' note; written once at boot.
    match unsafe { DEVICE_TREE_PA } {
        u64::MAX => None,
        pa => Some(pa),
    }
}

/// The device tree found at boot, through its read-only window.
pub fn device_tree() -> Option<&'static [u8]> {
    let address = device_tree_address()?;
    let (first, size) = device_tree_pages_mapped(address)?;
    let offset = address - first;
    let va = DTB_WINDOW + address;
    // SAFETY: `early_map_kernel` mapped exactly these pages read-only and
    // they are never unmapped or written.
    Some(unsafe { core::slice::from_raw_parts(va as *const u8, (size - offset) as usize) })
}

fn device_tree_pages_mapped(loader_x0: u64) -> Option<(u64, u64)> {
    let kernel = kernel_table();
    let memory = PoolMemory { mmu_on: true };
    kernel
        .translate(&memory, VirtAddr::new(DTB_WINDOW + loader_x0))
        .ok()?;
    // SAFETY: the header page is mapped (checked just above).
    let header = unsafe { core::slice::from_raw_parts((DTB_WINDOW + loader_x0) as *const u8, 8) };
    let size = device_tree::total_size(header)? as u64;
    let first = loader_x0 & !(PAGE_SIZE - 1);
    let last = (loader_x0 + size).div_ceil(PAGE_SIZE) * PAGE_SIZE;
    Some((first, last - first))
}

fn kernel_table() -> PageTable {
    // SAFETY: see the statics' note; written once at boot.
    let root = unsafe { KERNEL_ROOT };
    PageTable::from_root(PhysAddr::new(root), Half::Upper)
}

/// Maps `size` bytes of MMIO at physical `pa` into the device window and
/// returns the virtual address of `pa`.
pub fn map_device(pa: u64, size: u64) -> Result<u64, MapError> {
    let first = pa & !(PAGE_SIZE - 1);
    let last = (pa + size).div_ceil(PAGE_SIZE) * PAGE_SIZE;
    let mut memory = PoolMemory { mmu_on: true };
    kernel_table().map(
        &mut memory,
        &Mapping {
            va: VirtAddr::new(DEVICE_BASE + first),
            pa: PhysAddr::new(first),
            size: last - first,
            permissions: Permissions::DEVICE,
            granularity: Granularity::Pages,
        },
    )?;
    aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::ISHST);
    aarch64_cpu::asm::barrier::isb(aarch64_cpu::asm::barrier::SY);
    Ok(DEVICE_BASE + pa)
}

/// Maps the RAM range `[start, start + size)` into the linear map, read-
/// write and never executable, leaving out the kernel image (which has its
/// own W^X mapping and must have no writable alias).
pub fn map_linear(start: u64, size: u64) -> Result<(), MapError> {
    let (image, image_size) = phys::image_range();
    let image_end = image + image_size;
    let end = start + size;
    let pieces = [(start, end.min(image)), (start.max(image_end), end)];
    let mut memory = PoolMemory { mmu_on: true };
    for (from, to) in pieces {
        let from = from.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let to = to & !(PAGE_SIZE - 1);
        if from >= to {
            continue;
        }
        kernel_table().map(
            &mut memory,
            &Mapping {
                va: VirtAddr::new(LINEAR_BASE + from),
                pa: PhysAddr::new(from),
                size: to - from,
                permissions: Permissions::KERNEL_RW,
                granularity: Granularity::Largest,
            },
        )?;
    }
    aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::ISHST);
    aarch64_cpu::asm::barrier::isb(aarch64_cpu::asm::barrier::SY);
    Ok(())
}

/// The MMU values the boot core turned its MMU on with, for the
/// secondaries (`smp::start`).
pub(crate) fn boot_mmu_config() -> BootMmuConfig {
    // SAFETY: see the statics' note; written once at boot.
    unsafe { BOOT_CONFIG }
}

/// Whether kernel virtual address `va` is mapped.
pub fn is_mapped(va: u64) -> bool {
    let memory = PoolMemory { mmu_on: true };
    kernel_table().translate(&memory, VirtAddr::new(va)).is_ok()
}

/// Drops the boot identity map from this core: TTBR0 gets the empty
/// table (software PAN) and the TLB forgets the identity entries. The
/// table itself stays, for the secondaries' start.
pub fn remove_identity_map() {
    super::user_return::prepare_user_access_block();
    super::user_return::block_user_access();
    super::tlb::flush_all();
}

/// How many of the pool's tables are in use, and the pool size.
pub fn pool_usage() -> (usize, usize) {
    // SAFETY: see the statics' note.
    (unsafe { POOL_USED }, POOL_TABLES)
}
