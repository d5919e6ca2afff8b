//! Running QEMU to completion, with a deadline, capturing what it prints.
//!
//! The guest's UART is QEMU's stdout (`-serial stdio`); QEMU's own
//! complaints go to stderr. Both are captured in full (the verdict needs
//! the UART text, and a failure report shows both) and, for interactive
//! runs, echoed as they arrive. Stdin is closed: nothing types into the
//! guest, and QEMU then leaves the terminal's mode alone.

use std::io::{self, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use super::QemuError;

/// Whether output is shown while it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Echo {
    /// Copy the guest's output to our stdout (and QEMU's stderr to ours) live.
    Live,
    /// Copy both to our stderr live, keeping our stdout for results that
    /// scripts read (the benchmark table and JSON lines).
    LiveOnStderr,
    /// Only capture; the caller shows the output if something failed.
    Quiet,
}

impl Echo {
    /// Where the guest's UART output is copied to, if anywhere.
    fn guest_sink(self) -> Option<Box<dyn Write + Send>> {
        match self {
            Echo::Live => Some(Box::new(io::stdout())),
            Echo::LiveOnStderr => Some(Box::new(io::stderr())),
            Echo::Quiet => None,
        }
    }

    /// Where QEMU's own messages are copied to, if anywhere.
    fn qemu_sink(self) -> Option<Box<dyn Write + Send>> {
        match self {
            Echo::Live | Echo::LiveOnStderr => Some(Box::new(io::stderr())),
            Echo::Quiet => None,
        }
    }
}

/// How the QEMU process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessEnd {
    /// It exited with this status (with semihosting: the guest's status).
    Exited(i32),
    /// A signal ended it (someone else killed it, or it crashed).
    Signalled(i32),
    /// It was still running at the deadline and was killed.
    TimedOut(Duration),
}

/// A finished QEMU process and everything it printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessOutput {
    /// How it ended.
    pub end: ProcessEnd,
    /// Standard output: the guest's UART.
    pub stdout: String,
    /// Standard error: QEMU's own messages.
    pub stderr: String,
    /// Wall-clock time from start to end.
    pub elapsed: Duration,
}

/// Runs `command` until it exits or `timeout` passes (then kills it).
///
/// `None` as the timeout waits forever (for gdb sessions).
pub fn run_to_completion(
    mut command: Command,
    timeout: Option<Duration>,
    echo: Echo,
) -> Result<ProcessOutput, QemuError> {
    let program = std::path::PathBuf::from(command.get_program());
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| QemuError::CannotStart {
            path: program,
            reason: error.to_string(),
        })?;
    let stdout = child
        .stdout
        .take()
        .map(|pipe| collect(pipe, echo.guest_sink()));
    let stderr = child
        .stderr
        .take()
        .map(|pipe| collect(pipe, echo.qemu_sink()));

    let end = wait_with_deadline(&mut child, timeout);
    // The pipes close when the process is gone, so the readers finish.
    let stdout = joined(stdout);
    let stderr = joined(stderr);
    Ok(ProcessOutput {
        end: end?,
        stdout,
        stderr,
        elapsed: started.elapsed(),
    })
}

fn wait_with_deadline(
    child: &mut Child,
    timeout: Option<Duration>,
) -> Result<ProcessEnd, QemuError> {
    let waited = match timeout {
        Some(limit) => child.wait_timeout(limit),
        None => child.wait().map(Some),
    }
    .map_err(wait_error)?;
    match waited {
        Some(status) => Ok(ended(status)),
        None => {
            child.kill().map_err(wait_error)?;
            child.wait().map_err(wait_error)?;
            Ok(ProcessEnd::TimedOut(timeout.unwrap_or_default()))
        }
    }
}

fn ended(status: ExitStatus) -> ProcessEnd {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ProcessEnd::Exited(code),
        (None, Some(signal)) => ProcessEnd::Signalled(signal),
        // Neither a code nor a signal cannot happen on Unix; report it as
        // a failure rather than a success.
        (None, None) => ProcessEnd::Exited(-1),
    }
}

fn wait_error(error: io::Error) -> QemuError {
    QemuError::Wait {
        reason: error.to_string(),
    }
}

/// Reads `pipe` to its end on a thread, copying each chunk to `echo`.
fn collect<R, W>(mut pipe: R, mut echo: Option<W>) -> JoinHandle<Vec<u8>>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    thread::spawn(move || {
        let mut captured = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    captured.extend_from_slice(&chunk[..n]);
                    if let Some(out) = echo.as_mut() {
                        // A closed terminal must not stop the capture.
                        if out
                            .write_all(&chunk[..n])
                            .and_then(|()| out.flush())
                            .is_err()
                        {
                            echo = None;
                        }
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        captured
    })
}

fn joined(reader: Option<JoinHandle<Vec<u8>>>) -> String {
    let bytes = reader
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn captures_both_streams_and_the_exit_code() {
        let output = run_to_completion(
            shell("echo guest line; echo qemu complaint >&2; exit 3"),
            Some(Duration::from_secs(20)),
            Echo::Quiet,
        )
        .expect("sh runs");
        assert_eq!(output.end, ProcessEnd::Exited(3));
        assert_eq!(output.stdout, "guest line\n");
        assert_eq!(output.stderr, "qemu complaint\n");
    }

    #[test]
    fn kills_a_process_that_outlives_its_timeout() {
        let limit = Duration::from_millis(300);
        // exec: the shell becomes sleep, so killing it closes the pipes.
        let output = run_to_completion(
            shell("echo started; exec sleep 30"),
            Some(limit),
            Echo::Quiet,
        )
        .expect("sh runs");
        assert_eq!(output.end, ProcessEnd::TimedOut(limit));
        assert_eq!(output.stdout, "started\n");
        assert!(output.elapsed < Duration::from_secs(10));
    }

    #[test]
    fn reports_a_missing_program() {
        let result = run_to_completion(
            Command::new("/nonexistent/qemu-system-aarch64"),
            Some(Duration::from_secs(1)),
            Echo::Quiet,
        );
        assert!(matches!(result, Err(QemuError::CannotStart { .. })));
    }
}
