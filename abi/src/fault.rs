//! Fault messages: what a thread's fault handler receives and replies.
//!
//! A thread with a fault endpoint does not stop when it faults: the kernel
//! sends the endpoint a message as if the thread had called it, with label
//! `FAULT_LABEL` and six words — the exception class (ESR_EL1.EC), the
//! fault address (FAR_EL1), ESR_EL1 and the faulting PC, then what its
//! loss as a policy server came to ([`ServerLoss`]) — and the fault
//! endpoint's badge in `x8`. The thread's registers are untouched. The
//! handler's reply (its label) decides what happens next.
//!
//! Both ends use this module: the kernel encodes a [`FaultMessage`] and
//! decodes the reply as a [`FaultReply`], a handler decodes the one and
//! encodes the other (and decodes end messages, [`ThreadEnd::decode`]).

use crate::MessageInfo;

/// Label of a fault message.
pub const FAULT_LABEL: u64 = 0xfa17;
/// Words of a fault report ([`FaultMessage`]): words 0..=3 of a fault
/// message.
pub const FAULT_WORDS: u8 = 4;
/// Words of a fault message: the report, then what the thread's loss as a
/// policy server came to ([`ServerLoss`], words 4 and 5: `x6`, `x7`).
pub const FAULT_MESSAGE_WORDS: u8 = 6;
/// Reply label: run the faulting instruction again.
pub const FAULT_REPLY_RETRY: u64 = 0;
/// Reply label: resume at the address in the reply's word 0.
pub const FAULT_REPLY_SET_PC: u64 = 1;
/// Reply label: stop the thread (it is reported as faulted).
pub const FAULT_REPLY_STOP: u64 = 2;

/// A fault message: words 0..=3 (`x2..x5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultMessage {
    /// The exception class (ESR_EL1.EC, bits 26..=31 of `esr`).
    pub class: u64,
    /// The fault address (FAR_EL1).
    pub far: u64,
    /// ESR_EL1.
    pub esr: u64,
    /// The PC of the faulting instruction.
    pub pc: u64,
}

impl FaultMessage {
    /// The message of a fault with syndrome `esr` at address `far`,
    /// taken at `pc`.
    #[inline(always)]
    pub const fn new(esr: u64, far: u64, pc: u64) -> FaultMessage {
        FaultMessage {
            class: (esr >> 26) & 0x3f,
            far,
            esr,
            pc,
        }
    }

    /// The message info of a fault message: [`FAULT_LABEL`],
    /// [`FAULT_MESSAGE_WORDS`] words.
    #[inline(always)]
    pub fn info() -> MessageInfo {
        MessageInfo::with(FAULT_LABEL, FAULT_MESSAGE_WORDS)
    }

    /// The message words, in order (`x2..x5`): class, FAR, ESR, PC.
    #[inline(always)]
    pub const fn encode(&self) -> [u64; FAULT_WORDS as usize] {
        [self.class, self.far, self.esr, self.pc]
    }

    /// The fault a message with `info` and register words `words` reports;
    /// `None` if it is no fault message (its label, or too few words).
    #[inline(always)]
    pub fn decode(info: MessageInfo, words: &[u64]) -> Option<FaultMessage> {
        if info.label() != FAULT_LABEL || info.length() < FAULT_WORDS {
            return None;
        }
        match words {
            [class, far, esr, pc, ..] => Some(FaultMessage {
                class: *class,
                far: *far,
                esr: *esr,
                pc: *pc,
            }),
            _ => None,
        }
    }
}

/// A fault handler's reply: what the faulted thread does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultReply {
    /// [`FAULT_REPLY_RETRY`], and any label that is no reply's: run the
    /// faulting instruction again.
    Retry,
    /// [`FAULT_REPLY_SET_PC`]: resume at this address (word 0).
    SetPc(u64),
    /// [`FAULT_REPLY_STOP`]: stop the thread (it ends, faulted).
    Stop,
}

impl FaultReply {
    /// The reply message: its info (label, words used) and word 0.
    #[inline(always)]
    pub fn encode(self) -> (MessageInfo, [u64; 1]) {
        let (label, length, word) = match self {
            FaultReply::Retry => (FAULT_REPLY_RETRY, 0, 0),
            FaultReply::SetPc(pc) => (FAULT_REPLY_SET_PC, 1, pc),
            FaultReply::Stop => (FAULT_REPLY_STOP, 0, 0),
        };
        (MessageInfo::with(label, length), [word])
    }

    /// The reply a message with `label` and word 0 `word` is, as the
    /// kernel takes it: an unknown label retries. The length is not
    /// looked at.
    #[inline(always)]
    pub const fn decode(label: u64, word: u64) -> FaultReply {
        match label {
            FAULT_REPLY_SET_PC => FaultReply::SetPc(word),
            FAULT_REPLY_STOP => FaultReply::Stop,
            _ => FaultReply::Retry,
        }
    }
}

/// Label of an *end message*: a thread ended, and the holder of its fault
/// endpoint learns how. The kernel sends it as the ended thread (which is
/// queued as a sender on its fault endpoint until a receiver takes it), with
/// the fault endpoint's badge in `x8` and [`END_MESSAGE_WORDS`] words: the
/// [`END_WORDS`] [`ThreadEnd::encode`] lays out, then its [`ServerLoss`]. No reply is owed: the thread stays ended
/// (its TCB inactive) until its supervisor restarts it (`TcbRestart`) or
/// deletes its TCB.
pub const END_LABEL: u64 = 0xe4d;
/// Words of an end message.
pub const END_WORDS: usize = 6;

/// Words of an end message: the [`END_WORDS`] of [`ThreadEnd::encode`]
/// (`x2..x7`), then [`ServerLoss`] in words 6 and 7 (the receiver's IPC
/// buffer words 6 and 7; a receiver without one gets 6 words).
pub const END_MESSAGE_WORDS: u8 = 8;
/// The end message word where [`ServerLoss`] starts.
pub const END_SERVER_LOSS_WORD: usize = 6;

/// What a thread's end (or fault) as a policy server came to: the
/// attachments of filters that named it as their server and lost it (its
/// supervisor hands them to another server with `FilterSetServer`), and
/// their requests that were waiting and were refused (`Denied`). Counted
/// since the thread (re)started; all zero for a thread that served none.
/// Words 4 and 5 of a fault message, 6 and 7 of an end message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerLoss {
    /// Attachments that lost it as their server.
    pub attachments: u64,
    /// Waiting requests of theirs refused.
    pub refused: u64,
}

impl ServerLoss {
    /// It served no filter (or none lost it).
    pub const NONE: ServerLoss = ServerLoss {
        attachments: 0,
        refused: 0,
    };

    /// The two words.
    #[inline(always)]
    pub const fn encode(self) -> [u64; 2] {
        [self.attachments, self.refused]
    }

    /// The loss a fault message (`info`, register words `words`) or an
    /// end message (its words past the registers read by `word(i)`, for
    /// IPC buffer word `i`) reports; `NONE` for a message too short to
    /// carry one, `None` for any other message.
    pub fn decode(
        info: MessageInfo,
        words: &[u64],
        word: impl Fn(usize) -> u64,
    ) -> Option<ServerLoss> {
        let (first, length) = match info.label() {
            FAULT_LABEL => (usize::from(FAULT_WORDS), FAULT_MESSAGE_WORDS),
            END_LABEL => (END_SERVER_LOSS_WORD, END_MESSAGE_WORDS),
            _ => return None,
        };
        if info.length() < length {
            return Some(ServerLoss::NONE);
        }
        let at = |i: usize| words.get(i).copied().unwrap_or_else(|| word(i));
        Some(ServerLoss {
            attachments: at(first),
            refused: at(first + 1),
        })
    }
}

/// Word 0 of an end message: the thread exited (`Exit`).
pub const END_EXITED: u64 = 0;
/// Word 0 of an end message: the kernel ended it for a reason of its own
/// (word 1 is the status it recorded, which names the reason).
pub const END_KILLED: u64 = 1;
/// Word 0 of an end message: it faulted and no handler could take the fault
/// (none, or the handler replied [`FAULT_REPLY_STOP`] or ended owing the
/// reply).
pub const END_FAULTED: u64 = 2;

/// The status the kernel records for a thread whose address space (a
/// VSpace made from user space, or the kernel-made space it shared) was
/// destroyed while bound to it.
pub const SPACE_DESTROYED_STATUS: i64 = -4;
/// The status the kernel records for a thread confined by a Filter whose
/// memory was taken back (its Untyped revoked).
pub const FILTER_DESTROYED_STATUS: i64 = -5;

/// Word 5 of a policy kill: a Kill rule of the filter decided it.
pub const KILLED_BY_RULE: u64 = 0;
/// Word 5 of a policy kill: the filter's policy server answered "kill"
/// (word 3 is then its `Notify` rule).
pub const KILLED_BY_SERVER: u64 = 1;
/// Word 3 of a policy kill when no rule of the filter matched (cannot
/// happen for a kill the kernel decided; kept so a decoder never guesses).
pub const NO_RULE: u64 = u64::MAX;

/// Why the kernel ended a thread (an end message with [`END_KILLED`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillReason {
    /// A `Kill` verdict of its filters (status
    /// [`crate::policy_request::KILLED_BY_POLICY`]).
    Policy {
        /// The filter that decided: its position in the thread's stack
        /// (0: the first attached).
        filter: u64,
        /// Its rule that decided: the index in the filter's rules
        /// ([`NO_RULE`] if none matched).
        rule: u64,
        /// The syscall number judged.
        syscall: u64,
        /// The filter's policy server answered "kill" (its `Notify` rule is
        /// `rule`), not a Kill rule.
        by_server: bool,
    },
    /// Syscall user dispatch could not save a redirected syscall's context
    /// (status [`crate::user_dispatch::KILLED_BY_USER_DISPATCH`]).
    UserDispatch,
    /// Its restartable-sequence area or a critical-section descriptor was
    /// bad when the kernel looked (status [`crate::rseq::KILLED_BY_RSEQ`]).
    Rseq,
    /// The memory of a filter confining it was taken back (status
    /// [`FILTER_DESTROYED_STATUS`]).
    FilterDestroyed,
    /// Its address space was destroyed (status [`SPACE_DESTROYED_STATUS`]).
    SpaceDestroyed,
    /// Another status the kernel records (a newer kernel's; kept as is).
    Other(i64),
}

impl KillReason {
    /// The status the kernel records for this end (word 1).
    pub const fn status(self) -> i64 {
        match self {
            KillReason::Policy { .. } => crate::policy_request::KILLED_BY_POLICY,
            KillReason::UserDispatch => crate::user_dispatch::KILLED_BY_USER_DISPATCH,
            KillReason::Rseq => crate::rseq::KILLED_BY_RSEQ,
            KillReason::FilterDestroyed => FILTER_DESTROYED_STATUS,
            KillReason::SpaceDestroyed => SPACE_DESTROYED_STATUS,
            KillReason::Other(status) => status,
        }
    }
}

/// How a thread ended: what its end message says and what the kernel keeps
/// in its TCB until it is restarted or deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadEnd {
    /// It called `Exit` with this status.
    Exited {
        /// The status.
        status: i64,
    },
    /// The kernel ended it.
    Killed(KillReason),
    /// It faulted with no handler able to take the fault (the four words of
    /// its fault message).
    Faulted {
        /// The exception class (ESR_EL1.EC).
        class: u64,
        /// The fault address (FAR_EL1).
        far: u64,
        /// ESR_EL1.
        esr: u64,
        /// The PC of the faulting instruction.
        pc: u64,
    },
}

impl ThreadEnd {
    /// The message words, in order (`x2..x7`):
    ///
    /// | word | exited | killed | faulted |
    /// |---|---|---|---|
    /// | 0 | [`END_EXITED`] | [`END_KILLED`] | [`END_FAULTED`] |
    /// | 1 | the status | the kernel's status (the reason) | 0 |
    /// | 2 | 0 | policy: the filter's position; else 0 | the exception class |
    /// | 3 | 0 | policy: the rule's index; else 0 | FAR |
    /// | 4 | 0 | policy: the syscall number; else 0 | ESR |
    /// | 5 | 0 | policy: [`KILLED_BY_RULE`] or [`KILLED_BY_SERVER`]; else 0 | PC |
    pub const fn encode(self) -> [u64; END_WORDS] {
        match self {
            ThreadEnd::Exited { status } => [END_EXITED, status as u64, 0, 0, 0, 0],
            ThreadEnd::Killed(KillReason::Policy {
                filter,
                rule,
                syscall,
                by_server,
            }) => [
                END_KILLED,
                crate::policy_request::KILLED_BY_POLICY as u64,
                filter,
                rule,
                syscall,
                if by_server {
                    KILLED_BY_SERVER
                } else {
                    KILLED_BY_RULE
                },
            ],
            ThreadEnd::Killed(reason) => [END_KILLED, reason.status() as u64, 0, 0, 0, 0],
            ThreadEnd::Faulted {
                class,
                far,
                esr,
                pc,
            } => [END_FAULTED, 0, class, far, esr, pc],
        }
    }

    /// Decodes an end message's words (`None`: too few, or an unknown
    /// word 0).
    pub fn decode(words: &[u64]) -> Option<ThreadEnd> {
        let w: &[u64; END_WORDS] = words.get(..END_WORDS)?.try_into().ok()?;
        let status = w[1] as i64;
        match w[0] {
            END_EXITED => Some(ThreadEnd::Exited { status }),
            END_KILLED => Some(ThreadEnd::Killed(match status {
                crate::policy_request::KILLED_BY_POLICY => KillReason::Policy {
                    filter: w[2],
                    rule: w[3],
                    syscall: w[4],
                    by_server: w[5] == KILLED_BY_SERVER,
                },
                crate::user_dispatch::KILLED_BY_USER_DISPATCH => KillReason::UserDispatch,
                crate::rseq::KILLED_BY_RSEQ => KillReason::Rseq,
                FILTER_DESTROYED_STATUS => KillReason::FilterDestroyed,
                SPACE_DESTROYED_STATUS => KillReason::SpaceDestroyed,
                other => KillReason::Other(other),
            })),
            END_FAULTED => Some(ThreadEnd::Faulted {
                class: w[2],
                far: w[3],
                esr: w[4],
                pc: w[5],
            }),
            _ => None,
        }
    }

    /// The status the kernel records for this end (the exit status, a
    /// kill's status; 0 for a fault).
    pub const fn status(self) -> i64 {
        match self {
            ThreadEnd::Exited { status } => status,
            ThreadEnd::Killed(reason) => reason.status(),
            ThreadEnd::Faulted { .. } => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_messages_round_trip() {
        let fault = FaultMessage::new(0x9200_0046, 0x1000, 0x40_0000);
        assert_eq!(fault.class, 0x24);
        let words = fault.encode();
        assert_eq!(words, [0x24, 0x1000, 0x9200_0046, 0x40_0000]);
        assert_eq!(
            FaultMessage::decode(FaultMessage::info(), &words),
            Some(fault)
        );
        let six = [words[0], words[1], words[2], words[3], 0, 0];
        assert_eq!(
            FaultMessage::decode(FaultMessage::info(), &six),
            Some(fault)
        );
        assert_eq!(
            FaultMessage::decode(FaultMessage::info(), &words[..3]),
            None
        );
        let short = MessageInfo::with(FAULT_LABEL, 3);
        assert_eq!(FaultMessage::decode(short, &words), None);
        let end = MessageInfo::with(END_LABEL, FAULT_WORDS);
        assert_eq!(FaultMessage::decode(end, &words), None);
    }

    #[test]
    fn a_server_loss_is_read_from_fault_and_end_messages() {
        let loss = ServerLoss {
            attachments: 2,
            refused: 3,
        };
        let [a, r] = loss.encode();
        // A fault message: in its registers (words 4 and 5).
        let fault = [0x24, 0, 0, 0, a, r];
        let never = |_| panic!("a fault message's loss is in its registers");
        assert_eq!(
            ServerLoss::decode(FaultMessage::info(), &fault, never),
            Some(loss)
        );
        // An end message: in IPC buffer words 6 and 7.
        let info = MessageInfo::with(END_LABEL, END_MESSAGE_WORDS);
        let buffer = |i| [0, 0, 0, 0, 0, 0, a, r][i];
        assert_eq!(ServerLoss::decode(info, &[0; 6], buffer), Some(loss));
        // Too short to carry one (an old fault message, a receiver
        // without a buffer): none; another message: no answer.
        let short = MessageInfo::with(END_LABEL, END_WORDS as u8);
        assert_eq!(
            ServerLoss::decode(short, &[0; 6], buffer),
            Some(ServerLoss::NONE)
        );
        let other = MessageInfo::with(7, 8);
        assert_eq!(ServerLoss::decode(other, &[0; 6], buffer), None);
    }

    #[test]
    fn fault_replies_round_trip_and_unknown_labels_retry() {
        for reply in [
            FaultReply::Retry,
            FaultReply::SetPc(0x40_0004),
            FaultReply::Stop,
        ] {
            let (info, [word]) = reply.encode();
            assert_eq!(FaultReply::decode(info.label(), word), reply);
        }
        assert_eq!(FaultReply::SetPc(8).encode().0.length(), 1);
        assert_eq!(FaultReply::decode(77, 0x1234), FaultReply::Retry);
        assert_eq!(FaultReply::decode(END_LABEL, 0), FaultReply::Retry);
    }

    #[test]
    fn end_messages_round_trip() {
        let ends = [
            ThreadEnd::Exited { status: 7 },
            ThreadEnd::Exited { status: -1 },
            ThreadEnd::Killed(KillReason::Policy {
                filter: 1,
                rule: 2,
                syscall: 17,
                by_server: false,
            }),
            ThreadEnd::Killed(KillReason::Policy {
                filter: 0,
                rule: 0,
                syscall: 3,
                by_server: true,
            }),
            ThreadEnd::Killed(KillReason::UserDispatch),
            ThreadEnd::Killed(KillReason::FilterDestroyed),
            ThreadEnd::Killed(KillReason::SpaceDestroyed),
            ThreadEnd::Killed(KillReason::Other(-77)),
            ThreadEnd::Faulted {
                class: 0x24,
                far: 0x1000,
                esr: 0x9200_0046,
                pc: 0x40_0000,
            },
        ];
        for end in ends {
            assert_eq!(ThreadEnd::decode(&end.encode()), Some(end));
        }
        assert_eq!(ThreadEnd::decode(&[0; 5]), None);
        assert_eq!(ThreadEnd::decode(&[9, 0, 0, 0, 0, 0]), None);
    }
}
