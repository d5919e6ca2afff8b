//! Generic syscall entry and exit work of the Portcullis microkernel.
//!
//! This crate is the one place where the *order* of the work done around a
//! system call lives: the order of what the kernel *does*, not only of what
//! it decides. The entry and exit work are state machines
//! ([`SyscallEnter`], [`SyscallExit`]) that return the next step
//! ([`EntryStep`], [`ExitStep`]): a question for the kernel (redirect? the
//! tracer's answer? the verdict? room in the audit ring?) or an effect
//! (send the trace entry stop, ask the policy server, wait for audit room,
//! write the audit entry record, dispatch, skip, kill, redirect; write the
//! audit record with the result, send the exit stop, report the step, run
//! the exit-to-user loop). The kernel carries out each step and asks for
//! the next. The crate is pure safe Rust, has no `asm!` and runs its tests
//! on the host (`tests/syscall_path/`).
//!
//! # Design principles
//!
//! 1. **One order, one place.** Entry work runs as 1 user dispatch, 2 trace
//!    entry stop, 3 policy, 4 audit entry; exit work as 5 audit exit, 6 trace
//!    exit stop, 7 single-step report, 8 the exit-to-user loop. Every
//!    effect of a stage (a redirect, a stop sent, a policy request, an
//!    audit record) is a step these machines return, and the kernel
//!    carries the steps out in the order they come, so nothing can
//!    reorder them (`docs/entry.md` §2: the stops of stages 6 and 7 are
//!    sent on the thread's way back to EL0, still in that order).
//! 2. **The fast path reads one word.** A thread's [`WorkFlags`] is one
//!    `u64` in its TCB; the arch fast path compares it with zero and never
//!    calls into this crate. Every feature that costs time sets a bit.
//! 3. **A stage only runs if its bit is set.** With no bits set the machines
//!    return no step but the dispatch and the exit loop's one re-read of
//!    the work word.
//! 4. **Later stages see what earlier stages changed.** Arguments are read
//!    from the saved registers in place, never copied, so a tracer's edits at
//!    the entry stop are what policy and audit see.
//! 5. **Denied never dispatches.** A `Deny` or `Kill` verdict, a tracer skip
//!    and a user-dispatch redirect all end without [`EntryStep::Dispatch`].
//!    Audit records a policy denial; it does not record what never ran.
//! 6. **No spurious reports.** A syscall the tracer skipped (SYSEMU) gets no
//!    exit stop and no single-step report; a redirected syscall gets no
//!    syscall exit work at all (as in Linux).
//! 7. **A killed thread never returns to user mode.** The exit work says so
//!    with [`ExitStep::Killed`]; the caller must not `eret` to it.
//! 8. **A stopped syscall goes on from its stop.** A stage that waits for
//!    user space ends the pass with a step that sends the stop
//!    ([`SyscallEntry::Stopped`]); [`SyscallEnter::resume`] asks that
//!    stage again once the answer has come and goes on with the later ones,
//!    on the registers as judged, never on the thread's live ones, and
//!    never the earlier stages again.
//! 9. **Every return to EL0 takes the same exit loop**, [`exit_to_user_mode`]:
//!    syscalls, interrupts, faults and a new thread's first entry. The loop is
//!    bounded ([`MAX_EXIT_WORK_ROUNDS`]); the kernel never spins on a hook.
//! 10. **A restartable sequence is checked before anything is reported.**
//!     After an event (`WorkFlags::RSEQ`) the loop's rseq handler runs
//!     before the owed trace exit stop and step report are sent
//!     ([`rseq::check_on_exit`]); a thread with rseq and no event pays
//!     nothing.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod enter;
pub mod exit;
pub mod hooks;
pub mod regs;
pub mod rseq;
pub mod work;

pub use enter::{EntryStep, EntryStop, SkipReason, SyscallEnter, SyscallEntry};
pub use exit::{exit_to_user_mode, ExitStep, SyscallExit, MAX_EXIT_WORK_ROUNDS};
pub use hooks::{
    AuditRoom, ExitLoopHooks, PolicyDecision, PolicyVerdict, TraceEntry, UserDispatch,
};
pub use regs::{ArgIndex, SyscallRegisters};
pub use work::WorkFlags;
