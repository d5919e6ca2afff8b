//! Finding QEMU, building its command line and running it.

mod binary;
mod command_line;
mod error;
mod process;

pub use binary::{QemuBinary, QemuVersion, QEMU_ENV, QEMU_PROGRAM};
pub use command_line::{shell_command, KernelFormat, LaunchConfig, GDB_PORT};
pub use error::QemuError;
pub use process::{run_to_completion, Echo, ProcessEnd, ProcessOutput};
