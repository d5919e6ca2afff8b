//! `KernelCell`: the kernel's global state behind the big kernel lock.

use super::cross_core::{self, Waiting};
use super::smp;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};

/// Global state that one CPU at a time may use: the big kernel lock.
///
/// The kernel runs with interrupts masked, so a CPU holds the lock for one
/// whole kernel entry and never twice; another CPU that enters meanwhile
/// waits (spinning, answering the holder's stall requests: see
/// `cross_core`). The lock word names its holder, so re-entry on the same
/// CPU (a kernel fault while the state is borrowed) is a panic instead of
/// a deadlock or two `&mut`.
///
/// Why one lock (as seL4's): every kernel entry is short and bounded (long
/// operations stop at preemption points), and a syscall touches objects
/// all over the kernel (capabilities, both ends of an IPC, run queues);
/// one acquire and one release are the fast path's whole cost of SMP,
/// where finer locks would take several per call. See docs/smp.md.
///
/// 16-byte aligned: the fast paths' assembly loads the lock word and the
/// 8 bytes after it with one exclusive pair load, which must be.
#[repr(C, align(16))]
pub struct KernelCell<T> {
    /// First, at the cell's own address: the base register every entry
    /// holds anyway to reach the value (see `opaque`), so the lock needs
    /// no offset of its own. 0 when free, else the holding CPU's token
    /// (`smp::this_core_token`, never 0). The value follows at its
    /// alignment, its hot fields still at small offsets.
    holder: AtomicU64,
    value: UnsafeCell<T>,
}

// SAFETY: access is serialised by the lock in `with_on_core`.
unsafe impl<T: Send> Sync for KernelCell<T> {}

impl<T> KernelCell<T> {
    /// Where the value lies in the cell (the lock word is at offset 0):
    /// for the fast paths' assembly, which takes the lock itself.
    pub const VALUE_OFFSET: usize = core::mem::offset_of!(KernelCell<T>, value);

    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        KernelCell {
            holder: AtomicU64::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` with exclusive access to the value, from a path that is
    /// not handling an exception from EL0 (boot, the idle loop).
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.with_on_core(Waiting::Other, |value, _| f(value))
    }

    /// Runs `f` with exclusive access to the value and this CPU's token
    /// (`smp::this_core_token`: a value no other CPU has, read with one
    /// `mrs`), waiting for the lock if another CPU holds it. `waiting`
    /// says what this CPU is doing, for a stall request it answers while
    /// it waits.
    ///
    /// # Panics
    /// If this CPU holds the lock already (a kernel bug).
    #[inline(always)]
    pub fn with_on_core<R>(&self, waiting: Waiting, f: impl FnOnce(&mut T, u64) -> R) -> R {
        let this = opaque(self);
        let me = smp::this_core_token();
        // Uncontended: one exclusive load/store pair. Acquire: what the
        // last holder wrote is seen.
        if this
            .holder
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            this.wait(me, waiting);
        }
        // SAFETY: the lock above guarantees this is the only live
        // reference (on this CPU `wait` ruled out re-entry; other CPUs
        // wait for the release below).
        let result = f(unsafe { &mut *this.value.get() }, me);
        // Release: everything written under the lock is seen by the next
        // holder.
        this.holder.store(0, Ordering::Release);
        result
    }

    /// As [`with_on_core`](Self::with_on_core), but only if the lock is
    /// free now: `None`, and `f` not run, if another CPU holds it (this
    /// CPU then answers no stall request, so its caller must take the
    /// waiting entry). `f` returns its result and whether to keep the lock
    /// past this call, for [`with_kept`](Self::with_kept) to release: the
    /// lean syscall entry keeps it while its stub saves the rest of a
    /// thread's registers.
    ///
    /// # Panics
    /// As `with_on_core` (debug builds: the lock word is never this CPU's
    /// here).
    #[inline(always)]
    pub fn try_with_on_core<R>(&self, f: impl FnOnce(&mut T, u64) -> (R, bool)) -> Option<R> {
        let this = opaque(self);
        let me = smp::this_core_token();
        if let Err(holder) =
            this.holder
                .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        {
            debug_assert_ne!(holder, me, "kernel state re-entered");
            return None;
        }
        // SAFETY: as in `with_on_core`: this CPU took the lock above.
        let (result, keep) = f(unsafe { &mut *this.value.get() }, me);
        if !keep {
            this.holder.store(0, Ordering::Release);
        }
        Some(result)
    }

    /// Runs `f` under the lock a [`try_with_on_core`](Self::try_with_on_core)
    /// on this CPU kept, then releases it.
    ///
    /// # Safety
    /// This CPU holds the lock, kept by `try_with_on_core`, and nothing has
    /// used the value since.
    #[inline(always)]
    pub unsafe fn with_kept<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let this = opaque(self);
        debug_assert_eq!(
            this.holder.load(Ordering::Relaxed),
            smp::this_core_token(),
            "the lock is this CPU's"
        );
        // SAFETY: the caller guarantees this CPU holds the lock and no
        // reference from before is in use.
        let result = f(unsafe { &mut *this.value.get() });
        this.holder.store(0, Ordering::Release);
        result
    }

    /// The lock is taken: wait for it, answering stall requests.
    #[cold]
    #[inline(never)]
    fn wait(&self, me: u64, waiting: Waiting) {
        loop {
            let holder = self.holder.load(Ordering::Relaxed);
            if holder == me {
                panic!("kernel state re-entered");
            }
            if holder == 0
                && self
                    .holder
                    .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            // The holder may be waiting for this CPU to stop (it needs
            // the thread this CPU ran, or its FP registers).
            cross_core::serve_stall(waiting);
            // Until the holder releases (or posts a stall request).
            if holder != 0 {
                smp::wait_for_change(&self.holder, holder);
            }
        }
    }
}

/// `cell`, through a register the compiler cannot see into. A `static`
/// cell's address is a link-time constant, so the compiler formed each
/// field's address afresh from the symbol (an `adrp` for every field
/// read, page by page) instead of one base register and offsets.
#[inline(always)]
// The asm never reads through the pointer (it is an empty string), so
// `nomem` is true of it; `nomem` is what lets the compiler treat it as a
// free, pure value.
#[allow(clippy::pointers_in_nomem_asm_block)]
fn opaque<T>(cell: &KernelCell<T>) -> &KernelCell<T> {
    let mut address: *const KernelCell<T> = cell;
    // SAFETY: the empty asm touches no memory, stack or flags; it hands
    // back the address it was given, so the reference is `cell` again,
    // with its lifetime.
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            inout(reg) address,
            options(pure, nomem, nostack, preserves_flags)
        );
        &*address
    }
}
