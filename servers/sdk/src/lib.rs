//! Write Portcullis user programs: syscall stubs, the program entry point,
//! console output and a panic handler.
//!
//! A program built with the SDK defines
//! `#[no_mangle] fn portcullis_main(argument: u64) -> i32`; the SDK's
//! `_start` calls it with the value the kernel passed in `x0` and exits
//! with its result.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod console;
pub mod console_input;
pub mod debug;
pub mod inspect;
pub mod ipc;
pub mod loader;
pub mod policy;
pub mod policy_server;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub mod probe;
pub mod reply;
pub mod rseq;
pub mod supervision;
pub mod syscall;
pub mod task;
pub mod tcb;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub mod thread;
pub mod time;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub mod timing;
pub mod trace;
pub mod user_dispatch;
pub mod vspace;

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod runtime;

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub use runtime::{described_file, entry_point, root_image, system_image};

pub use abi::{ErrorCode, Syscall};
