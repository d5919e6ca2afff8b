//! The kernel console: the PL011, reachable from anywhere (the panic
//! handler included) once `init` has run.

use crate::drivers::pl011::Pl011;
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

/// Virtual address of the UART's registers; 0 until `init`.
static UART_VA: AtomicU64 = AtomicU64::new(0);

/// Starts the console on the PL011 mapped at `va`.
///
/// # Safety
/// `va` must map a PL011's registers as device memory for the rest of the
/// kernel's life, and nothing else may drive that UART.
pub unsafe fn init(va: u64, clock_hz: u32) {
    // SAFETY: guaranteed by the caller.
    let uart = unsafe { Pl011::new(va) };
    uart.init(clock_hz);
    UART_VA.store(va, Ordering::Release);
}

/// Writes to the console; does nothing before `init`.
pub fn write_str(text: &str) {
    let _ = fmt::Write::write_str(&mut Writer, text);
}

/// Waits until the UART has sent everything (before powering off).
pub fn flush() {
    if let Some(uart) = uart() {
        uart.flush();
    }
}

fn uart() -> Option<Pl011> {
    match UART_VA.load(Ordering::Acquire) {
        0 => None,
        // SAFETY: `init` recorded a valid mapping; the UART's state is its
        // FIFO, so a second handle (e.g. in a panic) only interleaves text.
        va => Some(unsafe { Pl011::new(va) }),
    }
}

/// `core::fmt::Write` onto the console.
pub struct Writer;

impl fmt::Write for Writer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if let Some(mut uart) = uart() {
            uart.write_str(s)?;
        }
        Ok(())
    }
}
