//! A thread's restartable-sequence events and its time-slice extension
//! (`docs/rseq.md`; the check itself is `entry::rseq`, the kernel's side
//! `kernel/rseq.rs`).

use super::Thread;
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

    /// The thread leaves its CPU: its next run may have an extension of
    /// its own, and one still running is over.
    #[inline(always)]
    pub(crate) fn end_slice_run(&mut self) {
        self.slice = SliceExtension::Unused;
    }
}
