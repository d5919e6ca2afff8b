//! A kernel bug is reported, not hidden: a fault at EL1 prints a decoded
//! panic report and QEMU exits with status 2 (`portcullis.crash=` makes the
//! kernel fault on purpose after boot).

mod common;

use portcullis::{GuestMode, Machine};

fn crash(kind: &str) -> portcullis::RunOutcome {
    let mut request = common::request(Machine::Virt, GuestMode::Demo);
    request
        .boot_options
        .push(format!("portcullis.crash={kind}"));
    let outcome = common::boot_serialised(&request);
    assert!(
        !outcome.passed(),
        "a kernel panic must fail the run:\n{outcome}"
    );
    assert_eq!(
        outcome.exit_code(),
        2,
        "status 2 means kernel panic:\n{outcome}"
    );
    assert!(
        outcome
            .guest_output
            .contains("KERNEL PANIC: data abort (EL1) in the kernel"),
        "{outcome}"
    );
    outcome
}

#[test]
fn a_kernel_data_abort_is_reported_and_exits_with_status_2() {
    let outcome = crash("data-abort");
    assert!(
        outcome.guest_output.contains("far 0xffff8000dead0000"),
        "{outcome}"
    );
    assert!(
        outcome.guest_output.contains("x29 "),
        "registers are dumped:\n{outcome}"
    );
}

#[test]
fn a_kernel_stack_overflow_hits_the_guard_page_and_is_named() {
    let outcome = crash("stack-overflow");
    assert!(
        outcome
            .guest_output
            .contains("kernel stack overflow: the access hit the guard page"),
        "{outcome}"
    );
}
