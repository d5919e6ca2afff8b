//! Which CPU this is.
//!
//! TPIDRRO_EL0 holds the CPU's index, written once when the CPU starts
//! (`set_this_cpu`): one `mrs` reads it on every kernel entry (the kernel
//! lock and the per-CPU view need it). EL0 can read it (not write it): a
//! thread may learn which CPU it runs on, which is no secret. The kernel's
//! fault vectors use it as scratch only on their way to a panic.

/// This CPU's index (0 for the boot CPU).
#[inline(always)]
pub fn this_cpu() -> usize {
    let index: u64;
    // SAFETY: reading TPIDRRO_EL0 has no side effect.
    unsafe {
        core::arch::asm!("mrs {0}, tpidrro_el0", out(reg) index, options(nomem, nostack, preserves_flags))
    };
    index as usize
}

/// Records this CPU's index: once, when it starts, before it takes the
/// kernel lock.
pub fn set_this_cpu(index: usize) {
    // SAFETY: TPIDRRO_EL0 is ours (EL0 only reads it); writing it changes
    // nothing else.
    unsafe {
        core::arch::asm!("msr tpidrro_el0, {0}", in(reg) index as u64, options(nomem, nostack, preserves_flags))
    };
}
