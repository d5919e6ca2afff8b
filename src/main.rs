//! `portcullis run|build-system|new|decode|bench|profile|probe ...`: builds
//! systems, boots the kernel in QEMU and exits with the guest's status. See
//! `portcullis --help`.

use std::process::ExitCode;

use portcullis::bench::run_bench_command;
use portcullis::cli::{self, CliCommand, HELP};
use portcullis::profile::run_profile_command;
use portcullis::qemu::Echo;
use portcullis::session::{self, RunError, RunRequest};
use portcullis::Machine;

/// Exit status when QEMU or the kernel image cannot be found or started.
const STATUS_CANNOT_RUN: u8 = 125;
/// Exit status for a command line the runner does not understand (EX_USAGE).
const STATUS_USAGE: u8 = 64;
/// Exit status for a system description with mistakes (EX_DATAERR).
const STATUS_BAD_SYSTEM: u8 = 65;
/// Exit status for a log `decode` cannot read (EX_NOINPUT).
const STATUS_NO_INPUT: u8 = 66;
/// Exit status for an output file `decode` cannot write (EX_CANTCREAT).
const STATUS_CANNOT_WRITE: u8 = 73;

fn main() -> ExitCode {
    match cli::parse(std::env::args().skip(1)) {
        Ok(CliCommand::Help) => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Ok(CliCommand::Run(request)) => run(&request),
        Ok(CliCommand::Bench(options)) => ExitCode::from(run_bench_command(&options)),
        Ok(CliCommand::Profile(options)) => ExitCode::from(run_profile_command(&options)),
        Ok(CliCommand::Probe(machines)) => probe(&machines),
        Ok(CliCommand::BuildSystem { description, out }) => build_system(&description, out),
        Ok(CliCommand::New(directory)) => new(&directory),
        Ok(CliCommand::Decode { log, format, out }) => decode(&log, format, out.as_deref()),
        Ok(CliCommand::Shell {
            request,
            script,
            capture,
        }) => shell(&request, script.as_deref(), capture.as_deref()),
        Err(error) => {
            eprintln!("portcullis: {error}\n\n{HELP}");
            ExitCode::from(STATUS_USAGE)
        }
    }
}

fn build_system(description: &std::path::Path, out: Option<std::path::PathBuf>) -> ExitCode {
    match session::build_system(description, Echo::Live) {
        Ok((image, _)) => {
            if let Some(out) = out {
                if let Err(e) = std::fs::copy(&image, &out) {
                    eprintln!("portcullis: cannot write {}: {e}", out.display());
                    return ExitCode::from(STATUS_CANNOT_RUN);
                }
                println!("{}", out.display());
            } else {
                println!("{}", image.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("portcullis: {error}");
            ExitCode::from(STATUS_BAD_SYSTEM)
        }
    }
}

/// `shell`: the shell's system on this terminal, or driven by a script.
fn shell(
    request: &RunRequest,
    script: Option<&std::path::Path>,
    capture: Option<&std::path::Path>,
) -> ExitCode {
    use portcullis::qemu::ProcessEnd;
    use portcullis::shell_session;
    let prepared = match session::prepare(request) {
        Ok(prepared) => prepared,
        Err(error) => return cannot_run(&error),
    };
    let Some(script) = script else {
        eprintln!(
            "portcullis: the shell's prompt follows; `exit` ends the system, Ctrl-A x quits QEMU"
        );
        return match shell_session::run_interactive(&prepared) {
            Ok(ProcessEnd::Exited(code)) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Ok(_) => ExitCode::from(1),
            Err(error) => cannot_run(&error),
        };
    };
    let text = match std::fs::read_to_string(script) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("portcullis: cannot read {}: {e}", script.display());
            return ExitCode::from(STATUS_NO_INPUT);
        }
    };
    let mut stdout = std::io::stdout().lock();
    match shell_session::run_script(&prepared, &text, &mut stdout) {
        Ok((bytes, status)) => {
            if let Some(path) = capture {
                if let Err(e) = std::fs::write(path, &bytes) {
                    eprintln!("portcullis: cannot write {}: {e}", path.display());
                    return ExitCode::from(STATUS_CANNOT_WRITE);
                }
            }
            match status {
                Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
                None => {
                    eprintln!("portcullis: the system did not end after `exit`; QEMU was killed");
                    ExitCode::from(1)
                }
            }
        }
        Err(error) => cannot_run(&error),
    }
}

/// Says why a run could not happen: the status for it.
fn cannot_run(error: &RunError) -> ExitCode {
    eprintln!("portcullis: {error}");
    match error {
        RunError::System(_) => ExitCode::from(STATUS_BAD_SYSTEM),
        _ => ExitCode::from(STATUS_CANNOT_RUN),
    }
}

fn decode(
    log: &std::path::Path,
    format: portcullis::decode::Format,
    out: Option<&std::path::Path>,
) -> ExitCode {
    let bytes = match std::fs::read(log) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("portcullis: cannot read {}: {e}", log.display());
            return ExitCode::from(STATUS_NO_INPUT);
        }
    };
    let capture = portcullis::decode::Capture::read(&bytes);
    let output = portcullis::decode::render(&capture, format);
    let written = match out {
        Some(path) => std::fs::write(path, output),
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), output.as_bytes()),
    };
    if let Err(e) = written {
        let place = out.map_or("stdout".to_string(), |path| path.display().to_string());
        eprintln!("portcullis: cannot write {place}: {e}");
        return ExitCode::from(STATUS_CANNOT_WRITE);
    }
    let summary = capture.summary();
    eprintln!(
        "portcullis: {}: {} text lines, {} frames, {} malformed, {} cut off",
        log.display(),
        summary.lines,
        summary.frames,
        summary.malformed,
        summary.cut_off
    );
    ExitCode::SUCCESS
}

fn new(directory: &std::path::Path) -> ExitCode {
    match portcullis::new::create(directory, &portcullis::artifacts::workspace_root()) {
        Ok(files) => {
            for file in &files {
                eprintln!("portcullis: wrote {}", file.display());
            }
            eprintln!(
                "portcullis: boot it with `./qemu-run.sh run {}/system.toml`",
                directory.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("portcullis: {error}");
            ExitCode::from(STATUS_USAGE)
        }
    }
}

fn probe(machines: &[Machine]) -> ExitCode {
    match session::probe_machines(machines) {
        Ok(qemu) => {
            let names: Vec<&str> = machines.iter().map(|machine| machine.name()).collect();
            eprintln!(
                "portcullis: QEMU {} ({}) starts {} with the runner's command line",
                qemu.version,
                qemu.path.display(),
                names.join(" and ")
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("portcullis: {error}");
            ExitCode::from(STATUS_CANNOT_RUN)
        }
    }
}

fn run(request: &RunRequest) -> ExitCode {
    let prepared = match session::prepare(request) {
        Ok(prepared) => prepared,
        Err(error @ RunError::System(_)) => {
            eprintln!("portcullis: {error}");
            return ExitCode::from(STATUS_BAD_SYSTEM);
        }
        Err(error) => {
            eprintln!("portcullis: {error}");
            return ExitCode::from(STATUS_CANNOT_RUN);
        }
    };
    for warning in &prepared.warnings {
        eprintln!("portcullis: warning: {warning}");
    }
    eprintln!(
        "portcullis: QEMU {} on {}: {}",
        prepared.qemu.version,
        request.machine,
        prepared.command_line()
    );
    if request.gdb {
        eprintln!("portcullis: {}", prepared.gdb_instructions());
    }
    match prepared.run() {
        Ok(outcome) => {
            if !outcome.guest_output.is_empty() && !outcome.guest_output.ends_with('\n') {
                // Keep the verdict off the guest's last, unfinished line.
                eprintln!();
            }
            eprintln!("portcullis: {}", outcome.verdict_line());
            // Exit statuses above 255 cannot be reported; clamp to "failed".
            ExitCode::from(u8::try_from(outcome.exit_code()).unwrap_or(1))
        }
        Err(error) => {
            eprintln!("portcullis: {error}");
            ExitCode::from(STATUS_CANNOT_RUN)
        }
    }
}
