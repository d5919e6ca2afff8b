//! What a policy server receives for a `Notify` verdict, and what it may
//! answer.
//!
//! The filtered thread blocks; the kernel sends its policy server's
//! endpoint a message as if the thread had called it: label
//! [`POLICY_REQUEST_LABEL`], 17 words, the badge of the endpoint
//! capability the server was named through in `x8`:
//!
//! | word | register | content |
//! |---|---|---|
//! | 0 | `x2` | the syscall number |
//! | 1 | `x3` | the type (`CapType` number) of the capability `x0` names, 0 if none |
//! | 2 | `x4` | that capability's badge (0 if none or unbadged) |
//! | 3 | `x5` | the thread's number (given out in order over the kernel's life, as console lines show it) |
//! | 4 | `x6` | a cookie, unique per request |
//! | 5 | `x7` | the syscall's `x0` |
//! | 6..=12 | IPC buffer words 6..=12 | the syscall's `x1..x7` |
//! | 13 | IPC buffer word 13 | the caller's PC (the address after its `svc`) |
//! | 14 | IPC buffer word 14 | what memory the call carries ([`CarriedMemory`]'s number) |
//! | 15 | IPC buffer word 15 | that memory's length in bytes (the buffer's, which may exceed what was judged) |
//! | 16 | IPC buffer word 16 | how many bytes of it were judged and are sent (at most `abi::policy::MAX_JUDGED_BYTES`) |
//!
//! The judged bytes themselves are in the server's IPC buffer from word
//! [`POLICY_REQUEST_MEMORY_WORD`] (byte 1024) on, outside the message
//! words: exactly the copy the kernel judged the call by, and the one the
//! call uses if it runs.
//!
//! The server answers with `Reply` (or `ReplyRecv`); the reply's label is
//! the verdict, its words the verdict's data. A reply with any other label
//! is taken as `Errno(Denied)`, and a server that goes away (its endpoint
//! destroyed, or it takes another call without replying) leaves the thread
//! with `Denied`: the policy fails closed, never open.
//!
//! Both ends use this module: the kernel encodes a [`PolicyRequest`] and
//! decodes the reply as a [`PolicyAnswer`], a server decodes the request
//! and encodes its answer, so the layout lives only here.

use crate::{ErrorCode, MessageInfo};

/// Label of a policy request.
pub const POLICY_REQUEST_LABEL: u64 = 0x901c;
/// Words in a policy request.
pub const POLICY_REQUEST_WORDS: u8 = 17;
/// The IPC buffer word of the server where the judged bytes of a request
/// start (byte 1024: past the message words and the capability-transfer
/// words).
pub const POLICY_REQUEST_MEMORY_WORD: usize = 128;

/// What memory a call carries, as rules and servers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CarriedMemory {
    /// None: no buffer, or it could not be read.
    None = 0,
    /// A buffer argument's bytes (`DebugPrint`'s text, `FilterLoad`'s
    /// description).
    Buffer = 1,
    /// A message's IPC buffer words (word 6 on, little-endian).
    Message = 2,
}

impl CarriedMemory {
    /// The kind with number `raw` (anything unknown is `None`).
    pub const fn from_raw(raw: u64) -> CarriedMemory {
        match raw {
            1 => CarriedMemory::Buffer,
            2 => CarriedMemory::Message,
            _ => CarriedMemory::None,
        }
    }
}
/// Reply label: run the syscall as it was made (it is not asked about again).
pub const POLICY_REPLY_ALLOW: u64 = 0;
/// Reply label: do not run it; word 0 is the error code it returns (a
/// defined, non-zero `ErrorCode`; anything else means `Denied`).
pub const POLICY_REPLY_ERRNO: u64 = 1;
/// Reply label: end the thread (exit status [`KILLED_BY_POLICY`]).
pub const POLICY_REPLY_KILL: u64 = 2;
/// Reply label: do not run it; it returns word 0 in `x0` and word 1 in
/// `x8`, as if the kernel had carried it out.
pub const POLICY_REPLY_EMULATE: u64 = 3;
/// Reply label: run it with `x2..x7` replaced by words 0..=5, after the
/// thread's filters have checked the new arguments again.
pub const POLICY_REPLY_ALLOW_MODIFIED: u64 = 4;

/// Words of a reply that a verdict reads (`x2..x7`).
pub const POLICY_REPLY_WORDS: usize = 6;

/// What the kernel asks a policy server about one syscall (the table
/// above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyRequest {
    /// The syscall number.
    pub number: u64,
    /// The `CapType` number of the capability `x0` names (0: none, or a
    /// syscall that names none, `Syscall::names_capability`).
    pub object_type: u64,
    /// That capability's badge (0 if none or unbadged).
    pub badge: u64,
    /// The asking thread's number.
    pub thread: u64,
    /// Unique per request.
    pub cookie: u64,
    /// `x0..x7` as the thread made the call.
    pub args: [u64; 8],
    /// The caller's PC (the address after its `svc`).
    pub pc: u64,
    /// What memory the call carries.
    pub memory: CarriedMemory,
    /// Its length in bytes.
    pub memory_length: u64,
    /// How many of its bytes were judged (and sent from word
    /// [`POLICY_REQUEST_MEMORY_WORD`] on).
    pub judged: u64,
}

impl PolicyRequest {
    /// The message info of a request: [`POLICY_REQUEST_LABEL`],
    /// [`POLICY_REQUEST_WORDS`] words.
    #[inline(always)]
    pub fn info() -> MessageInfo {
        MessageInfo::with(POLICY_REQUEST_LABEL, POLICY_REQUEST_WORDS)
    }

    /// Whether a message with `info` is a request (its label and length).
    #[inline(always)]
    pub fn is_request(info: MessageInfo) -> bool {
        info.label() == POLICY_REQUEST_LABEL && info.length() == POLICY_REQUEST_WORDS
    }

    /// The message words, in order: 0..=5 go in `x2..x7`, 6..=16 in IPC
    /// buffer words 6..=16.
    #[inline(always)]
    pub const fn encode(&self) -> [u64; POLICY_REQUEST_WORDS as usize] {
        let a = &self.args;
        [
            self.number,
            self.object_type,
            self.badge,
            self.thread,
            self.cookie,
            a[0],
            a[1],
            a[2],
            a[3],
            a[4],
            a[5],
            a[6],
            a[7],
            self.pc,
            self.memory as u64,
            self.memory_length,
            self.judged,
        ]
    }

    /// The request `encode` made these words from.
    #[inline(always)]
    pub const fn decode(words: &[u64; POLICY_REQUEST_WORDS as usize]) -> PolicyRequest {
        let w = words;
        PolicyRequest {
            number: w[0],
            object_type: w[1],
            badge: w[2],
            thread: w[3],
            cookie: w[4],
            args: [w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12]],
            pc: w[13],
            memory: CarriedMemory::from_raw(w[14]),
            memory_length: w[15],
            judged: w[16],
        }
    }
}

/// A policy server's verdict on one request: its reply's label and words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyAnswer {
    /// [`POLICY_REPLY_ALLOW`]: run the syscall as made (the filters check
    /// it again, this server's `Notify` waived once).
    Allow,
    /// [`POLICY_REPLY_ALLOW_MODIFIED`]: run it with `x2..x7` replaced
    /// (checked by all the filters again).
    AllowWith([u64; 6]),
    /// [`POLICY_REPLY_ERRNO`]: do not run it; it returns this error.
    Errno(ErrorCode),
    /// [`POLICY_REPLY_EMULATE`]: do not run it; it returns `x0` and `x8`
    /// as given.
    Emulate {
        /// The result in `x0` (an `ErrorCode` number for most callers).
        x0: u64,
        /// The value in `x8`.
        x8: u64,
    },
    /// [`POLICY_REPLY_KILL`]: end the thread.
    Kill,
}

impl PolicyAnswer {
    /// The reply that carries this answer: its message info (label and
    /// the words it uses) and words 0..=5 (`x2..x7`, 0 where unused).
    #[inline(always)]
    pub fn encode(self) -> (MessageInfo, [u64; POLICY_REPLY_WORDS]) {
        let (label, length, words) = match self {
            PolicyAnswer::Allow => (POLICY_REPLY_ALLOW, 0, [0; 6]),
            PolicyAnswer::AllowWith(words) => (POLICY_REPLY_ALLOW_MODIFIED, 6, words),
            PolicyAnswer::Errno(code) => (POLICY_REPLY_ERRNO, 1, [code.raw(), 0, 0, 0, 0, 0]),
            PolicyAnswer::Emulate { x0, x8 } => (POLICY_REPLY_EMULATE, 2, [x0, x8, 0, 0, 0, 0]),
            PolicyAnswer::Kill => (POLICY_REPLY_KILL, 0, [0; 6]),
        };
        (MessageInfo::with(label, length), words)
    }

    /// The answer a reply with `label` and words 0..=5 (`x2..x7`) gives,
    /// as the kernel takes it: a label that is no verdict is
    /// `Errno(Denied)`, and so is an errno whose word 0 is not a defined,
    /// non-zero `ErrorCode` (the policy fails closed). The reply's length
    /// is not looked at.
    #[inline(always)]
    pub const fn decode(label: u64, words: &[u64; POLICY_REPLY_WORDS]) -> PolicyAnswer {
        match label {
            POLICY_REPLY_ALLOW => PolicyAnswer::Allow,
            POLICY_REPLY_ALLOW_MODIFIED => PolicyAnswer::AllowWith(*words),
            POLICY_REPLY_ERRNO => PolicyAnswer::Errno(match ErrorCode::from_raw(words[0]) {
                Some(ErrorCode::Ok) | None => ErrorCode::Denied,
                Some(code) => code,
            }),
            POLICY_REPLY_EMULATE => PolicyAnswer::Emulate {
                x0: words[0],
                x8: words[1],
            },
            POLICY_REPLY_KILL => PolicyAnswer::Kill,
            _ => PolicyAnswer::Errno(ErrorCode::Denied),
        }
    }
}

/// The exit status of a thread a filter's `Kill` (or its policy server)
/// ended, as SIGSYS ends a Linux thread that seccomp kills.
pub const KILLED_BY_POLICY: i64 = -31;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_in_the_documented_order() {
        let request = PolicyRequest {
            number: 3,
            object_type: 10,
            badge: 0x5e,
            thread: 4,
            cookie: 17,
            args: [1, 2, 3, 4, 5, 6, 7, 8],
            pc: 0x40_1000,
            memory: CarriedMemory::Message,
            memory_length: 600,
            judged: 464,
        };
        let words = request.encode();
        assert_eq!(
            words,
            [3, 10, 0x5e, 4, 17, 1, 2, 3, 4, 5, 6, 7, 8, 0x40_1000, 2, 600, 464]
        );
        assert_eq!(PolicyRequest::decode(&words), request);
    }

    #[test]
    fn only_the_request_label_and_length_are_requests() {
        assert!(PolicyRequest::is_request(PolicyRequest::info()));
        assert!(!PolicyRequest::is_request(MessageInfo::with(
            POLICY_REQUEST_LABEL,
            6
        )));
        assert!(!PolicyRequest::is_request(MessageInfo::with(
            crate::fault::FAULT_LABEL,
            POLICY_REQUEST_WORDS
        )));
    }

    #[test]
    fn answers_round_trip() {
        let answers = [
            PolicyAnswer::Allow,
            PolicyAnswer::AllowWith([1, 2, 3, 4, 5, 6]),
            PolicyAnswer::Errno(ErrorCode::InvalidArgument),
            PolicyAnswer::Errno(ErrorCode::Denied),
            PolicyAnswer::Emulate { x0: 0, x8: 0x77 },
            PolicyAnswer::Kill,
        ];
        for answer in answers {
            let (info, words) = answer.encode();
            assert_eq!(PolicyAnswer::decode(info.label(), &words), answer);
        }
    }

    #[test]
    fn answers_say_how_many_words_they_use() {
        let length = |answer: PolicyAnswer| answer.encode().0.length();
        assert_eq!(length(PolicyAnswer::Allow), 0);
        assert_eq!(length(PolicyAnswer::Errno(ErrorCode::Denied)), 1);
        assert_eq!(length(PolicyAnswer::Emulate { x0: 1, x8: 2 }), 2);
        assert_eq!(length(PolicyAnswer::AllowWith([0; 6])), 6);
        assert_eq!(length(PolicyAnswer::Kill), 0);
    }

    #[test]
    fn unknown_labels_and_bad_error_codes_are_denied() {
        let denied = PolicyAnswer::Errno(ErrorCode::Denied);
        assert_eq!(PolicyAnswer::decode(77, &[0; 6]), denied);
        assert_eq!(PolicyAnswer::decode(u64::MAX, &[1; 6]), denied);
        // Errno with `Ok` would let the call look as if it ran.
        assert_eq!(
            PolicyAnswer::decode(POLICY_REPLY_ERRNO, &[ErrorCode::Ok.raw(), 0, 0, 0, 0, 0]),
            denied
        );
        assert_eq!(
            PolicyAnswer::decode(POLICY_REPLY_ERRNO, &[0xdead, 0, 0, 0, 0, 0]),
            denied
        );
        let (info, words) = PolicyAnswer::Errno(ErrorCode::Ok).encode();
        assert_eq!(PolicyAnswer::decode(info.label(), &words), denied);
    }
}
