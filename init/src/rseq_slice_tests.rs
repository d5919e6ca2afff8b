//! The time-slice extension (issue 21; the case thread and workers of
//! `rseq_tests.rs`): a thread at the highest priority asks not to be
//! preempted (`SLICE_REQUEST` in its rseq area) while a peer of the same
//! priority is ready on its CPU, so every tick would hand the CPU over.
//!
//! * Granted: at a tick the kernel grants one extension (`SLICE_GRANTED`);
//!   the thread ends it with `SliceYield`, which says it had one (1) and
//!   hands the CPU to the peer; the kernel clears the bit.
//! * Overrun: the thread sees the grant and keeps running: it is
//!   preempted at the end of the extension (the peer runs), the kernel
//!   clears the bit and counts the overrun.
//! * No starvation: the thread keeps its request set for 300 ms and never
//!   yields: the peer still gets its turns (one extension per turn, each
//!   an overrun).

use crate::rseq_tests::{join, kernel_counters, start_worker, AREAS, OWN_TCB, PRIORITY};
use abi::rseq::{SLICE_GRANTED, SLICE_REQUEST};
use core::sync::atomic::{AtomicU64, Ordering};
use sdk::println;
use sdk::probe::counter;
use sdk::rseq::{self, SIGNATURE};

/// The priority of both threads and of the case thread: the highest.
pub const SLICE_PRIORITY: u64 = abi::tcb::MAX_PRIORITY;
/// How long the starvation phase keeps its request set.
const STARVE_MS: u64 = 300;
/// The peer's count: it runs only when the user does not.
static PEER_COUNT: AtomicU64 = AtomicU64::new(0);
/// Set by the user when it is done: the peer stops.
static STOP: AtomicU64 = AtomicU64::new(0);

/// 5. The user (worker 0) and its peer (worker 1) on CPU 1 (0 on one
///    CPU), both at the highest priority; this thread then steps down
///    (it shares CPU 0 with them on one CPU) and waits.
pub(crate) fn slice(cpus: u64) -> i32 {
    let cpu = if cpus > 1 { 1 } else { 0 };
    if let Err(check) = start_worker(1, crate::rseq_tests::ROLE_SLICE_PEER, cpu, SLICE_PRIORITY) {
        return check;
    }
    if let Err(check) = start_worker(0, crate::rseq_tests::ROLE_SLICE_USER, cpu, SLICE_PRIORITY) {
        return check;
    }
    expect!(5, OWN_TCB.set_priority(PRIORITY), Ok(()));
    join(2)
}

/// Spins until `done` or `milliseconds` of counter time passed; whether
/// it is done.
fn spin_until(milliseconds: u64, mut done: impl FnMut() -> bool) -> bool {
    let (start, frequency) = counter();
    let ticks = frequency / 1000 * milliseconds;
    while counter().0.wrapping_sub(start) < ticks {
        if done() {
            return true;
        }
    }
    done()
}

/// The peer: counts until the user is done (at most 60 s).
pub(crate) fn peer(_index: usize) -> i32 {
    let ran = spin_until(60_000, || {
        PEER_COUNT.fetch_add(1, Ordering::Relaxed);
        STOP.load(Ordering::Acquire) != 0
    });
    if ran {
        0
    } else {
        1
    }
}

/// The user: the three phases.
pub(crate) fn user(index: usize) -> i32 {
    let status = phases(index);
    STOP.store(1, Ordering::Release);
    status
}

fn phases(index: usize) -> i32 {
    let area = &AREAS[index];
    expect!(1, rseq::register(area, SIGNATURE), Ok(()));
    // Nothing granted: SliceYield says so and does nothing.
    expect!(2, rseq::slice_yield(), Ok(false));
    expect!(3, area.slice(), 0);
    let granted = |area: &rseq::RseqArea| area.slice() & SLICE_GRANTED != 0;

    // Granted and ended with SliceYield. At the next tick the peer is
    // ready: the kernel grants instead of preempting (it clears the
    // request, sets the grant). Under emulation the host may stall this
    // CPU past the 50 us extension before this thread reads the word
    // again: the kernel has then taken the grant back (an overrun; the
    // word is 0): up to 100 attempts. (Under scripts/smp-stress.sh with a
    // host CPU hog, most attempts overrun: 20 were all overruns in about
    // one run in six, at deb3c72 as after it; each costs a tick at most.)
    let before = match kernel_counters(4) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    let taken = |area: &rseq::RseqArea| area.slice() & SLICE_REQUEST == 0;
    let mut attempts = 0;
    let mut yielded = false;
    while attempts < 100 && !yielded {
        attempts += 1;
        area.request_slice_extension();
        let peer_before = PEER_COUNT.load(Ordering::Relaxed);
        if !spin_until(100, || taken(area)) {
            println!(
                "rseq: no extension granted in 100 ms on CPU {} (slice word {:#x}, the peer counted {} meanwhile)",
                sdk::syscall::this_cpu(),
                area.slice(),
                PEER_COUNT.load(Ordering::Relaxed) - peer_before
            );
            return 5;
        }
        if !granted(area) {
            continue;
        }
        let peer_before = PEER_COUNT.load(Ordering::Relaxed);
        match area.end_slice_extension() {
            Ok(true) => {
                // It yielded: the bit is gone, and the peer ran before
                // this thread came back, unless a tick came right after
                // and gave the CPU back before the peer's first add (the
                // host may stall this CPU past that tick too: seen under
                // scripts/smp-stress.sh with a host CPU hog). Then again:
                // a yield that never hands over fails every attempt.
                expect!(7, area.slice(), 0);
                yielded = PEER_COUNT.load(Ordering::Relaxed) > peer_before;
            }
            // Taken back between the read and the call.
            Ok(false) => {}
            Err(error) => {
                println!("rseq: SliceYield: {error:?}");
                return 8;
            }
        }
    }
    expect!(9, yielded, true);
    let after = match kernel_counters(10) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    let first = after.since(&before);
    expect!(11, first.slice_granted >= 1, true);

    // Overrun: granted, not ended: the kernel takes it back at its end
    // and preempts this thread (the peer runs), whether or not this
    // thread saw the grant first.
    // The peer must have run when this thread is back, but for a tick
    // right after the end (as above): up to 5 attempts.
    let before = after;
    let mut overrun_attempts = 0;
    let saw_grant = loop {
        overrun_attempts += 1;
        let peer_before = PEER_COUNT.load(Ordering::Relaxed);
        area.request_slice_extension();
        if !spin_until(100, || taken(area)) {
            return 12;
        }
        let saw_grant = granted(area);
        if !spin_until(100, || !granted(area)) {
            println!("rseq: the extension was not taken back in 100 ms");
            return 13;
        }
        if PEER_COUNT.load(Ordering::Relaxed) > peer_before {
            break saw_grant;
        }
        if overrun_attempts == 5 {
            return 14;
        }
    };
    expect!(15, area.end_slice_extension(), Ok(false));
    let after = match kernel_counters(16) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    let counted = after.since(&before);
    expect!(
        17,
        (counted.slice_granted >= 1, counted.slice_overrun >= 1),
        (true, true)
    );
    println!(
        "rseq: an extension granted and ended by SliceYield (saying 1) at attempt {attempts} ({} granted, {} overrun meanwhile); an overrun (the grant {}seen first), taken back, the peer ran, at attempt {overrun_attempts}",
        first.slice_granted,
        first.slice_overrun,
        if saw_grant { "" } else { "not " }
    );

    // No starvation: the request always set, never a yield.
    let before = after;
    let mut turns = 0u64;
    let mut last = PEER_COUNT.load(Ordering::Relaxed);
    spin_until(STARVE_MS, || {
        if area.slice() & SLICE_REQUEST == 0 {
            area.request_slice_extension();
        }
        let now = PEER_COUNT.load(Ordering::Relaxed);
        if now != last {
            turns += 1;
            last = now;
        }
        false
    });
    let _ = area.end_slice_extension();
    let after = match kernel_counters(18) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    let counted = after.since(&before);
    println!(
        "rseq: {STARVE_MS} ms with the request always set at priority {SLICE_PRIORITY}: the peer had {turns} turns, {} extensions granted, {} overrun",
        counted.slice_granted, counted.slice_overrun
    );
    expect!(19, turns >= 5, true);
    expect!(20, counted.slice_overrun >= 2, true);
    expect!(21, rseq::unregister(area, SIGNATURE), Ok(()));
    0
}
