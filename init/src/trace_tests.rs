//! Tracing programs of the in-guest suite: a tracer that answers every
//! kind of stop from a script, checking the orderings the generic entry
//! promises, and the thread it traces. Each returns the number of its
//! first failed check (0: all passed).

use crate::programs::ENDPOINT_SLOT;
use abi::cap::CapType;
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
use sdk::syscall::raw_syscall;
use sdk::tcb::{FilterCap, Tcb};
use sdk::trace::{self, Stop, StopKind};

/// The tracer's endpoint: receive right.
const STOPS: Cptr = Cptr(ENDPOINT_SLOT);
/// The tracee's TCB: trace and policy rights.
const TRACEE: Tcb = Tcb(Cptr(3));
/// The endpoint again, write right and badge [`TRACEE_BADGE`]: what the
/// tracer attaches through.
const STOPS_SEND: Cptr = Cptr(4);
/// The tracee's TCB without the trace right.
const TRACEE_NO_TRACE: Tcb = Tcb(Cptr(5));
const UNTYPED: u64 = 7;
const FILTER: FilterCap = FilterCap(Cptr(8));
/// The endpoint's original, which the tracer holds (its own CNode is in
/// slot `CNODE`).
const ENDPOINT_ORIGINAL: u64 = 6;
const CNODE: u64 = crate::programs::CNODE_SLOT;
/// The tracee's notification (in the tracee's CSpace).
const NOTIFICATION: Cptr = Cptr(5);

/// The badge every stop of the tracee arrives with.
pub const TRACEE_BADGE: u64 = 0x7ace;
/// `x2` of the `Null` the tracer turns into a `Signal`.
const NUMBER_MARK: u64 = 0x4e;
/// `x2` of the `Null` the tracer single-steps over.
const STEP_MARK: u64 = 0x57e9;
/// `x2` of the `Null` the tracer skips while single-stepping.
const SYSEMU_MARK: u64 = 0x5e;
/// What the skipped `Null` returns in `x0`.
const EMULATED: u64 = 0x1234;

/// The stop after answering the last one with `answer`.
fn answer(message: &Message) -> Option<Stop> {
    Stop::decode(&ipc::reply_recv(STOPS, message).ok()?)
}

/// A result code as the tracee sees it.
fn code(x0: u64) -> ErrorCode {
    ErrorCode::from_raw(x0).unwrap_or(ErrorCode::InvalidArgument)
}

/// Prints a finished syscall the way strace does: its entry's arguments,
/// its exit's result.
fn print_call(entry: &Stop, result: &str) {
    let r = &entry.regs;
    match entry.syscall() {
        Some(Syscall::Poll | Syscall::Signal) => sdk::println!(
            "[task {}] {}(ntfn={}) = {result}",
            entry.thread,
            entry.name(),
            r[0]
        ),
        Some(Syscall::DebugPrint) => sdk::println!(
            "[task {}] debug_print(console={}, {:#x}, len={}) = {result}",
            entry.thread,
            r[0],
            r[2],
            r[3]
        ),
        _ => sdk::println!(
            "[task {}] {}({:#x}, {:#x}, {:#x}) = {result}",
            entry.thread,
            entry.name(),
            r[0],
            r[2],
            r[3]
        ),
    }
}

/// Checks that `$stop` is a stop of kind `$kind` for syscall `$number`
/// from the tracee.
macro_rules! stop {
    ($check:expr, $stop:expr, StopKind::Step) => {{
        let Some(stop) = $stop else {
            sdk::println!("check {} failed: no stop", $check);
            return $check;
        };
        expect!(
            $check,
            (stop.kind, stop.badge),
            (StopKind::Step, TRACEE_BADGE)
        );
        stop
    }};
    ($check:expr, $stop:expr, $kind:expr, $number:expr) => {{
        let Some(stop) = $stop else {
            sdk::println!("check {} failed: no stop", $check);
            return $check;
        };
        expect!($check, (stop.kind, stop.badge), ($kind, TRACEE_BADGE));
        expect!($check + 1, stop.number, $number.number());
        stop
    }};
}

/// Attaches to the tracee (checking the rights), gives it a filter that
/// refuses prints of 40 bytes or more, then answers its stops.
pub fn tracer() -> i32 {
    expect!(
        1,
        TRACEE_NO_TRACE.attach_tracer(STOPS_SEND),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        2,
        TRACEE.attach_tracer(STOPS),
        Err(ErrorCode::MissingRights)
    );
    expect!(3, TRACEE.attach_tracer(STOPS_SEND), Ok(()));
    expect!(4, TRACEE.attach_tracer(STOPS_SEND), Err(ErrorCode::Denied));
    // Only with the endpoint it was attached with (same badge).
    expect!(5, TRACEE.detach_tracer(STOPS), Err(ErrorCode::Denied));
    expect!(5, TRACEE.detach_tracer(STOPS_SEND), Ok(()));
    expect!(
        5,
        TRACEE.detach_tracer(STOPS_SEND),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        6,
        TRACEE_NO_TRACE.detach_tracer(STOPS_SEND),
        Err(ErrorCode::MissingRights)
    );
    expect!(7, TRACEE.attach_tracer(STOPS_SEND), Ok(()));
    expect!(
        8,
        sdk::syscall::retype(UNTYPED, CapType::Filter, 0, 8, 1),
        Ok(())
    );
    let mut buffer = [0u8; 512];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(
            RuleBuilder::syscall(Syscall::DebugPrint)
                .arg(3, ArgOp::Ge, 40)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .encode(&mut buffer)
    else {
        return 9;
    };
    expect!(10, FILTER.load(rules), Ok(()));
    expect!(11, TRACEE.attach_filter(FILTER, None), Ok(()));

    // 1. Skip a poll with a result of our choosing: no exit stop follows.
    let first = ipc::recv(STOPS).ok().and_then(|r| Stop::decode(&r));
    let entry = stop!(20, first, StopKind::Entry, Syscall::Poll);
    expect!(22, entry.regs[0], NOTIFICATION.0);
    print_call(&entry, "0x77 (skipped by the tracer)");

    // 2. Lengthen a print: policy judges the new length and refuses it.
    let entry = stop!(
        30,
        answer(&trace::result(ErrorCode::Ok.raw(), 0x77, false)),
        StopKind::Entry,
        Syscall::DebugPrint
    );
    expect!(32, entry.regs[3], 6);
    let mut args = [0u64; 6];
    args.copy_from_slice(&entry.regs[..6]);
    args[3] = 50;
    let exit = stop!(
        33,
        answer(&trace::modify(entry.number, args, false)),
        StopKind::Exit,
        Syscall::DebugPrint
    );
    expect!(35, code(exit.regs[0]), ErrorCode::Denied);
    let mut lengthened = entry;
    lengthened.regs[3] = 50;
    print_call(
        &lengthened,
        "Denied (the filter judged the tracer's length)",
    );

    // 3. Shorten one the filter would refuse: it runs, three bytes of it.
    let entry = stop!(
        40,
        answer(&trace::resume(false)),
        StopKind::Entry,
        Syscall::DebugPrint
    );
    expect!(42, entry.regs[3] >= 40, true);
    args.copy_from_slice(&entry.regs[..6]);
    args[3] = 3;
    let exit = stop!(
        43,
        answer(&trace::modify(entry.number, args, false)),
        StopKind::Exit,
        Syscall::DebugPrint
    );
    expect!(45, code(exit.regs[0]), ErrorCode::Ok);
    let mut shortened = entry;
    shortened.regs[3] = 3;
    print_call(&shortened, "0");

    // 4. Change the number: a Null becomes a Signal of its notification.
    let entry = stop!(
        50,
        answer(&trace::resume(false)),
        StopKind::Entry,
        Syscall::Null
    );
    expect!(52, entry.regs[2], NUMBER_MARK);
    args.copy_from_slice(&entry.regs[..6]);
    args[0] = NOTIFICATION.0;
    let exit = stop!(
        53,
        answer(&trace::modify(Syscall::Signal.number(), args, false)),
        StopKind::Exit,
        Syscall::Signal
    );
    expect!(55, code(exit.regs[0]), ErrorCode::Ok);
    let mut signal = entry;
    signal.number = Syscall::Signal.number();
    signal.regs[0] = NOTIFICATION.0;
    print_call(&signal, "0 (was null)");

    // 5. An ordinary call, entry then exit: the poll sees the signal.
    let entry = stop!(
        60,
        answer(&trace::resume(false)),
        StopKind::Entry,
        Syscall::Poll
    );
    let exit = stop!(
        62,
        answer(&trace::resume(false)),
        StopKind::Exit,
        Syscall::Poll
    );
    expect!(64, (code(exit.regs[0]), exit.regs[8]), (ErrorCode::Ok, 1));
    print_call(&entry, "0, word 0x1");

    // 6. Single-step over an SVC: entry, exit, then the step, reported
    // after the syscall returned (at the instruction after the svc); the
    // next step comes one instruction later.
    let entry = stop!(
        70,
        answer(&trace::resume(false)),
        StopKind::Entry,
        Syscall::Null
    );
    expect!(72, entry.regs[2], STEP_MARK);
    let exit = stop!(
        73,
        answer(&trace::resume(true)),
        StopKind::Exit,
        Syscall::Null
    );
    expect!(75, exit.pc, entry.pc);
    let step = stop!(76, answer(&trace::resume(true)), StopKind::Step);
    expect!(77, (step.pc, code(step.regs[0])), (entry.pc, ErrorCode::Ok));
    sdk::println!(
        "[task {}] step at {:#x}, after the svc returned",
        step.thread,
        step.pc
    );
    let step = stop!(78, answer(&trace::resume(true)), StopKind::Step);
    expect!(79, step.pc, entry.pc + 4);
    sdk::println!("[task {}] step at {:#x}", step.thread, step.pc);

    // 7. Skip an SVC while single-stepping (SYSEMU): no exit stop and no
    // step of its own; the next stop is after the following instruction.
    let entry = stop!(
        80,
        answer(&trace::resume(false)),
        StopKind::Entry,
        Syscall::Null
    );
    expect!(82, entry.regs[2], SYSEMU_MARK);
    let step = stop!(
        83,
        answer(&trace::result(EMULATED, 0, true)),
        StopKind::Step
    );
    expect!(85, step.pc, entry.pc + 4);
    sdk::println!(
        "[task {}] null() = {EMULATED:#x} (skipped while stepping); step at {:#x}",
        step.thread,
        step.pc
    );

    // 8. Exit holding an entry stop: the print runs all the same. This
    // thread is made from user space, so its end keeps its CNode and the
    // endpoint's original in it: it destroys the endpoint first, so that
    // the tracee, detached at its next stop, runs on untraced. Destroying
    // the endpoint ends only stops waiting in its queue, not this one,
    // which it holds: the exit is what lets the print run.
    let entry = stop!(
        90,
        answer(&trace::resume(false)),
        StopKind::Entry,
        Syscall::DebugPrint
    );
    expect!(
        92,
        sdk::syscall::cnode::delete(CNODE, ENDPOINT_ORIGINAL),
        Ok(())
    );
    sdk::println!(
        "[task {}] debug_print(len={}): the tracer exits at this stop",
        entry.thread,
        entry.regs[3]
    );
    0
}

/// The traced thread: each syscall's result is what the tracer's answer
/// makes it.
pub fn tracee() -> i32 {
    expect!(1, ipc::poll(NOTIFICATION), Ok(0x77));
    expect!(
        2,
        sdk::syscall::debug_print(b"short\n"),
        Err(ErrorCode::Denied)
    );
    expect!(
        3,
        sdk::syscall::debug_print(b"ok\n and the rest, which the tracer cuts off"),
        Ok(())
    );
    expect!(
        4,
        raw_syscall(Syscall::Null.number(), 0, NUMBER_MARK, 0).into_result(),
        Ok(())
    );
    expect!(5, ipc::poll(NOTIFICATION), Ok(1));
    expect!(
        6,
        sdk::probe::marked_null(STEP_MARK),
        (ErrorCode::Ok.raw(), 2)
    );
    expect!(7, sdk::probe::marked_null(SYSEMU_MARK), (EMULATED, 2));
    expect!(8, sdk::syscall::debug_print(b"after the tracer\n"), Ok(()));
    // Untraced now: the poll runs (the word was taken by check 5).
    expect!(9, ipc::poll(NOTIFICATION), Ok(0));
    0
}
