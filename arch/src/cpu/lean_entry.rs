//! What the lean syscall entry's Rust half tells its stub
//! (`el0_svc_generic` in `vectors.s`; the kernel's side is
//! `Kernel::lean_syscall`; docs/architecture.md has the context model).
//!
//! The stub saves `x0..x18` and `x30` of a thread with no work (or policy
//! alone for some numbers) and calls the kernel's
//! `portcullis_el0_svc(context) -> LeanExit`; for a thread whose only work
//! is audit, the same stub (`el0_svc_audited`) calls
//! `portcullis_el0_svc_audited`, with the same protocol. `x19..x29`,
//! `SP_EL0`, `ELR_EL1`, `SPSR_EL1` and `TPIDR_EL0` are still the
//! thread's when that returns: the kernel is compiled code that keeps
//! `x19..x29` as the procedure-call standard asks, runs on `SP_EL1`, takes
//! no exception it returns from (interrupts are masked) and never writes
//! the others.

use crate::context::UserContext;

/// Returned in `x0` and `x1` (a 16-byte `repr(C)` struct is returned in
/// that pair).
#[repr(C)]
#[derive(Debug)]
pub struct LeanExit {
    /// The thread's saved registers (where the stub saved them).
    pub context: *mut UserContext,
    /// [`SAVE_REST`], [`FINISH`], or the TTBR0 to return to the thread
    /// with (a table's address: never 0 or 1).
    pub next: u64,
}

/// Nothing was done (the lock was taken by another CPU, or the syscall is
/// not for this entry): the stub saves the rest of the frame and takes the
/// generic entry, `portcullis_el0_sync`.
pub const SAVE_REST: u64 = 0;

/// The syscall was carried out and something is due before any return;
/// this CPU still holds the kernel lock: the stub saves the rest of the
/// frame, then calls `portcullis_el0_svc_finish`, which releases it.
pub const FINISH: u64 = 1;
