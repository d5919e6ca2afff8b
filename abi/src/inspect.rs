//! Inspection: what the holder of an Inspector capability reads of the
//! running system (`Syscall::InspectThread`, `Syscall::InspectCaps`).
//!
//! The kernel makes one Inspector at boot; the root task holds it
//! (`bootinfo::ROOT_INSPECTOR_SLOT`) and is the supervisor that answers
//! a shell's `ps` and `caps` (docs/shell.md). It reads, and changes
//! nothing: a thread's state, priority, CPU, confinement and how it
//! ended, and the capabilities in a thread's CSpace.
//!
//! Both syscalls write fixed-size little blocks of words into the
//! caller's memory (8-byte aligned), so the layout lives here:
//!
//! # A thread ([`ThreadInfo`], [`THREAD_INFO_WORDS`] words)
//!
//! | word | content |
//! |---|---|
//! | 0 | its number (as console lines, trace stops and audit records give it) |
//! | 1 | bits 0..8 state ([`ThreadState`]), 8..16 priority, 16..24 MCP, 24..32 CPU, 32..40 filters attached, 40 traced, 41 audited, 42 ended (words 5..11 hold how), 48..56 the name's length |
//! | 2..5 | its name (24 bytes, the length in word 1) |
//! | 5..11 | how it ended, as `fault::ThreadEnd::encode` (zero while it lives) |
//!
//! # A capability ([`CapInfo`], [`CAP_INFO_WORDS`] words)
//!
//! | word | content |
//! |---|---|
//! | 0 | its slot |
//! | 1 | bits 0..8 its type (`cap::CapType`), 8..16 its rights (`cap::Rights` bits), 16 badged |
//! | 2 | its badge |
//! | 3 | the object's serial number: two capabilities with the same serial name the same object |

use crate::cap::CapType;
use crate::fault::{ThreadEnd, END_WORDS};

/// Words `InspectThread` writes.
pub const THREAD_INFO_WORDS: usize = 11;
/// Words `InspectCaps` writes.
pub const CAP_INFO_WORDS: usize = 4;
/// The longest thread name (`tcb::MAX_NAME_BYTES`).
pub const NAME_BYTES: usize = 24;

/// Where a thread is in its life, as inspection reports it (the kernel's
/// state, without what it waits on).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Waiting for a CPU.
    Ready = 1,
    /// On a CPU.
    Running = 2,
    /// Ending now (an exit or a fault being reported).
    Ending = 3,
    /// Waiting to send on an endpoint (or its kernel message to be taken).
    Sending = 5,
    /// Waiting to receive on an endpoint.
    Receiving = 6,
    /// Waiting for the reply to its `Call`.
    WaitingForReply = 7,
    /// Stopped at a fault, policy request or trace stop until answered.
    Stopped = 8,
    /// Stopped by `TcbSuspend`.
    Suspended = 9,
    /// Made and not started yet.
    Inactive = 10,
    /// Waiting for room in its lossless audit ring.
    WaitingForAudit = 11,
    /// Waiting on a notification.
    Waiting = 12,
    /// Ended; kept for its supervisor.
    Ended = 13,
}

impl ThreadState {
    /// Every state.
    pub const ALL: [ThreadState; 12] = [
        ThreadState::Ready,
        ThreadState::Running,
        ThreadState::Ending,
        ThreadState::Sending,
        ThreadState::Receiving,
        ThreadState::WaitingForReply,
        ThreadState::Stopped,
        ThreadState::Suspended,
        ThreadState::Inactive,
        ThreadState::WaitingForAudit,
        ThreadState::Waiting,
        ThreadState::Ended,
    ];

    /// Decodes a state number.
    pub fn from_raw(raw: u8) -> Option<ThreadState> {
        Self::ALL.into_iter().find(|s| *s as u8 == raw)
    }

    /// A short name, as `ps` shows it.
    pub const fn name(self) -> &'static str {
        match self {
            ThreadState::Ready => "ready",
            ThreadState::Running => "running",
            ThreadState::Ending => "ending",
            ThreadState::Sending => "send",
            ThreadState::Receiving => "recv",
            ThreadState::WaitingForReply => "reply",
            ThreadState::Stopped => "stopped",
            ThreadState::Suspended => "suspended",
            ThreadState::Inactive => "inactive",
            ThreadState::WaitingForAudit => "audit",
            ThreadState::Waiting => "wait",
            ThreadState::Ended => "ended",
        }
    }
}

/// One thread, as `InspectThread` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its number.
    pub number: u32,
    /// Its state.
    pub state: ThreadState,
    /// Its priority.
    pub priority: u8,
    /// Its maximum controlled priority.
    pub mcp: u8,
    /// The CPU it runs on (its affinity).
    pub cpu: u8,
    /// How many filters confine it.
    pub filters: u8,
    /// It has a tracer.
    pub traced: bool,
    /// It is audited.
    pub audited: bool,
    /// Its name's bytes (the first `name_len`).
    pub name: [u8; NAME_BYTES],
    /// Its name's length.
    pub name_len: u8,
    /// How it ended, if it has.
    pub end: Option<ThreadEnd>,
}

impl ThreadInfo {
    /// Its name (`?` if it is not UTF-8, which the kernel never lets it be).
    pub fn name(&self) -> &str {
        let len = usize::from(self.name_len).min(NAME_BYTES);
        core::str::from_utf8(&self.name[..len]).unwrap_or("?")
    }

    /// The words the kernel writes (see the module docs).
    pub fn encode(&self) -> [u64; THREAD_INFO_WORDS] {
        let mut words = [0u64; THREAD_INFO_WORDS];
        words[0] = u64::from(self.number);
        words[1] = u64::from(self.state as u8)
            | u64::from(self.priority) << 8
            | u64::from(self.mcp) << 16
            | u64::from(self.cpu) << 24
            | u64::from(self.filters) << 32
            | u64::from(self.traced) << 40
            | u64::from(self.audited) << 41
            | u64::from(self.end.is_some()) << 42
            | u64::from(self.name_len) << 48;
        for (i, chunk) in self.name.chunks(8).enumerate() {
            let mut bytes = [0u8; 8];
            bytes[..chunk.len()].copy_from_slice(chunk);
            words[2 + i] = u64::from_le_bytes(bytes);
        }
        if let Some(end) = self.end {
            words[5..5 + END_WORDS].copy_from_slice(&end.encode());
        }
        words
    }

    /// Reads the words back; `None` for a state no thread has, a name
    /// longer than 24 bytes or an end that does not decode.
    pub fn decode(words: &[u64; THREAD_INFO_WORDS]) -> Option<ThreadInfo> {
        let packed = words[1];
        let byte = |shift: u32| (packed >> shift) as u8;
        let name_len = byte(48);
        if usize::from(name_len) > NAME_BYTES {
            return None;
        }
        let mut name = [0u8; NAME_BYTES];
        for i in 0..3 {
            name[8 * i..8 * i + 8].copy_from_slice(&words[2 + i].to_le_bytes());
        }
        let end = if packed & 1 << 42 != 0 {
            Some(ThreadEnd::decode(&words[5..5 + END_WORDS])?)
        } else {
            None
        };
        Some(ThreadInfo {
            number: words[0] as u32,
            state: ThreadState::from_raw(byte(0))?,
            priority: byte(8),
            mcp: byte(16),
            cpu: byte(24),
            filters: byte(32),
            traced: packed & 1 << 40 != 0,
            audited: packed & 1 << 41 != 0,
            name,
            name_len,
            end,
        })
    }
}

/// One capability, as `InspectCaps` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapInfo {
    /// Its slot in the thread's CSpace.
    pub slot: u64,
    /// Its type.
    pub cap_type: CapType,
    /// Its rights (`cap::Rights` bits).
    pub rights: u8,
    /// Its badge, if it has one.
    pub badge: Option<u64>,
    /// The serial number of the object it names.
    pub object: u64,
}

impl CapInfo {
    /// The words the kernel writes (see the module docs).
    pub fn encode(&self) -> [u64; CAP_INFO_WORDS] {
        [
            self.slot,
            u64::from(self.cap_type.raw())
                | u64::from(self.rights) << 8
                | u64::from(self.badge.is_some()) << 16,
            self.badge.unwrap_or(0),
            self.object,
        ]
    }

    /// Reads the words back; `None` for a type number no type has.
    pub fn decode(words: &[u64; CAP_INFO_WORDS]) -> Option<CapInfo> {
        Some(CapInfo {
            slot: words[0],
            cap_type: CapType::from_raw(words[1] & 0xff)?,
            rights: (words[1] >> 8) as u8,
            badge: (words[1] & 1 << 16 != 0).then_some(words[2]),
            object: words[3],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::KillReason;

    fn info(end: Option<ThreadEnd>) -> ThreadInfo {
        let mut name = [0u8; NAME_BYTES];
        name[..6].copy_from_slice(b"ticker");
        ThreadInfo {
            number: 7,
            state: ThreadState::Waiting,
            priority: 90,
            mcp: 100,
            cpu: 1,
            filters: 2,
            traced: true,
            audited: false,
            name,
            name_len: 6,
            end,
        }
    }

    #[test]
    fn a_thread_round_trips() {
        for end in [
            None,
            Some(ThreadEnd::Exited { status: -3 }),
            Some(ThreadEnd::Killed(KillReason::FilterDestroyed)),
            Some(ThreadEnd::Faulted {
                class: 0x24,
                far: 0x10,
                esr: 0x9200_0046,
                pc: 0x40_1000,
            }),
        ] {
            let thread = info(end);
            assert_eq!(ThreadInfo::decode(&thread.encode()), Some(thread));
        }
        assert_eq!(info(None).name(), "ticker");
    }

    #[test]
    fn a_bad_thread_block_is_refused() {
        let mut words = info(None).encode();
        words[1] &= !0xff;
        assert_eq!(ThreadInfo::decode(&words), None, "state 0");
        let mut words = info(None).encode();
        words[1] |= 25 << 48;
        assert_eq!(ThreadInfo::decode(&words), None, "a 25-byte name");
    }

    #[test]
    fn a_capability_round_trips() {
        for badge in [None, Some(0), Some(0xc1)] {
            let cap = CapInfo {
                slot: 3,
                cap_type: CapType::Endpoint,
                rights: 0b1011,
                badge,
                object: 41,
            };
            assert_eq!(CapInfo::decode(&cap.encode()), Some(cap));
        }
        assert_eq!(CapInfo::decode(&[0, 0xee, 0, 0]), None);
    }

    #[test]
    fn state_numbers_round_trip() {
        for state in ThreadState::ALL {
            assert_eq!(ThreadState::from_raw(state as u8), Some(state));
        }
        assert_eq!(ThreadState::from_raw(0), None);
        assert_eq!(ThreadState::from_raw(4), None);
    }
}
