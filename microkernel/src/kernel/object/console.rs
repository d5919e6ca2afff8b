//! The debug console's output: user text printed as tagged lines, and
//! binary frames written whole (its input is `console_input.rs`).

use crate::kernel::Kernel;
use crate::platform::{Console, Platform};
use crate::syscall::console_frame_arguments;
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::{ErrorCode, DEBUG_PRINT_MAX};
use core::fmt::Write;

/// Backspace, which a console holder with the read right may print.
const BACKSPACE: u8 = 0x08;

impl Kernel {
    /// `DebugPrint`: `len` bytes (at most `DEBUG_PRINT_MAX`) from `address`
    /// through the console capability `console` (write right). Out of
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
        let tagged = match self.thread_cap(current, console, CapType::DebugConsole, Rights::WRITE) {
            Ok(capability) => !capability.rights().read(),
            Err(code) => return code,
        };
        let mut text = [0u8; DEBUG_PRINT_MAX];
        let len = len.min(DEBUG_PRINT_MAX);
        if let Err(code) = self.console_bytes(platform, current, address, &mut text[..len]) {
            return code;
        }
        self.print_user_text(platform, current, &text[..len], tagged);
        ErrorCode::Ok
    }

    /// The bytes a console syscall of `current` prints from `address`:
    /// the text as judged, if a filter or policy server judged it (all of
    /// it: a print is at most 256 bytes, the copy 512), else read now.
    #[inline(always)]
    fn console_bytes<P: Platform>(
        &self,
        platform: &P,
        current: ThreadId,
        address: u64,
        out: &mut [u8],
    ) -> Result<(), ErrorCode> {
        let len = out.len();
        match self.objects[current].judged.buffer_for(address, len as u64) {
            Some(Ok(judged)) if judged.len() == len => {
                out.copy_from_slice(judged);
                Ok(())
            }
            Some(_) => Err(ErrorCode::InvalidAddress),
            None => self
                .thread_space(current)
                .ok_or(ErrorCode::InvalidAddress)?
                .copy_from_user(platform, address, out)
                .map_err(|_| ErrorCode::InvalidAddress),
        }
    }

    /// `ConsoleWriteFrame` by `current` (decode checked the registers'
    /// form): its bytes, none of them 0, go out as `0x00 bytes 0x00`
    /// after any line a thread left open, so a frame is never split by
    /// other text (the kernel lock is held while it is written).
    ///
    /// Through a console capability with the read right as well as the
    /// write right, the terminal owner's (as for untagged text): a frame
    /// is raw bytes, neither tagged nor made printable, so one from any
    /// other writer could carry lines that read as the kernel's or the
    /// root's (a TAP summary, `system: ...`) or escape sequences to the
    /// terminal, which a tagged print never can.
    #[inline(never)]
    pub(in crate::kernel) fn console_write_frame<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> ErrorCode {
        let Ok((console, address, len)) = console_frame_arguments(&self.objects[current].context)
        else {
            return ErrorCode::InvalidArgument;
        };
        if let Err(code) =
            self.thread_cap(current, console, CapType::DebugConsole, Rights::READ_WRITE)
        {
            return code;
        }
        let mut frame = [0u8; DEBUG_PRINT_MAX];
        let frame = &mut frame[..len];
        if let Err(code) = self.console_bytes(platform, current, address, frame) {
            return code;
        }
        if frame.contains(&abi::export::FRAME_DELIMITER) {
            return ErrorCode::InvalidArgument;
        }
        self.end_user_lines(platform);
        platform.console_write_bytes(&[abi::export::FRAME_DELIMITER]);
        platform.console_write_bytes(frame);
        platform.console_write_bytes(&[abi::export::FRAME_DELIMITER]);
        ErrorCode::Ok
    }

    /// Prints a thread's text, each line prefixed with the thread's name
    /// and number if `tagged`. A print through a console capability with
    /// the read right is not: its holder owns the console's input too
    /// (the root task, whose lines are the system's own, or a shell
    /// talking to the person at the terminal). Lines of different threads
    /// never share a console line.
    #[inline(never)]
    pub(in crate::kernel) fn print_user_text<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        text: &[u8],
        tagged: bool,
    ) {
        if self.open_line.is_some_and(|writer| writer != id) {
            self.end_user_lines(platform);
        }
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
                // Backspace, for a shell's line editing: only untagged, so
                // a tagged line cannot erase its own tag.
                BACKSPACE if !tagged => byte as char,
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
