//! The `portcullis` command line, parsed by hand (no dependency needed for
//! three subcommands and a handful of options each).

mod bench;
mod words;

use words::OptionWords;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::artifacts::KernelFlavour;
use crate::bench::BenchOptions;
use crate::decode::Format;
use crate::guest_mode::GuestMode;
use crate::machine::Machine;
use crate::profile::ProfileOptions;
use crate::qemu::Echo;
use crate::session::{RunRequest, DEFAULT_TIMEOUT};

/// The text `--help` prints.
pub const HELP: &str = "\
portcullis: boot the Portcullis microkernel in QEMU and report what it says

USAGE:
    portcullis run [SYSTEM.toml] [OPTIONS]
    portcullis build-system SYSTEM.toml [--out FILE]
    portcullis new DIRECTORY
    portcullis shell [--script FILE] [--capture FILE] [OPTIONS]
    portcullis decode LOG [--format text|jsonl|perfetto|svg] [--out FILE]
    portcullis bench [OPTIONS]
    portcullis profile NAME [--iterations N] [--machine M] [--cpus N] [--timeout SECS] [--pcs FILE]
    portcullis probe [--machine M]...
    portcullis --help

run SYSTEM.toml: check the system description (docs/systems.md), build its
tasks' crates, write its system image under target/systems/images/ and boot
it (on the default kernel unless --image says otherwise). Without one, the
mode's own system (systems/MODE.toml) boots. A mistake in the description is
reported as FILE:LINE:COLUMN: FIELD: MESSAGE, one line each, and nothing boots
(exit status 65).

build-system SYSTEM.toml: the same checks and build, without booting; writes
the image to FILE (default target/systems/images/NAME.img) and prints it.

new DIRECTORY: write a starting point there: an app, a policy server and their
system description, which boots as written (`run DIRECTORY/system.toml`).

shell: build and boot the shell's system (systems/shell.toml, docs/shell.md)
with the serial line on this terminal: a prompt to inspect and steer the
running system. `exit` at the prompt ends the system; Ctrl-A x quits QEMU.
With --script FILE the lines of FILE are typed instead, each once the prompt
is back (`^C` types Ctrl-C; `#` starts a comment), and the session's text is
printed; --capture FILE also writes the raw serial bytes there, for `decode`.
The run options below apply; a person's session has no deadline, and a
script's each command must be answered within 60 s.

decode LOG: read a captured serial log (the guest's UART bytes, as `run`
echoes them to stdout) and write its text lines and its export frames (trace
stops and audit records, docs/export.md) to FILE (default: stdout) as
    text       the lines, and each event as an strace-like line (default)
    jsonl      one JSON object per line
    perfetto   a Chrome trace-event JSON to open in ui.perfetto.dev
    svg        a timeline drawing, one lane per thread
Frames that do not decode, and one the log ends inside, are shown where they
were and counted on stderr. Exit status 0; 66 if LOG cannot be read, 73 if
FILE cannot be written.

OPTIONS (run):
    --machine virt|raspi4b  QEMU machine (default virt). raspi4b needs QEMU 9+
                            and boots kernel8.img at EL2 with bcm2711-rpi-4-b.dtb
    --mode demo|test|bench|fuzz
                            what the guest runs (default demo): the demo, the
                            in-kernel test suite, which prints TAP, the
                            benchmarks (raw; `portcullis bench` reads them), or
                            the syscall fuzzer (TAP, one result per round; set
                            --boot-option portcullis.fuzz.seed=S and
                            portcullis.fuzz.calls=N)
    --image default|test|bench
                            which build of the kernel (default: the mode's:
                            test for test and fuzz, bench for bench, else the
                            default image, which has no test or bench calls)
    --elf                   raspi4b: boot the kernel ELF instead (entered at EL3)
    --dtb PATH              raspi4b: the device tree to pass (default:
                            $PORTCULLIS_DTB, else target/firmware/bcm2711-rpi-4-b.dtb)
    --system-image PATH     load PATH (a system image: abi::system::image) beside
                            the kernel, at the board's fixed address (virt
                            0x42000000, raspi4b 0x2000000), where the kernel
                            finds it and hands it to the root task read-only
    --gdb                   start halted with a gdb stub on :1234 (no timeout)
    --icount                run with -icount shift=0 (one tick per instruction)
    --cpus N                run N cores, 1 to 4 (default 4): virt gets -smp N;
                            raspi4b always has 4, so the kernel is told to
                            start N (portcullis.cpus=N)
    --timeout SECS          kill QEMU after SECS seconds (default 120; 0 = never)
    --boot-option KEY=VALUE add a word to the kernel command line (repeatable),
                            e.g. portcullis.crash=data-abort|stack-overflow
                            (crashing on purpose needs --image test)
    -h, --help              print this help

OPTIONS (bench): boot the benchmark suite (under -icount shift=0, so the
numbers are guest instructions), print a table and one JSON object per result
on stdout (the guest's output and the verdict go to stderr) and write the JSON
lines to target/bench/latest.json (its previous contents move to
target/bench/previous.json); a whole-suite run in instructions also writes
the results page and chart, target/bench/results.md and results.svg
    --machine virt|raspi4b  QEMU machine (default virt)
    --iterations N          timed iterations per benchmark (guest default 10000)
    --filter TEXT           only benchmarks whose name contains TEXT
    --compare FILE          print each median's change against an earlier
                            JSON-lines file (e.g. target/bench/previous.json)
    --json FILE             write the JSON lines to FILE instead
    --update-docs           write the results page and chart of a whole-suite run
                            to docs/bench/ (committed) instead of target/bench/
    --no-icount             count cycles of the emulator instead of instructions
    --cpus N                run N cores, 1 to 4 (default 4, as for run); the SMP
                            rows that need more cores than run print a
                            BENCH-SKIP line and count as run
    --timeout SECS          kill QEMU after SECS seconds (default 300; 0 = never)

probe: start each machine (default: virt and raspi4b) once with the
runner's own QEMU command line and a guest that only exits; fail with one
sentence naming a firmware file QEMU needs and cannot find, and the Debian
package that has it (every boot also does this first, once per machine).

profile NAME: run benchmark NAME twice (N and 2N iterations, default N = 100)
with QEMU logging every executed instruction, and print each kernel and init
symbol's instructions per iteration (see docs/bench/profiling.md); --pcs FILE
also writes each PC's instructions per iteration there, hottest first.

The guest's UART is shown as it arrives. At the end a verdict line is printed
on stderr. The exit status is the guest's: 0 success (demo ran / every test
passed), 1 a test failed, 2 kernel panic; 124 if QEMU was killed at the
timeout; 125 if QEMU or the kernel image could not be found; 64 for a bad
command line. Environment: PORTCULLIS_QEMU names the QEMU executable,
PORTCULLIS_DTB the raspi4b device tree.
";

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliCommand {
    /// Print [`HELP`].
    Help,
    /// Boot the guest.
    Run(RunRequest),
    /// Run the benchmark suite.
    Bench(BenchOptions),
    /// Profile one benchmark.
    Profile(ProfileOptions),
    /// Check that QEMU can start these machines.
    Probe(Vec<Machine>),
    /// Build a system image from a description, without booting it.
    BuildSystem {
        /// The description.
        description: PathBuf,
        /// Where the image goes (`None`: under `target/systems/images/`).
        out: Option<PathBuf>,
    },
    /// Write a new system's starting point into this directory.
    New(PathBuf),
    /// Boot the shell's system: on this terminal, or driven by a script.
    Shell {
        /// The boot (its system: the shell's unless another is named).
        request: RunRequest,
        /// Lines to type instead of a person.
        script: Option<PathBuf>,
        /// Where the raw serial bytes of a scripted run go.
        capture: Option<PathBuf>,
    },
    /// Turn a captured log's export frames into text, JSON or a drawing.
    Decode {
        /// The captured log.
        log: PathBuf,
        /// What to write.
        format: Format,
        /// Where (`None`: stdout).
        out: Option<PathBuf>,
    },
}

/// A command line the runner cannot follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliError {
    /// No subcommand was given.
    NoCommand,
    /// The first word is not a subcommand.
    UnknownCommand(String),
    /// An option `run` does not have.
    UnknownOption(String),
    /// An option that needs a value came last.
    MissingValue(&'static str),
    /// An option's value is not valid.
    BadValue {
        /// The option.
        option: &'static str,
        /// Why the value was refused.
        reason: String,
    },
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::NoCommand => f.write_str("no command given (try `portcullis run`)"),
            CliError::UnknownCommand(word) => {
                write!(
                    f,
                    "unknown command `{word}` (the commands are run, build-system, new, shell, decode, bench, profile and probe)"
                )
            }
            CliError::UnknownOption(word) => write!(f, "unknown option `{word}`"),
            CliError::MissingValue(option) => write!(f, "{option} needs a value"),
            CliError::BadValue { option, reason } => write!(f, "{option}: {reason}"),
        }
    }
}

impl std::error::Error for CliError {}

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<CliCommand, CliError>
where
    I: IntoIterator<Item = String>,
{
    let mut args = args.into_iter();
    match args.next().as_deref() {
        None => Err(CliError::NoCommand),
        Some("-h" | "--help" | "help") => Ok(CliCommand::Help),
        Some("run") => parse_run(args),
        Some("bench") => bench::parse_bench(args),
        Some("profile") => bench::parse_profile(args),
        Some("probe") => parse_probe(args),
        Some("build-system") => parse_build_system(args),
        Some("decode") => parse_decode(args),
        Some("shell") => parse_shell(args),
        Some("new") => match (args.next(), args.next()) {
            (Some(word), _) if word == "-h" || word == "--help" => Ok(CliCommand::Help),
            (Some(directory), None) => Ok(CliCommand::New(PathBuf::from(directory))),
            (None, _) => Err(CliError::MissingValue("new DIRECTORY")),
            (Some(_), Some(extra)) => Err(CliError::UnknownOption(extra)),
        },
        Some(other) => Err(CliError::UnknownCommand(other.to_string())),
    }
}

fn parse_run(mut args: impl Iterator<Item = String>) -> Result<CliCommand, CliError> {
    let mut request = RunRequest {
        echo: Echo::Live,
        ..RunRequest::captured(Machine::Virt, GuestMode::Demo)
    };
    let mut image = None;
    while let Some(arg) = args.next() {
        // Accept both `--option value` and `--option=value`.
        let (option, inline_value) = match arg.split_once('=') {
            Some((option, value)) if option.starts_with("--") => {
                (option.to_string(), Some(value.to_string()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |name: &'static str| {
            inline_value
                .clone()
                .or_else(|| args.next())
                .ok_or(CliError::MissingValue(name))
        };
        match option.as_str() {
            "-h" | "--help" => return Ok(CliCommand::Help),
            "--machine" => {
                request.machine = value("--machine")?
                    .parse()
                    .map_err(|e| bad("--machine", e))?;
            }
            "--mode" => request.mode = value("--mode")?.parse().map_err(|e| bad("--mode", e))?,
            "--timeout" => request.timeout = parse_timeout(&value("--timeout")?)?,
            "--cpus" => request.cpus = Some(parse_cpus(&value("--cpus")?)?),
            "--dtb" => request.dtb = Some(PathBuf::from(value("--dtb")?)),
            "--system-image" => {
                request.system_image = Some(PathBuf::from(value("--system-image")?))
            }
            "--system" => request.system = Some(PathBuf::from(value("--system")?)),
            _ if !arg.starts_with('-') && arg.ends_with(".toml") && request.system.is_none() => {
                request.system = Some(PathBuf::from(&arg));
            }
            "--elf" => request.elf = true,
            "--gdb" => request.gdb = true,
            "--icount" => request.icount = true,
            "--boot-option" => {
                let word = value("--boot-option")?;
                if !word.contains('=') || word.contains(char::is_whitespace) {
                    return Err(bad("--boot-option", "expected one KEY=VALUE word"));
                }
                request.boot_options.push(word);
            }
            "--image" => {
                let name = value("--image")?;
                image = Some(
                    KernelFlavour::from_name(&name)
                        .ok_or_else(|| bad("--image", "expected default, test or bench"))?,
                );
            }
            _ => return Err(CliError::UnknownOption(arg)),
        }
    }
    request.image = image.unwrap_or(KernelFlavour::for_mode(request.mode));
    Ok(CliCommand::Run(request))
}

fn parse_build_system(mut args: impl Iterator<Item = String>) -> Result<CliCommand, CliError> {
    let mut description = None;
    let mut out = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(CliCommand::Help),
            "--out" => {
                out = Some(PathBuf::from(
                    args.next().ok_or(CliError::MissingValue("--out"))?,
                ))
            }
            _ if arg.starts_with("--out=") => out = Some(PathBuf::from(&arg["--out=".len()..])),
            _ if !arg.starts_with('-') && description.is_none() => {
                description = Some(PathBuf::from(arg))
            }
            _ => return Err(CliError::UnknownOption(arg)),
        }
    }
    let description = description.ok_or(CliError::MissingValue("build-system SYSTEM.toml"))?;
    Ok(CliCommand::BuildSystem { description, out })
}

fn parse_shell(args: impl Iterator<Item = String>) -> Result<CliCommand, CliError> {
    let mut script = None;
    let mut capture = None;
    // The run options are `run`'s: handed on as they were given.
    let mut rest = Vec::new();
    let mut words = OptionWords::new(args);
    while let Some(word) = words.next_word() {
        match word.as_str() {
            "--script" => script = Some(PathBuf::from(words.value("--script")?)),
            "--capture" => capture = Some(PathBuf::from(words.value("--capture")?)),
            _ => rest.push(words.as_given(word)),
        }
    }
    let CliCommand::Run(mut request) = parse_run(rest.into_iter())? else {
        return Ok(CliCommand::Help);
    };
    if request.system.is_none() && request.system_image.is_none() {
        request.system = Some(crate::shell_session::description());
    }
    if capture.is_some() && script.is_none() {
        return Err(bad(
            "--capture",
            "needs --script (a person's session is not captured)",
        ));
    }
    Ok(CliCommand::Shell {
        request,
        script,
        capture,
    })
}

fn parse_decode(args: impl Iterator<Item = String>) -> Result<CliCommand, CliError> {
    let mut log = None;
    let mut format = Format::default();
    let mut out = None;
    let mut words = OptionWords::new(args);
    while let Some(word) = words.next_word() {
        match word.as_str() {
            "-h" | "--help" => return Ok(CliCommand::Help),
            "--format" => {
                format = words
                    .value("--format")?
                    .parse()
                    .map_err(|e| bad("--format", e))?
            }
            "--out" => out = Some(PathBuf::from(words.value("--out")?)),
            _ if !word.starts_with('-') && log.is_none() => log = Some(PathBuf::from(word)),
            _ => return Err(CliError::UnknownOption(words.as_given(word))),
        }
    }
    let log = log.ok_or(CliError::MissingValue("decode LOG"))?;
    Ok(CliCommand::Decode { log, format, out })
}

fn parse_probe(mut args: impl Iterator<Item = String>) -> Result<CliCommand, CliError> {
    let mut machines = Vec::new();
    while let Some(arg) = args.next() {
        let value = match arg.split_once('=') {
            Some(("--machine", value)) => Some(value.to_string()),
            _ if arg == "--machine" => {
                Some(args.next().ok_or(CliError::MissingValue("--machine"))?)
            }
            _ => None,
        };
        match value {
            Some(value) => {
                let machine: Machine = value.parse().map_err(|e| bad("--machine", e))?;
                if !machines.contains(&machine) {
                    machines.push(machine);
                }
            }
            None if arg == "-h" || arg == "--help" => return Ok(CliCommand::Help),
            None => return Err(CliError::UnknownOption(arg)),
        }
    }
    if machines.is_empty() {
        machines = Machine::ALL.to_vec();
    }
    Ok(CliCommand::Probe(machines))
}

/// `--cpus N`: 1 to 4 cores.
pub(crate) fn parse_cpus(text: &str) -> Result<u32, CliError> {
    match text.parse::<u32>() {
        Ok(n) if (1..=4).contains(&n) => Ok(n),
        _ => Err(bad("--cpus", format!("`{text}` is not 1 to 4"))),
    }
}

fn parse_timeout(text: &str) -> Result<Option<Duration>, CliError> {
    let seconds: u64 = text.parse().map_err(|_| {
        bad(
            "--timeout",
            format!("`{text}` is not a whole number of seconds"),
        )
    })?;
    Ok((seconds > 0).then(|| Duration::from_secs(seconds)))
}

fn bad(option: &'static str, reason: impl ToString) -> CliError {
    CliError::BadValue {
        option,
        reason: reason.to_string(),
    }
}

/// The default timeout, for `--help` to agree with the code.
pub fn default_timeout_seconds() -> u64 {
    DEFAULT_TIMEOUT.as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(words: &[&str]) -> Result<CliCommand, CliError> {
        parse(
            std::iter::once("run")
                .chain(words.iter().copied())
                .map(String::from),
        )
    }

    fn request(words: &[&str]) -> RunRequest {
        match run(words) {
            Ok(CliCommand::Run(request)) => request,
            other => panic!("{words:?} parsed as {other:?}"),
        }
    }

    fn probe(words: &[&str]) -> Result<CliCommand, CliError> {
        parse(
            std::iter::once("probe")
                .chain(words.iter().copied())
                .map(String::from),
        )
    }

    #[test]
    fn probe_takes_every_machine_unless_told() {
        assert_eq!(probe(&[]), Ok(CliCommand::Probe(Machine::ALL.to_vec())));
        assert_eq!(
            probe(&["--machine", "raspi4b", "--machine=raspi4b"]),
            Ok(CliCommand::Probe(vec![Machine::Raspi4b]))
        );
        assert_eq!(
            probe(&["--machine"]),
            Err(CliError::MissingValue("--machine"))
        );
        assert!(matches!(
            probe(&["--machine", "pc"]),
            Err(CliError::BadValue { .. })
        ));
        assert_eq!(
            probe(&["--elf"]),
            Err(CliError::UnknownOption("--elf".into()))
        );
    }

    fn decode(words: &[&str]) -> Result<CliCommand, CliError> {
        parse(
            std::iter::once("decode")
                .chain(words.iter().copied())
                .map(String::from),
        )
    }

    #[test]
    fn decode_takes_a_log_a_format_and_an_output() {
        assert_eq!(
            decode(&["run.log"]),
            Ok(CliCommand::Decode {
                log: PathBuf::from("run.log"),
                format: Format::Text,
                out: None
            })
        );
        assert_eq!(
            decode(&["--format", "perfetto", "run.log", "--out=trace.json"]),
            Ok(CliCommand::Decode {
                log: PathBuf::from("run.log"),
                format: Format::Perfetto,
                out: Some(PathBuf::from("trace.json"))
            })
        );
        assert_eq!(decode(&[]), Err(CliError::MissingValue("decode LOG")));
        assert!(matches!(
            decode(&["run.log", "--format", "json"]),
            Err(CliError::BadValue {
                option: "--format",
                ..
            })
        ));
        assert_eq!(
            decode(&["a.log", "b.log"]),
            Err(CliError::UnknownOption("b.log".into()))
        );
        assert_eq!(decode(&["--out"]), Err(CliError::MissingValue("--out")));
    }

    #[test]
    fn defaults_are_a_live_virt_demo_with_a_timeout() {
        let request = request(&[]);
        assert_eq!(
            (request.machine, request.mode),
            (Machine::Virt, GuestMode::Demo)
        );
        assert_eq!(request.echo, Echo::Live);
        assert_eq!(request.timeout, Some(DEFAULT_TIMEOUT));
        assert!(!request.elf && !request.gdb && !request.icount);
    }

    #[test]
    fn reads_every_option() {
        let request = request(&[
            "--machine",
            "raspi4b",
            "--mode=test",
            "--elf",
            "--gdb",
            "--icount",
            "--timeout",
            "30",
            "--dtb",
            "/f/x.dtb",
            "--system-image=/s/system.img",
        ]);
        assert_eq!(
            (request.machine, request.mode),
            (Machine::Raspi4b, GuestMode::Test)
        );
        assert!(request.elf && request.gdb && request.icount);
        assert_eq!(request.timeout, Some(Duration::from_secs(30)));
        assert_eq!(request.dtb, Some(PathBuf::from("/f/x.dtb")));
        assert_eq!(request.system_image, Some(PathBuf::from("/s/system.img")));
    }

    #[test]
    fn cpus_are_1_to_4() {
        assert_eq!(request(&[]).cpus, None);
        assert_eq!(request(&["--cpus", "1"]).cpus, Some(1));
        assert_eq!(request(&["--cpus=4"]).cpus, Some(4));
        for bad in ["0", "5", "two"] {
            assert!(
                matches!(
                    run(&["--cpus", bad]),
                    Err(CliError::BadValue {
                        option: "--cpus",
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn timeout_0_means_no_limit() {
        assert_eq!(request(&["--timeout", "0"]).timeout, None);
    }

    #[test]
    fn refuses_bad_command_lines() {
        assert_eq!(parse(Vec::new()), Err(CliError::NoCommand));
        assert_eq!(
            parse(vec!["boot".to_string()]),
            Err(CliError::UnknownCommand("boot".into()))
        );
        assert_eq!(
            run(&["--fast"]),
            Err(CliError::UnknownOption("--fast".into()))
        );
        assert_eq!(
            run(&["--machine"]),
            Err(CliError::MissingValue("--machine"))
        );
        assert!(matches!(
            run(&["--machine", "pc"]),
            Err(CliError::BadValue {
                option: "--machine",
                ..
            })
        ));
        assert!(matches!(
            run(&["--timeout", "soon"]),
            Err(CliError::BadValue {
                option: "--timeout",
                ..
            })
        ));
    }

    #[test]
    fn help_is_recognised_everywhere() {
        assert_eq!(parse(vec!["--help".to_string()]), Ok(CliCommand::Help));
        assert_eq!(run(&["--machine", "virt", "-h"]), Ok(CliCommand::Help));
        assert!(HELP.contains(&format!("default {}", default_timeout_seconds())));
    }
}
