//! Finding QEMU, building its command line and running it.

mod binary;
pub(crate) mod command_line;
mod error;
mod probe;
mod process;

pub use binary::{QemuBinary, QemuVersion, QEMU_ENV, QEMU_PROGRAM};
pub use command_line::{shell_command, KernelFormat, LaunchConfig, GDB_PORT, NO_NETWORK};
pub use error::QemuError;
pub use probe::{probe, probe_once, PROBE_TIMEOUT};
pub use process::{run_to_completion, Echo, ProcessEnd, ProcessOutput};
