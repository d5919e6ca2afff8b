//! Deliberate faults and register checks, for programs that test the
//! kernel (the boot suite, the fuzzer). Each fault probe does one precise
//! thing the kernel must stop the thread for; none returns normally when
//! the kernel is right.

use core::arch::asm;

/// Stores a word at `address` (expected to fault).
pub fn write_u64(address: u64) {
    // SAFETY: deliberately touches memory the program does not own; the
    // kernel stops the thread, so nothing observes the store.
    unsafe { asm!("str xzr, [{0}]", in(reg) address, options(nostack)) };
}

/// Loads a word from `address` (expected to fault).
pub fn read_u64(address: u64) -> u64 {
    let value: u64;
    // SAFETY: as `write_u64`.
    unsafe { asm!("ldr {0}, [{1}]", out(reg) value, in(reg) address, options(nostack, readonly)) };
    value
}

/// Executes an undefined instruction.
pub fn undefined_instruction() {
    // SAFETY: the instruction traps; no state is changed.
    unsafe { asm!("udf #0", options(nostack, nomem)) };
}

/// An exclusive load from `address`: exclusives must be naturally aligned
/// whatever SCTLR_EL1.A says, so a misaligned one is an alignment fault.
pub fn exclusive_load(address: u64) -> u64 {
    let value: u64;
    // SAFETY: a load (expected to fault); the monitor is cleared after.
    unsafe { asm!("ldxr {0}, [{1}]", "clrex", out(reg) value, in(reg) address, options(nostack)) };
    value
}

/// Branches to `address` (expected to fault: not executable).
pub fn jump_to(address: u64) {
    // SAFETY: the branch traps at the target when it is not executable;
    // if it were, the code there is a `ret` placed by the caller.
    unsafe { asm!("blr {0}", in(reg) address, out("x30") _, clobber_abi("C")) };
}

/// Sets this thread's user thread pointer (TPIDR_EL0), which the kernel
/// must keep per thread across every switch.
pub fn set_thread_pointer(value: u64) {
    // SAFETY: TPIDR_EL0 is EL0's own scratch register; Rust code here
    // uses no thread-local storage, so nothing else relies on its value.
    unsafe { asm!("msr tpidr_el0, {0}", in(reg) value, options(nostack, nomem)) };
}

/// This thread's user thread pointer (TPIDR_EL0).
pub fn thread_pointer() -> u64 {
    let value: u64;
    // SAFETY: reading EL0's own register has no side effect.
    unsafe { asm!("mrs {0}, tpidr_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// Reads the virtual counter and its frequency.
pub fn counter() -> (u64, u64) {
    let (count, frequency): (u64, u64);
    // SAFETY: the kernel lets EL0 read CNTVCT and CNTFRQ.
    unsafe {
        asm!("isb", "mrs {0}, cntvct_el0", "mrs {1}, cntfrq_el0", out(reg) count, out(reg) frequency, options(nostack, nomem))
    };
    (count, frequency)
}

/// Spins for `milliseconds` of counter time.
pub fn spin_ms(milliseconds: u64) {
    let (start, frequency) = counter();
    let ticks = frequency / 1000 * milliseconds;
    while counter().0.wrapping_sub(start) < ticks {
        core::hint::spin_loop();
    }
}

/// Fills v0..v31 from `seed`, spins `milliseconds` (long enough to be
/// preempted), and checks every register still holds its value. All in one
/// block so no compiler-generated code can use the registers in between.
pub fn fp_registers_survive(seed: u64, milliseconds: u64) -> bool {
    let (_, frequency) = counter();
    let ticks = frequency / 1000 * milliseconds;
    let mismatches: u64;
    // SAFETY: only registers declared as clobbered are written.
    unsafe {
        asm!(
            // v_i = seed + i (both halves).
            "mov {value}, {seed}",
            "dup v0.2d, {value}", "add {value}, {value}, #1",
            "dup v1.2d, {value}", "add {value}, {value}, #1",
            "dup v2.2d, {value}", "add {value}, {value}, #1",
            "dup v3.2d, {value}", "add {value}, {value}, #1",
            "dup v4.2d, {value}", "add {value}, {value}, #1",
            "dup v5.2d, {value}", "add {value}, {value}, #1",
            "dup v6.2d, {value}", "add {value}, {value}, #1",
            "dup v7.2d, {value}", "add {value}, {value}, #1",
            "dup v8.2d, {value}", "add {value}, {value}, #1",
            "dup v9.2d, {value}", "add {value}, {value}, #1",
            "dup v10.2d, {value}", "add {value}, {value}, #1",
            "dup v11.2d, {value}", "add {value}, {value}, #1",
            "dup v12.2d, {value}", "add {value}, {value}, #1",
            "dup v13.2d, {value}", "add {value}, {value}, #1",
            "dup v14.2d, {value}", "add {value}, {value}, #1",
            "dup v15.2d, {value}", "add {value}, {value}, #1",
            "dup v16.2d, {value}", "add {value}, {value}, #1",
            "dup v17.2d, {value}", "add {value}, {value}, #1",
            "dup v18.2d, {value}", "add {value}, {value}, #1",
            "dup v19.2d, {value}", "add {value}, {value}, #1",
            "dup v20.2d, {value}", "add {value}, {value}, #1",
            "dup v21.2d, {value}", "add {value}, {value}, #1",
            "dup v22.2d, {value}", "add {value}, {value}, #1",
            "dup v23.2d, {value}", "add {value}, {value}, #1",
            "dup v24.2d, {value}", "add {value}, {value}, #1",
            "dup v25.2d, {value}", "add {value}, {value}, #1",
            "dup v26.2d, {value}", "add {value}, {value}, #1",
            "dup v27.2d, {value}", "add {value}, {value}, #1",
            "dup v28.2d, {value}", "add {value}, {value}, #1",
            "dup v29.2d, {value}", "add {value}, {value}, #1",
            "dup v30.2d, {value}", "add {value}, {value}, #1",
            "dup v31.2d, {value}",
            // Spin on the counter.
            "isb",
            "mrs {start}, cntvct_el0",
            "2:",
            "isb",
            "mrs {now}, cntvct_el0",
            "sub {now}, {now}, {start}",
            "cmp {now}, {ticks}",
            "b.lo 2b",
            // Count registers whose two lanes differ from seed + i.
            "mov {bad}, #0",
            "mov {value}, {seed}",
            ".irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
            "mov {now}, v\\n\\().d[0]",
            "cmp {now}, {value}",
            "cinc {bad}, {bad}, ne",
            "mov {now}, v\\n\\().d[1]",
            "cmp {now}, {value}",
            "cinc {bad}, {bad}, ne",
            "add {value}, {value}, #1",
            ".endr",
            seed = in(reg) seed,
            ticks = in(reg) ticks,
            value = out(reg) _,
            start = out(reg) _,
            now = out(reg) _,
            bad = out(reg) mismatches,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v24") _, out("v25") _, out("v26") _, out("v27") _,
            out("v28") _, out("v29") _, out("v30") _, out("v31") _,
            options(nostack, nomem),
        )
    };
    mismatches == 0
}

/// Makes syscall `number` with `x0`, `x2` and `x3` as given and every
/// register a syscall must keep holding a known value: `x9..x30`, the
/// stack pointer, `TPIDR_EL0` and the NZCV flags. Returns the syscall's
/// `x0` and how many of those it changed (0 on every kernel entry: the
/// vector's inline `Null`, the lean entry whether or not its thread goes
/// back as it is, and the generic entry).
pub fn registers_kept_across(number: u64, x0: u64, x2: u64, x3: u64) -> (u64, u64) {
    let mut marks = [0u64; 19];
    for (i, mark) in marks.iter_mut().enumerate() {
        *mark = 0x6b65_0000_0000_0000 | (i as u64 * 0x1111);
    }
    let mut after = marks;
    let result: u64;
    let changed: u64;
    // SAFETY: x19, x29 and x30, which the compiler owns, are saved on the
    // stack below sp (in a 48-byte frame this block makes and removes)
    // and restored; every other register the block or the syscall writes
    // is declared. The NZCV flags are the block's own (not preserved
    // for the compiler: `preserves_flags` is not claimed).
    unsafe {
        asm!(
            "sub sp, sp, #48",
            "stp x19, x29, [sp]",
            "str x30, [sp, #16]",
            "mov x19, sp",
            "str x19, [sp, #24]",
            "mrs x19, tpidr_el0",
            "str x19, [sp, #32]",
            // Z and C set (0b0110 in NZCV's bits 31..28).
            "mov x19, #0x60000000",
            "msr nzcv, x19",
            "mov x19, #0x919",
            "mov x29, #0x929",
            "mov x30, #0x930",
            "svc #0",
            "mrs x8, nzcv",
            "mov x1, #0",
            "mov x2, #0x60000000",
            "cmp x8, x2",
            "cinc x1, x1, ne",
            "cmp x19, #0x919",
            "cinc x1, x1, ne",
            "cmp x29, #0x929",
            "cinc x1, x1, ne",
            "cmp x30, #0x930",
            "cinc x1, x1, ne",
            "mov x2, sp",
            "ldr x3, [sp, #24]",
            "cmp x2, x3",
            "cinc x1, x1, ne",
            "mrs x2, tpidr_el0",
            "ldr x3, [sp, #32]",
            "cmp x2, x3",
            "cinc x1, x1, ne",
            "ldp x19, x29, [sp]",
            "ldr x30, [sp, #16]",
            "add sp, sp, #48",
            inout("x0") x0 => result, out("x1") changed,
            inout("x2") x2 => _, inout("x3") x3 => _,
            out("x4") _, out("x5") _, out("x6") _, out("x7") _,
            inout("x8") number => _,
            inout("x9") after[0] => after[0], inout("x10") after[1] => after[1],
            inout("x11") after[2] => after[2], inout("x12") after[3] => after[3],
            inout("x13") after[4] => after[4], inout("x14") after[5] => after[5],
            inout("x15") after[6] => after[6], inout("x16") after[7] => after[7],
            inout("x17") after[8] => after[8], inout("x18") after[9] => after[9],
            inout("x20") after[10] => after[10], inout("x21") after[11] => after[11],
            inout("x22") after[12] => after[12], inout("x23") after[13] => after[13],
            inout("x24") after[14] => after[14], inout("x25") after[15] => after[15],
            inout("x26") after[16] => after[16], inout("x27") after[17] => after[17],
            inout("x28") after[18] => after[18],
        )
    };
    let marks_changed = marks
        .iter()
        .zip(after.iter())
        .filter(|(a, b)| a != b)
        .count() as u64;
    (result, changed + marks_changed)
}

/// Makes a null syscall and returns how many of the registers it must
/// keep it changed ([`registers_kept_across`]; 0 when the kernel kept
/// them all).
pub fn registers_preserved_across_syscall() -> u64 {
    registers_kept_across(abi::Syscall::Null.number(), 0, 0, 0).1
}

/// Makes IPC syscall `number` with `x0..x7` as given and `x9..x18`
/// holding `marks`, having first taken the marks through the generic
/// entry (an unknown syscall number, which saves every register and
/// changes only `x0`): returns `x0..x8` and `x9..x18` after the IPC. The
/// ABI lets `Call` and `ReplyRecv` leave in `x9..x18` only values the
/// thread itself had at an earlier entry, or zero: here the marks.
pub fn ipc_with_marked_scratch(
    number: u64,
    args: [u64; 8],
    marks: [u64; 10],
) -> ([u64; 9], [u64; 10]) {
    let mut x = [
        args[0],
        args[1],
        args[2],
        args[3],
        args[4],
        args[5],
        args[6],
        args[7],
        u64::MAX,
    ];
    let mut m = marks;
    // SAFETY: two syscalls: the first (unknown) writes x0, the second
    // reads and writes x0..x18, all declared; x20/x21 are only read.
    unsafe {
        asm!(
            "svc #0",
            "mov x0, x20",
            "mov x8, x21",
            "svc #0",
            inout("x0") x[0], inout("x1") x[1], inout("x2") x[2],
            inout("x3") x[3], inout("x4") x[4], inout("x5") x[5],
            inout("x6") x[6], inout("x7") x[7], inout("x8") x[8],
            inout("x9") m[0], inout("x10") m[1], inout("x11") m[2], inout("x12") m[3],
            inout("x13") m[4], inout("x14") m[5], inout("x15") m[6], inout("x16") m[7],
            inout("x17") m[8], inout("x18") m[9],
            in("x20") args[0], in("x21") number,
            options(nostack),
        )
    };
    (x, m)
}

/// Stores `value` at `address` (which may fault, for the tests that show
/// a page is read-only or unmapped).
pub fn store_u64(address: u64, value: u64) {
    // SAFETY: as `write_u64`: the address is a page the program mapped
    // itself (or one that must fault); nothing else refers to it.
    unsafe { asm!("str {0}, [{1}]", in(reg) value, in(reg) address, options(nostack)) };
}

/// Calls the code at `address` as `extern "C" fn() -> u64` (a leaf that
/// returns in `x0`; every caller-saved register is clobbered).
pub fn call(address: u64) -> u64 {
    let result: u64;
    // SAFETY: the code was placed at `address` by the program itself (or
    // the call must fault); it is treated as a C function clobbering all
    // caller-saved registers, and returns through x30.
    unsafe {
        asm!(
            "blr {0}",
            in(reg) address,
            lateout("x0") result,
            clobber_abi("C"),
        )
    };
    result
}

// EL0 access to the EL1 physical timer and the PMU. The kernel gives EL0
// the virtual counter (`counter`) and a read of the PMU cycle counter
// (`sdk::timing::now`), nothing else of either device: each probe below
// must trap (exception class 0x18, a trapped system register access), and
// a fault handler that resumes the thread after it sees that the
// instruction did nothing. One instruction each, so the fault's PC is the
// probe's access.

/// Writes CNTP_CTL_EL0, the EL1 physical timer's control (1: enable,
/// unmasked; 0: off).
pub fn write_physical_timer_control(value: u64) {
    // SAFETY: a system register write with no memory effect; EL0 access
    // to the physical timer is trapped, so it faults instead.
    unsafe { asm!("msr cntp_ctl_el0, {0}", in(reg) value, options(nostack, nomem)) };
}

/// Reads CNTP_CTL_EL0.
pub fn read_physical_timer_control() -> u64 {
    let value: u64;
    // SAFETY: a system register read with no side effect (trapped at EL0).
    unsafe { asm!("mrs {0}, cntp_ctl_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// Writes CNTP_TVAL_EL0: the physical timer fires `value` ticks from now.
pub fn write_physical_timer_value(value: u64) {
    // SAFETY: as `write_physical_timer_control`.
    unsafe { asm!("msr cntp_tval_el0, {0}", in(reg) value, options(nostack, nomem)) };
}

/// Reads CNTP_CVAL_EL0, the physical timer's compare value.
pub fn read_physical_timer_compare() -> u64 {
    let value: u64;
    // SAFETY: as `read_physical_timer_control`.
    unsafe { asm!("mrs {0}, cntp_cval_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// Reads CNTPCT_EL0, the physical counter (EL0 gets the virtual one).
pub fn read_physical_counter() -> u64 {
    let value: u64;
    // SAFETY: as `read_physical_timer_control`.
    unsafe { asm!("mrs {0}, cntpct_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// Writes PMCR_EL0, the PMU's control (0 stops every counter; bit 2
/// resets the cycle counter).
pub fn write_pmu_control(value: u64) {
    // SAFETY: a system register write with no memory effect; EL0 writes
    // to the PMU are trapped, so it faults instead.
    unsafe { asm!("msr pmcr_el0, {0}", in(reg) value, options(nostack, nomem)) };
}

/// Reads PMCR_EL0.
pub fn read_pmu_control() -> u64 {
    let value: u64;
    // SAFETY: a system register read with no side effect (trapped at EL0).
    unsafe { asm!("mrs {0}, pmcr_el0", out(reg) value, options(nostack, nomem)) };
    value
}

/// Writes PMCNTENCLR_EL0 (bit 31 disables the cycle counter).
pub fn write_pmu_counter_disable(value: u64) {
    // SAFETY: as `write_pmu_control`.
    unsafe { asm!("msr pmcntenclr_el0, {0}", in(reg) value, options(nostack, nomem)) };
}

/// Writes PMCCNTR_EL0, the cycle counter itself (EL0 may only read it).
pub fn write_cycle_counter(value: u64) {
    // SAFETY: as `write_pmu_control`.
    unsafe { asm!("msr pmccntr_el0, {0}", in(reg) value, options(nostack, nomem)) };
}

/// `Null` with `x2 = marker`, the instruction after the `svc` and one
/// more counted in `x9`: the result (`x0`) and the count (2 when the
/// thread ran on from the `svc` as usual; a tracer's single step or a
/// changed PC shows in it).
pub fn marked_null(marker: u64) -> (u64, u64) {
    let x0: u64;
    let count: u64;
    // SAFETY: `Null` writes only x0 (and may write x1..x8, declared
    // clobbered); the adds touch x9 only.
    unsafe {
        asm!(
            "mov x9, #0",
            "svc #0",
            "add x9, x9, #1",
            "add x9, x9, #1",
            inout("x0") 0u64 => x0,
            inout("x2") marker => _,
            inout("x8") abi::Syscall::Null.number() => _,
            out("x9") count,
            lateout("x1") _,
            lateout("x3") _,
            lateout("x4") _,
            lateout("x5") _,
            lateout("x6") _,
            lateout("x7") _,
            options(nostack),
        )
    };
    (x0, count)
}
