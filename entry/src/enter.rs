//! Syscall entry work: stages 1 to 4, in the one order they run.
//!
//! | stage | runs when                | may                                     |
//! |-------|--------------------------|-----------------------------------------|
//! | 1     | `USER_DISPATCH`          | redirect: nothing else runs             |
//! | 2     | `TRACE` or `SYSEMU`      | edit regs; skip (always under `SYSEMU`) |
//! | 3     | `POLICY`                 | deny (errno written) or kill            |
//! | 4     | `AUDIT`                  | record the syscall and the verdict      |
//!
//! Why this order (Linux's `syscall_trace_enter`): user dispatch comes first
//! because a redirected syscall may follow a foreign ABI that no other stage
//! understands. The tracer stops before policy so that a tracer cannot edit
//! its way past a verdict: policy checks the registers as the tracer left
//! them. Audit comes last so it records what will actually happen,
//! denials included. A syscall the tracer skipped never runs, so policy and
//! audit have nothing to judge or record.

use crate::hooks::{EntryHooks, PolicyVerdict, TraceEntry, UserDispatch};
use crate::work::WorkFlags;

/// Why a syscall was not dispatched although the thread returns to user mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// User dispatch sent the thread to its handler (stage 1).
    Redirected,
    /// The tracer skipped the syscall and set its result (stage 2, SYSEMU).
    Emulated,
    /// Policy denied the syscall and set the error code (stage 3).
    Denied,
}

/// What the caller does after [`syscall_enter_from_user_mode`]; it passes
/// the value on to [`crate::syscall_exit_to_user_mode`] unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum SyscallEntry {
    /// Dispatch the syscall in the saved registers.
    Dispatch,
    /// Do not dispatch; the result is already in the saved registers.
    Skipped(SkipReason),
    /// Policy killed the thread: do not dispatch, never return to it.
    Killed,
}

/// Runs the entry work selected by `work` on the syscall saved in `regs`.
///
/// Called by the arch slow path when `work` intersects
/// [`WorkFlags::SYSCALL_WORK`]; bits outside [`WorkFlags::ENTRY_WORK`] are
/// ignored here. Stops at the first stage that ends the syscall.
pub fn syscall_enter_from_user_mode<H: EntryHooks>(
    hooks: &mut H,
    regs: &mut H::Regs,
    work: WorkFlags,
) -> SyscallEntry {
    if work.contains(WorkFlags::USER_DISPATCH)
        && hooks.user_dispatch(regs) == UserDispatch::Redirected
    {
        return SyscallEntry::Skipped(SkipReason::Redirected);
    }

    if work.intersects(WorkFlags::TRACE | WorkFlags::SYSEMU) {
        let stop = hooks.trace_entry(regs);
        if stop == TraceEntry::Skip || work.contains(WorkFlags::SYSEMU) {
            return SyscallEntry::Skipped(SkipReason::Emulated);
        }
    }

    // Policy and audit read `regs` now, after any edit made at the stop.
    let verdict = if work.contains(WorkFlags::POLICY) {
        hooks.policy(regs)
    } else {
        PolicyVerdict::Allow
    };

    if work.contains(WorkFlags::AUDIT) {
        hooks.audit_entry(regs, verdict);
    }

    match verdict {
        PolicyVerdict::Allow => SyscallEntry::Dispatch,
        PolicyVerdict::Deny => SyscallEntry::Skipped(SkipReason::Denied),
        PolicyVerdict::Kill => SyscallEntry::Killed,
    }
}
