//! The policy-only lane of the generic entry: a syscall of a thread
//! whose only syscall work is policy, judged on the thread in hand and,
//! allowed, dispatched without the entry machine asked at each stage.

use super::{Entered, Pass};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::stopped_call::{EntryOutcome, Progress};
use crate::syscall::{self, SyscallResult};
use crate::thread::ThreadId;
use entry::{EntryStep, PolicyDecision, PolicyVerdict, SyscallEnter, SyscallEntry};

impl Kernel {
    /// A new syscall of a thread whose only syscall work is policy
    /// (`WorkFlags::POLICY`, that its no-entry-work mask does not excuse
    /// for this number): stage 3 (its filters' verdict) on the thread in
    /// hand and, allowed, the dispatch and the exit stages, without the
    /// entry machine asked at each stage: for this work word it asks
    /// only the policy question, and an `Allow` ends the pass with the
    /// dispatch (checked in debug builds). Any other verdict goes on
    /// through the machine from the policy stage, with the decision made
    /// here. Asked step by step, the machine, its pass kept between two
    /// calls and a second look at the thread cost the evaluated `Allow`
    /// some 100 instructions more. (A dispatch copy of its own,
    /// `syscall::JUDGED_COPY`, as `syscall_audited` has.)
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn syscall_judged<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) {
        let thread = &self.objects[current];
        // The memory a verdict may depend on is copied first, once.
        if thread
            .verdicts
            .needs_memory(thread.context.syscall_number())
        {
            self.take_judged_memory(platform, current);
        }
        let Some((thread, others)) = self.objects.split_thread(current) else {
            unreachable!("the current thread is a thread");
        };
        let mut pass = Pass {
            outcome: EntryOutcome::Run,
            answer: None,
            waived: 0,
            forwarded: false,
            checked: None,
        };
        let decision = Self::judge(thread, others, &mut pass);
        // The number as judged (an emulated result may be in `x8` now).
        let number = pass
            .checked
            .map_or(thread.context.syscall_number(), |(_, x8)| x8);
        thread.trace.number = number;
        let (enter, step) = SyscallEnter::start(thread.work);
        debug_assert_eq!(step, EntryStep::Policy, "policy is the only entry work");
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
            waived: 0,
            forwarded: false,
        };
        let result = match syscall::decode_copy::<{ syscall::JUDGED_COPY }>(&thread.context) {
            Ok(call) => self.dispatch::<P, { syscall::JUDGED_COPY }>(
                platform,
                current,
                call,
                Progress::NONE,
            ),
            Err(code) => SyscallResult::Return(code),
        };
        self.finish_syscall_with_work(platform, current, esr, &entered, result);
    }
}
