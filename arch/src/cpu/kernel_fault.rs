//! Exceptions taken at EL1: always a kernel bug. Decoded, reported, and
//! the run ends with a failure status.

use super::{console, power};
use crate::context::UserContext;
use crate::exception::{ExceptionClass, FaultStatus};
use aarch64_cpu::registers::{Readable, ESR_EL1, FAR_EL1};
use core::fmt::Write;

/// Called by `vectors.s` with the registers it saved on the kernel stack.
#[no_mangle]
extern "C" fn portcullis_el1_exception(frame: *const UserContext) -> ! {
    let esr = ESR_EL1.get();
    let far = FAR_EL1.get();
    // SAFETY: vectors.s passes the frame it just filled on the stack.
    let frame = unsafe { &*frame };
    let class = ExceptionClass::from_esr(esr);
    // A fault before the console was up (reading the device tree) is
    // reported on the board's default UART.
    console::ensure_started();
    let mut out = console::Writer;
    let _ = writeln!(out, "\nKERNEL PANIC: {} in the kernel", class.name());
    match super::smp::stack_guard_of(far) {
        Some(cpu) if class.has_fault_address() => {
            let _ = writeln!(
                out,
                "  kernel stack overflow: the access hit the guard page below the kernel stack \
                 of core {cpu}"
            );
        }
        _ => {}
    }
    let _ = write!(out, "  pc {:#018x}  esr {:#010x}", frame.pc, esr);
    if class.has_fault_address() {
        let status = FaultStatus::from_esr(esr);
        let _ = write!(out, "  far {far:#018x} ({}", status.name());
        if let Some(level) = status.level() {
            let _ = write!(out, " at level {level}");
        }
        let _ = write!(out, ")");
    }
    let _ = writeln!(
        out,
        "\n  sp {:#018x}  lr {:#018x}  spsr {:#010x}",
        frame.sp, frame.x[30], frame.spsr
    );
    for (i, pair) in frame.x[..30].chunks(2).enumerate() {
        let _ = writeln!(
            out,
            "  x{:<2} {:#018x}  x{:<2} {:#018x}",
            2 * i,
            pair[0],
            2 * i + 1,
            pair[1]
        );
    }
    power::exit(power::EXIT_KERNEL_PANIC)
}
