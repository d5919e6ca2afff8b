//! `print!`-style output through the debug-print syscall.

use core::fmt;

/// Writes formatted text to the kernel console, in syscall-sized pieces.
pub struct Console;

impl fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for chunk in s.as_bytes().chunks(abi::DEBUG_PRINT_MAX) {
            crate::syscall::debug_print(chunk).map_err(|_| fmt::Error)?;
        }
        Ok(())
    }
}

/// Collects formatted text and prints it in as few syscalls as it fits
/// (one per `DEBUG_PRINT_MAX` bytes), so that a line another thread
/// prints cannot land inside one of ours: `format_args!` hands its pieces
/// over one by one, and a syscall per piece would let them interleave.
pub struct LineBuffer {
    bytes: [u8; abi::DEBUG_PRINT_MAX],
    len: usize,
}

impl Default for LineBuffer {
    fn default() -> Self {
        LineBuffer {
            bytes: [0; abi::DEBUG_PRINT_MAX],
            len: 0,
        }
    }
}

impl LineBuffer {
    /// Prints what is buffered.
    pub fn flush(&mut self) -> fmt::Result {
        let len = core::mem::take(&mut self.len);
        if len > 0 {
            crate::syscall::debug_print(&self.bytes[..len]).map_err(|_| fmt::Error)?;
        }
        Ok(())
    }

    /// What is buffered.
    pub fn pending(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl fmt::Write for LineBuffer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &byte in s.as_bytes() {
            if self.len == self.bytes.len() {
                self.flush()?;
            }
            self.bytes[self.len] = byte;
            self.len += 1;
        }
        Ok(())
    }
}

/// Prints to the kernel console, one syscall per line (of up to
/// `abi::DEBUG_PRINT_MAX` bytes).
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let mut line = $crate::console::LineBuffer::default();
        let _ = writeln!(line, $($arg)*);
        let _ = line.flush();
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn a_line_is_collected_whole_and_long_text_in_syscall_sized_pieces() {
        let mut line = LineBuffer::default();
        write!(line, "serving on slot {}", 2).unwrap();
        assert_eq!(line.pending(), b"serving on slot 2");
        // On the host the syscall is a stand-in that fails: a full buffer
        // reports the failure and starts again empty.
        let long = "x".repeat(abi::DEBUG_PRINT_MAX + 10);
        assert!(line.write_str(&long).is_err());
        assert!(line.pending().is_empty(), "the failed piece is dropped");
    }
}
