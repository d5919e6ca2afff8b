//! The EL1 virtual timer (CNTV), the kernel's tick.
//!
//! The virtual timer is used because it works unchanged whether the kernel
//! was entered at EL1 (QEMU virt) or dropped there from EL2/EL3 (the boot
//! code sets CNTVOFF_EL2 = 0): its interrupt is PPI 27 on both boards.

use aarch64_cpu::registers::*;

/// The virtual timer's interrupt ID (a PPI).
pub const VIRTUAL_TIMER_INTID: u32 = 27;

/// The EL1 physical timer's interrupt ID: a device user space can drive.
pub const PHYSICAL_TIMER_INTID: u32 = 30;

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
