//! Confinement is inherited (issue 13, point 6): a thread made by a
//! filtered, audited, traced thread is filtered, audited and traced as its
//! creator is (the filters with their policy servers, the same ring and
//! badge, the same tracer), and the creator's rights over the new TCB lift
//! none of it: there is no filter detach, audit goes off only with the
//! ring's Frame, the tracer only with its endpoint, and a filter the
//! creator adds can only take more away.
//!
//! The warden (more urgent) confines the parent: a filter (`Yield`
//! refused, `DebugPrint` sent to it), audit into its ring, and itself as
//! tracer, all through one endpoint. The parent makes the child, tries to
//! lift its confinement, and starts it; the warden checks every stop,
//! request and record of the child. Each program returns the number of its
//! first failed check.

use crate::programs::{BootProgram, CONSOLE_SLOT, ENDPOINT_SLOT};
use abi::audit::{AuditMode, AuditRecord, AuditVerdict};
use abi::cap::{CapType, Rights};
use abi::trace::StopKind;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr, Received};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, PolicyAnswer, PolicyRequest};
use sdk::syscall::{cnode, retype};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::trace::Stop;
use sdk::vspace::{Frame, MappedFrame, VSpace};

/// The badges the warden's capabilities to its endpoint carry: as policy
/// server, as tracer; and the badge of the parent's audit records.
pub const SERVER_BADGE: u64 = 0x5e;
/// See [`SERVER_BADGE`].
pub const TRACER_BADGE: u64 = 0x7ace;
const AUDIT_BADGE: u64 = 0xc0;
/// What the warden's `Emulate` makes the child's print return: a code no
/// print returns by itself.
const EMULATED: ErrorCode = ErrorCode::WouldBlock;

/// The parent's slots: its Untyped, its own TCB, an endpoint of its own
/// (not the warden's), and what it makes for the child.
const UNTYPED: u64 = 2;
const PARENT_TCB: Tcb = Tcb(Cptr(3));
const OWN_ENDPOINT: Cptr = Cptr(4);
const CHILD_CNODE: u64 = 8;
const CHILD: Tcb = Tcb(Cptr(9));
const OWN_FRAME: Frame = Frame(Cptr(10));
const OWN_NOTIFICATION: Cptr = Cptr(11);
const PERMISSIVE: FilterCap = FilterCap(Cptr(12));
/// The parent's own VSpace: the child is a thread of its program and
/// space, with its stack and IPC buffer frames (from the Untyped) in the
/// slots from `CHILD_FRAMES`.
const PARENT_VSPACE: VSpace = VSpace(Cptr(5));
const CHILD_FRAMES: u64 = 16;
const CHILD_STACK_PAGES: u64 = 4;
/// The child's priority (the parent's MCP); the parent drops below it.
const CHILD_PRIORITY: u64 = 100;

/// Makes the child, tries every way its rights over the child's TCB
/// offer to lift what the child inherited, and starts it.
pub fn parent() -> i32 {
    expect!(
        1,
        retype(UNTYPED, CapType::CNode, 3, CHILD_CNODE, 1),
        Ok(())
    );
    expect!(2, retype(UNTYPED, CapType::Tcb, 0, CHILD.0 .0, 1), Ok(()));
    expect!(
        3,
        retype(UNTYPED, CapType::Frame, 0, OWN_FRAME.0 .0, 1),
        Ok(())
    );
    expect!(
        4,
        retype(UNTYPED, CapType::Notification, 0, OWN_NOTIFICATION.0, 1),
        Ok(())
    );
    expect!(
        5,
        cnode::mint_into(CHILD_CNODE, CONSOLE_SLOT, CONSOLE_SLOT, Rights::WRITE, None),
        Ok(())
    );
    expect!(
        6,
        CHILD.configure(Cptr(CHILD_CNODE), CHILD_PRIORITY),
        Ok(())
    );
    // The parent's own syscalls doing this are confined as any other of
    // its (the warden lets them through).
    let child = OwnThread {
        tcb: CHILD,
        vspace: PARENT_VSPACE,
        untyped: Cptr(UNTYPED),
        first_slot: CHILD_FRAMES,
        stack_pages: CHILD_STACK_PAGES,
        area: FRAME_MAP_START,
        fault_endpoint: None,
        name: None,
    };
    expect!(
        7,
        bind_to_own_space(&child, BootProgram::ConfinedChild.selector(0)).map(|_| ()),
        Ok(())
    );
    // The child's audit is the warden's ring: neither off (not that
    // ring's Frame) nor another ring.
    expect!(
        10,
        CHILD.set_audit(OWN_FRAME, OWN_NOTIFICATION, None, 0),
        Err(ErrorCode::Denied)
    );
    expect!(
        11,
        CHILD.set_audit(OWN_FRAME, OWN_NOTIFICATION, Some(AuditMode::Lossy), 0xbad),
        Err(ErrorCode::Denied)
    );
    // Its tracer is the warden: not detached through another endpoint,
    // not replaced.
    expect!(
        12,
        CHILD.detach_tracer(OWN_ENDPOINT),
        Err(ErrorCode::Denied)
    );
    expect!(
        13,
        CHILD.attach_tracer(OWN_ENDPOINT),
        Err(ErrorCode::Denied)
    );
    // A filter that allows everything, naming the parent's own endpoint
    // as server: it takes nothing away, and re-routes nothing.
    let mut buffer = [0u8; 64];
    let Ok(rules) = FilterBuilder::new(Action::Allow).encode(&mut buffer) else {
        return 14;
    };
    expect!(
        15,
        retype(UNTYPED, CapType::Filter, 0, PERMISSIVE.0 .0, 1),
        Ok(())
    );
    expect!(16, PERMISSIVE.load(rules), Ok(()));
    let own = FilterServer {
        endpoint: OWN_ENDPOINT,
        thread: PARENT_TCB,
    };
    expect!(17, CHILD.attach_filter(PERMISSIVE, Some(own)), Ok(()));
    // Below the child from now on: it runs to its end first.
    expect!(18, PARENT_TCB.set_priority(CHILD_PRIORITY - 10), Ok(()));
    expect!(19, CHILD.resume(), Ok(()));
    // It has ended (its TCB kept): a resume does not run it again.
    expect!(20, CHILD.resume(), Err(ErrorCode::InvalidArgument));
    0
}

/// The child: each result is what its inherited filter, and the server
/// that came with it, decide.
pub fn child() -> i32 {
    expect!(1, sdk::syscall::yield_now(), Err(ErrorCode::OutOfResources));
    expect!(2, sdk::syscall::debug_print(b"child\n"), Err(EMULATED));
    expect!(3, sdk::syscall::null(), Ok(()));
    0
}

/// The warden's slots.
const REQUESTS: Cptr = Cptr(ENDPOINT_SLOT);
const AS_SERVER: Cptr = Cptr(3);
const AS_TRACER: Cptr = Cptr(4);
const PARENT: Tcb = Tcb(Cptr(5));
const WARDEN_UNTYPED: u64 = 6;
const OWN_VSPACE: VSpace = VSpace(Cptr(7));
const FILTER: FilterCap = FilterCap(Cptr(10));
const RING: Frame = Frame(Cptr(11));
const RING_SIGNAL: Cptr = Cptr(12);
/// The warden's own TCB (read): it answers the parent's filter.
const WARDEN_OWN_TCB: Tcb = Tcb(Cptr(13));

/// One message the warden gets from the child, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Entry(Syscall),
    Exit(Syscall, u64),
    Request(Syscall),
}

/// The child's messages, and the records its syscalls leave.
const CHILD_MESSAGES: [Seen; 8] = [
    Seen::Entry(Syscall::Yield),
    Seen::Exit(Syscall::Yield, ErrorCode::OutOfResources as u64),
    Seen::Entry(Syscall::DebugPrint),
    Seen::Request(Syscall::DebugPrint),
    Seen::Exit(Syscall::DebugPrint, EMULATED as u64),
    Seen::Entry(Syscall::Null),
    Seen::Exit(Syscall::Null, 0),
    Seen::Entry(Syscall::Exit),
];

/// A message to the warden: a stop or a policy request, and its thread.
fn seen(received: &Received) -> Option<(Seen, u64)> {
    if let Some(request) = PolicyRequest::decode(received, ipc::buffer_word) {
        return (request.endpoint_badge == SERVER_BADGE)
            .then_some((Seen::Request(request.syscall?), request.thread));
    }
    let stop = Stop::decode(received).filter(|stop| stop.badge == TRACER_BADGE)?;
    let syscall = stop.syscall()?;
    let seen = match stop.kind {
        StopKind::Entry => Seen::Entry(syscall),
        StopKind::Exit => Seen::Exit(syscall, stop.regs[0]),
        StopKind::Step => return None,
    };
    Some((seen, stop.thread))
}

/// The child's records, as the warden takes them out of the ring.
struct ChildRecords {
    records: [Option<AuditRecord>; 8],
    len: usize,
}

impl ChildRecords {
    fn push(&mut self, record: AuditRecord) -> Result<(), i32> {
        let slot = self.records.get_mut(self.len).ok_or(92)?;
        *slot = Some(record);
        self.len += 1;
        Ok(())
    }

    fn iter(&self) -> impl Iterator<Item = &AuditRecord> {
        self.records[..self.len].iter().flatten()
    }
}

/// Takes every record out of the ring: the child's (any thread but the
/// parent's) go into `child`, the others are only checked. Every one must
/// carry the parent's badge and follow the last without a gap.
fn drain(
    ring: &mut MappedFrame,
    reader: &mut Reader,
    parent: Option<u64>,
    child: &mut ChildRecords,
) -> Result<(), i32> {
    while let Some(entry) = reader.next(ring) {
        let Entry::Record { record, gap: 0 } = entry else {
            sdk::println!("[audit] a gap or a garbled record: {entry:?}");
            return Err(90);
        };
        if record.thread_badge != AUDIT_BADGE {
            sdk::println!("[audit] not the inherited badge: {}", Line(&record));
            return Err(91);
        }
        if Some(u64::from(record.thread)) != parent {
            sdk::println!("[audit] child: {}", Line(&record));
            child.push(record)?;
        }
    }
    Ok(())
}

/// Confines the parent, then answers every stop and request of the
/// parent (continue, allow) and the child (checked), and checks the
/// child's records.
pub fn warden() -> i32 {
    let mut buffer = [0u8; 256];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::errno(ErrorCode::OutOfResources)))
        .rule(RuleBuilder::syscall(Syscall::DebugPrint).action(Action::Notify))
        .encode(&mut buffer)
    else {
        return 1;
    };
    expect!(
        2,
        retype(WARDEN_UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1),
        Ok(())
    );
    expect!(3, FILTER.load(rules), Ok(()));
    let server = FilterServer {
        endpoint: AS_SERVER,
        thread: WARDEN_OWN_TCB,
    };
    expect!(4, PARENT.attach_filter(FILTER, Some(server)), Ok(()));
    expect!(
        5,
        retype(WARDEN_UNTYPED, CapType::Frame, 0, RING.0 .0, 1),
        Ok(())
    );
    expect!(
        6,
        retype(WARDEN_UNTYPED, CapType::Notification, 0, RING_SIGNAL.0, 1),
        Ok(())
    );
    let Ok(mut ring) = RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite) else {
        return 7;
    };
    expect!(
        8,
        PARENT.set_audit(RING, RING_SIGNAL, Some(AuditMode::Lossy), AUDIT_BADGE),
        Ok(())
    );
    expect!(9, PARENT.attach_tracer(AS_TRACER), Ok(()));

    let resume = sdk::trace::resume(false);
    let mut reader = Reader::new();
    let mut records = ChildRecords {
        records: [None; 8],
        len: 0,
    };
    let (mut parent, mut child) = (None, None);
    let mut step = 0;
    let mut answer = None;
    loop {
        let received = match answer {
            None => ipc::recv(REQUESTS),
            Some(answer) => ipc::reply_recv(REQUESTS, &answer),
        };
        let Ok(received) = received else {
            return 20;
        };
        if let Err(check) = drain(&mut ring, &mut reader, parent, &mut records) {
            return check;
        }
        let Some((what, thread)) = seen(&received) else {
            sdk::println!("not a stop or request of the confined threads");
            return 21;
        };
        if *parent.get_or_insert(thread) == thread {
            match what {
                // The parent's last call: the child has ended before.
                Seen::Entry(Syscall::Exit) => break,
                Seen::Request(_) => answer = Some(PolicyAnswer::Allow.to_message()),
                _ => answer = Some(resume),
            }
            continue;
        }
        // Any other thread is the child: one thread, in this order.
        expect!(22, *child.get_or_insert(thread), thread);
        let Some(&want) = CHILD_MESSAGES.get(step) else {
            return 23;
        };
        if what != want {
            sdk::println!("check 24 failed: the child's {what:?}, wanted {want:?}");
            return 24;
        }
        if what == Seen::Entry(Syscall::Exit) {
            // Its status: every check of its own passed.
            let stop = Stop::decode(&received).map(|stop| stop.regs[2]);
            expect!(25, stop, Some(0));
        }
        step += 1;
        answer = Some(match what {
            Seen::Request(_) => PolicyAnswer::Emulate {
                x0: EMULATED.raw(),
                x8: 0,
            }
            .to_message(),
            _ => resume,
        });
    }
    expect!(30, step, CHILD_MESSAGES.len());
    expect!(31, ipc::reply(&resume), Ok(()));
    let child = child.map(|thread| thread as u32);
    let want = [
        (
            Syscall::Yield,
            AuditVerdict::Refused(ErrorCode::OutOfResources as u16),
            false,
            Some(ErrorCode::OutOfResources as u64),
        ),
        (
            Syscall::DebugPrint,
            AuditVerdict::Emulated,
            true,
            Some(EMULATED as u64),
        ),
        (Syscall::Null, AuditVerdict::Allowed, false, Some(0)),
        (Syscall::Exit, AuditVerdict::Allowed, false, None),
    ];
    expect!(32, records.len, want.len());
    for (index, (record, (syscall, verdict, forwarded, result))) in
        records.iter().zip(want).enumerate()
    {
        expect!(
            40 + index as i32,
            (
                record.syscall,
                record.verdict,
                record.forwarded,
                record.result,
                Some(record.thread)
            ),
            (syscall.number(), verdict, forwarded, result, child)
        );
    }
    0
}
