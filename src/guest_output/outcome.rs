//! The verdict on one QEMU run: passed, or failed and why.

use std::fmt;
use std::time::Duration;

use super::line::Summary;
use super::report::GuestReport;
use crate::guest_mode::GuestMode;
use crate::qemu::{ProcessEnd, ProcessOutput};

/// The guest's exit status for "a test failed" (through semihosting).
pub const STATUS_TEST_FAILED: i32 = 1;
/// The guest's exit status for "kernel panic" (through semihosting).
pub const STATUS_KERNEL_PANIC: i32 = 2;
/// The runner's exit status when QEMU was killed at the deadline (as `timeout(1)`).
pub const STATUS_TIMED_OUT: i32 = 124;

/// One reason a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailureReason {
    /// QEMU still ran at the deadline and was killed.
    TimedOut(Duration),
    /// A signal ended QEMU.
    Signalled(i32),
    /// QEMU exited with a non-zero status (the guest's, or QEMU's own error).
    QemuStatus(i32),
    /// The kernel printed `KERNEL PANIC`.
    KernelPanic(String),
    /// A test reported `not ok`.
    TestFailed {
        /// Its number (or position, if the line gave none).
        number: usize,
        /// Its description.
        name: String,
    },
    /// Test mode printed no `1..N` plan.
    MissingPlan,
    /// More than one plan line.
    SeveralPlans(Vec<usize>),
    /// The plan promised a different number of tests than ran.
    PlanMismatch {
        /// N from `1..N`.
        planned: usize,
        /// Result lines seen.
        ran: usize,
    },
    /// A result's number is not the next one.
    OutOfOrder {
        /// The number that should have come.
        expected: usize,
        /// The number printed.
        found: usize,
    },
    /// Test mode ran no test at all: a suite that checks nothing is no pass.
    NoTests,
    /// Test mode printed no `# portcullis: N passed, M failed`.
    MissingSummary,
    /// The summary's counts disagree with the result lines.
    SummaryMismatch {
        /// What the summary line says.
        claimed: Summary,
        /// What the result lines add up to.
        counted: Summary,
    },
    /// No `Portcullis ...` boot banner.
    MissingBanner,
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureReason::TimedOut(limit) => {
                write!(f, "timed out: QEMU was still running after {} s and was killed", limit.as_secs_f32())
            }
            FailureReason::Signalled(signal) => write!(f, "QEMU was ended by signal {signal}"),
            FailureReason::QemuStatus(status) => {
                let meaning = match *status {
                    STATUS_TEST_FAILED => "the guest reports a failed test, or QEMU itself failed (see its stderr)",
                    STATUS_KERNEL_PANIC => "the guest reports a kernel panic",
                    _ => "QEMU or the guest failed",
                };
                write!(f, "QEMU exited with status {status}: {meaning}")
            }
            FailureReason::KernelPanic(headline) => write!(f, "kernel panic: {headline}"),
            FailureReason::TestFailed { number, name } => write!(f, "test {number} failed: {name}"),
            FailureReason::MissingPlan => f.write_str("no TAP plan line (`1..N`)"),
            FailureReason::SeveralPlans(plans) => write!(f, "several TAP plan lines: {plans:?}"),
            FailureReason::PlanMismatch { planned, ran } => {
                write!(f, "the plan says {planned} tests but {ran} reported a result")
            }
            FailureReason::OutOfOrder { expected, found } => {
                write!(f, "test number {found} where {expected} was expected")
            }
            FailureReason::NoTests => f.write_str("no test ran"),
            FailureReason::MissingSummary => {
                f.write_str("no summary line (`# portcullis: N passed, M failed`): the suite did not finish")
            }
            FailureReason::SummaryMismatch { claimed, counted } => write!(
                f,
                "the summary says {} passed, {} failed but the result lines count {} passed, {} failed",
                claimed.passed, claimed.failed, counted.passed, counted.failed
            ),
            FailureReason::MissingBanner => f.write_str("no boot banner (`Portcullis ...`)"),
        }
    }
}

/// One finished run, judged: the verdict, its reasons and the full output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    /// The mode the guest ran in (decides what output is required).
    pub mode: GuestMode,
    /// How QEMU ended.
    pub end: ProcessEnd,
    /// What the guest reported.
    pub report: GuestReport,
    /// Why the run failed; empty if it passed.
    pub failures: Vec<FailureReason>,
    /// Everything the guest printed on its UART.
    pub guest_output: String,
    /// Everything QEMU printed on stderr.
    pub qemu_stderr: String,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl RunOutcome {
    /// Judges a finished QEMU process that ran the guest in `mode`.
    pub fn judge(mode: GuestMode, process: ProcessOutput) -> RunOutcome {
        let stdout = process.stdout.clone();
        Self::judge_output(mode, process, stdout)
    }

    /// [`RunOutcome::judge`] for a run of one of the project's own systems
    /// (`systems/*.toml`), which speak through their driver task: its
    /// lines are read as the system's, without their `[driver#N] ` tag,
    /// as the root's are. (A user's system is judged as it printed: a
    /// task of theirs may be called `driver` too.)
    pub fn judge_own_system(mode: GuestMode, process: ProcessOutput) -> RunOutcome {
        let stdout = super::line::untag_driver_lines(&process.stdout);
        Self::judge_output(mode, process, stdout)
    }

    fn judge_output(mode: GuestMode, process: ProcessOutput, stdout: String) -> RunOutcome {
        let report = GuestReport::parse(&stdout);
        let mut failures = Vec::new();
        match process.end {
            ProcessEnd::Exited(0) => {}
            ProcessEnd::Exited(status) => failures.push(FailureReason::QemuStatus(status)),
            ProcessEnd::Signalled(signal) => failures.push(FailureReason::Signalled(signal)),
            ProcessEnd::TimedOut(limit) => failures.push(FailureReason::TimedOut(limit)),
        }
        if let Some(panic) = &report.panic {
            failures.push(FailureReason::KernelPanic(panic.headline.clone()));
        }
        if report.banner.is_none() {
            failures.push(FailureReason::MissingBanner);
        }
        if mode.prints_tap() {
            failures.extend(test_mode_failures(&report));
        }
        RunOutcome {
            mode,
            end: process.end,
            report,
            failures,
            guest_output: stdout,
            qemu_stderr: process.stderr,
            elapsed: process.elapsed,
        }
    }

    /// Whether the run passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// The status the runner exits with: 0 if the run passed, otherwise
    /// QEMU's (= the guest's) non-zero status, 2 for a panic the status
    /// did not carry, [`STATUS_TIMED_OUT`] for a timeout, 128 + N for a
    /// signal, and 1 for any other failure.
    pub fn exit_code(&self) -> i32 {
        if self.passed() {
            return 0;
        }
        match self.end {
            ProcessEnd::Exited(0) if self.report.panic.is_some() => STATUS_KERNEL_PANIC,
            ProcessEnd::Exited(0) => STATUS_TEST_FAILED,
            ProcessEnd::Exited(status) => status,
            ProcessEnd::Signalled(signal) => 128 + signal,
            ProcessEnd::TimedOut(_) => STATUS_TIMED_OUT,
        }
    }

    /// A one-line verdict, e.g. `PASS: test mode, 42 tests passed in 3.1 s`
    /// or `FAIL: test mode after 3.1 s: test 7 failed: ipc: reply`.
    pub fn verdict_line(&self) -> String {
        let reasons: Vec<String> = self.failures.iter().map(ToString::to_string).collect();
        if reasons.is_empty() {
            self.headline()
        } else {
            format!("{}: {}", self.headline(), reasons.join("; "))
        }
    }

    fn headline(&self) -> String {
        let seconds = self.elapsed.as_secs_f32();
        if self.passed() {
            let what = match self.mode {
                GuestMode::Test => format!("{} tests passed", self.report.counted().passed),
                // Any described system boots in this mode, the demo's too.
                GuestMode::Demo => {
                    return format!("PASS: the system ended with status 0 in {seconds:.1} s")
                }
                GuestMode::Bench => "the benchmarks ran".to_string(),
                GuestMode::Fuzz => format!("{} fuzz rounds passed", self.report.counted().passed),
            };
            format!("PASS: {} mode, {what} in {seconds:.1} s", self.mode)
        } else {
            format!("FAIL: {} mode after {seconds:.1} s", self.mode)
        }
    }
}

/// The full story, for a failing test to print: verdict, reasons, output.
impl fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.headline())?;
        for reason in &self.failures {
            writeln!(f, "  - {reason}")?;
        }
        writeln!(f, "----- guest output (UART) -----")?;
        f.write_str(&self.guest_output)?;
        if !self.guest_output.ends_with('\n') {
            writeln!(f)?;
        }
        writeln!(f, "----- end of guest output -----")?;
        if !self.qemu_stderr.trim().is_empty() {
            writeln!(f, "----- QEMU stderr -----")?;
            f.write_str(&self.qemu_stderr)?;
            writeln!(f, "----- end of QEMU stderr -----")?;
        }
        Ok(())
    }
}

/// What test mode requires beyond a clean exit: one plan, that many
/// results numbered 1..=N, none failed, and a summary that agrees.
fn test_mode_failures(report: &GuestReport) -> Vec<FailureReason> {
    let mut failures = Vec::new();
    match report.plans.as_slice() {
        [] => failures.push(FailureReason::MissingPlan),
        [planned] if *planned != report.results.len() => {
            failures.push(FailureReason::PlanMismatch {
                planned: *planned,
                ran: report.results.len(),
            })
        }
        [_] => {}
        several => failures.push(FailureReason::SeveralPlans(several.to_vec())),
    }
    if report.results.is_empty() {
        failures.push(FailureReason::NoTests);
    }
    for (index, result) in report.results.iter().enumerate() {
        let expected = index + 1;
        if let Some(found) = result.number.filter(|&found| found != expected) {
            failures.push(FailureReason::OutOfOrder { expected, found });
        }
        if result.is_failure() {
            failures.push(FailureReason::TestFailed {
                number: result.number.unwrap_or(expected),
                name: result.name.clone(),
            });
        }
    }
    match report.summary {
        None => failures.push(FailureReason::MissingSummary),
        Some(claimed) if claimed != report.counted() => {
            failures.push(FailureReason::SummaryMismatch {
                claimed,
                counted: report.counted(),
            })
        }
        Some(_) => {}
    }
    failures
}
