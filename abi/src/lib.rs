//! The Portcullis system-call ABI, shared by the kernel and user space.
//!
//! # Register convention
//!
//! | register | on entry (`svc #0`)                          | on return                      |
//! |----------|----------------------------------------------|--------------------------------|
//! | `x8`     | syscall number ([`Syscall`])                 | receive-type calls: the badge or notification word; other calls: preserved |
//! | `x0`     | capability pointer (or 0 where none is used) | error code ([`ErrorCode`], 0 = success) |
//! | `x1`     | message info ([`MessageInfo`])               | calls that receive a message: its message info |
//! | `x2..x7` | message registers / arguments                | calls that receive a message: message words 0..5; other calls: may change |
//!
//! The receive-type calls are `Recv`, `NBRecv`, `Call` (the reply),
//! `ReplyRecv` (the next message), `Wait` and `Poll`. On success they write
//! `x8`: the badge of the sender's capability (`Recv`, `NBRecv`,
//! `ReplyRecv`; 0 if unbadged; a [`fault`] message carries its fault
//! endpoint's badge), 0 (`Call`: a reply carries no badge), or
//! the notification word taken (`Wait`, `Poll`, which write no message
//! registers). A failing call writes `x0` alone.
//!
//! Every other general-purpose register, `sp`, the FP/SIMD registers and
//! `tpidr_el0` are preserved across a syscall.
//!
//! Everything here is plain data so that it compiles for the host (unit
//! tests) and for both AArch64 targets.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

// Only the test-file writer (`elf::writer`) allocates.
#[cfg(any(test, feature = "elf-writer"))]
extern crate alloc;

pub mod audit;
pub mod bench;
pub mod bootinfo;
pub mod cap;
pub mod console;
pub mod control;
pub mod debug;
pub mod elf;
pub mod error;
pub mod export;
pub mod fault;
pub mod inspect;
pub mod message;
pub mod policy;
pub mod policy_request;
pub mod rseq;
pub mod rules;
pub mod syscall;
pub mod system;
pub mod task;
pub mod tcb;
#[cfg(test)]
mod test_rng;
pub mod trace;
pub mod user_dispatch;
pub mod vspace;

pub use error::ErrorCode;
pub use message::MessageInfo;
pub use syscall::Syscall;

/// Number of message registers carried in `x2..=x7`.
pub const REGISTER_MESSAGE_WORDS: usize = 6;

/// The length and capability-count fields of a message info word: its
/// low 9 bits (`length` 7, then `caps` 2). The count sits above the
/// length, so a message fits in registers (at most
/// `REGISTER_MESSAGE_WORDS` words, no capabilities) exactly when the two
/// fields together, read as one number, are at most the register words.
pub const MESSAGE_LENGTH_AND_CAPS_MASK: u64 = (1 << 9) - 1;

/// Where the kernel maps the IPC buffer page of a thread whose address
/// space it made (the root task): message
/// word `i` (for `i >= REGISTER_MESSAGE_WORDS`) lives at byte `8 * i`.
/// A thread finds its own buffer's address in `TPIDR_EL0`, which the
/// kernel sets when the thread is made (this address, or `TcbSetSpace`'s
/// `x1`), so threads sharing an address space each have their own.
pub const IPC_BUFFER_ADDRESS: u64 = 0x0000_7fff_ffff_1000;

/// Top (exclusive, 16-byte aligned) of the stack of a thread whose
/// address space the kernel made (its `sp` at entry), and what
/// `sdk::task::TaskBuilder` gives a task by default, so a task built in
/// user space finds the layout a kernel-made thread has: the stack ends one
/// unmapped page below the IPC buffer. The kernel's
/// `address_space::USER_STACK_TOP` is this value (`tests/task_images.rs`
/// checks).
pub const USER_STACK_TOP: u64 = 0x0000_7fff_ffff_0000;
/// Pages of stack below [`USER_STACK_TOP`] in a kernel-made address space
/// (the page below them stays unmapped as a guard).
/// (The root task keeps its system's whole state, 32 tasks of it, on its
/// stack: 128 KiB.)
pub const USER_STACK_PAGES: u64 = 32;

const _: () =
    assert!(USER_STACK_TOP + 4096 == IPC_BUFFER_ADDRESS && USER_STACK_TOP.is_multiple_of(16));

/// IPC buffer word where a sender lists the capability pointers of the
/// capabilities it transfers (message info `caps` of them, at most 3).
pub const IPC_BUFFER_SEND_CAPS_WORD: usize = 64;
/// IPC buffer word where a receiver names the first slot of its CNode that
/// received capabilities go to (consecutive slots, each must be empty).
pub const IPC_BUFFER_RECEIVE_SLOT_WORD: usize = 72;

/// Largest buffer the debug console prints in one syscall, in bytes.
pub const DEBUG_PRINT_MAX: usize = 256;
