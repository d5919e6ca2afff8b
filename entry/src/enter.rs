//! Syscall entry work: stages 1 to 4, in the one order they run, as a
//! state machine that says what to do next.
//!
//! | stage | runs when                | asks the kernel        | then may                               |
//! |-------|--------------------------|------------------------|----------------------------------------|
//! | 1     | `USER_DISPATCH`          | redirect?              | redirect: nothing else runs            |
//! | 2     | `TRACE` or `SYSEMU`      | the tracer's answer    | send the entry stop; skip (`SYSEMU`)   |
//! | 3     | `POLICY`                 | the verdict            | ask a policy server; deny; kill        |
//! | 4     | `AUDIT`                  | room in the ring?      | wait for room; write the entry record  |
//!
//! Why this order (Linux's `syscall_trace_enter`): user dispatch comes first
//! because a redirected syscall may follow a foreign ABI that no other stage
//! understands. The tracer stops before policy so that a tracer cannot edit
//! its way past a verdict: policy checks the registers as the tracer left
//! them. Audit comes last so it records what will actually happen,
//! denials included. A syscall the tracer skipped never runs, so policy and
//! audit have nothing to judge or record.
//!
//! The kernel drives [`SyscallEnter`]: [`SyscallEnter::start`] gives the
//! first [`EntryStep`]; a question step is answered with the method it
//! names, which gives the next step; an end step ([`EntryStep::entry`] is
//! `Some`) is carried out and ends the pass. The machine holds only the
//! work word: the verdict travels in the steps, so every step is a few
//! tests of one word and inlines into the kernel's loop.
//!
//! Stages 2, 3 and 4 may have to wait for user space (the tracer's answer,
//! a policy server's verdict, room in a lossless audit ring). The kernel
//! never blocks on its stack, so such a stage ends the pass with a step
//! that sends the stop and leaves the syscall [`SyscallEntry::Stopped`];
//! the kernel keeps the syscall's registers as they were judged so far,
//! and once the answer has come [`SyscallEnter::resume`] goes on from that
//! stage. The `svc` is never executed again, so nothing the thread's
//! registers hold meanwhile, and no stage before the stop, can change
//! what runs.

use crate::hooks::{AuditRoom, PolicyDecision, PolicyVerdict, TraceEntry, UserDispatch};
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
/// [`SyscallEnter::resume`] takes it back once the answer has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryStop {
    /// Stage 2: the tracer has the entry stop.
    TraceEntry,
    /// Stage 3: a policy server has the syscall.
    Policy,
    /// Stage 4: there is no room for the audit record; the verdict stands.
    AuditEntry(PolicyVerdict),
}

/// How the entry work of a syscall ended; the kernel hands it on to
/// [`crate::SyscallExit::new`] unchanged.
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
    /// [`SyscallEnter::resume`] with this stop on them. Stages before it
    /// never run again.
    Stopped(EntryStop),
}

/// What the kernel does next in a syscall's entry work.
///
/// The first five are questions: the kernel works out the answer (it may
/// read user memory, the filters, the ring) and gives it to the
/// [`SyscallEnter`] method the variant names, which returns the next step.
/// The others end the pass: the kernel carries the step out, and
/// [`EntryStep::entry`] says how the entry ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum EntryStep {
    /// Stage 1: is the syscall to be redirected to the thread's user
    /// handler? Answer with [`SyscallEnter::user_dispatch`].
    UserDispatch,
    /// Stage 2: the tracer's answer to the entry stop (`Stop` while it has
    /// none; the tracer may rewrite the number, arguments and result).
    /// Answer with [`SyscallEnter::trace_entry`].
    TraceEntry,
    /// Stage 3: the verdict of the thread's policy on the registers as
    /// they are now. On `Deny` the kernel writes the result. Answer with
    /// [`SyscallEnter::policy`].
    Policy,
    /// Stage 4: is there room for the record (a lossless ring that is
    /// full has none)? Answer with [`SyscallEnter::audit_room`].
    AuditRoom(PolicyVerdict),
    /// Stage 4: write the entry record: the syscall as judged and the
    /// verdict (the exit record adds the result). Then
    /// [`SyscallEnter::audit_entry_written`].
    WriteAuditEntry(PolicyVerdict),
    /// Stage 1 redirected the syscall: save the context and enter the
    /// thread's handler. Ends as [`SkipReason::Redirected`].
    Redirect,
    /// Stage 2: send the entry stop to the tracer; the syscall stops
    /// ([`EntryStop::TraceEntry`]).
    SendTraceEntryStop,
    /// Stage 3: ask the policy server of the filter at this position of
    /// the thread's stack; the syscall stops ([`EntryStop::Policy`]).
    AskPolicyServer {
        /// The filter whose `Notify` asks.
        filter: u8,
    },
    /// Stage 4: wait for room in the ring; the syscall stops
    /// ([`EntryStop::AuditEntry`]) with the verdict given.
    WaitForAuditRoom(PolicyVerdict),
    /// Dispatch the syscall.
    Dispatch,
    /// Do not dispatch; the result is in the saved registers.
    Skip(SkipReason),
    /// Do not dispatch and never return to this thread.
    Kill,
}

impl EntryStep {
    /// How the entry ended, for a step that ends it (`None` for a question).
    #[inline(always)]
    pub const fn entry(self) -> Option<SyscallEntry> {
        Some(match self {
            EntryStep::UserDispatch
            | EntryStep::TraceEntry
            | EntryStep::Policy
            | EntryStep::AuditRoom(_)
            | EntryStep::WriteAuditEntry(_) => return None,
            EntryStep::Redirect => SyscallEntry::Skipped(SkipReason::Redirected),
            EntryStep::SendTraceEntryStop => SyscallEntry::Stopped(EntryStop::TraceEntry),
            EntryStep::AskPolicyServer { .. } => SyscallEntry::Stopped(EntryStop::Policy),
            EntryStep::WaitForAuditRoom(verdict) => {
                SyscallEntry::Stopped(EntryStop::AuditEntry(verdict))
            }
            EntryStep::Dispatch => SyscallEntry::Dispatch,
            EntryStep::Skip(reason) => SyscallEntry::Skipped(reason),
            EntryStep::Kill => SyscallEntry::Killed,
        })
    }
}

/// The entry work of one syscall: which stages its work word selects,
/// and the step after each answer. (Every method is inlined: each is a
/// few tests of the work word, and a call per stage cost a slow-path
/// syscall more than the stage itself.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallEnter {
    work: WorkFlags,
}

impl SyscallEnter {
    /// The entry work of a new syscall of a thread whose work word is
    /// `work` (bits outside [`WorkFlags::ENTRY_WORK`] are ignored), and its
    /// first step.
    #[inline(always)]
    pub fn start(work: WorkFlags) -> (SyscallEnter, EntryStep) {
        let enter = SyscallEnter { work };
        let step = if work.contains(WorkFlags::USER_DISPATCH) {
            EntryStep::UserDispatch
        } else {
            enter.at_trace_entry()
        };
        (enter, step)
    }

    /// Goes on with a syscall that stopped at `stop`, whose answer has
    /// come: the stopped stage's question again (the kernel now has the
    /// answer), then the stages after it, exactly as for a syscall that
    /// did not stop. The kernel must answer on the registers as they were
    /// at the stop (as the answer changed them), not on whatever the thread
    /// holds meanwhile.
    #[inline(always)]
    pub fn resume(work: WorkFlags, stop: EntryStop) -> (SyscallEnter, EntryStep) {
        let enter = SyscallEnter { work };
        let step = match stop {
            EntryStop::TraceEntry => EntryStep::TraceEntry,
            EntryStop::Policy => EntryStep::Policy,
            EntryStop::AuditEntry(verdict) => EntryStep::AuditRoom(verdict),
        };
        (enter, step)
    }

    /// The work word the stages are selected by.
    #[inline(always)]
    pub const fn work(self) -> WorkFlags {
        self.work
    }

    /// Stage 1's answer.
    #[inline(always)]
    pub fn user_dispatch(self, answer: UserDispatch) -> EntryStep {
        match answer {
            UserDispatch::Redirected => EntryStep::Redirect,
            UserDispatch::Continue => self.at_trace_entry(),
        }
    }

    /// Stage 2's answer.
    #[inline(always)]
    pub fn trace_entry(self, answer: TraceEntry) -> EntryStep {
        match answer {
            TraceEntry::Stop => EntryStep::SendTraceEntryStop,
            TraceEntry::Skip => EntryStep::Skip(SkipReason::Emulated),
            TraceEntry::Continue if self.work.contains(WorkFlags::SYSEMU) => {
                EntryStep::Skip(SkipReason::Emulated)
            }
            TraceEntry::Continue => self.at_policy(),
        }
    }

    /// Stage 3's answer.
    #[inline(always)]
    pub fn policy(self, decision: PolicyDecision) -> EntryStep {
        match decision {
            PolicyDecision::Verdict(verdict) => self.at_audit_entry(verdict),
            PolicyDecision::Ask { filter } => EntryStep::AskPolicyServer { filter },
        }
    }

    /// Stage 4's answer (`verdict` is the one [`EntryStep::AuditRoom`]
    /// carried).
    #[inline(always)]
    pub fn audit_room(self, verdict: PolicyVerdict, room: AuditRoom) -> EntryStep {
        match room {
            AuditRoom::Room => EntryStep::WriteAuditEntry(verdict),
            AuditRoom::Full => EntryStep::WaitForAuditRoom(verdict),
        }
    }

    /// Stage 4's record is written: what the verdict means.
    #[inline(always)]
    pub fn audit_entry_written(self, verdict: PolicyVerdict) -> EntryStep {
        Self::decided(verdict)
    }

    /// Stages 2 to 4.
    #[inline(always)]
    fn at_trace_entry(self) -> EntryStep {
        if self.work.intersects(WorkFlags::TRACE | WorkFlags::SYSEMU) {
            EntryStep::TraceEntry
        } else {
            self.at_policy()
        }
    }

    /// Stages 3 and 4.
    #[inline(always)]
    fn at_policy(self) -> EntryStep {
        if self.work.contains(WorkFlags::POLICY) {
            EntryStep::Policy
        } else {
            self.at_audit_entry(PolicyVerdict::Allow)
        }
    }

    /// Stage 4, then what the verdict means.
    #[inline(always)]
    fn at_audit_entry(self, verdict: PolicyVerdict) -> EntryStep {
        if self.work.contains(WorkFlags::AUDIT) {
            EntryStep::AuditRoom(verdict)
        } else {
            Self::decided(verdict)
        }
    }

    #[inline(always)]
    const fn decided(verdict: PolicyVerdict) -> EntryStep {
        match verdict {
            PolicyVerdict::Allow => EntryStep::Dispatch,
            PolicyVerdict::Deny => EntryStep::Skip(SkipReason::Denied),
            PolicyVerdict::Kill => EntryStep::Kill,
        }
    }
}
