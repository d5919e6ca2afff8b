//! The calls of a test image (the kernel's `test-calls` feature): what a
//! test driver reads with the kernel's eyes. Any other image answers
//! `InvalidSyscall`.

use crate::ipc::Cptr;
use crate::syscall::{raw_syscall_registers, RawResult};
use abi::{ErrorCode, Syscall};

/// What the kernel counted for a thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    /// Syscalls that reached the kernel's generic path (the inline `Null`
    /// and IPC fast paths do not count).
    pub syscalls: u64,
    /// Interrupts taken while it ran at EL0.
    pub interrupts: u64,
    /// Times the timer took the CPU from it for another thread.
    pub preemptions: u64,
    /// `Yield` syscalls.
    pub yields: u64,
    /// It runs or is ready (`abi::debug::RUNS`), waits (`WAITS`) or has
    /// ended (`ENDED`).
    pub run_state: u64,
}

/// The counters of the thread of the TCB capability `tcb`.
pub fn thread_stats(tcb: Cptr) -> Result<ThreadStats, ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::DebugThreadStats.number(),
        [tcb.0, 0, 0, 0, 0, 0, 0, 0],
    );
    RawResult(x[0]).into_result()?;
    Ok(ThreadStats {
        syscalls: x[1],
        interrupts: x[2],
        preemptions: x[3],
        yields: x[4],
        run_state: x[5],
    })
}

/// What `check_invariants` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvariantReport {
    /// The kernel's invariants hold now.
    pub hold_now: bool,
    /// Checks made at timer ticks since the last call.
    pub tick_checks: u64,
    /// One of those found a broken invariant (the kernel printed which).
    pub broken_at_a_tick: bool,
}

/// Checks the kernel's invariants now; `at_ticks` asks for a check at
/// every timer tick from now on (or no more).
pub fn check_invariants(at_ticks: bool) -> Result<InvariantReport, ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::DebugCheckInvariants.number(),
        [0, 0, u64::from(at_ticks), 0, 0, 0, 0, 0],
    );
    RawResult(x[0]).into_result()?;
    Ok(InvariantReport {
        hold_now: x[1] == 0,
        tick_checks: x[2],
        broken_at_a_tick: x[3] != 0,
    })
}
