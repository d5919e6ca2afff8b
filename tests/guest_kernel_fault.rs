//! A kernel bug is reported, not hidden: a fault at EL1 prints a decoded
//! panic report and QEMU exits with status 2 (`portcullis.crash=` makes the
//! kernel fault on purpose after boot, or before its console is up).

mod common;

use portcullis::{GuestMode, Machine};

fn crash_on(machine: Machine, kind: &str, report: &str) -> portcullis::RunOutcome {
    // Crashing on purpose is a call of the test image.
    let mut request = common::request(machine, GuestMode::Demo);
    request.image = portcullis::KernelFlavour::Test;
    if machine == Machine::Raspi4b {
        // kernel8.img with the Pi's tree, as the firmware boots it.
        request.dtb = Some(common::require_rpi4_dtb());
    }
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
    assert!(outcome.guest_output.contains(report), "{outcome}");
    outcome
}

fn crash(kind: &str) -> portcullis::RunOutcome {
    crash_on(
        Machine::Virt,
        kind,
        "KERNEL PANIC: data abort (EL1) in the kernel",
    )
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

/// Before the console is up (the device tree has just been read), the
/// panic path starts the UART of the board the loader entered for.
#[test]
fn a_panic_before_the_console_is_up_is_still_reported() {
    let outcome = crash_on(Machine::Virt, "early-panic", "KERNEL PANIC: panicked at");
    assert!(
        outcome.guest_output.contains("a deliberate panic"),
        "{outcome}"
    );
    assert!(
        outcome.report.banner.is_none(),
        "it happened before the banner:\n{outcome}"
    );
}

#[test]
fn a_fault_before_the_console_is_up_is_reported_on_the_pi_uart() {
    let outcome = crash_on(
        Machine::Raspi4b,
        "early-data-abort",
        "KERNEL PANIC: data abort (EL1) in the kernel",
    );
    assert!(
        outcome.guest_output.contains("far 0xffff8000dead0000"),
        "{outcome}"
    );
    assert!(outcome.report.banner.is_none(), "{outcome}");
}
