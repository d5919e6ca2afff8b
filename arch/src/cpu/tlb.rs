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

/// Installs a user address space: table root and ASID in TTBR0_EL1. No
/// TLB flush: entries are tagged with the ASID.
pub fn set_user_translation(ttbr0: u64) {
    // SAFETY: TTBR0 only maps the low (user) half; the kernel never runs
    // from it after boot, so changing it cannot pull code from under us.
    unsafe { asm!("msr ttbr0_el1, {0}", "isb", in(reg) ttbr0, options(nostack)) };
}
