//! Shared helpers for the tests that boot the guest in QEMU.
//!
//! Each boot has the runner's deadline (120 s). A failing boot panics with
//! the verdict, the reasons and the guest's full output, so `cargo test`
//! shows everything needed to debug it.

use std::path::PathBuf;
use std::sync::Mutex;

use portcullis::artifacts::{self, RPI4_DTB_FILE_NAME};
use portcullis::{GuestMode, Machine, RunOutcome, RunRequest};

/// Boots one at a time: the machine has two cores, and two emulated
/// multi-core guests at once would only make each slower and closer to
/// its deadline.
static ONE_QEMU_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The request the tests start from: captured output, default deadline.
// Each test file compiles this module on its own; bench_budget has no use for it.
#[allow(dead_code)]
pub fn request(machine: Machine, mode: GuestMode) -> RunRequest {
    RunRequest::captured(machine, mode)
}

/// Waits for this test's turn at QEMU (see `ONE_QEMU_AT_A_TIME`), for
/// tests that run QEMU themselves: the turn lasts while the guard lives.
// Each test file compiles this module on its own; not all use this.
#[allow(dead_code)]
pub fn qemu_turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_QEMU_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Boots `request` (one QEMU at a time) and returns the outcome, whatever
/// it is; panics only if QEMU could not be started.
// Each test file compiles this module on its own; not all use this.
#[allow(dead_code)]
pub fn boot_serialised(request: &RunRequest) -> RunOutcome {
    let outcome = {
        // A test that panicked while holding the lock poisons it; the lock
        // only orders runs, so the other tests may still go ahead.
        let _turn = ONE_QEMU_AT_A_TIME
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        portcullis::boot(request)
    };
    outcome.unwrap_or_else(|error| {
        panic!(
            "cannot boot {} ({} mode): {error}",
            request.machine, request.mode
        )
    })
}

/// Boots `request` and returns the outcome, panicking with the full
/// output unless the run passed.
// Each test file compiles this module on its own; not all use this.
#[allow(dead_code)]
pub fn boot_expecting_pass(request: &RunRequest) -> RunOutcome {
    let outcome = boot_serialised(request);
    assert!(
        outcome.passed(),
        "{} ({} mode{}) failed:\n{outcome}",
        request.machine,
        request.mode,
        if request.elf { ", ELF" } else { "" }
    );
    println!("{}", outcome.verdict_line());
    outcome
}

/// Cases of the in-guest suite (`init/src/driver/cases.rs`
/// `TEST_CASES`): pinned here, so that a case dropped from the suite, or
/// a run that stops early but still sums up, fails the test.
// Each test file compiles this module on its own; not all use this.
#[allow(dead_code)]
pub const SUITE_CASES: usize = 85;

/// The whole in-guest suite ran and passed: one plan of `SUITE_CASES`,
/// results numbered 1..=`SUITE_CASES` in order, each `ok` and none
/// skipped (TAP counts `# SKIP` as a pass; nothing here may be skipped),
/// and a summary that agrees.
#[allow(dead_code)]
pub fn assert_whole_suite_passed(outcome: &RunOutcome) {
    let report = &outcome.report;
    assert_eq!(report.plans, [SUITE_CASES], "the plan:\n{outcome}");
    let numbers: Vec<Option<usize>> = report.results.iter().map(|r| r.number).collect();
    let expected: Vec<Option<usize>> = (1..=SUITE_CASES).map(Some).collect();
    assert_eq!(
        numbers, expected,
        "results 1..={SUITE_CASES} in order:\n{outcome}"
    );
    for result in &report.results {
        assert!(result.ok, "not ok: {}\n{outcome}", result.name);
        assert!(
            result.directive.is_none(),
            "a directive ({:?}) on {}:\n{outcome}",
            result.directive,
            result.name
        );
    }
    let summary = report
        .summary
        .expect("judged present by boot_expecting_pass");
    assert_eq!(
        (summary.passed, summary.failed),
        (SUITE_CASES, 0),
        "the summary:\n{outcome}"
    );
}

/// The Raspberry Pi 4 DTB, or a failure that says how to fetch it: a
/// raspi4b run without it would not test the real boot path.
// Each test file compiles this module on its own; guest_virt has no use for it.
#[allow(dead_code)]
pub fn require_rpi4_dtb() -> PathBuf {
    match artifacts::find_rpi4_dtb(None) {
        Ok(Some(path)) => path,
        Ok(None) => panic!(
            "{RPI4_DTB_FILE_NAME} is missing (looked at ${} and {}): run `./qemu-run.sh --machine raspi4b` or `./qemu-run.sh test`, which fetch it",
            artifacts::DTB_ENV,
            artifacts::cached_rpi4_dtb().display()
        ),
        Err(error) => panic!("{error}"),
    }
}
