//! Timing primitives for benchmarks: the PMU cycle counter read from EL0
//! (the kernel sets PMUSERENR_EL0), around exactly one operation.
//!
//! Each function is one `asm!` block, so nothing the compiler schedules
//! can land between the two counter reads. Under QEMU `-icount shift=0`
//! the counter advances one per guest instruction.

use core::arch::asm;

/// The counter delta of two back-to-back reads: the cost of the
/// measurement itself, subtracted from every sample.
pub fn empty_delta() -> u64 {
    let (start, end): (u64, u64);
    // SAFETY: reads a counter EL0 may read; no memory access.
    unsafe {
        asm!(
            "mrs {0}, pmccntr_el0",
            "mrs {1}, pmccntr_el0",
            out(reg) start,
            out(reg) end,
            options(nostack, nomem),
        )
    };
    end.wrapping_sub(start)
}

/// Counter delta around one `svc #0` with `x8 = number` and `x2 = arg`
/// (`x0`, `x1` zero; the syscall's result is discarded).
pub fn timed_syscall(number: u64, arg: u64) -> u64 {
    timed_syscall_x0_x2(number, 0, 0, arg).0
}

/// Counter delta around one `svc #0` with `x8 = number` and `x0..x2` as
/// given (a capability, a message info and one message word), and the
/// `x0` the syscall returned (its status), so a timed IPC can be checked.
pub fn timed_syscall_x0_x2(number: u64, x0: u64, x1: u64, x2: u64) -> (u64, u64) {
    timed_syscall_x0_x3(number, [x0, x1, x2, 0])
}

/// Counter delta around one `svc #0` with `x8 = number` and `x0..x3` as
/// given (a buffer syscall: a capability, then the buffer's address in
/// `x2` and length in `x3`), and the `x0` it returned.
pub fn timed_syscall_buffer(number: u64, x0: u64, address: u64, length: u64) -> (u64, u64) {
    timed_syscall_x0_x3(number, [x0, 0, address, length])
}

/// The one timed `svc`: `x0..x3` as given (the registers are set before
/// the first counter read, so what is timed is the `svc` alone), and
/// the counter delta and the returned `x0`.
fn timed_syscall_x0_x3(number: u64, [x0, x1, x2, x3]: [u64; 4]) -> (u64, u64) {
    let (start, end, status): (u64, u64, u64);
    // SAFETY: a syscall per the ABI: x0..x7 may change, and x9..x18 for
    // `Call` and `ReplyRecv`; nothing else.
    unsafe {
        asm!(
            "mrs {start}, pmccntr_el0",
            "svc #0",
            "mrs {end}, pmccntr_el0",
            start = out(reg) start,
            end = out(reg) end,
            inout("x0") x0 => status,
            inout("x1") x1 => _,
            inout("x2") x2 => _,
            inout("x3") x3 => _,
            out("x4") _, out("x5") _, out("x6") _, out("x7") _,
            in("x8") number,
            out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
            out("x14") _, out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            options(nostack),
        )
    };
    (end.wrapping_sub(start), status)
}

/// An IPC syscall `number` (`Call` or `ReplyRecv`) through capability
/// `x0` with message info `info`, its first word (`x2`) the counter read
/// just before the `svc`, the other register words 0: returns `x0..x8`
/// as the kernel left them (for these two, the message received), that
/// counter value, and the counter read just after the `svc` returns. A
/// one-way time is then the receiver's "after" minus the sender's first
/// word: the kernel's path, the `svc`, and one `mov` before it.
pub fn stamped_ipc(number: u64, x0: u64, info: u64) -> ([u64; 9], u64, u64) {
    let mut x = [x0, info, 0, 0, 0, 0, 0, 0, number];
    let (start, end): (u64, u64);
    // SAFETY: an IPC syscall per the ABI: it reads and writes x0..x8 and
    // may change x9..x18 (declared clobbered); nothing else.
    unsafe {
        asm!(
            "mrs x2, pmccntr_el0",
            "mov {start}, x2",
            "svc #0",
            "mrs {end}, pmccntr_el0",
            start = out(reg) start,
            end = out(reg) end,
            inout("x0") x[0], inout("x1") x[1], out("x2") x[2],
            inout("x3") x[3], inout("x4") x[4], inout("x5") x[5],
            inout("x6") x[6], inout("x7") x[7], inout("x8") x[8],
            out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
            out("x14") _, out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            options(nostack),
        )
    };
    (x, start, end)
}

/// The counter now.
pub fn now() -> u64 {
    let value: u64;
    // SAFETY: reads a counter EL0 may read; no memory access.
    unsafe { asm!("mrs {0}, pmccntr_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// The counter now, read as a compiler barrier: the memory accesses of
/// the code around it stay on their side of it (for timing an operation
/// written in Rust, such as a lock or an atomic, between two reads).
pub fn now_ordered() -> u64 {
    let value: u64;
    // SAFETY: reads a counter EL0 may read; declared as touching memory
    // (no `nomem`) only so the compiler does not move accesses across it.
    unsafe { asm!("mrs {0}, pmccntr_el0", out(reg) value, options(nostack)) };
    value
}
