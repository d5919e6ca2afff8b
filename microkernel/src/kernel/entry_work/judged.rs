//! The policy-only lane of the generic entry: a syscall of a thread
//! whose only syscall work is policy, judged on the thread in hand and,
//! allowed, dispatched without the entry machine asked at each stage.

use super::{Entered, Pass};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::stopped_call::{CallStop, EntryOutcome, Progress, Resumed};
use crate::syscall::{self, SyscallResult};
use crate::thread::ThreadId;
use abi::policy::Action;
use entry::{EntryStep, PolicyDecision, PolicyVerdict, SyscallEnter, SyscallEntry};

impl Kernel {
    /// A syscall of a thread whose only syscall work is policy
    /// (`WorkFlags::POLICY`, that its no-entry-work mask does not excuse
    /// for this number): a new one (`resumed` is `None`), or one stopped
    /// at its policy stage whose server has answered (`continue_call`).
    /// Stage 3 (its filters' verdict, or its server's answer) on the
    /// thread in hand and, allowed, the dispatch and the exit stages,
    /// without the entry machine asked at each stage: for this work word
    /// it asks only the policy question, and an `Allow` ends the pass
    /// with the dispatch (checked in debug builds). Any other verdict
    /// goes on through the machine from the policy stage, with the
    /// decision made here; a call that goes on from anywhere else (a
    /// preempted dispatch, a stop of work the thread no longer has) goes
    /// through `syscall_with_work`. Asked step by step, the machine, its
    /// pass kept between two calls and a second look at the thread cost
    /// the evaluated `Allow` some 100 instructions more. (A dispatch copy
    /// of its own, `syscall::JUDGED_COPY`, as `syscall_audited` has.)
    #[inline(never)]
    pub(in crate::kernel) fn syscall_judged<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) {
        self.judged_lane::<P, { syscall::JUDGED_COPY }>(platform, current, esr, None);
    }

    /// [`syscall_judged`](Self::syscall_judged) for a call stopped at its
    /// policy stage whose server has answered (`continue_call`). A copy
    /// of its own, with a dispatch copy of its own
    /// (`syscall::ANSWERED_COPY`): with one dispatch copy for both lanes
    /// the compiler called the dispatch, which cost the new syscall some
    /// 40 instructions.
    #[inline(never)]
    pub(in crate::kernel) fn continue_judged<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        resumed: &Resumed,
    ) {
        self.judged_lane::<P, { syscall::ANSWERED_COPY }>(platform, current, esr, Some(resumed));
    }

    /// The policy-only lane inside the lean entry, for a syscall it judges
    /// (`VerdictCache::judged_by_lean_entry`: its verdict needs nothing
    /// of the frame beyond `x0..x8` and is `Allow`, `Log` or `Errno`).
    /// An allowed call is dispatched and finished as
    /// [`syscall_judged`](Self::syscall_judged) would, without that
    /// lane's general verdict (the routing to servers, the judged memory,
    /// a server's answer) or the entry machine's bookkeeping, which
    /// such a call needs none of; a refused one goes through
    /// `syscall_judged`, which judges it again (the same verdict: nothing
    /// was changed) and refuses it as the machine does. (A dispatch copy
    /// of its own, `syscall::LEAN_JUDGED_COPY`.) It answers as
    /// `finish_syscall_with_work` does: the thread's TTBR0 if a returned
    /// result leaves it going back as it is, else `None`.
    #[inline(never)]
    pub(in crate::kernel) fn lean_judged<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) -> Option<u64> {
        let Some((thread, others)) = self.objects.split_thread(current) else {
            unreachable!("the current thread is a thread");
        };
        let verdict = crate::kernel::forward::policy::lean_verdict(
            &thread.verdicts,
            &thread.register_program,
            &thread.filters,
            others,
            thread.cspace_slots,
            &thread.context,
        );
        let outcome = match verdict {
            Action::Allow => EntryOutcome::Run,
            // No audit here: `Log` only marks the outcome.
            Action::Log => EntryOutcome::Logged,
            _ => {
                self.syscall_judged(platform, current, esr);
                return None;
            }
        };
        thread.trace.number = thread.context.syscall_number();
        let entered = Entered {
            entry: SyscallEntry::Dispatch,
            outcome,
            waived: 0,
            forwarded: false,
        };
        const COPY: syscall::Copy = syscall::LEAN_JUDGED_COPY;
        let result = match syscall::decode_copy::<COPY>(&thread.context) {
            Ok(call) => self.dispatch::<P, COPY>(platform, current, call, Progress::NONE),
            Err(code) => SyscallResult::Return(code),
        };
        self.finish_syscall_with_work(platform, current, esr, &entered, result)
    }

    /// Both lanes' body; `COPY` the dispatch's copy (one per caller, for
    /// the reason `syscall::decode_copy` gives).
    #[inline(always)]
    fn judged_lane<P: Platform, const COPY: syscall::Copy>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        resumed: Option<&Resumed>,
    ) {
        let thread = &self.objects[current];
        // The machine for this call: where it goes on, if it is one that
        // goes on. (A new syscall's machine starts at the policy stage:
        // the caller's test.)
        let machine = |thread: &crate::thread::Thread| match resumed.map(|call| call.at) {
            Some(CallStop::Entry(stop)) => SyscallEnter::resume(thread.work, stop),
            _ => SyscallEnter::start(thread.work),
        };
        let goes_on_at_policy = match resumed.map(|call| call.at) {
            None => true,
            Some(CallStop::Entry(_)) => machine(thread).1 == EntryStep::Policy,
            Some(CallStop::Dispatch { .. }) => false,
        };
        if !goes_on_at_policy {
            return self.syscall_with_work(platform, current, esr, resumed);
        }
        // The memory a verdict may depend on is copied first, once (a
        // call going on after its server's answer keeps its copy).
        if thread
            .verdicts
            .needs_memory(thread.context.syscall_number())
        {
            self.take_judged_memory(platform, current);
        }
        let Some((thread, others)) = self.objects.split_thread(current) else {
            unreachable!("the current thread is a thread");
        };
        let mut pass = match resumed {
            None => Pass {
                outcome: EntryOutcome::Run,
                answer: None,
                waived: 0,
                forwarded: false,
                checked: None,
            },
            Some(call) => Pass {
                outcome: call.outcome,
                answer: call.answer,
                waived: call.waived,
                forwarded: call.forwarded,
                checked: None,
            },
        };
        let decision = Self::judge(thread, others, &mut pass);
        // The number as judged (an emulated result may be in `x8` now).
        let number = pass
            .checked
            .map_or(thread.context.syscall_number(), |(_, x8)| x8);
        thread.trace.number = number;
        let (enter, step) = machine(thread);
        debug_assert_eq!(step, EntryStep::Policy, "the policy stage is next");
        if decision != PolicyDecision::Verdict(PolicyVerdict::Allow) {
            let step = enter.policy(decision);
            let (end, entered) = self.audit_stage(platform, current, enter, step, &mut pass);
            let dispatched = self.end_of_entry(platform, current, esr, end, entered);
            debug_assert!(dispatched.is_none(), "only an Allow is dispatched");
            return;
        }
        debug_assert_eq!(enter.policy(decision), EntryStep::Dispatch);
        let entered = Entered {
            entry: SyscallEntry::Dispatch,
            outcome: pass.outcome,
            waived: pass.waived,
            forwarded: pass.forwarded,
        };
        let result = match syscall::decode_copy::<COPY>(&thread.context) {
            Ok(call) => self.dispatch::<P, COPY>(platform, current, call, Progress::NONE),
            Err(code) => SyscallResult::Return(code),
        };
        let _ = self.finish_syscall_with_work(platform, current, esr, &entered, result);
    }
}
