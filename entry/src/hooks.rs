//! The answers the kernel gives the entry work's questions, and the hooks
//! of the exit-to-user loop.
//!
//! The entry and exit work are state machines ([`crate::SyscallEnter`],
//! [`crate::SyscallExit`]): they say what to do next and the kernel
//! carries it out, so the order in which the kernel acts is theirs. A
//! question step (user dispatch? the tracer's answer? the verdict? room
//! in the ring?) is answered with one of the small enums here; the
//! crate, not the kernel, decides what happens next.
//!
//! The exit-to-user loop (stage 8) runs on every return to user mode, not
//! only after syscalls, and its handlers may change the current thread;
//! it keeps Linux's shape of arch hooks ([`ExitLoopHooks`]), with
//! `current_work` required because the loop must see work raised while
//! it runs.

use crate::work::WorkFlags;

/// Answer to stage 1, user dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserDispatch {
    /// The PC is in the allowed range (or the selector allows): the
    /// syscall proceeds.
    Continue,
    /// The syscall goes to the thread's handler: the next step is
    /// [`crate::EntryStep::Redirect`], and no other stage runs.
    Redirected,
}

/// Answer to stage 2, the trace entry stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEntry {
    /// Run the syscall, with whatever number and arguments the tracer left.
    Continue,
    /// Do not run the syscall: the tracer has written the result (SYSEMU).
    Skip,
    /// The tracer has not been asked yet: the next step sends the entry
    /// stop ([`crate::EntryStep::SendTraceEntryStop`]) and the syscall
    /// stops until it has answered; stage 2 is then asked again.
    Stop,
}

/// A decided policy verdict. Audit records it (stage 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// Dispatch the syscall.
    Allow,
    /// Do not dispatch; the kernel has written the result (an error code,
    /// or the result a policy server gave in the syscall's place).
    Deny,
    /// Do not dispatch and never return to this thread.
    Kill,
}

/// Answer to stage 3, the policy check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyDecision {
    /// The verdict is known.
    Verdict(PolicyVerdict),
    /// The policy server of the filter at position `filter` of the
    /// thread's stack must decide: the next step asks it
    /// ([`crate::EntryStep::AskPolicyServer`]) and the syscall stops until
    /// it has answered; stage 3 is then asked again.
    Ask {
        /// The asking filter's position.
        filter: u8,
    },
}

/// Answer to stage 4's question: is there room for the record?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditRoom {
    /// There is room (or the ring is lossy, which drops and counts
    /// instead): the next step writes the entry record.
    Room,
    /// A lossless ring is full: the next step waits for room
    /// ([`crate::EntryStep::WaitForAuditRoom`]), before the syscall runs;
    /// stage 4 is then asked again with the same verdict.
    Full,
}

/// The kernel side of the exit-to-user loop (stage 8). The methods take
/// no registers: a reschedule may change which thread returns to user
/// mode, so they act on whichever thread is current when they run.
pub trait ExitLoopHooks {
    /// The current thread's work word, read afresh (handlers and
    /// interrupts may have set bits since the caller last read it).
    fn current_work(&mut self) -> WorkFlags;

    /// `NEED_RESCHED`: run the scheduler. Must clear the bit of the thread
    /// it leaves current, or the loop only ends at its cap.
    fn handle_need_resched(&mut self) {}

    /// `RSEQ`: check the current thread's restartable sequence
    /// ([`crate::rseq::check_on_exit`]) before anything is reported of it,
    /// then clear the bit (a kernel that carries the check out later, once
    /// a stopped syscall has gone on, takes the bit out of what
    /// `current_work` returns once it has decided to).
    fn handle_rseq(&mut self) {}

    /// `NOTIFY_RESUME`: deliver pending notification-like work to the
    /// current thread's user context, then clear the bit.
    fn handle_notify_resume(&mut self) {}
}
