//! Syscall exit work (stages 5 to 7) and the exit-to-user loop (stage 8).
//!
//! | stage | runs when                                  | may                 |
//! |-------|--------------------------------------------|---------------------|
//! | 5     | `AUDIT`, syscall dispatched or denied      | record the result   |
//! | 6     | `TRACE`, syscall dispatched or denied      | change the result   |
//! | 7     | `SINGLESTEP` without `SYSEMU`, same        | report the step     |
//! | 8     | always; handlers per `EXIT_WORK` bit       | reschedule, deliver |
//!
//! Which syscalls get stages 5 to 7 (the Linux arm64 lessons):
//! - A syscall the tracer skipped (SYSEMU) gets none of them: its audit entry
//!   never ran, the tracer already saw it at the entry stop, and a step
//!   report for it would be spurious. `SYSEMU` in `work` also suppresses the
//!   step report on its own, as Linux's `report_single_step` does.
//! - A syscall redirected by user dispatch gets none: its ABI is foreign.
//! - A denied syscall gets all of them: audit records the error code, the
//!   tracer sees it at the exit stop, and the `svc` did complete.
//!
//! [`exit_to_user_mode`] is the one routine every return to user mode takes:
//! syscalls, interrupts, faults and a new thread's first entry. It must be
//! called with interrupts masked, and handlers that unmask them must mask
//! them again before returning; otherwise work raised after the final read
//! of the work word would wait for the next kernel entry.

use crate::enter::{SkipReason, SyscallEntry};
use crate::hooks::EntryHooks;
use crate::regs::SyscallRegisters;
use crate::work::WorkFlags;

/// Most rounds of the exit-to-user loop per return to user mode.
///
/// Each round runs one handler (`NEED_RESCHED` before `NOTIFY_RESUME`),
/// then re-reads the work word. Well-behaved handlers clear their bit, so
/// two or three rounds suffice; the cap keeps a buggy handler, or a storm of
/// new work, from holding the CPU in the kernel. Work left at the cap stays set in the TCB:
/// the next return to user mode (at the latest after the next timer tick)
/// handles it, since a non-zero word also keeps the thread off the fast path.
pub const MAX_EXIT_WORK_ROUNDS: usize = 8;

/// How a thread leaves [`syscall_exit_to_user_mode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum UserReturn {
    /// Return to user mode (`eret`) with the saved context as the stages
    /// left it. `left_pending` is empty unless the exit loop hit its cap.
    Resume {
        /// Exit work still set after [`MAX_EXIT_WORK_ROUNDS`] rounds.
        left_pending: WorkFlags,
    },
    /// Policy killed the thread. No exit stage ran and the exit loop did not
    /// run. The caller must never `eret` to this thread: it tears the thread
    /// down, picks another and returns to it through [`exit_to_user_mode`].
    Killed,
    /// The syscall stopped in its entry work ([`SyscallEntry::Stopped`]):
    /// it has not finished, so nothing ran. The thread waits; its exit
    /// work runs after [`crate::syscall_resume_entry`] has finished it.
    Stopped,
}

/// Runs the syscall exit work after dispatch (or after a skip), then the
/// exit-to-user loop.
///
/// `entry` is what [`crate::syscall_enter_from_user_mode`] returned
/// ([`SyscallEntry::Dispatch`] when the arch dispatched without entry work).
/// `work` is the thread's work word read after dispatch, as Linux re-reads
/// it: a tracer attached during a blocking syscall gets its exit stop.
pub fn syscall_exit_to_user_mode<H: EntryHooks>(
    hooks: &mut H,
    regs: &mut H::Regs,
    entry: SyscallEntry,
    work: WorkFlags,
) -> UserReturn {
    match entry {
        SyscallEntry::Killed => return UserReturn::Killed,
        SyscallEntry::Stopped(_) => return UserReturn::Stopped,
        SyscallEntry::Skipped(SkipReason::Redirected | SkipReason::Emulated) => {}
        SyscallEntry::Dispatch | SyscallEntry::Skipped(SkipReason::Denied) => {
            syscall_exit_work(hooks, regs, work);
        }
    }
    // Dispatch and the stages above may have raised exit work: read afresh.
    let current = hooks.current_work();
    UserReturn::Resume {
        left_pending: exit_to_user_mode(hooks, current),
    }
}

/// Stages 5 to 7 for a syscall that was dispatched or denied.
fn syscall_exit_work<H: EntryHooks>(hooks: &mut H, regs: &mut H::Regs, work: WorkFlags) {
    if work.contains(WorkFlags::AUDIT) {
        let result = regs.return_value();
        hooks.audit_exit(regs, result);
    }
    if work.contains(WorkFlags::TRACE) {
        hooks.trace_exit(regs);
    }
    if work.contains(WorkFlags::SINGLESTEP) && !work.contains(WorkFlags::SYSEMU) {
        hooks.single_step(regs);
    }
}

/// Stage 8, the exit-to-user loop: handles the exit bits of `work` (the
/// thread's work word, just read by the caller) and re-reads the word until
/// no exit work is pending or [`MAX_EXIT_WORK_ROUNDS`] rounds have run.
///
/// Returns the exit work left pending: empty unless the cap was hit. With no
/// exit work in `work` it calls no hook at all.
pub fn exit_to_user_mode<H: EntryHooks>(hooks: &mut H, work: WorkFlags) -> WorkFlags {
    let mut pending = work.intersection(WorkFlags::EXIT_WORK);
    for _ in 0..MAX_EXIT_WORK_ROUNDS {
        if pending.is_empty() {
            break;
        }
        // Reschedule first and alone: it may change the current thread, and
        // the next round must read the work of the thread that will return.
        if pending.contains(WorkFlags::NEED_RESCHED) {
            hooks.handle_need_resched();
        } else if pending.contains(WorkFlags::NOTIFY_RESUME) {
            hooks.handle_notify_resume();
        }
        pending = hooks.current_work().intersection(WorkFlags::EXIT_WORK);
    }
    pending
}
