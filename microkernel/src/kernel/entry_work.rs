//! The generic entry around a syscall with entry work: the entry stages
//! (`entry` crate) run through `SyscallWork`, a call that stops waits
//! for its answer, and the exit stages run once it is done.

use crate::kernel::dispatch::Dispatched;
use crate::kernel::{Kernel, KILLED_BY_POLICY};
use crate::platform::Platform;
use crate::stopped_call::{
    CallStop, EntryOutcome, PolicyAnswer, Progress, Resumed, StopAnswer, StoppedCall,
};
use crate::syscall::{self, SyscallResult};
use crate::thread::{Thread, ThreadId, ThreadState, TraceProgress};
use abi::policy::Action;
use abi::trace::StopKind;
use abi::ErrorCode;
use arch::context::UserContext;
use entry::{
    AuditEntry, EntryHooks, PolicyDecision, PolicyVerdict, SyscallEntry, TraceEntry, UserDispatch,
    WorkFlags,
};

use crate::kernel::forward::policy::PolicyCheck;

/// The syscall entry and exit work of one thread: its work word, what
/// the policy stage needs, what a stopped call goes on with, and the
/// trace stops the exit stages owe (the kernel sends them on the way back
/// to EL0: a stop blocks the thread).
pub(in crate::kernel) struct SyscallWork<'a> {
    pub work: &'a mut WorkFlags,
    pub policy: Option<PolicyCheck<'a>>,
    pub outcome: EntryOutcome,
    /// The answer a stopped call goes on with (`None`: a new syscall, or
    /// one past the stage its answer was for).
    pub answer: Option<StopAnswer>,
    /// Filters whose `Notify` a server allowed (see `StoppedCall::waived`).
    pub waived: u8,
    /// A policy server decided this call.
    pub forwarded: bool,
    /// Stops the exit stages asked for (`TraceProgress::OWE_*`).
    pub owed: u8,
    /// Stage 1's answer, worked out before the entry code ran (it reads
    /// user memory): `Some(flags)` redirects.
    pub redirect: Option<u64>,
    /// Stage 4's answer, worked out before the entry code ran (it reads
    /// the ring): lossless audit into a full ring waits.
    pub audit_full: bool,
    /// `x0` and `x8` as the policy stage saw them, before a refusal wrote
    /// its result there (what the audit record and the exit stop show).
    pub checked: Option<(u64, u64)>,
}

impl<'a> SyscallWork<'a> {
    /// The hooks for the exit stages only.
    pub fn exit_only(work: &'a mut WorkFlags) -> SyscallWork<'a> {
        SyscallWork {
            work,
            policy: None,
            outcome: EntryOutcome::Run,
            answer: None,
            waived: 0,
            forwarded: false,
            owed: 0,
            redirect: None,
            audit_full: false,
            checked: None,
        }
    }
}

impl SyscallWork<'_> {
    /// Do not run the syscall: `result` in `x0`.
    fn refuse(
        &mut self,
        regs: &mut UserContext,
        result: u64,
        outcome: EntryOutcome,
    ) -> PolicyDecision {
        regs.x[0] = result;
        self.outcome = outcome;
        PolicyDecision::Verdict(PolicyVerdict::Deny)
    }

    /// A policy server decided the call (anything but "allow").
    #[cold]
    #[inline(never)]
    fn server_decided(&mut self, regs: &mut UserContext, answer: PolicyAnswer) -> PolicyDecision {
        match answer {
            PolicyAnswer::Refuse(code) => self.refuse(regs, code.raw(), EntryOutcome::Refused),
            PolicyAnswer::Emulate { x0, x8 } => {
                regs.x[8] = x8;
                self.refuse(regs, x0, EntryOutcome::Emulated)
            }
            PolicyAnswer::Kill => {
                self.outcome = EntryOutcome::Kill;
                PolicyDecision::Verdict(PolicyVerdict::Kill)
            }
            PolicyAnswer::Allow => PolicyDecision::Verdict(PolicyVerdict::Allow),
        }
    }
}

impl EntryHooks for SyscallWork<'_> {
    type Regs = UserContext;

    fn user_dispatch(&mut self, _regs: &mut UserContext) -> UserDispatch {
        match self.redirect {
            // The kernel saves the context and enters the handler once the
            // entry code has returned (`Kernel::redirect_to_handler`).
            Some(flags) => {
                self.outcome = EntryOutcome::Redirect { flags };
                UserDispatch::Redirected
            }
            None => UserDispatch::Continue,
        }
    }

    fn trace_entry(&mut self, _regs: &mut UserContext) -> TraceEntry {
        match self.answer.take() {
            // The tracer's changes are in the registers already.
            Some(StopAnswer::TraceContinue) => TraceEntry::Continue,
            Some(StopAnswer::TraceSkip) => TraceEntry::Skip,
            // Not answered yet: the stop blocks the thread, and the kernel
            // sends it once the entry code has returned.
            _ => TraceEntry::Stop,
        }
    }

    fn trace_exit(&mut self, _regs: &mut UserContext) {
        self.owed |= TraceProgress::OWE_EXIT;
    }

    fn single_step(&mut self, _regs: &mut UserContext) {
        self.owed |= TraceProgress::OWE_STEP;
    }

    // Inlined: it is the policy stage of every filtered syscall, and its
    // rare parts are out of line.
    #[inline(always)]
    fn policy(&mut self, regs: &mut UserContext) -> PolicyDecision {
        self.checked = Some((regs.x[0], regs.x[8]));
        // A policy server's answer decides, unless it allowed the call:
        // then the filters judge it again (its `Notify` waived).
        if let Some(StopAnswer::Policy(answer)) = self.answer {
            self.answer = None;
            if answer != PolicyAnswer::Allow {
                return self.server_decided(regs, answer);
            }
        }
        let Some(check) = &self.policy else {
            // Policy work with nothing to check it against: fail closed.
            return self.refuse(regs, ErrorCode::Denied.raw(), EntryOutcome::Refused);
        };
        let (action, asker) = check.verdict(regs, self.waived);
        self.outcome = EntryOutcome::Run;
        match action {
            Action::Allow => PolicyDecision::Verdict(PolicyVerdict::Allow),
            // `Log` runs the syscall; an audited thread's record of it says
            // a filter logged it.
            Action::Log => {
                self.outcome = EntryOutcome::Logged;
                PolicyDecision::Verdict(PolicyVerdict::Allow)
            }
            Action::Errno(code) => self.refuse(regs, u64::from(code), EntryOutcome::Refused),
            Action::Trap => self.refuse(regs, ErrorCode::Denied.raw(), EntryOutcome::Trap),
            Action::Notify => match asker {
                // The registers stay as they are: the kernel keeps them
                // as the stopped call, and the request carries them.
                Some(filter) => {
                    self.outcome = EntryOutcome::Ask { filter };
                    PolicyDecision::Ask
                }
                None => self.refuse(regs, ErrorCode::Denied.raw(), EntryOutcome::Refused),
            },
            Action::Kill => {
                self.outcome = EntryOutcome::Kill;
                PolicyDecision::Verdict(PolicyVerdict::Kill)
            }
        }
    }

    fn audit_entry(&mut self, _regs: &UserContext, _verdict: PolicyVerdict) -> AuditEntry {
        // "There is room now" is only a reason to look again: the kernel
        // looked at the ring before this pass (`audit_full`).
        if self.answer == Some(StopAnswer::AuditRoom) {
            self.answer = None;
        }
        if self.audit_full {
            AuditEntry::Wait
        } else {
            AuditEntry::Continue
        }
    }

    fn current_work(&mut self) -> WorkFlags {
        // A pending reschedule is left set for `Kernel::resume`, which
        // requeues the thread once the syscall's exit work is done.
        let mut work = *self.work;
        work.remove(WorkFlags::NEED_RESCHED);
        work
    }

    fn handle_notify_resume(&mut self) {
        self.work.remove(WorkFlags::NOTIFY_RESUME);
    }
}

/// What one pass through the entry work came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::kernel) struct Entered {
    /// The entry code's answer.
    pub entry: SyscallEntry,
    /// What the stages decided (see `EntryOutcome`).
    pub outcome: EntryOutcome,
    /// Filters whose `Notify` a server allowed.
    pub waived: u8,
    /// A policy server decided the call.
    pub forwarded: bool,
}

impl Entered {
    /// A syscall of a thread without entry work: dispatched as made.
    pub fn dispatch_without_work() -> Entered {
        Entered {
            entry: SyscallEntry::Dispatch,
            outcome: EntryOutcome::Run,
            waived: 0,
            forwarded: false,
        }
    }
}

impl Kernel {
    /// A syscall through the generic entry: a new one (`resumed` is
    /// `None`), or a stopped one whose answer has come. It runs to its end,
    /// or stops again (the thread then waits for the next answer).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        resumed: Option<&Resumed>,
    ) {
        let Some((entered, progress)) =
            self.enter_syscall_with_work(platform, current, esr, resumed)
        else {
            return;
        };
        let context = &self.objects[current].context;
        let result = match syscall::decode_copy::<{ syscall::ENTRY_WORK_COPY }>(context) {
            Ok(call) => {
                self.dispatch::<P, { syscall::ENTRY_WORK_COPY }>(platform, current, call, progress)
            }
            Err(code) => SyscallResult::Return(code),
        };
        self.finish_syscall_with_work(platform, current, esr, &entered, result);
    }

    /// The entry work of `syscall_with_work`:
    /// `Some` when the syscall is to be dispatched now (what the entry work decided,
    /// and how far a preempted call got); otherwise it is over, or stopped
    /// again (the thread then waits for the next answer), and `None`.
    pub(in crate::kernel) fn enter_syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        resumed: Option<&Resumed>,
    ) -> Option<(Entered, Progress)> {
        if let Some(call) = resumed {
            if let CallStop::Dispatch { progress, at } = call.at {
                let entered = Entered {
                    entry: SyscallEntry::Dispatch,
                    outcome: call.outcome,
                    waived: call.waived,
                    forwarded: call.forwarded,
                };
                return Some((entered, Progress { done: progress, at }));
            }
        }
        let entered = self.enter_with_work(platform, current, resumed);
        let entry = entered.entry;
        match entry {
            SyscallEntry::Dispatch => return Some((entered, Progress::NONE)),
            SyscallEntry::Stopped(stop) => {
                self.stop_call(platform, current, esr, stop, &entered);
                return None;
            }
            SyscallEntry::Skipped(_) => {
                // The common case (an `Errno`, no audit record to write):
                // its exit stages on the thread in hand, one look at it.
                // Otherwise `audit_complete`, from the same look.
                let thread = &mut self.objects[current];
                let x0 = thread.context.x[0];
                let pending = thread.audit_pending.take();
                if pending.is_none()
                    && !matches!(
                        entered.outcome,
                        EntryOutcome::Trap | EntryOutcome::Redirect { .. }
                    )
                {
                    if Self::exit_work_on(thread, entry) {
                        self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
                    }
                    return None;
                }
                if let Some(pending) = pending {
                    self.write_record(platform, current, &pending, Some(x0));
                }
                // A trapped call is denied like an Errno (docs/entry.md:
                // stages 5-7 run), but its thread then waits for its fault
                // handler: its exit stages run now, and the stops they owe
                // are sent when it returns to EL0 after the handler's
                // answer (`Kernel::resume`).
                if entered.outcome == EntryOutcome::Trap {
                    self.exit_with_work(platform, current, entry);
                }
                if !self.policy_skipped(platform, current, esr, entered.outcome) {
                    return None;
                }
            }
            SyscallEntry::Killed => {
                self.audit_complete(platform, current, None);
                self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
                return None;
            }
        }
        self.exit_with_work(platform, current, entry);
        None
    }

    /// After the dispatch of a syscall with entry work: its audit record,
    /// its result, its exit work (or, preempted, the kernel keeps it).
    pub(in crate::kernel) fn finish_syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: &Entered,
        result: SyscallResult,
    ) {
        // The common cases, a result or restored registers: the record
        // (`audit_dispatched`: its result is the `x0` the thread returns
        // with), the result (`write_back`) and the exit stages from one
        // look at the thread.
        if let SyscallResult::Return(_) | SyscallResult::Restored = result {
            let thread = &mut self.objects[current];
            if let SyscallResult::Return(code) = result {
                thread.context.x[0] = code.raw();
            }
            let x0 = thread.context.x[0];
            match thread.audit_pending.take() {
                Some(pending) => {
                    self.write_record(platform, current, &pending, Some(x0));
                    self.exit_with_work(platform, current, entered.entry);
                }
                None => {
                    if Self::exit_work_on(thread, entered.entry) {
                        self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
                    }
                }
            }
            return;
        }
        if !matches!(result, SyscallResult::Preempted { .. }) {
            self.audit_dispatched(platform, current, result);
        }
        match self.write_back(platform, current, esr, entered, result) {
            Dispatched::Returns => self.exit_with_work(platform, current, entered.entry),
            // The caller waits; whoever runs next goes through the exit
            // work in `resume`, and its own exit stages run when it
            // returns.
            Dispatched::Waits => self.defer_exit_work(current, entered.entry),
            Dispatched::Ended => {}
        }
    }
}

impl Kernel {
    /// The generic entry for a syscall with entry work (out of line: the
    /// common syscall has none): a new one (`resumed` is `None`), or one
    /// that stopped in its entry work and whose answer has come (its
    /// registers are in the context again). Stage 1 (user dispatch) and
    /// stage 4's room check read memory, so their answers are worked out
    /// here before the entry code runs.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn enter_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        resumed: Option<&Resumed>,
    ) -> Entered {
        // One look at the thread, unless it has user dispatch or audit
        // to ask about first (they need the whole kernel: the thread is
        // looked up again after them).
        let Some((mut thread, mut others)) = self.objects.split_thread(current) else {
            unreachable!("the current thread is a thread");
        };
        let dispatches = resumed.is_none() && thread.work.contains(WorkFlags::USER_DISPATCH);
        let audited = thread.audit.is_some();
        let (mut redirect, mut audit_full) = (None, false);
        if dispatches || audited {
            if dispatches {
                redirect = self.user_dispatch_decision(platform, current);
            }
            audit_full = audited && self.audit_ring_is_full(platform, current);
            let Some(again) = self.objects.split_thread(current) else {
                unreachable!("the current thread is a thread");
            };
            (thread, others) = again;
        }
        let Thread {
            work,
            context,
            verdicts,
            filters: stack,
            cspace_slots,
            trace,
            ..
        } = thread;
        let flags = *work;
        let policy = flags
            .contains(WorkFlags::POLICY)
            .then(|| PolicyCheck::new(verdicts, stack, others, *cspace_slots, context));
        // A new syscall goes on with nothing (`NEW`'s `at` is never read:
        // where a call goes on is `resumed`'s). Read from one reference:
        // an `Option` made from each field (`and_then`) copied the
        // answer's payload with a `memcpy` call, byte by byte.
        const NEW: Resumed = Resumed {
            at: CallStop::Dispatch { progress: 0, at: 0 },
            answer: None,
            waived: 0,
            forwarded: false,
            outcome: EntryOutcome::Run,
        };
        let going_on = resumed.unwrap_or(&NEW);
        let mut hooks = SyscallWork {
            policy,
            outcome: going_on.outcome,
            answer: going_on.answer,
            waived: going_on.waived,
            forwarded: going_on.forwarded,
            redirect,
            audit_full,
            ..SyscallWork::exit_only(work)
        };
        let entry = match resumed.map(|call| call.at) {
            Some(CallStop::Entry(stop)) => {
                entry::syscall_resume_entry(&mut hooks, context, flags, stop)
            }
            _ => entry::syscall_enter_from_user_mode(&mut hooks, context, flags),
        };
        let checked = hooks.checked;
        // The number as judged (an emulated result may be in `x8` now).
        trace.number = checked.map_or(context.x[8], |(_, x8)| x8);
        let entered = Entered {
            entry,
            outcome: hooks.outcome,
            waived: hooks.waived,
            forwarded: hooks.forwarded,
        };
        drop(hooks);
        // The record shows the arguments as the entry work left them (as
        // the policy saw them, not a refusal's error code).
        if audited && !matches!(entry, SyscallEntry::Stopped(_)) {
            self.audit_begin(current, &entered, checked);
        }
        entered
    }

    /// The generic exit for a syscall that went through `enter_with_work`.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn exit_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        entry: SyscallEntry,
    ) {
        if Self::exit_work_on(&mut self.objects[current], entry) {
            self.end_thread(
                platform,
                current,
                crate::thread::ThreadState::Exited(KILLED_BY_POLICY),
            );
        }
    }

    /// The exit stages (5 to 8) of `thread`'s syscall, on the thread in
    /// hand (`exit_with_work`, and its callers' common cases, which
    /// spare a second look at the thread); `true`: its policy killed it
    /// (the caller ends it).
    #[inline(always)]
    pub(in crate::kernel) fn exit_work_on(thread: &mut Thread, entry: SyscallEntry) -> bool {
        let flags = thread.work;
        let mut hooks = SyscallWork::exit_only(&mut thread.work);
        let outcome =
            entry::syscall_exit_to_user_mode(&mut hooks, &mut thread.context, entry, flags);
        let owed = hooks.owed;
        drop(hooks);
        // Sent on the way back to EL0 (`Kernel::resume`), exit stop first.
        thread.trace.owed |= owed;
        outcome == entry::UserReturn::Killed
    }

    /// A syscall stopped in its entry work: the kernel keeps it as judged
    /// so far (the registers now), and sends what it waits for (the entry
    /// stop to the tracer, the request to a policy server) or leaves it
    /// waiting for audit room. The thread blocks.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn stop_call<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        stop: entry::EntryStop,
        entered: &Entered,
    ) {
        let capability = match stop {
            // Judged after the stop: nothing to hold it to.
            entry::EntryStop::TraceEntry => None,
            _ => Some(self.judged_capability(current)),
        };
        let thread = &mut self.objects[current];
        // Word by word: a slice copy was a call to `memcpy`.
        let x = &thread.context.x;
        let regs = [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]];
        // Made in place, then the rest field by field: the struct
        // literal was built apart and then stored whole. (The outcome's
        // payload is still a byte-wise `memcpy` call: its tag and filter
        // are loaded apart, for the match below.)
        let call = thread
            .call
            .insert(StoppedCall::new(regs, CallStop::Entry(stop)));
        call.esr = esr;
        call.capability = capability;
        call.waived = entered.waived;
        call.forwarded = entered.forwarded;
        call.outcome = entered.outcome;
        match stop {
            entry::EntryStop::TraceEntry => {
                self.trace_stop(platform, current, StopKind::Entry, regs[8]);
            }
            entry::EntryStop::Policy => {
                let filter = match entered.outcome {
                    EntryOutcome::Ask { filter } => filter,
                    // The policy stage stops only to ask.
                    _ => u8::MAX,
                };
                self.notify_policy_server(platform, current, filter);
            }
            entry::EntryStop::AuditEntry(_) => {
                self.wait_for_audit_room(current);
                self.current = None;
            }
        }
    }
}

impl Kernel {
    /// A syscall the entry stages did not let run: a redirect enters the
    /// user-dispatch handler (or kills the thread), a `Trap` becomes a
    /// fault report; an `Errno` needs nothing more. `false`: the thread
    /// does not return from the syscall now (it waits, or it ended).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn policy_skipped<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        outcome: EntryOutcome,
    ) -> bool {
        match outcome {
            EntryOutcome::Trap => {
                // The syscall did not run; its report goes to the fault
                // endpoint (or stops the thread), with `Denied` in `x0`.
                let context = &self.objects[current].context;
                let report = crate::fault::FaultReport::new(esr, context.x[8], context.pc);
                self.report_fault(platform, current, report);
                false
            }
            EntryOutcome::Redirect { flags } => self.redirect_to_handler(platform, current, flags),
            EntryOutcome::Run
            | EntryOutcome::Logged
            | EntryOutcome::Refused
            | EntryOutcome::Emulated
            | EntryOutcome::Ask { .. }
            | EntryOutcome::Kill => true,
        }
    }
}
