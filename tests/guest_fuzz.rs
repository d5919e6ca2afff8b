//! The short fuzz run of `./qemu-run.sh test`: 150 000 random syscalls
//! from a fixed seed (so a failure reproduces with
//! `./qemu-run.sh fuzz --seed 20261130 --calls 150000`), no kernel panic,
//! and the kernel's invariants hold after every round.

mod common;

use portcullis::{GuestMode, Machine};

const SEED: u64 = 20_261_130;
const CALLS: u64 = 150_000;

#[test]
fn random_syscalls_do_not_crash_the_kernel_or_break_its_invariants() {
    let mut request = common::request(Machine::Virt, GuestMode::Fuzz);
    request
        .boot_options
        .push(format!("portcullis.fuzz.seed={SEED}"));
    request
        .boot_options
        .push(format!("portcullis.fuzz.calls={CALLS}"));
    let outcome = common::boot_expecting_pass(&request);
    let issued: u64 = outcome
        .guest_output
        .lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("# fuzz: seed ")?
                .split(", ")
                .nth(1)?
                .trim_start_matches("at least ")
                .split_once(" syscalls issued")?
                .0
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no fuzz summary line:\n{outcome}"));
    assert!(
        issued >= 100_000,
        "only {issued} syscalls were issued:\n{outcome}"
    );
}
