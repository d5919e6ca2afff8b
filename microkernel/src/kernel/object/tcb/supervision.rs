//! Supervision: what the kernel keeps of a thread that ended, the end
//! message its supervisor gets, and restarting it.
//!
//! A thread made from user space (`Retype` of a TCB) does not vanish when it
//! ends (exit, a kill, a fault no handler could take): its TCB stays,
//! `Ended`, in no queue and never scheduled, with how it ended
//! (`Thread::end`) and what a restart in the same address space needs
//! (CSpace, address space, IPC buffer, fault endpoint, priority, and its
//! confinement: filters, tracer, audit). If it has a fault endpoint that
//! still exists, the holder gets an *end message* (`abi::fault::END_LABEL`)
//! with that capability's badge: at once if a receiver waits, else the
//! thread is queued as a sender on the endpoint (`EndPending`) until one
//! receives, as a faulter waits. No reply is owed. The TCB goes as any
//! object, when its last capability is deleted or its Untyped revoked
//! (`release_ended`); `TcbRestart` runs it again.
//!
//! The one thread the kernel made, the root task, is released at its end:
//! the kernel deletes its TCB itself, and the run ends (`root_task.rs`).

use crate::filter::{killing_rule, Filter, SyscallFacts};
use crate::kernel::{Kernel, TCB_DESTROYED_STATUS};
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::fault::{KillReason, ThreadEnd};
use abi::ErrorCode;
use arch::context::UserContext;
use arch::object_memory::kind;
use entry::WorkFlags;

impl Kernel {
    /// Does thread `id` keep its TCB ended when it ends (`state`)? A thread
    /// made from user space does, unless it ends because its TCB is being
    /// destroyed.
    pub(in crate::kernel) fn keeps_end(&self, id: ThreadId, state: ThreadState) -> bool {
        let thread = &self.objects[id];
        thread.created_by_user && state != ThreadState::Exited(TCB_DESTROYED_STATUS)
    }

    /// How thread `id`, ending with `state`, ended: what its end message
    /// says. Read before anything of it is taken down (a policy kill is
    /// attributed from its filters and the registers judged).
    pub(in crate::kernel) fn end_of(&self, id: ThreadId, state: ThreadState) -> ThreadEnd {
        match state {
            ThreadState::Faulted(report) => ThreadEnd::Faulted {
                class: (report.esr >> 26) & 0x3f,
                far: report.far,
                esr: report.esr,
                pc: report.pc,
            },
            ThreadState::Exited(abi::policy_request::KILLED_BY_POLICY) => {
                ThreadEnd::Killed(self.policy_kill_of(id))
            }
            ThreadState::Exited(abi::user_dispatch::KILLED_BY_USER_DISPATCH) => {
                ThreadEnd::Killed(KillReason::UserDispatch)
            }
            ThreadState::Exited(abi::rseq::KILLED_BY_RSEQ) => ThreadEnd::Killed(KillReason::Rseq),
            ThreadState::Exited(abi::fault::FILTER_DESTROYED_STATUS) => {
                ThreadEnd::Killed(KillReason::FilterDestroyed)
            }
            ThreadState::Exited(abi::fault::SPACE_DESTROYED_STATUS) => {
                ThreadEnd::Killed(KillReason::SpaceDestroyed)
            }
            ThreadState::Exited(status) if crate::syscall::KERNEL_STATUSES.contains(&status) => {
                ThreadEnd::Killed(KillReason::Other(status))
            }
            ThreadState::Exited(status) => ThreadEnd::Exited { status },
            // Not an ending state (unreachable from `end_thread`'s callers).
            _ => ThreadEnd::Killed(KillReason::Other(0)),
        }
    }

    /// Which filter and rule killed `id`: its stack judged again on the
    /// registers of the call it was killed in (the kept call's, else its
    /// own), with the capability `x0` names. Cold: once per kill.
    #[cold]
    #[inline(never)]
    fn policy_kill_of(&self, id: ThreadId) -> KillReason {
        let thread = &self.objects[id];
        let x = thread
            .call
            .as_ref()
            .map_or(thread.context.syscall_registers(), |c| c.regs);
        let mut args = [0u64; 8];
        args.copy_from_slice(&x[..8]);
        let number = x[8];
        let mut facts = SyscallFacts::from_registers(number, args);
        let (first, slots) = thread.cspace_slots;
        if args[0] < u64::from(slots) {
            if let Some(cap) = self
                .objects
                .slot_content(crate::cap::SlotId(first.0 + args[0] as u32))
                .filter(|cap| !cap.is_null())
            {
                facts = facts.with_capability(cap.cap_type(), cap.badge());
            }
        }
        let stack: heapless::Vec<&Filter, { crate::thread::MAX_STACKED_FILTERS }> = thread
            .filters
            .iter()
            .filter_map(|attached| {
                self.objects
                    .get::<kind::Filter>(attached.filter)
                    .map(|body| &body.filter)
            })
            .collect();
        let (filter, rule, by_server) = match killing_rule(&stack, &facts) {
            Some((filter, rule, by_server)) => (filter as u64, rule as u64, by_server),
            None => (0, abi::fault::NO_RULE, false),
        };
        KillReason::Policy {
            filter,
            rule,
            syscall: number,
            by_server,
        }
    }

    /// Keeps the TCB of `id`, which has just ended (`end`) and is out of
    /// every queue and off the CPU: it becomes `Ended`, loses what belonged
    /// to the run, and its end message goes to its fault endpoint.
    pub(in crate::kernel) fn keep_ended<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        end: ThreadEnd,
    ) {
        let thread = &mut self.objects[id];
        thread.end_with(ThreadState::Ended);
        thread.end = Some(end);
        thread.call.clear();
        thread.take_kernel_message();
        thread.trace = crate::thread::TraceProgress::NONE;
        thread.audit_pending = None;
        thread.user_dispatch = None;
        // Only the work its confinement gives stays.
        let kept = WorkFlags::POLICY
            .union(WorkFlags::TRACE)
            .union(WorkFlags::AUDIT);
        thread.work = thread.work.intersection(kept);
        thread.recompute_no_entry_work();
        self.send_end_message(platform, id);
    }

    /// The end message of `id` (ended, `Thread::end` set) to its fault
    /// endpoint, if that still exists: to the first waiting receiver, or
    /// `id` waits in the endpoint's queue (`EndPending`).
    fn send_end_message<P: Platform>(&mut self, platform: &mut P, id: ThreadId) {
        let Some((endpoint, badge)) = self.objects[id]
            .fault_endpoint
            .and_then(|(e, badge)| Some((self.objects.resolve(e, CapType::Endpoint)?, badge)))
        else {
            return;
        };
        let Some(mut queue) = self.objects.get::<kind::Endpoint>(endpoint).copied() else {
            return;
        };
        let woken =
            crate::ipc::send_end(platform, &mut self.objects, &mut queue, endpoint, id, badge);
        if let Some(body) = self.objects.get_mut::<kind::Endpoint>(endpoint) {
            *body = queue;
        }
        if let Some(receiver) = woken {
            self.make_ready(receiver);
        }
    }

    /// The TCB of the ended thread `id` is destroyed: it leaves its
    /// endpoint queue (its end message withdrawn) and every binding, and
    /// its record is empty.
    pub(in crate::kernel) fn release_ended<P: Platform>(&mut self, platform: &mut P, id: ThreadId) {
        self.cancel_wait(id);
        self.leave_space(platform, id);
        self.leave_cspace(id);
        self.leave_buffer(id);
        self.leave_audit(id);
        self.detach_filters(id);
        self.unbind(id);
        self.forget_on_cores(id);
        self.objects[id] = crate::thread::Thread::EMPTY;
    }

    /// A filter confining the ended thread `id` is taken back: it leaves
    /// its filters (its stack goes, as it would at a live thread's end),
    /// and it may not be restarted. For a thread that is not a kept end,
    /// nothing.
    pub(in crate::kernel) fn ended_loses_filters(&mut self, id: ThreadId) {
        if self.objects[id].state().is_kept_end() {
            self.detach_filters(id);
            self.objects[id].lost_filter = true;
        }
    }

    /// `TcbRestart` by `current`: the ended thread of the TCB runs again
    /// from `arguments`' registers in the space it is bound to.
    #[inline(never)]
    pub(in crate::kernel) fn tcb_restart(&mut self, current: ThreadId) -> Result<(), ErrorCode> {
        let arguments = crate::syscall::restart_arguments(&self.objects[current].context)?;
        let tcb = self.thread_cap(current, arguments.tcb, CapType::Tcb, Rights::WRITE)?;
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let thread = &self.objects[target];
        if !thread.state().is_kept_end() || thread.space.is_none() {
            return Err(ErrorCode::InvalidArgument);
        }
        if thread.lost_filter {
            return Err(ErrorCode::Denied);
        }
        // Its end message is withdrawn if no one took it.
        self.cancel_wait(target);
        self.objects[target].restart(
            UserContext::new_user(arguments.pc, arguments.sp, arguments.x0)
                .with_thread_pointer(arguments.tpidr),
        );
        self.make_ready(target);
        Ok(())
    }
}
