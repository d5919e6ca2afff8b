//! The EL1 physical timer, which the kernel leaves to user space as a
//! device (its interrupt reaches whoever holds the IrqHandler for PPI 30).

use core::arch::asm;

/// Arms the timer to fire after `ticks` counter ticks.
pub fn arm(ticks: u64) {
    // SAFETY: the kernel lets EL0 program the physical timer
    // (CNTKCTL_EL1.EL0PTEN); no memory is touched.
    unsafe {
        asm!(
            "msr cntp_tval_el0, {ticks}",
            "msr cntp_ctl_el0, {enable}",
            "isb",
            ticks = in(reg) ticks,
            enable = in(reg) 1u64,
            options(nostack, nomem),
        )
    };
}

/// Stops the timer (its interrupt line goes quiet).
pub fn disarm() {
    // SAFETY: as `arm`.
    unsafe { asm!("msr cntp_ctl_el0, xzr", "isb", options(nostack, nomem)) };
}
