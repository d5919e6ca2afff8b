//! A fake saved context and a fake kernel that records each hook call.

use entry::{
    syscall_enter_from_user_mode, syscall_exit_to_user_mode, ArgIndex, AuditEntry, EntryHooks,
    PolicyDecision, PolicyVerdict, SyscallEntry, SyscallRegisters, TraceEntry, UserDispatch,
    UserReturn, WorkFlags,
};

/// What dispatch writes as the result of a syscall that ran.
pub const DISPATCH_RESULT: u64 = 0;
/// What the fake policy writes when it denies.
pub const DENY_ERRNO: u64 = 13;
/// What the fake tracer writes when it skips.
pub const EMULATED_RESULT: u64 = 77;

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

/// One recorded hook call (or the dispatch itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    UserDispatch,
    TraceEntry,
    /// Policy saw syscall `number` with `x2`.
    Policy {
        number: u64,
        x2: u64,
    },
    /// Audit saw syscall `number` with `x2` and the verdict.
    AuditEntry {
        number: u64,
        x2: u64,
        verdict: PolicyVerdict,
    },
    AuditExit {
        result: u64,
    },
    TraceExit,
    SingleStep,
    Dispatched,
    ReadWork,
    NeedResched,
    NotifyResume,
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
    /// The policy hook asks a server (`PolicyDecision::Ask`) instead.
    pub ask: bool,
    /// The audit entry hook finds no room (`AuditEntry::Wait`).
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
}

impl EntryHooks for FakeKernel {
    type Regs = FakeRegs;

    fn user_dispatch(&mut self, regs: &mut FakeRegs) -> UserDispatch {
        self.events.push(Event::UserDispatch);
        if self.redirect {
            regs.pc = 0x4000;
            UserDispatch::Redirected
        } else {
            UserDispatch::Continue
        }
    }

    fn trace_entry(&mut self, regs: &mut FakeRegs) -> TraceEntry {
        self.events.push(Event::TraceEntry);
        if let Some((number, x2)) = self.tracer_edit {
            regs.set_syscall_number(number);
            regs.set_arg(ArgIndex::X2, x2);
        }
        if self.trace_stop == TraceEntry::Skip || self.work.contains(WorkFlags::SYSEMU) {
            regs.set_return_value(EMULATED_RESULT);
        }
        self.trace_stop
    }

    fn policy(&mut self, regs: &mut FakeRegs) -> PolicyDecision {
        let (number, x2) = (regs.syscall_number(), regs.arg(ArgIndex::X2));
        self.events.push(Event::Policy { number, x2 });
        if self.ask {
            return PolicyDecision::Ask;
        }
        if self.verdict == PolicyVerdict::Deny {
            regs.set_return_value(DENY_ERRNO);
        }
        PolicyDecision::Verdict(self.verdict)
    }

    fn audit_entry(&mut self, regs: &FakeRegs, verdict: PolicyVerdict) -> AuditEntry {
        let (number, x2) = (regs.syscall_number(), regs.arg(ArgIndex::X2));
        self.events.push(Event::AuditEntry {
            number,
            x2,
            verdict,
        });
        if self.audit_wait {
            AuditEntry::Wait
        } else {
            AuditEntry::Continue
        }
    }

    fn audit_exit(&mut self, _regs: &FakeRegs, result: u64) {
        self.events.push(Event::AuditExit { result });
    }

    fn trace_exit(&mut self, _regs: &mut FakeRegs) {
        self.events.push(Event::TraceExit);
    }

    fn single_step(&mut self, _regs: &mut FakeRegs) {
        self.events.push(Event::SingleStep);
    }

    fn current_work(&mut self) -> WorkFlags {
        self.events.push(Event::ReadWork);
        self.work
    }

    fn handle_need_resched(&mut self) {
        self.events.push(Event::NeedResched);
        self.clear(WorkFlags::NEED_RESCHED);
        self.work.insert(self.resched_raises);
    }

    fn handle_notify_resume(&mut self) {
        self.events.push(Event::NotifyResume);
        self.clear(WorkFlags::NOTIFY_RESUME);
    }
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

/// One syscall through the slow path, as the arch runs it; the thread's
/// syscall work is `work` (and `kernel.work` gets it too).
pub fn run_syscall(
    kernel: &mut FakeKernel,
    regs: &mut FakeRegs,
    work: WorkFlags,
) -> (SyscallEntry, UserReturn) {
    kernel.work.insert(work);
    let entry = syscall_enter_from_user_mode(kernel, regs, work);
    if entry == SyscallEntry::Dispatch {
        kernel.events.push(Event::Dispatched);
        regs.set_return_value(DISPATCH_RESULT);
    }
    let user_return = syscall_exit_to_user_mode(kernel, regs, entry, work);
    (entry, user_return)
}

/// `Resume` with nothing left pending.
pub const RESUME: UserReturn = UserReturn::Resume {
    left_pending: WorkFlags::empty(),
};
