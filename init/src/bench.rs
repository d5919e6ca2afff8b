//! The benchmark programs: each row times one operation many times and
//! prints one `BENCH` line (the runner's protocol, see src/bench/ in the
//! host package).

pub mod dispatch;
pub mod policy;
pub mod prio;
pub mod rseq;
pub mod same_as;
pub mod smp;
pub mod watch;

use crate::programs::{ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT, STOP_LABEL};
use abi::bench::{
    BenchParameter, IPC_BYTES_JUDGED_LABEL, IPC_FAST_LABEL, IPC_FILTERED_LABEL,
    IPC_HIGHER_PRIO_LABEL, IPC_SAME_AS_LABEL, IPC_SLOW_LABEL, IPC_THREADS_LABEL, MAX_ITERATIONS,
    SCALE_STEPS, THREAD_COUNT_EXTRA, WARM_UP_ITERATIONS,
};
use abi::{ErrorCode, MessageInfo, Syscall};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::syscall;
use sdk::timing::{empty_delta, now, stamped_ipc, timed_syscall};

/// Every sample of the row being measured (kept to compute the median).
static SAMPLES: spin::Mutex<[u64; MAX_ITERATIONS as usize]> =
    spin::Mutex::new([0; MAX_ITERATIONS as usize]);

/// The IPC client's two sample arrays (replies and round trips), apart
/// from the server's `SAMPLES`: a client and its server may be threads
/// of one program in one address space (`same_as`).
static CLIENT_SAMPLES: spin::Mutex<[u64; MAX_ITERATIONS as usize]> =
    spin::Mutex::new([0; MAX_ITERATIONS as usize]);
static CLIENT_SAMPLES_B: spin::Mutex<[u64; MAX_ITERATIONS as usize]> =
    spin::Mutex::new([0; MAX_ITERATIONS as usize]);

/// An invalid syscall number: the full slow path that answers an error.
const INVALID_SYSCALL: u64 = 999;

/// Tries to measure the floor this many times: an interrupt (a timer
/// tick) ends the floor, and then the whole row is measured again.
const FLOOR_ATTEMPTS: u32 = 8;

/// `floor_svc_eret`: the floor is on for the whole row; if an interrupt
/// ended it meanwhile (`BenchFloor(0)` says `Interrupted`), the samples
/// after it timed the real kernel, so the row is measured again. Returns
/// the number of failures (0 or 1).
fn floor_row(parameter: BenchParameter) -> i32 {
    for _ in 0..FLOOR_ATTEMPTS {
        if syscall::bench_floor(true).is_err() {
            println!("BENCH-ERROR name=floor_svc_eret reason=the kernel refused the floor");
            return 1;
        }
        // Every syscall but BenchFloor returns at once while the floor
        // is on, printing included: print after turning it off.
        let row = time_row(parameter, || timed_syscall(Syscall::Null.number(), 0));
        match syscall::bench_floor(false) {
            Ok(()) => {
                print_row(parameter, "floor_svc_eret", row);
                return 0;
            }
            Err(ErrorCode::Interrupted) => continue,
            Err(_) => break,
        }
    }
    println!(
        "BENCH-ERROR name=floor_svc_eret reason=an interrupt ended the floor in every attempt"
    );
    1
}

/// The rows that run in one thread.
pub fn run_single_thread_rows(parameter: BenchParameter) -> i32 {
    let mut failures = 0;
    if parameter.runs("floor_svc_eret") {
        failures += floor_row(parameter);
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

/// One phase of the IPC benchmark client: the label and length of its
/// messages, and the rows it reports.
pub(crate) struct IpcPhase {
    pub(crate) label: u64,
    pub(crate) length: u8,
    pub(crate) call_row: &'static str,
    pub(crate) reply_row: &'static str,
    pub(crate) round_row: &'static str,
}

/// The unfiltered client's phases: register-only, then one word too long
/// for registers.
const IPC_PHASES: [IpcPhase; 2] = [
    IpcPhase {
        label: IPC_FAST_LABEL,
        length: FAST_LENGTH,
        call_row: "ipc_call_one_way",
        reply_row: "ipc_reply_recv_one_way",
        round_row: "ipc_round_trip",
    },
    IpcPhase {
        label: IPC_SLOW_LABEL,
        length: 7,
        call_row: "ipc_slow_call_one_way",
        reply_row: "ipc_slow_reply_recv_one_way",
        round_row: "ipc_slow_round_trip",
    },
];

/// The IPC benchmark client: for each phase (register-only, then one word
/// too long for registers), `iterations` calls to the server, each timed
/// round trip, and the reply's one-way time from the timestamp the server
/// sends back (taken just before its `ReplyRecv`).
pub fn run_ipc_client(parameter: BenchParameter) -> i32 {
    ipc_client(parameter, &IPC_PHASES)
}

/// The client's loop over `phases`, then the server's stop message.
pub(crate) fn ipc_client(parameter: BenchParameter, phases: &[IpcPhase]) -> i32 {
    match ipc_phases(parameter, phases) {
        0 => stop_ipc_server(),
        failed => failed,
    }
}

/// Tells the IPC benchmark server the client is done.
pub(crate) fn stop_ipc_server() -> i32 {
    match ipc::call(Cptr(ENDPOINT_SLOT), &Message::new(STOP_LABEL, &[])) {
        Ok(_) => 0,
        Err(_) => 1,
    }
}

/// The client's loop over `phases` (0, or 1 when a call failed).
pub(crate) fn ipc_phases(parameter: BenchParameter, phases: &[IpcPhase]) -> i32 {
    let endpoint = Cptr(ENDPOINT_SLOT);
    let overhead = (0..64).map(|_| empty_delta()).min().unwrap_or(0);
    for phase in phases {
        let (label, length) = (phase.label, phase.length);
        let (reply_row, round_row) = (phase.reply_row, phase.round_row);
        // The server times the call row from this phase's calls.
        if ![phase.call_row, reply_row, round_row]
            .iter()
            .any(|row| parameter.runs(row))
        {
            continue;
        }
        let iterations = parameter.iterations.min(MAX_ITERATIONS) as usize;
        let mut replies = CLIENT_SAMPLES.lock();
        let mut rounds = CLIENT_SAMPLES_B.lock();
        let info = call_info(label, length);
        for i in 0..(WARM_UP_ITERATIONS as usize + iterations) {
            // The counter is read right before the svc (the server's
            // sample) and right after it (the reply's and the round
            // trip's end).
            let (reply, start, end) = stamped_ipc(Syscall::Call.number(), endpoint.0, info);
            if reply[0] != ErrorCode::Ok.raw() {
                println!("BENCH-ERROR name={round_row} reason=call failed");
                return 1;
            }
            if let Some(slot) = i.checked_sub(WARM_UP_ITERATIONS as usize) {
                replies[slot] = end.wrapping_sub(reply[2]).saturating_sub(overhead);
                rounds[slot] = end.wrapping_sub(start).saturating_sub(overhead);
            }
        }
        let reply_stats = summarise(&mut replies[..iterations], overhead);
        let round_stats = summarise(&mut rounds[..iterations], overhead);
        drop((replies, rounds));
        if parameter.runs(reply_row) {
            print_row(parameter, reply_row, reply_stats);
        }
        if parameter.runs(round_row) {
            print_row(parameter, round_row, round_stats);
        }
    }
    0
}

/// The scale benchmark's client: for each step of `SCALE_STEPS`, retypes
/// endpoints from the Untyped in `SECOND_ENDPOINT_SLOT` into its own CNode
/// until that many extra endpoints (each with its capability) are alive,
/// then times the null syscall and sends the server the step's fast-path
/// calls (the server times them one-way, as for `ipc_call_one_way`).
pub fn run_scale_client(parameter: BenchParameter) -> i32 {
    use abi::cap::CapType;
    let endpoint = Cptr(ENDPOINT_SLOT);
    let untyped = SECOND_ENDPOINT_SLOT;
    // The extra endpoints' capabilities go right after the Untyped's.
    let first_extra = SECOND_ENDPOINT_SLOT + 1;
    let mut made = 0u64;
    for (extra, label, null_row, call_row) in SCALE_STEPS {
        if !parameter.runs(null_row) && !parameter.runs(call_row) {
            continue;
        }
        while made < extra {
            let count = (extra - made).min(RETYPE_BATCH);
            if let Err(code) =
                syscall::retype(untyped, CapType::Endpoint, 0, first_extra + made, count)
            {
                println!("BENCH-ERROR name={null_row} reason=retype failed after {made} endpoints: {code:?}");
                return 1;
            }
            made += count;
        }
        if parameter.runs(null_row) {
            measure(parameter, null_row, || {
                timed_syscall(Syscall::Null.number(), 0)
            });
        }
        if parameter.runs(call_row) && timed_calls(parameter, label, call_row) != 0 {
            return 1;
        }
    }
    // Then as many threads again (inactive TCBs, each with its capability,
    // after the endpoints' slots).
    let threads_row = "ipc_call_one_way_threads_10000";
    if parameter.runs(threads_row) {
        let first_tcb = first_extra + made;
        let mut threads = 0u64;
        while threads < THREAD_COUNT_EXTRA {
            let count = (THREAD_COUNT_EXTRA - threads).min(RETYPE_BATCH);
            if let Err(code) = syscall::retype(untyped, CapType::Tcb, 0, first_tcb + threads, count)
            {
                println!("BENCH-ERROR name={threads_row} reason=retype failed after {threads} threads: {code:?}");
                return 1;
            }
            threads += count;
        }
        if timed_calls(parameter, IPC_THREADS_LABEL, threads_row) != 0 {
            return 1;
        }
    }
    match ipc::call(endpoint, &Message::new(STOP_LABEL, &[])) {
        Ok(_) => 0,
        Err(_) => 1,
    }
}

/// The scale client's fast-path calls with `label` (warm-up and timed;
/// the server times them one-way, as for `ipc_call_one_way`); 1 when one
/// fails.
fn timed_calls(parameter: BenchParameter, label: u64, row: &str) -> i32 {
    let endpoint = Cptr(ENDPOINT_SLOT);
    let iterations = parameter.iterations.min(MAX_ITERATIONS);
    let info = call_info(label, FAST_LENGTH);
    for _ in 0..(WARM_UP_ITERATIONS + iterations) {
        // The timestamp the server subtracts, as `ipc_phases` takes it.
        let (reply, _, _) = stamped_ipc(Syscall::Call.number(), endpoint.0, info);
        if reply[0] != ErrorCode::Ok.raw() {
            println!("BENCH-ERROR name={row} reason=call failed");
            return 1;
        }
    }
    0
}

/// The message info of a benchmark message: `label`, `length` words, no
/// capabilities.
fn call_info(label: u64, length: u8) -> u64 {
    Message::new(label, &[]).with_length(length).info.into()
}

/// Words in a fast-path (register-only) benchmark call.
pub(crate) const FAST_LENGTH: u8 = 1;

/// Most objects one retype makes (the kernel's `MAX_RETYPE_COUNT`).
const RETYPE_BATCH: u64 = 64;

/// The IPC benchmark server: answers every call with a timestamp taken
/// just before its `ReplyRecv`, and times each call's one-way trip from
/// the timestamp the client sent.
pub fn run_ipc_server(parameter: BenchParameter) -> i32 {
    let endpoint = Cptr(ENDPOINT_SLOT);
    let overhead = (0..64).map(|_| empty_delta()).min().unwrap_or(0);
    let Ok(first) = ipc::recv(endpoint) else {
        return 1;
    };
    let mut arrived = now();
    let mut guard = SAMPLES.lock();
    let samples: &mut [u64] = &mut guard[..];
    // The loop keeps the message info as the raw word it arrives in and
    // decodes it only when it changes (a new phase, or the stop): the
    // round-trip rows time this loop too, and decoding the label at every
    // call cost them about 20 instructions of the benchmark's own.
    let mut info = u64::from(first.message.info);
    let mut sent = first.message.words[0];
    // The raw info of the phase's calls (at first `NO_PHASE`), and of its
    // replies.
    let mut phase = NO_PHASE;
    let mut reply_info = 0;
    // The phase's next sample: counted from WARM_UP_ITERATIONS below 0
    // (wrapped), so the warm-up's calls find no slot.
    let warm_up = WARM_UP_ITERATIONS as usize;
    let mut slot = 0usize;
    loop {
        if info != phase {
            if phase != NO_PHASE {
                let label = MessageInfo::from(phase).label();
                let seen = slot.wrapping_add(warm_up);
                report_call_phase(parameter, label, samples, seen, overhead);
            }
            let label = MessageInfo::from(info).label();
            if label == STOP_LABEL {
                return if ipc::reply(&Message::new(0, &[])).is_ok() {
                    0
                } else {
                    1
                };
            }
            phase = info;
            slot = 0usize.wrapping_sub(warm_up);
            // As long as the call, but register-only for the phase whose
            // calls are judged on their buffer words (those must stay as
            // the client wrote them).
            reply_info = match label {
                IPC_BYTES_JUDGED_LABEL => call_info(label, FAST_LENGTH),
                _ => info,
            };
        }
        // The overhead is taken off when the phase is reported.
        if let Some(sample) = samples.get_mut(slot) {
            *sample = arrived.wrapping_sub(sent);
        }
        slot = slot.wrapping_add(1);
        // The reply's word 0 is the counter right before the svc; the
        // next call's arrival the counter right after it.
        let (next, _, after) = stamped_ipc(Syscall::ReplyRecv.number(), endpoint.0, reply_info);
        if next[0] != ErrorCode::Ok.raw() {
            return 1;
        }
        info = next[1];
        sent = next[2];
        arrived = after;
    }
}

/// No phase yet: no message info is all ones (its length would be 127
/// words, more than any message has).
const NO_PHASE: u64 = u64::MAX;

fn report_call_phase(
    parameter: BenchParameter,
    phase: u64,
    samples: &mut [u64],
    seen: usize,
    overhead: u64,
) {
    let scaled = SCALE_STEPS
        .iter()
        .find(|(_, label, _, _)| *label == phase)
        .map(|(_, _, _, call_row)| *call_row);
    let name = match phase {
        IPC_FAST_LABEL => "ipc_call_one_way",
        IPC_SLOW_LABEL => "ipc_slow_call_one_way",
        IPC_FILTERED_LABEL => "ipc_call_one_way_filtered",
        IPC_HIGHER_PRIO_LABEL => "ipc_call_one_way_higher_prio",
        IPC_SAME_AS_LABEL => "ipc_call_one_way_same_as",
        IPC_THREADS_LABEL => "ipc_call_one_way_threads_10000",
        IPC_BYTES_JUDGED_LABEL => "ipc_call_one_way_bytes_judged",
        _ => match scaled {
            Some(name) => name,
            None => return,
        },
    };
    let timed = seen
        .saturating_sub(WARM_UP_ITERATIONS as usize)
        .min(samples.len());
    if parameter.runs(name) && timed > 0 {
        // The server stored each one-way time as it was measured.
        for sample in &mut samples[..timed] {
            *sample = sample.saturating_sub(overhead);
        }
        let stats = summarise(&mut samples[..timed], overhead);
        print_row(parameter, name, stats);
    }
}

/// Notification round trips: signal the partner's notification, wait on
/// ours; the partner does the reverse.
pub fn run_notify_ping(parameter: BenchParameter) -> i32 {
    let (signal_to, wait_on) = (Cptr(ENDPOINT_SLOT), Cptr(SECOND_ENDPOINT_SLOT));
    if !parameter.runs("notification_round_trip") {
        // Release the partner, which waits for a first signal.
        return if ipc::signal(signal_to).is_ok() { 0 } else { 1 };
    }
    measure(parameter, "notification_round_trip", || {
        let start = now();
        let ok = ipc::signal(signal_to).is_ok() && ipc::wait(wait_on).is_ok();
        let end = now();
        if ok {
            end.wrapping_sub(start)
        } else {
            u64::MAX
        }
    });
    // Tell the partner to stop: a signal with no round trip after it.
    if ipc::signal(signal_to).is_ok() {
        0
    } else {
        1
    }
}

/// The other side of `run_notify_ping`: answers every signal until the
/// ping has done all its rounds (and sent the final one).
pub fn run_notify_pong(parameter: BenchParameter) -> i32 {
    let (wait_on, signal_to) = (Cptr(ENDPOINT_SLOT), Cptr(SECOND_ENDPOINT_SLOT));
    let rounds = if parameter.runs("notification_round_trip") {
        parameter.iterations.min(MAX_ITERATIONS) + WARM_UP_ITERATIONS
    } else {
        0
    };
    for _ in 0..rounds {
        if ipc::wait(wait_on).is_err() || ipc::signal(signal_to).is_err() {
            return 1;
        }
    }
    // The ping's final signal.
    if ipc::wait(wait_on).is_ok() {
        0
    } else {
        1
    }
}

/// Statistics of recorded samples (already net of `overhead`).
pub(crate) fn summarise(samples: &mut [u64], overhead: u64) -> Row {
    samples.sort_unstable();
    let count = samples.len();
    let sum: u64 = samples.iter().sum();
    Row {
        iterations: count,
        min: samples[0],
        median: samples[count / 2],
        mean_tenths: sum * 10 / count as u64,
        max: samples[count - 1],
        overhead,
    }
}

/// One row's statistics, per operation, overhead already subtracted.
pub(crate) struct Row {
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
    summarise(samples, overhead)
}

pub(crate) fn print_row(parameter: BenchParameter, name: &str, row: Row) {
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
