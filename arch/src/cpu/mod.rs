//! The AArch64 CPU side: boot, exception vectors, returning to EL0, system
//! registers, the generic timer, the PMU, TLB maintenance, user-memory
//! access and ending a run. Built for the target only.

pub mod console;
pub mod crash;
pub mod cross_core;
pub mod early_map;
pub mod kernel_cell;
mod kernel_fault;
pub mod lean_entry;
pub mod phys;
pub mod power;
pub mod registers;
pub mod smp;
pub mod timer;
pub mod tlb;
pub mod user_return;

use crate::boards::{rpi4, virt};

core::arch::global_asm!(
    include_str!("boot.s"),
    RPI4_GICD = const rpi4::GIC_DISTRIBUTOR,
    RPI4_GICC = const rpi4::GIC_CPU_INTERFACE,
    RPI4_LOCAL_CONTROL = const rpi4::LOCAL_CONTROL,
    RPI4_LOCAL_PRESCALER = const rpi4::LOCAL_PRESCALER,
    RPI4_COUNTER_HZ = const rpi4::COUNTER_HZ,
    RPI4_UART = const rpi4::UART,
    VIRT_UART = const virt::UART,
    CPU0_STACK_TOP = const crate::layout::kernel_stack_top_offset(0),
    MAX_CPUS = const crate::layout::MAX_CPUS,
    SB_MPIDR = const smp::SECONDARY_BOOT_MPIDR,
    SB_STACK_TOP = const smp::SECONDARY_BOOT_STACK_TOP,
    SB_CPU = const smp::SECONDARY_BOOT_CPU,
    MPIDR_AFFINITY = const smp::MPIDR_AFFINITY,
);
/// The vectors' offsets and numbers, from the types and values they
/// stand for (`cpu/vectors.s` names them with `.equ`).
pub mod vector_constants {
    use crate::context::{UserContext, SPSR_USER_WRITABLE, WORK_FLAGS_OFFSET};
    use core::mem::{offset_of, size_of};

    /// `stp x30, x21` stores x30 and SP_EL0 as a pair.
    pub const CTX_SP_EL0_PAIR: usize = offset_of!(UserContext, x) + 30 * 8;
    const _: () = assert!(offset_of!(UserContext, sp) == CTX_SP_EL0_PAIR + 8);
    /// ELR_EL1 and SPSR_EL1 as a pair.
    pub const CTX_ELR_PAIR: usize = offset_of!(UserContext, pc);
    const _: () = assert!(offset_of!(UserContext, spsr) == CTX_ELR_PAIR + 8);
    /// TPIDR_EL0.
    pub const CTX_TPIDR: usize = offset_of!(UserContext, tpidr);
    /// The mask is built with a `movz` of its high 16 bits, shifted by
    /// 16, and a `movk` of its low 16 bits.
    pub const SPSR_USER_WRITABLE_HIGH: u64 = SPSR_USER_WRITABLE >> 16;
    /// Its low 16 bits.
    pub const SPSR_USER_WRITABLE_LOW: u64 = SPSR_USER_WRITABLE & 0xffff;
    const _: () = assert!(SPSR_USER_WRITABLE_HIGH <= 0xffff);
    /// The whole saved-register block.
    pub const FRAME_SIZE: usize = size_of::<UserContext>();
    // `sub sp, sp, #FRAME_SIZE` and the `[sp, #offset]` forms take 12 bits.
    const _: () = assert!(FRAME_SIZE < 4096 && WORK_FLAGS_OFFSET + 8 < 4096);
    /// ESR_EL1.EC of an SVC from AArch64.
    pub const EC_SVC64: u64 = crate::exception::EC_SVC64 as u64;
    /// What the lean syscall entry's stub does after the kernel's half
    /// (`lean_entry`).
    pub const LEAN_SAVE_REST: u64 = super::lean_entry::SAVE_REST;
    /// The lean entry's syscall is done and the lock kept.
    pub const LEAN_FINISH: u64 = super::lean_entry::FINISH;
    const _: () = assert!(LEAN_SAVE_REST == 0 && LEAN_FINISH == 1);
    /// The work words of a thread whose only work is audit, or policy,
    /// which the lean entry also takes (`cmp` takes them as immediates).
    pub const WORK_AUDIT: u64 = entry::WorkFlags::AUDIT.bits();
    /// (See `WORK_AUDIT`.)
    pub const WORK_POLICY: u64 = entry::WorkFlags::POLICY.bits();
    /// The work word of a thread whose only work is syscall user
    /// dispatch, which the user-dispatch fast path takes.
    pub const WORK_USER_DISPATCH: u64 = entry::WorkFlags::USER_DISPATCH.bits();
    /// Its bit's number (`tbz`).
    pub const WORK_USER_DISPATCH_BIT: u32 = WORK_USER_DISPATCH.trailing_zeros();
    /// The work word of a thread whose only work is tracing, whose entry
    /// stop the trace fast path sends.
    pub const WORK_TRACE: u64 = entry::WorkFlags::TRACE.bits();
    const _: () = assert!(WORK_USER_DISPATCH.is_power_of_two());
    const _: () = assert!(WORK_AUDIT < 4096 && WORK_POLICY < 4096 && WORK_USER_DISPATCH < 4096);
    /// `Call`, which has an IPC fast path.
    pub const SYSCALL_CALL: u64 = abi::Syscall::Call.number();
    /// `ReplyRecv`, which has an IPC fast path.
    pub const SYSCALL_REPLY_RECV: u64 = abi::Syscall::ReplyRecv.number();
    /// `Yield`, which has a fast path.
    pub const SYSCALL_YIELD: u64 = abi::Syscall::Yield.number();
    /// `Signal`, which has a fast path; `Wait` is the next number.
    pub const SYSCALL_SIGNAL: u64 = abi::Syscall::Signal.number();
    const _: () = assert!(abi::Syscall::Wait.number() == SYSCALL_SIGNAL + 1);
    // The vector tests Call and ReplyRecv first, then sends the numbers
    // above ReplyRecv's to the Signal/Wait test and the others to Yield's.
    const _: () = assert!(SYSCALL_CALL < SYSCALL_REPLY_RECV);
    const _: () =
        assert!(SYSCALL_YIELD < SYSCALL_REPLY_RECV && SYSCALL_SIGNAL > SYSCALL_REPLY_RECV);
    #[cfg(feature = "bench-floor")]
    /// `BenchFloor`, which the floor vectors answer.
    pub const SYSCALL_BENCH_FLOOR: u64 = abi::Syscall::BenchFloor.number();
}

// The benchmark floor's second vector table is only in a bench image
// (`bench-floor`): it is one more way for an SVC to go, and no other image
// needs it.
macro_rules! vectors {
    ($($floor:tt)*) => {
        core::arch::global_asm!(
            include_str!("vectors.s"),
            $($floor)*
            CTX_SP_EL0_PAIR = const vector_constants::CTX_SP_EL0_PAIR,
            CTX_ELR_PAIR = const vector_constants::CTX_ELR_PAIR,
            CTX_TPIDR = const vector_constants::CTX_TPIDR,
            SPSR_USER_WRITABLE_HIGH = const vector_constants::SPSR_USER_WRITABLE_HIGH,
            SPSR_USER_WRITABLE_LOW = const vector_constants::SPSR_USER_WRITABLE_LOW,
            FRAME_SIZE = const vector_constants::FRAME_SIZE,
            WORK_FLAGS_OFFSET = const crate::context::WORK_FLAGS_OFFSET,
            REFUSED_OFFSET = const crate::context::REFUSED_OFFSET,
            REFUSAL_CODES_OFFSET = const crate::context::REFUSAL_CODES_OFFSET,
            LEAN_JUDGED_OFFSET = const crate::context::LEAN_JUDGED_OFFSET,
            REGISTER_JUDGED_OFFSET = const crate::context::REGISTER_JUDGED_OFFSET,
            ASKED_OFFSET = const crate::context::ASKED_OFFSET,
            WORK_AUDIT = const vector_constants::WORK_AUDIT,
            WORK_POLICY = const vector_constants::WORK_POLICY,
            WORK_USER_DISPATCH = const vector_constants::WORK_USER_DISPATCH,
            WORK_USER_DISPATCH_BIT = const vector_constants::WORK_USER_DISPATCH_BIT,
            WORK_TRACE = const vector_constants::WORK_TRACE,
            EC_SVC64 = const vector_constants::EC_SVC64,
            SYSCALL_CALL = const vector_constants::SYSCALL_CALL,
            SYSCALL_REPLY_RECV = const vector_constants::SYSCALL_REPLY_RECV,
            SYSCALL_YIELD = const vector_constants::SYSCALL_YIELD,
            SYSCALL_SIGNAL = const vector_constants::SYSCALL_SIGNAL,
            LEAN_FINISH = const vector_constants::LEAN_FINISH,
            LEAN_POISON = const cfg!(feature = "poison-unsaved") as u64,
        );
    };
}
#[cfg(not(feature = "bench-floor"))]
vectors!();
#[cfg(feature = "bench-floor")]
vectors!(
    include_str!("floor_vectors.s"),
    SYSCALL_BENCH_FLOOR = const vector_constants::SYSCALL_BENCH_FLOOR,
);
