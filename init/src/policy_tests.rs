//! Policy programs of the in-guest suite: filters made, loaded and
//! attached from user space, and every verdict seen from the filtered
//! thread. Returns the number of the first failed check.

use abi::cap::CapType;
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
use sdk::tcb::{FilterCap, FilterServer, Tcb};

const UNTYPED: u64 = 2;
/// Its own TCB, with the policy right.
const SELF_POLICY: Tcb = Tcb(Cptr(3));
/// Its own TCB, read-write but without the policy right.
const SELF_NO_POLICY: Tcb = Tcb(Cptr(4));
const NOTIFICATION: Cptr = Cptr(5);
const FIRST: FilterCap = FilterCap(Cptr(8));
const SECOND: FilterCap = FilterCap(Cptr(9));
const CNODE: u64 = crate::programs::CNODE_SLOT;

/// Ends with the `Kill` of its last syscall (exit status
/// `KILLED_BY_POLICY`); any other end is a failed check.
pub fn user() -> i32 {
    // Room for these small descriptions (a builder holds a whole
    // description, some 18 KiB: the stack is 64 KiB).
    let mut buffer = [0u8; 1024];
    expect!(
        1,
        sdk::syscall::retype(UNTYPED, CapType::Filter, 0, 8, 2),
        Ok(())
    );
    expect!(2, FIRST.load(&[0xff; 16]), Err(ErrorCode::InvalidArgument));
    let oversized = [0u8; MAX_DESCRIPTION_BYTES + 1];
    expect!(3, FIRST.load(&oversized), Err(ErrorCode::InvalidArgument));
    let Ok(first) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::errno(ErrorCode::OutOfResources)))
        .rule(
            RuleBuilder::syscall(Syscall::DebugPrint)
                .arg(3, ArgOp::Ge, 40)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::Kill))
        .encode(&mut buffer)
    else {
        return 4;
    };
    expect!(5, FIRST.load(first), Ok(()));
    expect!(
        6,
        SELF_NO_POLICY.attach_filter(FIRST, None),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        7,
        SELF_POLICY.attach_filter(FilterCap(NOTIFICATION), None),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(8, SELF_POLICY.attach_filter(FIRST, None), Ok(()));
    expect!(9, FIRST.load(first), Err(ErrorCode::Denied));
    expect!(10, ipc::poll(NOTIFICATION), Err(ErrorCode::OutOfResources));
    expect!(11, sdk::syscall::debug_print(b"allowed\n"), Ok(()));
    expect!(
        12,
        sdk::syscall::debug_print(&[b'x'; 50]),
        Err(ErrorCode::Denied)
    );
    // No rule names Null: a constant Allow, taken in the vector itself.
    expect!(13, sdk::syscall::null(), Ok(()));

    let mut buffer = [0u8; 1024];
    let Ok(second) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::errno(ErrorCode::Denied)))
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::errno(ErrorCode::NotEnoughMemory)))
        .encode(&mut buffer)
    else {
        return 14;
    };
    expect!(15, SECOND.load(second), Ok(()));
    expect!(16, SELF_POLICY.attach_filter(SECOND, None), Ok(()));
    // Stacked: Null is no longer allowed (the vector must not answer it),
    // and of two Errno verdicts the larger code wins.
    expect!(17, sdk::syscall::null(), Err(ErrorCode::Denied));
    expect!(18, ipc::poll(NOTIFICATION), Err(ErrorCode::NotEnoughMemory));
    // Deleting the filters' capabilities lifts nothing.
    expect!(19, sdk::syscall::cnode::delete(CNODE, 8), Ok(()));
    expect!(20, sdk::syscall::cnode::delete(CNODE, 9), Ok(()));
    expect!(21, ipc::poll(NOTIFICATION), Err(ErrorCode::NotEnoughMemory));
    expect!(22, sdk::syscall::null(), Err(ErrorCode::Denied));
    // The vector answers these constant refusals (`Thread::refused`):
    // a number 64 above one must not alias it, and a refusal writes x0
    // alone, as the generic entry's does.
    let invalid = Some(ErrorCode::InvalidSyscall);
    for number in [Syscall::Null.number() + 64, Syscall::Poll.number() + 64] {
        let x = sdk::syscall::raw_syscall_registers(number, [NOTIFICATION.0, 0, 0, 0, 0, 0, 0, 0]);
        expect!(23, ErrorCode::from_raw(x[0]), invalid);
    }
    let args = [NOTIFICATION.0, 1, 2, 3, 4, 5, 6, 7];
    let x = sdk::syscall::raw_syscall_registers(Syscall::Poll.number(), args);
    expect!(
        24,
        (ErrorCode::from_raw(x[0]), &x[1..8], x[8]),
        (
            Some(ErrorCode::NotEnoughMemory),
            &args[1..],
            Syscall::Poll.number()
        )
    );
    // The last call: Kill. The line first, so that a kill of an earlier
    // call (which ends the thread with the same status) shows: the host
    // test wants it as this thread's last line.
    sdk::println!("{KILL_MARKER}");
    let _ = ipc::signal(NOTIFICATION);
    99
}

/// What `user` prints just before the call its filter kills (under 40
/// bytes: its filter refuses longer prints), and `user_dispatch_tests`
/// before its last steps.
pub const KILL_MARKER: &str = "all checks passed, now the kill";

/// The badge of the asker's capability to its policy server's endpoint
/// (what the server sees in `x8`).
pub const ASKER_BADGE: u64 = 0x5e;
const SERVER_ENDPOINT: Cptr = Cptr(crate::programs::ENDPOINT_SLOT);
const ASKER_UNTYPED: u64 = 4;
/// The original of the server's endpoint, which the asker holds.
const ASKER_ENDPOINT_ORIGINAL: u64 = 6;
/// The server's TCB (read): the thread that answers the asker's filter.
const SERVER_TCB: Tcb = Tcb(Cptr(7));

/// Each kind of answer a policy server can give, seen by the thread that
/// asked; then the server dies holding a request, and later calls fail
/// closed.
pub fn asker() -> i32 {
    let mut buffer = [0u8; 1024];
    expect!(
        1,
        sdk::syscall::retype(ASKER_UNTYPED, CapType::Filter, 0, 8, 1),
        Ok(())
    );
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(
            RuleBuilder::syscall(Syscall::DebugPrint)
                .arg(3, ArgOp::Ge, 30)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .rule(RuleBuilder::syscall(Syscall::DebugPrint).action(Action::Notify))
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::Notify))
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::Notify))
        .encode(&mut buffer)
    else {
        return 2;
    };
    expect!(3, FIRST.load(rules), Ok(()));
    let server = FilterServer {
        endpoint: SERVER_ENDPOINT,
        thread: SERVER_TCB,
    };
    expect!(4, SELF_POLICY.attach_filter(FIRST, Some(server)), Ok(()));
    // Allowed as made.
    expect!(5, sdk::syscall::debug_print(b"hi\n"), Ok(()));
    // Refused with the server's error.
    expect!(
        6,
        sdk::syscall::debug_print(b"nineteen characters"),
        Err(ErrorCode::InvalidArgument)
    );
    // Emulated: x0 and x8 as the server says; nothing was polled.
    expect!(7, ipc::poll(NOTIFICATION), Ok(0x77));
    // Allowed with a shorter length: only "ok\n" is printed.
    expect!(
        8,
        sdk::syscall::debug_print(b"ok\n and the rest is cut"),
        Ok(())
    );
    // Allowed with a length the filter refuses: checked again, refused.
    expect!(
        9,
        sdk::syscall::debug_print(b"grow\n"),
        Err(ErrorCode::Denied)
    );
    // The server exits holding this request: closed, not open.
    expect!(10, sdk::syscall::yield_now(), Err(ErrorCode::Denied));
    // Its filter lost its server with it: refused at once.
    expect!(
        13,
        sdk::syscall::debug_print(b"hi\n"),
        Err(ErrorCode::Denied)
    );
    // Its ended TCB keeps its CNode, so its endpoint lives on: this thread
    // holds the original and destroys it (every copy goes with it).
    expect!(
        11,
        sdk::syscall::cnode::delete(CNODE, ASKER_ENDPOINT_ORIGINAL),
        Ok(())
    );
    // Still no server (nor its endpoint now): refused at once.
    expect!(12, ipc::poll(NOTIFICATION), Err(ErrorCode::Denied));
    0
}

/// What `server` expects of request `step` and answers to it.
struct Step {
    number: Syscall,
    object_type: CapType,
    /// The syscall's `x3` (a print's length), if it matters.
    x3: Option<u64>,
    label: u64,
}

const fn step(number: Syscall, object_type: CapType, x3: Option<u64>, label: u64) -> Step {
    Step {
        number,
        object_type,
        x3,
        label,
    }
}

/// Answers `asker`'s requests from a script, checking each request's
/// fields, then exits without answering the last one.
pub fn server() -> i32 {
    use abi::policy_request::*;
    let script = [
        step(
            Syscall::DebugPrint,
            CapType::DebugConsole,
            Some(3),
            POLICY_REPLY_ALLOW,
        ),
        step(
            Syscall::DebugPrint,
            CapType::DebugConsole,
            Some(19),
            POLICY_REPLY_ERRNO,
        ),
        step(
            Syscall::Poll,
            CapType::Notification,
            None,
            POLICY_REPLY_EMULATE,
        ),
        step(
            Syscall::DebugPrint,
            CapType::DebugConsole,
            Some(23),
            POLICY_REPLY_ALLOW_MODIFIED,
        ),
        step(
            Syscall::DebugPrint,
            CapType::DebugConsole,
            Some(5),
            POLICY_REPLY_ALLOW_MODIFIED,
        ),
    ];
    let Ok(mut request) = ipc::recv(SERVER_ENDPOINT) else {
        return 1;
    };
    let mut last_cookie = 0;
    let mut asker_id = None;
    for (i, step) in script.iter().enumerate() {
        let base = 10 * (i as i32 + 1);
        let m = &request.message;
        let w = m.words;
        expect!(base, m.info.label(), POLICY_REQUEST_LABEL);
        expect!(base + 1, m.info.length(), POLICY_REQUEST_WORDS);
        expect!(base + 2, request.badge, ASKER_BADGE);
        expect!(
            base + 3,
            (w[0], w[1]),
            (step.number.number(), u64::from(step.object_type.raw()))
        );
        expect!(base + 4, w[4] > last_cookie, true);
        last_cookie = w[4];
        expect!(base + 5, *asker_id.get_or_insert(w[3]), w[3]);
        // x3 of the syscall is word 8 (words 6..=12 are x1..x7).
        if let Some(x3) = step.x3 {
            expect!(base + 6, ipc::buffer_word(8), x3);
        }
        let new_args = |length: u64| {
            let mut words = [0u64; 6];
            for (k, word) in words.iter_mut().enumerate() {
                *word = ipc::buffer_word(7 + k);
            }
            words[1] = length;
            words
        };
        let answer = match (i, step.label) {
            (_, POLICY_REPLY_ERRNO) => {
                Message::new(POLICY_REPLY_ERRNO, &[ErrorCode::InvalidArgument.raw()])
            }
            (_, POLICY_REPLY_EMULATE) => {
                Message::new(POLICY_REPLY_EMULATE, &[ErrorCode::Ok.raw(), 0x77])
            }
            (3, label) => Message::new(label, &new_args(3)),
            (4, label) => Message::new(label, &new_args(40)),
            (_, label) => Message::new(label, &[]),
        };
        match ipc::reply_recv(SERVER_ENDPOINT, &answer) {
            Ok(next) => request = next,
            Err(_) => return base + 9,
        }
    }
    // The last request (a yield): exit holding it.
    expect!(90, request.message.words[0], Syscall::Yield.number());
    0
}

/// A `Trap` rule: the syscall does not run and its report goes to the
/// thread's fault endpoint; the handler's "retry" resumes the thread after
/// the `svc` with `Denied`.
pub fn trapped() -> i32 {
    let mut buffer = [0u8; 256];
    expect!(
        1,
        sdk::syscall::retype(UNTYPED, CapType::Filter, 0, 8, 1),
        Ok(())
    );
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::Trap))
        .encode(&mut buffer)
    else {
        return 2;
    };
    expect!(3, FIRST.load(rules), Ok(()));
    expect!(4, SELF_POLICY.attach_filter(FIRST, None), Ok(()));
    expect!(5, sdk::syscall::yield_now(), Err(ErrorCode::Denied));
    // Other syscalls are untouched.
    expect!(6, sdk::syscall::null(), Ok(()));
    0
}

/// The fault handler of `trapped`: a report of class SVC whose address is
/// the trapped syscall's number; answers "retry".
pub fn trap_handler() -> i32 {
    use abi::fault::{FAULT_LABEL, FAULT_REPLY_RETRY};
    const SVC_FROM_AARCH64: u64 = 0x15;
    let Ok(report) = ipc::recv(Cptr(crate::programs::ENDPOINT_SLOT)) else {
        return 1;
    };
    let [class, address, ..] = report.message.words;
    expect!(
        2,
        (report.message.info.label(), class, address),
        (FAULT_LABEL, SVC_FROM_AARCH64, Syscall::Yield.number())
    );
    expect!(3, ipc::reply(&Message::new(FAULT_REPLY_RETRY, &[])), Ok(()));
    0
}

/// `fast_caller`'s slots: the server's endpoint in 2 (send), an Untyped
/// in 3, its own TCB with the policy right in 4.
const FAST_ENDPOINT: Cptr = Cptr(crate::programs::ENDPOINT_SLOT);
const FAST_UNTYPED: u64 = 3;
const FAST_SELF: Tcb = Tcb(Cptr(4));

/// Calls a server that waits in `Recv` (so the IPC fast path's other
/// conditions hold) under filters whose verdict for `Call` is not a
/// constant `Allow`: the vector must send those calls to the generic
/// entry, where the filters refuse them before the server sees them.
pub fn fast_caller() -> i32 {
    let call = |x2: u64| ipc::call(FAST_ENDPOINT, &Message::new(1, &[x2])).map(|m| m.words[0]);
    // A number past 63 whose low six bits are Call's: the vector's mask
    // test sees Call's bit, the fast path must still refuse it.
    let aliased = || sdk::syscall::raw_syscall(64 + Syscall::Call.number(), 0, 0, 0).into_result();
    let mut buffer = [0u8; 256];
    expect!(1, call(1), Ok(1));
    expect!(2, aliased(), Err(ErrorCode::InvalidSyscall));
    expect!(
        3,
        sdk::syscall::retype(FAST_UNTYPED, CapType::Filter, 0, 8, 3),
        Ok(())
    );
    // First a filter that says nothing of Call: a constant Allow, so its
    // bit is in the mask and the fast path may take the calls.
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::errno(ErrorCode::Denied)))
        .encode(&mut buffer)
    else {
        return 4;
    };
    expect!(5, FIRST.load(rules), Ok(()));
    expect!(6, FAST_SELF.attach_filter(FIRST, None), Ok(()));
    expect!(7, sdk::syscall::yield_now(), Err(ErrorCode::Denied));
    expect!(8, call(1), Ok(2));
    expect!(9, aliased(), Err(ErrorCode::InvalidSyscall));
    // A rule on Call's x2: its verdict must be evaluated.
    let mut buffer = [0u8; 256];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(
            RuleBuilder::syscall(Syscall::Call)
                .arg(2, ArgOp::Eq, 7)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .encode(&mut buffer)
    else {
        return 10;
    };
    expect!(11, SECOND.load(rules), Ok(()));
    expect!(12, FAST_SELF.attach_filter(SECOND, None), Ok(()));
    expect!(13, call(7), Err(ErrorCode::Denied));
    // The refused call never reached the server: this is its third.
    expect!(14, call(1), Ok(3));
    // A constant Errno for every Call.
    let mut buffer = [0u8; 256];
    let third = FilterCap(Cptr(10));
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Call).action(Action::errno(ErrorCode::OutOfResources)))
        .encode(&mut buffer)
    else {
        return 15;
    };
    expect!(16, third.load(rules), Ok(()));
    expect!(17, FAST_SELF.attach_filter(third, None), Ok(()));
    expect!(18, call(1), Err(ErrorCode::OutOfResources));
    expect!(19, aliased(), Err(ErrorCode::InvalidSyscall));
    // Send is still allowed: the server ends, having had three calls.
    expect!(
        20,
        ipc::send(
            FAST_ENDPOINT,
            &Message::new(crate::programs::STOP_LABEL, &[])
        ),
        Ok(())
    );
    0
}

/// `fast_caller`'s server: answers each call on slot 2 with the number of
/// calls it has had; on the stop label, checks it had three.
pub fn fast_server() -> i32 {
    let Ok(mut request) = ipc::recv(FAST_ENDPOINT) else {
        return 1;
    };
    let mut calls = 0;
    while request.message.info.label() != crate::programs::STOP_LABEL {
        calls += 1;
        match ipc::reply_recv(FAST_ENDPOINT, &Message::new(0, &[calls])) {
            Ok(next) => request = next,
            Err(_) => return 2,
        }
    }
    expect!(3, calls, 3);
    0
}
