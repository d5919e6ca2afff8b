//! The debug console: user text printed as tagged lines.

use crate::kernel::Kernel;
use crate::platform::{Console, Platform};
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::{ErrorCode, DEBUG_PRINT_MAX};
use core::fmt::Write;

impl Kernel {
    /// `DebugPrint`: `len` bytes (at most `DEBUG_PRINT_MAX`) from `address`
    /// through the console capability `console` (write right). The text
    /// as judged, if a filter or policy server judged it (all of it: a
    /// print is at most 256 bytes, the copy 512), else read now. Out of
    /// line: inlined, it made the whole dispatch body spill more
    /// registers (10 instructions on `syscall_slow_path_error`).
    #[inline(never)]
    pub(in crate::kernel) fn debug_print<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        console: u64,
        address: u64,
        len: usize,
    ) -> ErrorCode {
        if let Err(code) = self.thread_cap(current, console, CapType::DebugConsole, Rights::WRITE) {
            return code;
        }
        let mut text = [0u8; DEBUG_PRINT_MAX];
        let len = len.min(DEBUG_PRINT_MAX);
        match self.objects[current].judged.buffer_for(address, len as u64) {
            Some(Ok(judged)) if judged.len() == len => text[..len].copy_from_slice(judged),
            Some(_) => return ErrorCode::InvalidAddress,
            None => {
                let Some(space) = self.thread_space(current) else {
                    return ErrorCode::InvalidAddress;
                };
                if space
                    .copy_from_user(platform, address, &mut text[..len])
                    .is_err()
                {
                    return ErrorCode::InvalidAddress;
                }
            }
        }
        self.print_user_text(platform, current, &text[..len]);
        ErrorCode::Ok
    }

    /// Prints a thread's text, each line prefixed with the thread's name
    /// and number, except the root task's: its lines are the system's own
    /// (its driver's TAP, the demo's steps) and go out as they are. Lines
    /// of different threads never share a console line.
    #[inline(never)]
    pub(in crate::kernel) fn print_user_text<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        text: &[u8],
    ) {
        if self.open_line.is_some_and(|writer| writer != id) {
            self.end_user_lines(platform);
        }
        let tagged = self.root != Some(id);
        let thread = &self.objects[id];
        let mut console = Console(platform);
        let mut line_open = self.open_line == Some(id);
        for &byte in text {
            if !line_open {
                if tagged {
                    let _ = write!(console, "[{}#{}] ", thread.name.as_str(), thread.number);
                }
                line_open = true;
            }
            let shown = match byte {
                b'\n' | b'\t' | 0x20..=0x7e => byte as char,
                _ => '?',
            };
            let _ = console.write_char(shown);
            if byte == b'\n' {
                line_open = false;
            }
        }
        self.open_line = line_open.then_some(id);
    }

    /// Ends any line a thread left open, so the kernel's next line starts
    /// at the beginning.
    pub(in crate::kernel) fn end_user_lines<P: Platform>(&mut self, platform: &mut P) {
        if self.open_line.take().is_some() {
            platform.console_write("\n");
        }
    }
}
