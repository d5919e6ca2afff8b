//! Boots the kernel on QEMU `raspi4b`: `kernel8.img` entered at EL2 with
//! the Pi 4 device tree, as the real firmware does, and the ELF entered
//! at EL3; and `kernel8.img` with a tree shaped like the one the firmware
//! passes.

mod common;

use arch::device_tree::writer::FirmwarePatches;
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
    common::assert_whole_suite_passed(&outcome);
    // The secondaries wait in QEMU's stub on the tree's spin table.
    assert!(
        outcome
            .guest_output
            .contains("[kernel] 4 cores running (spin table)"),
        "not 4 cores:\n{outcome}"
    );
    // The driver saw the 4 CPUs too, so the SMP cases ran (none was
    // skipped: `assert_whole_suite_passed` refuses a `# SKIP`).
    assert!(
        outcome.guest_output.contains("# suite: 4 CPUs running"),
        "the suite did not run on 4 CPUs:\n{outcome}"
    );
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
    // QEMU started every core at the ELF's entry; the kernel's park let
    // them go (whatever the tree says of a spin table).
    assert!(
        outcome
            .guest_output
            .contains("[kernel] 4 cores running (released from the boot park)"),
        "not 4 cores:\n{outcome}"
    );
}

/// `--cpus 2` on raspi4b, which always has four: the runner passes
/// `portcullis.cpus=2`, and the kernel starts one secondary.
#[test]
fn two_cpus_on_raspi4b_are_two_cores_running() {
    let dtb = common::require_rpi4_dtb();
    let request = portcullis::RunRequest {
        dtb: Some(dtb),
        cpus: Some(2),
        ..common::request(Machine::Raspi4b, GuestMode::Demo)
    };
    let outcome = common::boot_expecting_pass(&request);
    assert!(
        outcome
            .guest_output
            .contains("[kernel] 2 cores running (spin table)"),
        "not 2 cores:\n{outcome}"
    );
}

/// The SD card's tree with what the firmware writes into it (memory,
/// `/chosen`, the boot loader's configuration in a `no-map`
/// reserved-memory node). QEMU then rewrites the memory node and
/// `/chosen/bootargs` itself; the reservations reach the kernel as the
/// firmware made them, and the kernel names them.
#[test]
fn kernel8_img_boots_with_a_tree_shaped_like_the_firmwares() {
    let debian = std::fs::read(common::require_rpi4_dtb()).expect("read the Pi 4 DTB");
    let firmware = FirmwarePatches::default();
    let dtb = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("firmware-shaped.dtb");
    std::fs::write(&dtb, firmware.apply(&debian)).expect("write the tree");
    let request = portcullis::RunRequest {
        dtb: Some(dtb),
        ..common::request(Machine::Raspi4b, GuestMode::Demo)
    };
    let outcome = common::boot_expecting_pass(&request);
    let (start, size) = firmware.blconfig;
    let kept = format!("[kernel] kept from the firmware: 0x0+0x1000 {start:#x}+{size:#x} (no-map)");
    assert!(
        outcome.guest_output.contains(&kept),
        "no `{kept}`:\n{outcome}"
    );
}
