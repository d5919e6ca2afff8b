//! The calls of a test image (the `test-calls` feature): what only tests
//! need from the kernel's eyes. `DebugThreadStats` reads a thread's
//! counters; `DebugCheckInvariants` checks the kernel's invariants now,
//! and optionally at every timer tick while threads run (the fuzzer's
//! mid-round checks: ready ⇔ queued, blocked ⇒ queued once, and the rest
//! of `Kernel::check_invariants`, which only hold between kernel entries
//! and at preemption points, where a tick is taken).

use crate::kernel::{Console, Kernel};
use crate::platform::Platform;
use crate::syscall::SyscallResult;
use crate::thread::ThreadId;
use crate::thread::ThreadState;
use abi::cap::{CapType, Rights};
use abi::debug::{ENDED, RUNS, WAITS};
use abi::ErrorCode;
use core::fmt::Write;

/// A check at every this many timer ticks: one check walks every object
/// and slot, which with all RAM handed out as Untyped (and a root CNode of
/// 4096 slots) takes about 15 ms under QEMU, longer than a tick (10 ms);
/// at every tick nothing else would ever run.
pub const TICKS_PER_CHECK: u64 = 4;

/// The invariant checks made at timer ticks.
#[derive(Clone, Copy, Debug, Default)]
pub struct TickChecks {
    /// Check at every `TICKS_PER_CHECK`th tick.
    pub on: bool,
    /// Ticks since the last check.
    pub ticks: u64,
    /// Checks made since the last `DebugCheckInvariants`.
    pub made: u64,
    /// The first broken invariant one of them found since then.
    pub broken: Option<&'static str>,
}

impl Kernel {
    /// `DebugThreadStats`: the counters of the thread of TCB capability
    /// `cptr` into the caller's x1..x4. (Never inlined, here and below:
    /// `tests/kernel_flavours.rs` finds each in the test image by name,
    /// and in no other image.)
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn debug_thread_stats(
        &mut self,
        current: ThreadId,
        cptr: u64,
    ) -> SyscallResult {
        let cap = match self.thread_cap(current, cptr, CapType::Tcb, Rights::NONE) {
            Ok(cap) => cap,
            Err(code) => return SyscallResult::Return(code),
        };
        let Some(target) = self.tcb_thread(cap.object()) else {
            return SyscallResult::Return(ErrorCode::InvalidCapability);
        };
        let Some(counts) = self.objects[target].stats.counts() else {
            return SyscallResult::Return(ErrorCode::InvalidSyscall);
        };
        let run_state = match self.objects[target].state() {
            ThreadState::Ready | ThreadState::Running => RUNS,
            ThreadState::Ended
            | ThreadState::EndPending { .. }
            | ThreadState::Exited(_)
            | ThreadState::Faulted(_)
            | ThreadState::Free => ENDED,
            _ => WAITS,
        };
        // Its results in x1..x5.
        let context = &mut self.objects[current].context;
        context.set_register(1, counts.syscalls);
        context.set_register(2, counts.irqs_from_el0);
        context.set_register(3, counts.preemptions);
        context.set_register(4, counts.yields);
        context.set_register(5, run_state);
        SyscallResult::Return(ErrorCode::Ok)
    }

    /// `DebugCheckInvariants`: checks now; `at_ticks` turns the checks at
    /// timer ticks on or off; reports and resets what those found.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn debug_check_invariants<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        at_ticks: bool,
    ) -> SyscallResult {
        let now = self.check_invariants();
        if let Err(broken) = now {
            let _ = writeln!(Console(platform), "[kernel] invariant broken: {broken}");
        }
        let ticks = core::mem::take(&mut self.tick_checks);
        self.tick_checks.on = at_ticks;
        // Its results in x1..x3.
        let context = &mut self.objects[current].context;
        context.set_register(1, u64::from(now.is_err()));
        context.set_register(2, ticks.made);
        context.set_register(3, u64::from(ticks.broken.is_some()));
        SyscallResult::Return(ErrorCode::Ok)
    }

    /// At a timer tick: the invariants, if a test asked for it. The first
    /// broken one is printed and kept for the next `DebugCheckInvariants`.
    #[inline(never)]
    pub(in crate::kernel) fn check_at_tick<P: Platform>(&mut self, platform: &mut P) {
        if !self.tick_checks.on {
            return;
        }
        self.tick_checks.ticks += 1;
        if self.tick_checks.ticks < TICKS_PER_CHECK {
            return;
        }
        self.tick_checks.ticks = 0;
        self.tick_checks.made += 1;
        if self.tick_checks.broken.is_none() {
            if let Err(broken) = self.check_invariants() {
                self.tick_checks.broken = Some(broken);
                let _ = writeln!(
                    Console(platform),
                    "[kernel] invariant broken at a timer tick: {broken}"
                );
            }
        }
    }
}
