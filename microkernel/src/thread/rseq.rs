//! A thread's restartable-sequence events and its time-slice extension
//! (`docs/rseq.md`; the check itself is `entry::rseq`, the kernel's side
//! `kernel/rseq.rs`).

use super::{KernelMessage, Thread};
use entry::WorkFlags;

/// Where a thread is with the time-slice extension of its current run on
/// a CPU (one per run: a thread switched out starts again at `Unused`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceExtension {
    /// None granted since it was last switched in.
    Unused,
    /// Granted: it runs on past the tick that would have preempted it,
    /// until it calls `SliceYield` or the extension's end.
    Running,
    /// Granted and over (it yielded, or overran): no second one before it
    /// is switched out.
    Spent,
}

impl Thread {
    /// Something happened to the thread that may have interrupted a
    /// critical section (it was preempted or suspended, moved to another
    /// CPU, or stopped for a message another thread answers): with rseq
    /// registered its section is checked before it next returns to EL0.
    /// Without, its work word stays as it was.
    #[inline(always)]
    pub(crate) fn note_rseq_event(&mut self) {
        if self.rseq.is_some() {
            self.work.insert(WorkFlags::RSEQ);
        }
    }

    /// It was preempted: an rseq event, and its run is over (the next
    /// may have a time-slice extension of its own). One test for a thread
    /// without rseq, the round robin's case.
    #[inline(always)]
    pub(crate) fn note_preemption(&mut self) {
        if self.rseq.is_some() {
            self.work.insert(WorkFlags::RSEQ);
            self.slice = SliceExtension::Unused;
        }
    }

    /// `set_kernel_message` for a thread with rseq: the stop is an event
    /// unless it is a single-step report, so that a tracer can step
    /// through a critical section.
    #[cold]
    #[inline(never)]
    pub(crate) fn note_stop_event(&mut self) {
        let step = matches!(
            self.kernel_message,
            Some(KernelMessage::TraceStop(stop)) if stop.kind == abi::trace::StopKind::Step
        );
        if !step {
            self.work.insert(WorkFlags::RSEQ);
        }
    }
}
