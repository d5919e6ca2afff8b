//! Reading the system registers the kernel reports and decides on.

use aarch64_cpu::registers::*;

/// Syndrome, fault address and return address of the exception being handled.
#[derive(Clone, Copy, Debug)]
pub struct ExceptionSyndrome {
    /// ESR_EL1.
    pub esr: u64,
    /// FAR_EL1 (meaningful for aborts only).
    pub far: u64,
}

/// ESR_EL1 alone (the IPC fast path needs no fault address).
#[inline(always)]
pub fn exception_syndrome_register() -> u64 {
    ESR_EL1.get()
}

/// FAR_EL1 alone (meaningful for aborts only).
#[inline(always)]
pub fn fault_address_register() -> u64 {
    FAR_EL1.get()
}

/// Reads ESR_EL1 and FAR_EL1.
pub fn exception_syndrome() -> ExceptionSyndrome {
    ExceptionSyndrome {
        esr: ESR_EL1.get(),
        far: FAR_EL1.get(),
    }
}

/// The generic timer's frequency in Hz (CNTFRQ_EL0, set by firmware/QEMU).
pub fn counter_frequency() -> u64 {
    CNTFRQ_EL0.get()
}

/// The virtual counter (CNTVCT_EL0).
pub fn counter() -> u64 {
    CNTVCT_EL0.get()
}

/// ID_AA64MMFR0_EL1: physical address range and ASID size.
pub fn memory_model_features() -> u64 {
    ID_AA64MMFR0_EL1.get()
}

/// The MIDR_EL1 part number (0xd08 = Cortex-A72).
pub fn cpu_part_number() -> u64 {
    (MIDR_EL1.get() >> 4) & 0xfff
}

/// Enables the PMU cycle counter for EL0 and EL1 and lets EL0 read it and
/// nothing else of the PMU (PMUSERENR_EL0.CR alone: EN would also let EL0
/// write PMCR_EL0 and the enable and overflow registers, so stop, reset or
/// reprogram the counter every thread and the benchmarks read). Under QEMU
/// `-icount shift=0` it counts guest instructions.
///
/// aarch64-cpu has no PMU registers, hence the raw `msr`s.
pub fn enable_cycle_counter() {
    const PMCR_E: u64 = 1 << 0;
    const PMCR_C: u64 = 1 << 2;
    const PMCNTEN_CYCLES: u64 = 1 << 31;
    const PMUSERENR_CR: u64 = 1 << 2;
    // SAFETY: PMU configuration has no memory-safety effect.
    unsafe {
        core::arch::asm!(
            "mrs {t}, pmcr_el0",
            "orr {t}, {t}, {e}",
            "msr pmcr_el0, {t}",
            "msr pmcntenset_el0, {c}",
            "msr pmuserenr_el0, {u}",
            "isb",
            t = out(reg) _,
            e = in(reg) PMCR_E | PMCR_C,
            c = in(reg) PMCNTEN_CYCLES,
            u = in(reg) PMUSERENR_CR,
            options(nostack),
        )
    };
}

/// The PMU cycle counter (PMCCNTR_EL0).
pub fn cycle_counter() -> u64 {
    let value: u64;
    // SAFETY: reading a counter has no side effect.
    unsafe { core::arch::asm!("mrs {0}, pmccntr_el0", out(reg) value, options(nostack)) };
    value
}

/// Lets EL0 read the virtual counter (CNTKCTL_EL1.EL0VCTEN) and nothing
/// else of the generic timer: no timer registers (EL0PTEN, EL0VTEN clear)
/// and not the physical counter. The kernel ticks with the virtual timer;
/// the EL1 physical timer is a device only the holder of its IrqHandler
/// capability may program, through the kernel (`Syscall::IrqSetTimer`).
pub fn allow_user_counter() {
    CNTKCTL_EL1.write(CNTKCTL_EL1::EL0VCTEN::SET);
}

/// Is an IRQ pending at this CPU (ISR_EL1.I), masked or not? What a long
/// kernel operation asks at its preemption points.
#[inline(always)]
pub fn irq_pending() -> bool {
    const ISR_I: u64 = 1 << 7;
    let isr: u64;
    // SAFETY: reading ISR_EL1 has no side effect.
    unsafe { core::arch::asm!("mrs {0}, isr_el1", out(reg) isr, options(nomem, nostack)) };
    isr & ISR_I != 0
}

/// CPACR_EL1 with FPEN = 0b01 (EL0's FP/SIMD traps): `set_user_fp_access`
/// writes this with bit [`CPACR_FPEN_EL0_SHIFT`] set when EL0 may use
/// FP/SIMD (0b11); the fast paths' assembly does the same.
pub const CPACR_FPEN_TRAP_EL0: u64 = 0b01 << 20;
/// The FPEN bit that, set, lets EL0 use FP/SIMD.
pub const CPACR_FPEN_EL0_SHIFT: u64 = 21;

/// Whether EL0 may use FP/SIMD now (CPACR_EL1.FPEN = 0b11, as
/// `set_user_fp_access(true)` or the fast paths wrote it).
pub fn user_fp_access() -> bool {
    CPACR_EL1.get() & (1 << CPACR_FPEN_EL0_SHIFT) != 0
}

/// Lets EL0 use FP/SIMD (CPACR_EL1.FPEN = 0b11) or traps its next FP/SIMD
/// instruction to EL1 (0b01). EL1 never uses FP/SIMD (softfloat kernel).
pub fn set_user_fp_access(enabled: bool) {
    // FPEN (bits 21:20) is TrapEl0 (0b01) with `enabled` as its high
    // bit: TrapNothing (0b11). Computed from the bool (which the caller
    // has in a register already) in the asm, where the compiler cannot
    // turn it back into a choice of the two constants (two moves, a
    // compare and a select) on every switch between a thread that owns
    // the FP registers and one that does not. The other fields are 0, as
    // a `write` of the one field left them.
    const _: () = assert!(CPACR_EL1::FPEN::TrapEl0.value == CPACR_FPEN_TRAP_EL0);
    const _: () = assert!(
        CPACR_EL1::FPEN::TrapNothing.value == CPACR_FPEN_TRAP_EL0 | 1 << CPACR_FPEN_EL0_SHIFT
    );
    let enabled = u64::from(enabled);
    // SAFETY: CPACR_EL1 with only FPEN set controls EL0 (and EL1) access
    // to FP/SIMD, nothing else; FPEN's low bit, always set, keeps EL1's
    // own access (`move_fp_state`), so only EL0 sees the change. No isb:
    // no EL0 instruction runs before the eret, a context synchronization
    // event (SCTLR_EL1.EOS is set at boot, and is RES1 on cores without
    // FEAT_ExS), which makes the write take effect (as in the fast paths'
    // `run_next`); a later read of the register (`user_fp_access`) sees
    // it, as direct reads and writes of one register keep program order.
    unsafe {
        core::arch::asm!(
            "lsl {value}, {enabled}, #21",
            "orr {value}, {value}, #(1 << 20)",
            "msr cpacr_el1, {value}",
            enabled = in(reg) enabled,
            value = out(reg) _,
            options(nostack, preserves_flags)
        );
    }
}

/// MDSCR_EL1.SS: software step enabled.
const MDSCR_SS: u64 = 1 << 0;

/// Unlocks the OS lock (OSLAR_EL1 = 0), which resets to locked and, while
/// locked, keeps every debug exception from being generated — the
/// software step of a traced thread included. MDSCR_EL1.KDE stays 0, so
/// no debug exception is ever taken from EL1 itself.
pub fn unlock_debug() {
    // SAFETY: the OS lock only gates debug exceptions; with MDSCR_EL1.SS
    // and .KDE clear (their reset state here) none can occur yet.
    unsafe { core::arch::asm!("msr oslar_el1, xzr", "isb", options(nostack)) };
}

/// Turns software step for EL0 on or off (MDSCR_EL1.SS). While on, a
/// return to EL0 with SPSR_EL1.SS = 1 executes one instruction and then
/// takes a software-step exception (EC 0x32) to EL1; with SPSR_EL1.SS = 0
/// the exception is taken before any instruction runs.
pub fn set_user_single_step(on: bool) {
    // SAFETY: MDSCR_EL1.SS affects only exceptions from EL0 (KDE stays
    // clear, so EL1 is never stepped); the eret that follows synchronises
    // the write, and the isb makes it take effect for the next eret.
    unsafe {
        core::arch::asm!(
            "mrs {t}, mdscr_el1",
            "bic {t}, {t}, {ss}",
            "orr {t}, {t}, {on}",
            "msr mdscr_el1, {t}",
            "isb",
            t = out(reg) _,
            ss = in(reg) MDSCR_SS,
            on = in(reg) if on { MDSCR_SS } else { 0 },
            options(nostack),
        )
    };
}
