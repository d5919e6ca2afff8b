//! The policy rows: syscalls of threads with filters attached. Each
//! program first checks that its filters give the verdicts the row is
//! about (a row timed with a filter that did not attach, or with another
//! verdict, would measure something else), and reports a failure rather
//! than a row when they do not.

use super::{ipc_phases, measure, stop_ipc_server, IpcPhase, FAST_LENGTH};
use crate::programs::{CONSOLE_SLOT, ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT, STOP_LABEL};
use abi::bench::{
    BenchParameter, IPC_BYTES_JUDGED_LABEL, IPC_BYTES_JUDGED_LENGTH, IPC_FILTERED_LABEL,
    MAX_ITERATIONS, WARM_UP_ITERATIONS,
};
use abi::cap::CapType;
use abi::policy::BytesOp;
use abi::policy_request::{CarriedMemory, POLICY_REQUEST_LABEL, POLICY_REQUEST_MEMORY_WORD};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, PolicyAnswer};
use sdk::println;
use sdk::syscall::{self, raw_syscall};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::timing::{timed_syscall, timed_syscall_buffer};

/// Where the programs put the filters they retype (free in every
/// benchmark thread's 16-slot CNode).
const FIRST_FILTER: u64 = 8;
const SECOND_FILTER: u64 = 9;

/// The error the filters' `Errno` rules answer (one no benchmarked
/// syscall returns by itself).
const REFUSED: ErrorCode = ErrorCode::OutOfResources;

/// Retypes a filter from `untyped` into `slot`, loads `rules` and attaches
/// it to the thread of `tcb` (with `server` as its policy server).
fn attach(
    untyped: u64,
    tcb: Tcb,
    slot: u64,
    rules: FilterBuilder,
    server: Option<FilterServer>,
) -> Result<(), &'static str> {
    let mut buffer = [0u8; 512];
    let filter = FilterCap(Cptr(slot));
    syscall::retype(untyped, CapType::Filter, 0, slot, 1).map_err(|_| "retype failed")?;
    let description = rules.encode(&mut buffer).map_err(|_| "encode failed")?;
    filter.load(description).map_err(|_| "load failed")?;
    tcb.attach_filter(filter, server)
        .map_err(|_| "attach failed")
}

/// A filter that refuses `Yield` with a cached `Errno` and says nothing
/// of anything else: every other syscall's verdict is a constant `Allow`.
fn refuse_yield() -> FilterBuilder {
    FilterBuilder::new(Action::Allow)
        .rule(sdk::policy::RuleBuilder::syscall(Syscall::Yield).action(Action::errno(REFUSED)))
}

/// Is the `refuse_yield` filter in force (a yield refused, not run)?
fn yield_is_refused() -> bool {
    syscall::yield_now() == Err(REFUSED)
}

fn error(row: &str, reason: &str) -> i32 {
    println!("BENCH-ERROR name={row} reason={reason}");
    1
}

/// The single-thread policy rows (`BootProgram::BenchPolicy`): the
/// Untyped in slot 2, its own TCB with the policy right in slot 3.
pub fn run_single_thread(parameter: BenchParameter) -> i32 {
    const UNTYPED: u64 = ENDPOINT_SLOT;
    const SELF: Tcb = Tcb(Cptr(SECOND_ENDPOINT_SLOT));
    let row = "null_syscall_filtered_allow";
    if let Err(reason) = attach(UNTYPED, SELF, FIRST_FILTER, refuse_yield(), None) {
        return error(row, reason);
    }
    if !yield_is_refused() || syscall::null() != Ok(()) {
        return error(
            row,
            "the first filter's verdicts are not Errno for Yield, Allow for Null",
        );
    }
    // No rule names Null: a constant Allow, answered in the vector.
    if parameter.runs(row) {
        measure(parameter, row, || timed_syscall(Syscall::Null.number(), 0));
    }
    // A cached Errno: the generic entry, the cache, no dispatch.
    if parameter.runs("syscall_policy_errno") {
        measure(parameter, "syscall_policy_errno", || {
            timed_syscall(Syscall::Yield.number(), 0)
        });
    }

    // A second filter with a rule on Null's x2: its verdict is Errno or
    // Allow, so it is not cached and each Null is evaluated (x2 = 0 by
    // `timed_syscall`: allowed).
    let row = "syscall_policy_evaluated_allow";
    let on_x2 = FilterBuilder::new(Action::Allow).rule(
        sdk::policy::RuleBuilder::syscall(Syscall::Null)
            .arg(2, ArgOp::Eq, 1)
            .action(Action::errno(REFUSED)),
    );
    if let Err(reason) = attach(UNTYPED, SELF, SECOND_FILTER, on_x2, None) {
        return error(row, reason);
    }
    let null_with_x2 = |x2| raw_syscall(Syscall::Null.number(), 0, x2, 0).into_result();
    if null_with_x2(1) != Err(REFUSED) || null_with_x2(0) != Ok(()) || !yield_is_refused() {
        return error(
            row,
            "the stacked filters' verdicts are not the expected ones",
        );
    }
    if parameter.runs(row) {
        measure(parameter, row, || timed_syscall(Syscall::Null.number(), 0));
    }
    0
}

/// The filtered IPC rows' slots (both threads): the endpoint in 2, the
/// Untyped in 3, the thread's own TCB with the policy right in 4.
const IPC_UNTYPED: u64 = SECOND_ENDPOINT_SLOT;
const IPC_SELF: Tcb = Tcb(Cptr(4));

/// The filtered client's one phase: register-only, as `ipc_call_one_way`.
const FILTERED_PHASE: [IpcPhase; 1] = [IpcPhase {
    label: IPC_FILTERED_LABEL,
    length: FAST_LENGTH,
    call_row: "ipc_call_one_way_filtered",
    reply_row: "ipc_reply_recv_one_way_filtered",
    round_row: "ipc_round_trip_filtered",
}];

/// Attaches `refuse_yield` to the calling IPC benchmark thread: `Call`
/// and `ReplyRecv` keep a constant `Allow`, so both may take the fast
/// path.
fn filter_ipc_thread() -> Result<(), &'static str> {
    attach(IPC_UNTYPED, IPC_SELF, FIRST_FILTER, refuse_yield(), None)?;
    if yield_is_refused() {
        Ok(())
    } else {
        Err("the filter does not refuse Yield")
    }
}

/// `BenchIpcServer`, filtered.
pub fn run_filtered_ipc_server(parameter: BenchParameter) -> i32 {
    if let Err(reason) = filter_ipc_thread() {
        return error("ipc_call_one_way_filtered", reason);
    }
    super::run_ipc_server(parameter)
}

/// `BenchIpcClient`'s register-only phase, filtered.
pub fn run_filtered_ipc_client(parameter: BenchParameter) -> i32 {
    if let Err(reason) = filter_ipc_thread() {
        return error("ipc_round_trip_filtered", reason);
    }
    match ipc_phases(parameter, &FILTERED_PHASE) {
        0 => {}
        failed => return failed,
    }
    if let Err(reason) = judge_call_bytes(parameter) {
        return error("ipc_round_trip_bytes_judged", reason);
    }
    stop_ipc_server()
}

/// The 64 bytes the judged phase's calls carry in buffer words 6..=13.
const JUDGED_BYTES: &[u8; 64] = b"judged-bytes-0123456789abcdefghijklmnopqrstuvwxyz-0123456789-end";

/// The phase whose calls carry `JUDGED_BYTES` in their buffer, judged by
/// a byte rule of a second filter (attached now: its rule on `Call` takes
/// the client's calls off the fast path, which the filtered phase before
/// it must stay on).
const BYTES_JUDGED_PHASE: [IpcPhase; 1] = [IpcPhase {
    label: IPC_BYTES_JUDGED_LABEL,
    length: IPC_BYTES_JUDGED_LENGTH,
    call_row: "ipc_call_one_way_bytes_judged",
    reply_row: "ipc_reply_recv_one_way_bytes_judged",
    round_row: "ipc_round_trip_bytes_judged",
}];

/// Attaches the byte rule, checks it refuses other bytes and allows
/// `JUDGED_BYTES`, and runs the phase.
fn judge_call_bytes(parameter: BenchParameter) -> Result<(), &'static str> {
    let phase = &BYTES_JUDGED_PHASE[0];
    if ![phase.call_row, phase.reply_row, phase.round_row]
        .iter()
        .any(|row| parameter.runs(row))
    {
        return Ok(());
    }
    let judged_call = || RuleBuilder::syscall(Syscall::Call).label(IPC_BYTES_JUDGED_LABEL);
    let rules = FilterBuilder::new(Action::Allow)
        .rule(
            judged_call()
                .bytes(BytesOp::Equal, JUDGED_BYTES, 0)
                .action(Action::Allow),
        )
        .rule(judged_call().action(Action::errno(REFUSED)));
    attach(IPC_UNTYPED, IPC_SELF, SECOND_FILTER, rules, None)?;
    let call = || {
        ipc::call(
            Cptr(ENDPOINT_SLOT),
            &Message::new(IPC_BYTES_JUDGED_LABEL, &[0]).with_length(IPC_BYTES_JUDGED_LENGTH),
        )
    };
    // Other bytes are refused before the server sees them.
    for word in 6..14 {
        ipc::set_buffer_word(word, 0);
    }
    if call().map(|_| ()) != Err(REFUSED) {
        return Err("a call with other bytes was not refused");
    }
    for (i, chunk) in JUDGED_BYTES.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        ipc::set_buffer_word(6 + i, u64::from_le_bytes(word));
    }
    if ipc_phases(parameter, &BYTES_JUDGED_PHASE) != 0 {
        return Err("a judged call failed");
    }
    Ok(())
}

/// The asker's capability to its server's TCB (read).
const SERVER_TCB: Tcb = Tcb(Cptr(5));

/// The asker of the `Notify` rows (`BootProgram::BenchPolicyAsker`): its
/// server's endpoint in slot 2, its own TCB in 3, the Untyped in 4, the
/// server's TCB in 5. Every `Null` and `DebugPrint` it makes is forwarded
/// to the server:
///
/// * `policy_notify_round_trip`: a `Null` (`x2 = 0`), allowed;
/// * `policy_allow_with_round_trip`: a `Null` with `x2 = ALLOW_WITH`, which
///   the server allows with new `x2..x7` (all 0): the filters judge it
///   again, then it runs;
/// * `policy_notify_64_bytes`: a 64-byte `DebugPrint`, its bytes copied
///   and carried to the server, which answers with the result it would
///   have had (emulate: nothing prints).
///
/// At the end the server says how many requests it answered.
pub fn run_notify_asker(parameter: BenchParameter) -> i32 {
    let row = "policy_notify_round_trip";
    let server = Cptr(ENDPOINT_SLOT);
    let notify = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::Notify))
        // Only the 64-byte print: the asker's result lines must print.
        .rule(
            RuleBuilder::syscall(Syscall::DebugPrint)
                .arg(3, ArgOp::Eq, PRINTED.len() as u64)
                .action(Action::Notify),
        );
    if let Err(reason) = attach(
        4,
        Tcb(Cptr(SECOND_ENDPOINT_SLOT)),
        FIRST_FILTER,
        notify,
        Some(FilterServer {
            endpoint: server,
            thread: SERVER_TCB,
        }),
    ) {
        return error(row, reason);
    }
    let print = |text: &[u8]| {
        timed_syscall_buffer(
            Syscall::DebugPrint.number(),
            CONSOLE_SLOT,
            text.as_ptr() as u64,
            text.len() as u64,
        )
        .1
    };
    let mut asked = 0;
    if syscall::null() != Ok(())
        || raw_syscall(Syscall::Null.number(), 0, ALLOW_WITH, 0).into_result() != Ok(())
        || print(PRINTED) != EMULATED
    {
        return error(row, "a forwarded call did not get its server's answer");
    }
    asked += 3;
    let timed = u64::from(WARM_UP_ITERATIONS + parameter.iterations.min(MAX_ITERATIONS));
    if parameter.runs(row) {
        measure(parameter, row, || timed_syscall(Syscall::Null.number(), 0));
        asked += timed;
    }
    let row = "policy_allow_with_round_trip";
    if parameter.runs(row) {
        measure(parameter, row, || {
            timed_syscall(Syscall::Null.number(), ALLOW_WITH)
        });
        asked += timed;
    }
    let row = "policy_notify_64_bytes";
    if parameter.runs(row) {
        measure(parameter, row, || {
            timed_syscall_buffer(
                Syscall::DebugPrint.number(),
                CONSOLE_SLOT,
                PRINTED.as_ptr() as u64,
                PRINTED.len() as u64,
            )
            .0
        });
        asked += timed;
    }
    match ipc::call(server, &Message::new(STOP_LABEL, &[])) {
        Ok(reply) if reply.words[0] == asked => 0,
        Ok(reply) => {
            let answered = reply.words[0];
            println!("BENCH-ERROR name={row} reason=the server answered {answered} requests, not {asked}");
            1
        }
        Err(_) => error(row, "the stop call failed"),
    }
}

/// `x2` of the asker's `Null`s that its server allows with new arguments.
const ALLOW_WITH: u64 = 0xa11;
/// The asker's forwarded print: 64 bytes.
const PRINTED: &[u8; 64] = b"forwarded print: 64 bytes, judged by the server, never printed!\n";
/// What the server's emulation of the print returns (not `Ok`, so the
/// asker can tell it from a print that ran).
const EMULATED: u64 = 0x64;

/// The policy server of `run_notify_asker` (`BootProgram::BenchPolicyServer`,
/// the endpoint in slot 2): allows each `Null` (with new arguments when
/// its `x2` is `ALLOW_WITH`), emulates each 64-byte print whose judged
/// bytes it was sent, and answers the asker's stop call with the number of
/// requests it answered.
pub fn run_notify_server(_parameter: BenchParameter) -> i32 {
    let endpoint = Cptr(ENDPOINT_SLOT);
    let Ok(mut received) = ipc::recv(endpoint) else {
        return 1;
    };
    let mut answered = 0u64;
    let allow = PolicyAnswer::Allow.to_message();
    let allow_with = PolicyAnswer::AllowWith([0; 6]).to_message();
    let emulate = PolicyAnswer::Emulate {
        x0: EMULATED,
        x8: 0,
    }
    .to_message();
    loop {
        let message = &received.message;
        let answer = match message.info.label() {
            POLICY_REQUEST_LABEL if message.words[0] == Syscall::Null.number() => {
                // Word 7 of a request is the call's x2 (`x1..x7` are
                // words 6..=12, in the IPC buffer).
                if ipc::buffer_word(7) == ALLOW_WITH {
                    &allow_with
                } else {
                    &allow
                }
            }
            POLICY_REQUEST_LABEL if message.words[0] == Syscall::DebugPrint.number() => {
                // Words 14..=16: a buffer, 64 bytes long, all judged; the
                // bytes from word 128 on.
                let carried = (
                    ipc::buffer_word(14),
                    ipc::buffer_word(15),
                    ipc::buffer_word(16),
                );
                if carried != (CarriedMemory::Buffer as u64, 64, 64)
                    || ipc::buffer_word(POLICY_REQUEST_MEMORY_WORD)
                        != u64::from_le_bytes(*b"forwarde")
                {
                    let first = ipc::buffer_word(POLICY_REQUEST_MEMORY_WORD);
                    println!("bench policy server: the print's bytes did not come with it: {carried:?}, first word {first:#x}");
                    return 5;
                }
                &emulate
            }
            STOP_LABEL => {
                return match ipc::reply(&Message::new(0, &[answered])) {
                    Ok(()) => 0,
                    Err(_) => 3,
                }
            }
            label => {
                println!("bench policy server: unexpected message, label {label:#x}");
                return 4;
            }
        };
        answered += 1;
        match ipc::reply_recv(endpoint, answer) {
            Ok(next) => received = next,
            Err(_) => return 2,
        }
    }
}
