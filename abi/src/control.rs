//! The supervisor's control protocol: how a task the description trusts
//! with it (`supervisor = true` in its `caps`, docs/systems.md) asks the
//! root to show and change the running system. The shell (docs/shell.md)
//! is its client.
//!
//! The task holds a capability to the root's supervisor endpoint, badged
//! [`CONTROL_BADGE`] | its plan index + 1, so the root knows who asks.
//! Each request is a `Call`: the label names it, the words carry its
//! arguments (past six they are in the IPC buffer, as for any message);
//! the reply's label is [`ControlError::code`] (0: done) and its words
//! the answer. Tasks are named as the description names them.
//!
//! | request | label | words | answer |
//! |---|---|---|---|
//! | `Thread { first }` | [`THREAD`] | `first` | the thread with the smallest number at or above `first`, as `inspect::THREAD_INFO_WORDS` words; no words when there is none |
//! | `Caps { thread, first }` | [`CAPS`] | `thread`, `first` | its first capability at slot `first` or above, as `inspect::CAP_INFO_WORDS` words; none when there is none |
//! | `Kill { task }` | [`KILL`] | the name (4 words) | the task is taken down and stays ended |
//! | `Restart { task }` | [`RESTART`] | the name | the task is rebuilt from its plan and started |
//! | `TraceOn { task }` | [`TRACE_ON`] | the name; the message carries one capability: the endpoint its stops go to | the task is traced to that endpoint |
//! | `TraceOff { task }` | [`TRACE_OFF`] | the name | its tracer (the one `TraceOn` attached) is detached |
//! | `Policy { task, description }` | [`POLICY`] | the name, the length in bytes, then the bytes (a postcard `policy::FilterDescription`, as `policy::encode` writes it) | a filter with those rules is made from the task's memory and attached on top of its filters |
//!
//! A name is 4 words: its length, then up to 24 bytes, little-endian.

/// The badge bit of a control capability (plan badges are small).
pub const CONTROL_BADGE: u64 = 1 << 62;
/// Label of `Thread`.
pub const THREAD: u64 = 0xc0_01;
/// Label of `Caps`.
pub const CAPS: u64 = 0xc0_02;
/// Label of `Kill`.
pub const KILL: u64 = 0xc0_03;
/// Label of `Restart`.
pub const RESTART: u64 = 0xc0_04;
/// Label of `TraceOn`.
pub const TRACE_ON: u64 = 0xc0_05;
/// Label of `TraceOff`.
pub const TRACE_OFF: u64 = 0xc0_06;
/// Label of `Policy`.
pub const POLICY: u64 = 0xc0_07;
/// The longest task name (`tcb::MAX_NAME_BYTES`).
pub const NAME_BYTES: usize = 24;
/// Words a name takes.
pub const NAME_WORDS: usize = 4;
/// Words a message may have (`message::MAX_MESSAGE_WORDS` in the kernel).
pub const MAX_WORDS: usize = 64;
/// The longest description a `Policy` request carries.
pub const MAX_POLICY_BYTES: usize = (MAX_WORDS - NAME_WORDS - 1) * 8;

/// A task's name, as requests carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskName {
    bytes: [u8; NAME_BYTES],
    len: u8,
}

impl TaskName {
    /// `name`, if it is 1 to 24 bytes.
    pub fn new(name: &str) -> Option<TaskName> {
        if name.is_empty() || name.len() > NAME_BYTES {
            return None;
        }
        let mut bytes = [0; NAME_BYTES];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        Some(TaskName {
            bytes,
            len: name.len() as u8,
        })
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("?")
    }

    fn encode(&self, out: &mut [u64]) {
        out[0] = u64::from(self.len);
        for (i, chunk) in self.bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            out[1 + i] = u64::from_le_bytes(word);
        }
    }

    fn decode(words: &[u64]) -> Option<TaskName> {
        let len = usize::try_from(*words.first()?).ok()?;
        if len == 0 || len > NAME_BYTES || words.len() < NAME_WORDS {
            return None;
        }
        let mut bytes = [0u8; NAME_BYTES];
        for i in 0..3 {
            bytes[8 * i..8 * i + 8].copy_from_slice(&words[1 + i].to_le_bytes());
        }
        core::str::from_utf8(&bytes[..len]).ok()?;
        // Bytes past the name are the sender's padding: not kept, so that
        // two requests naming one task are equal.
        bytes[len..].fill(0);
        Some(TaskName {
            bytes,
            len: len as u8,
        })
    }
}

/// A request to the supervisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// A thread, by number.
    Thread {
        /// The smallest number wanted.
        first: u64,
    },
    /// A thread's capabilities.
    Caps {
        /// Its number.
        thread: u32,
        /// The first slot wanted.
        first: u64,
    },
    /// Take a task down for good.
    Kill {
        /// The task.
        task: TaskName,
    },
    /// Rebuild a task from its plan and start it.
    Restart {
        /// The task.
        task: TaskName,
    },
    /// Trace a task to the endpoint the message carries.
    TraceOn {
        /// The task.
        task: TaskName,
    },
    /// Stop tracing a task.
    TraceOff {
        /// The task.
        task: TaskName,
    },
    /// Attach a filter to a task.
    Policy {
        /// The task.
        task: TaskName,
        /// The filter's description (`policy::encode`).
        description: &'a [u8],
    },
}

impl Request<'_> {
    /// The label and the words; `None` for a description longer than
    /// [`MAX_POLICY_BYTES`].
    pub fn encode(&self, words: &mut [u64; MAX_WORDS]) -> Option<(u64, usize)> {
        Some(match *self {
            Request::Thread { first } => {
                words[0] = first;
                (THREAD, 1)
            }
            Request::Caps { thread, first } => {
                words[0] = u64::from(thread);
                words[1] = first;
                (CAPS, 2)
            }
            Request::Kill { task } => (KILL, name(&task, words)),
            Request::Restart { task } => (RESTART, name(&task, words)),
            Request::TraceOn { task } => (TRACE_ON, name(&task, words)),
            Request::TraceOff { task } => (TRACE_OFF, name(&task, words)),
            Request::Policy { task, description } => {
                if description.len() > MAX_POLICY_BYTES {
                    return None;
                }
                name(&task, words);
                words[NAME_WORDS] = description.len() as u64;
                let first = NAME_WORDS + 1;
                for (i, chunk) in description.chunks(8).enumerate() {
                    let mut word = [0u8; 8];
                    word[..chunk.len()].copy_from_slice(chunk);
                    words[first + i] = u64::from_le_bytes(word);
                }
                (POLICY, first + description.len().div_ceil(8))
            }
        })
    }

    /// Reads a request; a `Policy` description is unpacked into `bytes`.
    /// `None` for an unknown label or malformed words.
    pub fn decode<'a>(
        label: u64,
        words: &[u64],
        bytes: &'a mut [u8; MAX_POLICY_BYTES],
    ) -> Option<Request<'a>> {
        let word = |i: usize| words.get(i).copied();
        Some(match label {
            THREAD => Request::Thread { first: word(0)? },
            CAPS => Request::Caps {
                thread: u32::try_from(word(0)?).ok()?,
                first: word(1)?,
            },
            KILL => Request::Kill {
                task: TaskName::decode(words)?,
            },
            RESTART => Request::Restart {
                task: TaskName::decode(words)?,
            },
            TRACE_ON => Request::TraceOn {
                task: TaskName::decode(words)?,
            },
            TRACE_OFF => Request::TraceOff {
                task: TaskName::decode(words)?,
            },
            POLICY => {
                let task = TaskName::decode(words)?;
                let len = usize::try_from(word(NAME_WORDS)?).ok()?;
                if len > MAX_POLICY_BYTES || words.len() < NAME_WORDS + 1 + len.div_ceil(8) {
                    return None;
                }
                for i in 0..len.div_ceil(8) {
                    let chunk = words[NAME_WORDS + 1 + i].to_le_bytes();
                    let end = (8 * i + 8).min(len);
                    bytes[8 * i..end].copy_from_slice(&chunk[..end - 8 * i]);
                }
                Request::Policy {
                    task,
                    description: &bytes[..len],
                }
            }
            _ => return None,
        })
    }
}

fn name(task: &TaskName, words: &mut [u64; MAX_WORDS]) -> usize {
    task.encode(&mut words[..NAME_WORDS]);
    NAME_WORDS
}

/// Why the supervisor did not do what it was asked (the reply's label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// The request was malformed (or its label unknown).
    BadRequest,
    /// No task has that name.
    NoSuchTask,
    /// The task may not be changed so: the privileged task, or the asker
    /// itself.
    NotAllowed,
    /// The task has ended (kill, trace, policy need it running).
    Ended,
    /// `TraceOff` of a task the asker did not trace.
    NotTraced,
    /// `TraceOn` without an endpoint capability.
    NoEndpoint,
    /// The kernel refused a step with this code.
    Kernel(crate::ErrorCode),
    /// Rebuilding or taking the task down failed (the supervisor printed
    /// why).
    Failed,
}

impl ControlError {
    /// The reply label: 1..=7, or 0x100 + the kernel's code.
    pub fn code(self) -> u64 {
        match self {
            ControlError::BadRequest => 1,
            ControlError::NoSuchTask => 2,
            ControlError::NotAllowed => 3,
            ControlError::Ended => 4,
            ControlError::NotTraced => 5,
            ControlError::NoEndpoint => 6,
            ControlError::Failed => 7,
            ControlError::Kernel(code) => 0x100 + code.raw(),
        }
    }

    /// Reads a reply label: `Ok` for 0.
    pub fn from_code(code: u64) -> Result<(), ControlError> {
        Err(match code {
            0 => return Ok(()),
            1 => ControlError::BadRequest,
            2 => ControlError::NoSuchTask,
            3 => ControlError::NotAllowed,
            4 => ControlError::Ended,
            5 => ControlError::NotTraced,
            6 => ControlError::NoEndpoint,
            0x100.. => match crate::ErrorCode::from_raw(code - 0x100) {
                Some(kernel) => ControlError::Kernel(kernel),
                None => ControlError::Failed,
            },
            _ => ControlError::Failed,
        })
    }

    /// A short description, as a shell prints it.
    pub fn describe(self) -> &'static str {
        match self {
            ControlError::BadRequest => "the supervisor did not understand the request",
            ControlError::NoSuchTask => "no such task",
            ControlError::NotAllowed => "not allowed on that task",
            ControlError::Ended => "the task has ended",
            ControlError::NotTraced => "the task is not traced from here",
            ControlError::NoEndpoint => "no endpoint came with the request",
            ControlError::Failed => "the supervisor could not do it (see its line above)",
            ControlError::Kernel(code) => code.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(request: Request<'_>) {
        let mut words = [0u64; MAX_WORDS];
        let (label, len) = request.encode(&mut words).expect("fits");
        let mut bytes = [0u8; MAX_POLICY_BYTES];
        assert_eq!(
            Request::decode(label, &words[..len], &mut bytes),
            Some(request)
        );
    }

    #[test]
    fn every_request_round_trips() {
        let task = TaskName::new("ticker").unwrap();
        round_trip(Request::Thread { first: 7 });
        round_trip(Request::Caps {
            thread: 3,
            first: 1,
        });
        round_trip(Request::Kill { task });
        round_trip(Request::Restart { task });
        round_trip(Request::TraceOn { task });
        round_trip(Request::TraceOff { task });
        for len in [0, 1, 8, 9, MAX_POLICY_BYTES] {
            let description: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
            round_trip(Request::Policy {
                task,
                description: &description,
            });
        }
        let long = [0u8; MAX_POLICY_BYTES + 1];
        let mut words = [0u64; MAX_WORDS];
        assert_eq!(
            Request::Policy {
                task,
                description: &long
            }
            .encode(&mut words),
            None
        );
    }

    #[test]
    fn malformed_requests_are_refused() {
        let mut bytes = [0u8; MAX_POLICY_BYTES];
        assert_eq!(Request::decode(0x1234, &[0], &mut bytes), None);
        assert_eq!(Request::decode(THREAD, &[], &mut bytes), None);
        assert_eq!(
            Request::decode(KILL, &[0, 0, 0, 0], &mut bytes),
            None,
            "empty"
        );
        assert_eq!(
            Request::decode(KILL, &[25, 0, 0, 0], &mut bytes),
            None,
            "too long"
        );
        assert_eq!(
            Request::decode(KILL, &[3, 0xff, 0, 0], &mut bytes),
            None,
            "not UTF-8"
        );
        assert_eq!(
            Request::decode(KILL, &[3, 0x41], &mut bytes),
            None,
            "cut short"
        );
        let policy = [1, 0x41, 0, 0, 20, 0];
        assert_eq!(
            Request::decode(POLICY, &policy, &mut bytes),
            None,
            "bytes missing"
        );
        assert_eq!(TaskName::new(""), None);
        assert_eq!(TaskName::new(&"x".repeat(25)), None);
    }

    #[test]
    fn a_name_is_read_without_the_padding_after_it() {
        let mut bytes = [0u8; MAX_POLICY_BYTES];
        let padded = [3, u64::from_le_bytes(*b"tic\xffjunk"), u64::MAX, 7];
        let task = TaskName::new("tic").unwrap();
        assert_eq!(
            Request::decode(KILL, &padded, &mut bytes),
            Some(Request::Kill { task })
        );
    }

    #[test]
    fn any_words_under_any_label_decode_without_a_panic() {
        let mut bytes = [0u8; MAX_POLICY_BYTES];
        let labels = [
            THREAD,
            CAPS,
            KILL,
            RESTART,
            TRACE_ON,
            TRACE_OFF,
            POLICY,
            0,
            u64::MAX,
        ];
        for fill in [
            0,
            1,
            4,
            8,
            24,
            25,
            472,
            473,
            u64::from(u32::MAX) + 1,
            u64::MAX,
        ] {
            for len in 0..=MAX_WORDS {
                let mut words = [fill; MAX_WORDS];
                // A well-formed name in front, so that the lengths and
                // descriptions after it are what is tried.
                if fill == 8 {
                    words[..NAME_WORDS].copy_from_slice(&[1, u64::from(b'a'), 0, 0]);
                }
                for label in labels {
                    let request = Request::decode(label, &words[..len], &mut bytes);
                    if let Some(Request::Policy { description, .. }) = request {
                        assert!(description.len() <= MAX_POLICY_BYTES);
                        assert!(NAME_WORDS + 1 + description.len().div_ceil(8) <= len);
                    }
                }
            }
        }
        // A thread number past 32 bits names no thread.
        assert_eq!(Request::decode(CAPS, &[1 << 32, 0], &mut bytes), None);
    }

    #[test]
    fn no_request_label_is_a_kernel_messages() {
        // The root answers a kernel message that reaches its endpoint with
        // a control badge as that message (root/src/control.rs): no request
        // may be mistaken for one.
        let kernel = [
            crate::fault::FAULT_LABEL,
            crate::fault::END_LABEL,
            crate::policy_request::POLICY_REQUEST_LABEL,
            crate::trace::TRACE_ENTRY,
            crate::trace::TRACE_EXIT,
            crate::trace::TRACE_STEP,
            crate::message::NOTIFICATION_LABEL,
        ];
        for label in [THREAD, CAPS, KILL, RESTART, TRACE_ON, TRACE_OFF, POLICY] {
            assert!(!kernel.contains(&label), "{label:#x}");
        }
    }

    #[test]
    fn error_codes_round_trip() {
        for error in [
            ControlError::BadRequest,
            ControlError::NoSuchTask,
            ControlError::NotAllowed,
            ControlError::Ended,
            ControlError::NotTraced,
            ControlError::NoEndpoint,
            ControlError::Failed,
            ControlError::Kernel(crate::ErrorCode::Denied),
        ] {
            assert_eq!(ControlError::from_code(error.code()), Err(error));
        }
        assert_eq!(ControlError::from_code(0), Ok(()));
    }
}
