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
//!
//! Stages 2, 3 and 4 may have to wait for user space (the tracer's answer,
//! a policy server's verdict, room in a lossless audit ring). The kernel
//! never blocks on its stack, so such a stage ends the pass with
//! [`SyscallEntry::Stopped`]; the kernel keeps the syscall's registers as
//! they were judged so far, and once the answer has come
//! [`syscall_resume_entry`] goes on from that stage. The `svc` is never
//! executed again, so nothing the thread's registers hold meanwhile, and
//! no stage before the stop, can change what runs.

use crate::hooks::{
    AuditEntry, EntryHooks, PolicyDecision, PolicyVerdict, TraceEntry, UserDispatch,
};
use crate::work::WorkFlags;

/// Why a syscall was not dispatched although the thread returns to user mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// User dispatch sent the thread to its handler (stage 1).
    Redirected,
    /// The tracer skipped the syscall and set its result (stage 2, SYSEMU).
    Emulated,
    /// Policy denied the syscall and set its result (stage 3).
    Denied,
}

/// The stage a stopped syscall waits at, and what it needs to go on with:
/// [`syscall_resume_entry`] takes it back once the answer has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryStop {
    /// Stage 2: the tracer has the entry stop.
    TraceEntry,
    /// Stage 3: a policy server has the syscall.
    Policy,
    /// Stage 4: there is no room for the audit record; the verdict stands.
    AuditEntry(PolicyVerdict),
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
    /// A stage waits for an answer from user space (a tracer, a policy
    /// server, room in an audit ring). The syscall neither runs nor
    /// returns: the caller keeps the registers as they are now (the call
    /// as judged so far), and once the answer has come runs
    /// [`syscall_resume_entry`] with this stop on them. Stages before it
    /// never run again.
    Stopped(EntryStop),
}

/// Runs the entry work selected by `work` on the syscall saved in `regs`.
///
/// Called by the arch slow path when `work` intersects
/// [`WorkFlags::SYSCALL_WORK`]; bits outside [`WorkFlags::ENTRY_WORK`] are
/// ignored here. Stops at the first stage that ends the syscall, or that
/// has to wait ([`SyscallEntry::Stopped`]).
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
    from_trace_entry(hooks, regs, work)
}

/// Goes on with a syscall that stopped at `stop`, whose answer has come:
/// runs the stopped stage again (its hook now has the answer) and the
/// stages after it, in order, exactly as [`syscall_enter_from_user_mode`]
/// would have. `regs` must be the registers as they were at the stop (as
/// the answer changed them), not whatever the thread holds meanwhile.
/// (Out of line: a stopped syscall is the rare one.)
#[inline(never)]
pub fn syscall_resume_entry<H: EntryHooks>(
    hooks: &mut H,
    regs: &mut H::Regs,
    work: WorkFlags,
    stop: EntryStop,
) -> SyscallEntry {
    match stop {
        EntryStop::TraceEntry => from_trace_entry(hooks, regs, work),
        EntryStop::Policy => from_policy(hooks, regs, work),
        EntryStop::AuditEntry(verdict) => from_audit_entry(hooks, regs, work, verdict),
    }
}

/// Stages 2 to 4. (Inlined, like the next two: each is a few tests of
/// the work word around one hook, and a call per stage cost a slow-path
/// syscall more than the stage itself.)
#[inline(always)]
fn from_trace_entry<H: EntryHooks>(
    hooks: &mut H,
    regs: &mut H::Regs,
    work: WorkFlags,
) -> SyscallEntry {
    if work.intersects(WorkFlags::TRACE | WorkFlags::SYSEMU) {
        match hooks.trace_entry(regs) {
            TraceEntry::Stop => return SyscallEntry::Stopped(EntryStop::TraceEntry),
            TraceEntry::Skip => return SyscallEntry::Skipped(SkipReason::Emulated),
            TraceEntry::Continue if work.contains(WorkFlags::SYSEMU) => {
                return SyscallEntry::Skipped(SkipReason::Emulated)
            }
            TraceEntry::Continue => {}
        }
    }
    from_policy(hooks, regs, work)
}

/// Stages 3 and 4.
#[inline(always)]
fn from_policy<H: EntryHooks>(hooks: &mut H, regs: &mut H::Regs, work: WorkFlags) -> SyscallEntry {
    // Policy and audit read `regs` now, after any edit made at the stop.
    let verdict = if work.contains(WorkFlags::POLICY) {
        match hooks.policy(regs) {
            PolicyDecision::Verdict(verdict) => verdict,
            PolicyDecision::Ask => return SyscallEntry::Stopped(EntryStop::Policy),
        }
    } else {
        PolicyVerdict::Allow
    };
    from_audit_entry(hooks, regs, work, verdict)
}

/// Stage 4, then what the verdict means.
#[inline(always)]
fn from_audit_entry<H: EntryHooks>(
    hooks: &mut H,
    regs: &mut H::Regs,
    work: WorkFlags,
    verdict: PolicyVerdict,
) -> SyscallEntry {
    if work.contains(WorkFlags::AUDIT) && hooks.audit_entry(regs, verdict) == AuditEntry::Wait {
        return SyscallEntry::Stopped(EntryStop::AuditEntry(verdict));
    }
    match verdict {
        PolicyVerdict::Allow => SyscallEntry::Dispatch,
        PolicyVerdict::Deny => SyscallEntry::Skipped(SkipReason::Denied),
        PolicyVerdict::Kill => SyscallEntry::Killed,
    }
}
