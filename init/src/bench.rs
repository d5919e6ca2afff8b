//! The benchmark programs: each row times one operation many times and
//! prints one `BENCH` line (the runner's protocol, see src/bench/ in the
//! host package).

use abi::bench::{BenchParameter, MAX_ITERATIONS, WARM_UP_ITERATIONS};
use abi::Syscall;
use sdk::println;
use sdk::syscall;
use sdk::timing::{empty_delta, timed_syscall};

/// Every sample of the row being measured (kept to compute the median).
static SAMPLES: spin::Mutex<[u64; MAX_ITERATIONS as usize]> =
    spin::Mutex::new([0; MAX_ITERATIONS as usize]);

/// An invalid syscall number: the full slow path that answers an error.
const INVALID_SYSCALL: u64 = 999;

/// The rows that run in one thread.
pub fn run_single_thread_rows(parameter: BenchParameter) -> i32 {
    let mut failures = 0;
    if parameter.runs("floor_svc_eret") {
        if syscall::bench_floor(true).is_ok() {
            // Every syscall but BenchFloor returns at once while the floor
            // is on, printing included: print after turning it off.
            let row = time_row(parameter, || timed_syscall(Syscall::Null.number(), 0));
            if syscall::bench_floor(false).is_err() {
                failures += 1;
            }
            print_row(parameter, "floor_svc_eret", row);
        } else {
            println!("BENCH-ERROR name=floor_svc_eret reason=the kernel refused the floor");
            failures += 1;
        }
    }
    if parameter.runs("null_syscall") {
        measure(parameter, "null_syscall", || {
            timed_syscall(Syscall::Null.number(), 0)
        });
    }
    if parameter.runs("syscall_slow_path_error") {
        measure(parameter, "syscall_slow_path_error", || {
            timed_syscall(INVALID_SYSCALL, 0)
        });
    }
    if parameter.runs("yield_no_switch") {
        measure(parameter, "yield_no_switch", || {
            timed_syscall(Syscall::Yield.number(), 0)
        });
    }
    failures
}

/// Yield round trips to the partner thread in another address space.
pub fn run_yield_ping(parameter: BenchParameter) -> i32 {
    if parameter.runs("yield_switch_round_trip") {
        measure(parameter, "yield_switch_round_trip", || {
            timed_syscall(Syscall::Yield.number(), 0)
        });
    }
    0
}

/// Yields back to the ping thread, for as many rounds as it can need
/// (extra rounds after it has ended are harmless).
pub fn run_yield_partner(parameter: BenchParameter) -> i32 {
    if parameter.runs("yield_switch_round_trip") {
        let rounds = 2 * (parameter.iterations + WARM_UP_ITERATIONS + 16);
        for _ in 0..rounds {
            let _ = syscall::yield_now();
        }
    }
    0
}

/// One row's statistics, per operation, overhead already subtracted.
struct Row {
    iterations: usize,
    min: u64,
    median: u64,
    mean_tenths: u64,
    max: u64,
    overhead: u64,
}

/// Times `operation` (which returns one counter delta) and prints the row.
fn measure(parameter: BenchParameter, name: &str, operation: impl FnMut() -> u64) {
    let row = time_row(parameter, operation);
    print_row(parameter, name, row);
}

fn time_row(parameter: BenchParameter, mut operation: impl FnMut() -> u64) -> Row {
    let overhead = (0..64).map(|_| empty_delta()).min().unwrap_or(0);
    for _ in 0..WARM_UP_ITERATIONS {
        operation();
    }
    let iterations = parameter.iterations.min(MAX_ITERATIONS) as usize;
    let mut samples = SAMPLES.lock();
    let samples = &mut samples[..iterations];
    for sample in samples.iter_mut() {
        *sample = operation().saturating_sub(overhead);
    }
    samples.sort_unstable();
    let sum: u64 = samples.iter().sum();
    Row {
        iterations,
        min: samples[0],
        median: samples[iterations / 2],
        mean_tenths: sum * 10 / iterations as u64,
        max: samples[iterations - 1],
        overhead,
    }
}

fn print_row(parameter: BenchParameter, name: &str, row: Row) {
    println!(
        "BENCH name={name} unit={} iterations={} min={} median={} mean={}.{} max={} overhead={}",
        parameter.unit(),
        row.iterations,
        row.min,
        row.median,
        row.mean_tenths / 10,
        row.mean_tenths % 10,
        row.max,
        row.overhead,
    );
}
