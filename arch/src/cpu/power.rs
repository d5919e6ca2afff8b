//! Ending a run: semihosting exit with a status, or PSCI SYSTEM_OFF.

use core::arch::asm;
use core::sync::atomic::{AtomicU8, Ordering};

/// Exit status of a run that ended in a kernel panic.
pub const EXIT_KERNEL_PANIC: u32 = 2;

/// How a run ends.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitMethod {
    /// Stop the CPU (real hardware without PSCI).
    Halt = 0,
    /// PSCI SYSTEM_OFF through `hvc` (status is lost: QEMU exits 0).
    Psci = 1,
    /// Semihosting SYS_EXIT_EXTENDED with the status.
    Semihosting = 2,
}

static EXIT_METHOD: AtomicU8 = AtomicU8::new(ExitMethod::Halt as u8);

/// Chooses how `exit` ends the run.
pub fn set_exit_method(method: ExitMethod) {
    EXIT_METHOD.store(method as u8, Ordering::Relaxed);
}

/// The configured exit method.
pub fn exit_method() -> ExitMethod {
    match EXIT_METHOD.load(Ordering::Relaxed) {
        2 => ExitMethod::Semihosting,
        1 => ExitMethod::Psci,
        _ => ExitMethod::Halt,
    }
}

/// Ends the run with `status`, by the configured method.
pub fn exit(status: u32) -> ! {
    super::console::flush();
    match exit_method() {
        ExitMethod::Semihosting => semihosting_exit(status),
        ExitMethod::Psci => psci_system_off(),
        ExitMethod::Halt => {
            super::console::write_str("[kernel] halted; power the board off\n");
            super::console::flush();
            halt()
        }
    }
}

/// Semihosting SYS_EXIT_EXTENDED.
const SYS_EXIT_EXTENDED: u64 = 0x20;
/// ADP_Stopped_ApplicationExit.
const ADP_STOPPED_APPLICATION_EXIT: u64 = 0x20026;
/// PSCI 0.2 SYSTEM_OFF.
const PSCI_SYSTEM_OFF: u64 = 0x8400_0008;

/// Asks the emulator to exit with `status` through semihosting. Only call
/// it when the command line says semihosting is on: on hardware (or QEMU
/// without `-semihosting`) `hlt` is an undefined instruction.
pub fn semihosting_exit(status: u32) -> ! {
    let block = [ADP_STOPPED_APPLICATION_EXIT, u64::from(status)];
    // SAFETY: the semihosting call reads the two-word block, which lives
    // on our stack for the duration of the call.
    unsafe {
        asm!("hlt #0xf000", in("x0") SYS_EXIT_EXTENDED, in("x1") block.as_ptr(), options(nostack));
    }
    halt()
}

/// PSCI SYSTEM_OFF through `hvc` (QEMU virt entered at EL1).
pub fn psci_system_off() -> ! {
    // SAFETY: SYSTEM_OFF does not return when PSCI is present, which the
    // caller checked in the device tree.
    unsafe { asm!("hvc #0", in("x0") PSCI_SYSTEM_OFF, options(nostack)) };
    halt()
}

/// Stops this CPU for good.
pub fn halt() -> ! {
    loop {
        aarch64_cpu::asm::wfe();
    }
}

/// Waits for an interrupt with interrupts masked: WFI wakes on a pending
/// interrupt even while DAIF.I is set, and the caller then polls the GIC.
pub fn wait_for_interrupt() {
    aarch64_cpu::asm::wfi();
}
