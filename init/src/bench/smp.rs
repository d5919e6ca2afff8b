//! The SMP rows (page 1 of `abi::bench::ROWS`): IPC between two CPUs, and
//! IPC throughput with 1, 2 and 4 client/server pairs, each pair on its
//! own CPU.
//!
//! The benchmark thread (`BenchSmp`, on CPU 0 like every thread the
//! driver makes) makes its servers and clients threads of its own address
//! space and CSpace (as `same_as` does), places each on its CPU with
//! `TcbSetAffinity` before it starts, and times:
//!
//! * `ipc_cross_core_round_trip`: it is the client, on CPU 0, of a server
//!   on CPU 1 (register-only messages, so the fast path would take them
//!   if both ran on one CPU; across CPUs the slow path makes the partner
//!   ready on its CPU and interrupts it with an SGI). It reads the counter
//!   before its `Call` and after it returns, on CPU 0: both reads on one
//!   CPU. Under QEMU's `-icount` the vCPUs run one at a time (round
//!   robin, no MTTCG) and PMCCNTR_EL0 is QEMU's virtual clock, which
//!   icount advances by one per instruction of *any* vCPU: the round trip
//!   is every instruction the machine executed from the `Call` to its
//!   return (both kernel paths, both SGIs, CPU 0 going idle and waking,
//!   CPU 1 waking and going idle again), not a latency.
//! * `ipc_cross_core_call_one_way`: half of each round-trip sample, *not*
//!   a one-way measurement. A one-way time would subtract a read on one
//!   CPU from a read on another, and each CPU's counter is reset when that
//!   CPU enables it at boot (`enable_cycle_counter`), so the two differ by
//!   the CPUs' start-up gap (about 2.5 million on virt: a first try read
//!   that gap, not the IPC). The row is there to stand beside
//!   `ipc_call_one_way`, and says so.
//! * `ipc_throughput_N_pairs`: pair `i`'s client and server both run on
//!   CPU `i` (so their IPC takes the fast path). One sample is a burst:
//!   the benchmark thread reads the counter, signals each client's "go",
//!   waits for each one's "done" after its `ROUNDS_PER_BURST` round trips,
//!   reads the counter again (both reads on CPU 0, for the reason above),
//!   and divides by the round trips all pairs made. Under icount that is
//!   instructions of the whole machine per round trip, the burst's
//!   signals and wake-ups included (`ipc_throughput_1_pair` minus
//!   `ipc_round_trip_same_as` is that share): the cores run one at a
//!   time, so the row cannot show parallel speed-up, only what a round
//!   trip costs with N cores busy (lock traffic, cross-CPU wake-ups). With
//!   `--no-icount` it is nanoseconds of the virtual clock per round trip,
//!   where N pairs on N host threads may overlap (noisy: the host's load
//!   decides).
//!
//! A row that needs more CPUs than run prints `BENCH-SKIP` (counted as
//! run in the suite's closing line).

use super::{print_row, summarise, FAST_LENGTH};
use crate::programs::{BootProgram, CNODE_SLOT, ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT, STOP_LABEL};
use abi::bench::{BenchParameter, IPC_FAST_LABEL, MAX_ITERATIONS, WARM_UP_ITERATIONS};
use abi::cap::CapType;
use abi::vspace::FRAME_MAP_START;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::syscall::{retype, this_cpu};
use sdk::tcb::Tcb;
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::timing::{empty_delta, now};
use sdk::vspace::VSpace;

/// The case's Untyped and the benchmark thread's own VSpace.
const UNTYPED: u64 = SECOND_ENDPOINT_SLOT;
const OWN_SPACE: VSpace = VSpace(Cptr(4));
/// The case's priority for every thread (the benchmark thread's MCP).
const PRIORITY: u64 = 100;
/// Most pairs (and CPUs) the throughput rows use.
const MAX_PAIRS: usize = 4;
/// Pair `i`'s endpoint, its client's "go" and "done" notifications.
const PAIR_ENDPOINT: u64 = 100;
const PAIR_GO: u64 = PAIR_ENDPOINT + MAX_PAIRS as u64;
const PAIR_DONE: u64 = PAIR_GO + MAX_PAIRS as u64;
/// Round trips each pair makes in one sample.
const ROUNDS_PER_BURST: u64 = 100;

/// Thread `t` of the ones this program makes: 0 the cross-core server,
/// 1 + i pair i's client, 1 + MAX_PAIRS + i pair i's server. Its TCB in
/// slot 16 + 8t, its stack and buffer frames after it; its stack and
/// buffer in the frame window's t-th area.
const fn worker(t: u64) -> OwnThread {
    const STACK_PAGES: u64 = 4;
    OwnThread {
        tcb: Tcb(Cptr(16 + 8 * t)),
        vspace: OWN_SPACE,
        untyped: Cptr(UNTYPED),
        first_slot: 17 + 8 * t,
        stack_pages: STACK_PAGES,
        area: FRAME_MAP_START + t * (STACK_PAGES + 3) * 0x1000,
        fault_endpoint: None,
        name: None,
    }
}
const CROSS_CORE_SERVER: u64 = 0;
const fn pair_client(pair: u64) -> u64 {
    1 + pair
}
const fn pair_server(pair: u64) -> u64 {
    1 + MAX_PAIRS as u64 + pair
}

/// The cross-core rows: the round trip, and half of it.
const CROSS_CORE_ROUND_TRIP: &str = "ipc_cross_core_round_trip";
const CROSS_CORE_HALF: &str = "ipc_cross_core_call_one_way";

/// The throughput rows: name and pairs.
const THROUGHPUT_ROWS: [(&str, u64); 3] = [
    ("ipc_throughput_1_pair", 1),
    ("ipc_throughput_2_pairs", 2),
    ("ipc_throughput_4_pairs", 4),
];

/// Round trips each client makes in the next burst (0: stop).
static ROUNDS: AtomicU64 = AtomicU64::new(0);
/// A client's call failed.
static PAIR_FAILED: AtomicBool = AtomicBool::new(false);
/// The cross-core round trips and halves (the throughput samples use
/// `SAMPLES`).
static ROUND_SAMPLES: spin::Mutex<[u64; MAX_ITERATIONS as usize]> =
    spin::Mutex::new([0; MAX_ITERATIONS as usize]);
/// The throughput samples.
static SAMPLES: spin::Mutex<[u64; MAX_ITERATIONS as usize]> =
    spin::Mutex::new([0; MAX_ITERATIONS as usize]);

/// The benchmark thread: the cross-core rows, then the throughput rows.
pub fn run(parameter: BenchParameter) -> i32 {
    if this_cpu() != 0 {
        println!("BENCH-ERROR name=ipc_cross_core_round_trip reason=the benchmark thread runs on CPU {}, not 0", this_cpu());
        return 1;
    }
    let cross_rows = [CROSS_CORE_HALF, CROSS_CORE_ROUND_TRIP];
    let mut failed = 0;
    if cross_rows.iter().any(|row| parameter.runs(row)) {
        failed += cross_core_rows(parameter, &cross_rows);
    }
    if failed == 0 && THROUGHPUT_ROWS.iter().any(|(row, _)| parameter.runs(row)) {
        failed += throughput_rows(parameter);
    }
    failed
}

/// Makes thread `t` with `x0`, places it on `cpu` and starts it; returns
/// how many CPUs run, or the step that failed.
fn start_worker(t: u64, x0: u64, cpu: u64) -> Result<u64, &'static str> {
    let thread = worker(t);
    retype(UNTYPED, CapType::Tcb, 0, thread.tcb.0 .0, 1).map_err(|_| "retype of its TCB")?;
    thread
        .tcb
        .configure(Cptr(CNODE_SLOT), PRIORITY)
        .map_err(|_| "configure")?;
    bind_to_own_space(&thread, x0).map_err(|_| "its stack and buffer")?;
    let cpus = thread.tcb.set_affinity(cpu).map_err(|_| "TcbSetAffinity")?;
    thread.tcb.resume().map_err(|_| "resume")?;
    Ok(cpus)
}

/// How many CPUs run: what `TcbSetAffinity` answers for a thread made
/// for the purpose and placed on CPU 0 (it never starts).
fn cpus_online(t: u64) -> Result<u64, &'static str> {
    let thread = worker(t);
    retype(UNTYPED, CapType::Tcb, 0, thread.tcb.0 .0, 1).map_err(|_| "retype of a TCB")?;
    thread
        .tcb
        .configure(Cptr(CNODE_SLOT), PRIORITY)
        .map_err(|_| "configure")?;
    thread.tcb.set_affinity(0).map_err(|_| "TcbSetAffinity")
}

fn cross_core_rows(parameter: BenchParameter, rows: &[&str; 2]) -> i32 {
    let cpus = match cpus_online(CROSS_CORE_SERVER) {
        Ok(cpus) => cpus,
        Err(step) => {
            println!(
                "BENCH-ERROR name={CROSS_CORE_ROUND_TRIP} reason=counting the CPUs failed: {step}"
            );
            return 1;
        }
    };
    if cpus < 2 {
        for row in rows.iter().filter(|row| parameter.runs(row)) {
            println!("BENCH-SKIP name={row} reason=needs 2 CPUs, {cpus} runs");
        }
        return 0;
    }
    // The server's TCB is the one just counted with: bind it and start it
    // on CPU 1.
    let thread = worker(CROSS_CORE_SERVER);
    let x0 = BootProgram::BenchCrossCoreServer.selector(0);
    let started = bind_to_own_space(&thread, x0)
        .map_err(|_| "its stack and buffer")
        .and_then(|_| thread.tcb.set_affinity(1).map_err(|_| "TcbSetAffinity"))
        .and_then(|_| thread.tcb.resume().map_err(|_| "resume"));
    if let Err(step) = started {
        println!(
            "BENCH-ERROR name={CROSS_CORE_ROUND_TRIP} reason=starting the server failed: {step}"
        );
        return 1;
    }
    let endpoint = Cptr(ENDPOINT_SLOT);
    let overhead = (0..64).map(|_| empty_delta()).min().unwrap_or(0);
    let iterations = parameter.iterations.min(MAX_ITERATIONS) as usize;
    let message = Message::new(IPC_FAST_LABEL, &[0]).with_length(FAST_LENGTH);
    let mut rounds = ROUND_SAMPLES.lock();
    for i in 0..(WARM_UP_ITERATIONS as usize + iterations) {
        let start = now();
        let called = ipc::call(endpoint, &message);
        let end = now();
        if called.is_err() {
            println!("BENCH-ERROR name={CROSS_CORE_ROUND_TRIP} reason=call failed");
            return 1;
        }
        if let Some(slot) = i.checked_sub(WARM_UP_ITERATIONS as usize) {
            rounds[slot] = end.wrapping_sub(start).saturating_sub(overhead);
        }
    }
    let round_stats = summarise(&mut rounds[..iterations], overhead);
    for sample in rounds[..iterations].iter_mut() {
        *sample /= 2;
    }
    let half_stats = summarise(&mut rounds[..iterations], overhead);
    drop(rounds);
    if parameter.runs(CROSS_CORE_HALF) {
        print_row(parameter, CROSS_CORE_HALF, half_stats);
    }
    if parameter.runs(CROSS_CORE_ROUND_TRIP) {
        print_row(parameter, CROSS_CORE_ROUND_TRIP, round_stats);
    }
    match ipc::call(endpoint, &Message::new(STOP_LABEL, &[])) {
        Ok(_) => 0,
        Err(_) => 1,
    }
}

/// The cross-core server: checks it runs on CPU 1, then answers every
/// call register-only until the stop message.
pub fn run_cross_core_server() -> i32 {
    if this_cpu() != 1 {
        println!(
            "BENCH-ERROR name={CROSS_CORE_ROUND_TRIP} reason=the server runs on CPU {}, not 1",
            this_cpu()
        );
        return 1;
    }
    serve(Cptr(ENDPOINT_SLOT))
}

fn throughput_rows(parameter: BenchParameter) -> i32 {
    let cpus = match cpus_online(pair_client(0)) {
        Ok(cpus) => cpus,
        Err(step) => {
            println!(
                "BENCH-ERROR name=ipc_throughput_1_pair reason=counting the CPUs failed: {step}"
            );
            return 1;
        }
    };
    let pairs = cpus.min(MAX_PAIRS as u64);
    if let Err(step) = start_pairs(pairs) {
        println!("BENCH-ERROR name=ipc_throughput_1_pair reason=starting the pairs failed: {step}");
        return 1;
    }
    let mut failed = 0;
    for (row, needed) in THROUGHPUT_ROWS {
        if !parameter.runs(row) {
            continue;
        }
        if needed > cpus {
            println!("BENCH-SKIP name={row} reason=needs {needed} CPUs, {cpus} runs");
            continue;
        }
        if throughput_row(parameter, row, needed).is_err() {
            println!("BENCH-ERROR name={row} reason=a pair's IPC failed");
            failed = 1;
            break;
        }
    }
    // Stop every pair: a burst of no rounds ends the client, which stops
    // its server.
    ROUNDS.store(0, Ordering::SeqCst);
    for pair in 0..pairs {
        let _ = ipc::signal(Cptr(PAIR_GO + pair));
    }
    failed
}

/// Retypes the pairs' endpoints and notifications, then starts pair
/// `i`'s server and client on CPU `i` (pair 0's client's TCB is the one
/// the CPUs were counted with).
fn start_pairs(pairs: u64) -> Result<(), &'static str> {
    retype(UNTYPED, CapType::Endpoint, 0, PAIR_ENDPOINT, pairs).map_err(|_| "endpoints")?;
    retype(UNTYPED, CapType::Notification, 0, PAIR_GO, pairs).map_err(|_| "notifications")?;
    retype(UNTYPED, CapType::Notification, 0, PAIR_DONE, pairs).map_err(|_| "notifications")?;
    for pair in 0..pairs {
        start_worker(
            pair_server(pair),
            BootProgram::BenchPairServer.selector(pair),
            pair,
        )?;
        let client = BootProgram::BenchPairClient.selector(pair);
        if pair == 0 {
            let thread = worker(pair_client(0));
            bind_to_own_space(&thread, client).map_err(|_| "its stack and buffer")?;
            thread.tcb.resume().map_err(|_| "resume")?;
        } else {
            start_worker(pair_client(pair), client, pair)?;
        }
    }
    Ok(())
}

/// One throughput row: a warm-up burst, then `iterations /
/// ROUNDS_PER_BURST` (at least one) timed bursts in the first `pairs`
/// pairs.
fn throughput_row(parameter: BenchParameter, row: &str, pairs: u64) -> Result<(), ()> {
    let overhead = (0..64).map(|_| empty_delta()).min().unwrap_or(0);
    let bursts = (u64::from(parameter.iterations) / ROUNDS_PER_BURST).max(1) as usize;
    let mut samples = SAMPLES.lock();
    for burst in 0..=bursts {
        ROUNDS.store(ROUNDS_PER_BURST, Ordering::SeqCst);
        let start = now();
        for pair in 0..pairs {
            ipc::signal(Cptr(PAIR_GO + pair)).map_err(|_| ())?;
        }
        for pair in 0..pairs {
            ipc::wait(Cptr(PAIR_DONE + pair)).map_err(|_| ())?;
        }
        let end = now();
        if PAIR_FAILED.load(Ordering::SeqCst) {
            return Err(());
        }
        if let Some(slot) = burst.checked_sub(1) {
            samples[slot] =
                end.wrapping_sub(start).saturating_sub(overhead) / (pairs * ROUNDS_PER_BURST);
        }
    }
    let stats = summarise(&mut samples[..bursts], overhead);
    drop(samples);
    print_row(parameter, row, stats);
    Ok(())
}

/// Pair `pair`'s client: for each "go", `ROUNDS` fast-path calls (none:
/// stop its server and end), then "done".
pub fn run_pair_client(pair: u64) -> i32 {
    let endpoint = Cptr(PAIR_ENDPOINT + pair);
    let message = Message::new(IPC_FAST_LABEL, &[0]).with_length(FAST_LENGTH);
    loop {
        if ipc::wait(Cptr(PAIR_GO + pair)).is_err() {
            return 1;
        }
        let rounds = ROUNDS.load(Ordering::SeqCst);
        if rounds == 0 {
            return match ipc::call(endpoint, &Message::new(STOP_LABEL, &[])) {
                Ok(_) => 0,
                Err(_) => 1,
            };
        }
        for _ in 0..rounds {
            if ipc::call(endpoint, &message).is_err() {
                PAIR_FAILED.store(true, Ordering::SeqCst);
                break;
            }
        }
        if ipc::signal(Cptr(PAIR_DONE + pair)).is_err() {
            return 1;
        }
    }
}

/// Pair `pair`'s server.
pub fn run_pair_server(pair: u64) -> i32 {
    serve(Cptr(PAIR_ENDPOINT + pair))
}

/// Answers every call on `endpoint` register-only until the stop message.
fn serve(endpoint: Cptr) -> i32 {
    let Ok(mut received) = ipc::recv(endpoint) else {
        return 1;
    };
    let reply = Message::new(IPC_FAST_LABEL, &[0]).with_length(FAST_LENGTH);
    loop {
        if received.message.info.label() == STOP_LABEL {
            return match ipc::reply(&Message::new(0, &[])) {
                Ok(()) => 0,
                Err(_) => 1,
            };
        }
        match ipc::reply_recv(endpoint, &reply) {
            Ok(next) => received = next,
            Err(_) => return 1,
        }
    }
}
