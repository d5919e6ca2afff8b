//! The cores: which one is running (`this_cpu`), and starting the others.
//!
//! Each core has a kernel stack slot in the image (`kernel.ld`,
//! `layout::kernel_stack_top_offset`): an unmapped guard page, then its
//! stack. TPIDR_EL1 holds the core's stack top, which the vectors load
//! into SP on every entry from EL0, and the 16 bytes just above that top
//! hold the core's record, its index (what a fault report reads);
//! TPIDRRO_EL0 holds the index too, for `this_cpu`: one `mrs`. The boot core is core 0; `boot.s` sets both for it in
//! `high_entry`, and for a secondary in `secondary_high_entry` from what
//! the boot core wrote into [`SECONDARY_BOOT`].
//!
//! A secondary is started one of three ways (docs/boot.md, "Secondary
//! cores"), each handing it the physical address of `secondary_entry`:
//! PSCI CPU_ON, the firmware's spin table, or the release word of the
//! kernel's own park (`boot.s`, `park_secondary`).

use super::{early_map, phys};
use crate::boards::PsciConduit;
use crate::layout::{kernel_stack_top_offset, phys_to_linear, MAX_CPUS};
use core::arch::asm;
use core::mem::offset_of;
use core::ptr::{addr_of, addr_of_mut};
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

/// The affinity fields of MPIDR_EL1 (Aff3, Aff2, Aff1, Aff0), which the
/// device tree's `cpu` nodes name.
pub const MPIDR_AFFINITY: u64 = 0xff_00ff_ffff;

/// PSCI 0.2 CPU_ON, SMC64 calling convention.
const PSCI_CPU_ON: u64 = 0xC400_0003;

/// What the boot core leaves for the secondary it starts: its MMU set-up
/// (the boot core's own), which core it is and its stack. One at a time:
/// the boot core waits for each core before it writes the next. One
/// cache line of a Cortex-A72, cleaned to the point of coherency before
/// the core is started (it reads the record with its MMU and caches off).
#[repr(C, align(64))]
pub struct SecondaryBoot {
    mmu: early_map::BootMmuConfig,
    mpidr: u64,
    stack_top: u64,
    cpu: u64,
}

/// Offsets `boot.s` reads the record at (the MMU values come first, in
/// `BootMmuConfig`'s order, as for the boot core).
pub const SECONDARY_BOOT_MPIDR: usize = offset_of!(SecondaryBoot, mpidr);
/// See [`SECONDARY_BOOT_MPIDR`].
pub const SECONDARY_BOOT_STACK_TOP: usize = offset_of!(SecondaryBoot, stack_top);
/// See [`SECONDARY_BOOT_MPIDR`].
pub const SECONDARY_BOOT_CPU: usize = offset_of!(SecondaryBoot, cpu);
const _: () = assert!(offset_of!(SecondaryBoot, mmu) == 0);
const _: () = assert!(core::mem::size_of::<SecondaryBoot>() == 64);

/// Written by the boot core only, before it starts a core and while no
/// started core reads it (see `SecondaryBoot`); `boot.s` reads it by name.
#[no_mangle]
static mut SECONDARY_BOOT: SecondaryBoot = SecondaryBoot {
    mmu: early_map::BootMmuConfig::EMPTY,
    mpidr: u64::MAX,
    stack_top: 0,
    cpu: 0,
};

extern "C" {
    static __kernel_stacks: u8;
    /// `boot.s`: where the kernel's parked cores are released.
    static mut secondary_release: [u64; MAX_CPUS];
    /// `boot.s`: where every secondary core starts.
    fn secondary_entry();
}

/// Where a core stands, as the boot core sees it.
const OFF: u8 = 0;
const ONLINE: u8 = 1;
static STATE: [AtomicU8; MAX_CPUS] = [const { AtomicU8::new(OFF) }; MAX_CPUS];
/// How many reschedule SGIs each core has taken.
static RESCHEDULES: [AtomicU32; MAX_CPUS] = [const { AtomicU32::new(0) }; MAX_CPUS];

/// The index of the core this runs on (0: the boot core): one `mrs` of
/// TPIDRRO_EL0, which `boot.s` sets with the core's record (every kernel
/// entry reads it, for the kernel lock and the per-CPU view, so it is one
/// instruction rather than TPIDR_EL1's record and a load). EL0 may read
/// TPIDRRO_EL0 but not write it: a thread can learn which CPU it runs on,
/// which is no secret. Only the fault vectors' way to a panic changes it
/// (they use TPIDR_EL1 as scratch instead).
#[inline(always)]
pub fn this_cpu() -> usize {
    let cpu: u64;
    // SAFETY: reading TPIDRRO_EL0 has no side effect; `boot.s` wrote the
    // core's index there before any Rust code ran at the link address.
    unsafe {
        asm!(
            "mrs {0}, tpidrro_el0",
            out(reg) cpu,
            options(nomem, nostack, preserves_flags)
        )
    };
    cpu as usize
}

/// A value that tells this core from the others, never 0: its stack top
/// (TPIDR_EL1), one `mrs`. What the kernel lock stores as its holder and
/// the kernel compares with the holder of its per-CPU view, on every
/// entry: one instruction fewer than the index plus one.
#[inline(always)]
pub fn this_core_token() -> u64 {
    let token: u64;
    // SAFETY: reading TPIDR_EL1 has no side effect; `boot.s` set it to
    // this core's stack top before any Rust code ran at the link address.
    unsafe {
        asm!(
            "mrs {0}, tpidr_el1",
            out(reg) token,
            options(nomem, nostack, preserves_flags)
        )
    };
    token
}

/// Waits (`wfe`) until `word` may no longer hold `seen`: the exclusive
/// load arms this core's monitor on it, so the store that changes it (a
/// release of the kernel lock, an answered stall request) wakes this core,
/// as does a `sev` or an interrupt. Returns at once if it holds something
/// else already. May return early (any event wakes `wfe`): callers look
/// again. Under QEMU's round-robin TCG (`-icount`) `wfe` hands the host
/// thread to the next core, so the core that will change the word runs.
#[inline]
pub fn wait_for_change(word: &AtomicU64, seen: u64) {
    // SAFETY: an exclusive load of a live, aligned AtomicU64 and a wait
    // for an event; the monitor it leaves armed is harmless (the next
    // exclusive load re-arms it, a store clears it).
    unsafe {
        asm!(
            "ldaxr {value}, [{word}]",
            "cmp {value}, {seen}",
            "b.ne 1f",
            "wfe",
            "1:",
            word = in(reg) word.as_ptr(),
            seen = in(reg) seen,
            value = out(reg) _,
            options(nostack, readonly)
        )
    };
}

/// Wakes every core waiting in [`wait_for_change`] (`sev`): after a store
/// that a waiter's monitor does not see (one to another word). The DSB
/// first makes that store visible before the event: a waiter woken by the
/// event would otherwise read the old value, use up the event and sleep
/// again, for good (nothing else changes the word it watches).
#[inline]
pub fn wake_waiters() {
    // SAFETY: a barrier and `sev`, which only sets every core's event
    // register.
    unsafe { asm!("dsb ishst", "sev", options(nostack, preserves_flags)) };
}

/// This core's affinity (MPIDR_EL1's Aff3..Aff0).
pub fn this_mpidr() -> u64 {
    let mpidr: u64;
    // SAFETY: reading MPIDR_EL1 has no side effect.
    unsafe { asm!("mrs {0}, mpidr_el1", out(reg) mpidr, options(nomem, nostack)) };
    mpidr & MPIDR_AFFINITY
}

/// The kernel virtual address of core `cpu`'s stack top (`cpu` <
/// `MAX_CPUS`).
fn stack_top(cpu: usize) -> u64 {
    addr_of!(__kernel_stacks) as u64 + kernel_stack_top_offset(cpu)
}

/// How a core is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// PSCI CPU_ON through this conduit.
    Psci(PsciConduit),
    /// The firmware's spin table: the entry address goes to this
    /// physical address.
    SpinTable(u64),
    /// The kernel's own park (`boot.s`): the loader started every core at
    /// `_start`.
    Park,
}

impl Start {
    /// A name for the boot log.
    pub const fn name(self) -> &'static str {
        match self {
            Start::Psci(_) => "PSCI",
            Start::SpinTable(_) => "spin table",
            Start::Park => "released from the boot park",
        }
    }
}

/// Why a core could not be started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartError {
    /// PSCI CPU_ON returned this error code.
    Psci(i64),
    /// The spin table's release address is not 8-byte aligned, or cannot
    /// be mapped.
    BadReleaseAddress,
    /// The kernel's park has no release word for this core (its Aff0 is
    /// `MAX_CPUS` or more, or it has other affinity levels).
    NotParked,
}

/// Starts core `mpidr` as core `cpu` (1..`MAX_CPUS`) at `secondary_entry`.
/// It is online once [`is_online`] says so.
pub fn start(cpu: usize, mpidr: u64, how: Start) -> Result<(), StartError> {
    let entry = phys::kernel_virt_to_phys(secondary_entry as *const () as u64);
    // SAFETY: only the boot core writes the record, and no core reads it
    // now: the previous one is online (it read the record before it said
    // so) or was given up on, and would find another core's MPIDR here.
    unsafe {
        let record = &mut *addr_of_mut!(SECONDARY_BOOT);
        record.mmu = early_map::boot_mmu_config();
        record.mpidr = mpidr & MPIDR_AFFINITY;
        record.stack_top = stack_top(cpu);
        record.cpu = cpu as u64;
    }
    clean_to_coherency(addr_of!(SECONDARY_BOOT) as u64, 64);
    match how {
        Start::Psci(conduit) => psci_cpu_on(conduit, mpidr, entry, cpu as u64),
        Start::SpinTable(release) => release_spin_table(release, entry),
        Start::Park => release_parked(mpidr, entry),
    }
}

/// PSCI CPU_ON: `entry` physical, `context` in the new core's x0.
fn psci_cpu_on(
    conduit: PsciConduit,
    mpidr: u64,
    entry: u64,
    context: u64,
) -> Result<(), StartError> {
    let mut result = PSCI_CPU_ON;
    // SAFETY: CPU_ON starts another core at `entry` (secondary_entry, a
    // valid start for it) and returns; the SMC calling convention may
    // change x0..x17, all marked clobbered.
    unsafe {
        match conduit {
            PsciConduit::Hvc => asm!(
                "hvc #0",
                inout("x0") result,
                in("x1") mpidr,
                in("x2") entry,
                in("x3") context,
                clobber_abi("C"),
                options(nostack)
            ),
            PsciConduit::Smc => asm!(
                "smc #0",
                inout("x0") result,
                in("x1") mpidr,
                in("x2") entry,
                in("x3") context,
                clobber_abi("C"),
                options(nostack)
            ),
        }
    }
    match result as i64 {
        0 => Ok(()),
        error => Err(StartError::Psci(error)),
    }
}

/// Writes `entry` to the spin-table word at physical `release` and wakes
/// the waiting core. The core reads the word with its MMU and caches off,
/// so the store is cleaned to the point of coherency first: a real
/// Cortex-A72 would otherwise keep it in the boot core's cache (QEMU
/// models no caches, so it shows nothing either way). The word is reached
/// through the linear map when RAM there is mapped (the firmware's page 0
/// is reserved, not `no-map`), else through a device mapping.
fn release_spin_table(release: u64, entry: u64) -> Result<(), StartError> {
    if !release.is_multiple_of(8) {
        return Err(StartError::BadReleaseAddress);
    }
    let va = if early_map::is_mapped(phys_to_linear(release)) {
        phys_to_linear(release)
    } else {
        early_map::map_device(release, 8).map_err(|_| StartError::BadReleaseAddress)?
    };
    // SAFETY: `va` maps the 8-byte aligned release word, which belongs
    // to the waiting core's firmware stub and nothing of the kernel's.
    unsafe { (va as *mut u64).write_volatile(entry) };
    clean_to_coherency(va, 8);
    send_event();
    Ok(())
}

/// Writes `entry` to the park's release word of core `mpidr` (by Aff0)
/// and wakes it, with the same cache maintenance as the spin table.
fn release_parked(mpidr: u64, entry: u64) -> Result<(), StartError> {
    let index = (mpidr & MPIDR_AFFINITY) as usize;
    if index >= MAX_CPUS {
        return Err(StartError::NotParked);
    }
    // SAFETY: the release words are the boot core's to write (the parked
    // cores only read them); `index` is in bounds.
    let word = unsafe { addr_of_mut!(secondary_release[index]) };
    // SAFETY: as above.
    unsafe { word.write_volatile(entry) };
    clean_to_coherency(word as u64, 8);
    send_event();
    Ok(())
}

/// Cleans and invalidates the data cache lines of `[va, va + len)` to the
/// point of coherency, then waits for that (DSB SY): a core reading with
/// its caches off sees the stores.
fn clean_to_coherency(va: u64, len: u64) {
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effect.
    unsafe { asm!("mrs {0}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let line = crate::cache::CacheType::from_ctr_el0(ctr).data_line_bytes();
    let mut address = va & !(line - 1);
    while address < va + len {
        // SAFETY: cache maintenance by a mapped address changes no data.
        unsafe { asm!("dc civac, {0}", in(reg) address, options(nostack)) };
        address += line;
    }
    // SAFETY: a barrier only.
    unsafe { asm!("dsb sy", options(nostack)) };
}

/// Wakes the cores waiting in `wfe`.
fn send_event() {
    // SAFETY: SEV only sets the other cores' event registers.
    unsafe { asm!("sev", options(nomem, nostack)) };
}

/// Called by core `cpu` itself once it is set up.
pub fn mark_online(cpu: usize) {
    if let Some(state) = STATE.get(cpu) {
        state.store(ONLINE, Ordering::Release);
    }
}

/// Whether core `cpu` said it is online.
pub fn is_online(cpu: usize) -> bool {
    STATE
        .get(cpu)
        .is_some_and(|state| state.load(Ordering::Acquire) == ONLINE)
}

/// Called by core `cpu` for each reschedule SGI it takes.
pub fn note_reschedule(cpu: usize) {
    if let Some(count) = RESCHEDULES.get(cpu) {
        count.fetch_add(1, Ordering::Release);
    }
}

/// How many reschedule SGIs core `cpu` has taken.
pub fn reschedules(cpu: usize) -> u32 {
    RESCHEDULES
        .get(cpu)
        .map_or(0, |count| count.load(Ordering::Acquire))
}

/// Which core's guard page `address` lies in, if any.
pub fn stack_guard_of(address: u64) -> Option<usize> {
    let base = addr_of!(__kernel_stacks) as u64;
    (0..MAX_CPUS).find(|&cpu| {
        let guard = base + crate::layout::kernel_stack_guard_offset(cpu);
        (guard..guard + crate::layout::PAGE_SIZE).contains(&address)
    })
}
