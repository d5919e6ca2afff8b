//! The verdicts on whole runs: the cases the integration tests rely on.

use std::time::Duration;

use super::*;
use crate::guest_mode::GuestMode;
use crate::qemu::{ProcessEnd, ProcessOutput};

const BANNER: &str =
    "Portcullis 0.1.0 on virt: entered at EL1, 1024 MiB RAM, timer 62500000 Hz\r\n";

fn finished(end: ProcessEnd, uart: &str) -> ProcessOutput {
    ProcessOutput {
        end,
        stdout: format!("{BANNER}{uart}"),
        stderr: String::new(),
        elapsed: Duration::from_millis(1500),
    }
}

fn judge_test(end: ProcessEnd, uart: &str) -> RunOutcome {
    RunOutcome::judge(GuestMode::Test, finished(end, uart))
}

const ALL_PASS: &str = "TAP version 13\r\n1..3\r\nok 1 - boot: banner\r\nok 2 - ipc: call\r\n# took 212 instructions\r\nok 3 - caps: revoke\r\n# portcullis: 3 passed, 0 failed\r\n";

#[test]
fn all_ok_with_summary_and_status_0_passes() {
    let outcome = judge_test(ProcessEnd::Exited(0), ALL_PASS);
    assert!(outcome.passed(), "{outcome}");
    assert_eq!(outcome.exit_code(), 0);
    assert_eq!(
        outcome.verdict_line(),
        "PASS: test mode, 3 tests passed in 1.5 s"
    );
}

#[test]
fn one_not_ok_fails_and_names_the_test() {
    let uart = "TAP version 13\r\n1..2\r\nok 1 - a\r\nnot ok 2 - ipc: reply cap\r\n# expected 0, got 3\r\n# portcullis: 1 passed, 1 failed\r\n";
    let outcome = judge_test(ProcessEnd::Exited(STATUS_TEST_FAILED), uart);
    assert!(!outcome.passed());
    assert_eq!(
        outcome.failures,
        vec![
            FailureReason::QemuStatus(1),
            FailureReason::TestFailed {
                number: 2,
                name: "ipc: reply cap".into()
            },
        ]
    );
    assert_eq!(outcome.exit_code(), 1);
}

#[test]
fn a_failure_is_caught_even_if_qemu_exits_0() {
    let uart = "1..1\nnot ok 1 - a\n# portcullis: 0 passed, 1 failed\n";
    let outcome = judge_test(ProcessEnd::Exited(0), uart);
    assert_eq!(
        outcome.failures,
        vec![FailureReason::TestFailed {
            number: 1,
            name: "a".into()
        }]
    );
    assert_eq!(outcome.exit_code(), STATUS_TEST_FAILED);
}

#[test]
fn a_panic_fails_and_keeps_the_report() {
    let uart = "TAP version 13\r\n1..3\r\nok 1 - a\r\nKERNEL PANIC: synchronous exception at EL1\r\n  ESR_EL1 = 0x96000045 (data abort, translation fault level 1)\r\n  FAR_EL1 = 0x0000000000000008\r\n";
    let outcome = judge_test(ProcessEnd::Exited(STATUS_KERNEL_PANIC), uart);
    assert!(outcome.failures.contains(&FailureReason::KernelPanic(
        "KERNEL PANIC: synchronous exception at EL1".into()
    )));
    assert!(outcome.failures.contains(&FailureReason::MissingSummary));
    assert_eq!(outcome.exit_code(), STATUS_KERNEL_PANIC);
    let panic = outcome.report.panic.as_ref().expect("panic parsed");
    assert_eq!(panic.details.len(), 2);
    assert!(outcome.to_string().contains("FAR_EL1 = 0x0000000000000008"));
}

#[test]
fn a_panic_in_demo_mode_fails_too() {
    let outcome = RunOutcome::judge(
        GuestMode::Demo,
        finished(ProcessEnd::Exited(0), "KERNEL PANIC: out of memory\n"),
    );
    assert_eq!(
        outcome.failures,
        vec![FailureReason::KernelPanic(
            "KERNEL PANIC: out of memory".into()
        )]
    );
    assert_eq!(outcome.exit_code(), STATUS_KERNEL_PANIC);
}

#[test]
fn missing_summary_fails_even_if_every_result_is_ok() {
    let uart = "TAP version 13\r\n1..2\r\nok 1 - a\r\nok 2 - b\r\n";
    let outcome = judge_test(ProcessEnd::Exited(0), uart);
    assert_eq!(outcome.failures, vec![FailureReason::MissingSummary]);
    assert_eq!(outcome.exit_code(), STATUS_TEST_FAILED);
}

#[test]
fn fewer_results_than_planned_fails() {
    let uart =
        "TAP version 13\r\n1..3\r\nok 1 - a\r\nok 2 - b\r\n# portcullis: 2 passed, 0 failed\r\n";
    let outcome = judge_test(ProcessEnd::Exited(0), uart);
    assert_eq!(
        outcome.failures,
        vec![FailureReason::PlanMismatch { planned: 3, ran: 2 }]
    );
}

#[test]
fn missing_plan_and_misnumbered_results_fail() {
    let uart = "ok 1 - a\nok 3 - b\n# portcullis: 2 passed, 0 failed\n";
    let outcome = judge_test(ProcessEnd::Exited(0), uart);
    assert_eq!(
        outcome.failures,
        vec![
            FailureReason::MissingPlan,
            FailureReason::OutOfOrder {
                expected: 2,
                found: 3
            }
        ]
    );
}

#[test]
fn a_summary_that_disagrees_with_the_results_fails() {
    let uart = "1..2\nok 1 - a\nnot ok 2 - b # TODO known\n# portcullis: 2 passed, 0 failed\n";
    let outcome = judge_test(ProcessEnd::Exited(0), uart);
    assert_eq!(
        outcome.failures,
        vec![FailureReason::SummaryMismatch {
            claimed: Summary {
                passed: 2,
                failed: 0
            },
            counted: Summary {
                passed: 1,
                failed: 0
            }
        }]
    );
}

#[test]
fn an_empty_suite_is_not_a_pass() {
    let outcome = judge_test(
        ProcessEnd::Exited(0),
        "TAP version 13\n1..0\n# portcullis: 0 passed, 0 failed\n",
    );
    assert_eq!(outcome.failures, vec![FailureReason::NoTests]);
}

#[test]
fn a_timeout_fails_with_status_124_and_keeps_partial_output() {
    let limit = Duration::from_secs(120);
    let outcome = judge_test(
        ProcessEnd::TimedOut(limit),
        "TAP version 13\r\n1..3\r\nok 1 - a\r\n",
    );
    assert_eq!(
        outcome.failures,
        vec![
            FailureReason::TimedOut(limit),
            FailureReason::PlanMismatch { planned: 3, ran: 1 },
            FailureReason::MissingSummary,
        ]
    );
    assert_eq!(outcome.exit_code(), STATUS_TIMED_OUT);
    assert!(outcome.to_string().contains("ok 1 - a"));
}

#[test]
fn demo_needs_the_banner_and_status_0() {
    let passing = RunOutcome::judge(
        GuestMode::Demo,
        finished(ProcessEnd::Exited(0), "demo: ping -> pong\r\n"),
    );
    assert!(passing.passed(), "{passing}");

    let silent = RunOutcome::judge(
        GuestMode::Demo,
        ProcessOutput {
            end: ProcessEnd::Exited(0),
            stdout: String::new(),
            stderr: "qemu-system-aarch64: could not load kernel\n".into(),
            elapsed: Duration::ZERO,
        },
    );
    assert_eq!(silent.failures, vec![FailureReason::MissingBanner]);
    assert!(silent.to_string().contains("could not load kernel"));
}

#[test]
fn a_signal_maps_to_128_plus_its_number() {
    let outcome = judge_test(ProcessEnd::Signalled(9), ALL_PASS);
    assert_eq!(outcome.failures, vec![FailureReason::Signalled(9)]);
    assert_eq!(outcome.exit_code(), 137);
}
