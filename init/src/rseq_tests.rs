//! Restartable sequences (issue 21): a per-CPU counter kept through the
//! SDK's rseq add stays exact while its threads are preempted (a fast
//! tick made in user space, on one CPU) and moved between CPUs (a
//! migrator, on all of them); the kernel's counters of one run. The
//! single-step, refusal and time-slice scenarios are in
//! `rseq_step_tests.rs` and `rseq_slice_tests.rs`.
//!
//! Each case is one case thread (`RseqMain`, its scenario the parameter;
//! the case's Untyped in slot 2, its VSpace in 3, its TCB in 4, the
//! physical timer's IrqHandler in 5 where the case has one) that makes
//! its workers (`RseqWorker`) as threads of its own program and space
//! (`sdk::thread::bind_to_own_space`); they share its statics, where each
//! leaves its result. Each program returns the number of its first
//! failed check; a worker's failure becomes the case thread's as
//! `1000 + 100 x worker + check`.

use crate::programs::{BootProgram, CNODE_SLOT};
use abi::cap::{CapType, Rights};
use core::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::rseq::{self, PerCpuCounter, RseqArea, SIGNATURE};
use sdk::syscall::{cnode, irq_ack, irq_set_notification, irq_set_timer, retype, this_cpu};
use sdk::tcb::Tcb;
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::VSpace;

/// The scenarios (`RseqMain`'s parameter).
pub const RSEQ_ONE_CPU: u64 = 0;
/// See [`RSEQ_ONE_CPU`].
pub const RSEQ_MIGRATE: u64 = 1;
/// See [`RSEQ_ONE_CPU`].
pub const RSEQ_STEP: u64 = 2;
/// See [`RSEQ_ONE_CPU`].
pub const RSEQ_BAD: u64 = 3;
/// See [`RSEQ_ONE_CPU`].
pub const RSEQ_SLICE: u64 = 4;
/// See [`RSEQ_ONE_CPU`].
pub const RSEQ_COUNTERS: u64 = 5;

/// Adders and adds of the one-CPU scenario (the case's name says the
/// product).
pub const ONE_CPU_WORKERS: u64 = 3;
/// See [`ONE_CPU_WORKERS`].
pub const ONE_CPU_ADDS: u64 = 4_000_000;
/// Adds per worker of the migration scenario at least (two workers per
/// CPU).
pub const MIGRATE_ADDS: u64 = 4_000_000;
/// The user-space tick of the one-CPU scenario: this many per second.
const USER_TICKS_PER_SECOND: u64 = 10_000;

/// The case thread's slots.
pub(crate) const CNODE: u64 = CNODE_SLOT;
pub(crate) const UNTYPED: u64 = 2;
pub(crate) const OWN_VSPACE: VSpace = VSpace(Cptr(3));
pub(crate) const OWN_TCB: Tcb = Tcb(Cptr(4));
const TIMER_IRQ: u64 = 5;
/// A notification the workers signal (wait) and its badged copy (signal).
pub(crate) const DONE: Cptr = Cptr(6);
pub(crate) const DONE_SIGNAL: Cptr = Cptr(7);
/// An endpoint (faults and ends, trace stops) and the badged copies the
/// workers get (slot `ENDPOINT_BADGED + worker`, badge `BADGE + worker`).
pub(crate) const ENDPOINT: Cptr = Cptr(8);
pub(crate) const ENDPOINT_BADGED: u64 = 9;
pub(crate) const BADGE: u64 = 0x5e9_0000;
/// The one-CPU scenario's timer notification.
const TICK: Cptr = Cptr(17);
/// A frame the refusal scenario maps an area into.
pub(crate) const AREA_FRAME: u64 = 18;
/// Workers' TCBs and frames (five each: four stack pages and a buffer).
const WORKER_TCBS: u64 = 20;
const WORKER_FRAMES: u64 = 32;
pub(crate) const MAX_WORKERS: usize = 8;
const STACK_PAGES: u64 = 4;
/// Where the workers' stacks and buffers go (one 64 KiB area each).
const WORKER_AREA: u64 = abi::vspace::FRAME_MAP_START + 0x20_0000;

/// The workers' priority unless a scenario says otherwise: the case
/// thread's (the driver's default).
pub(crate) const PRIORITY: u64 = 100;

/// Worker roles (the low byte of a worker's parameter; its index above).
const ROLE_ADDER: u64 = 1;
pub(crate) const ROLE_STEPPED: u64 = 2;
pub(crate) const ROLE_BAD_SIGNATURE: u64 = 3;
pub(crate) const ROLE_BAD_DESCRIPTOR: u64 = 4;
pub(crate) const ROLE_BAD_ABORT: u64 = 5;
pub(crate) const ROLE_BAD_AREA: u64 = 6;
pub(crate) const ROLE_SLICE_USER: u64 = 7;
pub(crate) const ROLE_SLICE_PEER: u64 = 8;

/// Each worker's area, and the case thread's own.
pub(crate) static AREAS: [RseqArea; MAX_WORKERS] = [const { RseqArea::new() }; MAX_WORKERS];
pub(crate) static OWN_AREA: RseqArea = RseqArea::new();
/// The counter every scenario adds to (one slot per CPU the kernel
/// can run).
pub(crate) static COUNTER: PerCpuCounter<4> = PerCpuCounter::new();
/// What the workers leave for the case thread.
static RESULTS: [AtomicI32; MAX_WORKERS] = [const { AtomicI32::new(-1) }; MAX_WORKERS];
static FINISHED: AtomicU64 = AtomicU64::new(0);
/// Per worker: the aborts its adds saw, and the CPUs it ran its adds on
/// (a bit each).
pub(crate) static ABORTS: [AtomicU64; MAX_WORKERS] = [const { AtomicU64::new(0) }; MAX_WORKERS];
static ADDED: [AtomicU64; MAX_WORKERS] = [const { AtomicU64::new(0) }; MAX_WORKERS];
static CPUS_SEEN: [AtomicU64; MAX_WORKERS] = [const { AtomicU64::new(0) }; MAX_WORKERS];
/// Adds per adder (set by the case thread before any worker starts).
static ADDS: AtomicU64 = AtomicU64::new(0);
/// Set by the case thread once every adder is placed: they start adding.
static GO: AtomicU64 = AtomicU64::new(0);
/// The counter value before which the adders go on adding (0: they stop
/// after their adds).
static UNTIL: AtomicU64 = AtomicU64::new(0);
/// The migration scenario's adders run at least this long.
const MIGRATE_MS: u64 = 1500;
/// CPUs running (set by the case thread before any worker starts).
pub(crate) static CPUS: AtomicU64 = AtomicU64::new(1);

/// The case thread: learns the CPUs, runs its scenario.
pub fn main(scenario: u64) -> i32 {
    let cpus = match OWN_TCB.set_affinity(0) {
        Ok(cpus) => cpus,
        Err(_) => return 1,
    };
    CPUS.store(cpus, Ordering::Relaxed);
    if this_cpu() != 0 {
        return 2;
    }
    if retype(UNTYPED, CapType::Notification, 0, DONE.0, 1).is_err()
        || cnode::mint(CNODE, DONE.0, DONE_SIGNAL.0, Rights::WRITE, Some(1)).is_err()
        || retype(UNTYPED, CapType::Endpoint, 0, ENDPOINT.0, 1).is_err()
    {
        return 3;
    }
    for worker in 0..MAX_WORKERS as u64 {
        let badged = cnode::mint(
            CNODE,
            ENDPOINT.0,
            ENDPOINT_BADGED + worker,
            Rights::WRITE,
            Some(BADGE + worker),
        );
        if badged.is_err() {
            return 4;
        }
    }
    match scenario {
        RSEQ_ONE_CPU => one_cpu(),
        RSEQ_MIGRATE => migrate(cpus),
        RSEQ_STEP => crate::rseq_step_tests::step(cpus),
        RSEQ_BAD => crate::rseq_step_tests::refusals(),
        RSEQ_SLICE => crate::rseq_slice_tests::slice(cpus),
        RSEQ_COUNTERS => counters(),
        _ => 9,
    }
}

/// A worker's TCB.
pub(crate) const fn worker(index: u64) -> Tcb {
    Tcb(Cptr(WORKER_TCBS + index))
}

/// Makes worker `index` with `role` on `cpu` at `priority` (not started);
/// its faults and end go to the endpoint, badged `BADGE + index`, if
/// `supervised`.
pub(crate) fn make_worker(
    index: u64,
    role: u64,
    cpu: u64,
    priority: u64,
    supervised: bool,
) -> Result<Tcb, i32> {
    let tcb = worker(index);
    let check = 10 + 10 * index as i32;
    retype(UNTYPED, CapType::Tcb, 0, tcb.0 .0, 1).map_err(|_| check)?;
    tcb.configure(Cptr(CNODE), priority)
        .map_err(|_| check + 1)?;
    let thread = OwnThread {
        tcb,
        vspace: OWN_VSPACE,
        untyped: Cptr(UNTYPED),
        first_slot: WORKER_FRAMES + (STACK_PAGES + 1) * index,
        stack_pages: STACK_PAGES,
        area: WORKER_AREA + index * 0x1_0000,
        fault_endpoint: supervised.then_some(Cptr(ENDPOINT_BADGED + index)),
        name: Some("rseq-worker"),
    };
    let selector = BootProgram::RseqWorker.selector(role | index << 8);
    bind_to_own_space(&thread, selector).map_err(|_| check + 2)?;
    tcb.set_affinity(cpu).map_err(|_| check + 3)?;
    Ok(tcb)
}

/// Makes and starts worker `index`.
pub(crate) fn start_worker(index: u64, role: u64, cpu: u64, priority: u64) -> Result<Tcb, i32> {
    let tcb = make_worker(index, role, cpu, priority, false)?;
    tcb.resume().map_err(|_| 14 + 10 * index as i32)?;
    Ok(tcb)
}

/// How many workers have finished.
pub(crate) fn finished() -> u64 {
    FINISHED.load(Ordering::Acquire)
}

/// Whether worker `index` has left its result.
fn has_finished(index: usize) -> bool {
    RESULTS
        .get(index)
        .is_some_and(|r| r.load(Ordering::Acquire) != -1)
}

/// Waits until `count` workers have finished; the first failure among
/// workers `0..count` as `1000 + 100 x worker + its check`, else 0.
pub(crate) fn join(count: usize) -> i32 {
    while (finished() as usize) < count {
        if ipc::wait(DONE).is_err() {
            return 5;
        }
    }
    results(count)
}

/// The first failure among workers `0..count` (finished), else 0.
pub(crate) fn results(count: usize) -> i32 {
    for (index, result) in RESULTS.iter().enumerate().take(count) {
        let status = result.load(Ordering::Acquire);
        if status != 0 {
            println!("rseq: worker {index} failed its check {status}");
            return 1000 + 100 * index as i32 + status;
        }
    }
    0
}

/// Adds 1 to the counter `count` times through `area`; the adds, the
/// aborts they saw and the CPUs they ran on (a bit each) are added to
/// worker `index`'s.
fn add_many(index: usize, area: &RseqArea, count: u64) -> i32 {
    let mut aborts = 0;
    let mut seen = 0u64;
    for _ in 0..count {
        match COUNTER.add(area, 1) {
            Ok(restarts) => aborts += restarts,
            Err(error) => {
                println!("rseq: an add was refused: {error:?}");
                return 20;
            }
        }
        // Where the last add ran, or later: a bit per CPU seen.
        seen |= 1 << area.cpu_id().unwrap_or(63).min(63);
    }
    ADDED[index].fetch_add(count, Ordering::AcqRel);
    ABORTS[index].fetch_add(aborts, Ordering::AcqRel);
    CPUS_SEEN[index].fetch_or(seen, Ordering::AcqRel);
    0
}

/// Adds per round of an adder (`ONE_CPU_ADDS` and `MIGRATE_ADDS` are
/// multiples).
const CHUNK: u64 = 10_000;
const _: () = assert!(ONE_CPU_ADDS.is_multiple_of(CHUNK) && MIGRATE_ADDS.is_multiple_of(CHUNK));

/// An adder: registers its area, adds `adds` times and on until the
/// counter reaches `UNTIL`, unregisters.
fn adder(index: usize, adds: u64) -> i32 {
    let area = &AREAS[index];
    expect!(1, rseq::register(area, SIGNATURE), Ok(()));
    // The kernel wrote where it runs at once (unless it was moved
    // between the reads: then again).
    for _ in 0..100 {
        let cpu = this_cpu();
        let ids = (area.cpu_id(), area.cpu_id_start());
        if this_cpu() == cpu {
            expect!(2, ids, (Some(cpu as u32), cpu as u32));
            break;
        }
    }
    while GO.load(Ordering::Acquire) == 0 {
        let _ = sdk::syscall::yield_now();
    }
    let until = UNTIL.load(Ordering::Acquire);
    let mut done = 0;
    while done < adds || sdk::probe::counter().0 < until {
        let status = add_many(index, area, CHUNK);
        if status != 0 {
            return status;
        }
        done += CHUNK;
    }
    expect!(3, rseq::unregister(area, SIGNATURE), Ok(()));
    expect!(4, area.cpu_id(), None);
    0
}

/// The adds of workers `0..workers`.
fn added(workers: u64) -> u64 {
    ADDED
        .iter()
        .take(workers as usize)
        .map(|a| a.load(Ordering::Acquire))
        .sum()
}

/// The kernel's counters, or the check that failed.
pub(crate) fn kernel_counters(check: i32) -> Result<rseq::Counters, i32> {
    rseq::debug_counters().map_err(|error| {
        println!("rseq: DebugRseqCounters: {error:?}");
        check
    })
}

/// 1. One CPU under a fast tick made in user space: three adders (less
///    urgent) on CPU 0, and this thread woken by the physical timer
///    every 100 us, preempting whichever adder runs. Every add counts
///    once (the sum is exact), aborts happen, and the kernel's fix-ups
///    are exactly the aborts the adders saw.
fn one_cpu() -> i32 {
    expect!(
        5,
        retype(UNTYPED, CapType::Notification, 0, TICK.0, 1),
        Ok(())
    );
    expect!(6, irq_set_notification(TIMER_IRQ, TICK.0), Ok(()));
    ADDS.store(ONE_CPU_ADDS, Ordering::Release);
    GO.store(1, Ordering::Release);
    let before = match kernel_counters(7) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    for index in 0..ONE_CPU_WORKERS {
        if let Err(check) = start_worker(index, ROLE_ADDER, 0, PRIORITY - 10) {
            return check;
        }
    }
    let (_, frequency) = sdk::probe::counter();
    let period = frequency / USER_TICKS_PER_SECOND;
    let started = sdk::probe::counter().0;
    let mut wakes = 0u64;
    while finished() < ONE_CPU_WORKERS {
        expect!(8, irq_set_timer(TIMER_IRQ, period), Ok(()));
        expect!(9, irq_ack(TIMER_IRQ), Ok(()));
        expect!(10, ipc::wait(TICK).map(|_| ()), Ok(()));
        wakes += 1;
        if sdk::probe::counter().0.wrapping_sub(started) > 120 * frequency {
            println!("rseq: the adders did not finish in 120 s");
            return 11;
        }
    }
    expect!(12, irq_set_timer(TIMER_IRQ, 0), Ok(()));
    let elapsed_ms = sdk::probe::counter().0.wrapping_sub(started) / (frequency / 1000);
    let status = results(ONE_CPU_WORKERS as usize);
    if status != 0 {
        return status;
    }
    let after = match kernel_counters(13) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    let counted = after.since(&before);
    let total = ONE_CPU_WORKERS * ONE_CPU_ADDS;
    expect!(14, added(ONE_CPU_WORKERS), total);
    expect!(14, COUNTER.sum(), total);
    expect!(15, COUNTER.get(0), total);
    let aborts: u64 = ABORTS.iter().map(|a| a.load(Ordering::Acquire)).sum();
    println!(
        "rseq: {total} adds by {ONE_CPU_WORKERS} threads on CPU 0 in {elapsed_ms} ms under a {} us user tick ({wakes} wakes): sum exact, {aborts} aborts, {} kernel fix-ups",
        1_000_000 / USER_TICKS_PER_SECOND,
        counted.fixups
    );
    expect!(16, aborts > 0, true);
    // Only these adders ran sections meanwhile: each fix-up is an abort
    // one of them took.
    expect!(17, counted.fixups, aborts);
    0
}

/// 2. Two adders on each CPU but this thread's (CPU 0; on two CPUs on
///    both), each adding `MIGRATE_ADDS` times and on for `MIGRATE_MS`
///    (so that enough events happen on a fast host), and this thread (as
///    urgent as they are) moving one adder after another to the next of
///    those CPUs until they are done: the sum is exact, every adder ran on more
///    than one CPU, aborts happen and each is a kernel fix-up.
fn migrate(cpus: u64) -> i32 {
    // The CPUs the adders run on: all but this thread's, so that it
    // moves them without waiting for a turn; both on two CPUs (it then
    // yields to the adders on CPU 0 between moves).
    let (first, targets) = if cpus >= 3 { (1, cpus - 1) } else { (0, cpus) };
    let target = |n: u64| first + n % targets;
    let workers = (2 * targets).min(MAX_WORKERS as u64);
    ADDS.store(MIGRATE_ADDS, Ordering::Release);
    let before = match kernel_counters(5) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    let mut placed = [0u64; MAX_WORKERS];
    for index in 0..workers {
        placed[index as usize] = index;
        if let Err(check) = start_worker(index, ROLE_ADDER, target(index), PRIORITY) {
            return check;
        }
    }
    let mut moves = 0u64;
    let mut next = 0usize;
    let (_, frequency) = sdk::probe::counter();
    let started = sdk::probe::counter().0;
    UNTIL.store(started + MIGRATE_MS * (frequency / 1000), Ordering::Release);
    GO.store(1, Ordering::Release);
    while finished() < workers {
        let index = next % workers as usize;
        next += 1;
        let cpu = target(placed[index] + 1);
        match worker(index as u64).set_affinity(cpu) {
            Ok(_) => {
                placed[index] += 1;
                moves += 1;
            }
            // An adder that has finished may have ended meanwhile.
            Err(_) if has_finished(index) => {}
            Err(error) => {
                println!("rseq: moving adder {index} to CPU {cpu}: {error:?}");
                return 6;
            }
        }
        let _ = sdk::syscall::yield_now();
        if sdk::probe::counter().0.wrapping_sub(started) > 120 * frequency {
            println!("rseq: the adders did not finish in 120 s");
            return 7;
        }
    }
    let status = join(workers as usize);
    if status != 0 {
        return status;
    }
    let elapsed_ms = sdk::probe::counter().0.wrapping_sub(started) / (frequency / 1000);
    let after = match kernel_counters(8) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    let counted = after.since(&before);
    // Each adder made at least its adds, and on for the time.
    let total = added(workers);
    expect!(9, total >= workers * MIGRATE_ADDS, true);
    expect!(9, COUNTER.sum(), total);
    let aborts: u64 = ABORTS.iter().map(|a| a.load(Ordering::Acquire)).sum();
    let spread = (0..workers as usize)
        .map(|i| CPUS_SEEN[i].load(Ordering::Acquire).count_ones())
        .min()
        .unwrap_or(0);
    let per_cpu = [
        COUNTER.get(0),
        COUNTER.get(1),
        COUNTER.get(2),
        COUNTER.get(3),
    ];
    println!(
        "rseq: {total} adds by {workers} threads on {cpus} CPUs in {elapsed_ms} ms, {moves} moves: sum exact (per CPU {per_cpu:?}), {aborts} aborts, {} kernel fix-ups; each thread added on at least {spread} CPUs",
        counted.fixups
    );
    if cpus >= 2 {
        expect!(10, spread >= 2, true);
    }
    expect!(11, aborts > 0, true);
    expect!(12, counted.fixups, aborts);
    0
}

/// 6. The kernel's counters since boot, printed (the kernel prints them
///    too): every earlier case's events are in them, so the fix-ups and
///    both kinds of extension are there, and the counts agree with each
///    other.
fn counters() -> i32 {
    let counters = match kernel_counters(5) {
        Ok(counters) => counters,
        Err(check) => return check,
    };
    for (name, value) in rseq::Counters::NAMES.iter().zip(counters.to_array()) {
        println!("rseq: {name}: {value}");
    }
    expect!(6, rseq::debug_counters_raw(0), Ok(()));
    expect!(
        7,
        rseq::debug_counters_raw(0x10),
        Err(abi::ErrorCode::InvalidAddress)
    );
    expect!(8, counters.exits > 0, true);
    expect!(9, counters.fixups > 0, true);
    expect!(10, counters.fixups <= counters.cs_checks, true);
    expect!(
        11,
        counters.slow_path + counters.fast_path <= counters.exits,
        true
    );
    expect!(12, counters.slice_granted > 0, true);
    expect!(13, counters.slice_overrun > 0, true);
    expect!(14, counters.slice_overrun <= counters.slice_granted, true);
    0
}

/// Leaves worker `index`'s result and tells the case thread.
pub(crate) fn finish(index: usize, status: i32) {
    if let Some(result) = RESULTS.get(index) {
        result.store(status, Ordering::Release);
    }
    FINISHED.fetch_add(1, Ordering::AcqRel);
    let _ = ipc::signal(DONE_SIGNAL);
}

/// A worker: its role in the low byte of `parameter`, its index above.
pub fn worker_main(parameter: u64) -> i32 {
    let role = parameter & 0xff;
    let index = ((parameter >> 8) as usize).min(MAX_WORKERS - 1);
    let adds = ADDS.load(Ordering::Acquire);
    let status = match role {
        ROLE_ADDER => adder(index, adds),
        ROLE_STEPPED => crate::rseq_step_tests::stepped(index),
        ROLE_BAD_SIGNATURE | ROLE_BAD_DESCRIPTOR | ROLE_BAD_ABORT | ROLE_BAD_AREA => {
            crate::rseq_step_tests::refused(index, role)
        }
        ROLE_SLICE_USER => crate::rseq_slice_tests::user(index),
        ROLE_SLICE_PEER => crate::rseq_slice_tests::peer(index),
        _ => 99,
    };
    finish(index, status);
    status
}
