//! The console's input side: what the kernel keeps of what arrives on the
//! UART until a holder of the console capability's read right takes it
//! (`Syscall::ConsoleRead`, `Syscall::ConsoleSetNotification`).
//!
//! The kernel owns the UART in both directions: its own lines, the lines
//! of user space (`DebugPrint`) and binary frames (`ConsoleWriteFrame`,
//! `abi::export`) go out whole, one after the other, so text and frames
//! never interleave mid-frame; input is drained from the UART's FIFO at
//! its interrupt into a ring of [`INPUT_BYTES`] bytes.

/// Bytes of input the kernel keeps unread; more are dropped (and counted).
pub const INPUT_BYTES: usize = 256;

/// Ctrl-C, as a terminal sends it.
pub const CTRL_C: u8 = 0x03;
