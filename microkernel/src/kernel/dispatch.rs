//! Dispatch: a syscall's registers decoded into a `Call`, the call run
//! by the object it names, and its result written back in one place.

use crate::cap::{Capability, SlotId};
use crate::ipc::{self, Next};
use crate::kernel::{Kernel, Resume};
use crate::platform::Platform;
use crate::stopped_call::{
    CallSlot, CallStop, JudgedCapability, Progress, StopAnswer, StoppedCall,
};
use crate::syscall::Inspected;
use crate::syscall::{self, Call, SyscallResult};
use crate::thread::{Thread, ThreadId, ThreadState};
use abi::ErrorCode;
use entry::WorkFlags;

use crate::kernel::entry_work::Entered;
use crate::kernel::forward::audit::AuditSetting;

/// What became of a thread whose syscall was dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::kernel) enum Dispatched {
    /// It returns from the syscall.
    Returns,
    /// It waits (blocked in IPC, or its call preempted).
    Waits,
    /// It ended.
    Ended,
}

impl Kernel {
    pub(in crate::kernel) fn syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) -> Resume {
        debug_assert!(
            !self.objects.has_retired(),
            "an earlier kernel entry left retired objects"
        );
        let thread = &mut self.objects[current];
        thread.stats.count_syscall();
        let slow = thread.work.intersects(WorkFlags::SYSCALL_WORK)
            && !thread.skips_entry_work(thread.context.syscall_number());
        if slow {
            let work = thread.work.intersection(WorkFlags::SYSCALL_WORK);
            // (Audit alone takes its lane only by the lean entry,
            // `lean_audited_syscall`: a second caller of the lane here
            // cost the lean one its inlined decoding and dispatch, some 40
            // instructions. What comes here, a syscall the lean entry does
            // not take, goes through the machine.)
            if work == WorkFlags::POLICY {
                self.syscall_judged(platform, current, esr);
            } else if work == WorkFlags::USER_DISPATCH {
                self.syscall_user_dispatched(platform, current, esr);
            } else {
                self.syscall_with_work(platform, current, esr, None);
            }
            return self.resume(platform);
        }
        // No entry work, so no exit work: what became of the thread is
        // for `resume` alone. A decode error is written back on a path of
        // its own, straight to its `x0` (as one result of both, through
        // the stack, it cost `syscall_slow_path_error` 14 instructions).
        match syscall::decode_copy::<{ syscall::HOT_PATH_COPY }>(&thread.context) {
            Ok(call) => {
                let result = self.dispatch::<P, { syscall::HOT_PATH_COPY }>(
                    platform,
                    current,
                    call,
                    Progress::NONE,
                );
                self.apply_result(platform, current, esr, None, result);
            }
            Err(code) => {
                Self::write_result(thread, code);
                // A refused call changes nothing else: the thread goes
                // back as `resume` would send it, without looking it up
                // again (9 instructions of `syscall_slow_path_error`).
                // Nothing is retired: it destroyed nothing, and every
                // kernel entry frees what it retired before it ends
                // (checked on the way in).
                if !self.attention {
                    if let Some(resume) = Self::as_it_is(thread) {
                        return resume;
                    }
                }
            }
        }
        self.resume(platform)
    }

    /// Writes a syscall's result to its thread and applies what it asked
    /// of the scheduler (`apply_result`), for the generic entry, and says
    /// what became of the thread (its exit work depends on it). A
    /// preempted call is kept to go on (`preempt_call`).
    pub(in crate::kernel) fn write_back<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: &Entered,
        result: SyscallResult,
    ) -> Dispatched {
        let dispatched = match result {
            SyscallResult::Exited(_) => Dispatched::Ended,
            SyscallResult::Preempted { .. } => Dispatched::Waits,
            _ => Dispatched::Returns,
        };
        let ipc = matches!(result, SyscallResult::Ipc(_));
        self.apply_result(platform, current, esr, Some(entered), result);
        // An IPC operation may have blocked it.
        if ipc && self.current != Some(current) {
            return Dispatched::Waits;
        }
        dispatched
    }

    /// The one write-back: a dispatched syscall's result into its
    /// thread's registers (`x0` for a code, by `write_result`; an
    /// IPC operation has written its registers already, a restore wrote
    /// them all) and what the result asks of the scheduler. `entered` is
    /// what the generic entry decided, `None` for a thread without entry
    /// work (`syscall`): that one's yield goes to the back of the queue at
    /// once, the generic entry's asks for it after its exit work.
    ///
    /// Inlined where it is used: in `syscall`, `None` folds the
    /// differences away and the compiler folds the whole of it into the
    /// dispatch, as the hot path's own copy of it used to be (the thread
    /// is looked up again only by the results that write to it).
    #[inline(always)]
    pub(in crate::kernel) fn apply_result<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: Option<&Entered>,
        result: SyscallResult,
    ) {
        match result {
            SyscallResult::Return(code) => Self::write_result(&mut self.objects[current], code),
            SyscallResult::Yield => {
                let thread = &mut self.objects[current];
                Self::write_result(thread, ErrorCode::Ok);
                thread.stats.count_yield();
                if entered.is_some() {
                    // Its exit work runs first, as the running thread:
                    // the round robin is asked for on the way out.
                    thread.work.insert(WorkFlags::NEED_RESCHED);
                } else {
                    // No exit work: the round robin at once, on the
                    // thread in hand (what a NEED_RESCHED would ask on
                    // the way out): to the back of its priority's queue;
                    // `resume` picks.
                    // This CPU's queue: a running thread's affinity is its
                    // CPU's (`TcbSetAffinity` on itself moves it on the
                    // way out of that call).
                    debug_assert_eq!(usize::from(thread.affinity), self.cpu);
                    let priority = thread.priority;
                    let queue = &mut self.run_queues[self.cpu % arch::layout::MAX_CPUS].ready;
                    // No other thread of its priority ready here (none more
                    // urgent is: it has no reschedule pending): the round
                    // robin would pick it again, so it goes on, with no
                    // trip through the queue.
                    if queue.has_ready_at(priority) {
                        thread.make_ready();
                        let links = queue.append(thread, current, priority);
                        self.current = None;
                        queue.link_behind(&mut self.objects, current, links);
                    }
                }
            }
            SyscallResult::Restored => {}
            SyscallResult::Exited(status) => {
                self.end_thread(platform, current, ThreadState::Exited(status));
            }
            SyscallResult::Ipc(effects) => self.apply_ipc(platform, effects),
            SyscallResult::Preempted { progress, at } => {
                let entered = match entered {
                    Some(entered) => *entered,
                    None => Entered::dispatch_without_work(),
                };
                self.preempt_call(platform, current, esr, &entered, progress, at);
            }
        }
    }

    /// The one write of a syscall's result into its thread's registers:
    /// its code (`SyscallResult::code`) in `x0`, through the typed view.
    /// (It takes the code, not the result: borrowing the whole result
    /// after its effects were moved out kept a copy of it on the stack,
    /// 68 more instructions on a `Signal`.)
    /// `apply_result` calls it, and so does the generic entry's exit for
    /// the thread in hand (`finish_syscall_with_work`); nothing else
    /// writes a dispatched call's result.
    #[inline(always)]
    pub(in crate::kernel) fn write_result(thread: &mut Thread, code: ErrorCode) {
        thread.context.set_result(code);
    }

    /// A long operation of `current`'s syscall stopped at a preemption
    /// point (`progress` of it done, at `at`): the kernel keeps the call,
    /// answered, to go on from there when the thread next runs, and takes
    /// the interrupt that is waiting now. If it made a more urgent thread
    /// ready, that one runs first; the call is neither judged, traced nor
    /// audited again.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn preempt_call<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: &Entered,
        progress: u64,
        at: u64,
    ) {
        let capability = Some(self.judged_capability(current));
        let thread = &mut self.objects[current];
        let regs = thread.context.syscall_registers();
        thread.call = CallSlot::Stopped(StoppedCall {
            esr,
            capability,
            waived: entered.waived,
            forwarded: entered.forwarded,
            outcome: entered.outcome,
            answer: Some(StopAnswer::Restart),
            ..StoppedCall::new(regs, CallStop::Dispatch { progress, at })
        });
        if let Some(interrupt) = platform.take_pending_interrupt() {
            self.interrupt(platform, interrupt);
        }
    }

    /// Goes on with `current`'s stopped syscall, whose answer has come:
    /// from the registers the kernel kept, not the thread's. True when it
    /// went on by the policy-only lane (`continue_judged`).
    #[inline(never)]
    pub(in crate::kernel) fn continue_call<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> bool {
        let Some(judged) = self.objects[current]
            .call
            .as_ref()
            .map(|call| call.capability)
        else {
            return false;
        };
        // The capability the call was judged on must still be the one it
        // names, to the same object (not one made since in its memory);
        // otherwise it is cancelled, as for a register write.
        if judged.is_some_and(|judged| !self.still_judged(current, judged)) {
            self.cancel_call(platform, current);
            return false;
        }
        let thread = &mut self.objects[current];
        let Some(call) = thread.call.as_ref() else {
            return false;
        };
        // Word by word (`set_syscall_registers`), and only what goes on
        // is read: taking the whole call out and copying its registers as
        // a slice were two calls to `memcpy` (168 and 72 bytes). (`esr`
        // apart from `resumed`: as a tuple with `resumed`, the optimiser
        // made a `memcpy` of them again.)
        thread.context.set_syscall_registers(&call.regs);
        let esr = call.esr;
        let resumed = call.resumed();
        thread.call.clear();
        // Policy alone, or tracing alone: its lane (a server's answer to
        // a request, a tracer's to an entry stop).
        let work = thread.work.intersection(WorkFlags::SYSCALL_WORK);
        if work == WorkFlags::POLICY {
            self.continue_judged(platform, current, esr, &resumed);
            return true;
        }
        if work == WorkFlags::TRACE {
            self.continue_traced(platform, current, esr, &resumed);
        } else {
            self.syscall_with_work(platform, current, esr, Some(&resumed));
        }
        false
    }

    /// Runs a decoded syscall. `progress` is how far a preempted one got
    /// (see `StoppedCall`), `None` for a call that starts now. One copy per
    /// `COPY`, for the reason `syscall::decode_copy` gives.
    pub(in crate::kernel) fn dispatch<P: Platform, const COPY: syscall::Copy>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        call: Call,
        progress: Progress,
    ) -> SyscallResult {
        match call {
            Call::Null => SyscallResult::Return(ErrorCode::Ok),
            Call::Yield => SyscallResult::Yield,
            Call::Exit { status } => SyscallResult::Exited(status),
            Call::Ipc {
                operation,
                capability,
            } => self.ipc_syscall(platform, current, operation, capability),
            Call::Notification {
                operation,
                capability,
            } => self.notification_syscall(current, operation, capability),
            Call::IrqSetNotification {
                handler,
                notification,
            } => self
                .irq_syscall(platform, current, handler, Some(notification))
                .into(),
            Call::IrqAck { handler } => self.irq_syscall(platform, current, handler, None).into(),
            Call::IrqSetTimer { handler, ticks } => {
                self.irq_set_timer(platform, current, handler, ticks)
            }
            Call::IrqControlGet {
                control,
                intid,
                slot,
            } => self
                .irq_control_get(platform, current, control, intid, slot)
                .into(),
            Call::Retype {
                untyped,
                object_type,
                size,
                target,
                count,
                payer,
            } => self.retype_syscall(
                platform,
                current,
                untyped,
                object_type,
                size,
                (target, count, payer),
                progress,
            ),
            Call::Cap {
                operation,
                cnode,
                source,
                target,
            } => {
                let result = self.cap_syscall(platform, current, operation, cnode, source, target);
                if self.current != Some(current) {
                    // Deleting a TCB it made ended the caller itself (its
                    // record is freed when the entry ends, by `reap`):
                    // nothing to return.
                    return SyscallResult::Ipc(ipc::Effects::new(Next::Continue));
                }
                result.into()
            }
            #[cfg(feature = "bench-calls")]
            Call::BenchFloor { on } => self.bench_floor(platform, current, on),
            #[cfg(feature = "test-calls")]
            Call::DebugThreadStats { tcb } => self.debug_thread_stats(current, tcb),
            #[cfg(feature = "test-calls")]
            Call::DebugCheckInvariants { at_ticks } => {
                self.debug_check_invariants(platform, current, at_ticks)
            }
            Call::Tcb { operation, tcb } => self.tcb_syscall(platform, current, operation, tcb),
            Call::TcbConfigure {
                tcb,
                cnode,
                priority,
            } => self.tcb_configure(current, tcb, cnode, priority).into(),
            Call::TcbSetSpace => self.tcb_set_space(platform, current).into(),
            Call::TcbRestart => self.tcb_restart(current).into(),
            Call::TcbSetName => self.tcb_set_name(platform, current).into(),
            Call::BindNotification { tcb, notification } => {
                self.bind_notification(current, tcb, notification).into()
            }
            Call::SetAudit {
                tcb,
                frame,
                notification,
                mode,
                badge,
            } => self
                .set_audit(
                    platform,
                    current,
                    tcb,
                    AuditSetting {
                        frame,
                        notification,
                        mode,
                        badge,
                    },
                )
                .into(),
            Call::FilterLoad {
                filter,
                address,
                len,
            } => self
                .filter_load(platform, current, filter, address, len)
                .into(),
            Call::FrameMap {
                frame,
                vspace,
                va,
                rights,
            } => self
                .frame_map_syscall(platform, current, frame, vspace, va, rights)
                .into(),
            Call::AttachFilter {
                tcb,
                filter,
                server,
                server_thread,
            } => self
                .attach_filter(platform, current, tcb, filter, server, server_thread)
                .into(),
            Call::FilterSetServer {
                filter,
                endpoint,
                thread,
            } => match self.filter_set_server(current, filter, endpoint, thread) {
                Ok(handed) => {
                    // The second result: how many attachments it took.
                    self.objects[current].context.set_value(handed);
                    SyscallResult::Return(ErrorCode::Ok)
                }
                Err(code) => SyscallResult::Return(code),
            },
            Call::FrameUnmap { frame } => self.frame_unmap_syscall(platform, current, frame).into(),
            Call::SetUserDispatch => self.set_user_dispatch(platform, current).into(),
            Call::SetRseq => self.set_rseq(platform, current).into(),
            Call::SliceYield => self.slice_yield(platform, current),
            Call::ConsoleRead => SyscallResult::Return(self.console_read(platform, current)),
            Call::ConsoleSetNotification => {
                SyscallResult::Return(self.console_set_notification(platform, current))
            }
            Call::ConsoleWriteFrame => {
                SyscallResult::Return(self.console_write_frame(platform, current))
            }
            Call::InspectThread => {
                SyscallResult::Return(self.inspect(platform, current, Inspected::Thread))
            }
            Call::InspectCaps => {
                SyscallResult::Return(self.inspect(platform, current, Inspected::Caps))
            }
            #[cfg(feature = "rseq-counters")]
            Call::DebugRseqCounters { address } => {
                self.debug_rseq_counters(platform, current, address).into()
            }
            Call::UserDispatchReturn { frame } => {
                match self.user_dispatch_return(platform, current, frame) {
                    Ok(()) => SyscallResult::Restored,
                    Err(code) => SyscallResult::Return(code),
                }
            }
            Call::DebugPrint {
                console,
                address,
                len,
            } => SyscallResult::Return(self.debug_print(platform, current, console, address, len)),
        }
    }

    /// The capability in the slot `current`'s `x0` names
    /// (`Capability::NULL` for none), read through the thread's cached
    /// CSpace range as the fast path reads it (no CSpace: no slots).
    pub(in crate::kernel) fn capability_named(&self, current: ThreadId) -> Capability {
        let thread = &self.objects[current];
        let (first, slots) = thread.cspace_slots;
        let index = thread.context.capability_pointer();
        if index >= u64::from(slots) {
            return Capability::NULL;
        }
        self.objects
            .slot_content(SlotId(first.0 + index as u32))
            .unwrap_or(Capability::NULL)
    }

    /// What a call of `current`'s stopping now is judged on: the
    /// capability its `x0` names, and the serial numbers given out so far.
    pub(in crate::kernel) fn judged_capability(&self, current: ThreadId) -> JudgedCapability {
        JudgedCapability {
            capability: self.capability_named(current),
            // At least the caller's own TCB has been made (and had it
            // not, 1 would only make the check stricter).
            newest_serial: core::num::NonZeroU64::new(self.objects.newest_serial())
                .unwrap_or(core::num::NonZeroU64::MIN),
        }
    }

    /// Does the slot `current`'s `x0` names still hold what its call was
    /// judged on: an equal capability, to an object made before the call
    /// was judged (not a new one in the judged one's memory, which would
    /// have its id)? Only if objects were made since is a header read.
    pub(in crate::kernel) fn still_judged(
        &self,
        current: ThreadId,
        judged: JudgedCapability,
    ) -> bool {
        let capability = self.capability_named(current);
        if capability != judged.capability {
            return false;
        }
        capability.is_null()
            || self.objects.newest_serial() == judged.newest_serial.get()
            || self
                .objects
                .object(capability.object())
                .is_some_and(|header| header.serial <= judged.newest_serial.get())
    }
}
