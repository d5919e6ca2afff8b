//! Deliberate kernel faults, to test that a kernel bug is reported and
//! ends the run with a failure status (boot option `portcullis.crash=`).

use core::arch::asm;

/// A kernel fault to cause on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crash {
    /// Load from an address nothing maps in the kernel half.
    DataAbort,
    /// Recurse until the kernel stack runs into its guard page.
    StackOverflow,
    /// A Rust panic.
    Panic,
}

/// When the kernel faults on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoint {
    /// Right after the device tree was read, before the console is up:
    /// the report must still reach the board's default UART.
    BeforeConsole,
    /// Once the kernel has booted (console, RAM, interrupts).
    AfterBoot,
}

impl Crash {
    /// From the boot option's value: `data-abort`, `stack-overflow` after
    /// boot; `early-data-abort`, `early-panic` before the console.
    pub fn from_option(value: &str) -> Option<(Crash, CrashPoint)> {
        match value {
            "data-abort" => Some((Crash::DataAbort, CrashPoint::AfterBoot)),
            "stack-overflow" => Some((Crash::StackOverflow, CrashPoint::AfterBoot)),
            "early-data-abort" => Some((Crash::DataAbort, CrashPoint::BeforeConsole)),
            "early-panic" => Some((Crash::Panic, CrashPoint::BeforeConsole)),
            _ => None,
        }
    }

    /// Faults the kernel; does not return.
    pub fn trigger(self) -> ! {
        match self {
            Crash::DataAbort => {
                // An address in the device window that nothing maps.
                let address: u64 = crate::layout::DEVICE_BASE + 0xdead_0000;
                // SAFETY: deliberately faults; the EL1 vector reports it
                // and never returns here.
                unsafe { asm!("ldr {0}, [{0}]", inout(reg) address => _, options(nostack)) };
            }
            Crash::StackOverflow => {
                recurse(0);
            }
            Crash::Panic => panic!("a deliberate panic (portcullis.crash)"),
        }
        panic!("the deliberate kernel fault did not fault");
    }
}

#[inline(never)]
fn recurse(depth: u64) -> u64 {
    // Deeper than any kernel stack can hold: the guard page stops it first.
    if depth == u64::MAX {
        return 0;
    }
    let mut frame = [depth; 64];
    // Keep the frame alive and the recursion from being optimised away.
    core::hint::black_box(&mut frame);
    recurse(depth + 1).wrapping_add(frame[(depth % 64) as usize])
}
