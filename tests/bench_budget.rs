//! The regression guard: the benchmark suite, shortened to 1000 iterations
//! per row, under `-icount shift=0`, against `bench/budgets.toml`. A median
//! over its budget, a budgeted row that did not report, and a row without a
//! budget all fail, each named with its numbers.

mod common;

use std::fs;

use portcullis::artifacts::workspace_root;
use portcullis::bench::{results_text, BenchOutcome, BenchSettings, Budgets, BUDGET_FILE};
use portcullis::qemu::Echo;
use portcullis::Machine;

/// Enough samples for a stable median (the counts are deterministic under
/// icount; the median only steps over timer interrupts), and short enough
/// to keep the run to a few seconds.
const ITERATIONS: u32 = 1000;

#[test]
fn every_benchmark_median_is_within_its_budget() {
    let path = workspace_root().join(BUDGET_FILE);
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    let budgets = Budgets::parse(&text).unwrap_or_else(|error| panic!("{error}"));

    let settings = BenchSettings {
        iterations: Some(ITERATIONS),
        ..BenchSettings::new(Machine::Virt)
    };
    let run = common::boot_serialised(&settings.run_request(Echo::Quiet));
    let outcome = BenchOutcome::judge(run, settings.unit());
    assert!(outcome.passed(), "the benchmark run failed:\n{outcome}");

    let results = &outcome.report.results;
    let violations = budgets.check(results);
    assert!(
        violations.is_empty(),
        "{} the budgets in {BUDGET_FILE}:\n{}\n\nthis run ({ITERATIONS} iterations):\n{}",
        if violations.len() == 1 {
            "one benchmark breaks".to_string()
        } else {
            format!("{} benchmarks break", violations.len())
        },
        violations
            .iter()
            .map(|violation| format!("  - {violation}"))
            .collect::<Vec<_>>()
            .join("\n"),
        results_text(results)
    );
    println!("{}", results_text(results));
}
