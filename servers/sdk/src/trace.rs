//! Writing a tracer: decoding trace stops and building the answers.
//!
//! A tracer attaches to a thread with [`crate::tcb::Tcb::attach_tracer`],
//! then receives its stops on the endpoint (see `abi::trace` for the
//! message layout) and answers each with `Reply` or `ReplyRecv`:
//!
//! ```no_run
//! use sdk::ipc::{self, Cptr};
//! use sdk::trace::{self, Stop};
//!
//! let endpoint = Cptr(2);
//! let mut received = ipc::recv(endpoint).expect("a stop");
//! loop {
//!     let Some(stop) = Stop::decode(&received) else { break };
//!     if stop.is_exit() {
//!         sdk::println!("[task {}] {} = {:#x}", stop.thread, stop.name(), stop.regs[0]);
//!     }
//!     received = ipc::reply_recv(endpoint, &trace::resume(false)).expect("a stop");
//! }
//! ```
//!
//! or, with the loop written once, as a [`TraceServer`] handed to
//! [`serve`]:
//!
//! ```no_run
//! use sdk::ipc::Cptr;
//! use sdk::trace::{self, serve, Next, Stop, TraceServer};
//!
//! /// Prints each syscall's result; ends when the thread exits.
//! struct Results;
//!
//! impl TraceServer for Results {
//!     fn stop(&mut self, stop: &Stop) -> Next {
//!         if stop.is_exit() {
//!             sdk::println!("[task {}] {} = {:#x}", stop.thread, stop.name(), stop.regs[0]);
//!         }
//!         if stop.syscall() == Some(sdk::Syscall::Exit) {
//!             return Next::AnswerThenStop(trace::resume(false));
//!         }
//!         Next::Answer(trace::resume(false))
//!     }
//! }
//!
//! let result = serve(Cptr(2), &mut Results);
//! ```
//!
//! The layout of stops and replies is `abi::trace`'s (its `encode` and
//! `decode`, which the kernel uses too); this module gathers the words
//! and builds the messages.

use crate::ipc::{self, Cptr, Message, Received};
use abi::trace::{StopMessage, TRACE_STOP_WORDS};
use abi::{ErrorCode, Syscall};

pub use abi::trace::{StopKind, TraceAction, TraceReply};

/// One trace stop, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// Entry, exit or step.
    pub kind: StopKind,
    /// The syscall number (entry, exit: as dispatched) or, at a step, `x8`.
    pub number: u64,
    /// The stopped thread's `x0..=x8` (at exit `x0` is the result and
    /// `x8` the second result).
    pub regs: [u64; 9],
    /// Its PC: after the `svc` (entry, exit), or the next instruction.
    pub pc: u64,
    /// The thread's identifier (as the kernel numbers threads).
    pub thread: u64,
    /// The badge of the endpoint capability the tracer attached with.
    pub badge: u64,
    /// The counter (CNTVCT_EL0) when the thread stopped.
    pub time: u64,
}

impl Stop {
    /// A stop from its label, its 13 words (`abi::trace` layout) and the
    /// badge; `None` if the label is no stop's or words are missing.
    pub fn from_words(label: u64, words: &[u64], badge: u64) -> Option<Stop> {
        let words = words
            .get(..usize::from(TRACE_STOP_WORDS))?
            .try_into()
            .ok()?;
        let stop = StopMessage::decode(label, words)?;
        Some(Stop {
            kind: stop.kind,
            number: stop.number,
            regs: stop.regs,
            pc: stop.pc,
            thread: stop.thread,
            badge,
            time: stop.time,
        })
    }

    /// The stop just received (words past the registers come from this
    /// thread's IPC buffer); `None` for any other message.
    #[cfg(all(target_arch = "aarch64", target_os = "none"))]
    pub fn decode(received: &Received) -> Option<Stop> {
        let mut words = [0u64; TRACE_STOP_WORDS as usize];
        words[..6].copy_from_slice(&received.message.words);
        for (i, word) in words.iter_mut().enumerate().skip(6) {
            *word = crate::ipc::buffer_word(i);
        }
        if received.message.info.length() < TRACE_STOP_WORDS {
            return None;
        }
        Stop::from_words(received.message.info.label(), &words, received.badge)
    }

    /// On the host there is no IPC buffer: only the register words.
    #[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
    pub fn decode(received: &Received) -> Option<Stop> {
        let mut words = [0u64; TRACE_STOP_WORDS as usize];
        words[..6].copy_from_slice(&received.message.words);
        Stop::from_words(received.message.info.label(), &words, received.badge)
    }

    /// An entry stop.
    pub fn is_entry(&self) -> bool {
        self.kind == StopKind::Entry
    }

    /// An exit stop.
    pub fn is_exit(&self) -> bool {
        self.kind == StopKind::Exit
    }

    /// A single-step stop.
    pub fn is_step(&self) -> bool {
        self.kind == StopKind::Step
    }

    /// The syscall (entry and exit stops), if the number names one.
    pub fn syscall(&self) -> Option<Syscall> {
        match self.kind {
            StopKind::Step => None,
            _ => Syscall::from_number(self.number),
        }
    }

    /// The syscall's name, `"?"` for an unknown number or a step.
    pub fn name(&self) -> &'static str {
        self.syscall().map_or("?", Syscall::name)
    }
}

/// The message of `reply` (`TraceReply::encode`). A reply with a word
/// past the registers (a modify) writes it into this thread's IPC buffer.
pub fn reply_message(reply: TraceReply) -> Message {
    let (info, w) = reply.encode();
    #[cfg(all(target_arch = "aarch64", target_os = "none"))]
    if usize::from(info.length()) > abi::REGISTER_MESSAGE_WORDS {
        crate::ipc::set_buffer_word(6, w[6]);
    }
    Message {
        info,
        words: [w[0], w[1], w[2], w[3], w[4], w[5]],
    }
}

/// Carry on (at an entry stop: run the syscall as it is); `step`:
/// single-step after it.
pub fn resume(step: bool) -> Message {
    reply_message(TraceReply {
        action: TraceAction::Continue,
        step,
    })
}

/// Carry on with `x8 = number` and `x0..x5 = args` (at an entry stop: the
/// syscall runs with them, and policy checks them). Writes word 6 into
/// this thread's IPC buffer.
pub fn modify(number: u64, args: [u64; 6], step: bool) -> Message {
    reply_message(TraceReply {
        action: TraceAction::Modify { number, args },
        step,
    })
}

/// Set the result, `x0 = x0` and `x8 = x8`; at an entry stop the syscall
/// is skipped (it does not run and has no exit stop).
pub fn result(x0: u64, x8: u64, step: bool) -> Message {
    reply_message(TraceReply {
        action: TraceAction::Result { x0, x8 },
        step,
    })
}

/// Detach: the thread runs on untraced.
pub fn detach() -> Message {
    reply_message(TraceReply {
        action: TraceAction::Detach,
        step: false,
    })
}

/// What a tracer does after a stop (or another message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Answer the stop with this message and wait for the next one.
    Answer(Message),
    /// Answer with this message, then return from [`serve`].
    AnswerThenStop(Message),
    /// Return from [`serve`] without answering.
    Stop,
}

/// A tracer: the one method to write.
pub trait TraceServer {
    /// The answer to one stop (`resume`, `modify`, `result`, `detach`).
    fn stop(&mut self, stop: &Stop) -> Next;

    /// Any other message on the endpoint (by default: stop serving,
    /// without an answer).
    fn other(&mut self, _received: &Received) -> Next {
        Next::Stop
    }
}

/// Answers the stops arriving on `endpoint` until the server says stop
/// (`Ok`) or receiving or answering fails (the error).
pub fn serve(endpoint: Cptr, server: &mut impl TraceServer) -> Result<(), ErrorCode> {
    let mut received = ipc::recv(endpoint)?;
    loop {
        let next = match Stop::decode(&received) {
            Some(stop) => server.stop(&stop),
            None => server.other(&received),
        };
        received = match next {
            Next::Answer(answer) => ipc::reply_recv(endpoint, &answer)?,
            Next::AnswerThenStop(answer) => return ipc::reply(&answer),
            Next::Stop => return Ok(()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::trace::{
        TRACE_ENTRY, TRACE_EXIT, TRACE_REPLY_CONTINUE, TRACE_REPLY_DETACH, TRACE_REPLY_MODIFY,
        TRACE_REPLY_RESULT, TRACE_REPLY_STEP,
    };

    #[test]
    fn stops_decode_from_the_documented_layout() {
        let words: [u64; 13] = [19, 5, 1, 2, 3, 4, 55, 19, 0x40_1000, 3, 66, 77, 0x9_0000];
        let stop = Stop::from_words(TRACE_ENTRY, &words, 0x7ace).expect("a stop");
        assert!(stop.is_entry());
        assert_eq!(stop.syscall(), Some(Syscall::Poll));
        assert_eq!(stop.regs, [5, 1, 2, 3, 4, 55, 66, 77, 19]);
        assert_eq!((stop.pc, stop.thread, stop.badge), (0x40_1000, 3, 0x7ace));
        assert_eq!(stop.time, 0x9_0000);
        let exit = Stop::from_words(TRACE_EXIT, &words, 0).expect("a stop");
        assert!(exit.is_exit() && exit.name() == "poll");
        assert_eq!(Stop::from_words(0xfa17, &words, 0), None);
        assert_eq!(Stop::from_words(TRACE_ENTRY, &words[..12], 0), None);
    }

    #[test]
    fn answers_carry_their_labels() {
        assert_eq!(resume(false).info.label(), TRACE_REPLY_CONTINUE);
        assert_eq!(
            resume(true).info.label(),
            TRACE_REPLY_CONTINUE | TRACE_REPLY_STEP
        );
        let m = modify(3, [1, 2, 3, 4, 5, 6], false);
        assert_eq!((m.info.label(), m.info.length()), (TRACE_REPLY_MODIFY, 7));
        assert_eq!(m.words, [3, 1, 2, 3, 4, 5]);
        let r = result(8, 0x77, true);
        assert_eq!(r.info.label(), TRACE_REPLY_RESULT | TRACE_REPLY_STEP);
        assert_eq!(&r.words[..2], &[8, 0x77]);
        assert_eq!(detach().info.label(), TRACE_REPLY_DETACH);
    }
}
