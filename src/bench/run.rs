//! One benchmark boot: the request it makes and the verdict on it.
//!
//! A benchmark run boots with `portcullis.mode=bench` and, under QEMU's
//! `-icount shift=0` (the default), `portcullis.counter=instructions`, so
//! the guest labels PMCCNTR_EL0's counts as instructions. It passes only
//! if the boot passed (exit status 0, banner, no panic) and the bench
//! protocol output has no problem (see [`BenchReport::problems`]).

use std::fmt;
use std::path::Path;
use std::time::Duration;

use super::report::{BenchProblem, BenchReport};
use super::result::Unit;
use crate::guest_mode::GuestMode;
use crate::guest_output::{RunOutcome, STATUS_TEST_FAILED};
use crate::machine::Machine;
use crate::qemu::{shell_command, Echo, QEMU_PROGRAM};
use crate::session::{PreparedRun, RunRequest};

/// The boot option that tells the guest its counter counts instructions.
pub const COUNTER_INSTRUCTIONS: &str = "portcullis.counter=instructions";
/// The boot option key for the number of timed iterations.
pub const ITERATIONS_KEY: &str = "portcullis.bench.iterations";
/// The boot option key for the name filter (a substring).
pub const FILTER_KEY: &str = "portcullis.bench.filter";
/// A full suite takes longer than a test boot.
pub const DEFAULT_BENCH_TIMEOUT: Duration = Duration::from_secs(300);

/// How to run the suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchSettings {
    /// The machine model.
    pub machine: Machine,
    /// Run under `-icount shift=0` (counts instructions); otherwise the
    /// counter counts the emulator's notion of cycles.
    pub icount: bool,
    /// Timed iterations per benchmark; `None`: the guest's default.
    pub iterations: Option<u32>,
    /// Only benchmarks whose name contains this.
    pub filter: Option<String>,
    /// Kill QEMU after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// How many cores the guest runs (`--cpus N`); `None`: the runner's
    /// default (virt `-smp 4`, raspi4b's four).
    pub cpus: Option<u32>,
}

impl BenchSettings {
    /// The whole suite on `machine` under icount with the guest's default
    /// iteration count.
    pub fn new(machine: Machine) -> BenchSettings {
        BenchSettings {
            machine,
            icount: true,
            iterations: None,
            filter: None,
            timeout: Some(DEFAULT_BENCH_TIMEOUT),
            cpus: None,
        }
    }

    /// The unit the results must be in.
    pub fn unit(&self) -> Unit {
        if self.icount {
            Unit::Instructions
        } else {
            Unit::Cycles
        }
    }

    /// The kernel command-line words this run adds.
    pub fn boot_options(&self) -> Vec<String> {
        let mut options = Vec::new();
        if self.icount {
            options.push(COUNTER_INSTRUCTIONS.to_string());
        }
        if let Some(iterations) = self.iterations {
            options.push(format!("{ITERATIONS_KEY}={iterations}"));
        }
        if let Some(filter) = &self.filter {
            options.push(format!("{FILTER_KEY}={filter}"));
        }
        options
    }

    /// The boot request, with output echoed as `echo` says.
    pub fn run_request(&self, echo: Echo) -> RunRequest {
        RunRequest {
            icount: self.icount,
            timeout: self.timeout,
            echo,
            boot_options: self.boot_options(),
            cpus: self.cpus,
            ..RunRequest::captured(self.machine, GuestMode::Bench)
        }
    }
}

/// The QEMU command of `prepared` as the docs show it: the program by its
/// name and the kernel by its file name, so the text is the same on every
/// machine.
pub fn portable_command(prepared: &PreparedRun) -> String {
    let mut config = prepared.config.clone();
    if let Some(name) = config.kernel.file_name() {
        config.kernel = Path::new(name).to_path_buf();
    }
    if let Some(dtb_name) = config.dtb.as_ref().and_then(|dtb| dtb.file_name()) {
        config.dtb = Some(Path::new(dtb_name).to_path_buf());
    }
    shell_command(Path::new(QEMU_PROGRAM), &config.qemu_args())
}

/// A judged benchmark run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchOutcome {
    /// The boot's verdict and full output.
    pub run: RunOutcome,
    /// The bench protocol lines it printed.
    pub report: BenchReport,
    /// What is wrong with them (empty if nothing).
    pub problems: Vec<BenchProblem>,
}

impl BenchOutcome {
    /// Judges a finished benchmark boot whose counter counts `unit`.
    pub fn judge(run: RunOutcome, unit: Unit) -> BenchOutcome {
        let report = BenchReport::parse(&run.guest_output);
        let problems = report.problems(unit);
        BenchOutcome {
            run,
            report,
            problems,
        }
    }

    /// Whether the boot passed and every result can be trusted.
    pub fn passed(&self) -> bool {
        self.run.passed() && self.problems.is_empty()
    }

    /// 0 if passed; else the boot's status, or 1 for a protocol problem.
    pub fn exit_code(&self) -> i32 {
        match (self.run.passed(), self.problems.is_empty()) {
            (true, true) => 0,
            (true, false) => STATUS_TEST_FAILED,
            (false, _) => self.run.exit_code(),
        }
    }

    /// One line: `PASS: 5 benchmarks in 3.1 s` or the first reasons.
    pub fn verdict_line(&self) -> String {
        let seconds = self.run.elapsed.as_secs_f32();
        if self.passed() {
            return format!(
                "PASS: bench mode, {} benchmarks in {seconds:.1} s",
                self.report.results.len()
            );
        }
        let reasons: Vec<String> = self
            .run
            .failures
            .iter()
            .map(ToString::to_string)
            .chain(self.problems.iter().map(ToString::to_string))
            .collect();
        format!(
            "FAIL: bench mode after {seconds:.1} s: {}",
            reasons.join("; ")
        )
    }
}

/// The full story for a failing test: verdict, problems, guest output.
impl fmt::Display for BenchOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for problem in &self.problems {
            writeln!(f, "  - {problem}")?;
        }
        self.run.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qemu::{ProcessEnd, ProcessOutput};

    fn finished(status: i32, uart: &str) -> RunOutcome {
        RunOutcome::judge(
            GuestMode::Bench,
            ProcessOutput {
                end: ProcessEnd::Exited(status),
                stdout: format!("Portcullis 0.1.0 on virt: entered at EL1\r\n{uart}"),
                stderr: String::new(),
                elapsed: Duration::from_millis(2500),
            },
        )
    }

    const ONE_RESULT: &str = "BENCH name=null_syscall unit=instructions iterations=10 min=31 median=31 mean=31.0 max=31 overhead=1\r\n# portcullis-bench: 1 results\r\n";

    #[test]
    fn icount_runs_ask_for_instructions_and_pass_the_options() {
        let settings = BenchSettings {
            iterations: Some(1000),
            filter: Some("ipc".into()),
            ..BenchSettings::new(Machine::Virt)
        };
        assert_eq!(
            settings.boot_options(),
            [
                "portcullis.counter=instructions",
                "portcullis.bench.iterations=1000",
                "portcullis.bench.filter=ipc"
            ]
        );
        let request = settings.run_request(Echo::Quiet);
        assert_eq!(request.mode, GuestMode::Bench);
        assert!(request.icount);
        assert_eq!(request.cpus, None);
        let one_core = BenchSettings {
            cpus: Some(1),
            ..settings.clone()
        };
        assert_eq!(one_core.run_request(Echo::Quiet).cpus, Some(1));
        assert_eq!(settings.unit(), Unit::Instructions);

        let no_icount = BenchSettings {
            icount: false,
            ..BenchSettings::new(Machine::Raspi4b)
        };
        assert!(no_icount.boot_options().is_empty());
        assert_eq!(no_icount.unit(), Unit::Cycles);
        assert!(!no_icount.run_request(Echo::Quiet).icount);
    }

    #[test]
    fn a_clean_run_passes() {
        let outcome = BenchOutcome::judge(finished(0, ONE_RESULT), Unit::Instructions);
        assert!(outcome.passed(), "{outcome}");
        assert_eq!(outcome.exit_code(), 0);
        assert_eq!(
            outcome.verdict_line(),
            "PASS: bench mode, 1 benchmarks in 2.5 s"
        );
    }

    #[test]
    fn a_protocol_problem_fails_a_clean_boot_with_status_1() {
        let cut = ONE_RESULT.replace("# portcullis-bench: 1 results\r\n", "");
        let outcome = BenchOutcome::judge(finished(0, &cut), Unit::Instructions);
        assert!(!outcome.passed());
        assert_eq!(outcome.exit_code(), 1);
        assert!(outcome.verdict_line().contains("did not finish"));
        assert!(outcome.to_string().contains("BENCH name=null_syscall"));
    }

    #[test]
    fn a_benchmark_that_could_not_run_fails_with_the_guest_s_status() {
        let uart =
            format!("{ONE_RESULT}BENCH-ERROR name=ipc_call_one_way_same_as reason=no memory\r\n");
        let outcome = BenchOutcome::judge(finished(1, &uart), Unit::Instructions);
        assert_eq!(outcome.exit_code(), 1);
        let verdict = outcome.verdict_line();
        assert!(
            verdict.contains("ipc_call_one_way_same_as could not run: no memory"),
            "{verdict}"
        );
    }

    #[test]
    fn a_panic_fails_with_status_2() {
        let outcome = BenchOutcome::judge(
            finished(2, "KERNEL PANIC: data abort\r\n"),
            Unit::Instructions,
        );
        assert_eq!(outcome.exit_code(), 2);
    }
}
