//! One profiled boot: QEMU logs every executed instruction to its stderr,
//! which is folded into per-PC counts as it streams (a boot logs hundreds
//! of megabytes; nothing is written to disk).

use std::io::{BufReader, Read};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use super::exec_log::PcCounts;
use crate::qemu::{ProcessEnd, ProcessOutput, QemuError};
use crate::session::PreparedRun;

/// The QEMU options that make the log one line per executed instruction:
/// one instruction per translation block, no chaining between blocks (so
/// every block entry is logged), logged to stderr.
pub const PROFILE_QEMU_ARGS: [&str; 6] = [
    "-accel",
    "tcg,one-insn-per-tb=on",
    "-d",
    "exec,nochain",
    "-D",
    "/dev/stderr",
];

/// A finished profiled boot.
#[derive(Clone, Debug)]
pub struct ProfiledRun {
    /// How QEMU ended and what the guest printed (stderr holds QEMU's
    /// last non-log lines).
    pub output: ProcessOutput,
    /// Executed instructions per PC.
    pub pcs: PcCounts,
}

/// Boots `prepared` with [`PROFILE_QEMU_ARGS`] and counts what it runs.
pub fn run_profiled(
    prepared: &PreparedRun,
    timeout: Option<Duration>,
) -> Result<ProfiledRun, QemuError> {
    let mut command = Command::new(&prepared.qemu.path);
    command
        .args(prepared.config.qemu_args())
        .args(PROFILE_QEMU_ARGS)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().map_err(|error| QemuError::CannotStart {
        path: prepared.qemu.path.clone(),
        reason: error.to_string(),
    })?;
    let uart = child.stdout.take().map(|mut pipe| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            // A read error only shortens the captured output.
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    });
    let log = child.stderr.take().map(|pipe| {
        thread::spawn(move || {
            PcCounts::read(BufReader::with_capacity(1 << 20, pipe)).unwrap_or_default()
        })
    });
    let wait_error = |error: std::io::Error| QemuError::Wait {
        reason: error.to_string(),
    };
    let status = match timeout {
        Some(limit) => child.wait_timeout(limit).map_err(wait_error)?,
        None => Some(child.wait().map_err(wait_error)?),
    };
    let end = match status {
        Some(status) => match status.code() {
            Some(code) => ProcessEnd::Exited(code),
            None => {
                use std::os::unix::process::ExitStatusExt;
                ProcessEnd::Signalled(status.signal().unwrap_or(0))
            }
        },
        None => {
            child.kill().map_err(wait_error)?;
            child.wait().map_err(wait_error)?;
            ProcessEnd::TimedOut(timeout.unwrap_or_default())
        }
    };
    let stdout = uart
        .and_then(|reader| reader.join().ok())
        .unwrap_or_default();
    let pcs = log
        .and_then(|reader| reader.join().ok())
        .unwrap_or_default();
    Ok(ProfiledRun {
        output: ProcessOutput {
            end,
            stdout,
            stderr: pcs.other_lines.join("\n"),
            elapsed: started.elapsed(),
        },
        pcs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qemu::command_line::test_support::{every_config, network_requests};

    #[test]
    fn profiled_command_lines_ask_for_no_network_device() {
        for config in every_config() {
            let args: Vec<String> = config
                .qemu_args()
                .iter()
                .map(|word| word.to_string_lossy().into_owned())
                .chain(PROFILE_QEMU_ARGS.iter().map(|word| word.to_string()))
                .collect();
            assert_eq!(network_requests(&args), Vec::<String>::new(), "{args:?}");
        }
    }
}
