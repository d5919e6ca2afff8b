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

/// Prints to the kernel console.
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let _ = writeln!($crate::console::Console, $($arg)*);
    }};
}
