//! `KernelCell`: the kernel's global state on one CPU.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

/// Global state owned by the (single) CPU while it runs kernel code.
///
/// The kernel runs with interrupts masked and on one CPU, so no two pieces
/// of kernel code run at once; the only way to reach the state twice is
/// re-entry (a kernel fault while it is borrowed), which `with` detects
/// and turns into a panic instead of two `&mut`.
#[repr(C)]
pub struct KernelCell<T> {
    /// First: at the symbol's own address, so the value's hot fields keep
    /// small offsets from it (a value with a large alignment, such as the
    /// kernel's 4 KiB-aligned thread table, would otherwise start past
    /// the reach of an immediate offset); the flag costs an address of
    /// its own either way.
    value: UnsafeCell<T>,
    borrowed: AtomicBool,
}

// SAFETY: access is serialised by `with` (see the type's docs).
unsafe impl<T: Send> Sync for KernelCell<T> {}

impl<T> KernelCell<T> {
    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        KernelCell {
            borrowed: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` with exclusive access to the value.
    ///
    /// # Panics
    /// If called while the value is already borrowed (a kernel bug).
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // One CPU with interrupts masked: a plain load and store detect
        // re-entry; no atomic read-modify-write is needed.
        if self.borrowed.load(Ordering::Relaxed) {
            panic!("kernel state re-entered");
        }
        self.borrowed.store(true, Ordering::Relaxed);
        // SAFETY: the flag above guarantees this is the only live reference.
        let result = f(unsafe { &mut *self.value.get() });
        self.borrowed.store(false, Ordering::Relaxed);
        result
    }
}
