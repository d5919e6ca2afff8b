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
    /// First, at the cell's own address: the base register every entry
    /// holds anyway to reach the value (see `opaque`), so the test and the
    /// two stores need no offset of their own (after a large value, the
    /// kernel's state, the flag's offset took a register). The value
    /// follows at its alignment, its hot fields still at small offsets
    /// (none of the kernel's values is aligned to more than 16 bytes).
    borrowed: AtomicBool,
    value: UnsafeCell<T>,
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
        let this = opaque(self);
        if this.borrowed.load(Ordering::Relaxed) {
            panic!("kernel state re-entered");
        }
        this.borrowed.store(true, Ordering::Relaxed);
        // SAFETY: the flag above guarantees this is the only live reference.
        let result = f(unsafe { &mut *this.value.get() });
        this.borrowed.store(false, Ordering::Relaxed);
        result
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
