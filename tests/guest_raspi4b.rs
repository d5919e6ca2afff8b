//! Boots the kernel on QEMU `raspi4b`: `kernel8.img` entered at EL2 with
//! the Pi 4 device tree, as the real firmware does, and the ELF entered
//! at EL3.

mod common;

use portcullis::qemu::ProcessEnd;
use portcullis::{GuestMode, Machine};

#[test]
fn every_in_kernel_test_passes_on_raspi4b_from_kernel8_img() {
    let dtb = common::require_rpi4_dtb();
    let request = portcullis::RunRequest {
        dtb: Some(dtb),
        ..common::request(Machine::Raspi4b, GuestMode::Test)
    };
    let outcome = common::boot_expecting_pass(&request);
    let summary = outcome
        .report
        .summary
        .expect("judged present by boot_expecting_pass");
    assert_eq!(summary.failed, 0, "{outcome}");
    assert!(summary.passed > 0, "{outcome}");
    // kernel8.img is entered at EL2, as the Pi's firmware enters it.
    let banner = outcome.report.banner.as_deref().unwrap_or_default();
    assert!(
        banner.contains("EL2"),
        "banner does not say the kernel was entered at EL2: {banner:?}\n{outcome}"
    );
}

#[test]
fn elf_entered_at_el3_on_raspi4b_boots_the_demo() {
    let dtb = common::require_rpi4_dtb();
    let request = portcullis::RunRequest {
        dtb: Some(dtb),
        elf: true,
        ..common::request(Machine::Raspi4b, GuestMode::Demo)
    };
    let outcome = common::boot_expecting_pass(&request);
    assert_eq!(outcome.end, ProcessEnd::Exited(0), "{outcome}");
    let banner = outcome.report.banner.as_deref().unwrap_or_default();
    assert!(
        banner.contains("EL3"),
        "banner does not say the kernel was entered at EL3: {banner:?}\n{outcome}"
    );
}
