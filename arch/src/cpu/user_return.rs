//! The way back to EL0, FP/SIMD state moves and software PAN.
//!
//! # Software PAN
//! The Cortex-A72 (Raspberry Pi 4, QEMU `-cpu cortex-a72`) predates
//! ARMv8.1's PAN. The kernel gets the same guarantee — kernel code cannot
//! touch user memory by accident — the way Linux's
//! `CONFIG_ARM64_SW_TTBR0_PAN` does: while the kernel runs, TTBR0_EL1
//! holds an empty table with the reserved ASID 0, so any access to a user
//! address faults; `uaccess` opens the real address space only for the
//! duration of an explicit copy, and the return to EL0 reinstalls it.

use crate::context::{FpState, UserContext};
use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

extern "C" {
    fn restore_user_context(context: *const UserContext) -> !;
    fn fp_save(state: *mut FpState);
    fn fp_restore(state: *const FpState);
}

/// A table with no valid entry, for TTBR0 while the kernel runs.
#[repr(C, align(4096))]
struct EmptyTable([u64; 512]);

static EMPTY_TABLE: EmptyTable = EmptyTable([0; 512]);

/// TTBR0 value that maps nothing, with ASID 0.
pub fn blocked_ttbr0() -> u64 {
    crate::cpu::phys::kernel_virt_to_phys(core::ptr::addr_of!(EMPTY_TABLE) as u64)
}

/// `blocked_ttbr0()`, computed once at boot (`remove_identity_map`, on
/// each core before it first closes the user address space): every entry
/// from EL0 writes it, and computing it there took 7 instructions
/// (the image's physical base loaded and the table's offset added) where
/// one load does.
static BLOCKED_TTBR0: AtomicU64 = AtomicU64::new(0);

/// Computes the value `block_user_access` writes (boot, once the image's
/// physical placement is known).
pub(crate) fn prepare_user_access_block() {
    BLOCKED_TTBR0.store(blocked_ttbr0(), Ordering::Relaxed);
}

/// Closes the user address space (call first thing on entry from EL0).
pub fn block_user_access() {
    let blocked = BLOCKED_TTBR0.load(Ordering::Relaxed);
    debug_assert_eq!(blocked, blocked_ttbr0(), "prepared at boot");
    crate::cpu::tlb::set_user_translation(blocked);
}

/// Returns to EL0 in `context` with address space `ttbr0` (root | ASID).
///
/// # Safety
/// `context` must point at a live `UserContext` that stays at this address
/// while the thread runs (the next exception from EL0 saves the registers
/// into it), with no other reference to it in use.
#[inline(always)]
pub unsafe fn return_to_user(context: *mut UserContext, ttbr0: u64) -> ! {
    // SAFETY: TTBR0 maps the user half only; eret in restore_user_context
    // synchronises the change before the first user instruction.
    unsafe { asm!("msr ttbr0_el1, {0}", in(reg) ttbr0, options(nostack)) };
    // SAFETY: the caller guarantees the context is live and stays put;
    // restore_user_context keeps only SPSR_USER_WRITABLE of its SPSR
    // (whatever wrote the context: the kernel, a tracer), so the eret
    // cannot enter EL1.
    unsafe { restore_user_context(context) }
}

/// Saves the live FP/SIMD registers into `state`.
pub fn save_fp(state: &mut FpState) {
    // SAFETY: `state` is a valid, aligned FpState; the kernel (softfloat)
    // holds no FP values of its own.
    unsafe { fp_save(state) }
}

/// Loads the FP/SIMD registers from `state`.
pub fn restore_fp(state: &FpState) {
    // SAFETY: as `save_fp`.
    unsafe { fp_restore(state) }
}

#[cfg(feature = "bench-floor")]
extern "C" {
    static exception_vectors: u8;
    static floor_vectors: u8;
}

/// Switches the EL0 syscall path between the real one and the benchmark
/// floor (every SVC returns at once; see `abi::Syscall::BenchFloor`).
#[cfg(feature = "bench-floor")]
pub fn set_syscall_floor(on: bool) {
    let table = if on {
        core::ptr::addr_of!(floor_vectors)
    } else {
        core::ptr::addr_of!(exception_vectors)
    };
    // SAFETY: both tables are complete vector tables in kernel text; they
    // differ only in what an SVC from EL0 does.
    unsafe { asm!("msr vbar_el1, {0}", "isb", in(reg) table as u64, options(nostack)) };
}
