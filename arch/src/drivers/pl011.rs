//! ARM PL011 UART: the kernel console.

use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_structs;
use tock_registers::registers::{ReadOnly, ReadWrite, WriteOnly};

register_structs! {
    Registers {
        (0x00 => data: ReadWrite<u32>),
        (0x04 => _reserved0),
        (0x18 => flags: ReadOnly<u32>),
        (0x1c => _reserved1),
        (0x24 => integer_baud: ReadWrite<u32>),
        (0x28 => fractional_baud: ReadWrite<u32>),
        (0x2c => line_control: ReadWrite<u32>),
        (0x30 => control: ReadWrite<u32>),
        (0x34 => _reserved2),
        (0x38 => interrupt_mask: ReadWrite<u32>),
        (0x3c => _reserved3),
        (0x44 => interrupt_clear: WriteOnly<u32>),
        (0x48 => @END),
    }
}

const FLAG_TX_FULL: u32 = 1 << 5;
const FLAG_RX_EMPTY: u32 = 1 << 4;
/// The receive interrupt (the FIFO reached its trigger level) and the
/// receive timeout (bytes wait below it): both mean "input to read".
const INTERRUPT_RX_AND_TIMEOUT: u32 = (1 << 4) | (1 << 6);
const FLAG_BUSY: u32 = 1 << 3;
const LINE_8N1_FIFO: u32 = (0b11 << 5) | (1 << 4);
const CONTROL_ENABLE_TX_RX: u32 = (1 << 0) | (1 << 8) | (1 << 9);
const BAUD: u32 = 115_200;

/// A PL011 at a mapped address.
pub struct Pl011 {
    registers: &'static Registers,
}

impl Pl011 {
    /// Wraps the UART whose registers are mapped (as device memory) at `va`.
    ///
    /// # Safety
    /// `va` must be the virtual address of a PL011's registers, mapped as
    /// device memory for the rest of the kernel's life, and nothing else
    /// may drive that UART.
    pub unsafe fn new(va: u64) -> Self {
        Pl011 {
            // SAFETY: the caller guarantees the mapping (see above).
            registers: unsafe { &*(va as *const Registers) },
        }
    }

    /// Programs 115200 8N1 from the reference clock `clock_hz`. QEMU does
    /// not need it; the real Pi's firmware leaves the UART in an unknown
    /// state.
    pub fn init(&self, clock_hz: u32) {
        self.flush();
        self.registers.control.set(0);
        self.registers.interrupt_clear.set(0x7ff);
        // Divisor = clock / (16 * baud), in 16.6 fixed point.
        let divisor_x64 = (u64::from(clock_hz) * 4).div_ceil(u64::from(BAUD));
        self.registers.integer_baud.set((divisor_x64 >> 6) as u32);
        self.registers
            .fractional_baud
            .set((divisor_x64 & 0x3f) as u32);
        self.registers.line_control.set(LINE_8N1_FIFO);
        self.registers.control.set(CONTROL_ENABLE_TX_RX);
    }

    /// Sends one byte, waiting for room in the FIFO.
    pub fn write_byte(&self, byte: u8) {
        while self.registers.flags.get() & FLAG_TX_FULL != 0 {
            core::hint::spin_loop();
        }
        self.registers.data.set(u32::from(byte));
    }

    /// The next byte received, if one waits. Bytes that arrived with an
    /// error (framing, parity, break, overrun: bits 8..12 of the data
    /// register) are dropped.
    pub fn read_byte(&self) -> Option<u8> {
        loop {
            if self.registers.flags.get() & FLAG_RX_EMPTY != 0 {
                return None;
            }
            let data = self.registers.data.get();
            if data & 0xf00 == 0 {
                return Some(data as u8);
            }
        }
    }

    /// Interrupts when input arrives (the receive and receive-timeout
    /// interrupts), or stops that.
    pub fn set_receive_interrupt(&self, on: bool) {
        let mask = self.registers.interrupt_mask.get();
        self.registers.interrupt_mask.set(if on {
            mask | INTERRUPT_RX_AND_TIMEOUT
        } else {
            mask & !INTERRUPT_RX_AND_TIMEOUT
        });
    }

    /// Clears the receive interrupts (before they are first enabled:
    /// afterwards, reading the FIFO empty clears them).
    pub fn clear_receive_interrupt(&self) {
        self.registers.interrupt_clear.set(INTERRUPT_RX_AND_TIMEOUT);
    }

    /// Waits until everything sent has left the UART.
    pub fn flush(&self) {
        while self.registers.flags.get() & FLAG_BUSY != 0 {
            core::hint::spin_loop();
        }
    }
}

impl core::fmt::Write for Pl011 {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for byte in s.bytes() {
            if byte == b'\n' {
                self.write_byte(b'\r');
            }
            self.write_byte(byte);
        }
        Ok(())
    }
}
