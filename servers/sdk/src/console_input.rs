//! The console's input side and binary frames (`abi::console`,
//! `abi::export`): what a shell or another interactive task uses through
//! a console capability with the read right.

use crate::syscall::raw_syscall_registers;
use abi::{ErrorCode, Syscall};

/// What one `read` took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    /// Bytes written at the start of the buffer.
    pub bytes: usize,
    /// Input the kernel dropped since the last read (its ring was full).
    pub dropped: u64,
}

/// Reads waiting console input into `buffer` (at most
/// `abi::DEBUG_PRINT_MAX` bytes are asked for); never waits.
pub fn read(console: u64, buffer: &mut [u8]) -> Result<Read, ErrorCode> {
    let len = buffer.len().min(abi::DEBUG_PRINT_MAX) as u64;
    let x = raw_syscall_registers(
        Syscall::ConsoleRead.number(),
        [console, 0, buffer.as_mut_ptr() as u64, len, 0, 0, 0, 0],
    );
    result(x[0])?;
    Ok(Read {
        bytes: x[8] as usize,
        dropped: x[1],
    })
}

/// Has the notification capability `notification` signalled whenever
/// console input arrives (and at once if some waits).
pub fn set_notification(console: u64, notification: u64) -> Result<(), ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::ConsoleSetNotification.number(),
        [console, 0, notification, 1, 0, 0, 0, 0],
    );
    result(x[0])
}

/// Stops signalling a notification when input arrives.
pub fn clear_notification(console: u64) -> Result<(), ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::ConsoleSetNotification.number(),
        [console, 0, 0, 0, 0, 0, 0, 0],
    );
    result(x[0])
}

/// Writes `frame` (1 ..= `abi::DEBUG_PRINT_MAX` bytes, none of them 0:
/// COBS bytes from `abi::export::encode_frame`) as one frame between two
/// zero bytes, through a console capability with the read and write
/// rights.
pub fn write_frame(console: u64, frame: &[u8]) -> Result<(), ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::ConsoleWriteFrame.number(),
        [
            console,
            0,
            frame.as_ptr() as u64,
            frame.len() as u64,
            0,
            0,
            0,
            0,
        ],
    );
    result(x[0])
}

/// Encodes `event` and writes it as one frame.
pub fn export(console: u64, event: &abi::export::Event) -> Result<(), ErrorCode> {
    let mut buffer = [0u8; abi::export::MAX_FRAME_BYTES];
    let frame =
        abi::export::encode_frame(event, &mut buffer).map_err(|_| ErrorCode::InvalidArgument)?;
    write_frame(console, frame)
}

fn result(x0: u64) -> Result<(), ErrorCode> {
    crate::syscall::RawResult(x0).into_result()
}
