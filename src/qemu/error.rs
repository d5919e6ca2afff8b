//! Why QEMU could not be started or waited for.

use std::fmt;
use std::path::PathBuf;

use super::binary::{QemuVersion, QEMU_ENV, QEMU_PROGRAM};
use super::process::ProcessEnd;
use crate::machine::Machine;

/// A failure to find, start or wait for QEMU (not a guest failure: those
/// are judged from the output, see [`crate::guest_output`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QemuError {
    /// No `qemu-system-aarch64` on `PATH` and no `$PORTCULLIS_QEMU`.
    NotFound,
    /// The executable exists but could not be started.
    CannotStart {
        /// The executable.
        path: PathBuf,
        /// What the operating system said.
        reason: String,
    },
    /// `--version` printed something the runner cannot read.
    UnreadableVersion {
        /// The executable.
        path: PathBuf,
        /// What it printed.
        output: String,
    },
    /// This QEMU predates the machine model.
    TooOld {
        /// The machine asked for.
        machine: Machine,
        /// The version found.
        found: QemuVersion,
        /// The oldest major version that has the machine.
        needed_major: u32,
    },
    /// The probe found that QEMU cannot start the machine because a
    /// firmware file one of its devices needs is not installed.
    MissingFile {
        /// The machine probed.
        machine: Machine,
        /// The file QEMU looked for (its name, without a folder).
        file: String,
        /// The Debian package that installs it, if known.
        package: Option<&'static str>,
        /// The probe's QEMU command.
        command: String,
    },
    /// The probe could not run the machine for another reason.
    ProbeFailed {
        /// The machine probed.
        machine: Machine,
        /// How QEMU ended.
        end: ProcessEnd,
        /// What QEMU printed on stderr.
        stderr: String,
        /// The probe's QEMU command.
        command: String,
    },
    /// Waiting for QEMU or killing it failed.
    Wait {
        /// What the operating system said.
        reason: String,
    },
}

impl fmt::Display for QemuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QemuError::NotFound => write!(
                f,
                "{QEMU_PROGRAM} is not installed (or not on PATH; ${QEMU_ENV} may name it): run ./qemu-run.sh, which installs it, or `apt-get install qemu-system-arm`"
            ),
            QemuError::CannotStart { path, reason } => {
                write!(f, "cannot start {}: {reason}", path.display())
            }
            QemuError::UnreadableVersion { path, output } => write!(
                f,
                "cannot read the version of {} from `--version`: {output:?}",
                path.display()
            ),
            QemuError::TooOld {
                machine,
                found,
                needed_major,
            } => write!(
                f,
                "QEMU {found} has no `{machine}` machine: version {needed_major} or newer is needed (on Debian bookworm: `apt-get install -t bookworm-backports qemu-system-arm`; ./qemu-run.sh does it)"
            ),
            QemuError::MissingFile {
                machine,
                file,
                package,
                command,
            } => {
                write!(f, "QEMU cannot start the {machine} machine: it needs the file {file}, which is not installed")?;
                match package {
                    Some(package) => write!(
                        f,
                        "; Debian's package {package} has it (apt-get install {package})"
                    )?,
                    None => write!(
                        f,
                        "; `apt-file search {file}` names the Debian package that has it"
                    )?,
                }
                write!(f, ". The command was: {command}")
            }
            QemuError::ProbeFailed {
                machine,
                end,
                stderr,
                command,
            } => {
                let how = match end {
                    ProcessEnd::Exited(code) => format!("exited with status {code}"),
                    ProcessEnd::Signalled(signal) => format!("was ended by signal {signal}"),
                    ProcessEnd::TimedOut(limit) => {
                        format!("did not finish in {} s", limit.as_secs())
                    }
                };
                write!(
                    f,
                    "QEMU cannot start the {machine} machine: a guest that only exits {how}"
                )?;
                if !stderr.is_empty() {
                    write!(f, "; QEMU said: {stderr}")?;
                }
                write!(f, ". The command was: {command}")
            }
            QemuError::Wait { reason } => write!(f, "waiting for QEMU failed: {reason}"),
        }
    }
}

impl std::error::Error for QemuError {}
