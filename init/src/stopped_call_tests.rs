//! A stopped syscall is the kernel's copy of the call as it was judged
//! (issue 13, point 1): while a thread waits for its policy server or its
//! tracer, or has its answer but has not run yet, a sibling holding its
//! TCB can no longer change what runs. A write of one of `x0..x8` cancels
//! the call (it returns `Interrupted`, the writer learns so), a suspension
//! cancels it too, and writes of other registers change only those
//! registers. The policy server's or tracer's answer to a cancelled call
//! finds no caller; a tracer that had answered its entry stop gets its
//! exit stop, with `Interrupted`; its audit record says "cancelled".
//!
//! A call waiting for room in a lossless audit ring is a stopped call
//! too (`room_*`): cancelled the same way, its record is a counted drop.
//!
//! The first two cases have three threads: the victim (priority 100),
//! the attacker (105) holding the victim's TCB, and the warden (110: the
//! policy server and auditor, or the tracer and policy server). The warden
//! receives each stop first, then hands the CPU to the attacker
//! (signalling `GO` and waiting on `BACK`), which makes its move
//! ([`Move`]) and hands it back. Each program returns the number of its
//! first failed check.

use crate::programs::{CANCEL_SCENARIO_TRACE, CONSOLE_SLOT, ENDPOINT_SLOT};
use abi::audit::{AuditMode, AuditVerdict};
use abi::cap::CapType;
use abi::tcb::Register;
use abi::trace::StopKind;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr, Message, Received};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, PolicyAnswer, PolicyRequest};
use sdk::syscall::{raw_syscall_registers, raw_syscall_registers_and_x9, retype};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::trace::{self, Stop};
use sdk::vspace::{Frame, VSpace};

/// The label of the victim's report (a `Call` the attacker cancels) and of
/// its last message (a `Send`).
const REPORT: u64 = 0x4e9;
const DONE: u64 = 0xd0e;
/// The badges the warden's requests and stops arrive with.
pub const SERVER_BADGE: u64 = 0x5e;
/// See [`SERVER_BADGE`].
pub const TRACER_BADGE: u64 = 0x7ace;
/// The badge of the victim's own capability to the warden's endpoint.
pub const VICTIM_BADGE: u64 = 0xa5;
/// The badge the victim's audit records carry.
const AUDIT_BADGE: u64 = 0xa5;
/// What the victim holds in `x9` across a call, and what the attacker
/// writes there (a register the call does not use: no cancellation).
const X9_BEFORE: u64 = 0x9999_0000_0000_0001;
const X9_WRITTEN: u64 = 0x9999_0000_0000_0002;
/// What the attacker writes into the victim's `x0` while its call waits:
/// the call is cancelled, then the write takes effect, so this (not
/// `Interrupted`) is what the victim finds in `x0`.
const X0_WRITTEN: u64 = 0x5151;
/// What an emulated or skipped call would have returned.
const EMULATED: u64 = 0x77;
const SKIPPED: u64 = 0x1234;

/// The victim's slots: its capability to the warden's endpoint, the
/// notification it polls (and which a `Signal` the attacker slips in
/// would hit), its own TCB.
const TO_WARDEN: Cptr = Cptr(ENDPOINT_SLOT);
const TARGET: Cptr = Cptr(3);
const OWN_TCB: u64 = 4;

/// One move of the attacker on the victim.
#[derive(Clone, Copy, Debug)]
enum Move {
    /// Write this register; `true`: the write must report a cancelled
    /// call.
    Write(Register, u64, bool),
    /// The register must hold this value.
    Read(Register, u64),
    Suspend,
    Resume,
    /// Set the attacker's own priority.
    Priority(u64),
}

const SIGNAL: u64 = Syscall::Signal.number();
const POLL: u64 = Syscall::Poll.number();
/// The attacker's priority, and the one it drops to so that the victim
/// runs into a call whose server is not receiving.
const ATTACKER_PRIORITY: u64 = 105;
const BELOW_VICTIM: u64 = 95;

/// The attacker's moves against the policy victim, one list per `GO`.
const POLICY_MOVES: [&[Move]; 10] = [
    // 1: waiting for its server, the Poll becomes a Signal.
    &[Move::Write(Register::X(8), SIGNAL, true)],
    // 2: its server allowed 70 bytes as 3; the length goes back to 70.
    &[Move::Write(Register::X(3), 70, true)],
    // 3: x9 and the flags are not the call's: nothing is cancelled.
    &[
        Move::Read(Register::X(8), POLL),
        Move::Write(Register::X(9), X9_WRITTEN, false),
        Move::Write(Register::Nzcv, 0x2000_0000, false),
    ],
    // 4: below the victim, which calls while its server is busy: the
    // request waits in the endpoint's queue when x7 is written.
    &[
        Move::Priority(BELOW_VICTIM),
        Move::Write(Register::X(7), 7, true),
        Move::Priority(ATTACKER_PRIORITY),
    ],
    // 5: x0, the capability (and the result register).
    &[Move::Write(Register::X(0), X0_WRITTEN, true)],
    // 6: suspended while it waits (twice: idempotent), then resumed.
    &[Move::Suspend, Move::Suspend],
    &[Move::Resume],
    // 7: its server emulated it; suspended before it ran, resumed.
    &[Move::Suspend, Move::Resume],
    // 8: its server allowed the Poll; before it runs it becomes a Signal.
    &[Move::Write(Register::X(8), SIGNAL, true)],
    // 10: blocked in a Call (waiting for the reply): its message info.
    &[Move::Write(Register::X(1), 0, true)],
];

/// The attacker's moves against the traced victim.
const TRACE_MOVES: [&[Move]; 7] = [
    // 1: at its entry stop, not answered yet.
    &[Move::Write(Register::X(3), 70, true)],
    // 2: the tracer saw 3 bytes and continued; 70 would run.
    &[Move::Write(Register::X(3), 70, true)],
    // 3: the tracer shortened 45 bytes to 3; back to 45.
    &[Move::Write(Register::X(3), 45, true)],
    // 4: past its entry stop, waiting for its policy server.
    &[Move::Write(Register::X(8), SIGNAL, true)],
    // 5: the same, with a register the call does not use.
    &[Move::Write(Register::X(9), X9_WRITTEN, false)],
    // 6: its server emulated it: suspended and resumed before it ran.
    &[Move::Suspend, Move::Resume],
    // 7: the tracer skipped it with a result: x2 written before it ran.
    &[Move::Write(Register::X(2), 0, true)],
];

/// The attacker's slots: the victim's TCB (read and write), its own TCB,
/// the two hand-over notifications.
const VICTIM: Tcb = Tcb(Cptr(2));
const ATTACKER_TCB: Tcb = Tcb(Cptr(3));
const GO: Cptr = Cptr(4);
const BACK: Cptr = Cptr(5);

/// Makes its moves, one list each time the warden hands it the CPU.
pub fn attacker(scenario: u64) -> i32 {
    let script: &[&[Move]] = if scenario == CANCEL_SCENARIO_TRACE {
        &TRACE_MOVES
    } else {
        &POLICY_MOVES
    };
    for (step, moves) in script.iter().enumerate() {
        let check = 10 * (step as i32 + 1);
        expect!(check, ipc::wait(GO).map(|word| word != 0), Ok(true));
        for (index, &one) in moves.iter().enumerate() {
            let check = check + 1 + index as i32;
            let result = match one {
                Move::Write(register, value, cancels) => VICTIM
                    .write_register(register, value)
                    .map(|cancelled| cancelled == cancels),
                Move::Read(register, value) => VICTIM.read_register(register).map(|v| v == value),
                Move::Suspend => VICTIM.suspend().map(|()| true),
                Move::Resume => VICTIM.resume().map(|()| true),
                Move::Priority(priority) => ATTACKER_TCB.set_priority(priority).map(|()| true),
            };
            if result != Ok(true) {
                sdk::println!("check {check} failed: {one:?} gave {result:?}");
                return check;
            }
        }
        expect!(check + 9, ipc::signal(BACK), Ok(()));
    }
    0
}

/// An error code as the victim sees it in `x0`.
fn code(x0: u64) -> Option<ErrorCode> {
    ErrorCode::from_raw(x0)
}

/// A `Poll` of `TARGET` with `x2 = step` (which `Poll` ignores): `x0`
/// and `x8` as it returns.
fn marked_poll(step: u64) -> (Option<ErrorCode>, u64) {
    let x = raw_syscall_registers(POLL, [TARGET.0, 0, step, 0, 0, 0, 0, 0]);
    (code(x[0]), x[8])
}

/// A `DebugPrint` of `text` with `x2 = text`, `x3 = length` as given.
fn print(text: &[u8], length: u64) -> Option<ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::DebugPrint.number(),
        [CONSOLE_SLOT, 0, text.as_ptr() as u64, length, 0, 0, 0, 0],
    );
    code(x[0])
}

/// The policy victim: its filter sends `Poll`, `Signal` and `DebugPrint`
/// to the warden; each call's result shows what the attacker's move did.
/// It must not print (a print is a request to the warden).
pub fn policy_victim() -> i32 {
    use ErrorCode::{Interrupted, InvalidArgument};
    const INTERRUPTED: Option<ErrorCode> = Some(Interrupted);
    // 1: x8 written while its server decides: cancelled, the write stays.
    expect!(1, marked_poll(1), (INTERRUPTED, SIGNAL));
    // 2: allowed as 3 bytes, x3 written before it ran: nothing printed.
    let text = [b'!'; 70];
    expect!(2, print(&text, 70), INTERRUPTED);
    // 3: x9 written while it waits: it runs as allowed, x9 as written.
    let (x, x9) = raw_syscall_registers_and_x9(POLL, [TARGET.0, 0, 3, 0, 0, 0, 0, 0], X9_BEFORE);
    expect!(
        3,
        (code(x[0]), x[8], x9),
        (Some(ErrorCode::Ok), 0, X9_WRITTEN)
    );
    // 4: cancelled before its server ever received it.
    expect!(4, marked_poll(4).0, INTERRUPTED);
    // 5: x0 written: cancelled, and x0 is what was written.
    let x = raw_syscall_registers(POLL, [TARGET.0, 0, 5, 0, 0, 0, 0, 0]);
    expect!(5, x[0], X0_WRITTEN);
    // 6: suspended while it waited, then resumed.
    expect!(6, marked_poll(6).0, INTERRUPTED);
    // 7: emulated (x8 = 0x77), then suspended before it ran: cancelled.
    let (result, x8) = marked_poll(7);
    expect!(7, (result, x8 == EMULATED), (INTERRUPTED, false));
    // 8: allowed, then x8 written before it ran: no Signal either.
    expect!(8, marked_poll(8), (INTERRUPTED, SIGNAL));
    // 9: its own x0 and x8 are this call's results; x1 is only written.
    let own = |register: Register, value: u64| {
        let x = raw_syscall_registers(
            Syscall::TcbWriteRegister.number(),
            [OWN_TCB, 0, register.number(), value, 0, 0, 0, 0],
        );
        (code(x[0]), x[1], x[8])
    };
    expect!(91, own(Register::X(0), 1).0, Some(InvalidArgument));
    expect!(92, own(Register::X(8), 1).0, Some(InvalidArgument));
    expect!(
        93,
        own(Register::X(1), 0x11),
        (Some(ErrorCode::Ok), 0x11, 0)
    );
    // 10: blocked waiting for the warden's reply; x1 written: cancelled.
    expect!(
        10,
        ipc::call(TO_WARDEN, &Message::new(REPORT, &[])).map(|_| ()),
        Err(Interrupted)
    );
    expect!(11, ipc::send(TO_WARDEN, &Message::new(DONE, &[])), Ok(()));
    0
}

/// The warden's slots (both cases): its endpoint (receive), the capability
/// it names as policy server (badge `SERVER_BADGE`), the victim's TCB
/// (policy and trace rights), an Untyped, the hand-over notifications, the
/// victim's target notification (to see no `Signal` reached it).
const REQUESTS: Cptr = Cptr(ENDPOINT_SLOT);
const SERVER_CAP: Cptr = Cptr(3);
const VICTIM_TCB: Tcb = Tcb(Cptr(4));
const UNTYPED: u64 = 5;
const HAND_OVER: Cptr = Cptr(6);
const HANDED_BACK: Cptr = Cptr(7);
const VICTIM_TARGET: Cptr = Cptr(8);
/// The policy warden's own VSpace (for the ring), the trace warden's
/// capability it attaches as tracer through (badge `TRACER_BADGE`).
const OWN_VSPACE: VSpace = VSpace(Cptr(9));
const TRACER_CAP: Cptr = Cptr(9);
const FILTER: FilterCap = FilterCap(Cptr(10));
const RING: Frame = Frame(Cptr(11));
const RING_SIGNAL: Cptr = Cptr(12);
/// The warden's own TCB (read): it answers the victim's filter.
const WARDEN_OWN_TCB: Tcb = Tcb(Cptr(13));

/// Hands the CPU to the attacker for one list of moves and waits for it.
fn attack() -> Result<(), ErrorCode> {
    ipc::signal(HAND_OVER)?;
    ipc::wait(HANDED_BACK).map(|_| ())
}

/// Loads and attaches the victim's filter: `Notify` (to this thread) for
/// each of `syscalls`.
fn attach_notify_filter(syscalls: &[Syscall]) -> Result<(), ErrorCode> {
    let mut buffer = [0u8; 256];
    let rules = syscalls
        .iter()
        .fold(FilterBuilder::new(Action::Allow), |rules, &s| {
            rules.rule(RuleBuilder::syscall(s).action(Action::Notify))
        });
    let encoded = rules
        .encode(&mut buffer)
        .map_err(|_| ErrorCode::InvalidArgument)?;
    retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1)?;
    FILTER.load(encoded)?;
    let server = FilterServer {
        endpoint: SERVER_CAP,
        thread: WARDEN_OWN_TCB,
    };
    VICTIM_TCB.attach_filter(FILTER, Some(server))
}

/// The next policy request, which must be for `number` with `x2 = step`
/// (`None`: not checked), through the server's capability.
fn next_request(
    received: Result<Received, ErrorCode>,
    number: u64,
    step: Option<u64>,
) -> Option<PolicyRequest> {
    let request = PolicyRequest::decode(&received.ok()?, ipc::buffer_word)?;
    let wanted = request.number == number
        && request.endpoint_badge == SERVER_BADGE
        && step.is_none_or(|step| request.args[2] == step);
    if !wanted {
        sdk::println!(
            "unexpected request: {} x2={:#x} x3={:#x}",
            request.syscall.map_or("?", Syscall::name),
            request.args[2],
            request.args[3]
        );
        // Most likely the victim's report of a failed check: let it print.
        if request.syscall == Some(Syscall::DebugPrint) {
            let _ = ipc::reply(&PolicyAnswer::Allow.to_message());
        }
        return None;
    }
    Some(request)
}

/// One audit record the policy victim's calls must leave.
#[derive(Clone, Copy)]
struct Expected {
    syscall: Syscall,
    /// `x2` (a poll's step, a register number), if it is checked.
    x2: Option<u64>,
    verdict: AuditVerdict,
    /// A policy server decided it.
    forwarded: bool,
    result: Option<ErrorCode>,
}

const fn expected(
    syscall: Syscall,
    x2: Option<u64>,
    verdict: AuditVerdict,
    forwarded: bool,
    result: Option<ErrorCode>,
) -> Expected {
    Expected {
        syscall,
        x2,
        verdict,
        forwarded,
        result,
    }
}

/// The policy victim's records, in order.
const POLICY_RECORDS: [Expected; 13] = {
    use AuditVerdict::{Allowed, Cancelled};
    use ErrorCode::{Interrupted, InvalidArgument, Ok};
    use Syscall::{Call, DebugPrint, Poll, Send, TcbWriteRegister};
    [
        expected(Poll, Some(1), Cancelled, false, Some(Interrupted)),
        expected(DebugPrint, None, Cancelled, true, Some(Interrupted)),
        expected(Poll, Some(3), Allowed, true, Some(Ok)),
        expected(Poll, Some(4), Cancelled, false, Some(Interrupted)),
        expected(Poll, Some(5), Cancelled, false, Some(Interrupted)),
        expected(Poll, Some(6), Cancelled, false, Some(Interrupted)),
        expected(Poll, Some(7), Cancelled, true, Some(Interrupted)),
        expected(Poll, Some(8), Cancelled, true, Some(Interrupted)),
        expected(
            TcbWriteRegister,
            Some(0),
            Allowed,
            false,
            Some(InvalidArgument),
        ),
        expected(
            TcbWriteRegister,
            Some(8),
            Allowed,
            false,
            Some(InvalidArgument),
        ),
        expected(TcbWriteRegister, Some(1), Allowed, false, Some(Ok)),
        // Blocked (no result), then cancelled as an IPC wait.
        expected(Call, None, Allowed, false, None),
        expected(Send, None, Allowed, false, Some(Ok)),
    ]
};

/// The policy server and auditor of `policy_victim`: receives each
/// request, lets the attacker move, answers, and at the end reads the
/// victim's records.
pub fn policy_warden() -> i32 {
    expect!(
        1,
        attach_notify_filter(&[Syscall::Poll, Syscall::Signal, Syscall::DebugPrint]),
        Ok(())
    );
    expect!(2, retype(UNTYPED, CapType::Frame, 0, RING.0 .0, 1), Ok(()));
    expect!(
        3,
        retype(UNTYPED, CapType::Notification, 0, RING_SIGNAL.0, 1),
        Ok(())
    );
    let Ok(mut ring) = RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite) else {
        return 4;
    };
    expect!(
        5,
        VICTIM_TCB.set_audit(RING, RING_SIGNAL, Some(AuditMode::Lossy), AUDIT_BADGE),
        Ok(())
    );
    let allow = PolicyAnswer::Allow.to_message();
    let no_caller = Err(ErrorCode::NoReplyTarget);

    // 1: the attacker moves while this server decides: the answer
    // finds no caller.
    expect!(
        10,
        next_request(ipc::recv(REQUESTS), POLL, Some(1)).is_some(),
        true
    );
    expect!(11, attack(), Ok(()));
    expect!(12, ipc::reply(&allow), no_caller);
    // 2: allow 70 bytes as 3; the attacker moves after the answer.
    let Some(print) = next_request(ipc::recv(REQUESTS), Syscall::DebugPrint.number(), None) else {
        return 20;
    };
    expect!(21, print.args[3], 70);
    let mut clamped = [0u64; 6];
    clamped.copy_from_slice(&print.args[2..8]);
    clamped[1] = 3;
    expect!(
        22,
        ipc::reply(&PolicyAnswer::AllowWith(clamped).to_message()),
        Ok(())
    );
    expect!(23, attack(), Ok(()));
    // 3: a move that cancels nothing; then allowed, it runs.
    expect!(
        30,
        next_request(ipc::recv(REQUESTS), POLL, Some(3)).is_some(),
        true
    );
    expect!(31, attack(), Ok(()));
    expect!(32, ipc::reply(&allow), Ok(()));
    // 4: busy (with the attacker) when the victim calls: its request is
    // cancelled in the queue and never arrives.
    expect!(40, attack(), Ok(()));
    // 5: x0 written while this server decides.
    expect!(
        50,
        next_request(ipc::recv(REQUESTS), POLL, Some(5)).is_some(),
        true
    );
    expect!(51, attack(), Ok(()));
    expect!(52, ipc::reply(&allow), no_caller);
    // 6: suspended while this server decides, resumed after its answer.
    expect!(
        60,
        next_request(ipc::recv(REQUESTS), POLL, Some(6)).is_some(),
        true
    );
    expect!(61, attack(), Ok(()));
    expect!(62, ipc::reply(&allow), no_caller);
    expect!(63, attack(), Ok(()));
    // 7: emulated; the attacker suspends and resumes it before it runs.
    expect!(
        70,
        next_request(ipc::recv(REQUESTS), POLL, Some(7)).is_some(),
        true
    );
    let emulate = PolicyAnswer::Emulate {
        x0: ErrorCode::Ok.raw(),
        x8: EMULATED,
    };
    expect!(71, ipc::reply(&emulate.to_message()), Ok(()));
    expect!(72, attack(), Ok(()));
    // 8: allowed; the attacker turns it into a Signal before it runs.
    expect!(
        80,
        next_request(ipc::recv(REQUESTS), POLL, Some(8)).is_some(),
        true
    );
    expect!(81, ipc::reply(&allow), Ok(()));
    expect!(82, attack(), Ok(()));
    // 10: the victim's report: the attacker cancels the Call it waits in.
    let Ok(report) = ipc::recv(REQUESTS) else {
        return 100;
    };
    expect!(
        101,
        (report.message.info.label(), report.badge),
        (REPORT, VICTIM_BADGE)
    );
    expect!(102, attack(), Ok(()));
    expect!(103, ipc::reply(&Message::new(0, &[])), no_caller);
    let Ok(done) = ipc::recv(REQUESTS) else {
        return 110;
    };
    expect!(111, done.message.info.label(), DONE);
    // No Signal the attacker slipped in ever ran.
    expect!(112, ipc::poll(VICTIM_TARGET), Ok(0));
    // One record per syscall, as judged.
    let mut reader = Reader::new();
    for (index, want) in POLICY_RECORDS.iter().enumerate() {
        let Expected {
            syscall,
            x2,
            verdict,
            forwarded,
            result,
        } = *want;
        let check = 120 + index as i32;
        let Some(Entry::Record { record, gap: 0 }) = reader.next(&mut ring) else {
            sdk::println!("record {index} is missing");
            return check;
        };
        sdk::println!("[audit] {}", Line(&record));
        let x2_matches = x2.is_none_or(|x2| record.args[2] == x2);
        if record.syscall != syscall.number()
            || !x2_matches
            || record.verdict != verdict
            || record.forwarded != forwarded
            || record.result != result.map(ErrorCode::raw)
            || record.thread_badge != AUDIT_BADGE
        {
            sdk::println!("check {check} failed: record {index} is not {syscall:?} {verdict:?}");
            return check;
        }
        // The print's record has the length it was judged with.
        if syscall == Syscall::DebugPrint {
            expect!(140, record.args[3], 3);
        }
    }
    // Nothing else (the victim's Exit comes later).
    expect!(141, reader.next(&mut ring), None);
    0
}

/// The traced victim: every syscall stops at entry and exit; its filter
/// sends `Poll` to the warden too.
pub fn trace_victim() -> i32 {
    use ErrorCode::Interrupted;
    const INTERRUPTED: Option<ErrorCode> = Some(Interrupted);
    // 1: x3 written at its entry stop, before the tracer answered.
    expect!(1, print(b"ok\n", 3), INTERRUPTED);
    // 2: after the tracer continued it.
    expect!(2, print(b"ok\n", 3), INTERRUPTED);
    // 3: after the tracer shortened it to 3 bytes.
    let long = [b'!'; 45];
    expect!(3, print(&long, 45), INTERRUPTED);
    // 4: past its entry stop, at its policy stop: x8 written.
    expect!(4, marked_poll(4), (INTERRUPTED, SIGNAL));
    // 5: x9 written at its policy stop: it runs, allowed.
    let (x, x9) = raw_syscall_registers_and_x9(POLL, [TARGET.0, 0, 5, 0, 0, 0, 0, 0], X9_BEFORE);
    expect!(
        5,
        (code(x[0]), x[8], x9),
        (Some(ErrorCode::Ok), 0, X9_WRITTEN)
    );
    // 6: emulated by its server, suspended and resumed before it ran.
    let (result, x8) = marked_poll(6);
    expect!(6, (result, x8 == EMULATED), (INTERRUPTED, false));
    // 7: skipped by the tracer with a result, x2 written before it ran.
    let x = raw_syscall_registers(Syscall::Null.number(), [0, 0, 7, 0, 0, 0, 0, 0]);
    expect!(7, code(x[0]), INTERRUPTED);
    expect!(8, ipc::send(TO_WARDEN, &Message::new(DONE, &[])), Ok(()));
    0
}

/// The next message, which must be a stop of `kind` for `number`.
fn next_stop(received: Result<Received, ErrorCode>, kind: StopKind, number: u64) -> Option<Stop> {
    let stop = Stop::decode(&received.ok()?)?;
    if stop.kind != kind || stop.number != number || stop.badge != TRACER_BADGE {
        sdk::println!(
            "unexpected stop: {:?} of {} (x0={:#x})",
            stop.kind,
            stop.name(),
            stop.regs[0]
        );
        return None;
    }
    Some(stop)
}

/// The tracer and policy server of `trace_victim`.
pub fn trace_warden() -> i32 {
    use StopKind::{Entry, Exit};
    let interrupted = ErrorCode::Interrupted.raw();
    let print = Syscall::DebugPrint.number();
    let null = Syscall::Null.number();
    let no_caller = Err(ErrorCode::NoReplyTarget);
    let resume = trace::resume(false);
    expect!(1, attach_notify_filter(&[Syscall::Poll]), Ok(()));
    expect!(2, VICTIM_TCB.attach_tracer(TRACER_CAP), Ok(()));

    // 1: the attacker moves while the entry stop is unanswered: the
    // answer finds no caller, and no exit stop follows.
    let Some(entry) = next_stop(ipc::recv(REQUESTS), Entry, print) else {
        return 10;
    };
    expect!(11, entry.regs[3], 3);
    expect!(12, attack(), Ok(()));
    expect!(13, ipc::reply(&resume), no_caller);
    // 2: continued; the attacker moves before it runs: its exit stop says
    // Interrupted.
    let Some(entry) = next_stop(ipc::recv(REQUESTS), Entry, print) else {
        return 20;
    };
    expect!(21, entry.regs[3], 3);
    expect!(22, ipc::reply(&resume), Ok(()));
    expect!(23, attack(), Ok(()));
    let Some(exit) = next_stop(ipc::recv(REQUESTS), Exit, print) else {
        return 24;
    };
    expect!(25, exit.regs[0], interrupted);
    // 3: shortened to 3 bytes by this tracer, then the attacker moves.
    let Some(entry) = next_stop(ipc::reply_recv(REQUESTS, &resume), Entry, print) else {
        return 30;
    };
    expect!(31, entry.regs[3], 45);
    let mut args = [0u64; 6];
    args.copy_from_slice(&entry.regs[..6]);
    args[3] = 3;
    expect!(32, ipc::reply(&trace::modify(print, args, false)), Ok(()));
    expect!(33, attack(), Ok(()));
    let Some(exit) = next_stop(ipc::recv(REQUESTS), Exit, print) else {
        return 34;
    };
    expect!(35, exit.regs[0], interrupted);
    // 4: past its entry stop, at its policy stop, the attacker moves: the
    // policy answer finds no caller, the exit stop says Interrupted.
    let Some(entry) = next_stop(ipc::reply_recv(REQUESTS, &resume), Entry, POLL) else {
        return 40;
    };
    expect!(41, entry.regs[2], 4);
    let policy = ipc::reply_recv(REQUESTS, &resume);
    expect!(42, next_request(policy, POLL, Some(4)).is_some(), true);
    expect!(43, attack(), Ok(()));
    expect!(44, ipc::reply(&PolicyAnswer::Allow.to_message()), no_caller);
    let Some(exit) = next_stop(ipc::recv(REQUESTS), Exit, POLL) else {
        return 45;
    };
    expect!(46, exit.regs[0], interrupted);
    // 5: the same with x9: nothing cancelled, it runs as allowed.
    let Some(entry) = next_stop(ipc::reply_recv(REQUESTS, &resume), Entry, POLL) else {
        return 50;
    };
    expect!(51, entry.regs[2], 5);
    let policy = ipc::reply_recv(REQUESTS, &resume);
    expect!(52, next_request(policy, POLL, Some(5)).is_some(), true);
    expect!(53, attack(), Ok(()));
    let allowed = ipc::reply_recv(REQUESTS, &PolicyAnswer::Allow.to_message());
    let Some(exit) = next_stop(allowed, Exit, POLL) else {
        return 54;
    };
    expect!(55, exit.regs[0], ErrorCode::Ok.raw());
    // 6: emulated by this server; suspended and resumed before it ran.
    let Some(entry) = next_stop(ipc::reply_recv(REQUESTS, &resume), Entry, POLL) else {
        return 60;
    };
    expect!(61, entry.regs[2], 6);
    let policy = ipc::reply_recv(REQUESTS, &resume);
    expect!(62, next_request(policy, POLL, Some(6)).is_some(), true);
    let emulate = PolicyAnswer::Emulate {
        x0: ErrorCode::Ok.raw(),
        x8: EMULATED,
    };
    expect!(63, ipc::reply(&emulate.to_message()), Ok(()));
    expect!(64, attack(), Ok(()));
    let Some(exit) = next_stop(ipc::recv(REQUESTS), Exit, POLL) else {
        return 65;
    };
    expect!(
        66,
        (exit.regs[0], exit.regs[8] == EMULATED),
        (interrupted, false)
    );
    // 7: skipped with a result by this tracer, then the attacker moves:
    // cancelled, so it has an exit stop after all.
    let Some(entry) = next_stop(ipc::reply_recv(REQUESTS, &resume), Entry, null) else {
        return 70;
    };
    expect!(71, entry.regs[2], 7);
    expect!(72, ipc::reply(&trace::result(SKIPPED, 0, false)), Ok(()));
    expect!(73, attack(), Ok(()));
    let Some(exit) = next_stop(ipc::recv(REQUESTS), Exit, null) else {
        return 74;
    };
    expect!(75, exit.regs[0], interrupted);
    // The victim's last message: entry stop, the message, its exit stop.
    let send = Syscall::Send.number();
    if next_stop(ipc::reply_recv(REQUESTS, &resume), Entry, send).is_none() {
        return 80;
    }
    let Ok(done) = ipc::reply_recv(REQUESTS, &resume) else {
        return 81;
    };
    expect!(
        82,
        (done.message.info.label(), done.badge),
        (DONE, VICTIM_BADGE)
    );
    if next_stop(ipc::recv(REQUESTS), Exit, send).is_none() {
        return 83;
    }
    expect!(84, ipc::reply(&trace::detach()), Ok(()));
    // No Signal the attacker slipped in ever ran.
    expect!(85, ipc::poll(VICTIM_TARGET), Ok(0));
    0
}

/// The room case's slots. The app: its capability to the auditor's
/// endpoint. The auditor: the endpoint, the app's TCB, an Untyped, its
/// own VSpace. The attacker: the app's TCB, its capability to the
/// auditor's endpoint.
const APP_TO_AUDITOR: Cptr = Cptr(2);
const AUDITOR_ENDPOINT: Cptr = Cptr(2);
const AUDITED_APP: Tcb = Tcb(Cptr(3));
const AUDITOR_UNTYPED: u64 = 4;
const AUDITOR_VSPACE: VSpace = VSpace(Cptr(5));
const ROOM_RING: Frame = Frame(Cptr(8));
const ROOM_RING_SIGNAL: Cptr = Cptr(9);
const ROOM_VICTIM: Tcb = Tcb(Cptr(2));
const ATTACKER_TO_AUDITOR: Cptr = Cptr(3);
/// The labels of the attacker's and the app's messages to the auditor.
const ATTACKED: u64 = 0xa77;
const AUDIT_ROOM_BADGE: u64 = 0x400;

/// Audits the app losslessly and waits: the app fills the ring and
/// waits for room, the attacker cancels that call and says so; then it
/// drains the ring, and checks the cancelled call's record is a counted
/// drop (a visible gap), not a silent loss.
pub fn room_auditor() -> i32 {
    use abi::audit::{DROPPED_OFFSET, RING_SLOTS};
    expect!(
        1,
        retype(AUDITOR_UNTYPED, CapType::Frame, 0, ROOM_RING.0 .0, 1),
        Ok(())
    );
    expect!(
        2,
        retype(
            AUDITOR_UNTYPED,
            CapType::Notification,
            0,
            ROOM_RING_SIGNAL.0,
            1
        ),
        Ok(())
    );
    let Ok(mut ring) = ROOM_RING.map_view(AUDITOR_VSPACE, FRAME_MAP_START, MapRights::ReadWrite)
    else {
        return 3;
    };
    expect!(
        4,
        AUDITED_APP.set_audit(
            ROOM_RING,
            ROOM_RING_SIGNAL,
            Some(AuditMode::Lossless),
            AUDIT_ROOM_BADGE
        ),
        Ok(())
    );
    // Stalled until the attacker reports its move.
    let Ok(attacked) = ipc::recv(AUDITOR_ENDPOINT) else {
        return 5;
    };
    expect!(6, attacked.message.info.label(), ATTACKED);
    let mut reader = Reader::new();
    for index in 0..RING_SLOTS {
        let Some(Entry::Record { record, gap: 0 }) = reader.next(&mut ring) else {
            return 10;
        };
        expect!(
            11,
            (record.syscall, record.args[2]),
            (Syscall::Null.number(), index)
        );
    }
    expect!(12, reader.next(&mut ring), None);
    // The ring has room now: the app's report comes once it is woken.
    let Ok(report) = ipc::recv(AUDITOR_ENDPOINT) else {
        return 20;
    };
    expect!(21, report.message.info.label(), REPORT);
    let Some(Entry::Record { record, gap }) = reader.next(&mut ring) else {
        return 22;
    };
    sdk::println!("[audit] {gap} record(s) lost before {}", Line(&record));
    // The cancelled Null's record could not be written: its sequence
    // number is skipped, the app's next record and the ring count it.
    expect!(
        23,
        (record.syscall, gap, record.dropped),
        (Syscall::Call.number(), 1, 1)
    );
    expect!(24, ring.read_u64(DROPPED_OFFSET), 1);
    expect!(25, ipc::reply(&Message::new(0, &[])), Ok(()));
    0
}

/// Audited losslessly into a ring nobody drains: makes `Null`s marked
/// with their index in `x2` until one waits for room; that one the
/// attacker cancels.
pub fn room_app() -> i32 {
    use abi::audit::RING_SLOTS;
    for index in 0..RING_SLOTS {
        let x = raw_syscall_registers(Syscall::Null.number(), [0, 0, index, 0, 0, 0, 0, 0]);
        expect!(1, code(x[0]), Some(ErrorCode::Ok));
    }
    // The ring is full: this one waits for room, and is cancelled.
    let x = raw_syscall_registers(Syscall::Null.number(), [0, 0, RING_SLOTS, 0, 0, 0, 0, 0]);
    expect!(2, code(x[0]), Some(ErrorCode::Interrupted));
    expect!(
        3,
        ipc::call(APP_TO_AUDITOR, &Message::new(REPORT, &[])).map(|_| ()),
        Ok(())
    );
    0
}

/// Below both: runs only once the app waits for room and the auditor
/// for a message; cancels the app's call, then tells the auditor.
pub fn room_attacker() -> i32 {
    expect!(
        1,
        ROOM_VICTIM.read_register(Register::X(8)),
        Ok(Syscall::Null.number())
    );
    expect!(2, ROOM_VICTIM.write_register(Register::X(2), 7), Ok(true));
    expect!(
        3,
        ipc::send(ATTACKER_TO_AUDITOR, &Message::new(ATTACKED, &[])),
        Ok(())
    );
    0
}
