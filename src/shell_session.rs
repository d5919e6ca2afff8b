//! The shell system (`systems/shell.toml`, docs/shell.md) run from the
//! host: interactively on this terminal, or driven by a script through a
//! pipe, the way `cargo test` checks each command's output.
//!
//! Interactive: QEMU's serial line is this terminal
//! (`LaunchConfig::interactive_qemu_args`: Ctrl-C goes to the guest,
//! Ctrl-A x quits QEMU). Scripted: the guest's UART is read as raw bytes
//! (export frames are binary) and each line of input is sent only once
//! the shell has printed its prompt, so a command's output is what came
//! between its line and the next prompt.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::artifacts;
use crate::qemu::{ProcessEnd, QemuError};
use crate::session::{PreparedRun, RunError};

/// The shell's prompt (`shell::PROMPT`).
pub const PROMPT: &str = "portcullis> ";
/// What a script line says to send Ctrl-C.
pub const CTRL_C_LINE: &str = "^C";
/// How long one command may take before its prompt comes back.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The shell system's description.
pub fn description() -> PathBuf {
    artifacts::workspace_root()
        .join("systems")
        .join("shell.toml")
}

/// Runs the prepared shell system on this terminal until QEMU exits.
pub fn run_interactive(prepared: &PreparedRun) -> Result<ProcessEnd, RunError> {
    let mut command = Command::new(&prepared.qemu.path);
    command.args(prepared.config.interactive_qemu_args());
    let status = command
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|error| QemuError::CannotStart {
            path: prepared.qemu.path.clone(),
            reason: error.to_string(),
        })?;
    Ok(match status.code() {
        Some(code) => ProcessEnd::Exited(code),
        None => ProcessEnd::Exited(-1),
    })
}

/// What the guest printed so far, and whether QEMU has closed it.
#[derive(Default)]
struct Output {
    bytes: Vec<u8>,
    closed: bool,
}

/// A shell system booted with its console on pipes.
pub struct ShellSession {
    child: Child,
    stdin: Option<ChildStdin>,
    output: Arc<(Mutex<Output>, Condvar)>,
    /// Where the next command's output starts.
    mark: usize,
}

/// Why a session step failed: what was awaited, and the output so far.
#[derive(Debug)]
pub struct SessionError {
    /// What was awaited or sent.
    pub what: String,
    /// Everything the guest printed.
    pub output: String,
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; the guest printed:\n{}", self.what, self.output)
    }
}

impl ShellSession {
    /// Boots the prepared system with its console on pipes and waits for
    /// the first prompt.
    pub fn start(prepared: &PreparedRun) -> Result<ShellSession, RunError> {
        let mut command = Command::new(&prepared.qemu.path);
        command.args(prepared.config.qemu_args());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| QemuError::CannotStart {
                path: prepared.qemu.path.clone(),
                reason: error.to_string(),
            })?;
        let output = Arc::new((Mutex::new(Output::default()), Condvar::new()));
        if let Some(mut stdout) = child.stdout.take() {
            let output = Arc::clone(&output);
            thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                loop {
                    let read = stdout.read(&mut chunk);
                    let (lock, ready) = &*output;
                    let mut seen = lock.lock().unwrap_or_else(|p| p.into_inner());
                    match read {
                        Ok(n) if n > 0 => seen.bytes.extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        _ => {
                            seen.closed = true;
                            ready.notify_all();
                            return;
                        }
                    }
                    ready.notify_all();
                }
            });
        }
        let stdin = child.stdin.take();
        let mut session = ShellSession {
            child,
            stdin,
            output,
            mark: 0,
        };
        if let Err(error) = session.wait_for(PROMPT.as_bytes(), COMMAND_TIMEOUT) {
            session.kill();
            return Err(RunError::Session(error.to_string()));
        }
        Ok(session)
    }

    /// Everything the guest printed so far.
    pub fn bytes(&self) -> Vec<u8> {
        let (lock, _) = &*self.output;
        lock.lock().unwrap_or_else(|p| p.into_inner()).bytes.clone()
    }

    /// The output so far as text (frames shown lossily).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes()).into_owned()
    }

    /// Waits until `needle` appears after the mark; moves the mark past
    /// it and returns what came before it.
    pub fn wait_for(&mut self, needle: &[u8], timeout: Duration) -> Result<Vec<u8>, SessionError> {
        let deadline = Instant::now() + timeout;
        let (lock, ready) = &*self.output;
        let mut seen = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let after = &seen.bytes[self.mark.min(seen.bytes.len())..];
            if let Some(at) = find(after, needle) {
                let before = after[..at].to_vec();
                self.mark += at + needle.len();
                return Ok(before);
            }
            let now = Instant::now();
            if seen.closed || now >= deadline {
                let what = format!(
                    "waited for {:?}: {}",
                    String::from_utf8_lossy(needle),
                    if seen.closed {
                        "QEMU ended"
                    } else {
                        "timed out"
                    }
                );
                return Err(SessionError {
                    what,
                    output: String::from_utf8_lossy(&seen.bytes).into_owned(),
                });
            }
            seen = ready
                .wait_timeout(seen, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Types `bytes`.
    pub fn send(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        let written = self
            .stdin
            .as_mut()
            .map(|stdin| stdin.write_all(bytes).and_then(|()| stdin.flush()));
        match written {
            Some(Ok(())) => Ok(()),
            _ => Err(SessionError {
                what: format!("could not type {:?}", String::from_utf8_lossy(bytes)),
                output: self.text(),
            }),
        }
    }

    /// Types `line` and Enter, and returns its output: what the shell
    /// printed after echoing the line, up to its next prompt.
    pub fn command(&mut self, line: &str) -> Result<String, SessionError> {
        self.send(format!("{line}\r").as_bytes())?;
        let output = self.wait_for(PROMPT.as_bytes(), COMMAND_TIMEOUT)?;
        let text = String::from_utf8_lossy(&output).replace('\r', "");
        // The echo of the line comes first.
        Ok(match text.split_once('\n') {
            Some((_, rest)) => rest.to_string(),
            None => String::new(),
        })
    }

    /// Types `line` and Enter for a command that runs until Ctrl-C
    /// (`trace TASK on`, `audit tail`), and waits for `needle` in its
    /// output; returns the output up to it.
    pub fn start_until(&mut self, line: &str, needle: &str) -> Result<String, SessionError> {
        self.send(format!("{line}\r").as_bytes())?;
        let output = self.wait_for(needle.as_bytes(), COMMAND_TIMEOUT)?;
        Ok(String::from_utf8_lossy(&output).replace('\r', ""))
    }

    /// Sends Ctrl-C and waits for the prompt; returns what came before it.
    pub fn interrupt(&mut self) -> Result<Vec<u8>, SessionError> {
        self.send(&[0x03])?;
        self.wait_for(PROMPT.as_bytes(), COMMAND_TIMEOUT)
    }

    /// Types `line` (an `exit`) and waits for QEMU to end: its exit
    /// status (`None` if it had to be killed) and everything printed.
    pub fn exit(mut self, line: &str, timeout: Duration) -> (Option<i32>, Vec<u8>) {
        let _ = self.send(format!("{line}\r").as_bytes());
        let deadline = Instant::now() + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.code(),
                _ if Instant::now() >= deadline => {
                    self.kill();
                    break None;
                }
                _ => thread::sleep(Duration::from_millis(50)),
            }
        };
        self.wait_closed(Duration::from_secs(5));
        (status, self.bytes())
    }

    /// Waits (at most `timeout`) until QEMU's output is closed and read.
    fn wait_closed(&self, timeout: Duration) {
        let (lock, ready) = &*self.output;
        let mut seen = lock.lock().unwrap_or_else(|p| p.into_inner());
        let deadline = Instant::now() + timeout;
        while !seen.closed {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            seen = ready
                .wait_timeout(seen, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Ends QEMU now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ShellSession {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Runs `script` (lines to type; `^C` sends Ctrl-C; `# ...` and blank
/// lines are skipped; `exit [STATUS]`, or the script's end, types `exit`
/// and waits for the system to end) and writes the session's text to
/// `transcript`; returns the raw bytes the guest printed and QEMU's exit
/// status (`None`: it did not end and was killed).
pub fn run_script(
    prepared: &PreparedRun,
    script: &str,
    transcript: &mut dyn Write,
) -> Result<(Vec<u8>, Option<i32>), RunError> {
    let mut session = ShellSession::start(prepared)?;
    let fail = |error: SessionError| RunError::Session(error.to_string());
    let mut exit = "exit".to_string();
    for line in script.lines().map(str::trim_end) {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line == "exit" || line.starts_with("exit ") {
            exit = line.to_string();
            break;
        }
        if line == CTRL_C_LINE {
            session.interrupt().map_err(fail)?;
            continue;
        }
        // A line that starts something running waits for its first
        // output line, not for a prompt.
        if line.starts_with("trace ") && line.ends_with(" on") || line == "audit tail" {
            session.start_until(line, "\n").map_err(fail)?;
            // Give it a moment to show something before the next ^C.
            thread::sleep(Duration::from_secs(2));
            continue;
        }
        session.command(line).map_err(fail)?;
    }
    let (status, bytes) = session.exit(&exit, COMMAND_TIMEOUT);
    let _ = transcript.write_all(String::from_utf8_lossy(&bytes).replace('\r', "").as_bytes());
    Ok((bytes, status))
}
