//! Tracing in the syscall path: attaching a tracer, sending its stops,
//! and the single-step hardware.
//!
//! The order of the stops is the entry crate's (stage 2 entry stop, stage
//! 6 exit stop, stage 7 single-step report); this file carries out the
//! steps that ask for them (`kernel/entry_work.rs` drives the machines).
//! A stop blocks the thread, so the kernel cannot run the stages in one
//! go: `EntryStep::SendTraceEntryStop` stops the syscall (`stopped_call`:
//! the kernel keeps its registers, the tracer's answer changes that copy,
//! see `ipc::trace_stop::answer_trace_stop`, and the syscall goes on from
//! there), and `ExitStep::SendTraceExitStop` and `ReportSingleStep` mark
//! the stops owed (`TraceProgress::owed`), which `Kernel::resume` sends,
//! exit stop first, before the thread returns to EL0. A syscall that
//! blocked runs its stages 6 to 8 when it returns, in `resume` too.
//!
//! Single-stepping uses the architecture's software step: MDSCR_EL1.SS on
//! while a stepping thread runs, SPSR.SS = 1 when it is resumed to step.
//! SS is switched on on a stepping thread's way back to EL0 and off on
//! the way back of a traced thread that owes a stop; any other thread
//! (untraced, or traced and owing nothing: `Kernel::as_it_is`) finds it
//! off, or takes one software-step exception before its first
//! instruction, which switches it off (so the common return path has no
//! check for it). After one instruction it takes a software-step
//! exception (EC 0x32), reported as a step stop. A stepped `svc` sets
//! SPSR.SS = 0 on the way in; its step is reported by stage 7 after the
//! exit stop, and the tracer's answer sets SPSR.SS afresh, so it is
//! reported once.

use crate::cap::ObjectId;
use crate::kernel::{Kernel, Resume};
use crate::platform::Platform;
use crate::thread::KernelMessage;
use crate::thread::{ThreadId, TraceProgress, TraceStop};
use abi::cap::{CapType, Rights};
use abi::trace::StopKind;
use abi::ErrorCode;
use entry::{SyscallEntry, WorkFlags};

impl Kernel {
    /// `TcbAttachTracer`: the stops of `target` go to the endpoint at
    /// `endpoint` (write right) in `current`'s CSpace.
    #[inline(never)]
    pub(in crate::kernel) fn attach_tracer(
        &mut self,
        current: ThreadId,
        target: ThreadId,
        endpoint: u64,
    ) -> Result<(), ErrorCode> {
        let endpoint = self.thread_cap(current, endpoint, CapType::Endpoint, Rights::WRITE)?;
        let reference = self
            .objects
            .reference(endpoint.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        if self.live_tracer(target).is_some() {
            return Err(ErrorCode::Denied);
        }
        let thread = &mut self.objects[target];
        thread.tracer = Some((reference, endpoint.badge()));
        thread.trace = TraceProgress::NONE;
        thread.work.insert(WorkFlags::TRACE);
        // No syscall of a traced thread may skip the generic entry.
        thread.recompute_no_entry_work();
        Ok(())
    }

    /// `TcbDetachTracer`: only through a capability to the endpoint the
    /// tracer was attached with (same object and badge: `Denied`
    /// otherwise), so holding the TCB's trace right alone cannot take
    /// another tracer away; `InvalidArgument` if none is attached.
    #[inline(never)]
    pub(in crate::kernel) fn detach_tracer_through(
        &mut self,
        current: ThreadId,
        target: ThreadId,
        endpoint: u64,
    ) -> Result<(), ErrorCode> {
        let endpoint = self.thread_cap(current, endpoint, CapType::Endpoint, Rights::NONE)?;
        let named = self
            .objects
            .reference(endpoint.object())
            .map(|reference| (reference, endpoint.badge()));
        match self.live_tracer(target) {
            None => Err(ErrorCode::InvalidArgument),
            Some(_) if self.objects[target].tracer != named => Err(ErrorCode::Denied),
            Some(_) => {
                self.detach_tracer(target);
                Ok(())
            }
        }
    }

    /// `thread`'s tracer endpoint and badge, if it has a tracer whose
    /// endpoint still lives; one whose endpoint is gone is detached here
    /// (its stops have nowhere to go: the thread runs on untraced).
    pub(in crate::kernel) fn live_tracer(&mut self, thread: ThreadId) -> Option<(ObjectId, u64)> {
        let (reference, badge) = self.objects[thread].tracer?;
        match self.objects.resolve(reference, CapType::Endpoint) {
            Some(endpoint) => Some((endpoint, badge)),
            None => {
                self.objects[thread].detach_tracer();
                None
            }
        }
    }

    /// `target` runs on untraced; a stop it waits at ends as if the tracer
    /// had said "continue".
    pub(in crate::kernel) fn detach_tracer(&mut self, target: ThreadId) {
        if let Some(stop) = self.objects[target].take_trace_stop() {
            self.cancel_wait(target);
            self.objects[target].abandon_trace_stop(stop);
            self.make_ready(target);
        }
        self.objects[target].detach_tracer();
    }

    /// Sends `current`'s stop to its tracer; the thread waits for the
    /// answer. Without a tracer (detached meanwhile) it runs on (a
    /// stopped entry goes on as made).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn trace_stop<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        kind: StopKind,
        number: u64,
    ) {
        let tracer = self.resolved_tracer(current);
        let thread = &mut self.objects[current];
        if tracer.is_none() && thread.tracer.is_some() {
            // Its endpoint is gone (`live_tracer`).
            thread.detach_tracer();
        }
        let time = platform.counter();
        match tracer {
            Some((endpoint, badge)) => {
                thread.set_kernel_message(KernelMessage::TraceStop(TraceStop {
                    kind,
                    number,
                    time,
                }));
                self.send_on_behalf(platform, current, endpoint, badge);
            }
            None => {
                if kind == StopKind::Entry {
                    // Nobody to stop for: the syscall goes on as made.
                    thread.abandon_trace_stop(TraceStop { kind, number, time });
                    thread.run();
                }
            }
        }
    }

    /// A software-step exception: the stepping thread executed one
    /// instruction. A thread that is not stepping met MDSCR_EL1.SS left on
    /// by the last stepping thread (it is switched off lazily, here, to
    /// keep the check off the common return path): it took the exception
    /// before running any instruction, and runs on with SS off.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn software_step<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Resume {
        let stepping = self.objects[current].work.contains(WorkFlags::SINGLESTEP);
        if stepping && self.live_tracer(current).is_some() {
            let number = self.objects[current].context.register(8);
            self.trace_stop(platform, current, StopKind::Step, number);
            return self.resume(platform);
        }
        self.install_single_step(platform, false);
        self.resume(platform)
    }

    /// A traced syscall blocked: its exit stages run when it returns.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn defer_exit_work(&mut self, current: ThreadId, entry: SyscallEntry) {
        let thread = &mut self.objects[current];
        if thread
            .work
            .intersects(WorkFlags::TRACE | WorkFlags::SINGLESTEP)
        {
            thread.trace.exit_deferred = Some(entry);
        }
    }

    /// The last step before `current` returns to EL0 with trace work:
    /// runs a blocked syscall's exit stages, sends the first stop owed
    /// (`true`: the thread now waits for its tracer), else makes
    /// MDSCR_EL1.SS match the thread.
    #[inline(never)]
    pub(in crate::kernel) fn trace_before_user<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> bool {
        // One look at the thread when the syscall did not block (the
        // common case): `live_tracer`'s reads first, then the changes.
        if self.objects[current].trace.exit_deferred.is_some() {
            self.run_deferred_exit(platform, current);
        }
        let tracer = self.resolved_tracer(current);
        let thread = &mut self.objects[current];
        if tracer.is_none() && thread.tracer.is_some() {
            // Its endpoint is gone (`live_tracer`).
            thread.detach_tracer();
        }
        let owed = core::mem::take(&mut thread.trace.owed);
        let (traced, stepping) = (
            tracer.is_some() && thread.work.contains(WorkFlags::TRACE),
            thread.work.contains(WorkFlags::SINGLESTEP),
        );
        let stop = if owed & TraceProgress::OWE_EXIT != 0 && traced {
            // The step report (if still owed) follows the exit stop.
            thread.trace.owed = owed & TraceProgress::OWE_STEP;
            Some((StopKind::Exit, thread.trace.number))
        } else if owed & TraceProgress::OWE_STEP != 0 && traced && stepping {
            Some((StopKind::Step, thread.context.register(8)))
        } else {
            None
        };
        if let (Some((kind, number)), Some((endpoint, badge))) = (stop, tracer) {
            let time = platform.counter();
            thread.set_kernel_message(KernelMessage::TraceStop(TraceStop { kind, number, time }));
            self.send_on_behalf(platform, current, endpoint, badge);
            return true;
        }
        self.install_single_step(platform, stepping);
        false
    }

    /// A blocked syscall's exit stages 6 to 8, on its way back to EL0
    /// (stage 5, its record, was written when it blocked).
    #[inline(never)]
    fn run_deferred_exit<P: Platform>(&mut self, platform: &mut P, current: ThreadId) {
        if let Some(entry) = self.objects[current].trace.exit_deferred.take() {
            self.exit_after_record(platform, current, entry);
        }
    }

    /// `thread`'s tracer endpoint and badge if the endpoint still lives
    /// (`live_tracer` without detaching: reads only).
    #[inline(always)]
    fn resolved_tracer(&self, thread: ThreadId) -> Option<(ObjectId, u64)> {
        let (reference, badge) = self.objects[thread].tracer?;
        Some((self.objects.resolve(reference, CapType::Endpoint)?, badge))
    }

    /// MDSCR_EL1.SS on for a stepping thread, off for any other.
    pub(in crate::kernel) fn install_single_step<P: Platform>(
        &mut self,
        platform: &mut P,
        on: bool,
    ) {
        if self.step_installed != on {
            platform.set_single_step(on);
            self.step_installed = on;
        }
    }
}
