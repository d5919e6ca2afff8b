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
//! | 12 | IPC buffer word 12 | the counter (CNTVCT_EL0) when the thread stopped ([`TIME_WORD`]), for a timeline |
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
//!
//! Both ends use this module: the kernel encodes a [`StopMessage`] and
//! decodes the reply as a [`TraceReply`], a tracer decodes the stop and
//! encodes its reply, so the layout lives only here.

use crate::MessageInfo;

/// Label of an entry stop: the syscall has not run yet.
pub const TRACE_ENTRY: u64 = 0x7ac0;
/// Label of an exit stop: the syscall has run; word 1 is its result.
pub const TRACE_EXIT: u64 = 0x7ac1;
/// Label of a step stop: one instruction (or one `svc`, syscall included)
/// was executed.
pub const TRACE_STEP: u64 = 0x7ac2;
/// Words in a stop message.
pub const TRACE_STOP_WORDS: u8 = 13;
/// The word of a stop message that holds its time.
pub const TIME_WORD: usize = 12;

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

/// Words of a reply that an action reads: 0..=5 in `x2..x7`, 6 in the
/// tracer's IPC buffer word 6.
pub const TRACE_REPLY_WORDS: usize = 7;

/// A stop message (the table above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopMessage {
    /// Entry, exit or step.
    pub kind: StopKind,
    /// Word 0: the syscall number (entry, exit: as dispatched) or, at a
    /// step, `x8`.
    pub number: u64,
    /// The stopped thread's `x0..=x8` (at exit `x0` is the result and
    /// `x8` the second result).
    pub regs: [u64; 9],
    /// Its PC: after the `svc` (entry, exit), or the next instruction.
    pub pc: u64,
    /// The thread's number.
    pub thread: u64,
    /// The counter when the thread stopped.
    pub time: u64,
}

impl StopMessage {
    /// The message info of this stop: its kind's label,
    /// [`TRACE_STOP_WORDS`] words.
    #[inline(always)]
    pub fn info(&self) -> MessageInfo {
        MessageInfo::with(self.kind.label(), TRACE_STOP_WORDS)
    }

    /// The message words, in order: 0..=5 go in `x2..x7`, 6..=12 in IPC
    /// buffer words 6..=12.
    #[inline(always)]
    pub const fn encode(&self) -> [u64; TRACE_STOP_WORDS as usize] {
        let r = &self.regs;
        [
            self.number,
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[8],
            self.pc,
            self.thread,
            r[6],
            r[7],
            self.time,
        ]
    }

    /// The stop a message with `label` and these words reports; `None`
    /// if the label is no stop's.
    #[inline(always)]
    pub const fn decode(
        label: u64,
        words: &[u64; TRACE_STOP_WORDS as usize],
    ) -> Option<StopMessage> {
        let Some(kind) = StopKind::from_label(label) else {
            return None;
        };
        let w = words;
        Some(StopMessage {
            kind,
            number: w[0],
            regs: [w[1], w[2], w[3], w[4], w[5], w[6], w[10], w[11], w[7]],
            pc: w[8],
            thread: w[9],
            time: w[TIME_WORD],
        })
    }
}

/// What a tracer's reply asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceAction {
    /// [`TRACE_REPLY_CONTINUE`], and any label that is no action.
    Continue,
    /// [`TRACE_REPLY_MODIFY`]: `x8 = number`, `x0..x5 = args`.
    Modify {
        /// The new syscall number (word 0).
        number: u64,
        /// The new `x0..x5` (words 1..=6; word 6 from the IPC buffer).
        args: [u64; 6],
    },
    /// [`TRACE_REPLY_RESULT`]: `x0` and `x8` (words 0 and 1).
    Result {
        /// The new `x0`.
        x0: u64,
        /// The new `x8`.
        x8: u64,
    },
    /// [`TRACE_REPLY_DETACH`].
    Detach,
}

/// A tracer's reply: the action and whether to single-step after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceReply {
    /// What to do with the stopped thread.
    pub action: TraceAction,
    /// Single-step it afterwards ([`TRACE_REPLY_STEP`]; never with detach).
    pub step: bool,
}

impl TraceReply {
    /// The reply message: its info (label, with [`TRACE_REPLY_STEP`] if
    /// stepping, and the words the action uses) and words 0..=6 (6 goes
    /// in the IPC buffer; 0 where unused).
    #[inline(always)]
    pub fn encode(self) -> (MessageInfo, [u64; TRACE_REPLY_WORDS]) {
        let (label, length, words) = match self.action {
            TraceAction::Continue => (TRACE_REPLY_CONTINUE, 0, [0; TRACE_REPLY_WORDS]),
            TraceAction::Modify { number, args: a } => (
                TRACE_REPLY_MODIFY,
                7,
                [number, a[0], a[1], a[2], a[3], a[4], a[5]],
            ),
            TraceAction::Result { x0, x8 } => (TRACE_REPLY_RESULT, 2, [x0, x8, 0, 0, 0, 0, 0]),
            TraceAction::Detach => (TRACE_REPLY_DETACH, 0, [0; TRACE_REPLY_WORDS]),
        };
        let step = if self.step { TRACE_REPLY_STEP } else { 0 };
        (MessageInfo::with(label | step, length), words)
    }

    /// The reply a message with `label` and words 0..=6 asks for, as the
    /// kernel takes it. Unknown labels continue without a step (tracing
    /// fails open); a detach never steps. The reply's length is not
    /// looked at.
    #[inline(always)]
    pub const fn decode(label: u64, words: &[u64; TRACE_REPLY_WORDS]) -> TraceReply {
        let step = label & TRACE_REPLY_STEP != 0;
        let w = words;
        let (action, step) = match label & !TRACE_REPLY_STEP {
            TRACE_REPLY_CONTINUE => (TraceAction::Continue, step),
            TRACE_REPLY_MODIFY => (
                TraceAction::Modify {
                    number: w[0],
                    args: [w[1], w[2], w[3], w[4], w[5], w[6]],
                },
                step,
            ),
            TRACE_REPLY_RESULT => (TraceAction::Result { x0: w[0], x8: w[1] }, step),
            TRACE_REPLY_DETACH => (TraceAction::Detach, false),
            _ => (TraceAction::Continue, false),
        };
        TraceReply { action, step }
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
    fn stops_round_trip_in_the_documented_order() {
        let stop = StopMessage {
            kind: StopKind::Entry,
            number: 19,
            regs: [5, 1, 2, 3, 4, 55, 66, 77, 19],
            pc: 0x40_1000,
            thread: 3,
            time: 0x1234_5678,
        };
        let words = stop.encode();
        assert_eq!(
            words,
            [19, 5, 1, 2, 3, 4, 55, 19, 0x40_1000, 3, 66, 77, 0x1234_5678]
        );
        assert_eq!(stop.info().length(), TRACE_STOP_WORDS);
        for kind in [StopKind::Entry, StopKind::Exit, StopKind::Step] {
            let stop = StopMessage { kind, ..stop };
            assert_eq!(StopMessage::decode(stop.info().label(), &words), Some(stop));
        }
        assert_eq!(StopMessage::decode(crate::fault::FAULT_LABEL, &words), None);
        assert_eq!(StopMessage::decode(TRACE_REPLY_CONTINUE, &words), None);
    }

    #[test]
    fn replies_round_trip() {
        let actions = [
            TraceAction::Continue,
            TraceAction::Modify {
                number: 3,
                args: [1, 2, 3, 4, 5, 6],
            },
            TraceAction::Result { x0: 8, x8: 0x77 },
        ];
        for action in actions {
            for step in [false, true] {
                let reply = TraceReply { action, step };
                let (info, words) = reply.encode();
                assert_eq!(TraceReply::decode(info.label(), &words), reply);
            }
        }
        let detach = TraceReply {
            action: TraceAction::Detach,
            step: false,
        };
        let (info, words) = detach.encode();
        assert_eq!(TraceReply::decode(info.label(), &words), detach);
    }

    #[test]
    fn replies_carry_their_labels_and_lengths() {
        let info = |action, step| TraceReply { action, step }.encode().0;
        let modify = TraceAction::Modify {
            number: 3,
            args: [0; 6],
        };
        let i = info(modify, false);
        assert_eq!((i.label(), i.length()), (TRACE_REPLY_MODIFY, 7));
        let i = info(TraceAction::Result { x0: 1, x8: 2 }, true);
        assert_eq!(
            (i.label(), i.length()),
            (TRACE_REPLY_RESULT | TRACE_REPLY_STEP, 2)
        );
        let i = info(TraceAction::Continue, true);
        assert_eq!(i.label(), TRACE_REPLY_CONTINUE | TRACE_REPLY_STEP);
        assert_eq!(info(TraceAction::Detach, false).label(), TRACE_REPLY_DETACH);
    }

    #[test]
    fn reply_labels_decode_and_fail_open() {
        let decode = |label| {
            let reply = TraceReply::decode(label, &[1, 2, 3, 4, 5, 6, 7]);
            (reply.action, reply.step)
        };
        assert_eq!(decode(TRACE_REPLY_CONTINUE), (TraceAction::Continue, false));
        assert_eq!(
            decode(TRACE_REPLY_RESULT | TRACE_REPLY_STEP),
            (TraceAction::Result { x0: 1, x8: 2 }, true)
        );
        assert_eq!(
            decode(TRACE_REPLY_MODIFY | TRACE_REPLY_STEP),
            (
                TraceAction::Modify {
                    number: 1,
                    args: [2, 3, 4, 5, 6, 7]
                },
                true
            )
        );
        // A detach never steps; unknown labels continue, unstepped.
        assert_eq!(
            decode(TRACE_REPLY_DETACH | TRACE_REPLY_STEP),
            (TraceAction::Detach, false)
        );
        assert_eq!(decode(77), (TraceAction::Continue, false));
        assert_eq!(
            decode(77 | TRACE_REPLY_STEP),
            (TraceAction::Continue, false)
        );
    }
}
