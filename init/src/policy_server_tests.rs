//! Policy servers that answer later, that die, and whose filters are
//! handed on (issue 19, points 3 and 4). Each program returns 0 when
//! every check passed, else the number of the first that failed.
//!
//! * Answers later (`AsyncPolicyServer`, `AsyncAsker`): the server
//!   attaches a filter (`Null` says `Notify`) to three askers, naming
//!   itself; it saves each one's request in a Reply object
//!   (`sdk::policy_server::serve_async`) and, holding all three, answers
//!   them in reverse order, each with a verdict of its own; a saved
//!   request whose Reply object it deletes is refused. Attaching that
//!   filter without a server, or with the confined thread as its own
//!   server, is refused; a filter without `Notify` needs none.
//! * Dies (`LossSupervisor`, `LossServer`, `LossAsker`): a supervisor
//!   makes a server and three askers (threads of this program; the askers
//!   in CNodes of their own holding the filter read-only) and confines
//!   them. The server saves the first request, takes the second and lets
//!   the third queue, then exits, faults or has its TCB deleted: all three
//!   are refused at once, the next ones too without reaching anyone, and
//!   the supervisor reads the loss in the server's fault and end messages.
//!   After an exit it restarts the server and hands it the filter (only
//!   the filter's writer can, never to a dead or confined thread): the
//!   askers are served again.

use crate::programs::{BootProgram, CNODE_SLOT, CONSOLE_SLOT};
use abi::cap::{CapType, Rights};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message, Received};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{
    self, AsyncPolicyServer, Decision, Deferred, Other, PolicyAnswer, PolicyRequest, PolicyServer,
    ReplyPool,
};
use sdk::reply::ReplyCap;
use sdk::supervision::{self, FaultReply, Restart, ServerLoss, ThreadEnd};
use sdk::syscall::{cnode, raw_syscall, retype};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::VSpace;

const CNODE: u64 = CNODE_SLOT;
/// The label of the message that ends a server.
const DONE: u64 = 0xd0e;

/// A `Null` marked with `step` in `x2` (which `Null` ignores), so the
/// server sees which call it is asked about.
fn marked_null(step: u64) -> Result<(), ErrorCode> {
    raw_syscall(Syscall::Null.number(), 0, step, 0).into_result()
}

/// The filter every case here attaches: `Null` asks the policy server.
fn notify_null(buffer: &mut [u8]) -> Option<&[u8]> {
    FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::Notify))
        .encode(buffer)
        .ok()
}

/// The async server's slots.
const REQUESTS: Cptr = Cptr(2);
const UNTYPED: u64 = 3;
const ASKERS: [Tcb; 3] = [Tcb(Cptr(4)), Tcb(Cptr(5)), Tcb(Cptr(6))];
const AS_SERVER: Cptr = Cptr(7);
const OWN_TCB: Tcb = Tcb(Cptr(8));
const FILTER: FilterCap = FilterCap(Cptr(9));
const QUIET_FILTER: FilterCap = FilterCap(Cptr(10));
/// The Reply objects requests are saved in: 11, 12, 13.
const POOL: u64 = 11;
/// Each asker's verdict, by its step (its index).
const CODES: [ErrorCode; 3] = [
    ErrorCode::NotEnoughMemory,
    ErrorCode::WouldBlock,
    ErrorCode::OutOfResources,
];
/// The first asker's second call: its Reply object is deleted.
const SECOND_ASK: u64 = 10;
/// The asker's capability to the server's endpoint (for `DONE`).
const TO_SERVER: Cptr = Cptr(2);

/// The async server's state: the requests it holds, and its checks.
#[derive(Default)]
struct Holder {
    held: heapless::Vec<(Deferred, u64), 3>,
    answered: u32,
    /// The first failed check (0: none).
    failed: i32,
}

impl Holder {
    fn check(&mut self, number: i32, passed: bool) {
        if !passed && self.failed == 0 {
            sdk::println!("check {number} failed");
            self.failed = number;
        }
    }
}

impl AsyncPolicyServer for Holder {
    fn decide(&mut self, _request: &PolicyRequest) -> Decision {
        Decision::Later
    }

    fn deferred(&mut self, request: &PolicyRequest, deferred: Deferred, pool: &mut ReplyPool) {
        let step = request.args[2];
        // Saved: nothing is owed any more, a second save finds nothing.
        let again = cnode::reply_save(CNODE, deferred.reply);
        self.check(20, again == Err(ErrorCode::NoReplyTarget));
        if step == SECOND_ASK {
            // Its Reply object destroyed unused: the asker is refused.
            self.check(21, cnode::delete(CNODE, deferred.reply).is_ok());
            return;
        }
        let held = self.held.push((deferred, step)).is_ok();
        self.check(22, held);
        if self.held.len() < 3 {
            return;
        }
        // All three held: answered in reverse order, each its own.
        while let Some((deferred, step)) = self.held.pop() {
            let code = CODES
                .get(step as usize)
                .copied()
                .unwrap_or(ErrorCode::Denied);
            self.check(23, pool.answer(deferred, PolicyAnswer::Errno(code)).is_ok());
            // Answered once: the Reply object holds nothing.
            let twice = policy_server::answer(&ReplyCap(Cptr(deferred.reply)), PolicyAnswer::Allow);
            self.check(24, twice == Err(ErrorCode::NoReplyTarget));
            self.answered += 1;
        }
    }

    fn other(&mut self, received: &Received, _pool: &mut ReplyPool) -> Other {
        self.check(25, received.message.info.label() == DONE);
        Other::Stop
    }
}

/// Confines the askers (naming itself), then answers later.
pub fn async_server() -> i32 {
    let mut buffer = [0u8; 128];
    let Some(rules) = notify_null(&mut buffer) else {
        return 1;
    };
    expect!(
        2,
        retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 2),
        Ok(())
    );
    expect!(3, FILTER.load(rules), Ok(()));
    // A filter that can say Notify needs a server, and not the confined
    // thread itself; one that cannot needs none.
    expect!(
        4,
        ASKERS[0].attach_filter(FILTER, None),
        Err(ErrorCode::InvalidArgument)
    );
    let itself = FilterServer {
        endpoint: AS_SERVER,
        thread: ASKERS[0],
    };
    expect!(
        5,
        ASKERS[0].attach_filter(FILTER, Some(itself)),
        Err(ErrorCode::InvalidArgument)
    );
    let mut buffer = [0u8; 128];
    let Ok(quiet) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::errno(ErrorCode::Denied)))
        .encode(&mut buffer)
    else {
        return 6;
    };
    expect!(7, QUIET_FILTER.load(quiet), Ok(()));
    expect!(8, ASKERS[0].attach_filter(QUIET_FILTER, None), Ok(()));
    let server = FilterServer {
        endpoint: AS_SERVER,
        thread: OWN_TCB,
    };
    for (i, asker) in ASKERS.iter().enumerate() {
        expect!(
            10 + i as i32,
            asker.attach_filter(FILTER, Some(server)),
            Ok(())
        );
    }
    expect!(14, retype(UNTYPED, CapType::Reply, 0, POOL, 3), Ok(()));
    let mut pool = ReplyPool::new(Cptr(CNODE), POOL, 3);
    let mut holder = Holder::default();
    expect!(
        15,
        policy_server::serve_async(REQUESTS, &mut pool, &mut holder),
        Ok(())
    );
    expect!(16, holder.failed, 0);
    expect!(17, holder.answered, 3);
    0
}

/// An asker (`index` 0..=2): gets its own verdict; the first also asks
/// again (refused: its Reply object goes) and ends the server.
pub fn async_asker(index: u64) -> i32 {
    let Some(&code) = CODES.get(index as usize) else {
        return 1;
    };
    expect!(2, marked_null(index), Err(code));
    if index == 0 {
        expect!(3, marked_null(SECOND_ASK), Err(ErrorCode::Denied));
        expect!(4, ipc::send(TO_SERVER, &Message::new(DONE, &[])), Ok(()));
    }
    0
}

/// How the server of the loss cases goes (`LossSupervisor`'s and
/// `LossServer`'s parameter).
pub const LOSS_EXIT: u64 = 0;
/// See [`LOSS_EXIT`]: it faults (a write to page 0).
pub const LOSS_FAULT: u64 = 1;
/// See [`LOSS_EXIT`]: the supervisor deletes its TCB.
pub const LOSS_DELETE: u64 = 2;
/// `LossServer` restarted: it allows everything until `DONE`.
const SERVE: u64 = 3;
/// `LossAsker`'s parameter bit: it waits for the handover and asks again.
const HANDED_OVER: u64 = 1 << 4;

/// The supervisor's slots (radix 6). The server shares its CNode; each
/// asker has one of its own.
const SUPERVISOR_UNTYPED: u64 = 2;
const OWN_SPACE: VSpace = VSpace(Cptr(3));
const FAULTS: u64 = 4;
const SERVER_FAULTS: u64 = 5;
/// The askers' fault endpoints (badged): 6, 7, 8.
const ASKER_FAULTS: u64 = 6;
const LOSS_REQUESTS: u64 = 9;
const LOSS_AS_SERVER: Cptr = Cptr(10);
const LOSS_FILTER: FilterCap = FilterCap(Cptr(11));
const READ_ONLY_FILTER: FilterCap = FilterCap(Cptr(12));
const SERVER: Tcb = Tcb(Cptr(13));
/// The askers' TCBs: 14, 15, 16.
const LOSS_ASKERS: u64 = 14;
/// Where the server saves the first request.
const REPLY: u64 = 17;
const READY: u64 = 18;
/// Each asker's own "go" (a signal to one nobody waits on yet is kept for
/// its waiter): 19, 20, 21.
const GO: u64 = 19;
/// The askers' CNodes: 24, 25, 26.
const ASKER_CNODES: u64 = 24;
/// Each thread's frames: 3 slots from here.
const FRAMES: u64 = 40;
const SERVER_BADGE: u64 = 0x5e;
const ASKER_BADGE: u64 = 0xa0;
/// The server's label to the supervisor: it holds three requests.
const HOLDING: u64 = 0x401d;
/// Below the supervisor (100): the server, then the askers, then the
/// server once it holds two requests (the third then queues).
const SERVER_PRIORITY: u64 = 99;
const ASKER_PRIORITY: u64 = 98;
const LOW_PRIORITY: u64 = 97;

/// A loss asker's slots (its own CNode, radix 3).
const MY_FILTER: FilterCap = FilterCap(Cptr(2));
const MY_READY: Cptr = Cptr(3);
const MY_GO: Cptr = Cptr(4);

/// A thread of this program in this space (frames from the Untyped,
/// `index` picking them and its area), with its CSpace, fault endpoint
/// and priority, not started. Returns how to restart it.
fn make_thread(
    tcb: Tcb,
    index: u64,
    cspace: u64,
    fault: u64,
    priority: u64,
    selector: u64,
) -> Result<impl Fn(u64) -> Restart, ErrorCode> {
    let name = BootProgram::decode(selector).map(|(program, _)| program.name());
    retype(SUPERVISOR_UNTYPED, CapType::Tcb, 0, tcb.0 .0, 1)?;
    tcb.configure(Cptr(cspace), priority)?;
    let thread = OwnThread {
        tcb,
        vspace: OWN_SPACE,
        untyped: Cptr(SUPERVISOR_UNTYPED),
        first_slot: FRAMES + 3 * index,
        stack_pages: 2,
        area: abi::vspace::FRAME_MAP_START + 0x10_0000 * (index + 1),
        fault_endpoint: Some(Cptr(fault)),
        name,
    };
    let layout = bind_to_own_space(&thread, selector)?;
    Ok(move |selector| Restart {
        pc: sdk::entry_point(),
        sp: layout.stack_top,
        x0: selector,
        tpidr: layout.buffer.address,
    })
}

/// The next message on the supervisor's fault endpoint, from `badge`.
fn next_from(badge: u64) -> Result<Message, ErrorCode> {
    let received = ipc::recv(Cptr(FAULTS))?;
    if received.badge != badge {
        sdk::println!("a message from badge {:#x}, not {badge:#x}", received.badge);
        return Err(ErrorCode::InvalidArgument);
    }
    Ok(received.message)
}

/// The filter to the (restarted) server.
fn the_server() -> FilterServer {
    FilterServer {
        endpoint: LOSS_AS_SERVER,
        thread: SERVER,
    }
}

/// Sets up the server and the askers, loses the server as `scenario`
/// says, checks what it is told, and after an exit hands the filter to
/// the restarted server.
pub fn loss_supervisor(scenario: u64) -> i32 {
    expect!(
        1,
        retype(SUPERVISOR_UNTYPED, CapType::Endpoint, 0, FAULTS, 1),
        Ok(())
    );
    expect!(
        2,
        cnode::mint(
            CNODE,
            FAULTS,
            SERVER_FAULTS,
            Rights::WRITE,
            Some(SERVER_BADGE)
        ),
        Ok(())
    );
    expect!(
        3,
        retype(SUPERVISOR_UNTYPED, CapType::Endpoint, 0, LOSS_REQUESTS, 1),
        Ok(())
    );
    expect!(
        4,
        cnode::mint(
            CNODE,
            LOSS_REQUESTS,
            LOSS_AS_SERVER.0,
            Rights::WRITE,
            Some(SERVER_BADGE)
        ),
        Ok(())
    );
    let mut buffer = [0u8; 128];
    let Some(rules) = notify_null(&mut buffer) else {
        return 5;
    };
    expect!(
        6,
        retype(SUPERVISOR_UNTYPED, CapType::Filter, 0, LOSS_FILTER.0 .0, 1),
        Ok(())
    );
    expect!(7, LOSS_FILTER.load(rules), Ok(()));
    expect!(
        8,
        cnode::mint(
            CNODE,
            LOSS_FILTER.0 .0,
            READ_ONLY_FILTER.0 .0,
            Rights::READ,
            None
        ),
        Ok(())
    );
    expect!(
        9,
        retype(SUPERVISOR_UNTYPED, CapType::Notification, 0, READY, 1),
        Ok(())
    );
    expect!(
        10,
        retype(SUPERVISOR_UNTYPED, CapType::Notification, 0, GO, 3),
        Ok(())
    );
    let restart = match make_thread(
        SERVER,
        0,
        CNODE,
        SERVER_FAULTS,
        SERVER_PRIORITY,
        BootProgram::LossServer.selector(scenario),
    ) {
        Ok(restart) => restart,
        Err(error) => {
            sdk::println!("making the server failed: {error:?}");
            return 11;
        }
    };
    expect!(12, SERVER.resume(), Ok(()));
    let handed_over = if scenario == LOSS_EXIT {
        HANDED_OVER
    } else {
        0
    };
    for i in 0..3 {
        let check = 20 + 10 * i as i32;
        let (tcb, own) = (Tcb(Cptr(LOSS_ASKERS + i)), ASKER_CNODES + i);
        let fault = ASKER_FAULTS + i;
        expect!(
            check,
            cnode::mint(CNODE, FAULTS, fault, Rights::WRITE, Some(ASKER_BADGE + i)),
            Ok(())
        );
        expect!(
            check + 1,
            retype(SUPERVISOR_UNTYPED, CapType::CNode, 3, own, 1),
            Ok(())
        );
        let grants = [
            (CONSOLE_SLOT, CONSOLE_SLOT, Rights::WRITE, None),
            (READ_ONLY_FILTER.0 .0, MY_FILTER.0 .0, Rights::READ, None),
            (READY, MY_READY.0, Rights::WRITE, Some(1 << i)),
            (GO + i, MY_GO.0, Rights::READ, None),
        ];
        for (source, target, rights, badge) in grants {
            expect!(
                check + 2,
                cnode::mint_into(own, source, target, rights, badge),
                Ok(())
            );
        }
        let selector = BootProgram::LossAsker.selector(i | handed_over);
        if make_thread(tcb, 1 + i, own, fault, ASKER_PRIORITY, selector).is_err() {
            return check + 3;
        }
        expect!(
            check + 4,
            tcb.attach_filter(LOSS_FILTER, Some(the_server())),
            Ok(())
        );
        expect!(check + 5, tcb.resume(), Ok(()));
    }
    let told = ServerLoss {
        attachments: 3,
        refused: 3,
    };
    match scenario {
        LOSS_EXIT => {
            let Ok(end) = next_from(SERVER_BADGE) else {
                return 60;
            };
            expect!(
                61,
                supervision::end_of(&end),
                Some(ThreadEnd::Exited { status: 0 })
            );
            expect!(62, supervision::server_loss_of(&end), Some(told));
        }
        LOSS_FAULT => {
            let Ok(fault) = next_from(SERVER_BADGE) else {
                return 60;
            };
            expect!(61, supervision::fault_of(&fault).is_some(), true);
            // Told before it decides: the filters lost their server at the
            // fault, even one a handler could resume.
            expect!(62, supervision::server_loss_of(&fault), Some(told));
            expect!(
                63,
                ipc::reply(&supervision::fault_reply(FaultReply::Stop)),
                Ok(())
            );
            let Ok(end) = next_from(SERVER_BADGE) else {
                return 64;
            };
            expect!(
                65,
                matches!(supervision::end_of(&end), Some(ThreadEnd::Faulted { .. })),
                true
            );
            expect!(66, supervision::server_loss_of(&end), Some(told));
        }
        _ => {
            let Ok(holding) = next_from(SERVER_BADGE) else {
                return 60;
            };
            expect!(61, holding.info.label(), HOLDING);
            // While the server lives its requests wait for it: a handover
            // takes none of them; nor can a reader hand the filter over,
            // nor give it to a thread it confines.
            expect!(62, LOSS_FILTER.set_server(the_server()), Ok(0));
            expect!(
                63,
                READ_ONLY_FILTER.set_server(the_server()),
                Err(ErrorCode::MissingRights)
            );
            let confined = FilterServer {
                endpoint: LOSS_AS_SERVER,
                thread: Tcb(Cptr(LOSS_ASKERS)),
            };
            expect!(
                64,
                LOSS_FILTER.set_server(confined),
                Err(ErrorCode::InvalidArgument)
            );
            expect!(65, cnode::delete(CNODE, SERVER.0 .0), Ok(()));
        }
    }
    if scenario == LOSS_EXIT {
        // Ended, it serves no one: no handover to it.
        expect!(
            70,
            LOSS_FILTER.set_server(the_server()),
            Err(ErrorCode::InvalidArgument)
        );
        // Once every asker was refused, twice, restarted and handed the
        // filter: all three attachments.
        let mut ready = 0;
        while ready != 0b111 {
            match ipc::wait(Cptr(READY)) {
                Ok(word) => ready |= word,
                Err(_) => return 71,
            }
        }
        expect!(
            72,
            supervision::restart(SERVER, restart(BootProgram::LossServer.selector(SERVE))),
            Ok(())
        );
        expect!(73, LOSS_FILTER.set_server(the_server()), Ok(3));
        for i in 0..3 {
            expect!(74, ipc::signal(Cptr(GO + i)), Ok(()));
        }
    }
    // The askers' ends, in whatever order they came.
    let mut ended = 0u64;
    for _ in 0..3 {
        let Ok(received) = ipc::recv(Cptr(FAULTS)) else {
            return 80;
        };
        let Some(asker) = received.badge.checked_sub(ASKER_BADGE).filter(|a| *a < 3) else {
            return 81;
        };
        expect!(82, ended & 1 << asker, 0);
        ended |= 1 << asker;
        expect!(
            83,
            supervision::end_of(&received.message),
            Some(ThreadEnd::Exited { status: 0 })
        );
    }
    if scenario == LOSS_EXIT {
        expect!(
            90,
            ipc::send(Cptr(LOSS_REQUESTS), &Message::new(DONE, &[])),
            Ok(())
        );
        let Ok(end) = next_from(SERVER_BADGE) else {
            return 91;
        };
        expect!(
            92,
            supervision::end_of(&end),
            Some(ThreadEnd::Exited { status: 0 })
        );
        // Counted since its restart: it lost the three attachments of the
        // askers that had ended, with no request waiting.
        let ended = ServerLoss {
            attachments: 3,
            refused: 0,
        };
        expect!(93, supervision::server_loss_of(&end), Some(ended));
    }
    0
}

/// Allows every request until `DONE`.
struct AllowAll;

impl PolicyServer for AllowAll {
    fn decide(&mut self, _request: &PolicyRequest) -> PolicyAnswer {
        PolicyAnswer::Allow
    }
}

/// The loss cases' server (sharing the supervisor's CNode): saves the
/// first request, takes the second, lets the third queue, then goes as
/// `scenario` says; restarted (`SERVE`), it allows everything.
pub fn loss_server(scenario: u64) -> i32 {
    let requests = Cptr(LOSS_REQUESTS);
    if scenario == SERVE {
        expect!(1, policy_server::serve(requests, &mut AllowAll), Ok(()));
        return 0;
    }
    expect!(
        2,
        retype(SUPERVISOR_UNTYPED, CapType::Reply, 0, REPLY, 1),
        Ok(())
    );
    let is_request = |received: Result<Received, ErrorCode>| {
        received.is_ok_and(|r| PolicyRequest::decode(&r, ipc::buffer_word).is_some())
    };
    expect!(3, is_request(ipc::recv(requests)), true);
    expect!(4, ReplyCap::save(Cptr(CNODE), REPLY).is_ok(), true);
    expect!(5, is_request(ipc::recv(requests)), true);
    // Below the askers: the third asks, and its request queues.
    expect!(6, SERVER.set_priority(LOW_PRIORITY), Ok(()));
    match scenario {
        LOSS_EXIT => 0,
        LOSS_FAULT => {
            sdk::probe::write_u64(0);
            7
        }
        _ => {
            // The supervisor deletes this thread's TCB.
            let _ = ipc::send(Cptr(SERVER_FAULTS), &Message::new(HOLDING, &[]));
            8
        }
    }
}

/// A loss asker (`parameter`: its index, and `HANDED_OVER`): refused
/// when the server is lost, refused at once after, never able to hand
/// its filter over; after a handover, served again.
pub fn loss_asker(parameter: u64) -> i32 {
    let step = parameter & 0xf;
    expect!(1, marked_null(step), Err(ErrorCode::Denied));
    // No server now: refused at once, sent nowhere.
    expect!(2, marked_null(step), Err(ErrorCode::Denied));
    // Confined, holding the filter read-only: no handover.
    let own = FilterServer {
        endpoint: MY_READY,
        thread: Tcb(Cptr(CNODE)),
    };
    expect!(3, MY_FILTER.set_server(own), Err(ErrorCode::MissingRights));
    if parameter & HANDED_OVER != 0 {
        expect!(4, ipc::signal(MY_READY), Ok(()));
        expect!(5, ipc::wait(MY_GO).is_ok(), true);
        expect!(6, marked_null(step), Ok(()));
    }
    0
}
