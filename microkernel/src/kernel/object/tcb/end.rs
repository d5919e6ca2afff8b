//! A thread's end: faults and kills reported, a call cancelled, and
//! everything the thread is part of let go.

use crate::cap::ObjectId;
use crate::fault::FaultReport;
use crate::ipc::{self};
use crate::kernel::TCB_DESTROYED_STATUS;
use crate::kernel::{
    Kernel, Resume, FILTER_DESTROYED_STATUS, KERNEL_ROOT_CNODE_SLOT, KERNEL_ROOT_TCB_SLOT,
    KERNEL_ROOT_VSPACE_SLOT, KILLED_BY_POLICY, VSPACE_DESTROYED_STATUS,
};
use crate::platform::{Console, Platform};
use crate::thread::KernelMessage;
use crate::thread::{Thread, ThreadId, ThreadState};
use abi::cap::CapType;
use abi::ErrorCode;
use arch::object_memory::kind;
use core::fmt::Write;
use entry::WorkFlags;

/// What the console says of a thread the kernel ends with `state` for a
/// reason of its own (a policy or user-dispatch kill, its filter's memory
/// or its address space taken back); `None` for an exit, a fault (which
/// has its own line) and a TCB destroyed by its holder.
pub(in crate::kernel) fn kill_reason(state: ThreadState) -> Option<&'static str> {
    match state {
        ThreadState::Exited(KILLED_BY_POLICY) => Some("killed by a Kill verdict of its filters"),
        ThreadState::Exited(abi::user_dispatch::KILLED_BY_USER_DISPATCH) => {
            Some("killed: user dispatch could not save a redirected syscall's context")
        }
        ThreadState::Exited(abi::rseq::KILLED_BY_RSEQ) => {
            Some("killed: its restartable-sequence area or descriptor was bad (the line before says how)")
        }
        ThreadState::Exited(FILTER_DESTROYED_STATUS) => {
            Some("ended: the memory of a filter confining it was taken back")
        }
        ThreadState::Exited(VSPACE_DESTROYED_STATUS) => {
            Some("ended: its address space was destroyed")
        }
        _ => None,
    }
}

/// How a policy server ended, for the console line of its loss.
fn server_end(state: ThreadState) -> &'static str {
    match state {
        ThreadState::Exited(TCB_DESTROYED_STATUS) => "is gone (its TCB was destroyed)",
        ThreadState::Faulted(_) => "faulted",
        state if kill_reason(state).is_some() => "was killed",
        _ => "exited",
    }
}

impl Kernel {
    pub(in crate::kernel) fn fault<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        report: FaultReport,
    ) -> Resume {
        self.report_fault(platform, id, report);
        self.resume(platform)
    }

    /// The console line for thread `id`, ended by the kernel with `state`
    /// for `reason` (`kill_reason`); a kill in a syscall (policy's) names
    /// it. An rseq kill is on the way back to EL0, in no syscall.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn report_kill<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        state: ThreadState,
        reason: &str,
    ) {
        self.end_user_lines(platform);
        let thread = &self.objects[id];
        let (name, number) = (thread.name, thread.number);
        // The number as judged (a kept call's), else the live register.
        let number_register = thread
            .call
            .as_ref()
            .map_or(thread.context.syscall_number(), |c| c.regs[8]);
        let syscall = abi::Syscall::from_number(number_register).map_or("?", |s| s.name());
        let mut console = Console(platform);
        let in_syscall = thread.state() == ThreadState::Running || thread.call.is_some();
        if in_syscall && state != ThreadState::Exited(abi::rseq::KILLED_BY_RSEQ) {
            let _ = writeln!(
                console,
                "[kernel] thread {name}#{number} {reason} (in {syscall})"
            );
        } else {
            let _ = writeln!(console, "[kernel] thread {name}#{number} {reason}");
        }
    }

    /// A fault of thread `id`: its report goes to its fault endpoint (the
    /// thread waits for the handler's reply), or the thread stops.
    pub(in crate::kernel) fn report_fault<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        report: FaultReport,
    ) {
        self.end_user_lines(platform);
        let handler = self.objects[id]
            .fault_endpoint
            .and_then(|(e, badge)| Some((self.objects.resolve(e, CapType::Endpoint)?, badge)));
        let thread = &mut self.objects[id];
        let mut console = Console(platform);
        if let Some((endpoint, badge)) = handler {
            let _ = writeln!(
                console,
                "[kernel] thread {}#{} faulted: {report}; sent to its fault handler",
                thread.name, thread.number
            );
            // A faulting server answers nothing until its handler decides:
            // the filters it serves fail closed now (and its fault message
            // says so).
            self.lose_policy_server(platform, id, "faulted");
            self.objects[id].set_kernel_message(KernelMessage::Fault(report));
            self.send_on_behalf(platform, id, endpoint, badge);
            return;
        }
        let _ = writeln!(
            console,
            "[kernel] thread {}#{} stopped: {report}",
            thread.name, thread.number
        );
        self.end_thread(platform, id, ThreadState::Faulted(report));
    }

    /// Cancels `target`'s stopped syscall, if it has one (waiting for its
    /// tracer, a policy server or audit room, or answered and about to go
    /// on): it leaves what it waits in, does not run, and returns
    /// `Interrupted`; its audit record says "cancelled", and a tracer that
    /// saw its entry gets its exit stop. The caller decides the thread's
    /// state (suspended, or ready). `false` if it had none.
    pub(in crate::kernel) fn cancel_call<P: Platform>(
        &mut self,
        platform: &mut P,
        target: ThreadId,
    ) -> bool {
        let Some(call) = self.objects[target].call.get() else {
            return false;
        };
        if matches!(
            self.objects[target].state(),
            ThreadState::BlockedOnSend {
                kernel_message: true,
                ..
            } | ThreadState::BlockedOnAnswer
                | ThreadState::BlockedOnAudit
        ) {
            self.cancel_wait(target);
        }
        let thread = &mut self.objects[target];
        thread.call.clear();
        thread.judged.forget();
        // Its question goes with it (a fault report, which no stopped
        // call has, or a stop after the call stays).
        let entry_stop = thread
            .trace_stop()
            .is_some_and(|stop| stop.kind == abi::trace::StopKind::Entry);
        if entry_stop || thread.policy_request().is_some() {
            thread.take_kernel_message();
        }
        thread.context.set_result(ErrorCode::Interrupted);
        if thread.tracer.is_some()
            && thread.work.contains(WorkFlags::TRACE)
            && call.passed_entry_stop()
        {
            thread.trace.number = call.regs[8];
            thread.trace.owed |= crate::thread::TraceProgress::OWE_EXIT;
        }
        self.audit_cancelled(platform, target, &call, Some(ErrorCode::Interrupted.raw()));
        true
    }

    /// Ends a thread: frees its memory (or keeps its TCB ended, for a
    /// thread made from user space) and takes it off the CPU and the run
    /// queue. The root task's end ends the run (`end_root`).
    pub(in crate::kernel) fn end_thread<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        state: ThreadState,
    ) {
        // Ended already (a kept TCB): nothing more ends. (Callers that take
        // something from an ended thread, its space or a filter, do that
        // themselves.)
        if self.objects[id].state().is_kept_end() || self.objects[id].state() == ThreadState::Free {
            return;
        }
        // Another CPU running it stops first: from here on it is ready
        // or waiting, as on one CPU.
        self.stop_elsewhere(platform, id);
        // A thread the kernel ends for a reason of its own says so, as a
        // fault does: nothing else would tell a killed thread from one
        // that exited.
        if let Some(reason) = kill_reason(state) {
            self.report_kill(platform, id, state, reason);
        }
        // How it ended, while it is whole (the end message says it).
        let end = self.end_of(id, state);
        // The record of the syscall it was in, while it is whole.
        self.audit_thread_ends(platform, id);
        // The filters it served, if any, fail closed from now on.
        self.lose_policy_server(platform, id, server_end(state));
        // First, while it is whole: threads sharing a kernel-made space
        // it owns go with it (its VSpace object goes below).
        self.end_space_guests(platform, id);
        self.leave_ipc(platform, id);
        let is_root = self.root == Some(id);
        if is_root {
            self.end_root(platform, state);
        }
        // A thread made from user space keeps its TCB, ended, with what a
        // restart in the same space needs (`supervision.rs`); any other
        // leaves everything now.
        let keeps = self.keeps_end(id, state);
        if !keeps {
            // The last thread in a space takes it down (see `leave_space`).
            self.leave_space(platform, id);
            self.leave_cspace(id);
            self.leave_buffer(id);
            self.leave_audit(id);
        }
        let thread = &mut self.objects[id];
        let priority = thread.priority;
        let was_ready = thread.state() == ThreadState::Ready;
        thread.end_with(state);
        thread.judged.forget();
        if was_ready {
            let home = self.home_of(id);
            self.run_queues[home]
                .ready
                .remove(&mut self.objects, id, priority);
        }
        self.forget_on_cores(id);
        if self.current == Some(id) {
            self.current = None;
        }
        if !keeps {
            self.detach_filters(id);
        }
        self.unbind(id);
        if keeps {
            self.keep_ended(platform, id, end);
        } else {
            self.objects[id] = Thread::EMPTY;
        }
        // The root takes its CNode, TCB and VSpace with it (its record is
        // freed when this kernel entry ends).
        if is_root {
            self.root = None;
            for original in [
                KERNEL_ROOT_CNODE_SLOT,
                KERNEL_ROOT_TCB_SLOT,
                KERNEL_ROOT_VSPACE_SLOT,
            ] {
                self.delete_kernel_slot(platform, original);
            }
        }
    }

    /// Takes a waiting thread out of what it waits in (endpoint or
    /// notification queue; a server owing it a reply forgets it). Its state
    /// is left for the caller to set.
    pub(in crate::kernel) fn cancel_wait(&mut self, id: ThreadId) {
        if let ThreadState::BlockedOnSend { .. } = self.objects[id].state() {
            // Its message will not be sent: the copy judged for it
            // (`crate::judged_memory`) goes with the call.
            self.objects[id].judged.forget();
        }
        match self.objects[id].state() {
            ThreadState::BlockedOnSend { endpoint, .. }
            | ThreadState::BlockedOnReceive { endpoint }
            | ThreadState::EndPending { endpoint, .. } => {
                if let Some(mut queue) = self.objects.get::<kind::Endpoint>(endpoint).copied() {
                    queue.remove(&mut self.objects, id);
                    if let Some(body) = self.objects.get_mut::<kind::Endpoint>(endpoint) {
                        *body = queue;
                    }
                }
            }
            ThreadState::BlockedOnNotification { notification } => {
                if let Some(mut state) = self
                    .objects
                    .get::<kind::Notification>(notification)
                    .copied()
                {
                    state.waiters.remove(&mut self.objects, id);
                    if let Some(body) = self.objects.get_mut::<kind::Notification>(notification) {
                        *body = state;
                    }
                }
            }
            ThreadState::BlockedOnAudit => {
                let mut queue = self.audit_waiters;
                queue.remove(&mut self.objects, id);
                self.audit_waiters = queue;
            }
            ThreadState::BlockedOnReply | ThreadState::BlockedOnAnswer => {
                if let Some(server) = self.objects[id].reply_from.take() {
                    if self.objects[server].reply_to == Some(id) {
                        self.objects[server].reply_to = None;
                    }
                }
                self.forget_saved_reply(id);
            }
            _ => {}
        }
    }

    /// Takes a thread out of every IPC relationship: its endpoint queue,
    /// the server owing it a reply, the caller it owes one (which learns
    /// no reply will come).
    pub(in crate::kernel) fn leave_ipc<P: Platform>(&mut self, platform: &mut P, id: ThreadId) {
        self.cancel_wait(id);
        if let Some(caller) = self.objects[id].reply_to.take() {
            self.objects[caller].reply_from = None;
            match self.objects[caller].state() {
                ThreadState::BlockedOnReply => {
                    ipc::fail_waiter(&mut self.objects, caller, ErrorCode::ObjectDeleted);
                    self.make_ready(caller);
                }
                // Its policy server died before answering: closed.
                ThreadState::BlockedOnAnswer if self.objects[caller].policy_request().is_some() => {
                    ipc::fail_policy_request(&mut self.objects, caller);
                    self.make_ready(caller);
                }
                // Its tracer died holding a stop: it runs on (open).
                ThreadState::BlockedOnAnswer if self.objects[caller].trace_stop().is_some() => {
                    if let Some(stop) = self.objects[caller].take_trace_stop() {
                        self.objects[caller].abandon_trace_stop(stop);
                    }
                    self.make_ready(caller);
                }
                // Its fault handler died: nobody can resume it sensibly.
                ThreadState::BlockedOnAnswer => {
                    if let Some(report) = self.objects[caller].fault_report() {
                        self.end_thread(platform, caller, ThreadState::Faulted(report));
                    }
                }
                _ => {}
            }
        }
    }
}

impl Kernel {
    /// A TCB is destroyed: a thread made from user space ends with it (a thread
    /// the kernel made ends first and takes its TCB with it).
    /// An ended one kept for its supervisor is released now (its
    /// end message, if no one took it, withdrawn).
    pub(in crate::kernel) fn tcb_destroyed<P: Platform>(
        &mut self,
        platform: &mut P,
        object: ObjectId,
    ) {
        let thread = ThreadId::of(object);
        let state = self.objects[thread].state();
        if !self.objects[thread].created_by_user || state == ThreadState::Free {
        } else if state.is_kept_end() {
            self.release_ended(platform, thread);
        } else if !state.has_ended() {
            self.end_thread(platform, thread, ThreadState::Exited(TCB_DESTROYED_STATUS));
        }
    }
}
