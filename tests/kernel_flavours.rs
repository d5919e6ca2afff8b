//! The three builds of the kernel (docs/abi.md, "Calls of test and bench
//! images"): the default image, which users boot, has no test or bench
//! call; the test image has the test calls and not the bench floor; the
//! bench image has the bench floor and none of the test calls (they would
//! touch the paths it measures: the thread counters). Checked by the
//! functions each feature compiles in (`llvm-nm`; each is kept out of line
//! for this), and by booting: the default image ignores a request to crash.

mod common;

use portcullis::artifacts::{self, KernelFlavour};
use portcullis::profile::symbols::SymbolTable;
use portcullis::{GuestMode, Machine};

/// Code only `test-calls` compiles in.
const TEST_CALLS: [&str; 4] = [
    "debug_thread_stats",
    "debug_check_invariants",
    "check_at_tick",
    "debug_rseq_counters",
];
/// Code only `bench-calls` compiles in (the floor's vector table and its
/// kernel entries, the syscall's handler).
const BENCH_CALLS: [&str; 4] = [
    "floor_vectors",
    "portcullis_el0_floor_sync",
    "end_floor",
    "bench_floor",
];

fn names(flavour: KernelFlavour) -> Vec<String> {
    let elf = artifacts::flavoured_kernel_elf(flavour).unwrap_or_else(|e| panic!("{e}"));
    let table =
        SymbolTable::read(&elf, &artifacts::workspace_root()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!table.is_empty(), "no symbols in {}", elf.display());
    table.names().map(str::to_string).collect()
}

/// Does some symbol's last path segment start with `function`?
fn has(names: &[String], function: &str) -> bool {
    names.iter().any(|name| {
        let last = name.rsplit("::").next().unwrap_or(name);
        last == function || last.starts_with(&format!("{function}<"))
    })
}

fn check(flavour: KernelFlavour, test_calls: bool, bench_calls: bool) {
    let names = names(flavour);
    for function in TEST_CALLS {
        assert_eq!(
            has(&names, function),
            test_calls,
            "{function} in the {} image",
            flavour.name()
        );
    }
    for function in BENCH_CALLS {
        assert_eq!(
            has(&names, function),
            bench_calls,
            "{function} in the {} image",
            flavour.name()
        );
    }
}

#[test]
fn the_default_image_has_no_test_or_bench_call() {
    check(KernelFlavour::Default, false, false);
}

#[test]
fn the_test_image_has_the_test_calls_only() {
    check(KernelFlavour::Test, true, false);
}

#[test]
fn the_bench_image_has_the_bench_floor_only() {
    check(KernelFlavour::Bench, false, true);
}

#[test]
fn the_default_image_does_not_crash_on_purpose() {
    let mut request = common::request(Machine::Virt, GuestMode::Demo);
    request
        .boot_options
        .push("portcullis.crash=data-abort".into());
    let outcome = common::boot_serialised(&request);
    assert!(
        outcome.guest_output.contains(
            "portcullis.crash=data-abort ignored: only the test image crashes on purpose"
        ),
        "{outcome}"
    );
    assert!(outcome.passed(), "the demo goes on:\n{outcome}");
}
