//! The trace-only lane of the generic entry: a syscall of a thread whose
//! only syscall work is tracing, stopped at its entry and, once its tracer
//! says "continue", dispatched without the entry machine asked at each
//! stage.

use super::Entered;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::stopped_call::{CallStop, EntryOutcome, Progress, Resumed, StopAnswer};
use crate::syscall::{self, SyscallResult};
use crate::thread::ThreadId;
use entry::{EntryStep, EntryStop, SyscallEnter, SyscallEntry, TraceEntry, WorkFlags};

impl Kernel {
    /// A new syscall of a thread whose only syscall work is tracing
    /// (`WorkFlags::TRACE`). For that work word the entry machine asks one
    /// question, the tracer's answer, which a new syscall does not have:
    /// it stops at its entry (`SendTraceEntryStop`), with nothing decided
    /// (checked against the machine in debug builds). So the kernel keeps
    /// the call and sends the stop (`stop_call`) at once, as
    /// `enter_with_work` and `end_of_entry` would after asking. Inlined
    /// into its one caller, `syscall_with_work`, which routes such a
    /// syscall here.
    #[inline(always)]
    pub(in crate::kernel) fn syscall_traced<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) {
        let thread = &mut self.objects[current];
        debug_assert_eq!(
            Self::traced_entry_step(thread.work, None),
            EntryStep::SendTraceEntryStop
        );
        // The number as the stop shows it (`enter_with_work` sets it at
        // the end of every pass).
        thread.trace.number = thread.context.syscall_number();
        let entered = Entered {
            entry: SyscallEntry::Stopped(EntryStop::TraceEntry),
            outcome: EntryOutcome::Run,
            waived: 0,
            forwarded: false,
        };
        self.stop_call(
            platform,
            current,
            esr,
            EntryStep::SendTraceEntryStop,
            &entered,
        );
    }

    /// A call of a thread whose only syscall work is tracing, stopped at
    /// its entry, whose tracer said "continue" (`continue_call`; the
    /// registers are the kept call's, as the tracer left them): for that
    /// work word the machine's next step is the dispatch (checked in debug
    /// builds), so the call is dispatched here, with a dispatch copy of
    /// its own (`syscall::TRACED_COPY`), and its exit stages run as
    /// `syscall_with_work` runs them (the exit stop is owed, and sent on
    /// the way back to EL0). Any other answer (a skip, none) and a call
    /// stopped elsewhere go through `syscall_with_work`.
    #[inline(never)]
    pub(in crate::kernel) fn continue_traced<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        resumed: &Resumed,
    ) {
        let continues = resumed.at == CallStop::Entry(EntryStop::TraceEntry)
            && resumed.answer == Some(StopAnswer::TraceContinue);
        if !continues {
            return self.syscall_with_work(platform, current, esr, Some(resumed));
        }
        let thread = &mut self.objects[current];
        debug_assert_eq!(
            Self::traced_entry_step(thread.work, Some(TraceEntry::Continue)),
            EntryStep::Dispatch
        );
        // The number as the tracer left it (the exit stop shows it).
        thread.trace.number = thread.context.syscall_number();
        let entered = Entered {
            entry: SyscallEntry::Dispatch,
            outcome: resumed.outcome,
            waived: resumed.waived,
            forwarded: resumed.forwarded,
        };
        let result = match syscall::decode_copy::<{ syscall::TRACED_COPY }>(&thread.context) {
            Ok(call) => self.dispatch::<P, { syscall::TRACED_COPY }>(
                platform,
                current,
                call,
                Progress::NONE,
            ),
            Err(code) => SyscallResult::Return(code),
        };
        let _ = self.finish_syscall_with_work(platform, current, esr, &entered, result);
    }

    /// The step the entry machine ends a pass with for `work` (tracing
    /// alone) given the tracer's answer (`None`: a new syscall): what the
    /// lane does instead of asking (debug builds check it).
    fn traced_entry_step(work: WorkFlags, answer: Option<TraceEntry>) -> EntryStep {
        debug_assert_eq!(work.intersection(WorkFlags::SYSCALL_WORK), WorkFlags::TRACE);
        let (enter, step) = match answer {
            None => SyscallEnter::start(work),
            Some(_) => SyscallEnter::resume(work, EntryStop::TraceEntry),
        };
        debug_assert_eq!(step, EntryStep::TraceEntry);
        enter.trace_entry(answer.unwrap_or(TraceEntry::Stop))
    }
}
