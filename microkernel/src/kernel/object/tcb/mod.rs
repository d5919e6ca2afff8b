//! TCB invocations: priority and MCP, suspend and resume, registers, and
//! threads made from user space (retype, configure, resume).
//!
//! A TCB capability names one thread. For the one thread the kernel
//! starts, the root task, the kernel makes the TCB object and destroys it
//! when the thread ends. A thread made from user space comes the other way
//! round: `Retype` of a TCB makes it (inactive, in the TCB's memory),
//! `TcbConfigure` gives it a CSpace and a priority (never a program: its
//! `x4` must be `abi::tcb::NO_PROGRAM`), `TcbSetSpace` an address space
//! its creator built (see `set_space.rs`),
//! `TcbResume` starts it, and destroying its TCB object (the last
//! capability deleted, or its Untyped revoked) ends it; if it ends first
//! (exit, kill, fault) its TCB stays, naming the ended thread, until it is
//! restarted (`TcbRestart`) or destroyed (`supervision.rs`). Every
//! operation is checked for
//! type and rights first; priorities are checked against the *caller's*
//! maximum controlled priority (MCP), as in seL4, so no thread can lift any
//! thread, itself included, above what it was trusted with.

pub(in crate::kernel) mod end;
pub(in crate::kernel) mod set_space;
pub(in crate::kernel) mod supervision;

use crate::cap::{CNodeId, ObjectId};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::scheduler::Priority;
use crate::syscall::{SyscallResult, TcbOperation};
use crate::thread::KernelMessage;
use crate::thread::{ThreadId, ThreadName, ThreadState};
use abi::cap::{CapType, Rights};
use abi::tcb::{Register, NZCV_MASK};
use abi::ErrorCode;
use entry::WorkFlags;

impl Kernel {
    /// A TCB syscall by `current` through the capability at `cptr`.
    /// Inlined into `dispatch` (its longer cases are out of line): as a
    /// call, its operation argument made the compiler keep the whole
    /// decoded `Call` in memory, which cost every syscall on the slow path
    /// without work (see `syscall::decode_copy`).
    #[inline(always)]
    pub(in crate::kernel) fn tcb_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
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
        // Another CPU running it stops first: every operation finds it
        // ready, waiting or suspended, as on one CPU (`cores.rs`).
        self.stop_elsewhere(platform, target);
        let caller_mcp = self.objects[current].mcp;
        let code = match operation {
            TcbOperation::SetPriority(priority) if priority > caller_mcp => ErrorCode::Denied,
            TcbOperation::SetPriority(priority) => {
                self.set_priority(current, target, priority);
                ErrorCode::Ok
            }
            TcbOperation::SetMcp(mcp) if mcp > caller_mcp => ErrorCode::Denied,
            TcbOperation::SetMcp(mcp) => {
                self.objects[target].mcp = mcp;
                ErrorCode::Ok
            }
            TcbOperation::Suspend => {
                self.suspend(platform, target);
                ErrorCode::Ok
            }
            TcbOperation::Resume => match self.objects[target].state() {
                ThreadState::Suspended => {
                    self.make_ready(target);
                    ErrorCode::Ok
                }
                // A new thread starts once it has a program.
                ThreadState::Inactive if self.objects[target].space.is_some() => {
                    self.make_ready(target);
                    ErrorCode::Ok
                }
                ThreadState::Inactive => ErrorCode::InvalidArgument,
                // An ended thread runs again only through `TcbRestart`,
                // with registers of its supervisor's choosing.
                ThreadState::Ended | ThreadState::EndPending { .. } => ErrorCode::InvalidArgument,
                _ => ErrorCode::Ok,
            },
            TcbOperation::ReadRegister(register) => {
                let value = self.read_register(target, register);
                self.objects[current].context.set_value(value);
                ErrorCode::Ok
            }
            TcbOperation::WriteRegister(register, value) => {
                match self.write_register(platform, current, target, register, value) {
                    Ok(cancelled) => {
                        // The second result says whether a syscall the
                        // thread was in was cancelled by the write.
                        self.objects[current]
                            .context
                            .set_value(u64::from(cancelled));
                        ErrorCode::Ok
                    }
                    Err(code) => code,
                }
            }
            TcbOperation::AttachTracer(endpoint) => {
                return self.attach_tracer(current, target, endpoint).into();
            }
            TcbOperation::DetachTracer(endpoint) => {
                return self.detach_tracer_through(current, target, endpoint).into();
            }
            TcbOperation::SetAffinity(cpu) => {
                let code = self.set_affinity(platform, current, target, cpu);
                if code == ErrorCode::Ok {
                    let cpus = u64::from(self.cores_online());
                    self.objects[current].context.set_value(cpus);
                }
                code
            }
        };
        SyscallResult::Return(code)
    }

    /// `TcbSetName` by `current` (registers as [`crate::syscall::name_arguments`]
    /// checked them): the thread of the TCB capability (write right) is
    /// named by the bytes read from the caller's memory, if
    /// `abi::tcb::is_valid_name` takes them; nothing changes otherwise.
    #[inline(never)]
    pub(in crate::kernel) fn tcb_set_name<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Result<(), ErrorCode> {
        let (cptr, address, len) = crate::syscall::name_arguments(&self.objects[current].context)?;
        let cap = self.thread_cap(current, cptr, CapType::Tcb, Rights::WRITE)?;
        let target = self
            .tcb_thread(cap.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let mut bytes = [0u8; abi::tcb::MAX_NAME_BYTES];
        let text = bytes.get_mut(..len).ok_or(ErrorCode::InvalidArgument)?;
        self.thread_space(current)
            .ok_or(ErrorCode::InvalidAddress)?
            .copy_from_user(platform, address, text)
            .map_err(|_| ErrorCode::InvalidAddress)?;
        let name = ThreadName::from_user(text).ok_or(ErrorCode::InvalidArgument)?;
        // A line the thread left open would change its prefix mid-line.
        if self.open_line == Some(target) {
            self.end_user_lines(platform);
        }
        self.objects[target].name = name;
        Ok(())
    }

    /// A TCB object was retyped from user space by `creator`: its thread
    /// (in the TCB's own record) is inactive, with nothing but the TCB and
    /// the creator's confinement (`inherit_confinement`).
    #[inline(never)]
    pub(in crate::kernel) fn tcb_created(&mut self, creator: ThreadId, thread: ThreadId) {
        let number = self.next_thread_number();
        // It starts on its creator's CPU.
        let affinity = self.objects[creator].affinity;
        let t = &mut self.objects[thread];
        t.set_affinity(affinity);
        t.make_inactive();
        t.created_by_user = true;
        t.name = ThreadName::TASK;
        t.number = number;
        self.inherit_confinement(creator, thread);
    }

    /// A thread made by a confined thread is confined as its creator is,
    /// as seccomp filters and audit carry across Linux's `clone()`: it
    /// gets every filter of the creator's stack with the policy server
    /// each was attached with, the creator's audit (same ring,
    /// notification, mode and badge; records tell the threads apart by
    /// their thread identifier), and its tracer (same endpoint and badge;
    /// stops carry the thread identifier too). The creator holds every
    /// right over the new TCB, and none of them lifts what was inherited:
    /// filters cannot be taken off, audit can be turned off only with the
    /// ring's Frame, a tracer detached only with its endpoint. User
    /// dispatch is not inherited: it names the creator's own code and
    /// memory, and only ever takes syscalls away from a thread.
    fn inherit_confinement(&mut self, creator: ThreadId, child: ThreadId) {
        let parent = &self.objects[creator];
        let (stack, audit, tracer) = (parent.filters.clone(), parent.audit, parent.tracer);
        for attached in stack {
            // The stacks are the same size: this cannot fail.
            let _ = self.push_filter(child, attached);
        }
        if audit.is_some() {
            self.attach_audit(child, audit);
        }
        if let Some(tracer) = tracer {
            let thread = &mut self.objects[child];
            thread.tracer = Some(tracer);
            thread.work.insert(WorkFlags::TRACE);
            thread.recompute_no_entry_work();
        }
    }

    /// `TcbConfigure` (its `x4` was `abi::tcb::NO_PROGRAM`, checked by
    /// the decoder): gives the new thread named by the TCB capability at
    /// `tcb_cptr` the CNode at `cnode_cptr` as its CSpace and `priority`
    /// as its priority and MCP, before or after `TcbSetSpace` gives it an
    /// address space. The kernel loads no program for user space: the
    /// creator maps the thread's code. It stays inactive until
    /// `TcbResume`.
    #[inline(never)]
    pub(in crate::kernel) fn tcb_configure(
        &mut self,
        current: ThreadId,
        tcb_cptr: u64,
        cnode_cptr: u64,
        priority: Priority,
    ) -> Result<(), ErrorCode> {
        let tcb = self.thread_cap(current, tcb_cptr, CapType::Tcb, Rights::WRITE)?;
        let cnode = self.thread_cap(current, cnode_cptr, CapType::CNode, Rights::WRITE)?;
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        if self.objects[target].state() != ThreadState::Inactive {
            return Err(ErrorCode::InvalidArgument);
        }
        if priority > self.objects[current].mcp {
            return Err(ErrorCode::Denied);
        }
        let cspace = CNodeId(cnode.object());
        self.objects.cnode_slots(cspace).map_err(ErrorCode::from)?;
        self.set_cspace(target, cspace).map_err(ErrorCode::from)?;
        let thread = &mut self.objects[target];
        thread.set_priority(priority);
        thread.mcp = priority;
        Ok(())
    }

    /// The thread a TCB object stands for: a live one, or an ended one
    /// kept for its supervisor (`supervision.rs`); not one that is ending
    /// or gone.
    pub(in crate::kernel) fn tcb_thread(&self, tcb: ObjectId) -> Option<ThreadId> {
        let thread = ThreadId::of(tcb);
        self.objects
            .thread(thread)
            .filter(|t| {
                t.state() != ThreadState::Free
                    && (!t.state().has_ended() || t.state().is_kept_end())
            })
            .map(|_| thread)
    }

    /// Gives `target` a new priority, moving it within the run queue and
    /// asking for a reschedule if the running thread is no longer the most
    /// urgent.
    fn set_priority(&mut self, current: ThreadId, target: ThreadId, priority: Priority) {
        let old = self.objects[target].priority;
        if self.objects[target].state() == ThreadState::Ready {
            let home = self.home_of(target);
            self.run_queues[home]
                .ready
                .remove(&mut self.objects, target, old);
            self.objects[target].set_priority(priority);
            self.make_ready(target);
        }
        self.objects[target].set_priority(priority);
        let running = self.objects[current].priority;
        if self.run_queues[self.cpu % arch::layout::MAX_CPUS]
            .ready
            .highest_priority()
            .is_some_and(|highest| highest > running)
        {
            self.objects[current].work.insert(WorkFlags::NEED_RESCHED);
        }
    }

    /// Stops `target` wherever it is. A thread waiting in IPC leaves the
    /// queue; its syscall returns `Interrupted` when it is resumed (a
    /// faulting thread instead runs its faulting instruction again, which
    /// faults afresh). A syscall stopped for its tracer, a policy server or
    /// audit room, or about to go on, is cancelled the same way
    /// (`cancel_call`). A server that owes a reply keeps owing it.
    #[inline(never)]
    fn suspend<P: Platform>(&mut self, platform: &mut P, target: ThreadId) {
        if self.cancel_call(platform, target) {
            // Out of any queue now, and `Interrupted` is its result.
            let thread = &self.objects[target];
            if thread.state() == ThreadState::Ready {
                let priority = thread.priority;
                let home = self.home_of(target);
                self.run_queues[home]
                    .ready
                    .remove(&mut self.objects, target, priority);
            }
            if self.current == Some(target) {
                self.current = None;
            }
            self.objects[target].suspend();
            return;
        }
        match self.objects[target].state() {
            ThreadState::Suspended => return,
            ThreadState::Ready => {
                let priority = self.objects[target].priority;
                let home = self.home_of(target);
                self.run_queues[home]
                    .ready
                    .remove(&mut self.objects, target, priority);
            }
            ThreadState::Running => {
                if self.current == Some(target) {
                    self.current = None;
                }
            }
            ThreadState::BlockedOnSend {
                kernel_message: true,
                ..
            }
            | ThreadState::BlockedOnAnswer => {
                self.cancel_wait(target);
                let thread = &mut self.objects[target];
                // A fault is withdrawn; an exit or step stop ends as if
                // the tracer had said "continue" (an entry stop or a
                // policy request is a stopped call's, cancelled above).
                if let Some(KernelMessage::TraceStop(stop)) = thread.take_kernel_message() {
                    thread.abandon_trace_stop(stop);
                }
            }
            ThreadState::BlockedOnSend { .. }
            | ThreadState::BlockedOnReceive { .. }
            | ThreadState::BlockedOnReply
            | ThreadState::BlockedOnNotification { .. } => {
                self.cancel_wait(target);
                self.objects[target]
                    .context
                    .end_wait_with(ErrorCode::Interrupted);
            }
            // Only a stopped call waits for audit room (cancelled above).
            ThreadState::BlockedOnAudit => {}
            // An ended thread stays ended (only `TcbRestart` runs it); a
            // new thread is not running yet (and only `TcbResume` starts
            // it).
            ThreadState::Free
            | ThreadState::Exited(_)
            | ThreadState::Faulted(_)
            | ThreadState::Ended
            | ThreadState::EndPending { .. }
            | ThreadState::Inactive => return,
        }
        self.objects[target].suspend();
    }

    fn read_register(&self, target: ThreadId, register: Register) -> u64 {
        let context = &self.objects[target].context;
        match register {
            Register::X(n) => context.register(usize::from(n)),
            Register::Sp => context.sp(),
            Register::Pc => context.pc(),
            Register::Nzcv => context.spsr & NZCV_MASK,
        }
    }

    /// Writes a register of `target` for `current`; only NZCV of PSTATE
    /// can change (decode refused other bits), so the thread always
    /// returns to EL0t with interrupts on. `true` if the write cancelled a
    /// syscall the thread was in.
    ///
    /// A write to one of `x0..x8` (a syscall's number, capability, message
    /// info and arguments) of a thread inside a syscall (stopped for its
    /// tracer, a policy server or audit room, about to go on, or blocked
    /// in IPC) cancels that syscall first: it returns `Interrupted` and
    /// does not run, then the write takes effect. So no write is ever
    /// overwritten by a call that goes on, and no call runs that was not
    /// judged as it runs. A write to the PC cancels a call stopped for its
    /// tracer, a policy server or audit room the same way (a rule may
    /// judge the PC), not a wait in IPC. Other registers are only
    /// written. A thread's own
    /// `x0` and `x8` cannot be written (`InvalidArgument`): this syscall's
    /// results go there.
    #[inline(never)]
    fn write_register<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        target: ThreadId,
        register: Register,
        value: u64,
    ) -> Result<bool, ErrorCode> {
        let call_register = matches!(register, Register::X(n) if n <= 8);
        if target == current && matches!(register, Register::X(0 | 8)) {
            return Err(ErrorCode::InvalidArgument);
        }
        // The PC is judged too (a rule may look at it, `Operand::Pc`): a
        // write to it cancels a call stopped after a verdict, which would
        // otherwise go on as judged at another PC. (Not a wait in IPC or
        // for a fault handler: those were judged as they began, and a
        // fault handler moves the PC to resume its thread.)
        let cancelled = target != current
            && if call_register {
                self.cancel_syscall(platform, target)
            } else {
                register == Register::Pc && self.cancel_stopped_call(platform, target)
            };
        let context = &mut self.objects[target].context;
        match register {
            Register::X(n) => context.set_register(usize::from(n), value),
            Register::Sp => context.set_sp(value),
            Register::Pc => context.set_pc(value),
            Register::Nzcv => context.spsr = (context.spsr & !NZCV_MASK) | value,
        }
        Ok(cancelled)
    }

    /// Cancels the call `target` has stopped (`cancel_call`), which then
    /// returns `Interrupted` when the thread runs; `false` if it has none.
    fn cancel_stopped_call<P: Platform>(&mut self, platform: &mut P, target: ThreadId) -> bool {
        if !self.cancel_call(platform, target) {
            return false;
        }
        if self.objects[target].state() != ThreadState::Ready {
            self.make_ready(target);
        }
        true
    }

    /// Cancels whatever syscall `target` is inside (not its own running
    /// one): a stopped call (`cancel_call`), or a wait in IPC, which ends
    /// with `Interrupted` as a suspension would end it (the thread runs on).
    /// `false` if it was in none.
    fn cancel_syscall<P: Platform>(&mut self, platform: &mut P, target: ThreadId) -> bool {
        if self.cancel_stopped_call(platform, target) {
            return true;
        }
        match self.objects[target].state() {
            ThreadState::BlockedOnSend {
                kernel_message: false,
                ..
            }
            | ThreadState::BlockedOnReceive { .. }
            | ThreadState::BlockedOnReply
            | ThreadState::BlockedOnNotification { .. } => {
                self.cancel_wait(target);
                self.objects[target]
                    .context
                    .end_wait_with(ErrorCode::Interrupted);
                self.make_ready(target);
                true
            }
            _ => false,
        }
    }
}
