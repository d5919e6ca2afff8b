//! TLB maintenance and translation-table base switches.

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

/// Invalidates the entries for page `va` tagged with `asid`.
pub fn flush_page(asid: u16, va: u64) {
    let operand = (u64::from(asid) << 48) | ((va >> 12) & ((1 << 44) - 1));
    // SAFETY: as `flush_all`; the operand only selects entries.
    unsafe {
        asm!("dsb ishst", "tlbi vae1, {0}", "dsb nsh", "isb", in(reg) operand, options(nostack))
    };
}

/// Makes instructions written into the 4 KiB frame at physical `pa`
/// (through the kernel's linear map or a user RW mapping) visible to
/// instruction fetch: D-cache clean to the point of unification, then
/// I-cache invalidate, each by line (sizes from CTR_EL0). Needed before a
/// frame is mapped executable.
pub fn sync_instruction_page(pa: u64) {
    let va = super::phys::phys_to_virt(pa);
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effect.
    unsafe { asm!("mrs {0}, ctr_el0", out(reg) ctr, options(nostack, nomem)) };
    let data_line = 4u64 << ((ctr >> 16) & 0xf);
    let instruction_line = 4u64 << (ctr & 0xf);
    let mut line = va;
    while line < va + 4096 {
        // SAFETY: cache maintenance by VA on a mapped kernel linear-map
        // address; it changes no memory contents.
        unsafe { asm!("dc cvau, {0}", in(reg) line, options(nostack)) };
        line += data_line;
    }
    // SAFETY: a barrier only.
    unsafe { asm!("dsb ish", options(nostack)) };
    line = va;
    while line < va + 4096 {
        // SAFETY: as above, for the instruction cache.
        unsafe { asm!("ic ivau, {0}", in(reg) line, options(nostack)) };
        line += instruction_line;
    }
    // SAFETY: barriers only.
    unsafe { asm!("dsb ish", "isb", options(nostack)) };
}

/// Installs a user address space: table root and ASID in TTBR0_EL1. No
/// TLB flush: entries are tagged with the ASID.
pub fn set_user_translation(ttbr0: u64) {
    // SAFETY: TTBR0 only maps the low (user) half; the kernel never runs
    // from it after boot, so changing it cannot pull code from under us.
    unsafe { asm!("msr ttbr0_el1, {0}", "isb", in(reg) ttbr0, options(nostack)) };
}
