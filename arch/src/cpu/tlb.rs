//! TLB maintenance and translation-table base switches.

use crate::cache::{CacheType, InstructionInvalidation};
use aarch64_cpu::asm::barrier;
use core::arch::asm;

/// Invalidates every TLB entry of this CPU (after the ASID generation rolls
/// over, or after the boot identity map is removed).
pub fn flush_all() {
    // SAFETY: TLB invalidation has no memory-safety effect; the barriers
    // make it complete before later translations.
    unsafe {
        asm!(
            "dsb ishst",
            "tlbi vmalle1",
            "dsb nsh",
            "isb",
            options(nostack)
        )
    };
}

/// Invalidates the entries for page `va` tagged with `asid`, after its
/// entry was cleared: the "break" of break-before-make. DSB ISHST makes
/// the cleared entry visible to the walker first, so the TLBI cannot be
/// followed by a walk that refills the old translation; DSB then waits for
/// the TLBI, and ISB makes later instructions translate afresh. The TLBI
/// and its DSB are local (`vae1`, `nsh`): only the boot core runs threads;
/// the other cores idle with the empty table in TTBR0 and never load a
/// user address space, so they hold no user translation.
pub fn flush_page(asid: u16, va: u64) {
    let operand = (u64::from(asid) << 48) | ((va >> 12) & ((1 << 44) - 1));
    // SAFETY: as `flush_all`; the operand only selects entries.
    unsafe {
        asm!("dsb ishst", "tlbi vae1, {0}", "dsb nsh", "isb", in(reg) operand, options(nostack))
    };
}

/// Makes every translation-table store so far visible to the table
/// walker (DSB ISHST). A new entry must not be walked before this: the
/// walker is not ordered with the CPU's own stores, and a walk that misses
/// the entry is a translation fault reported as the thread's own. The
/// ISB that the architecture also asks for is the `eret` to EL0 (a
/// context synchronisation event): while the kernel runs, TTBR0 holds the
/// empty table, so no user table is walked before that.
pub fn publish_table_writes() {
    barrier::dsb(barrier::ISHST);
}

/// Makes instructions written into the 4 KiB frame at physical `pa`
/// (through the kernel's linear map or a user RW mapping) visible to
/// instruction fetch, as CTR_EL0 says this CPU needs ([`CacheType`]):
/// D-cache clean to the point of unification by line, DSB ISH, I-cache
/// invalidate (by line through the linear map when the I-cache is PIPT,
/// else all of it), DSB ISH, ISB. Needed before a frame is mapped
/// executable.
pub fn sync_instruction_page(pa: u64) {
    let va = super::phys::phys_to_virt(pa);
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effect (aarch64-cpu has no
    // CTR_EL0 register).
    unsafe { asm!("mrs {0}, ctr_el0", out(reg) ctr, options(nostack, nomem)) };
    let cache = CacheType::from_ctr_el0(ctr);
    if cache.needs_data_clean() {
        let mut line = va;
        while line < va + 4096 {
            // SAFETY: cache maintenance by VA on a mapped kernel address
            // (linear map or image window); it changes no memory contents.
            unsafe { asm!("dc cvau, {0}", in(reg) line, options(nostack)) };
            line += cache.data_line_bytes();
        }
        barrier::dsb(barrier::ISH);
    }
    match cache.instruction_invalidation() {
        InstructionInvalidation::NotNeeded => {}
        InstructionInvalidation::ByLine => {
            let mut line = va;
            while line < va + 4096 {
                // SAFETY: as above, for the instruction cache.
                unsafe { asm!("ic ivau, {0}", in(reg) line, options(nostack)) };
                line += cache.instruction_line_bytes();
            }
        }
        // SAFETY: invalidating the whole instruction cache only costs
        // refetches.
        InstructionInvalidation::All => unsafe { asm!("ic ialluis", options(nostack)) },
    }
    barrier::dsb(barrier::ISH);
    barrier::isb(barrier::SY);
}

/// Installs a user address space: table root and ASID in TTBR0_EL1. No
/// TLB flush: entries are tagged with the ASID.
pub fn set_user_translation(ttbr0: u64) {
    // SAFETY: TTBR0 only maps the low (user) half; the kernel never runs
    // from it after boot, so changing it cannot pull code from under us.
    unsafe { asm!("msr ttbr0_el1, {0}", "isb", in(reg) ttbr0, options(nostack)) };
}
