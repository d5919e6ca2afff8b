//! The generic entry around a syscall with entry work, carried out step
//! by step: the `entry` crate's machines (`SyscallEnter`, `SyscallExit`)
//! say what to do next, in the order of docs/entry.md, and this file does
//! it and asks for the next step. The questions are answered here (stage
//! 1 reads the selector, stage 3 runs the filters, stage 4 looks at the
//! ring); the effects are carried out by the forwarding features
//! (`forward/*`: the redirect, the trace stops, the policy request, the
//! audit records). A call that stops waits for its answer, and goes on
//! from its stop (`SyscallEnter::resume`); its exit stages run once it is
//! done.

use crate::cap::OtherObjects;
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
use abi::{ErrorCode, Syscall};
use arch::context::UserContext;
use entry::{
    AuditRoom, EntryStep, ExitLoopHooks, ExitStep, PolicyDecision, PolicyVerdict, SyscallEnter,
    SyscallEntry, SyscallExit, TraceEntry, UserDispatch, WorkFlags,
};

use crate::kernel::forward::policy::PolicyCheck;

mod judged;
mod traced;

/// What the entry stages decided for one syscall so far, beside the
/// machine's steps: what the kernel acts on once the pass ends, what a
/// stopped call keeps, and what the audit record shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::kernel) struct Entered {
    /// How the entry ended.
    pub entry: SyscallEntry,
    /// What the stages decided (see `EntryOutcome`).
    pub outcome: EntryOutcome,
    /// Filters whose `Notify` a server allowed (see `StoppedCall::waived`).
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

/// One pass of the entry stages in progress: `Entered`'s fields, the
/// answer a stopped call goes on with, and `x0`/`x8` as the policy stage
/// saw them.
struct Pass {
    outcome: EntryOutcome,
    /// The answer a stopped call goes on with (`None`: a new syscall, or
    /// one past the stage its answer was for).
    answer: Option<StopAnswer>,
    waived: u8,
    forwarded: bool,
    /// `x0` and `x8` as the policy stage saw them, before a refusal wrote
    /// its result there (what the audit record and the exit stop show).
    checked: Option<(u64, u64)>,
}

impl Pass {
    /// Do not run the syscall: `result` in `x0`.
    #[inline(always)]
    fn refuse(
        &mut self,
        regs: &mut UserContext,
        result: u64,
        outcome: EntryOutcome,
    ) -> PolicyDecision {
        regs.set_result_word(result);
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
                regs.set_value(x8);
                self.refuse(regs, x0, EntryOutcome::Emulated)
            }
            PolicyAnswer::Kill => {
                self.outcome = EntryOutcome::Kill;
                PolicyDecision::Verdict(PolicyVerdict::Kill)
            }
            PolicyAnswer::Allow | PolicyAnswer::AllowWith => {
                PolicyDecision::Verdict(PolicyVerdict::Allow)
            }
        }
    }

    /// Stage 2's question: the tracer's answer to the entry stop, if it
    /// has come (its changes are in the registers already).
    #[inline(always)]
    fn trace_answer(&mut self) -> TraceEntry {
        match self.answer.take() {
            Some(StopAnswer::TraceContinue) => TraceEntry::Continue,
            Some(StopAnswer::TraceSkip) => TraceEntry::Skip,
            _ => TraceEntry::Stop,
        }
    }
}

/// Stage 8 of a syscall's exit, on its thread: the exit-to-user loop with
/// a pending reschedule left set for `Kernel::resume`, which requeues the
/// thread once the syscall's exit work is done.
struct SyscallExitLoop<'a> {
    work: &'a mut WorkFlags,
}

impl ExitLoopHooks for SyscallExitLoop<'_> {
    fn current_work(&mut self) -> WorkFlags {
        let mut work = *self.work;
        // Both `resume`'s: the reschedule, and the rseq check, which
        // comes after it (`pick_resume`).
        work.remove(WorkFlags::NEED_RESCHED | WorkFlags::RSEQ);
        work
    }

    fn handle_notify_resume(&mut self) {
        self.work.remove(WorkFlags::NOTIFY_RESUME);
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
        // Tracing alone: a new syscall stops at its entry at once (its
        // lane; routed here, not in `Kernel::syscall`, where one more arm
        // cost the other lanes 8 to 10 instructions).
        if resumed.is_none()
            && self.objects[current]
                .work
                .intersection(WorkFlags::SYSCALL_WORK)
                == WorkFlags::TRACE
        {
            return self.syscall_traced(platform, current, esr);
        }
        self.syscall_by_machine(platform, current, esr, resumed);
    }

    /// `syscall_with_work` asking the entry machine at every stage (what
    /// the lanes are checked against).
    #[inline(always)]
    pub(in crate::kernel) fn syscall_by_machine<P: Platform>(
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
        let _ = self.finish_syscall_with_work(platform, current, esr, &entered, result);
    }

    /// The entry work of `syscall_with_work`, and the step that ends it
    /// carried out: `Some` when the syscall is to be dispatched now (what
    /// the entry work decided, and how far a preempted call got);
    /// otherwise it is over (skipped, redirected, killed: its exit work
    /// done) or stopped (the thread waits for the answer), and `None`.
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
        let (end, entered) = self.enter_with_work(platform, current, resumed);
        self.end_of_entry(platform, current, esr, end, entered)
    }

    /// Carries out `end`, the step that ended a pass of the entry stages
    /// (`enter_with_work`): `Some` when the syscall is to be dispatched
    /// now; otherwise it is over or stopped, and `None`.
    #[inline(always)]
    fn end_of_entry<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        end: EntryStep,
        entered: Entered,
    ) -> Option<(Entered, Progress)> {
        let entry = entered.entry;
        match end {
            EntryStep::Dispatch => return Some((entered, Progress::NONE)),
            EntryStep::Skip(_) => {
                // The common case (an `Errno`, no audit record to write):
                // its exit stages on the thread in hand, one look at it.
                let thread = &mut self.objects[current];
                // Over: what it carried was judged for nothing more
                // (`crate::judged_memory`: a copy lives as long as its
                // call, so a thread at EL0 has none).
                thread.judged.forget();
                if thread.audit_pending.is_none() && entered.outcome != EntryOutcome::Trap {
                    // (A skipped syscall's thread is never killed.)
                    let _ = Self::exit_work_on(thread, entry);
                    return None;
                }
                let x0 = thread.context.result();
                let recorded = thread.audit_pending.is_some();
                let (exit, step) = Self::exit_with_record_on(thread, entry, recorded);
                self.exit_with_record(platform, current, exit, step, recorded, Some(x0));
                // A trapped call is denied like an Errno (docs/entry.md:
                // stages 5-7 run), then its thread waits for its fault
                // handler: the stops its exit stages owe are sent when it
                // returns to EL0 after the handler's answer
                // (`Kernel::resume`).
                if entered.outcome == EntryOutcome::Trap {
                    self.report_trap(platform, current, esr);
                }
            }
            EntryStep::Redirect => {
                let flags = match entered.outcome {
                    EntryOutcome::Redirect { flags } => flags,
                    _ => 0,
                };
                if self.redirect_to_handler(platform, current, flags) {
                    self.exit_with_work(platform, current, entry, None);
                }
            }
            // Stage 5 (the record, without a result), then the end.
            EntryStep::Kill => self.exit_with_work(platform, current, entry, None),
            EntryStep::SendTraceEntryStop
            | EntryStep::AskPolicyServer { .. }
            | EntryStep::WaitForAuditRoom(_) => {
                self.stop_call(platform, current, esr, end, &entered);
            }
            // (Questions never end a pass: `enter_with_work`.)
            EntryStep::UserDispatch
            | EntryStep::TraceEntry
            | EntryStep::Policy
            | EntryStep::AuditRoom(_)
            | EntryStep::WriteAuditEntry(_) => {}
        }
        None
    }

    /// After the dispatch of a syscall with entry work: stage 5 (its
    /// audit record), its result, stages 6 to 8 (or, preempted, the
    /// kernel keeps it; blocked, they run when it returns). (Inlined into
    /// both its callers, `syscall_with_work` and `syscall_audited`: called,
    /// it cost every syscall with entry work some 20 instructions.)
    ///
    /// It answers the thread's TTBR0 when a returned result leaves the
    /// thread going back as it is, as far as the thread itself says
    /// (`goes_back_as_it_is`, on the thread in hand; the caller asks
    /// whether it is still the CPU's and `nothing_due`), else `None` (the lean entry's policy lane then
    /// needs no look-up of its own; other callers ignore it).
    #[inline(always)]
    pub(in crate::kernel) fn finish_syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: &Entered,
        result: SyscallResult,
    ) -> Option<u64> {
        // The common cases, a result or restored registers: the result,
        // then the exit stages from one look at the thread (the record's
        // result is the `x0` the thread returns with).
        if let SyscallResult::Return(_) | SyscallResult::Restored = result {
            let thread = &mut self.objects[current];
            // Over (see the `Skip` step above).
            thread.judged.forget();
            // The write-back's, on the thread in hand (a restore wrote
            // all the registers already).
            if let SyscallResult::Return(code) = result {
                Self::write_result(thread, code);
            }
            if thread.audit_pending.is_none() {
                if Self::exit_work_on(thread, entered.entry) {
                    self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
                    return None;
                }
                return Self::goes_back_as_it_is(thread).then_some(thread.ttbr0);
            }
            let x0 = thread.context.result();
            let (exit, step) = Self::exit_with_record_on(thread, entered.entry, true);
            self.exit_with_record(platform, current, exit, step, true, Some(x0));
            return None;
        }
        if let SyscallResult::Preempted { .. } = result {
            // Kept to go on (`preempt_call`): stage 5 runs when it is done.
            let _ = self.write_back(platform, current, esr, entered, result);
            self.defer_exit_work(current, entered.entry);
            return None;
        }
        // Stage 5 before the result is applied (an IPC's effects, a
        // yield): the record's result is the one dispatch gave (none for
        // a call that blocks or ends its thread). Stages 6 to 8 after it,
        // by the work word as the result left it.
        let mut exit = SyscallExit::new(entered.entry, self.exit_work_word(current));
        if let ExitStep::WriteAuditRecord { .. } = exit.next_step() {
            self.audit_dispatched(platform, current, result);
        }
        match self.write_back(platform, current, esr, entered, result) {
            Dispatched::Returns => {
                self.objects[current].judged.forget();
                self.exit_after_record(platform, current, entered.entry)
            }
            // The caller waits; whoever runs next goes through the exit
            // work in `resume`, and its own stages 6 to 8 run when it
            // returns (`trace_before_user`).
            Dispatched::Waits => {
                self.forget_unless_sending(current);
                self.defer_exit_work(current, entered.entry)
            }
            Dispatched::Ended => {}
        }
        None
    }

    /// A call that waits keeps its judged copy only while it waits to send
    /// the message the copy is of (`message::transfer` takes it then); a
    /// call that waits for anything else (a reply, a receive, a preempted
    /// operation's turn: what it carried was sent, or never was) is done
    /// with it.
    fn forget_unless_sending(&mut self, current: ThreadId) {
        let thread = &mut self.objects[current];
        if !matches!(thread.state_ref(), ThreadState::BlockedOnSend { .. }) {
            thread.judged.forget();
        }
    }

    /// The entry stages of a syscall with entry work (out of line: the
    /// common syscall has none): a new one (`resumed` is `None`), or one
    /// that stopped in its entry work and whose answer has come (its
    /// registers are in the context again). Answers each question the
    /// entry machine asks until a step ends the pass; returns that step
    /// (for `enter_syscall_with_work` to carry out) and what the stages
    /// decided.
    ///
    /// The machine asks at most one question per stage, in stage order
    /// (the contract tests check it for every work word), so the answers
    /// are given in one pass down the stages, each where its question can
    /// come, rather than in a loop over a step that the compiler could not
    /// follow (a loop cost a filtered syscall some 50 instructions). Stages
    /// 2 and 3 work on the thread in hand; stages 1 and 4 need the whole
    /// kernel (user memory, the ring) and look at the thread again.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn enter_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        resumed: Option<&Resumed>,
    ) -> (EntryStep, Entered) {
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
        let mut pass = Pass {
            outcome: going_on.outcome,
            answer: going_on.answer,
            waived: going_on.waived,
            forwarded: going_on.forwarded,
            checked: None,
        };
        let Some((mut thread, mut others)) = self.objects.split_thread(current) else {
            unreachable!("the current thread is a thread");
        };
        let (enter, mut step) = match going_on.at {
            CallStop::Entry(stop) => SyscallEnter::resume(thread.work, stop),
            CallStop::Dispatch { .. } => SyscallEnter::start(thread.work),
        };
        // Stage 1 reads the selector byte and the PC (user memory).
        if step == EntryStep::UserDispatch {
            let decision = match self.dispatch_decided.take() {
                Some(decided) => decided,
                None => self.user_dispatch_decision(platform, current),
            };
            let answer = match decision {
                Some(flags) => {
                    pass.outcome = EntryOutcome::Redirect { flags };
                    UserDispatch::Redirected
                }
                None => UserDispatch::Continue,
            };
            step = enter.user_dispatch(answer);
            let Some(again) = self.objects.split_thread(current) else {
                unreachable!("the current thread is a thread");
            };
            (thread, others) = again;
        }
        if step == EntryStep::TraceEntry {
            step = enter.trace_entry(pass.trace_answer());
        }
        if step == EntryStep::Policy {
            // The memory a verdict may depend on is copied first, once
            // (a call going on after its server's answer keeps its copy).
            if thread
                .verdicts
                .needs_memory(thread.context.syscall_number())
            {
                self.take_judged_memory(platform, current);
                let Some(again) = self.objects.split_thread(current) else {
                    unreachable!("the current thread is a thread");
                };
                (thread, others) = again;
            }
            step = enter.policy(Self::judge(thread, others, &mut pass));
        }
        // The number as judged (an emulated result may be in `x8` now).
        thread.trace.number = pass
            .checked
            .map_or(thread.context.syscall_number(), |(_, x8)| x8);
        self.audit_stage(platform, current, enter, step, &mut pass)
    }

    /// Stage 4 and the end of the pass: the ring looked at, the record
    /// begun, if `step` asks; then the step that ends the pass and what
    /// the stages decided.
    #[inline(always)]
    fn audit_stage<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        enter: SyscallEnter,
        mut step: EntryStep,
        pass: &mut Pass,
    ) -> (EntryStep, Entered) {
        // Stage 4 looks at the ring.
        if let EntryStep::AuditRoom(verdict) = step {
            // "There is room now" is only a reason to look again.
            if pass.answer == Some(StopAnswer::AuditRoom) {
                pass.answer = None;
            }
            let room = if self.audit_ring_is_full(platform, current) {
                AuditRoom::Full
            } else {
                AuditRoom::Room
            };
            step = enter.audit_room(verdict, room);
        }
        if let EntryStep::WriteAuditEntry(verdict) = step {
            self.audit_begin(current, pass.outcome, pass.forwarded, pass.checked);
            step = enter.audit_entry_written(verdict);
        }
        let Some(entry) = step.entry() else {
            unreachable!("the entry machine asks its questions in stage order");
        };
        let entered = Entered {
            entry,
            outcome: pass.outcome,
            waived: pass.waived,
            forwarded: pass.forwarded,
        };
        (step, entered)
    }

    /// Stage 3's question: the verdict of `thread`'s filters on its
    /// registers as they are now, or the answer its policy server gave.
    /// A refusal's result goes in `x0`. (Inlined: it is the policy stage
    /// of every filtered syscall, and its rare parts are out of line.)
    #[inline(always)]
    fn judge(thread: &mut Thread, others: OtherObjects<'_>, pass: &mut Pass) -> PolicyDecision {
        let Thread {
            context,
            verdicts,
            filters: stack,
            cspace_slots,
            judged,
            ..
        } = thread;
        pass.checked = Some((context.capability_pointer(), context.syscall_number()));
        // A policy server's answer decides, unless it allowed the call:
        // then the filters judge it again (its `Notify` waived).
        if let Some(StopAnswer::Policy(answer)) = pass.answer {
            pass.answer = None;
            match answer {
                // The one filter's own `Notify`, waived, is its verdict
                // again: the call goes on with the registers, memory and
                // capability it was judged on (a change to any of them
                // cancels it), and a filter never changes once attached.
                // (New arguments, and a stack of more filters, are judged
                // again: another rule may refuse them, another filter ask
                // its own server.)
                PolicyAnswer::Allow if stack.len() == 1 && pass.waived & 1 != 0 => {
                    pass.outcome = EntryOutcome::Run;
                    return PolicyDecision::Verdict(PolicyVerdict::Allow);
                }
                PolicyAnswer::Allow | PolicyAnswer::AllowWith => {}
                _ => return pass.server_decided(context, answer),
            }
        }
        let check = PolicyCheck::new(verdicts, stack, others, *cspace_slots, context);
        let (action, asker) = check.verdict(context, pass.waived, judged);
        pass.outcome = EntryOutcome::Run;
        match action {
            Action::Allow => PolicyDecision::Verdict(PolicyVerdict::Allow),
            // `Log` runs the syscall; an audited thread's record of it says
            // a filter logged it.
            Action::Log => {
                pass.outcome = EntryOutcome::Logged;
                PolicyDecision::Verdict(PolicyVerdict::Allow)
            }
            Action::Errno(code) => pass.refuse(context, u64::from(code), EntryOutcome::Refused),
            Action::Trap => pass.refuse(context, ErrorCode::Denied.raw(), EntryOutcome::Trap),
            Action::Notify => match asker {
                // The registers stay as they are: the kernel keeps them
                // as the stopped call, and the request carries them.
                Some(filter) => {
                    pass.outcome = EntryOutcome::Ask { filter };
                    PolicyDecision::Ask { filter }
                }
                None => pass.refuse(context, ErrorCode::Denied.raw(), EntryOutcome::Refused),
            },
            Action::Kill => {
                pass.outcome = EntryOutcome::Kill;
                PolicyDecision::Verdict(PolicyVerdict::Kill)
            }
        }
    }

    /// The work word `current`'s exit stages are chosen by: its work word
    /// now, with `AUDIT` if and only if its audit entry began a record
    /// (as Linux's audit context: a syscall that turned its own audit off
    /// still gets its record, one that turned it on has none to write).
    #[inline(always)]
    pub(in crate::kernel) fn exit_work_word(&self, current: ThreadId) -> WorkFlags {
        let thread = &self.objects[current];
        let mut work = thread.work;
        match thread.audit_pending {
            Some(_) => work.insert(WorkFlags::AUDIT),
            None => work.remove(WorkFlags::AUDIT),
        }
        work
    }

    /// The exit machine of `thread`'s syscall, whose entry ended as
    /// `entry`, and its first step; `recorded`: the caller has just taken
    /// the record its audit entry began (`AUDIT` in the word if and only
    /// if so, as `exit_work_word`).
    #[inline(always)]
    fn exit_with_record_on(
        thread: &Thread,
        entry: SyscallEntry,
        recorded: bool,
    ) -> (SyscallExit, ExitStep) {
        let mut work = thread.work;
        work.remove(WorkFlags::AUDIT);
        if recorded {
            work.insert(WorkFlags::AUDIT);
        }
        let mut exit = SyscallExit::new(entry, work);
        let step = exit.next_step();
        (exit, step)
    }

    /// The exit stages (5 to 8) of `current`'s syscall, whose entry ended
    /// as `entry`; `result` is the record's result (`None`: it has none).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn exit_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        entry: SyscallEntry,
        result: Option<u64>,
    ) {
        let thread = &mut self.objects[current];
        if thread.audit_pending.is_some() {
            let (exit, step) = Self::exit_with_record_on(thread, entry, true);
            self.exit_with_record(platform, current, exit, step, true, result);
        } else if Self::exit_work_on(thread, entry) {
            self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
        }
    }

    /// Stages 6 to 8 of a syscall whose stage 5 is done (`after_record`).
    pub(in crate::kernel) fn exit_after_record<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        entry: SyscallEntry,
    ) {
        let mut exit = SyscallExit::after_record(entry, self.exit_work_word(current));
        let step = exit.next_step();
        self.exit_with_record(platform, current, exit, step, false, None);
    }

    /// Carries out `step` and the exit steps after it; stage 5 writes the
    /// thread's pending record (`recorded`: it has one, which the caller
    /// told the exit machine) with `result`. A stop blocks the thread, so the kernel sends the trace
    /// stops stages 6 and 7 ask for on the thread's way back to EL0, in
    /// that order and before it returns (`TraceProgress::owed`,
    /// `Kernel::trace_before_user`). (One pass down the stages, as
    /// `enter_with_work`: the machine gives each step at most once, in
    /// stage order.)
    fn exit_with_record<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        mut exit: SyscallExit,
        mut step: ExitStep,
        recorded: bool,
        result: Option<u64>,
    ) {
        if let ExitStep::WriteAuditRecord { with_result } = step {
            if recorded {
                let result = if with_result { result } else { None };
                self.write_record(platform, current, result);
            }
            step = exit.next_step();
        }
        if step == ExitStep::Killed {
            self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
            return;
        }
        let _ = Self::trace_exit_steps_on(&mut self.objects[current], exit, step);
    }

    /// The exit stages (5 to 8) of `thread`'s syscall, on the thread in
    /// hand, for a syscall with no audit record pending (the common
    /// cases of `enter_syscall_with_work` and `finish_syscall_with_work`,
    /// which spare a second look at the thread); `true`: its policy
    /// killed it (the caller ends it).
    #[inline(always)]
    pub(in crate::kernel) fn exit_work_on(thread: &mut Thread, entry: SyscallEntry) -> bool {
        // No record is pending (the caller's test): no stage 5.
        let mut work = thread.work;
        work.remove(WorkFlags::AUDIT);
        let mut exit = SyscallExit::new(entry, work);
        let step = exit.next_step();
        Self::trace_exit_steps_on(thread, exit, step)
    }

    /// Stages 6 to 8 from `step` on, on the thread in hand; `true`: its
    /// policy killed it.
    #[inline(always)]
    fn trace_exit_steps_on(thread: &mut Thread, mut exit: SyscallExit, mut step: ExitStep) -> bool {
        if step == ExitStep::SendTraceExitStop {
            thread.trace.owed |= TraceProgress::OWE_EXIT;
            step = exit.next_step();
        }
        if step == ExitStep::ReportSingleStep {
            thread.trace.owed |= TraceProgress::OWE_STEP;
            step = exit.next_step();
        }
        match step {
            ExitStep::ExitToUser => {
                Self::exit_loop_on(thread);
                false
            }
            ExitStep::Killed => true,
            // Stopped: nothing runs. (Stage 5 is the caller's.)
            _ => false,
        }
    }

    /// Stage 8 for a thread returning from a syscall (its reschedule is
    /// `resume`'s).
    #[inline(always)]
    pub(in crate::kernel) fn exit_loop_on(thread: &mut Thread) {
        let mut hooks = SyscallExitLoop {
            work: &mut thread.work,
        };
        let work = hooks.current_work();
        let _ = entry::exit_to_user_mode(&mut hooks, work);
    }

    /// Carries out a step that stops `current`'s syscall in its entry
    /// work: the kernel keeps the call as judged so far (the registers
    /// now), then sends the trace entry stop, or asks the filter's policy
    /// server, or leaves it waiting for audit room. The thread blocks.
    #[inline(never)]
    pub(in crate::kernel) fn stop_call<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        step: EntryStep,
        entered: &Entered,
    ) {
        let SyscallEntry::Stopped(stop) = entered.entry else {
            return;
        };
        let thread = &self.objects[current];
        let capability = match stop {
            // Judged after the stop: nothing to hold it to.
            entry::EntryStop::TraceEntry => None,
            // Neither judged on the slot `x0` names nor run on it: a
            // syscall that names no capability (its filters' verdict
            // reads no type or badge, `VerdictCache::needs_capability`,
            // and its server is sent none, `notify_policy_server`).
            // Whatever the slot holds when the call goes on, what runs is
            // what was judged; taken and checked, it cost every such stop
            // some 50 instructions.
            _ if !Syscall::number_names_capability(thread.context.syscall_number()) => None,
            _ => Some(self.judged_capability(current)),
        };
        let thread = &mut self.objects[current];
        // Word by word (the view's): a slice copy was a call to `memcpy`.
        let regs = thread.context.syscall_registers();
        // Made in place, then the rest field by field: the struct
        // literal was built apart and then stored whole.
        let call = thread
            .call
            .insert(StoppedCall::new(regs, CallStop::Entry(stop)));
        call.esr = esr;
        call.capability = capability;
        call.waived = entered.waived;
        call.forwarded = entered.forwarded;
        call.outcome = entered.outcome;
        match step {
            EntryStep::SendTraceEntryStop => {
                self.trace_stop(platform, current, StopKind::Entry, regs[8]);
            }
            EntryStep::AskPolicyServer { filter } => {
                self.notify_policy_server(platform, current, filter);
            }
            EntryStep::WaitForAuditRoom(_) => {
                self.wait_for_audit_room(current);
                self.current = None;
            }
            _ => {}
        }
    }

    /// A `Trap`ped syscall (denied, its exit stages done): its report goes
    /// to the fault endpoint (or stops the thread), with `Denied` in `x0`.
    #[cold]
    #[inline(never)]
    fn report_trap<P: Platform>(&mut self, platform: &mut P, current: ThreadId, esr: u64) {
        let context = &self.objects[current].context;
        let report = crate::fault::FaultReport::new(esr, context.syscall_number(), context.pc);
        self.report_fault(platform, current, report);
    }
}
