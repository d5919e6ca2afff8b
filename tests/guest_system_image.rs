//! A system image reaches the kernel on every QEMU boot path: the runner
//! loads it (`--system-image`) at the board's fixed address, the kernel
//! finds it there (QEMU names no initrd in the device tree), keeps its
//! RAM and says so, and the root task runs it: the demo's description
//! boots on all three paths. A damaged image is refused by the root with
//! one line, never run.

mod common;

use std::path::{Path, PathBuf};

use portcullis::qemu::ProcessEnd;
use portcullis::{GuestMode, Machine, RunRequest};

/// The demo's system image (`systems/demo.toml`, built by build.rs).
fn system_image() -> (PathBuf, usize) {
    let path = portcullis::artifacts::own_system_image(GuestMode::Demo).expect("the demo's image");
    let bytes = std::fs::metadata(&path).expect("its size").len() as usize;
    (path, bytes)
}

/// Boots the demo with the image and checks the kernel's line.
fn boots_with_the_image(request: RunRequest, address: u64) {
    let (path, bytes) = system_image();
    let request = RunRequest {
        system_image: Some(path),
        ..request
    };
    let outcome = common::boot_expecting_pass(&request);
    assert_eq!(outcome.end, ProcessEnd::Exited(0), "{outcome}");
    let line = format!(
        "[kernel] system image at {address:#x}, {bytes} bytes (at the board's load address)"
    );
    assert!(
        outcome.guest_output.lines().any(|l| l.trim_end() == line),
        "no `{line}`:\n{outcome}"
    );
}

#[test]
fn virt_finds_the_image_at_its_load_address() {
    boots_with_the_image(
        common::request(Machine::Virt, GuestMode::Demo),
        arch::boards::virt::SYSTEM_IMAGE_ADDRESS,
    );
}

#[test]
fn raspi4b_finds_the_image_from_kernel8_img_at_el2() {
    boots_with_the_image(
        RunRequest {
            dtb: Some(common::require_rpi4_dtb()),
            ..common::request(Machine::Raspi4b, GuestMode::Demo)
        },
        arch::boards::rpi4::SYSTEM_IMAGE_ADDRESS,
    );
}

#[test]
fn raspi4b_finds_the_image_from_the_elf_at_el3() {
    boots_with_the_image(
        RunRequest {
            dtb: Some(common::require_rpi4_dtb()),
            elf: true,
            ..common::request(Machine::Raspi4b, GuestMode::Demo)
        },
        arch::boards::rpi4::SYSTEM_IMAGE_ADDRESS,
    );
}

#[test]
fn a_damaged_image_is_refused_by_the_root() {
    let (demo, _) = system_image();
    let mut bytes = std::fs::read(&demo).expect("the demo's image");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x5a;
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("damaged-system.img");
    std::fs::write(&path, &bytes).expect("write the damaged image");
    let outcome = common::boot_serialised(&RunRequest {
        system_image: Some(path),
        ..common::request(Machine::Virt, GuestMode::Demo)
    });
    assert_eq!(outcome.end, ProcessEnd::Exited(1), "{outcome}");
    let line = "system: the system image is unusable: its checksum does not match (damaged or cut)";
    assert!(
        outcome.guest_output.lines().any(|l| l.trim_end() == line),
        "no `{line}`:\n{outcome}"
    );
}
