//! Generic syscall entry and exit work of the Portcullis microkernel.
//!
//! This crate is the one place where the *order* of the work done around a
//! system call lives. The architecture saves the user context and calls in;
//! the kernel supplies each stage's behaviour through [`EntryHooks`]. The
//! crate is pure safe Rust, has no `asm!` and runs its tests on the host
//! against a fake architecture (`tests/syscall_path/`).
//!
//! # Design principles
//!
//! 1. **One order, one place.** Entry work runs as 1 user dispatch, 2 trace
//!    entry stop, 3 policy, 4 audit entry; exit work as 5 audit exit, 6 trace
//!    exit stop, 7 single-step report, 8 the exit-to-user loop. Nothing else
//!    in the kernel calls these stages, so nothing can reorder them.
//! 2. **The fast path reads one word.** A thread's [`WorkFlags`] is one
//!    `u64` in its TCB; the arch fast path compares it with zero and never
//!    calls into this crate. Every feature that costs time sets a bit.
//! 3. **A stage only runs if its bit is set.** With no bits set no hook is
//!    called, except the exit loop's one re-read of the work word.
//! 4. **Later stages see what earlier stages changed.** Arguments are read
//!    from the saved registers in place, never copied, so a tracer's edits at
//!    the entry stop are what policy and audit see.
//! 5. **Denied never dispatches.** A `Deny` or `Kill` verdict, a tracer skip
//!    and a user-dispatch redirect all return without [`SyscallEntry::Dispatch`].
//!    Audit records a policy denial; it does not record what never ran.
//! 6. **No spurious reports.** A syscall the tracer skipped (SYSEMU) gets no
//!    exit stop and no single-step report; a redirected syscall gets no
//!    syscall exit work at all (as in Linux).
//! 7. **A killed thread never returns to user mode.** The exit path says so
//!    with [`UserReturn::Killed`]; the caller must not `eret` to it.
//! 8. **A stopped syscall goes on from its stop.** A stage that waits for
//!    user space ends the pass with [`SyscallEntry::Stopped`];
//!    [`syscall_resume_entry`] runs that stage and the later ones once the
//!    answer has come, on the registers as judged, never on the thread's
//!    live ones, and never the earlier stages again.
//! 9. **Every return to EL0 takes the same exit loop**, [`exit_to_user_mode`]:
//!    syscalls, interrupts, faults and a new thread's first entry. The loop is
//!    bounded ([`MAX_EXIT_WORK_ROUNDS`]); the kernel never spins on a hook.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod enter;
pub mod exit;
pub mod hooks;
pub mod regs;
pub mod work;

pub use enter::{
    syscall_enter_from_user_mode, syscall_resume_entry, EntryStop, SkipReason, SyscallEntry,
};
pub use exit::{exit_to_user_mode, syscall_exit_to_user_mode, UserReturn, MAX_EXIT_WORK_ROUNDS};
pub use hooks::{AuditEntry, EntryHooks, PolicyDecision, PolicyVerdict, TraceEntry, UserDispatch};
pub use regs::{ArgIndex, SyscallRegisters};
pub use work::WorkFlags;
