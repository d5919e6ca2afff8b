//! A system image reaches the kernel on every QEMU boot path: the runner
//! loads it (`--system-image`) at the board's fixed address, the kernel
//! finds it there (QEMU names no initrd in the device tree), keeps its
//! RAM and says so. The root (init, for now) does not read it yet; the
//! demo runs as without one.

mod common;

use std::path::{Path, PathBuf};

use abi::system::image::{checksum, ImageHeader, HEADER_BYTES};
use portcullis::qemu::ProcessEnd;
use portcullis::{GuestMode, Machine, RunRequest};

/// A tiny valid image: a header and a few bytes of plan.
fn system_image() -> (PathBuf, usize) {
    let body = b"not yet a plan, but checksummed".to_vec();
    let header = ImageHeader {
        total_bytes: (HEADER_BYTES + body.len()) as u64,
        plan_offset: HEADER_BYTES as u64,
        plan_bytes: body.len() as u64,
        checksum: checksum(&body),
    };
    let mut image = header.encode().to_vec();
    image.extend_from_slice(&body);
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("guest-system.img");
    std::fs::write(&path, &image).expect("write the system image");
    (path, image.len())
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
fn without_an_image_the_kernel_says_nothing_of_one() {
    let outcome = common::boot_expecting_pass(&common::request(Machine::Virt, GuestMode::Demo));
    assert!(!outcome.guest_output.contains("system image"), "{outcome}");
}
