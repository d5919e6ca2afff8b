//! Trace stops as IPC: the message a tracer receives, what its reply does
//! to the stopped thread, and how a stop ends when the tracer is gone.
//!
//! A stop travels like a fault message (`send_fault`): the stopped thread
//! waits in the tracer's endpoint queue, then for the reply. Unlike a
//! policy request, a stop fails *open*: whatever happens to the tracer,
//! the thread runs on (see `abi::trace`).

use super::message;
use crate::platform::PhysMemory;
use crate::thread::{Thread, ThreadId, ThreadState, TraceProgress, TraceStop};
use abi::trace::{ReplyAction, StopKind, TRACE_STOP_WORDS};
use abi::ErrorCode;
use arch::context::SPSR_SOFTWARE_STEP;
use entry::WorkFlags;

/// The stop of `tracee` into `tracer`'s registers and IPC buffer (see
/// `abi::trace` for the layout).
pub(super) fn deliver_trace_stop<M: PhysMemory>(
    phys: &mut M,
    threads: &mut [Thread],
    stop: &TraceStop,
    tracee: ThreadId,
    tracer: ThreadId,
    badge: u64,
) {
    let x = threads[tracee.index()].context.x;
    let pc = threads[tracee.index()].context.pc;
    if let Some(buffer) = threads[tracer.index()].ipc_buffer {
        let words = [x[5], x[8], pc, u64::from(tracee.0), x[6], x[7]];
        for (i, word) in words.iter().enumerate() {
            phys.write_phys_u64(buffer + 8 * (6 + i as u64), *word);
        }
    }
    let context = &mut threads[tracer.index()].context;
    context.x[0] = ErrorCode::Ok.raw();
    context.x[1] = abi::MessageInfo::with(stop.kind.label(), TRACE_STOP_WORDS).into();
    context.x[2] = stop.number;
    context.x[3..8].copy_from_slice(&x[0..5]);
    context.x[8] = badge;
}

/// Applies `replier`'s answer to the stop `stop` of `tracee`, which is
/// ready afterwards.
pub(super) fn answer_trace_stop<M: PhysMemory>(
    phys: &mut M,
    threads: &mut [Thread],
    replier: ThreadId,
    tracee: ThreadId,
    stop: TraceStop,
) {
    let label = message::sent_info(&threads[replier.index()]).label();
    let (action, step) = ReplyAction::decode(label);
    // Only the message registers (a copy of all 31 was a 216-byte memcpy
    // the optimiser did not always drop).
    let words: [u64; 8] = {
        let x = &threads[replier.index()].context.x;
        [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]
    };
    let word6 = threads[replier.index()]
        .ipc_buffer
        .map_or(0, |buffer| phys.read_phys_u64(buffer + 8 * 6));
    let thread = &mut threads[tracee.index()];
    let context = &mut thread.context;
    match action {
        ReplyAction::Continue => {}
        ReplyAction::Modify => {
            context.x[8] = words[2];
            context.x[0..5].copy_from_slice(&words[3..8]);
            context.x[5] = word6;
        }
        ReplyAction::Result => {
            context.x[0] = words[2];
            context.x[8] = words[3];
        }
        ReplyAction::Detach => thread.detach_tracer(),
    }
    // A skipped syscall (a result given at its entry stop) does not run;
    // any other answer to an entry stop runs it, as the registers now say.
    let skipped = stop.kind == StopKind::Entry && action == ReplyAction::Result;
    if stop.kind == StopKind::Entry && !skipped {
        thread.run_syscall_again();
    }
    thread.set_single_step(step && action != ReplyAction::Detach);
    thread.state = ThreadState::Ready;
}

impl Thread {
    /// Ends tracing: no tracer, no trace work, nothing owed.
    pub fn detach_tracer(&mut self) {
        self.tracer = None;
        self.work
            .remove(WorkFlags::TRACE | WorkFlags::SYSEMU | WorkFlags::SINGLESTEP);
        self.trace = TraceProgress::NONE;
        self.context.spsr &= !SPSR_SOFTWARE_STEP;
        self.recompute_no_entry_work();
    }

    /// Starts or stops single-stepping. Starting puts the step state
    /// machine in "active, not pending" (`SPSR.SS` = 1): the thread runs
    /// one instruction, then takes a software-step exception.
    pub fn set_single_step(&mut self, on: bool) {
        if on {
            self.work.insert(WorkFlags::SINGLESTEP);
            self.context.spsr |= SPSR_SOFTWARE_STEP;
        } else {
            self.work.remove(WorkFlags::SINGLESTEP);
            self.context.spsr &= !SPSR_SOFTWARE_STEP;
        }
        self.recompute_no_entry_work();
    }

    /// The SVC the thread stopped at (at entry) runs again, past its entry
    /// stop: the PC goes back to it.
    fn run_syscall_again(&mut self) {
        self.context.pc = self.context.pc.wrapping_sub(4);
        self.trace.entry_answered = Some(self.context.pc);
    }

    /// The tracer will never answer `stop` (its endpoint is gone, it ended
    /// or moved on, the thread was detached or suspended): the thread runs
    /// on as if it had said "continue" (a stopped entry runs its syscall),
    /// without single-stepping. Tracing fails open.
    pub fn abandon_trace_stop(&mut self, stop: TraceStop) {
        if stop.kind == StopKind::Entry {
            self.run_syscall_again();
        }
        if self.work.contains(WorkFlags::SINGLESTEP) {
            self.set_single_step(false);
        }
        self.state = ThreadState::Ready;
    }
}
