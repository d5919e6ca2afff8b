//! The policy rows: syscalls of threads with filters attached. Each
//! program first checks that its filters give the verdicts the row is
//! about (a row timed with a filter that did not attach, or with another
//! verdict, would measure something else), and reports a failure rather
//! than a row when they do not.

use super::{ipc_client, measure, IpcPhase, FAST_LENGTH};
use crate::programs::{ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT, STOP_LABEL};
use abi::bench::{BenchParameter, IPC_FILTERED_LABEL, MAX_ITERATIONS, WARM_UP_ITERATIONS};
use abi::cap::CapType;
use abi::policy_request::{POLICY_REPLY_ALLOW, POLICY_REQUEST_LABEL};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, ArgOp, FilterBuilder};
use sdk::println;
use sdk::syscall::{self, raw_syscall};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::timing::timed_syscall;

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
    ipc_client(parameter, &FILTERED_PHASE)
}

/// The asker's capability to its server's TCB (read).
const SERVER_TCB: Tcb = Tcb(Cptr(5));

/// The asker of `policy_notify_round_trip` (`BootProgram::BenchPolicyAsker`):
/// its server's endpoint in slot 2, its own TCB in 3, the Untyped in 4,
/// the server's TCB in 5.
/// Every `Null` it makes is forwarded to the server, which allows it; at
/// the end the server says how many requests it answered.
pub fn run_notify_asker(parameter: BenchParameter) -> i32 {
    let row = "policy_notify_round_trip";
    let server = Cptr(ENDPOINT_SLOT);
    let notify_null = FilterBuilder::new(Action::Allow)
        .rule(sdk::policy::RuleBuilder::syscall(Syscall::Null).action(Action::Notify));
    if let Err(reason) = attach(
        4,
        Tcb(Cptr(SECOND_ENDPOINT_SLOT)),
        FIRST_FILTER,
        notify_null,
        Some(FilterServer {
            endpoint: server,
            thread: SERVER_TCB,
        }),
    ) {
        return error(row, reason);
    }
    let mut asked = 0;
    if syscall::null() != Ok(()) {
        return error(row, "a forwarded Null was not allowed");
    }
    asked += 1;
    if parameter.runs(row) {
        measure(parameter, row, || timed_syscall(Syscall::Null.number(), 0));
        asked += u64::from(WARM_UP_ITERATIONS + parameter.iterations.min(MAX_ITERATIONS));
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

/// The policy server of `run_notify_asker` (`BootProgram::BenchPolicyServer`,
/// the endpoint in slot 2): answers each request for a `Null` with allow,
/// and the asker's stop call with the number of requests it answered.
pub fn run_notify_server(_parameter: BenchParameter) -> i32 {
    let endpoint = Cptr(ENDPOINT_SLOT);
    let Ok(mut received) = ipc::recv(endpoint) else {
        return 1;
    };
    let mut answered = 0u64;
    let allow = Message::new(POLICY_REPLY_ALLOW, &[]);
    loop {
        let message = &received.message;
        match message.info.label() {
            POLICY_REQUEST_LABEL if message.words[0] == Syscall::Null.number() => {
                answered += 1;
                match ipc::reply_recv(endpoint, &allow) {
                    Ok(next) => received = next,
                    Err(_) => return 2,
                }
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
        }
    }
}
