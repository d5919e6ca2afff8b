//! Each filter keeps its own policy server (issue 13, point 3): a thread
//! holding a TCB's policy right can add a filter that names its own
//! server, but never take over another filter's `Notify` verdicts; where
//! several filters say `Notify`, every one's server is asked, in stack
//! order, and all must allow; a filter that can say `Notify` is never
//! attached without a server, one that cannot is. An audited thread stays audited into its
//! ring: a second `TcbSetAudit` is `Denied`, and only a capability to the
//! ring's Frame turns it off.
//!
//! Three threads: the app (filtered), server A (attaches the first filter,
//! naming itself, and audits the app) and server B (attaches two more, one
//! naming itself and one, refusing, naming no server; a Notify filter
//! without a server is refused). The
//! app marks each `Poll` with its step in `x2` (which `Poll` ignores), so
//! each server checks which call it is asked about. Each program returns
//! the number of its first failed check.

use abi::audit::AuditMode;
use abi::cap::{CapType, Rights};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message, Received};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, PolicyAnswer, PolicyRequest};
use sdk::syscall::{cnode, raw_syscall_registers, retype, RawResult};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::vspace::Frame;

/// The label of the app's last call (to A) and of A's message to B.
const DONE: u64 = 0xd0e;
/// The badges of the servers' endpoint capabilities named with their
/// filters: what each request arrives with.
pub const BADGE_A: u64 = 0xa;
/// See [`BADGE_A`].
pub const BADGE_B: u64 = 0xb;
/// `x2` of the call B's `AllowWith` changes, which A must be asked about
/// again.
const CHANGED_X2: u64 = 0x77;

/// The app's slots: A's endpoint (send) and a notification to poll.
const APP_TO_A: Cptr = Cptr(2);
const APP_NOTIFICATION: Cptr = Cptr(3);

/// A `Poll` of the app's notification with `x2 = step`.
fn marked_poll(step: u64) -> Result<u64, ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::Poll.number(),
        [APP_NOTIFICATION.0, 0, step, 0, 0, 0, 0, 0],
    );
    RawResult(x[0]).into_result().map(|()| x[8])
}

/// The filtered thread: each result is what the servers' answers, or a
/// serverless filter, make it.
pub fn app() -> i32 {
    // Only the first filter's server (A) is asked; it refuses.
    expect!(
        1,
        sdk::syscall::debug_print(b"route\n"),
        Err(ErrorCode::InvalidArgument)
    );
    // A and B both say Notify: A allows, then B allows.
    expect!(2, marked_poll(2), Ok(0));
    // A allows, B refuses: refused.
    expect!(3, marked_poll(3), Err(ErrorCode::NotEnoughMemory));
    // A refuses: B is never asked.
    expect!(4, marked_poll(4), Err(ErrorCode::OutOfResources));
    // A allows, B allows with a new x2: A is asked again, and allows.
    expect!(5, marked_poll(5), Ok(0));
    // The third filter refuses Null and Yield: no one is asked, whatever
    // the second filter's Notify for Yield (the stricter verdict wins).
    expect!(6, sdk::syscall::null(), Err(ErrorCode::Denied));
    expect!(7, sdk::syscall::yield_now(), Err(ErrorCode::Denied));
    expect!(
        8,
        ipc::call(APP_TO_A, &Message::new(DONE, &[])).map(|m| m.info.label()),
        Ok(0)
    );
    0
}

/// Server A's slots.
const A_REQUESTS: Cptr = Cptr(2);
const A_SERVER_CAP: Cptr = Cptr(3);
const APP: Tcb = Tcb(Cptr(4));
const UNTYPED: u64 = 5;
const START_B: Cptr = Cptr(6);
const A_DECIDED: Cptr = Cptr(7);
const A_TO_B: Cptr = Cptr(8);
const A_FILTER: FilterCap = FilterCap(Cptr(10));
const A_RING: Frame = Frame(Cptr(11));
const A_RING_SIGNAL: Cptr = Cptr(12);
const A_RING_READ_ONLY: Frame = Frame(Cptr(13));
/// A's own TCB (read): it names itself as its filter's server thread.
const A_OWN_TCB: Tcb = Tcb(Cptr(14));

/// Checks a request: a policy request, through the server's capability,
/// for `number` (with `x2 = x2`, if given).
fn request(
    received: &Received,
    badge: u64,
    number: Syscall,
    x2: Option<u64>,
) -> Option<PolicyRequest> {
    let request = PolicyRequest::decode(received, ipc::buffer_word)?;
    if request.endpoint_badge != badge
        || request.number != number.number()
        || x2.is_some_and(|x2| request.args[2] != x2)
    {
        sdk::println!(
            "unexpected request: {} x2={:#x} through badge {:#x}",
            request.syscall.map_or("?", Syscall::name),
            request.args[2],
            request.endpoint_badge
        );
        return None;
    }
    Some(request)
}

/// Attaches the first filter (naming itself) and the app's audit, starts
/// B, then answers its requests: each one it allows it tells B about
/// first, so B can check it is asked after A.
pub fn server_a() -> i32 {
    let mut buffer = [0u8; 256];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::DebugPrint).action(Action::Notify))
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::Notify))
        .encode(&mut buffer)
    else {
        return 1;
    };
    expect!(
        2,
        retype(UNTYPED, CapType::Filter, 0, A_FILTER.0 .0, 1),
        Ok(())
    );
    expect!(3, A_FILTER.load(rules), Ok(()));
    let own = FilterServer {
        endpoint: A_SERVER_CAP,
        thread: A_OWN_TCB,
    };
    expect!(4, APP.attach_filter(A_FILTER, Some(own)), Ok(()));
    expect!(
        5,
        retype(UNTYPED, CapType::Frame, 0, A_RING.0 .0, 1),
        Ok(())
    );
    expect!(
        6,
        retype(UNTYPED, CapType::Notification, 0, A_RING_SIGNAL.0, 1),
        Ok(())
    );
    let lossy = Some(AuditMode::Lossy);
    expect!(
        7,
        APP.set_audit(A_RING, A_RING_SIGNAL, lossy, BADGE_A),
        Ok(())
    );
    // Not even its own server may point it elsewhere, or here again.
    expect!(
        8,
        APP.set_audit(A_RING, A_RING_SIGNAL, lossy, BADGE_A),
        Err(ErrorCode::Denied)
    );
    expect!(9, ipc::signal(START_B), Ok(()));

    let allow = PolicyAnswer::Allow.to_message();
    // (syscall, x2, the answer, tell B first)
    let script = [
        (
            Syscall::DebugPrint,
            None,
            PolicyAnswer::Errno(ErrorCode::InvalidArgument).to_message(),
            false,
        ),
        (Syscall::Poll, Some(2), allow, true),
        (Syscall::Poll, Some(3), allow, true),
        (
            Syscall::Poll,
            Some(4),
            PolicyAnswer::Errno(ErrorCode::OutOfResources).to_message(),
            false,
        ),
        (Syscall::Poll, Some(5), allow, true),
        // B changed x2: A's approval was of the old arguments.
        (Syscall::Poll, Some(CHANGED_X2), allow, false),
    ];
    let mut answer: Option<Message> = None;
    for (index, (number, x2, reply, tell)) in script.into_iter().enumerate() {
        let check = 10 * (index as i32 + 2);
        let received = match answer {
            None => ipc::recv(A_REQUESTS),
            Some(answer) => ipc::reply_recv(A_REQUESTS, &answer),
        };
        let Ok(received) = received else {
            return check;
        };
        let Some(request) = request(&received, BADGE_A, number, x2) else {
            return check + 1;
        };
        // The print's x2 is a pointer: its length is checked instead.
        if number == Syscall::DebugPrint {
            expect!(check + 2, request.args[3], 6);
        }
        if tell {
            expect!(check + 3, ipc::signal(A_DECIDED), Ok(()));
        }
        answer = Some(reply);
    }
    let Some(last) = answer else {
        return 89;
    };
    // The app's last call: nothing else was asked of A.
    let Ok(done) = ipc::reply_recv(A_REQUESTS, &last) else {
        return 90;
    };
    expect!(91, done.message.info.label(), DONE);
    // Off, through a read-only capability to the ring's Frame.
    expect!(
        92,
        cnode::mint(0, A_RING.0 .0, A_RING_READ_ONLY.0 .0, Rights::READ, None),
        Ok(())
    );
    expect!(
        93,
        APP.set_audit(A_RING_READ_ONLY, A_RING_SIGNAL, None, 0),
        Ok(())
    );
    expect!(94, ipc::reply(&Message::new(0, &[])), Ok(()));
    expect!(95, ipc::send(A_TO_B, &Message::new(DONE, &[])), Ok(()));
    0
}

/// Server B's slots.
const B_REQUESTS: Cptr = Cptr(2);
const B_SERVER_CAP: Cptr = Cptr(3);
const B_STARTED: Cptr = Cptr(6);
const A_HAS_DECIDED: Cptr = Cptr(7);
const B_FILTER: FilterCap = FilterCap(Cptr(10));
const SERVERLESS_FILTER: FilterCap = FilterCap(Cptr(11));
const B_RING: Frame = Frame(Cptr(12));
const B_RING_SIGNAL: Cptr = Cptr(13);
/// B's own TCB (read): it names itself as its filter's server thread.
const B_OWN_TCB: Tcb = Tcb(Cptr(14));

/// Attaches a filter naming itself and one naming no server, tries to
/// take the app's audit, then answers what it is asked: only the calls
/// its own filter sends it, each after A has decided.
pub fn server_b() -> i32 {
    expect!(1, ipc::wait(B_STARTED).map(|word| word != 0), Ok(true));
    let mut buffer = [0u8; 256];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::Notify))
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::Notify))
        .encode(&mut buffer)
    else {
        return 2;
    };
    expect!(
        3,
        retype(UNTYPED, CapType::Filter, 0, B_FILTER.0 .0, 2),
        Ok(())
    );

    expect!(4, B_FILTER.load(rules), Ok(()));
    let own = FilterServer {
        endpoint: B_SERVER_CAP,
        thread: B_OWN_TCB,
    };
    expect!(5, APP.attach_filter(B_FILTER, Some(own)), Ok(()));
    // A filter that can say Notify is never attached without a server;
    // one that cannot is (its refusals need nobody).
    let mut buffer = [0u8; 256];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::Notify))
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::Notify))
        .encode(&mut buffer)
    else {
        return 6;
    };
    expect!(7, SERVERLESS_FILTER.load(rules), Ok(()));
    expect!(
        8,
        APP.attach_filter(SERVERLESS_FILTER, None),
        Err(ErrorCode::InvalidArgument)
    );
    let mut buffer = [0u8; 256];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::errno(ErrorCode::Denied)))
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::errno(ErrorCode::Denied)))
        .encode(&mut buffer)
    else {
        return 13;
    };
    // Not attached, so still loadable.
    expect!(14, SERVERLESS_FILTER.load(rules), Ok(()));
    expect!(15, APP.attach_filter(SERVERLESS_FILTER, None), Ok(()));
    // The app's audit is A's: B can neither replace it nor turn it off.
    expect!(
        9,
        retype(UNTYPED, CapType::Frame, 0, B_RING.0 .0, 1),
        Ok(())
    );
    expect!(
        10,
        retype(UNTYPED, CapType::Notification, 0, B_RING_SIGNAL.0, 1),
        Ok(())
    );
    expect!(
        11,
        APP.set_audit(B_RING, B_RING_SIGNAL, Some(AuditMode::Lossless), BADGE_B),
        Err(ErrorCode::Denied)
    );
    expect!(
        12,
        APP.set_audit(B_RING, B_RING_SIGNAL, None, 0),
        Err(ErrorCode::Denied)
    );

    let changed = [CHANGED_X2, 0, 0, 0, 0, 0];
    let script = [
        (2, PolicyAnswer::Allow),
        (3, PolicyAnswer::Errno(ErrorCode::NotEnoughMemory)),
        // Step 4: A refused, B is not asked.
        (5, PolicyAnswer::AllowWith(changed)),
    ];
    let mut answer: Option<Message> = None;
    for (index, (step, reply)) in script.into_iter().enumerate() {
        let check = 10 * (index as i32 + 2);
        let received = match answer {
            None => ipc::recv(B_REQUESTS),
            Some(answer) => ipc::reply_recv(B_REQUESTS, &answer),
        };
        let Ok(received) = received else {
            return check;
        };
        if request(&received, BADGE_B, Syscall::Poll, Some(step)).is_none() {
            return check + 1;
        }
        // A was asked first and allowed.
        expect!(check + 2, ipc::poll(A_HAS_DECIDED), Ok(1));
        answer = Some(reply.to_message());
    }
    let Some(last) = answer else {
        return 89;
    };
    // Next comes A's message, not a request: B was asked nothing else.
    let Ok(done) = ipc::reply_recv(B_REQUESTS, &last) else {
        return 90;
    };
    expect!(91, done.message.info.label(), DONE);
    // A turned the app's audit off: now it may be set again.
    expect!(
        92,
        APP.set_audit(B_RING, B_RING_SIGNAL, Some(AuditMode::Lossy), BADGE_B),
        Ok(())
    );
    0
}
