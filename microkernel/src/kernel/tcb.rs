//! TCB invocations: priority and MCP, suspend and resume, registers.
//!
//! A TCB capability names one thread (the kernel makes the TCB object when
//! it starts the thread and destroys it when the thread ends, so a TCB
//! capability never outlives its thread). Every operation is checked for
//! type and rights first; priorities are checked against the *caller's*
//! maximum controlled priority (MCP), as in seL4, so no thread can lift any
//! thread, itself included, above what it was trusted with.

use super::Kernel;
use crate::cap::ObjectId;
use crate::platform::Platform;
use crate::scheduler::Priority;
use crate::syscall::{SyscallResult, TcbOperation};
use crate::thread::{ThreadId, ThreadState};
use abi::cap::CapType;
use abi::tcb::{Register, NZCV_MASK};
use abi::ErrorCode;
use entry::WorkFlags;

impl Kernel {
    /// A TCB syscall by `current` through the capability at `cptr`.
    pub(super) fn tcb_syscall<P: Platform>(
        &mut self,
        _platform: &mut P,
        current: ThreadId,
        operation: TcbOperation,
        cptr: u64,
    ) -> SyscallResult {
        let cap = match self.thread_cap(current, cptr, CapType::Tcb, operation.needed_rights()) {
            Ok(cap) => cap,
            Err(code) => return SyscallResult::Return(code),
        };
        let Some(target) = self.tcb_thread(cap.object()) else {
            // Unreachable while TCB objects live exactly as long as their
            // threads; a typed error rather than a panic all the same.
            return SyscallResult::Return(ErrorCode::InvalidCapability);
        };
        let caller_mcp = self.threads[current.index()].mcp;
        let code = match operation {
            TcbOperation::SetPriority(priority) if priority > caller_mcp => ErrorCode::Denied,
            TcbOperation::SetPriority(priority) => {
                self.set_priority(current, target, priority);
                ErrorCode::Ok
            }
            TcbOperation::SetMcp(mcp) if mcp > caller_mcp => ErrorCode::Denied,
            TcbOperation::SetMcp(mcp) => {
                self.threads[target.index()].mcp = mcp;
                ErrorCode::Ok
            }
            TcbOperation::Suspend => {
                self.suspend(target);
                ErrorCode::Ok
            }
            TcbOperation::Resume => {
                if self.threads[target.index()].state == ThreadState::Suspended {
                    self.make_ready(target);
                }
                ErrorCode::Ok
            }
            TcbOperation::ReadRegister(register) => {
                let value = self.read_register(target, register);
                self.threads[current.index()].context.x[8] = value;
                ErrorCode::Ok
            }
            TcbOperation::WriteRegister(register, value) => {
                self.write_register(target, register, value);
                ErrorCode::Ok
            }
            TcbOperation::AttachTracer(endpoint) => {
                match self.attach_tracer(current, target, endpoint) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                }
            }
            TcbOperation::DetachTracer => {
                self.detach_tracer(target);
                ErrorCode::Ok
            }
        };
        SyscallResult::Return(code)
    }

    /// The thread a TCB object stands for.
    pub(super) fn tcb_thread(&self, tcb: ObjectId) -> Option<ThreadId> {
        self.threads
            .iter()
            .position(|t| t.tcb == Some(tcb))
            .map(|index| ThreadId(index as u16))
    }

    /// Gives `target` a new priority, moving it within the run queue and
    /// asking for a reschedule if the running thread is no longer the most
    /// urgent.
    fn set_priority(&mut self, current: ThreadId, target: ThreadId, priority: Priority) {
        let old = self.threads[target.index()].priority;
        self.threads[target.index()].priority = priority;
        if self.threads[target.index()].state == ThreadState::Ready {
            self.run_queue.remove(target, old);
            self.make_ready(target);
        }
        let running = self.threads[current.index()].priority;
        if self
            .run_queue
            .highest_priority()
            .is_some_and(|highest| highest > running)
        {
            self.threads[current.index()]
                .work
                .insert(WorkFlags::NEED_RESCHED);
        }
    }

    /// Stops `target` wherever it is. A thread waiting in IPC leaves the
    /// queue; its syscall returns `Interrupted` when it is resumed (a
    /// faulting thread instead runs its faulting instruction again, which
    /// faults afresh). A server that owes a reply keeps owing it.
    fn suspend(&mut self, target: ThreadId) {
        match self.threads[target.index()].state {
            ThreadState::Suspended => return,
            ThreadState::Ready => {
                let priority = self.threads[target.index()].priority;
                self.run_queue.remove(target, priority);
            }
            // Its `svc` runs again once resumed (and there is room).
            ThreadState::BlockedOnAudit => {}
            ThreadState::Running => {
                if self.current == Some(target) {
                    self.current = None;
                }
            }
            ThreadState::BlockedOnSend { fault: true, .. } | ThreadState::BlockedOnFaultReply => {
                self.cancel_wait(target);
                let thread = &mut self.threads[target.index()];
                thread.pending_fault = None;
                // A syscall waiting for its policy verdict returns
                // `Interrupted`, like any other wait.
                if thread.pending_policy.take().is_some() {
                    thread.context.x[0] = ErrorCode::Interrupted.raw();
                }
                // A trace stop ends as if the tracer had said "continue".
                if let Some(stop) = thread.pending_trace.take() {
                    thread.abandon_trace_stop(stop);
                }
            }
            ThreadState::BlockedOnSend { .. }
            | ThreadState::BlockedOnReceive { .. }
            | ThreadState::BlockedOnReply
            | ThreadState::BlockedOnNotification { .. } => {
                self.cancel_wait(target);
                self.threads[target.index()].context.x[0] = ErrorCode::Interrupted.raw();
            }
            // Ended threads have no TCB object any more.
            ThreadState::Free | ThreadState::Exited(_) | ThreadState::Faulted(_) => return,
        }
        self.threads[target.index()].state = ThreadState::Suspended;
    }

    fn read_register(&self, target: ThreadId, register: Register) -> u64 {
        let context = &self.threads[target.index()].context;
        match register {
            Register::X(n) => context.x[usize::from(n)],
            Register::Sp => context.sp,
            Register::Pc => context.pc,
            Register::Nzcv => context.spsr & NZCV_MASK,
        }
    }

    /// Writes a register; only NZCV of PSTATE can change (decode refused
    /// other bits), so the thread always returns to EL0t with interrupts on.
    fn write_register(&mut self, target: ThreadId, register: Register, value: u64) {
        let context = &mut self.threads[target.index()].context;
        match register {
            Register::X(n) => context.x[usize::from(n)] = value,
            Register::Sp => context.sp = value,
            Register::Pc => context.pc = value,
            Register::Nzcv => context.spsr = (context.spsr & !NZCV_MASK) | value,
        }
    }
}
