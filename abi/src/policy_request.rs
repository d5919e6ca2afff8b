//! What a policy server receives for a `Notify` verdict, and what it may
//! answer.
//!
//! The filtered thread blocks; the kernel sends its policy server's
//! endpoint a message as if the thread had called it: label
//! [`POLICY_REQUEST_LABEL`], 13 words, the badge of the endpoint
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
//!
//! The server answers with `Reply` (or `ReplyRecv`); the reply's label is
//! the verdict, its words the verdict's data. A reply with any other label
//! is taken as `Errno(Denied)`, and a server that goes away (its endpoint
//! destroyed, or it takes another call without replying) leaves the thread
//! with `Denied`: the policy fails closed, never open.

/// Label of a policy request.
pub const POLICY_REQUEST_LABEL: u64 = 0x901c;
/// Words in a policy request.
pub const POLICY_REQUEST_WORDS: u8 = 13;
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

/// The exit status of a thread a filter's `Kill` (or its policy server)
/// ended, as SIGSYS ends a Linux thread that seccomp kills.
pub const KILLED_BY_POLICY: i64 = -31;
