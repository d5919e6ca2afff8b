//! The kernel console: the PL011, reachable from anywhere (the panic
//! handler included) once `start` has run.
//!
//! A failure before that (reading the device tree, mapping RAM) is still
//! reported: the panic paths call [`ensure_started`], which brings up the
//! default UART of the board the loader entered for ([`set_fallback`]).

use super::early_map;
use crate::boards::{Board, BoardInfo};
use crate::drivers::pl011::Pl011;
use crate::mmu::MapError;
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// Virtual address of the UART's registers; 0 until `start`.
static UART_VA: AtomicU64 = AtomicU64::new(0);

/// The board whose default UART `ensure_started` uses: 0 none yet, else
/// [`board_code`].
static FALLBACK_BOARD: AtomicU8 = AtomicU8::new(0);

/// Whether `ensure_started` has tried the fallback UART: a fault while
/// starting it is reported by the same path, which must not try again.
static FALLBACK_TRIED: AtomicBool = AtomicBool::new(false);

const fn board_code(board: Board) -> u8 {
    match board {
        Board::QemuVirt => 1,
        Board::RaspberryPi4 => 2,
    }
}

/// Starts the console on `info`'s UART: maps its page into the device
/// window, routes the board's pins to it (Pi 4: GPIO14/15 to UART0), and
/// programs 115200 8N1 from its clock.
pub fn start(info: &BoardInfo) -> Result<(), MapError> {
    let va = early_map::map_device(info.uart, 0x1000)?;
    if let Some(gpio) = info
        .gpio
        .and_then(|pa| early_map::map_device(pa, 0x1000).ok())
    {
        // SAFETY: `gpio` maps the board's GPIO block; the kernel touches
        // no other pin.
        unsafe { crate::drivers::bcm2711_gpio::route_uart0(gpio) };
    }
    // SAFETY: `va` maps this board's PL011 for good (the device window is
    // never unmapped); only the console drives it.
    let uart = unsafe { Pl011::new(va) };
    uart.init(info.uart_clock_hz);
    UART_VA.store(va, Ordering::Release);
    Ok(())
}

/// Names the board whose default UART a failure before `start` is
/// reported on.
pub fn set_fallback(board: Board) {
    FALLBACK_BOARD.store(board_code(board), Ordering::Relaxed);
}

/// For the panic paths: a console that is not up yet is started on the
/// fallback board's default UART, once. Does nothing when no board was
/// named, or the UART cannot be mapped or faulted the first time (then
/// nothing can be printed).
pub fn ensure_started() {
    if UART_VA.load(Ordering::Acquire) != 0 || FALLBACK_TRIED.swap(true, Ordering::Relaxed) {
        return;
    }
    let board = match FALLBACK_BOARD.load(Ordering::Relaxed) {
        1 => Board::QemuVirt,
        2 => Board::RaspberryPi4,
        _ => return,
    };
    let _ = start(&board.defaults());
}

/// Writes to the console; does nothing before `start`.
pub fn write_str(text: &str) {
    let _ = fmt::Write::write_str(&mut Writer, text);
}

/// Writes bytes as they are (no `\r` before `\n`): a binary frame.
pub fn write_bytes(bytes: &[u8]) {
    if let Some(uart) = uart() {
        for &byte in bytes {
            uart.write_byte(byte);
        }
    }
}

/// Takes up to `out.len()` received bytes: how many. Reading the FIFO
/// empty is what clears the receive interrupts (both the PL011's and
/// QEMU's model). They are not also cleared through UARTICR: a byte that
/// arrived between the last read and that write would have raised the
/// interrupt just to have it cleared, and it would then wait in the FIFO
/// with nothing to say so (QEMU raises the receive interrupt only when
/// its FIFO goes from empty to one byte).
pub fn read_input(out: &mut [u8]) -> usize {
    let Some(uart) = uart() else {
        return 0;
    };
    let mut taken = 0;
    while taken < out.len() {
        match uart.read_byte() {
            Some(byte) => {
                out[taken] = byte;
                taken += 1;
            }
            None => break,
        }
    }
    taken
}

/// Makes the UART interrupt when input arrives (a stale receive interrupt
/// is cleared first; what waits in the FIFO is read by the caller next).
pub fn start_input() {
    if let Some(uart) = uart() {
        uart.clear_receive_interrupt();
        uart.set_receive_interrupt(true);
    }
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
        // SAFETY: `start` recorded a valid mapping; the UART's state is its
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
