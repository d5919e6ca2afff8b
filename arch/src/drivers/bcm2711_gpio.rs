//! BCM2711 GPIO: just enough to put the PL011 UART0 on GPIO14/15.
//!
//! The firmware's own UART set-up depends on config.txt and on which UART
//! it thinks is primary; the kernel does not rely on it and routes the
//! pins itself: GPIO14 (TX) and GPIO15 (RX) to alternate function 0
//! (UART0), no pull on TX, pull-up on RX (an idle line reads high).

use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_structs;
use tock_registers::registers::ReadWrite;

register_structs! {
    Registers {
        (0x00 => _function_select0),
        (0x04 => function_select1: ReadWrite<u32>),
        (0x08 => _reserved),
        (0xe4 => pull_control0: ReadWrite<u32>),
        (0xe8 => @END),
    }
}

const ALT0: u32 = 0b100;
const PULL_NONE: u32 = 0b00;
const PULL_UP: u32 = 0b01;

/// Routes GPIO14/15 to UART0.
///
/// # Safety
/// `va` must map the BCM2711 GPIO block as device memory, and nothing
/// else may be changing pins 10..=19 or the pulls of pins 0..=15.
pub unsafe fn route_uart0(va: u64) {
    // SAFETY: guaranteed by the caller.
    let gpio = unsafe { &*(va as *const Registers) };
    // Function select 1 holds pins 10..=19, three bits each.
    let select = gpio.function_select1.get() & !((0b111 << 12) | (0b111 << 15));
    gpio.function_select1
        .set(select | (ALT0 << 12) | (ALT0 << 15));
    // Pull control 0 holds pins 0..=15, two bits each.
    let pulls = gpio.pull_control0.get() & !((0b11 << 28) | (0b11 << 30));
    gpio.pull_control0
        .set(pulls | (PULL_NONE << 28) | (PULL_UP << 30));
}
