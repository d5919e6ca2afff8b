//! Syscall exit work (stages 5 to 7) as a state machine, and the
//! exit-to-user loop (stage 8).
//!
//! | stage | runs when                                  | the kernel                      |
//! |-------|--------------------------------------------|---------------------------------|
//! | 5     | `AUDIT`, syscall dispatched, denied or killed | writes the record, with the result |
//! | 6     | `TRACE`, syscall dispatched or denied      | sends the exit stop             |
//! | 7     | `SINGLESTEP` without `SYSEMU`, same        | reports the step                |
//! | 8     | always; handlers per `EXIT_WORK` bit       | reschedules, delivers           |
//!
//! Which syscalls get stages 5 to 7 (the Linux arm64 lessons):
//! - A syscall the tracer skipped (SYSEMU) gets none of them: its audit entry
//!   never ran, the tracer already saw it at the entry stop, and a step
//!   report for it would be spurious. `SYSEMU` in `work` also suppresses the
//!   step report on its own, as Linux's `report_single_step` does.
//! - A syscall redirected by user dispatch gets none: its ABI is foreign.
//! - A denied syscall gets all of them: audit records the error code, the
//!   tracer sees it at the exit stop, and the `svc` did complete.
//! - A killed syscall gets only stage 5: its record (begun at stage 4,
//!   with the `Kill` verdict) is written without a result; its thread
//!   never returns, so there is nothing to stop or step.
//!
//! The kernel drives [`SyscallExit`] as it drives the entry: it carries out
//! each [`ExitStep`] and asks [`SyscallExit::next_step`] for the next, until
//! [`ExitStep::ExitToUser`] (or `Killed`, `Stopped`). A syscall whose
//! result is applied after its record (an IPC's effects, a yield) goes on
//! to stages 6 to 8 with [`SyscallExit::after_record`], and so does one that
//! blocked in dispatch, when it returns (its record, written as it
//! blocked, has no result).
//!
//! [`exit_to_user_mode`] is the one routine every return to user mode takes:
//! syscalls, interrupts, faults and a new thread's first entry. It must be
//! called with interrupts masked, and handlers that unmask them must mask
//! them again before returning; otherwise work raised after the final read
//! of the work word would wait for the next kernel entry.

use crate::enter::{SkipReason, SyscallEntry};
use crate::hooks::ExitLoopHooks;
use crate::work::WorkFlags;

/// Most rounds of the exit-to-user loop per return to user mode.
///
/// Each round runs one handler (`NEED_RESCHED`, then `RSEQ`, then
/// `NOTIFY_RESUME`),
/// then re-reads the work word. Well-behaved handlers clear their bit, so
/// two or three rounds suffice; the cap keeps a buggy handler, or a storm of
/// new work, from holding the CPU in the kernel. Work left at the cap stays set in the TCB:
/// the next return to user mode (at the latest after the next timer tick)
/// handles it, since a non-zero word also keeps the thread off the fast path.
pub const MAX_EXIT_WORK_ROUNDS: usize = 8;

/// What the kernel does next in a syscall's exit work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum ExitStep {
    /// Stage 5: write the syscall's audit record (the one stage 4 began)
    /// with its result as dispatch (or the denial) left it. A killed
    /// syscall's record has no result (`with_result` is `false`).
    WriteAuditRecord {
        /// The syscall returns (it was dispatched or denied); `false` for
        /// one whose thread policy killed.
        with_result: bool,
    },
    /// Stage 6: send the exit stop to the tracer (which may change the
    /// result).
    SendTraceExitStop,
    /// Stage 7: report to the tracer that the stepped `svc` completed.
    ReportSingleStep,
    /// Stage 8: read the work word afresh (dispatch and the stages above
    /// may have raised exit work) and run [`exit_to_user_mode`]; then
    /// return to user mode.
    ExitToUser,
    /// Policy killed the thread. No exit stage runs but the audit record
    /// (stage 5, without a result), nor the exit loop. The caller must
    /// never `eret` to this thread: it tears the thread down, picks
    /// another and returns to it through [`exit_to_user_mode`].
    Killed,
    /// The syscall stopped in its entry work ([`SyscallEntry::Stopped`]):
    /// it has not finished, so nothing runs. The thread waits; its exit
    /// work runs after [`crate::SyscallEnter::resume`] has finished it.
    Stopped,
}

/// Where the exit work of one syscall is (a few bits: inlined).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallExit {
    work: WorkFlags,
    /// The next stage to look at: 5 to 8, or 9 (over); 0 and 1 for a
    /// killed syscall (its record, then the end), 10 for a stopped one.
    stage: u8,
}

impl SyscallExit {
    /// The exit work of a syscall whose entry ended as `entry`
    /// ([`SyscallEntry::Dispatch`] when the arch dispatched without entry
    /// work). `work` is the thread's work word read after dispatch, as
    /// Linux re-reads it: a tracer attached during a blocking syscall gets
    /// its exit stop.
    #[inline(always)]
    pub const fn new(entry: SyscallEntry, work: WorkFlags) -> SyscallExit {
        let stage = match entry {
            SyscallEntry::Killed => 0,
            SyscallEntry::Stopped(_) => 10,
            SyscallEntry::Skipped(SkipReason::Redirected | SkipReason::Emulated) => 8,
            SyscallEntry::Dispatch | SyscallEntry::Skipped(SkipReason::Denied) => 5,
        };
        SyscallExit { work, stage }
    }

    /// Stages 6 to 8 of a syscall whose stage 5 is done: its record was
    /// written before its result was applied (an IPC's effects, a yield),
    /// or it blocked in dispatch and now returns. `work` is read now.
    #[inline(always)]
    pub const fn after_record(entry: SyscallEntry, work: WorkFlags) -> SyscallExit {
        let exit = SyscallExit::new(entry, work);
        if exit.stage == 5 {
            SyscallExit { work, stage: 6 }
        } else {
            exit
        }
    }

    /// The next step (after the last one was carried out).
    #[inline(always)]
    pub fn next_step(&mut self) -> ExitStep {
        let work = self.work;
        match self.stage {
            0 => {
                self.stage = 1;
                if work.contains(WorkFlags::AUDIT) {
                    return ExitStep::WriteAuditRecord { with_result: false };
                }
                return ExitStep::Killed;
            }
            1 => return ExitStep::Killed,
            10 => return ExitStep::Stopped,
            _ => {}
        }
        if self.stage <= 5 {
            self.stage = 6;
            if work.contains(WorkFlags::AUDIT) {
                return ExitStep::WriteAuditRecord { with_result: true };
            }
        }
        if self.stage <= 6 {
            self.stage = 7;
            if work.contains(WorkFlags::TRACE) {
                return ExitStep::SendTraceExitStop;
            }
        }
        if self.stage <= 7 {
            self.stage = 8;
            if work.contains(WorkFlags::SINGLESTEP) && !work.contains(WorkFlags::SYSEMU) {
                return ExitStep::ReportSingleStep;
            }
        }
        self.stage = 9;
        ExitStep::ExitToUser
    }
}

/// Stage 8, the exit-to-user loop: handles the exit bits of `work` (the
/// thread's work word, just read by the caller) and re-reads the word until
/// no exit work is pending or [`MAX_EXIT_WORK_ROUNDS`] rounds have run.
///
/// Returns the exit work left pending: empty unless the cap was hit. With no
/// exit work in `work` it calls no hook at all.
pub fn exit_to_user_mode<H: ExitLoopHooks>(hooks: &mut H, work: WorkFlags) -> WorkFlags {
    let mut pending = work.intersection(WorkFlags::EXIT_WORK);
    for _ in 0..MAX_EXIT_WORK_ROUNDS {
        if pending.is_empty() {
            break;
        }
        // Reschedule first and alone: it may change the current thread, and
        // the next round must read the work of the thread that will return.
        if pending.contains(WorkFlags::NEED_RESCHED) {
            hooks.handle_need_resched();
        } else if pending.contains(WorkFlags::RSEQ) {
            // After a reschedule decision (a thread switched away checks
            // its section when it comes back) and before anything else
            // the thread is told or given.
            hooks.handle_rseq();
        } else if pending.contains(WorkFlags::NOTIFY_RESUME) {
            hooks.handle_notify_resume();
        }
        pending = hooks.current_work().intersection(WorkFlags::EXIT_WORK);
    }
    pending
}
