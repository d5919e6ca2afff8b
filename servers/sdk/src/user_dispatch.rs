//! Syscall user dispatch (`abi::user_dispatch`, `docs/user_dispatch.md`):
//! send this thread's syscalls to a handler of its own, switched on and
//! off by a byte in its memory.
//!
//! ```ignore
//! static SELECTOR: SelectorByte = SelectorByte::new(Selector::Allow);
//! static FRAME: DispatchBuffer = DispatchBuffer::new();
//!
//! extern "C" fn handler(frame: &mut Frame, number: u64) -> ! {
//!     frame.x[0] = emulate(number, frame);
//!     user_dispatch::return_to(frame); // only returns on a bad frame
//!     loop {}
//! }
//!
//! user_dispatch::set(trampoline_range(), handler, &FRAME, &SELECTOR)?;
//! SELECTOR.set(Selector::Block); // no syscall needed
//! ```
//!
//! Syscalls made through [`trampoline_syscall`] run whatever the selector
//! says, as long as the configured range is [`trampoline_range`]. A
//! handler must not make ordinary syscalls while the selector blocks
//! (they would be redirected too, over the frame it is reading): it uses
//! the trampoline, or sets the selector to allow first.

use crate::syscall::{raw_syscall, raw_syscall6, RawResult};
use abi::{ErrorCode, Syscall};
use core::cell::UnsafeCell;
use core::ops::Range;
use core::sync::atomic::{AtomicU8, Ordering};

pub use abi::user_dispatch::Frame;

/// What the selector byte says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Selector {
    /// Every syscall runs.
    Allow = abi::user_dispatch::SELECTOR_ALLOW,
    /// Syscalls made outside the allowed range go to the handler.
    Block = abi::user_dispatch::SELECTOR_BLOCK,
}

/// The selector byte: the kernel reads it at every syscall of a thread
/// with user dispatch on, so flipping it is a plain store.
#[derive(Debug)]
pub struct SelectorByte(AtomicU8);

impl SelectorByte {
    /// A selector starting at `value`.
    pub const fn new(value: Selector) -> Self {
        Self(AtomicU8::new(value as u8))
    }

    /// Switches the redirect on or off, effective from the next `svc`.
    pub fn set(&self, value: Selector) {
        self.0.store(value as u8, Ordering::SeqCst);
    }

    /// What it says now (any value but 0 blocks, as the kernel reads it).
    pub fn get(&self) -> Selector {
        match self.0.load(Ordering::SeqCst) {
            0 => Selector::Allow,
            _ => Selector::Block,
        }
    }

    /// Its user address.
    pub fn address(&self) -> u64 {
        self.0.as_ptr() as u64
    }
}

/// Where the kernel saves the interrupted context: one [`Frame`], written
/// by the kernel when it redirects a syscall and handed to the handler.
///
/// Aligned to 512 bytes (the ABI asks 8), so that its 288 never cross a
/// page: the kernel's user-dispatch fast path takes a redirect and its
/// return only for a frame on one page (docs/user_dispatch.md).
#[repr(C, align(512))]
pub struct DispatchBuffer(UnsafeCell<Frame>);

// Never across a page: the frame fits in the alignment, which divides a page.
const _: () = {
    let align = core::mem::align_of::<DispatchBuffer>() as u64;
    assert!(abi::user_dispatch::FRAME_BYTES <= align);
    assert!(abi::elf::PAGE_SIZE.is_multiple_of(align));
};

// SAFETY: only the kernel writes the frame (at a redirect, while the
// thread is in the kernel) and only the handler it enters reads it.
unsafe impl Sync for DispatchBuffer {}

impl DispatchBuffer {
    /// An empty buffer (put it in a `static`: it must stay mapped).
    pub const fn new() -> Self {
        Self(UnsafeCell::new(Frame {
            x: [0; 31],
            sp: 0,
            pc: 0,
            nzcv: 0,
            number: 0,
            flags: 0,
        }))
    }

    /// Its user address.
    pub fn address(&self) -> u64 {
        self.0.get() as u64
    }
}

impl Default for DispatchBuffer {
    fn default() -> Self {
        Self::new()
    }
}

/// A user-dispatch handler: `x0` = the saved frame, `x1` = the syscall
/// number. It ends with [`return_to`] (its link register is 0: returning
/// faults).
pub type Handler = extern "C" fn(frame: &mut Frame, number: u64) -> !;

/// Turns user dispatch on for this thread: syscalls made outside `allowed`
/// while `selector` blocks go to `handler`, their context in `buffer`.
pub fn set(
    allowed: Range<u64>,
    handler: Handler,
    buffer: &'static DispatchBuffer,
    selector: &'static SelectorByte,
) -> Result<(), ErrorCode> {
    set_raw(
        0,
        [
            allowed.start,
            allowed.end,
            handler as *const () as usize as u64,
            buffer.address(),
            selector.address(),
        ],
    )
}

/// `SetUserDispatch` with raw registers `x0` and `x2..x6` (tests of
/// refused values).
pub fn set_raw(x0: u64, args: [u64; 5]) -> Result<(), ErrorCode> {
    raw_syscall6(Syscall::SetUserDispatch.number(), x0, args).into_result()
}

/// Turns user dispatch off for this thread.
pub fn clear() -> Result<(), ErrorCode> {
    set_raw(0, [0; 5])
}

/// `UserDispatchReturn`: resumes the context in `frame` (with whatever
/// the handler changed in it). Returns only if the kernel refused the
/// frame, with the error.
pub fn return_to(frame: &Frame) -> ErrorCode {
    return_to_address(frame as *const Frame as u64)
}

/// `UserDispatchReturn` from a raw address (tests of refused frames).
pub fn return_to_address(frame: u64) -> ErrorCode {
    let RawResult(code) = raw_syscall(Syscall::UserDispatchReturn.number(), frame, 0, 0);
    ErrorCode::from_raw(code).unwrap_or(ErrorCode::InvalidSyscall)
}

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
core::arch::global_asm!(
    ".section .text.portcullis_dispatch_trampoline,\"ax\",%progbits",
    ".balign 4",
    ".global portcullis_dispatch_trampoline",
    "portcullis_dispatch_trampoline:",
    "    svc #0",
    "    ret",
    ".global portcullis_dispatch_trampoline_end",
    "portcullis_dispatch_trampoline_end:",
);

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
extern "C" {
    fn portcullis_dispatch_trampoline();
    fn portcullis_dispatch_trampoline_end();
}

/// The addresses of the SDK's syscall trampoline (one `svc` and a `ret`):
/// configure this as the allowed range and [`trampoline_syscall`] always
/// reaches the kernel.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn trampoline_range() -> Range<u64> {
    portcullis_dispatch_trampoline as *const () as usize as u64
        ..portcullis_dispatch_trampoline_end as *const () as usize as u64
}

/// On the host there is no trampoline.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn trampoline_range() -> Range<u64> {
    0..0
}

/// Makes syscall `number` with `x0..x7` from inside the trampoline and
/// returns `x0..x8` as the kernel left them.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn trampoline_syscall(number: u64, args: [u64; 8]) -> [u64; 9] {
    let mut x = [
        args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], number,
    ];
    // SAFETY: the trampoline is `svc #0; ret`: it changes x0..x8 and, for
    // `Call` and `ReplyRecv`, x9..x18 (the syscall) and the link register
    // (the `bl`), nothing else, and uses no stack.
    unsafe {
        core::arch::asm!(
            "bl portcullis_dispatch_trampoline",
            inout("x0") x[0], inout("x1") x[1], inout("x2") x[2],
            inout("x3") x[3], inout("x4") x[4], inout("x5") x[5],
            inout("x6") x[6], inout("x7") x[7], inout("x8") x[8],
            out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
            out("x14") _, out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            out("x30") _,
            options(nostack),
        )
    };
    x
}

/// On the host there is no kernel.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn trampoline_syscall(number: u64, args: [u64; 8]) -> [u64; 9] {
    crate::syscall::raw_syscall_registers(number, args)
}
