//! Stalling another CPU: what the holder of the kernel lock asks of a CPU
//! that must stop using a thread (or its FP/SIMD registers) before the
//! holder goes on.
//!
//! The holder needs this when it acts on a thread that another CPU is
//! running (suspending it, reading or writing its registers, moving it to
//! another CPU, ending it, freeing its TCB), or whose FP/SIMD registers
//! are still live in another CPU. It asks with [`request_stall`], sends
//! that CPU an interrupt, and waits in [`wait_stalled`]. The other CPU
//! answers from the only place it can be once the interrupt is taken:
//! waiting for the kernel lock ([`serve_stall`], called by
//! `KernelCell::with_on_core`'s wait loop). By then it has saved the
//! registers of the thread it ran into that thread's TCB (the vectors do
//! that first), so the holder may treat the thread as stopped.
//!
//! No deadlock: only the lock holder asks, and the CPU asked only ever
//! waits for the lock, where it answers. A CPU at EL0 takes the interrupt
//! (EL0 runs unmasked); one in the kernel reaches the lock; one idle
//! wakes from `wfi` and reaches it too.

use super::{registers, smp, user_return};
use crate::context::FpState;
use crate::layout::MAX_CPUS;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// What a CPU waiting for the kernel lock is doing: what a stall request
/// answered while it waits tells the holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiting {
    /// Handling a synchronous exception from EL0 (a syscall, a fault):
    /// ESR_EL1 still describes it.
    El0Sync,
    /// Anything else: an interrupt, the idle loop, boot.
    Other,
}

/// How a stalled CPU answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stalled {
    /// The syndrome (ESR_EL1) of the synchronous exception from EL0 the
    /// CPU is waiting to handle, if that is what it waits for.
    pub el0_sync_syndrome: Option<u64>,
}

/// One CPU's mailbox.
struct StallSlot {
    /// 1 when set by the holder; 0 once the CPU has answered (a word, for
    /// `smp::wait_for_change`).
    requested: AtomicU64,
    /// Where the CPU saves its FP/SIMD registers first (null: it does not).
    fp: AtomicPtr<FpState>,
    /// Bit 63: the CPU waits with a synchronous exception from EL0, whose
    /// syndrome is the low bits.
    answer: AtomicU64,
}

const SYNC_ANSWER: u64 = 1 << 63;

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: StallSlot = StallSlot {
    requested: AtomicU64::new(0),
    fp: AtomicPtr::new(core::ptr::null_mut()),
    answer: AtomicU64::new(0),
};

static SLOTS: [StallSlot; MAX_CPUS] = [EMPTY_SLOT; MAX_CPUS];

/// Asks `cpu` to stall, saving its FP/SIMD registers into `fp` first if
/// given. The caller holds the kernel lock, then interrupts `cpu` and
/// waits with [`wait_stalled`]. `fp` must stay valid until then (the
/// holder owns it: it is a TCB's, and the lock keeps the TCB alive).
pub fn request_stall(cpu: usize, fp: Option<&mut FpState>) {
    let slot = &SLOTS[cpu];
    let fp = fp.map_or(core::ptr::null_mut(), |fp| fp as *mut FpState);
    slot.fp.store(fp, Ordering::Relaxed);
    slot.answer.store(0, Ordering::Relaxed);
    slot.requested.store(1, Ordering::Release);
    // It may be waiting for the lock in `wfe`, watching the lock word.
    smp::wake_waiters();
}

/// Waits until `cpu` has answered [`request_stall`].
pub fn wait_stalled(cpu: usize) -> Stalled {
    let slot = &SLOTS[cpu];
    while slot.requested.load(Ordering::Acquire) != 0 {
        smp::wait_for_change(&slot.requested, 1);
    }
    let answer = slot.answer.load(Ordering::Relaxed);
    Stalled {
        el0_sync_syndrome: (answer & SYNC_ANSWER != 0).then_some(answer & !SYNC_ANSWER),
    }
}

/// Answers a stall request made of this CPU, if any (called while it
/// waits for the kernel lock).
pub fn serve_stall(waiting: Waiting) {
    let slot = &SLOTS[smp::this_cpu()];
    if slot.requested.load(Ordering::Acquire) == 0 {
        return;
    }
    let fp = slot.fp.swap(core::ptr::null_mut(), Ordering::Relaxed);
    // SAFETY: `request_stall` stored a pointer to a live FpState that the
    // holder keeps alive and does not touch until this CPU answers (the
    // Release store below, paired with `wait_stalled`'s Acquire load).
    if let Some(fp) = unsafe { fp.as_mut() } {
        user_return::save_fp(fp);
    }
    let answer = match waiting {
        Waiting::El0Sync => SYNC_ANSWER | registers::exception_syndrome_register(),
        Waiting::Other => 0,
    };
    // The holder may free the space of the thread this CPU ran (or give
    // its ASID to another after a rollover) once this CPU answers: its
    // TTBR0 must no longer name that space, or a speculative walk could
    // fill this CPU's TLB from freed tables. (The IPC fast path's entry
    // waits for the lock with the thread's TTBR0 still loaded; the return
    // to EL0 always loads TTBR0 afresh.)
    user_return::block_user_access();
    slot.answer.store(answer, Ordering::Relaxed);
    slot.requested.store(0, Ordering::Release);
}
