//! Reading what the guest printed: banner, TAP results, summary, panics.
//!
//! [`RunOutcome::judge`] turns a finished QEMU process into a verdict.
//! Test mode passes only if QEMU exited 0, the boot banner appeared, no
//! kernel panic was printed, exactly one plan `1..N` was followed by N
//! results numbered 1..=N, none of them `not ok` (TODO excepted), and the
//! closing `# portcullis: N passed, M failed` agrees with the result lines.
//! Demo mode needs the banner, no panic and exit status 0.

mod line;
mod outcome;
mod report;

pub use line::{
    Directive, GuestLine, Summary, TestResult, BANNER_PREFIX, PANIC_PREFIX, SUMMARY_PREFIX,
};
pub use outcome::{
    FailureReason, RunOutcome, STATUS_KERNEL_PANIC, STATUS_TEST_FAILED, STATUS_TIMED_OUT,
};
pub use report::{GuestReport, PanicReport};

#[cfg(test)]
mod tests;
