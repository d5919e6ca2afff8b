//! A thread's state and its kernel message: changed only here, each
//! change by its name, with what must hold before it.

use super::*;

/// A thread's state changes only here, each by its name, with what must
/// hold before it (the invariants `kernel::invariants` checks of the
/// whole kernel: an ended thread never blocks or runs again, a thread
/// sends or waits for one kernel message only while it has one).
impl Thread {
    /// Where the thread is in its life.
    #[inline(always)]
    pub fn state(&self) -> ThreadState {
        self.state
    }

    /// The state in place, for a `match` that binds a part of it: a match
    /// on the copy `state` returns had the compiler copy all 32 bytes to
    /// the stack first (4 instructions on each wake-up in `apply_ipc`).
    #[inline(always)]
    pub(crate) fn state_ref(&self) -> &ThreadState {
        &self.state
    }

    /// Ready to run: woken, answered, yielded or made (the caller puts
    /// it in the run queue).
    #[inline(always)]
    pub(crate) fn make_ready(&mut self) {
        debug_assert!(!self.state.has_ended(), "an ended thread is never ready");
        self.state = ThreadState::Ready;
    }

    /// On the CPU (or about to return to it).
    #[inline(always)]
    pub(crate) fn run(&mut self) {
        debug_assert!(!self.state.has_ended(), "an ended thread never runs");
        self.state = ThreadState::Running;
    }

    /// Queued on `endpoint` to send (`call`: then to wait for the reply;
    /// `kernel_message`: its kernel message, not its registers).
    #[inline(always)]
    pub(crate) fn block_on_send(
        &mut self,
        endpoint: ObjectId,
        badge: u64,
        call: bool,
        kernel_message: bool,
    ) {
        debug_assert!(!self.state.has_ended(), "an ended thread never blocks");
        debug_assert!(!kernel_message || self.kernel_message.is_some());
        self.state = ThreadState::BlockedOnSend {
            endpoint,
            badge,
            call,
            kernel_message,
        };
    }

    /// Queued on `endpoint` to receive.
    #[inline(always)]
    pub(crate) fn block_on_receive(&mut self, endpoint: ObjectId) {
        debug_assert!(!self.state.has_ended(), "an ended thread never blocks");
        self.state = ThreadState::BlockedOnReceive { endpoint };
    }

    /// Its `Call` was received: it waits for the reply.
    #[inline(always)]
    pub(crate) fn block_on_reply(&mut self) {
        debug_assert!(!self.state.has_ended(), "an ended thread never blocks");
        self.state = ThreadState::BlockedOnReply;
    }

    /// Its kernel message was received: it waits for the answer.
    #[inline(always)]
    pub(crate) fn block_on_answer(&mut self) {
        debug_assert!(!self.state.has_ended(), "an ended thread never blocks");
        debug_assert!(self.kernel_message.is_some(), "an answer to no message");
        self.state = ThreadState::BlockedOnAnswer;
    }

    /// Waits for `notification`'s word.
    #[inline(always)]
    pub(crate) fn block_on_notification(&mut self, notification: ObjectId) {
        debug_assert!(!self.state.has_ended(), "an ended thread never blocks");
        self.state = ThreadState::BlockedOnNotification { notification };
    }

    /// Waits for room in its audit ring.
    #[inline(always)]
    pub(crate) fn block_on_audit(&mut self) {
        debug_assert!(!self.state.has_ended(), "an ended thread never blocks");
        self.state = ThreadState::BlockedOnAudit;
    }

    /// Stopped by `TcbSuspend`.
    #[inline(always)]
    pub(crate) fn suspend(&mut self) {
        debug_assert!(!self.state.has_ended(), "an ended thread is not suspended");
        self.state = ThreadState::Suspended;
        // Stopped by another thread: a section it was in restarts.
        self.note_preemption();
    }

    /// Made from user space, not started yet (a new TCB's record).
    #[inline(always)]
    pub(crate) fn make_inactive(&mut self) {
        debug_assert_eq!(self.state, ThreadState::Free, "only a new TCB is inactive");
        self.state = ThreadState::Inactive;
    }

    /// Ends (or ends now: `Exited`, `Faulted`) as `end` says.
    #[inline(always)]
    pub(crate) fn end_with(&mut self, end: ThreadState) {
        debug_assert!(end.has_ended(), "{end:?} is no end");
        self.state = end;
    }

    /// Ended, with its end message queued on its fault endpoint.
    #[inline(always)]
    pub(crate) fn end_pending(&mut self, endpoint: ObjectId, badge: u64) {
        debug_assert!(
            self.state.has_ended(),
            "only an ended thread has an end message"
        );
        self.state = ThreadState::EndPending { endpoint, badge };
    }

    /// An ended thread whose TCB was kept starts again (`TcbRestart`)
    /// with `context` and fresh FP state: its end forgotten, it is ready
    /// (the caller puts it in the run queue).
    #[inline(always)]
    pub(crate) fn restart(&mut self, context: UserContext) {
        debug_assert!(self.state.is_kept_end(), "only a kept end restarts");
        self.end = None;
        // What it lost as a policy server was its last run's.
        self.served = super::ServedFilters::NONE;
        self.context = context;
        self.fp = FpState::zeroed();
        // A new run, as of a new program: no restartable sequences.
        self.rseq = None;
        self.slice = super::SliceExtension::Unused;
        self.work.remove(entry::WorkFlags::RSEQ);
        self.state = ThreadState::Ready;
    }

    /// Any state, for the unit tests that start from a given one.
    #[cfg(test)]
    pub(crate) fn set_state_for_test(&mut self, state: ThreadState) {
        self.state = state;
    }
}

/// The kernel message, one at a time.
impl Thread {
    /// The message the kernel sends for it, if any.
    #[inline(always)]
    pub(crate) fn kernel_message(&self) -> Option<&KernelMessage> {
        self.kernel_message.as_ref()
    }

    /// Gives it `message` to send (it has none).
    #[inline(always)]
    pub(crate) fn set_kernel_message(&mut self, message: KernelMessage) {
        debug_assert!(
            self.kernel_message.is_none(),
            "one kernel message at a time"
        );
        self.kernel_message = Some(message);
        // Another thread answers it (a fault, a verdict, a trace stop):
        // an rseq event (one load here for a thread without rseq; the
        // message is looked at out of line).
        if self.rseq.is_some() {
            self.note_stop_event();
        }
    }

    /// Takes its kernel message (answered, or dropped).
    #[inline(always)]
    pub(crate) fn take_kernel_message(&mut self) -> Option<KernelMessage> {
        self.kernel_message.take()
    }
}

impl Thread {
    /// The fault report it waits to have answered.
    pub fn fault_report(&self) -> Option<FaultReport> {
        match self.kernel_message {
            Some(KernelMessage::Fault(report)) => Some(report),
            _ => None,
        }
    }

    /// The policy request it waits to have answered.
    pub fn policy_request(&self) -> Option<&PolicyRequest> {
        match &self.kernel_message {
            Some(KernelMessage::PolicyRequest(request)) => Some(request),
            _ => None,
        }
    }

    /// The trace stop it waits to have answered.
    pub fn trace_stop(&self) -> Option<TraceStop> {
        match self.kernel_message {
            Some(KernelMessage::TraceStop(stop)) => Some(stop),
            _ => None,
        }
    }

    /// Takes its trace stop, if that is its kernel message.
    pub fn take_trace_stop(&mut self) -> Option<TraceStop> {
        let stop = self.trace_stop()?;
        self.kernel_message = None;
        Some(stop)
    }

    /// Takes its fault report, if that is its kernel message.
    pub fn take_fault_report(&mut self) -> Option<FaultReport> {
        let report = self.fault_report()?;
        self.kernel_message = None;
        Some(report)
    }
}
