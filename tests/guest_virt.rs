//! Boots the kernel on QEMU `virt` (ELF entered at EL1).

mod common;

use portcullis::qemu::ProcessEnd;
use portcullis::{GuestMode, Machine};

#[test]
fn every_in_kernel_test_passes_on_virt() {
    let outcome = common::boot_expecting_pass(&common::request(Machine::Virt, GuestMode::Test));
    let report = &outcome.report;
    assert!(!report.results.is_empty(), "no TAP results:\n{outcome}");
    assert!(
        report.results.iter().all(|result| result.ok),
        "a TAP line is not ok:\n{outcome}"
    );
    let summary = report
        .summary
        .expect("judged present by boot_expecting_pass");
    assert_eq!(summary.failed, 0, "{outcome}");
    assert_eq!(summary.passed, report.results.len(), "{outcome}");
}

#[test]
fn demo_on_virt_prints_the_banner_and_exits_0() {
    let outcome = common::boot_expecting_pass(&common::request(Machine::Virt, GuestMode::Demo));
    assert_eq!(outcome.end, ProcessEnd::Exited(0), "{outcome}");
    let banner = outcome.report.banner.as_deref().unwrap_or_default();
    assert!(
        banner.contains("virt") && banner.contains("EL1"),
        "banner does not say virt and EL1: {banner:?}\n{outcome}"
    );
}
