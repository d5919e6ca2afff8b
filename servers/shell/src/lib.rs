//! The shell's logic: the line editor, the commands and what they print,
//! all plain functions that unit-test on the host. The program
//! (`main.rs`) reads the console, talks to the supervisor (`abi::control`)
//! and answers trace stops; docs/shell.md says what it holds and does.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]

pub mod command;
pub mod line;
pub mod show;

/// The shell's capabilities, in the slots its system description gives
/// them (systems/shell.toml).
pub mod slots {
    /// The console, with the read right: its input comes here, and its
    /// lines go out untagged.
    pub const CONSOLE: u64 = 1;
    /// The supervisor's endpoint (`abi::control`).
    pub const SUPERVISOR: u64 = 2;
    /// The endpoint trace stops come to (read and write: a copy of it
    /// goes to the supervisor with each `trace TASK on`).
    pub const STOPS: u64 = 3;
    /// The notification console input and the audit ring signal, bound
    /// to the shell's thread.
    pub const EVENTS: u64 = 4;
    /// The shell's own TCB (to bind `EVENTS`).
    pub const OWN_TCB: u64 = 5;
}

/// The bit console input sets in the events word (the badge of the
/// `EVENTS` capability the shell binds input to).
pub const CONSOLE_BIT: u64 = 1 << 1;
/// The bit the audit ring's notification sets (an unbadged capability).
pub const AUDIT_BIT: u64 = 1 << 0;
/// Where the audit ring is mapped.
pub const RING_ADDRESS: u64 = 0x1000_0000;
/// The prompt.
pub const PROMPT: &str = "portcullis> ";
