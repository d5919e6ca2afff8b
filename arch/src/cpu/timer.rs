//! The EL1 virtual timer (CNTV), the kernel's tick, and the EL1 physical
//! timer (CNTP), a device the kernel programs for the holder of its
//! IrqHandler.
//!
//! The virtual timer is used because it works unchanged whether the kernel
//! was entered at EL1 (QEMU virt) or dropped there from EL2/EL3 (the boot
//! code sets CNTVOFF_EL2 = 0): its interrupt is PPI 27 on both boards.

use aarch64_cpu::registers::*;

/// The virtual timer's interrupt ID (a PPI).
pub const VIRTUAL_TIMER_INTID: u32 = crate::boards::KERNEL_TICK_INTID;

pub use crate::boards::PHYSICAL_TIMER_INTID;

/// Arms the timer to fire when the virtual counter (CNTVCT_EL0) reaches
/// `deadline`; at once if it already has.
pub fn arm_at(deadline: u64) {
    CNTV_CVAL_EL0.set(deadline);
    CNTV_CTL_EL0.write(CNTV_CTL_EL0::ENABLE::SET + CNTV_CTL_EL0::IMASK::CLEAR);
}

/// Stops the timer.
pub fn disarm() {
    CNTV_CTL_EL0.write(CNTV_CTL_EL0::ENABLE::CLEAR);
}

/// Arms the EL1 physical timer to fire `ticks` counter ticks from now
/// (CNTP_TVAL_EL0, enabled and unmasked), or disarms it (`None`).
pub fn set_physical_timer(ticks: Option<u64>) {
    match ticks {
        Some(ticks) => {
            // TVAL is a signed 32-bit down-counter: longer waits are cut
            // to the longest it holds.
            let ticks = ticks.min(i32::MAX as u64);
            CNTP_TVAL_EL0.set(ticks);
            CNTP_CTL_EL0.write(CNTP_CTL_EL0::ENABLE::SET + CNTP_CTL_EL0::IMASK::CLEAR);
        }
        None => CNTP_CTL_EL0.write(CNTP_CTL_EL0::ENABLE::CLEAR),
    }
    aarch64_cpu::asm::barrier::isb(aarch64_cpu::asm::barrier::SY);
}
