//! Trace stops: what a tracer receives, and what it may answer.
//!
//! A thread with a tracer (`TcbAttachTracer`) stops at the entry and the
//! exit of each syscall, and after each instruction it single-steps. At a
//! stop it blocks; the kernel sends the tracer's endpoint a message as if
//! the thread had called it: label [`TRACE_ENTRY`], [`TRACE_EXIT`] or
//! [`TRACE_STEP`], [`TRACE_STOP_WORDS`] words, the badge of the endpoint
//! capability the tracer was attached through in `x8`:
//!
//! | word | register | content |
//! |---|---|---|
//! | 0 | `x2` | entry, exit: the syscall number (at exit, as it was dispatched); step: `x8` |
//! | 1..=6 | `x3..x7`, IPC buffer word 6 | the thread's `x0..x5` now (at exit `x0` is the result) |
//! | 7 | IPC buffer word 7 | the thread's `x8` now (at exit: the second result) |
//! | 8 | IPC buffer word 8 | its PC: after the `svc` (entry, exit) or the next instruction to run (step) |
//! | 9 | IPC buffer word 9 | the thread's number (given out in order over the kernel's life, as console lines show it) |
//! | 10, 11 | IPC buffer words 10, 11 | the thread's `x6`, `x7` |
//!
//! The tracer answers with `Reply` (or `ReplyRecv`). The reply's label is
//! one of the `TRACE_REPLY_*` actions, optionally OR-ed with
//! [`TRACE_REPLY_STEP`]; its words are the action's data.
//!
//! Order (the generic entry's, `entry/`): the entry stop comes before the
//! policy check, so the filters and the policy server judge the arguments
//! as the tracer left them; a syscall the tracer skipped has no exit stop;
//! a single-stepped `svc` reports its step after the exit stop, once the
//! syscall has returned; a skipped `svc` reports no step of its own (its
//! entry stop stands for it), the next stop comes after the following
//! instruction.
//!
//! Tracing fails open, unlike policy: a reply with an unknown label is a
//! continue; if the tracer's endpoint is destroyed, or the tracer takes
//! another call or ends without replying, the thread runs on untraced (a
//! stopped entry runs its syscall, as made).

/// Label of an entry stop: the syscall has not run yet.
pub const TRACE_ENTRY: u64 = 0x7ac0;
/// Label of an exit stop: the syscall has run; word 1 is its result.
pub const TRACE_EXIT: u64 = 0x7ac1;
/// Label of a step stop: one instruction (or one `svc`, syscall included)
/// was executed.
pub const TRACE_STEP: u64 = 0x7ac2;
/// Words in a stop message.
pub const TRACE_STOP_WORDS: u8 = 12;

/// Reply action: carry on (at an entry stop: run the syscall as it is).
pub const TRACE_REPLY_CONTINUE: u64 = 0;
/// Reply action: write word 0 to `x8` and words 1..=6 to `x0..x5` (word 6
/// from the tracer's IPC buffer), then carry on. At an entry stop the
/// syscall runs with the new number and arguments, and policy checks
/// those.
pub const TRACE_REPLY_MODIFY: u64 = 1;
/// Reply action: write word 0 to `x0` and word 1 to `x8`. At an entry stop
/// the syscall is skipped (SYSEMU): it does not run, has no exit stop, and
/// returns these as its result. At an exit stop it changes the result.
pub const TRACE_REPLY_RESULT: u64 = 2;
/// Reply action: detach the tracer, then carry on as for continue.
pub const TRACE_REPLY_DETACH: u64 = 3;
/// Flag OR-ed into a continue, modify or result reply: single-step the
/// thread — after its next instruction (an `svc`: after the syscall
/// returns) it reports a [`TRACE_STEP`] stop. Without it, stepping stops.
pub const TRACE_REPLY_STEP: u64 = 0x100;

/// Which stop a trace message reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopKind {
    /// [`TRACE_ENTRY`].
    Entry,
    /// [`TRACE_EXIT`].
    Exit,
    /// [`TRACE_STEP`].
    Step,
}

impl StopKind {
    /// The kind a message label stands for, if it is a stop's.
    pub const fn from_label(label: u64) -> Option<StopKind> {
        match label {
            TRACE_ENTRY => Some(StopKind::Entry),
            TRACE_EXIT => Some(StopKind::Exit),
            TRACE_STEP => Some(StopKind::Step),
            _ => None,
        }
    }

    /// The label of a stop of this kind.
    pub const fn label(self) -> u64 {
        match self {
            StopKind::Entry => TRACE_ENTRY,
            StopKind::Exit => TRACE_EXIT,
            StopKind::Step => TRACE_STEP,
        }
    }
}

/// What a tracer's reply asks for, decoded from its label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyAction {
    /// [`TRACE_REPLY_CONTINUE`], and any label that is no action.
    Continue,
    /// [`TRACE_REPLY_MODIFY`].
    Modify,
    /// [`TRACE_REPLY_RESULT`].
    Result,
    /// [`TRACE_REPLY_DETACH`].
    Detach,
}

impl ReplyAction {
    /// The action of reply label `label` and whether it asks for a single
    /// step (never with detach). Unknown labels continue without a step:
    /// tracing fails open.
    pub const fn decode(label: u64) -> (ReplyAction, bool) {
        let step = label & TRACE_REPLY_STEP != 0;
        match label & !TRACE_REPLY_STEP {
            TRACE_REPLY_CONTINUE => (ReplyAction::Continue, step),
            TRACE_REPLY_MODIFY => (ReplyAction::Modify, step),
            TRACE_REPLY_RESULT => (ReplyAction::Result, step),
            TRACE_REPLY_DETACH => (ReplyAction::Detach, false),
            _ => (ReplyAction::Continue, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_labels_round_trip() {
        for kind in [StopKind::Entry, StopKind::Exit, StopKind::Step] {
            assert_eq!(StopKind::from_label(kind.label()), Some(kind));
        }
        assert_eq!(StopKind::from_label(0), None);
        assert_eq!(StopKind::from_label(crate::fault::FAULT_LABEL), None);
    }

    #[test]
    fn reply_labels_decode_and_fail_open() {
        assert_eq!(
            ReplyAction::decode(TRACE_REPLY_CONTINUE),
            (ReplyAction::Continue, false)
        );
        assert_eq!(
            ReplyAction::decode(TRACE_REPLY_RESULT | TRACE_REPLY_STEP),
            (ReplyAction::Result, true)
        );
        assert_eq!(
            ReplyAction::decode(TRACE_REPLY_MODIFY | TRACE_REPLY_STEP),
            (ReplyAction::Modify, true)
        );
        assert_eq!(
            ReplyAction::decode(TRACE_REPLY_DETACH | TRACE_REPLY_STEP),
            (ReplyAction::Detach, false)
        );
        assert_eq!(ReplyAction::decode(77), (ReplyAction::Continue, false));
        assert_eq!(
            ReplyAction::decode(77 | TRACE_REPLY_STEP),
            (ReplyAction::Continue, false)
        );
    }
}
