//! The short fuzz run of `./qemu-run.sh test`: 150 000 random syscalls
//! from a fixed seed, no kernel panic, and the kernel's invariants hold
//! after every round, and every judged message the fuzzers check
//! arrives as judged.
//!
//! Under `-icount shift=0`, as `./qemu-run.sh fuzz` runs: the guest's
//! clock counts its instructions, so timer ticks (preemptions, the
//! invariant checks at ticks) fall at the same instructions every time
//! and the run is the same run on any host, however loaded. (Without
//! it, ticks follow host time: how the fuzzers interleave, and so how
//! many syscalls threads that kill each other get to make, varied with
//! the host's load, by tens of thousands.) A failure reproduces exactly
//! with `./qemu-run.sh fuzz --seed 20261130 --calls 150000`.

mod common;

use portcullis::{GuestMode, Machine};

const SEED: u64 = 20_261_130;
const CALLS: u64 = 150_000;

#[test]
fn random_syscalls_do_not_crash_the_kernel_or_break_its_invariants() {
    let mut request = common::request(Machine::Virt, GuestMode::Fuzz);
    request.icount = true;
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
    // The judged channel (init/src/fuzz.rs): messages a filter allowed on
    // their bytes, checked on arrival while a scribbler rewrote them.
    let (checked, mismatches): (u64, u64) = outcome
        .guest_output
        .lines()
        .find_map(|line| {
            let counts = line
                .trim()
                .strip_prefix("# fuzz: judged messages checked: ")?;
            let (checked, mismatches) = counts.split_once(", mismatches: ")?;
            Some((checked.parse().ok()?, mismatches.trim().parse().ok()?))
        })
        .unwrap_or_else(|| panic!("no judged-messages line:\n{outcome}"));
    assert_eq!(mismatches, 0, "judged messages changed:\n{outcome}");
    assert!(checked > 0, "no judged message was checked:\n{outcome}");
}
