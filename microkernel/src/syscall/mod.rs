//! Syscall dispatch: raw registers → typed call → safe handler → result.
//!
//! `decode` turns the saved registers into a `Call` (checking everything
//! that can be checked without kernel state); the kernel then carries the
//! call out and writes one `SyscallResult` back in one place.
//!
//! * `call`: the calls there are (`Call`) and what carrying one out
//!   comes to (`SyscallResult`).
//! * `decode`: registers to a `Call`.
//! * `lean`: which syscalls the lean entry may carry out.

mod call;
mod decode;
mod lean;
#[cfg(test)]
mod tests;

pub use crate::thread::UserDispatchConfig;
pub use call::*;
pub use decode::*;
pub use lean::*;
