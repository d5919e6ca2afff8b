//! Fault messages: what a thread's fault handler receives and replies.
//!
//! A thread with a fault endpoint does not stop when it faults: the kernel
//! sends the endpoint a message as if the thread had called it, with label
//! `FAULT_LABEL` and four words — the exception class (ESR_EL1.EC), the
//! fault address (FAR_EL1), ESR_EL1 and the faulting PC — and the fault
//! endpoint's badge in `x8`. The thread's registers are untouched. The
//! handler's reply (its label) decides what happens next.

/// Label of a fault message.
pub const FAULT_LABEL: u64 = 0xfa17;
/// Reply label: run the faulting instruction again.
pub const FAULT_REPLY_RETRY: u64 = 0;
/// Reply label: resume at the address in the reply's word 0.
pub const FAULT_REPLY_SET_PC: u64 = 1;
/// Reply label: stop the thread (it is reported as faulted).
pub const FAULT_REPLY_STOP: u64 = 2;

/// Label of an *end message*: a thread ended, and the holder of its fault
/// endpoint learns how. The kernel sends it as the ended thread (which is
/// queued as a sender on its fault endpoint until a receiver takes it), with
/// the fault endpoint's badge in `x8` and [`END_WORDS`] words laid out as
/// [`ThreadEnd::encode`] says. No reply is owed: the thread stays ended
/// (its TCB inactive) until its supervisor restarts it (`TcbRestart`) or
/// deletes its TCB.
pub const END_LABEL: u64 = 0xe4d;
/// Words of an end message.
pub const END_WORDS: usize = 6;

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
