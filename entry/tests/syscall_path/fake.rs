//! A fake saved context, and a fake kernel that carries out each step the
//! entry and exit machines return as the real one does
//! (`microkernel/src/kernel/entry_work.rs`): it answers the questions
//! from a script and records every question and every effect.

use entry::{
    exit_to_user_mode, ArgIndex, AuditRoom, EntryStep, EntryStop, ExitLoopHooks, ExitStep,
    PolicyDecision, PolicyVerdict, SyscallEnter, SyscallEntry, SyscallExit, SyscallRegisters,
    TraceEntry, UserDispatch, WorkFlags,
};

/// What dispatch writes as the result of a syscall that ran.
pub const DISPATCH_RESULT: u64 = 0;
/// What the fake policy writes when it denies.
pub const DENY_ERRNO: u64 = 13;
/// What the fake tracer writes when it skips.
pub const EMULATED_RESULT: u64 = 77;
/// The filter whose policy server the fake policy asks.
pub const ASKING_FILTER: u8 = 2;

/// Saved registers: x0..x7, x8 and the PC.
#[derive(Clone, Debug, Default)]
pub struct FakeRegs {
    pub x: [u64; 8],
    pub number: u64,
    pub pc: u64,
}

impl SyscallRegisters for FakeRegs {
    fn syscall_number(&self) -> u64 {
        self.number
    }
    fn set_syscall_number(&mut self, number: u64) {
        self.number = number;
    }
    fn arg(&self, index: ArgIndex) -> u64 {
        self.x[index.index()]
    }
    fn set_arg(&mut self, index: ArgIndex, value: u64) {
        self.x[index.index()] = value;
    }
    fn return_value(&self) -> u64 {
        self.x[0]
    }
    fn set_return_value(&mut self, value: u64) {
        self.x[0] = value;
    }
    fn instruction_pointer(&self) -> u64 {
        self.pc
    }
}

/// One question answered or one effect carried out (or the dispatch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Stage 1's question.
    UserDispatch,
    /// Stage 1's effect: the handler entered.
    Redirect,
    /// Stage 2's question (the tracer's answer).
    TraceEntry,
    /// Stage 2's effect: the entry stop sent.
    SendTraceEntryStop,
    /// Policy saw syscall `number` with `x2`.
    Policy {
        number: u64,
        x2: u64,
    },
    /// Stage 3's effect: the server of this filter asked.
    AskPolicyServer {
        filter: u8,
    },
    /// Stage 4's question (room in the ring?).
    AuditRoom,
    /// Stage 4's effect: no room, the syscall waits.
    WaitForAuditRoom,
    /// Stage 4's record: syscall `number` with `x2` and the verdict.
    AuditEntry {
        number: u64,
        x2: u64,
        verdict: PolicyVerdict,
    },
    /// Stage 5's record, with the result (`None`: killed, no result).
    AuditExit {
        result: Option<u64>,
    },
    TraceExit,
    SingleStep,
    Dispatched,
    ReadWork,
    NeedResched,
    Rseq,
    NotifyResume,
}

impl Event {
    /// Does this event send a stop (ends a pass of a stopped syscall)?
    pub fn is_stop(&self) -> bool {
        matches!(
            self,
            Event::SendTraceEntryStop | Event::AskPolicyServer { .. } | Event::WaitForAuditRoom
        )
    }
}

/// The fake kernel: scripted answers, a work word, and the event log.
pub struct FakeKernel {
    pub events: Vec<Event>,
    /// The current thread's work word, as `current_work` reads it.
    pub work: WorkFlags,
    pub redirect: bool,
    pub trace_stop: TraceEntry,
    /// A tracer edit made at the entry stop: new syscall number and x2.
    pub tracer_edit: Option<(u64, u64)>,
    pub verdict: PolicyVerdict,
    /// The policy asks a server (`PolicyDecision::Ask`) instead.
    pub ask: bool,
    /// The audit ring has no room (`AuditRoom::Full`).
    pub audit_wait: bool,
    /// Work the reschedule handler raises after clearing its own bit.
    pub resched_raises: WorkFlags,
    /// False models a buggy handler that never clears its bit.
    pub handlers_clear: bool,
}

impl FakeKernel {
    pub fn new() -> Self {
        Self {
            events: Vec::new(),
            work: WorkFlags::empty(),
            redirect: false,
            trace_stop: TraceEntry::Continue,
            tracer_edit: None,
            verdict: PolicyVerdict::Allow,
            ask: false,
            audit_wait: false,
            resched_raises: WorkFlags::empty(),
            handlers_clear: true,
        }
    }

    fn clear(&mut self, bit: WorkFlags) {
        if self.handlers_clear {
            self.work.remove(bit);
        }
    }

    /// Drives the entry machine from `start` to the end of the pass, as
    /// the kernel does: answers each question, carries out the last step.
    pub fn enter(
        &mut self,
        regs: &mut FakeRegs,
        (enter, mut step): (SyscallEnter, EntryStep),
    ) -> SyscallEntry {
        loop {
            step = match step {
                EntryStep::UserDispatch => {
                    self.events.push(Event::UserDispatch);
                    enter.user_dispatch(if self.redirect {
                        UserDispatch::Redirected
                    } else {
                        UserDispatch::Continue
                    })
                }
                EntryStep::TraceEntry => {
                    self.events.push(Event::TraceEntry);
                    if let Some((number, x2)) = self.tracer_edit {
                        regs.set_syscall_number(number);
                        regs.set_arg(ArgIndex::X2, x2);
                    }
                    if self.trace_stop == TraceEntry::Skip || self.work.contains(WorkFlags::SYSEMU)
                    {
                        regs.set_return_value(EMULATED_RESULT);
                    }
                    enter.trace_entry(self.trace_stop)
                }
                EntryStep::Policy => {
                    let (number, x2) = (regs.syscall_number(), regs.arg(ArgIndex::X2));
                    self.events.push(Event::Policy { number, x2 });
                    enter.policy(if self.ask {
                        PolicyDecision::Ask {
                            filter: ASKING_FILTER,
                        }
                    } else {
                        if self.verdict == PolicyVerdict::Deny {
                            regs.set_return_value(DENY_ERRNO);
                        }
                        PolicyDecision::Verdict(self.verdict)
                    })
                }
                EntryStep::AuditRoom(verdict) => {
                    self.events.push(Event::AuditRoom);
                    enter.audit_room(
                        verdict,
                        if self.audit_wait {
                            AuditRoom::Full
                        } else {
                            AuditRoom::Room
                        },
                    )
                }
                EntryStep::WriteAuditEntry(verdict) => {
                    let (number, x2) = (regs.syscall_number(), regs.arg(ArgIndex::X2));
                    self.events.push(Event::AuditEntry {
                        number,
                        x2,
                        verdict,
                    });
                    enter.audit_entry_written(verdict)
                }
                end => {
                    match end {
                        EntryStep::Redirect => {
                            regs.pc = 0x4000;
                            self.events.push(Event::Redirect);
                        }
                        EntryStep::SendTraceEntryStop => {
                            self.events.push(Event::SendTraceEntryStop)
                        }
                        EntryStep::AskPolicyServer { filter } => {
                            self.events.push(Event::AskPolicyServer { filter })
                        }
                        EntryStep::WaitForAuditRoom(_) => self.events.push(Event::WaitForAuditRoom),
                        EntryStep::Dispatch => {
                            self.events.push(Event::Dispatched);
                            regs.set_return_value(DISPATCH_RESULT);
                        }
                        _ => {}
                    }
                    return end.entry().expect("an end step");
                }
            };
        }
    }

    /// Drives the exit machine of a syscall whose entry ended as `entry`,
    /// with `work` read after dispatch, as the kernel does.
    pub fn exit(
        &mut self,
        regs: &mut FakeRegs,
        entry: SyscallEntry,
        work: WorkFlags,
    ) -> UserReturn {
        let mut exit = SyscallExit::new(entry, work);
        loop {
            match exit.next_step() {
                ExitStep::WriteAuditRecord { with_result } => {
                    let result = with_result.then(|| regs.return_value());
                    self.events.push(Event::AuditExit { result });
                }
                ExitStep::SendTraceExitStop => self.events.push(Event::TraceExit),
                ExitStep::ReportSingleStep => self.events.push(Event::SingleStep),
                ExitStep::ExitToUser => {
                    let current = self.current_work();
                    let left_pending = exit_to_user_mode(self, current);
                    return UserReturn::Resume { left_pending };
                }
                ExitStep::Killed => return UserReturn::Killed,
                ExitStep::Stopped => return UserReturn::Stopped,
            }
        }
    }
}

impl ExitLoopHooks for FakeKernel {
    fn current_work(&mut self) -> WorkFlags {
        self.events.push(Event::ReadWork);
        self.work
    }

    fn handle_need_resched(&mut self) {
        self.events.push(Event::NeedResched);
        self.clear(WorkFlags::NEED_RESCHED);
        self.work.insert(self.resched_raises);
    }

    fn handle_rseq(&mut self) {
        self.events.push(Event::Rseq);
        self.clear(WorkFlags::RSEQ);
    }

    fn handle_notify_resume(&mut self) {
        self.events.push(Event::NotifyResume);
        self.clear(WorkFlags::NOTIFY_RESUME);
    }
}

/// How the fake kernel's thread leaves the syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserReturn {
    /// Back to user mode; exit work left at the loop's cap.
    Resume { left_pending: WorkFlags },
    /// Killed: never back to user mode.
    Killed,
    /// Stopped in its entry work.
    Stopped,
}

/// A syscall with number 5, capability pointer 0x10 and x2 = 2.
pub fn regs() -> FakeRegs {
    let mut regs = FakeRegs {
        number: 5,
        pc: 0x1000,
        ..FakeRegs::default()
    };
    regs.x[0] = 0x10;
    regs.x[2] = 2;
    regs
}

/// One syscall through the slow path, as the kernel runs it; the thread's
/// syscall work is `work` (and `kernel.work` gets it too).
pub fn run_syscall(
    kernel: &mut FakeKernel,
    regs: &mut FakeRegs,
    work: WorkFlags,
) -> (SyscallEntry, UserReturn) {
    kernel.work.insert(work);
    let entry = kernel.enter(regs, SyscallEnter::start(work));
    let user_return = kernel.exit(regs, entry, work);
    (entry, user_return)
}

/// Resumes a syscall stopped at `stop`, as the kernel does once the
/// answer has come.
pub fn resume(
    kernel: &mut FakeKernel,
    regs: &mut FakeRegs,
    work: WorkFlags,
    stop: EntryStop,
) -> SyscallEntry {
    kernel.enter(regs, SyscallEnter::resume(work, stop))
}

/// `Resume` with nothing left pending.
pub const RESUME: UserReturn = UserReturn::Resume {
    left_pending: WorkFlags::empty(),
};
