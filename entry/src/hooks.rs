//! What the arch and the kernel supply to the entry code: one method per stage.
//!
//! [`EntryHooks`] is "arch hooks as a trait", after Linux's
//! `arch_*` hooks with default no-ops: an implementation overrides the
//! stages it supports and inherits a no-op for the others. The crate calls
//! a stage only when its [`WorkFlags`] bit is set, so a hook never has to
//! check its own bit. Stages that can change control flow return a small
//! enum; the crate, not the hook, decides what happens next.
//!
//! Two methods have no default on purpose: [`EntryHooks::policy`], because a
//! forgotten override must not fail open, and [`EntryHooks::current_work`],
//! because the exit loop must see work raised while it runs.

use crate::regs::SyscallRegisters;
use crate::work::WorkFlags;

/// Outcome of stage 1, user dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserDispatch {
    /// The PC is in the allowed range: the syscall proceeds.
    Continue,
    /// The PC is outside the allowed range. The hook has already rewritten
    /// the saved context to enter the thread's handler; the syscall is not
    /// executed and no other stage runs.
    Redirected,
}

/// Outcome of stage 2, the trace entry stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEntry {
    /// Run the syscall, with whatever number and arguments the tracer left.
    Continue,
    /// Do not run the syscall: the tracer has written the result (SYSEMU).
    Skip,
    /// The tracer has not answered yet: the syscall stops here
    /// ([`crate::SyscallEntry::Stopped`]) until it has, and stage 2 then
    /// runs again with the answer.
    Stop,
}

/// A decided policy verdict. Audit records it (stage 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// Dispatch the syscall.
    Allow,
    /// Do not dispatch; the hook has written the result (an error code,
    /// or the result a policy server gave in the syscall's place).
    Deny,
    /// Do not dispatch and never return to this thread.
    Kill,
}

/// Outcome of stage 3, the policy check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyDecision {
    /// The verdict is known.
    Verdict(PolicyVerdict),
    /// A policy server must decide: the syscall stops here
    /// ([`crate::SyscallEntry::Stopped`]) until it has answered, and stage
    /// 3 then runs again with the answer.
    Ask,
}

/// Outcome of stage 4, the audit entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditEntry {
    /// The syscall's record is under way: go on.
    Continue,
    /// The audit ring has no room and the thread must not lose a record
    /// (lossless audit): the syscall stops here
    /// ([`crate::SyscallEntry::Stopped`]) until there is room, and stage 4
    /// then runs again with the same verdict.
    Wait,
}

/// The arch and kernel side of the syscall path (see the module docs).
///
/// Register-taking methods get the saved user context of the thread making
/// the syscall. The exit-to-user methods take none: a reschedule may change
/// which thread returns to user mode, so they act on whichever thread is
/// current when they run.
pub trait EntryHooks {
    /// The arch's saved user context.
    type Regs: SyscallRegisters;

    /// Stage 1 (`USER_DISPATCH`): redirect a syscall made outside the
    /// thread's allowed PC range to its user handler.
    fn user_dispatch(&mut self, _regs: &mut Self::Regs) -> UserDispatch {
        UserDispatch::Continue
    }

    /// Stage 2 (`TRACE` or `SYSEMU`): the tracer's answer to the entry
    /// stop, or `Stop` while it has none. The tracer may rewrite the
    /// number, arguments and result. Under `SYSEMU` the syscall is skipped
    /// whatever the answer.
    fn trace_entry(&mut self, _regs: &mut Self::Regs) -> TraceEntry {
        TraceEntry::Continue
    }

    /// Stage 3 (`POLICY`): the verdict for the syscall in `regs`, or `Ask`
    /// while a policy server has to give it. On `Deny` the hook writes the
    /// result with [`SyscallRegisters::set_return_value`].
    fn policy(&mut self, regs: &mut Self::Regs) -> PolicyDecision;

    /// Stage 4 (`AUDIT`): start the record of the syscall and the policy
    /// verdict (`Allow` when no policy is attached), or `Wait` while there
    /// is no room for it.
    fn audit_entry(&mut self, _regs: &Self::Regs, _verdict: PolicyVerdict) -> AuditEntry {
        AuditEntry::Continue
    }

    /// Stage 5 (`AUDIT`): record the result.
    fn audit_exit(&mut self, _regs: &Self::Regs, _result: u64) {}

    /// Stage 6 (`TRACE`): report the exit stop; the tracer may change the result.
    fn trace_exit(&mut self, _regs: &mut Self::Regs) {}

    /// Stage 7 (`SINGLESTEP`): report that the stepped `svc` completed.
    fn single_step(&mut self, _regs: &mut Self::Regs) {}

    /// Stage 8: the current thread's work word, read afresh (handlers and
    /// interrupts may have set bits since the caller last read it).
    fn current_work(&mut self) -> WorkFlags;

    /// Stage 8 (`NEED_RESCHED`): run the scheduler. Must clear the bit of
    /// the thread it leaves current, or the loop only ends at its cap.
    fn handle_need_resched(&mut self) {}

    /// Stage 8 (`NOTIFY_RESUME`): deliver pending notification-like work to
    /// the current thread's user context, then clear the bit.
    fn handle_notify_resume(&mut self) {}
}
