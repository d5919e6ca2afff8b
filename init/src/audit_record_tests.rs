//! One audit record per syscall, whatever becomes of it (issue 13, points
//! 2 and 4): written once its verdict is final, whoever decided it (a
//! filter, a policy server that allowed, refused or emulated it, a `Trap`,
//! a `Kill`), and for a syscall that ends its own thread (its `Exit`, the
//! deletion of its own TCB capability, the revocation of the Untyped its
//! TCB came from) with no result, when the thread ends. A call its policy
//! server answered itself still has its trace exit stop. Each program
//! returns the number of its first failed check.

use crate::programs::BootProgram;
use abi::audit::{AuditMode, AuditRecord, AuditVerdict};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr};
use sdk::probe;
use sdk::syscall::{cnode, retype};
use sdk::tcb::{FilterServer, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::{Frame, MappedFrame, VSpace};

/// `SelfEnder`'s parameter: the low byte says how it ends itself, the
/// rest is the slot (or the exit status) it ends itself with.
pub const SELF_END_EXIT: u64 = 0;
/// Deletes its own TCB's only capability (in the CNode it shares with its
/// creator).
pub const SELF_END_DELETE: u64 = 1;
/// Revokes the Untyped its TCB was retyped from.
pub const SELF_END_REVOKE: u64 = 2;

/// `SelfEndAuditor`'s slots: its own CNode (shared with each child), the
/// case's Untyped, its own VSpace and TCB, the ring and its notification.
const CNODE: u64 = crate::programs::CNODE_SLOT;
const UNTYPED: u64 = 2;
const OWN_VSPACE: VSpace = VSpace(Cptr(3));
const OWN_TCB: Tcb = Tcb(Cptr(4));
const RING: Frame = Frame(Cptr(5));
const RING_SIGNAL: Cptr = Cptr(6);
/// Child `i`'s one-page Untyped is in slot `7 + 2 i`, its TCB in `8 + 2 i`.
const FIRST_CHILD_SLOT: u64 = 7;
/// Where a copy of an ended child's TCB capability would go.
const SPARE: u64 = 15;
/// Child `i` is a thread of the auditor's own program and space: its
/// stack and IPC buffer frames (from the case's Untyped, not its own
/// one-page Untyped, which holds its TCB alone) are in the slots from
/// `16 + CHILD_FRAME_SLOTS i`, mapped from `CHILD_AREA + CHILD_AREA_SIZE
/// i` (clear of the ring at the window's start).
const CHILD_STACK_PAGES: u64 = 4;
const CHILD_FRAME_SLOTS: u64 = 8;
const CHILD_AREA: u64 = FRAME_MAP_START + 0x10_0000;
const CHILD_AREA_SIZE: u64 = 0x10_0000;
/// The children's priority: above the auditor once it has lowered itself.
const CHILD_PRIORITY: u64 = 100;
/// The exit status of the child that exits.
const EXIT_STATUS: u64 = 0x5e1f;

/// Makes a ring Frame (retyped from the Untyped, mapped read-write at the
/// start of the frame window) and its notification.
fn make_ring() -> Result<MappedFrame, i32> {
    if retype(UNTYPED, CapType::Frame, 0, RING.0 .0, 1).is_err() {
        return Err(1);
    }
    if retype(UNTYPED, CapType::Notification, 0, RING_SIGNAL.0, 1).is_err() {
        return Err(2);
    }
    RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite)
        .map_err(|_| 3)
}

/// The next record in the ring, printed; `None` if the ring is empty, or
/// it is garbled or follows a gap (both printed).
fn next_record(ring: &mut MappedFrame, reader: &mut Reader) -> Option<AuditRecord> {
    match reader.next(ring)? {
        Entry::Record { record, gap: 0 } => {
            sdk::println!("[audit] {}", Line(&record));
            Some(record)
        }
        Entry::Record { record, gap } => {
            sdk::println!("[audit] {gap} records lost before {}", Line(&record));
            None
        }
        Entry::Garbled { index } => {
            sdk::println!("[audit] record {index} is garbled");
            None
        }
    }
}

/// Makes three audited threads, each ending itself with its first
/// syscall (an `Exit`, a `CapDelete` of its own TCB, a `CapRevoke` of the
/// Untyped its TCB came from), and checks each left exactly one record:
/// that syscall, its arguments, no result.
pub fn self_end_auditor() -> i32 {
    let mut ring = match make_ring() {
        Ok(ring) => ring,
        Err(check) => return check,
    };
    let mut reader = Reader::new();
    // Below the children from now on (the MCP stays 100): each runs until
    // it has ended itself before this thread goes on.
    expect!(4, OWN_TCB.set_priority(CHILD_PRIORITY - 10), Ok(()));
    let children = [
        (SELF_END_EXIT, Syscall::Exit, 0xe1),
        (SELF_END_DELETE, Syscall::CapDelete, 0xde),
        (SELF_END_REVOKE, Syscall::CapRevoke, 0x4e),
    ];
    for (index, (mode, syscall, badge)) in children.into_iter().enumerate() {
        let check = 10 * (index as i32 + 1);
        let untyped = FIRST_CHILD_SLOT + 2 * index as u64;
        let tcb = Tcb(Cptr(untyped + 1));
        let argument = match mode {
            SELF_END_EXIT => EXIT_STATUS,
            SELF_END_DELETE => tcb.0 .0,
            _ => untyped,
        };
        expect!(
            check,
            retype(UNTYPED, CapType::Untyped, 12, untyped, 1),
            Ok(())
        );
        expect!(
            check + 1,
            retype(untyped, CapType::Tcb, 0, tcb.0 .0, 1),
            Ok(())
        );
        let selector = BootProgram::SelfEnder.selector(mode | argument << 8);
        expect!(
            check + 2,
            tcb.configure(Cptr(CNODE), CHILD_PRIORITY),
            Ok(())
        );
        let child = OwnThread {
            tcb,
            vspace: OWN_VSPACE,
            untyped: Cptr(UNTYPED),
            first_slot: 16 + CHILD_FRAME_SLOTS * index as u64,
            stack_pages: CHILD_STACK_PAGES,
            area: CHILD_AREA + CHILD_AREA_SIZE * index as u64,
            fault_endpoint: None,
            name: None,
        };
        // Made by this thread, not the child: no record of it.
        expect!(
            60 + index as i32,
            bind_to_own_space(&child, selector).map(|_| ()),
            Ok(())
        );
        expect!(
            check + 3,
            tcb.set_audit(RING, RING_SIGNAL, Some(AuditMode::Lossy), badge),
            Ok(())
        );
        // The child runs at once, above this thread: the lean entry's
        // resume switches away (its rest of the frame saved after the
        // call) and comes back here later with every register kept.
        expect!(
            check + 4,
            probe::registers_kept_across(Syscall::TcbResume.number(), tcb.0 .0, 0, 0),
            (ErrorCode::Ok.raw(), 0)
        );
        // It has ended: its TCB is kept, ended (it exited: a resume does
        // not run it), or is gone.
        let (gone, want) = match mode {
            SELF_END_EXIT => (tcb.resume(), ErrorCode::InvalidArgument),
            _ => (
                cnode::copy(CNODE, tcb.0 .0, SPARE),
                ErrorCode::InvalidCapability,
            ),
        };
        expect!(check + 5, gone, Err(want));
        let Some(record) = next_record(&mut ring, &mut reader) else {
            sdk::println!("no record of the {} that ended its thread", syscall.name());
            return check + 6;
        };
        expect!(
            check + 7,
            (record.syscall, record.thread_badge, record.args[2]),
            (syscall.number(), badge, argument)
        );
        // No result (the thread ended in it), run as the filters allowed.
        expect!(
            check + 8,
            (
                record.result,
                record.verdict,
                record.forwarded,
                record.dropped
            ),
            (None, AuditVerdict::Allowed, false, 0)
        );
        // Exactly one: nothing after the syscall that ended the thread.
        expect!(check + 9, reader.next(&mut ring), None);
    }
    // The Untyped the last child revoked is whole again: it holds a TCB
    // as it did (its memory holds one TCB).
    let untyped = FIRST_CHILD_SLOT + 4;
    expect!(50, retype(untyped, CapType::Tcb, 0, SPARE, 1), Ok(()));
    expect!(51, ipc::poll(RING_SIGNAL).map(|word| word != 0), Ok(true));
    0
}

/// A thread made by `self_end_auditor`, audited, sharing its creator's
/// CNode: its first syscall ends it (see `SELF_END_*`). Returning is a
/// failure, which its record (an `Exit` after the first call) shows.
pub fn self_ender(parameter: u64) -> i32 {
    let (mode, argument) = (parameter & 0xff, parameter >> 8);
    match mode {
        SELF_END_EXIT => sdk::syscall::exit_with(argument as i64),
        SELF_END_DELETE => {
            let _ = cnode::delete(CNODE, argument);
        }
        SELF_END_REVOKE => {
            let _ = cnode::revoke(CNODE, argument);
        }
        _ => {}
    }
    1
}

/// `VerdictApp`'s slots: a notification, its capability to the warden's
/// endpoint (which `NBRecv` is tried on).
const APP_NOTIFICATION: Cptr = Cptr(2);
const APP_ENDPOINT: u64 = 3;
/// What the warden's `Emulate` answer puts in the app's `x8`.
const EMULATED_X8: u64 = 0x77;

/// The app whose calls get every verdict (see `verdict_warden`): each
/// result is the verdict's; the `Wait` at the end is killed.
pub fn verdict_app() -> i32 {
    use sdk::syscall::raw_syscall_registers;
    expect!(1, sdk::syscall::null(), Ok(()));
    expect!(2, sdk::syscall::yield_now(), Err(ErrorCode::OutOfResources));
    expect!(3, ipc::poll(APP_NOTIFICATION), Ok(0));
    expect!(
        4,
        sdk::syscall::debug_print(b"decided by the server\n"),
        Err(ErrorCode::InvalidArgument)
    );
    let x = raw_syscall_registers(
        Syscall::Signal.number(),
        [APP_NOTIFICATION.0, 0, 0, 0, 0, 0, 0, 0],
    );
    expect!(5, (x[0], x[8]), (ErrorCode::Ok.raw(), EMULATED_X8));
    expect!(6, cnode::copy(CNODE, 1, 9), Ok(()));
    expect!(
        7,
        ipc::nb_recv(Cptr(APP_ENDPOINT)).map(|_| ()),
        Err(ErrorCode::Denied)
    );
    // The emulated Signal signalled nothing.
    expect!(8, ipc::poll(APP_NOTIFICATION), Ok(0));
    // Killed here.
    let _ = ipc::wait(APP_NOTIFICATION);
    9
}

/// `VerdictWarden`'s slots: its endpoint (receive; the app's stops,
/// requests and trap reports arrive there), its capabilities to it as
/// policy server (badge 0x5e) and as tracer (badge 0x7ace), the app's
/// TCB, an Untyped, its own VSpace and TCB.
const WARDEN_ENDPOINT: Cptr = Cptr(2);
const WARDEN_AS_SERVER: Cptr = Cptr(3);
const WARDEN_AS_TRACER: Cptr = Cptr(4);
const VERDICT_APP: Tcb = Tcb(Cptr(5));
const WARDEN_UNTYPED: u64 = 6;
const WARDEN_VSPACE: VSpace = VSpace(Cptr(7));
const WARDEN_TCB: Tcb = Tcb(Cptr(8));
const WARDEN_FILTER: sdk::tcb::FilterCap = sdk::tcb::FilterCap(Cptr(10));
const WARDEN_RING: Frame = Frame(Cptr(11));
const WARDEN_RING_SIGNAL: Cptr = Cptr(12);
/// The badges the app's requests, stops and records carry.
pub const VERDICT_SERVER_BADGE: u64 = 0x5e;
/// See [`VERDICT_SERVER_BADGE`].
pub const VERDICT_TRACER_BADGE: u64 = 0x7ace;
const VERDICT_AUDIT_BADGE: u64 = 0x5ec;

/// What the warden receives next from the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Entry(Syscall),
    /// The exit stop: syscall, `x0`.
    Exit(Syscall, u64),
    /// A policy request for this syscall.
    Request(Syscall),
    /// A `Trap` report for this syscall.
    Trap(Syscall),
}

/// One message from the app: what it is, the thread it came from.
fn classify(received: &sdk::ipc::Received) -> Option<(Next, u64)> {
    use sdk::policy_server::PolicyRequest;
    use sdk::trace::Stop;
    let label = received.message.info.label();
    if label == abi::fault::FAULT_LABEL {
        let [class, number, ..] = received.message.words;
        let trapped = Syscall::from_number(number).filter(|_| class == 0x15)?;
        return Some((Next::Trap(trapped), 0));
    }
    if let Some(request) = PolicyRequest::decode(received, ipc::buffer_word) {
        if request.endpoint_badge != VERDICT_SERVER_BADGE {
            return None;
        }
        return Some((Next::Request(request.syscall?), request.thread));
    }
    let stop = Stop::decode(received)?;
    if stop.badge != VERDICT_TRACER_BADGE {
        return None;
    }
    let syscall = stop.syscall()?;
    let next = match stop.kind {
        abi::trace::StopKind::Entry => Next::Entry(syscall),
        abi::trace::StopKind::Exit => Next::Exit(syscall, stop.regs[0]),
        abi::trace::StopKind::Step => return None,
    };
    Some((next, stop.thread))
}

/// Traces the app, is its policy server and its fault handler, and
/// audits it: each syscall has its entry stop, its exit stop (also when
/// the server answered it) and exactly one record with its verdict.
pub fn verdict_warden() -> i32 {
    use abi::policy::Action;
    use sdk::policy::{FilterBuilder, RuleBuilder};
    use sdk::policy_server::{AnswerMessage, PolicyAnswer};
    use Syscall::{CapCopy, DebugPrint, NBRecv, Null, Poll, Signal, Wait, Yield};
    let mut buffer = [0u8; 512];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Yield).action(Action::errno(ErrorCode::OutOfResources)))
        .rule(RuleBuilder::syscall(Poll).action(Action::Log))
        .rule(RuleBuilder::syscall(DebugPrint).action(Action::Notify))
        .rule(RuleBuilder::syscall(Signal).action(Action::Notify))
        .rule(RuleBuilder::syscall(CapCopy).action(Action::Notify))
        .rule(RuleBuilder::syscall(NBRecv).action(Action::Trap))
        .rule(RuleBuilder::syscall(Wait).action(Action::Kill))
        .encode(&mut buffer)
    else {
        return 1;
    };
    expect!(
        2,
        retype(WARDEN_UNTYPED, CapType::Filter, 0, WARDEN_FILTER.0 .0, 1),
        Ok(())
    );
    expect!(3, WARDEN_FILTER.load(rules), Ok(()));
    expect!(
        4,
        VERDICT_APP.attach_filter(
            WARDEN_FILTER,
            Some(FilterServer {
                endpoint: WARDEN_AS_SERVER,
                thread: WARDEN_TCB,
            })
        ),
        Ok(())
    );
    expect!(5, VERDICT_APP.attach_tracer(WARDEN_AS_TRACER), Ok(()));
    expect!(
        6,
        retype(WARDEN_UNTYPED, CapType::Frame, 0, WARDEN_RING.0 .0, 1),
        Ok(())
    );
    expect!(
        7,
        retype(
            WARDEN_UNTYPED,
            CapType::Notification,
            0,
            WARDEN_RING_SIGNAL.0,
            1
        ),
        Ok(())
    );
    let Ok(mut ring) = WARDEN_RING.map_view(WARDEN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite)
    else {
        return 8;
    };
    expect!(
        9,
        VERDICT_APP.set_audit(
            WARDEN_RING,
            WARDEN_RING_SIGNAL,
            Some(AuditMode::Lossy),
            VERDICT_AUDIT_BADGE
        ),
        Ok(())
    );

    let ok = ErrorCode::Ok.raw();
    let denied = ErrorCode::Denied.raw();
    let resume = sdk::trace::resume(false);
    let allow = PolicyAnswer::Allow.to_message();
    let refuse = PolicyAnswer::Errno(ErrorCode::InvalidArgument).to_message();
    let emulate = PolicyAnswer::Emulate {
        x0: ok,
        x8: EMULATED_X8,
    }
    .to_message();
    let retry = sdk::ipc::Message::new(abi::fault::FAULT_REPLY_RETRY, &[]);
    // What arrives, and the answer to it.
    let script = [
        (Next::Entry(Null), resume),
        (Next::Exit(Null, ok), resume),
        (Next::Entry(Yield), resume),
        (Next::Exit(Yield, ErrorCode::OutOfResources.raw()), resume),
        (Next::Entry(Poll), resume),
        (Next::Exit(Poll, ok), resume),
        (Next::Entry(DebugPrint), resume),
        (Next::Request(DebugPrint), refuse),
        // Refused by the server: still an exit stop.
        (
            Next::Exit(DebugPrint, ErrorCode::InvalidArgument.raw()),
            resume,
        ),
        (Next::Entry(Signal), resume),
        (Next::Request(Signal), emulate),
        // Emulated by the server: still an exit stop.
        (Next::Exit(Signal, ok), resume),
        (Next::Entry(CapCopy), resume),
        (Next::Request(CapCopy), allow),
        (Next::Exit(CapCopy, ok), resume),
        (Next::Entry(NBRecv), resume),
        (Next::Trap(NBRecv), retry),
        (Next::Exit(NBRecv, denied), resume),
        (Next::Entry(Poll), resume),
        (Next::Exit(Poll, ok), resume),
        (Next::Entry(Wait), resume),
    ];
    let mut app_thread = None;
    let mut answer = None;
    for (index, (want, reply)) in script.into_iter().enumerate() {
        let check = 20 + index as i32;
        let received = match answer {
            None => ipc::recv(WARDEN_ENDPOINT),
            Some(answer) => ipc::reply_recv(WARDEN_ENDPOINT, &answer),
        };
        let Ok(received) = received else {
            return check;
        };
        let got = classify(&received);
        if got.map(|(next, _)| next) != Some(want) {
            sdk::println!("check {check} failed: got {got:?}, wanted {want:?}");
            return check;
        }
        if let Some((Next::Entry(_) | Next::Exit(..) | Next::Request(_), thread)) = got {
            expect!(check, *app_thread.get_or_insert(thread), thread);
        }
        answer = Some(reply);
    }
    // Its Wait is killed once it goes on: below it until then.
    let Some(last) = answer else {
        return 49;
    };
    expect!(50, ipc::reply(&last), Ok(()));
    expect!(51, WARDEN_TCB.set_priority(90), Ok(()));
    // The app has been killed (more urgent now, its Wait ran into the
    // Kill rule): its TCB is kept, ended, and refuses a resume, which a
    // live or suspended thread would take.
    expect!(52, VERDICT_APP.resume(), Err(ErrorCode::InvalidArgument));
    // One record per syscall, with its verdict, once it was final.
    let (allowed, logged) = (AuditVerdict::Allowed, AuditVerdict::Logged);
    let refused = |code: ErrorCode| AuditVerdict::Refused(code.raw() as u16);
    let records = [
        (Null, allowed, false, Some(ok)),
        (Yield, refused(ErrorCode::OutOfResources), false, Some(7)),
        (Poll, logged, false, Some(ok)),
        (
            DebugPrint,
            refused(ErrorCode::InvalidArgument),
            true,
            Some(ErrorCode::InvalidArgument.raw()),
        ),
        (Signal, AuditVerdict::Emulated, true, Some(ok)),
        (CapCopy, allowed, true, Some(ok)),
        (NBRecv, AuditVerdict::Trapped, false, Some(denied)),
        (Poll, logged, false, Some(ok)),
        (Wait, AuditVerdict::Killed, false, None),
    ];
    let mut reader = Reader::new();
    for (index, (syscall, verdict, forwarded, result)) in records.into_iter().enumerate() {
        let check = 60 + index as i32;
        let Some(record) = next_record(&mut ring, &mut reader) else {
            sdk::println!("no record of the {}", syscall.name());
            return check;
        };
        let thread = app_thread.map(|t| t as u32);
        let got = (
            record.syscall,
            record.verdict,
            record.forwarded,
            record.result,
            record.thread_badge,
            Some(record.thread),
        );
        let want = (
            syscall.number(),
            verdict,
            forwarded,
            result,
            VERDICT_AUDIT_BADGE,
            thread,
        );
        expect!(check, got, want);
    }
    expect!(70, reader.next(&mut ring), None);
    0
}
