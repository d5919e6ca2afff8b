//! A policy server that answers later, one that dies, and the filter
//! handed to another (issue 19, points 3 and 4), on the kernel of the
//! tests above: the root makes the scene, its threads make real syscalls.
//!
//! The scene: a supervisor (thread 0, most urgent) makes a filter whose
//! `Null` says `Notify` and attaches it to three askers (threads 1..=3),
//! naming the server (thread 4, least urgent) as its policy server. The
//! askers ask first: the server runs only once all three wait.

use super::*;
use abi::fault::{ServerLoss, END_LABEL, FAULT_LABEL};
use abi::policy::{encode, Action, FilterDescription, Rule, MAX_DESCRIPTION_BYTES};
use abi::policy_request::{POLICY_REPLY_ALLOW, POLICY_REPLY_ERRNO, POLICY_REQUEST_LABEL};
use abi::MessageInfo;

/// The supervisor's slots.
const REQUESTS: u64 = 2;
const UNTYPED: u64 = 3;
const SERVER_TCB: u64 = 4;
/// The askers' TCBs (with the policy right): 5, 6, 7.
const ASKER_TCB: u64 = 5;
const SUPERVISION: u64 = 8;
const OWN_TCB: u64 = 9;
/// The askers' CNodes: 18, 19, 20.
const ASKER_CNODE: u64 = 18;
const FILTER: u64 = 12;
const QUIET_FILTER: u64 = 13;
const SECOND_FILTER: u64 = 14;
const READ_ONLY_FILTER: u64 = 15;
const READ_ONLY_REQUESTS: u64 = 16;
/// The server's slots: its CNode (0), the requests' endpoint, its Untyped,
/// and Reply objects from `REPLIES` on.
const SERVER_REQUESTS: u64 = 2;
const SERVER_UNTYPED: u64 = 3;
const REPLIES: u64 = 10;
/// The server's way to hand the CPU to the supervisor.
const WAKE_SUPERVISOR: u64 = 4;
/// The server's capability to the supervisor's CNode, and where a Reply
/// capability it moves there lands.
const SUPERVISOR_CNODE: u64 = 5;
const MOVED_REPLY: u64 = 21;
/// Where each asker finds a filter capability without write.
const ASKERS_FILTER: u64 = 3;
/// A TCB capability without the read right.
const WRITE_ONLY_TCB: u64 = 17;

const TCB_WITH_POLICY: Rights =
    Rights::from_bytes([Rights::READ_WRITE.raw() | Rights::POLICY.raw()]);

const SCENE: Scene = Scene {
    threads: &[
        thread(120),
        thread(100),
        thread(100),
        thread(100),
        thread(90),
    ],
    endpoints: 2,
    notifications: 0,
    untyped_pages: 64,
    grants: &[
        grant(0, REQUESTS, Object::Endpoint(0), Rights::ALL, 0),
        grant(0, UNTYPED, Object::Untyped, Rights::ALL, 0),
        Grant {
            thread: 0,
            slot: SERVER_TCB,
            object: Object::Tcb(4),
            rights: Rights::ALL,
            badge: 0,
            original: true,
        },
        grant(0, ASKER_TCB, Object::Tcb(1), TCB_WITH_POLICY, 0),
        // The second asker's is the original: deleting it kills it.
        Grant {
            thread: 0,
            slot: ASKER_TCB + 1,
            object: Object::Tcb(2),
            rights: Rights::ALL,
            badge: 0,
            original: true,
        },
        grant(0, ASKER_TCB + 2, Object::Tcb(3), TCB_WITH_POLICY, 0),
        grant(0, SUPERVISION, Object::Endpoint(1), RECEIVE, 0),
        grant(0, OWN_TCB, Object::Tcb(0), Rights::READ, 0),
        grant(0, ASKER_CNODE, Object::CNode(1), Rights::ALL, 0),
        grant(0, ASKER_CNODE + 1, Object::CNode(2), Rights::ALL, 0),
        grant(0, ASKER_CNODE + 2, Object::CNode(3), Rights::ALL, 0),
        grant(
            4,
            SERVER_REQUESTS,
            Object::Endpoint(0),
            Rights::READ_WRITE,
            0,
        ),
        grant(4, SERVER_UNTYPED, Object::Untyped, Rights::ALL, 0),
        grant(4, WAKE_SUPERVISOR, Object::Endpoint(1), SEND, 0x5e),
        grant(4, SUPERVISOR_CNODE, Object::CNode(0), Rights::ALL, 0),
    ],
    fault_endpoints: &[(4, 1)],
    radix: 5,
};

/// The scene's threads.
struct Threads {
    supervisor: ThreadId,
    askers: [ThreadId; 3],
    server: ThreadId,
}

/// A filter whose `Null` says `action` (the default allows), encoded.
fn description(action: Action) -> Vec<u8> {
    let mut description = FilterDescription::new(Action::Allow);
    description
        .push(Rule {
            syscall: Some(Syscall::Null.number()),
            ..Rule::new(action)
        })
        .unwrap();
    let mut buffer = vec![0u8; MAX_DESCRIPTION_BYTES];
    let len = encode(&description, &mut buffer).unwrap().len();
    buffer.truncate(len);
    buffer
}

impl Harness {
    /// The current thread retypes one `object` from the Untyped in
    /// `untyped` into `slot` (`count` of them from there).
    fn retype_into(&mut self, untyped: u64, object: CapType, slot: u64, count: u64) {
        self.context().x[5] = count;
        self.ok(
            Syscall::Retype.number(),
            [untyped, u64::from(object.raw()), 0, slot],
        );
    }

    /// The current thread makes a filter in `slot` whose `Null` says
    /// `action`.
    fn filter(&mut self, slot: u64, action: Action) {
        self.retype_into(UNTYPED, CapType::Filter, slot, 1);
        let bytes = description(action);
        self.poke(DATA, &bytes);
        self.ok(
            Syscall::FilterLoad.number(),
            [slot, DATA, bytes.len() as u64, 0],
        );
    }

    /// `TcbAttachFilter` from the current thread: `server` names the
    /// endpoint and the server's TCB.
    fn attach(&mut self, tcb: u64, filter: u64, server: Option<(u64, u64)>) -> u64 {
        let (endpoint, thread, given) = server.map_or((0, 0, 0), |(e, t)| (e, t, 1));
        self.context().x[5] = thread;
        self.syscall(
            Syscall::TcbAttachFilter.number(),
            [tcb, filter, endpoint, given],
        )
    }

    /// `FilterSetServer` from the current thread: its result and `x8`.
    fn set_server(&mut self, filter: u64, endpoint: u64, thread: u64) -> (u64, u64) {
        let result = self.syscall(
            Syscall::FilterSetServer.number(),
            [filter, endpoint, thread, 0],
        );
        (result, self.context().x[8])
    }

    /// The current asker asks (a filtered `Null`) and waits.
    fn ask(&mut self) {
        assert_eq!(h_null(self), u64::MAX, "{}", self.machine.console);
    }

    /// The current thread (the server) receives a request: the asking
    /// thread's number.
    fn receive_request(&mut self) -> u64 {
        assert_eq!(
            self.syscall(Syscall::Recv.number(), [SERVER_REQUESTS, 0, 0, 0]),
            ErrorCode::Ok.raw()
        );
        let ctx = self.context();
        assert_eq!(MessageInfo::from(ctx.x[1]).label(), POLICY_REQUEST_LABEL);
        assert_eq!(ctx.x[2], Syscall::Null.number());
        ctx.x[5]
    }

    /// The current thread sends `errno` as a verdict through `cptr` (a
    /// Reply capability): the result.
    fn answer_errno(&mut self, cptr: u64, errno: ErrorCode) -> u64 {
        let ctx = self.context();
        ctx.x[1] = MessageInfo::with(POLICY_REPLY_ERRNO, 1).into();
        ctx.x[2] = errno.raw();
        let x2 = errno.raw();
        self.syscall(Syscall::Send.number(), [cptr, x2, 0, 0])
    }

    /// The current thread is `thread`, back from its call with `x0`.
    fn back_with(&mut self, thread: ThreadId, x0: ErrorCode) {
        assert_eq!(
            self.kernel.current(),
            Some(thread),
            "{}",
            self.machine.console
        );
        let result = self.context().x[0];
        assert_eq!(result, x0.raw(), "{}", self.machine.console);
    }
}

/// A `Null` from the current thread.
fn h_null(h: &mut Harness) -> u64 {
    h.syscall(Syscall::Null.number(), [0; 4])
}

/// The scene made, the filter attached to the three askers with the
/// server, the supervisor waiting on its supervision endpoint; the askers
/// then ask, each waiting for the server, which runs.
fn three_asked(h: &mut Harness) -> Threads {
    let ids = h.scene(&SCENE);
    let threads = Threads {
        supervisor: ids[0],
        askers: [ids[1], ids[2], ids[3]],
        server: ids[4],
    };
    assert_eq!(h.kernel.current(), Some(threads.supervisor));
    h.filter(FILTER, Action::Notify);
    for asker in 0..3 {
        assert_eq!(
            h.attach(ASKER_TCB + asker, FILTER, Some((REQUESTS, SERVER_TCB))),
            0
        );
    }
    assert!(h.kernel.thread(threads.server).served().named);
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [SUPERVISION, 0, 0, 0]),
        u64::MAX
    );
    for asker in threads.askers {
        assert_eq!(h.kernel.current(), Some(asker));
        h.ask();
    }
    assert_eq!(h.kernel.current(), Some(threads.server));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    threads
}

#[test]
fn a_server_saves_three_requests_and_answers_them_in_reverse_order() {
    let mut h = Harness::start();
    let t = three_asked(&mut h);
    h.retype_into(SERVER_UNTYPED, CapType::Reply, REPLIES, 3);
    let codes = [
        ErrorCode::NotEnoughMemory,
        ErrorCode::WouldBlock,
        ErrorCode::OutOfResources,
    ];
    for (i, asker) in t.askers.iter().enumerate() {
        let number = h.receive_request();
        assert_eq!(number, u64::from(h.kernel.thread(*asker).number()));
        let slot = REPLIES + i as u64;
        assert_eq!(h.syscall(Syscall::ReplySave.number(), [0, slot, 0, 0]), 0);
        // Saved once: nothing is owed any more.
        assert_eq!(
            h.syscall(Syscall::ReplySave.number(), [0, REPLIES, 0, 0]),
            ErrorCode::NoReplyTarget.raw()
        );
        assert_eq!(
            h.kernel.thread(*asker).state(),
            ThreadState::BlockedOnAnswer
        );
        assert!(h.kernel.thread(*asker).saved_reply().is_some());
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }
    // Answered in reverse order; each asker runs at once (it is more
    // urgent) with its own verdict, and exits.
    for i in (0..3).rev() {
        assert_eq!(
            h.answer_errno(REPLIES + i as u64, codes[i]),
            u64::MAX,
            "the asker runs"
        );
        h.back_with(t.askers[i], codes[i]);
        h.exit(0);
        assert_eq!(h.kernel.current(), Some(t.server));
        // Answered twice: the Reply object is empty.
        assert_eq!(
            h.answer_errno(REPLIES + i as u64, ErrorCode::Denied),
            ErrorCode::NoReplyTarget.raw()
        );
    }
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_saved_request_whose_reply_object_goes_is_refused_and_an_allow_runs_the_call() {
    let mut h = Harness::start();
    let t = three_asked(&mut h);
    h.retype_into(SERVER_UNTYPED, CapType::Reply, REPLIES, 3);
    h.receive_request();
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, REPLIES, 0, 0]),
        0
    );
    // Moved into another thread's CSpace (the supervisor's), it answers
    // from there (an allow, here): the call runs (a `Null`: Ok).
    h.receive_request();
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, REPLIES + 1, 0, 0]),
        0
    );
    assert_eq!(
        h.syscall(
            Syscall::CapMoveInto.number(),
            [SUPERVISOR_CNODE, REPLIES + 1, MOVED_REPLY, 0]
        ),
        0
    );
    h.wake_supervisor(&t);
    h.context().x[1] = MessageInfo::with(POLICY_REPLY_ALLOW, 0).into();
    assert_eq!(
        h.syscall(Syscall::Send.number(), [MOVED_REPLY, 0, 0, 0]),
        0,
        "the asker is less urgent"
    );
    h.context().x[1] = 0;
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [SUPERVISION, 0, 0, 0]),
        u64::MAX
    );
    h.back_with(t.askers[1], ErrorCode::Ok);
    h.exit(0);
    // Deleting the first one fails its request closed.
    assert_eq!(h.kernel.current(), Some(t.server));
    assert_eq!(
        h.syscall(Syscall::CapDelete.number(), [0, REPLIES, 0, 0]),
        u64::MAX
    );
    h.back_with(t.askers[0], ErrorCode::Denied);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

/// The server holds a saved request (the first asker's), one delivered
/// and owed (the second's) and one queued (the third's).
fn three_held(h: &mut Harness) -> Threads {
    let t = three_asked(h);
    h.retype_into(SERVER_UNTYPED, CapType::Reply, REPLIES, 1);
    h.receive_request();
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, REPLIES, 0, 0]),
        0
    );
    h.receive_request();
    assert_eq!(h.kernel.thread(t.server).reply_to(), Some(t.askers[1]));
    assert!(matches!(
        h.kernel.thread(t.askers[2]).state(),
        ThreadState::BlockedOnSend { .. }
    ));
    t
}

/// Every asker was refused at once; the supervisor runs, told.
fn all_refused(h: &mut Harness, t: &Threads) {
    for asker in t.askers {
        let thread = h.kernel.thread(asker);
        assert_eq!(thread.state(), ThreadState::Ready, "{}", h.machine.console);
        assert!(thread.saved_reply().is_none());
    }
    assert_eq!(h.kernel.current(), Some(t.supervisor));
    let served = h.kernel.thread(t.server).served();
    assert!(!served.named);
    assert_eq!((served.lost, served.refused), (3, 3));
    assert!(
        h.machine.console.contains(
            ": 3 waiting requests refused; 3 filter attachments without a server until a handover"
        ),
        "{}",
        h.machine.console
    );
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

/// The asker that runs now (any of them, once): back from its call with
/// `x0`.
fn an_asker_back_with(h: &mut Harness, t: &Threads, seen: &mut Vec<ThreadId>, x0: ErrorCode) {
    let asker = h.kernel.current().expect("a thread runs");
    assert!(t.askers.contains(&asker) && !seen.contains(&asker));
    seen.push(asker);
    h.back_with(asker, x0);
}

/// The askers run again, each refused (`Denied`), and each asks again:
/// refused at once, not sent anywhere; then it exits.
fn askers_refused_at_once(h: &mut Harness, t: &Threads) {
    let mut seen = vec![];
    for _ in t.askers {
        an_asker_back_with(h, t, &mut seen, ErrorCode::Denied);
        assert_eq!(h_null(h), ErrorCode::Denied.raw(), "not blocked");
        h.exit(0);
    }
}

impl Harness {
    /// The server (on the CPU) hands the CPU to the supervisor, which
    /// receives its message.
    fn wake_supervisor(&mut self, t: &Threads) {
        self.context().x[1] = 0;
        assert_eq!(
            self.syscall(Syscall::Send.number(), [WAKE_SUPERVISOR, 0, 0, 0]),
            u64::MAX
        );
        assert_eq!(self.kernel.current(), Some(t.supervisor));
    }
}

#[test]
fn a_saved_request_of_a_suspended_or_killed_asker_answers_nobody() {
    let mut h = Harness::start();
    let t = three_asked(&mut h);
    h.retype_into(SERVER_UNTYPED, CapType::Reply, REPLIES, 3);
    h.receive_request();
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, REPLIES, 0, 0]),
        0
    );
    h.receive_request();
    // The first Reply object holds a request: it takes no other.
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, REPLIES, 0, 0]),
        ErrorCode::InvalidArgument.raw()
    );
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, REPLIES + 1, 0, 0]),
        0
    );
    h.wake_supervisor(&t);
    // The first asker is suspended (its call cancelled), the second
    // killed (its TCB deleted).
    h.ok(Syscall::TcbSuspend.number(), [ASKER_TCB, 0, 0, 0]);
    h.ok(Syscall::CapDelete.number(), [0, ASKER_TCB + 1, 0, 0]);
    assert_eq!(h.kernel.thread(t.askers[0]).state(), ThreadState::Suspended);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    h.context().x[1] = 0;
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [SUPERVISION, 0, 0, 0]),
        u64::MAX
    );
    // The server's saved requests answer nobody.
    assert_eq!(h.kernel.current(), Some(t.server));
    for slot in [REPLIES, REPLIES + 1] {
        assert_eq!(
            h.answer_errno(slot, ErrorCode::Denied),
            ErrorCode::NoReplyTarget.raw()
        );
    }
    // The third asker's request is still there to take.
    assert_eq!(
        h.receive_request(),
        u64::from(h.kernel.thread(t.askers[2]).number())
    );
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_server_that_exits_fails_every_request_of_its_filters_at_once_and_its_supervisor_is_told() {
    let mut h = Harness::start();
    let t = three_held(&mut h);
    h.exit(0);
    all_refused(&mut h, &t);
    // The end message (no IPC buffer here: its six register words).
    let ctx = *h.context();
    assert_eq!(MessageInfo::from(ctx.x[1]).label(), END_LABEL);
    assert_eq!(MessageInfo::from(ctx.x[1]).length(), 6);
    // An ended thread serves no filter: neither an attach nor a handover
    // names it.
    assert_eq!(
        h.attach(ASKER_TCB, FILTER, Some((REQUESTS, SERVER_TCB))),
        ErrorCode::InvalidArgument.raw()
    );
    assert_eq!(
        h.set_server(FILTER, REQUESTS, SERVER_TCB).0,
        ErrorCode::InvalidArgument.raw()
    );
    // The refused askers come next: refused at once when they ask again.
    h.context().x[1] = 0;
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [SUPERVISION, 0, 0, 0]),
        u64::MAX
    );
    askers_refused_at_once(&mut h, &t);
}

#[test]
fn a_server_that_faults_fails_them_too_and_its_fault_message_says_so() {
    let mut h = Harness::start();
    let t = three_held(&mut h);
    h.fault(NULL_WRITE_ESR, 0);
    all_refused(&mut h, &t);
    let ctx = *h.context();
    let info = MessageInfo::from(ctx.x[1]);
    assert_eq!(info.label(), FAULT_LABEL);
    let words = [ctx.x[2], ctx.x[3], ctx.x[4], ctx.x[5], ctx.x[6], ctx.x[7]];
    assert_eq!(
        ServerLoss::decode(info, &words, |_| unreachable!()),
        Some(ServerLoss {
            attachments: 3,
            refused: 3
        })
    );
    // Resumed by its handler, it serves no one: the binding is gone.
    h.context().x[1] = MessageInfo::with(abi::fault::FAULT_REPLY_SET_PC, 1).into();
    assert_eq!(h.syscall(Syscall::Reply.number(), [0, CODE, 0, 0]), 0);
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [SUPERVISION, 0, 0, 0]),
        u64::MAX
    );
    askers_refused_at_once(&mut h, &t);
}

#[test]
fn a_server_whose_tcb_is_deleted_fails_them_too_and_only_the_filters_writer_hands_it_over() {
    let mut h = Harness::start();
    let t = three_held(&mut h);
    h.wake_supervisor(&t);
    // While the server lives, a handover takes nothing from it.
    assert_eq!(h.set_server(FILTER, REQUESTS, OWN_TCB), (0, 0));
    // Without the write right on the filter: refused.
    let read = u64::from(Rights::READ.raw());
    h.context().x[6] = 0;
    h.ok(
        Syscall::CapMint.number(),
        [0, FILTER, READ_ONLY_FILTER, read],
    );
    assert_eq!(
        h.set_server(READ_ONLY_FILTER, REQUESTS, OWN_TCB).0,
        ErrorCode::MissingRights.raw()
    );
    // A thread the filter confines would judge its own calls.
    assert_eq!(
        h.set_server(FILTER, REQUESTS, ASKER_TCB).0,
        ErrorCode::InvalidArgument.raw()
    );
    // The server's TCB goes: its filters' requests are refused at once.
    h.ok(Syscall::CapDelete.number(), [0, SERVER_TCB, 0, 0]);
    assert!(
        h.machine
            .console
            .contains("is gone (its TCB was destroyed): 3 waiting requests refused"),
        "{}",
        h.machine.console
    );
    for asker in t.askers {
        assert_eq!(h.kernel.thread(asker).state(), ThreadState::Ready);
    }
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    // Handed to the supervisor itself: all three attachments.
    assert_eq!(
        h.set_server(FILTER, REQUESTS, SERVER_TCB).0,
        ErrorCode::InvalidCapability.raw()
    );
    assert_eq!(h.set_server(FILTER, REQUESTS, OWN_TCB), (0, 3));
    assert!(h.kernel.thread(t.supervisor).served().named);
    // The askers hold the filter (read only): they cannot hand it.
    for asker in 0..3 {
        h.mint_into(ASKER_CNODE + asker, FILTER, ASKERS_FILTER, Rights::READ, 0);
    }
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [REQUESTS, 0, 0, 0]),
        u64::MAX
    );
    let mut seen = vec![];
    an_asker_back_with(&mut h, &t, &mut seen, ErrorCode::Denied);
    let asker = seen[0];
    assert_eq!(
        h.set_server(ASKERS_FILTER, 0, 0).0,
        ErrorCode::MissingRights.raw()
    );
    // Its next request goes to the new server, which allows it.
    h.ask();
    assert_eq!(h.kernel.current(), Some(t.supervisor));
    let ctx = *h.context();
    assert_eq!(MessageInfo::from(ctx.x[1]).label(), POLICY_REQUEST_LABEL);
    assert_eq!(ctx.x[5], u64::from(h.kernel.thread(asker).number()));
    h.context().x[1] = MessageInfo::with(POLICY_REPLY_ALLOW, 0).into();
    assert_eq!(
        h.syscall(Syscall::ReplyRecv.number(), [REQUESTS, 0, 0, 0]),
        u64::MAX
    );
    // `ReplyRecv` goes straight to the thread it answered: its call ran.
    h.back_with(asker, ErrorCode::Ok);
    h.exit(0);
    // The other two were refused before the handover.
    an_asker_back_with(&mut h, &t, &mut seen, ErrorCode::Denied);
    h.exit(0);
    an_asker_back_with(&mut h, &t, &mut seen, ErrorCode::Denied);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn an_attach_names_a_live_server_thread_for_a_filter_that_asks_one() {
    let mut h = Harness::start();
    let ids = h.scene(&SCENE);
    assert_eq!(h.kernel.current(), Some(ids[0]));
    h.filter(FILTER, Action::Notify);
    h.filter(QUIET_FILTER, Action::Errno(ErrorCode::Denied.raw() as u16));
    let invalid = ErrorCode::InvalidArgument.raw();
    // A filter that can say Notify needs a server; one that cannot
    // attaches without one, as before.
    assert_eq!(h.attach(ASKER_TCB, FILTER, None), invalid);
    assert_eq!(h.attach(ASKER_TCB, QUIET_FILTER, None), 0);
    // So does one whose default action is Notify.
    h.retype_into(UNTYPED, CapType::Filter, SECOND_FILTER, 1);
    let mut buffer = vec![0u8; MAX_DESCRIPTION_BYTES];
    let bytes = encode(&FilterDescription::new(Action::Notify), &mut buffer)
        .unwrap()
        .to_vec();
    h.poke(DATA, &bytes);
    h.ok(
        Syscall::FilterLoad.number(),
        [SECOND_FILTER, DATA, bytes.len() as u64, 0],
    );
    assert_eq!(h.attach(ASKER_TCB, SECOND_FILTER, None), invalid);
    // The confined thread as its own server: refused.
    assert_eq!(
        h.attach(ASKER_TCB, FILTER, Some((REQUESTS, ASKER_TCB))),
        invalid
    );
    // The capabilities' rights: the endpoint's write, the TCB's read.
    h.context().x[6] = 0;
    let read = u64::from(Rights::READ.raw());
    let write = u64::from(Rights::WRITE.raw());
    h.ok(
        Syscall::CapMint.number(),
        [0, REQUESTS, READ_ONLY_REQUESTS, read],
    );
    h.context().x[6] = 0;
    h.ok(
        Syscall::CapMint.number(),
        [0, SERVER_TCB, WRITE_ONLY_TCB, write],
    );
    let missing = ErrorCode::MissingRights.raw();
    assert_eq!(
        h.attach(ASKER_TCB, FILTER, Some((READ_ONLY_REQUESTS, SERVER_TCB))),
        missing
    );
    assert_eq!(
        h.attach(ASKER_TCB, FILTER, Some((REQUESTS, WRITE_ONLY_TCB))),
        missing
    );
    assert_eq!(h.attach(ASKER_TCB, FILTER, Some((REQUESTS, SERVER_TCB))), 0);
    // Only the two accepted attaches took.
    assert_eq!(h.kernel.thread(ids[1]).filters().len(), 2);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}
