//! The forwarding features: what the kernel tells user-space servers
//! about a thread's syscalls, and what it does with their answers. Each
//! owns its state in the thread and its wire format in `abi`.
//!
//! * `policy`: a thread's filters judge each syscall; a `Notify` verdict
//!   asks the filter's policy server (`abi::policy_request`).
//! * `trace`: syscall entry and exit stops and single steps sent to the
//!   thread's tracer (`abi::trace`).
//! * `audit`: a record of each syscall written to the thread's audit ring
//!   (`abi::audit`).
//! * `user_dispatch`: syscalls from outside an allowed range of code sent
//!   to a handler in the thread's own space (`abi::user_dispatch`).

pub(in crate::kernel) mod audit;
pub(in crate::kernel) mod policy;
pub(in crate::kernel) mod trace;
pub(in crate::kernel) mod user_dispatch;
