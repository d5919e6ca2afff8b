//! The rseq rows (`BootProgram::BenchRseq`): one increment of a counter
//! kept per CPU through the SDK's restartable sequence
//! (`rseq_percpu_increment`), of one shared counter with an exclusive
//! load/store loop (`atomic_increment`) and under a lock
//! (`lock_increment`), each timed between two counter reads the compiler
//! does not move accesses across; and `null_syscall` and
//! `syscall_slow_path_error` again from this thread with its rseq area
//! registered (`null_syscall_rseq`, `syscall_slow_path_error_rseq`): with
//! no event the kernel's exit work stays empty, so they should cost what
//! the plain rows cost.

use super::{measure, INVALID_SYSCALL};
use abi::bench::{BenchParameter, WARM_UP_ITERATIONS};
use abi::Syscall;
use core::sync::atomic::{AtomicU64, Ordering};
use sdk::println;
use sdk::rseq::{self, PerCpuCounter, RseqArea, SIGNATURE};
use sdk::timing::{now_ordered, timed_syscall};

static AREA: RseqArea = RseqArea::new();
static PER_CPU: PerCpuCounter<4> = PerCpuCounter::new();
static SHARED: AtomicU64 = AtomicU64::new(0);
static LOCKED: spin::Mutex<u64> = spin::Mutex::new(0);

/// Registers this thread's area, runs the rows, unregisters; the number
/// of rows that failed.
pub fn run(parameter: BenchParameter) -> i32 {
    if let Err(error) = rseq::register(&AREA, SIGNATURE) {
        println!(
            "BENCH-ERROR name=rseq_percpu_increment reason=SetRseq refused the area: {error:?}"
        );
        return 1;
    }
    let mut failures = 0;
    // Every timed and warm-up increment must have counted.
    let increments = u64::from(parameter.iterations.min(abi::bench::MAX_ITERATIONS))
        + u64::from(WARM_UP_ITERATIONS);
    if parameter.runs("rseq_percpu_increment") {
        let mut refused = 0u64;
        measure(parameter, "rseq_percpu_increment", || {
            let start = now_ordered();
            let added = PER_CPU.add(&AREA, 1);
            let end = now_ordered();
            refused += u64::from(added.is_err());
            end.wrapping_sub(start)
        });
        if refused != 0 || PER_CPU.sum() != increments {
            println!(
                "BENCH-ERROR name=rseq_percpu_increment reason={refused} adds refused, the counter holds {} of {increments}",
                PER_CPU.sum()
            );
            failures += 1;
        }
    }
    if parameter.runs("atomic_increment") {
        measure(parameter, "atomic_increment", || {
            let start = now_ordered();
            SHARED.fetch_add(1, Ordering::Relaxed);
            now_ordered().wrapping_sub(start)
        });
        if SHARED.load(Ordering::Relaxed) != increments {
            println!("BENCH-ERROR name=atomic_increment reason=the counter is off");
            failures += 1;
        }
    }
    if parameter.runs("lock_increment") {
        measure(parameter, "lock_increment", || {
            let start = now_ordered();
            *LOCKED.lock() += 1;
            now_ordered().wrapping_sub(start)
        });
        if *LOCKED.lock() != increments {
            println!("BENCH-ERROR name=lock_increment reason=the counter is off");
            failures += 1;
        }
    }
    if parameter.runs("null_syscall_rseq") {
        measure(parameter, "null_syscall_rseq", || {
            timed_syscall(Syscall::Null.number(), 0)
        });
    }
    if parameter.runs("syscall_slow_path_error_rseq") {
        measure(parameter, "syscall_slow_path_error_rseq", || {
            timed_syscall(INVALID_SYSCALL, 0)
        });
    }
    if rseq::unregister(&AREA, SIGNATURE).is_err() {
        println!("bench-rseq: SetRseq refused to unregister the area");
        failures += 1;
    }
    failures
}
