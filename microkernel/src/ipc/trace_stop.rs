//! Trace stops as IPC: the message a tracer receives, what its reply does
//! to the stopped thread, and how a stop ends when the tracer is gone.
//!
//! A stop is a kernel message (`send_kernel_message`): the stopped thread
//! waits in the tracer's endpoint queue, then for the answer. Unlike a
//! policy request, a stop fails *open*: whatever happens to the tracer,
//! the thread runs on (see `abi::trace`).

use super::message;
use crate::platform::PhysMemory;
use crate::stopped_call::StopAnswer;
use crate::thread::{Thread, TraceProgress, TraceStop};
use abi::trace::{StopKind, StopMessage, TraceAction, TraceReply};
use abi::ErrorCode;
use arch::context::SPSR_SOFTWARE_STEP;
use entry::WorkFlags;

/// The stop of `tracee` into `tracer`'s registers and IPC buffer
/// (`abi::trace::StopMessage::encode`).
#[inline(always)]
pub(super) fn deliver_trace_stop<M: PhysMemory>(
    phys: &mut M,
    stop: &TraceStop,
    tracee: &Thread,
    tracer: &mut Thread,
    badge: u64,
) {
    // Read in place, word by word: a copy of the tracee's 31 registers was
    // a memcpy.
    let message = StopMessage {
        kind: stop.kind,
        number: stop.number,
        regs: tracee.context.syscall_registers(),
        pc: tracee.context.pc,
        thread: u64::from(tracee.number),
        time: stop.time,
    };
    let words = message.encode();
    if let Some(buffer) = tracer.ipc_buffer {
        // One translation for the six buffer words (the buffer is a page).
        phys.write_phys_words(buffer + 8 * 6, &words[6..]);
    }
    let context = &mut tracer.context;
    context.set_result(ErrorCode::Ok);
    context.set_message_info(message.info());
    // Word by word: as a slice copy it was a call to `memcpy` (the
    // kernel's target is built with strict alignment), twice a syscall.
    context.set_message_words([words[0], words[1], words[2], words[3], words[4], words[5]]);
    context.set_badge(badge);
}

/// Applies `replier`'s answer to the stop `stop` of `tracee`, which is
/// ready afterwards. At an entry stop the answer changes the stopped call
/// the kernel keeps (`stopped_call`), never the thread's registers, and
/// the call goes on with it; at an exit or step stop the syscall is over,
/// and the answer changes the registers the thread returns with.
pub(super) fn answer_trace_stop<M: PhysMemory>(
    phys: &mut M,
    replier: &Thread,
    thread: &mut Thread,
    stop: TraceStop,
) {
    let label = message::sent_info(replier).label();
    let word6 = replier
        .ipc_buffer
        .map_or(0, |buffer| phys.read_phys_u64(buffer + 8 * 6));
    // Only the message registers (a copy of all 31 was a 216-byte memcpy
    // the optimiser did not always drop).
    let TraceReply { action, step } = {
        let [w0, w1, w2, w3, w4, w5] = replier.context.message_words();
        TraceReply::decode(label, &[w0, w1, w2, w3, w4, w5, word6])
    };
    let entry_call = match (stop.kind, thread.call.as_mut()) {
        (StopKind::Entry, Some(call)) => Some(call),
        _ => None,
    };
    let registers: &mut [u64] = match entry_call {
        Some(call) => {
            call.answer = Some(if matches!(action, TraceAction::Result { .. }) {
                // Skipped (SYSEMU): the result is what it returns.
                StopAnswer::TraceSkip
            } else {
                StopAnswer::TraceContinue
            });
            &mut call.regs
        }
        None => thread.context.syscall_registers_mut(),
    };
    match action {
        TraceAction::Continue | TraceAction::Detach => {}
        TraceAction::Modify { number, args } => {
            registers[8] = number;
            registers[0..6].copy_from_slice(&args);
        }
        TraceAction::Result { x0, x8 } => {
            registers[0] = x0;
            registers[8] = x8;
        }
    }
    // A detach never steps (`TraceReply::decode`).
    if action == TraceAction::Detach {
        thread.detach_tracer();
    }
    thread.set_single_step(step);
    thread.make_ready();
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
        // Already as asked (most answers to a stop ask no step): the work
        // word does not change, so the masks it gives stay current, and
        // recomputing them cost every answered stop some 10 instructions.
        let stepping = self.context.spsr & SPSR_SOFTWARE_STEP != 0;
        if self.work.contains(WorkFlags::SINGLESTEP) == on && stepping == on {
            return;
        }
        if on {
            self.work.insert(WorkFlags::SINGLESTEP);
            self.context.spsr |= SPSR_SOFTWARE_STEP;
        } else {
            self.work.remove(WorkFlags::SINGLESTEP);
            self.context.spsr &= !SPSR_SOFTWARE_STEP;
        }
        self.recompute_no_entry_work();
    }

    /// The tracer will never answer `stop` (its endpoint is gone, it ended
    /// or moved on, the thread was detached): the thread runs on as if it
    /// had said "continue" (a stopped entry's call goes on as made),
    /// without single-stepping. Tracing fails open.
    pub fn abandon_trace_stop(&mut self, stop: TraceStop) {
        if stop.kind == StopKind::Entry {
            if let Some(call) = self.call.as_mut() {
                call.answer = Some(StopAnswer::TraceContinue);
            }
        }
        if self.work.contains(WorkFlags::SINGLESTEP) {
            self.set_single_step(false);
        }
        self.make_ready();
    }
}
