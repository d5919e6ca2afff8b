//! The Portcullis kernel core.
//!
//! Design principles (the invariants to keep in mind when reading on):
//!
//! 1. **Event driven, one kernel stack.** Every entry from EL0 (syscall,
//!    fault, interrupt) runs to completion and returns a [`kernel::Resume`]
//!    saying where the CPU goes next. Nothing waits on the kernel stack; a
//!    waiting thread is a state in its TCB.
//! 2. **The kernel never panics because of user space.** Every value a
//!    thread controls (registers, pointers, lengths, ELF contents) is
//!    checked and answered with a typed [`abi::ErrorCode`] or, for a fault,
//!    by stopping that thread alone.
//! 3. **The kernel never dereferences a user pointer.** User memory is
//!    read by walking the thread's page tables in software and reading the
//!    frames through the linear map ([`address_space`]).
//! 4. **One syscall path.** Every syscall goes through
//!    [`kernel::Kernel::handle_el0_sync`]; a thread with none skips the
//!    generic entry by testing one word. Around the dispatch of a syscall
//!    with work the kernel does what the `entry` crate's machines say, in
//!    their order: `kernel/entry_work.rs` answers their questions and
//!    carries out their steps (the redirect, the trace stops, the policy
//!    request, the audit room wait and records; the stops owed at exit
//!    are sent on the thread's way back to EL0). Only a stopped call that
//!    is cancelled, or a thread that ends inside a syscall, gets its
//!    record and exit stop where that happens (`docs/stopped_calls.md`).
//! 5. **Hardware behind a trait.** The core is generic over
//!    [`platform::Platform`], so everything here unit-tests on the host;
//!    the target's implementation lives in `main.rs` over the arch crate.
//! 6. **The kernel dispatches exactly what was judged.** A syscall that
//!    stops for its tracer, a policy server or audit room is kept by the
//!    kernel ([`stopped_call`]) and goes on from those registers once
//!    answered; the `svc` is never executed again.
//! 7. **No heap, no tables to fill.** Every kernel object is a record in
//!    the memory that paid for it (an Untyped's, or for the kernel's own
//!    objects a page of its pool: [`cap`], `arch::object_memory`); what
//!    the kernel keeps besides is fixed-size (`heapless`) and bounded by
//!    the kernel itself, never by what user space makes.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(any(test, feature = "test-support"))]
extern crate alloc;

pub mod address_space;
pub mod cap;
pub mod endpoint_queue;
pub mod fault;
pub mod filter;
pub mod frames;
pub mod ids;
pub mod ipc;
pub mod judged_memory;
pub mod kernel;
pub mod member_links;
pub mod platform;
pub mod scheduler;
pub mod stopped_call;
pub mod syscall;
pub mod system_image;
pub mod thread;
pub mod tick;
