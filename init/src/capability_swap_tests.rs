//! The capability a stopped call's `x0` names is part of what was judged
//! (`docs/stopped_calls.md`): a policy server that allows a `Signal` has
//! seen the capability in its slot (its type and badge), and the waiver
//! its allow leaves must not carry over to whatever a sibling sharing the
//! CSpace puts in that slot before the call goes on. A call whose slot
//! holds anything else when it goes on is cancelled (`Interrupted`,
//! recorded `Cancelled`), whether the slot changed while the server was
//! deciding or after its allow, and even if what it holds is an equal
//! capability to a new object made in the judged one's memory (the judged
//! notification deleted and a new one retyped from the same Untyped into
//! the same slot); a change to another slot cancels nothing.
//!
//! Three threads: the sibling (priority 105), which makes the victim
//! (100) sharing its CNode, confines it (a filter sending every `Signal`
//! to the warden; audit into a ring it reads) and changes the shared
//! CNode each time the warden hands it the CPU; the warden (110), the
//! victim's policy server, which receives each request, hands the CPU to
//! the sibling (through `GO`, back through `BACK`) before or after its
//! allow, and allows; the victim, which signals the slot `JUDGED` with
//! `x2` = the step and reports each result to the sibling. Each program
//! returns the number of its first failed check.

use crate::programs::{BootProgram, CNODE_SLOT};
use abi::audit::{AuditMode, AuditVerdict};
use abi::cap::{CapType, Rights};
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, PolicyAnswer, PolicyRequest};
use sdk::syscall::{cnode, raw_syscall_registers, retype};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::{Frame, MappedFrame, VSpace};

/// The badge of the sibling's capability to the warden's endpoint, which
/// the victim's filter names as its server.
pub const SERVER_BADGE: u64 = 0x5e;
/// The badge of the victim's (and the sibling's) capability to the
/// sibling's report endpoint.
pub const REPORT_BADGE: u64 = 0xa5;
/// The badge of the notification capability the victim's calls are
/// judged on (the other notification's, which the sibling moves into its
/// slot, is 0xb2).
pub const JUDGED_BADGE: u64 = 0xa1;
/// The badge of the victim's audit records.
const AUDIT_BADGE: u64 = 0xc5;
/// The label of the victim's reports: `[step, x0 after the Signal]`.
const REPORT: u64 = 0x5a9;

/// The shared CNode (the sibling's, and the victim's CSpace): slots 0..=12
/// are the case's grants, the rest is what the sibling makes and moves.
const CNODE: u64 = CNODE_SLOT;
const UNTYPED: u64 = 2;
const OWN_VSPACE: VSpace = VSpace(Cptr(3));
const OWN_TCB: Tcb = Tcb(Cptr(4));
/// Its capability to the warden's endpoint (badge `SERVER_BADGE`).
const SERVER_CAP: Cptr = Cptr(5);
/// The report endpoint: the sibling receives, the victim sends.
const REPORTS: Cptr = Cptr(6);
const TO_SIBLING: Cptr = Cptr(7);
/// The hand-over notifications: the warden signals `GO`, the sibling
/// `BACK`.
const GO: Cptr = Cptr(8);
const BACK: Cptr = Cptr(9);
/// The two notifications' capabilities (read-write, badged; back in
/// these slots after each step): what arrived at each is polled through
/// them.
const JUDGED_HOME: u64 = 10;
const OTHER_HOME: u64 = 11;
/// An unbadged capability to the judged notification, to mint others from.
const JUDGED_UNBADGED: u64 = 12;
/// The slot the victim's `Signal` names: a copy of `JUDGED_HOME`'s
/// capability when each step starts.
const JUDGED: u64 = 13;
/// Where the sibling moves the judged capability out to, where it puts a
/// copy of it, and where it moves the other capability to in the control
/// step.
const PARKED: u64 = 14;
const KEEP: u64 = 15;
const SPARE: u64 = 16;
const VICTIM: Tcb = Tcb(Cptr(17));
const FILTER: FilterCap = FilterCap(Cptr(18));
const RING: Frame = Frame(Cptr(19));
const RING_SIGNAL: Cptr = Cptr(20);
/// The badge of the judged notification's other capability (step 2).
const REBADGED: u64 = 0xa3;
/// A one-page Untyped whose only child is the notification the last step
/// is judged on: deleting that notification's one capability empties it,
/// and the next notification retyped from it is made in the same memory
/// (same object id; an unbadged original with every right, as before).
const SMALL: u64 = 21;
/// The victim's stack and IPC buffer frames (`OwnThread::slots` of them).
const VICTIM_FRAMES: u64 = 22;
/// The warden's TCB (read): the thread that answers the victim's filter.
const WARDEN_TCB: Tcb = Tcb(Cptr(30));

/// The victim's priority: below the sibling (105, its MCP) and the warden.
const VICTIM_PRIORITY: u64 = 100;

/// One change of the shared CNode.
#[derive(Clone, Copy, Debug)]
enum Change {
    Move(u64, u64),
    Copy(u64, u64),
    /// A read-write copy with this badge.
    Mint(u64, u64, u64),
    Delete(u64),
    /// A new notification from the Untyped in the first slot into the
    /// second.
    Retype(u64, u64),
}

impl Change {
    fn apply(self) -> Result<(), ErrorCode> {
        match self {
            Change::Move(from, to) => cnode::move_cap(CNODE, from, to),
            Change::Copy(from, to) => cnode::copy(CNODE, from, to),
            Change::Mint(from, to, badge) => {
                cnode::mint(CNODE, from, to, Rights::READ_WRITE, Some(badge))
            }
            Change::Delete(slot) => cnode::delete(CNODE, slot),
            Change::Retype(untyped, to) => retype(untyped, CapType::Notification, 0, to, 1),
        }
    }
}

/// One of the victim's `Signal`s: when the warden hands the CPU over,
/// what the sibling changes then, how the call must end, what each
/// notification must hold after it, and how the sibling puts the CNode
/// back as it was.
struct Step {
    /// The warden allows before it hands the CPU over (the call is
    /// answered, about to go on), not after (it waits for its server).
    allowed_first: bool,
    /// The badge of the capability the call is judged on (what the
    /// warden's request says).
    badge: u64,
    changes: &'static [Change],
    result: ErrorCode,
    /// The words `JUDGED_HOME`'s and `OTHER_HOME`'s notifications hold
    /// once the CNode is put back.
    words: (u64, u64),
    /// What the notification in `JUDGED` holds once the call has gone on,
    /// polled before the CNode is put back (only for the last step, where
    /// it is neither of the two).
    judged_word: Option<u64>,
    restore: &'static [Change],
}

const STEPS: [Step; 6] = [
    // 1: waiting for its server, the judged capability is moved out and
    // the other notification's moved in: nothing is delivered through
    // either.
    Step {
        allowed_first: false,
        badge: JUDGED_BADGE,
        changes: &[
            Change::Move(JUDGED, PARKED),
            Change::Move(OTHER_HOME, JUDGED),
        ],
        result: ErrorCode::Interrupted,
        words: (0, 0),
        judged_word: None,
        restore: &[
            Change::Move(JUDGED, OTHER_HOME),
            Change::Move(PARKED, JUDGED),
        ],
    },
    // 2: the same notification under another badge (a rule or a server
    // may tell badges apart): nothing is delivered.
    Step {
        allowed_first: false,
        badge: JUDGED_BADGE,
        changes: &[
            Change::Move(JUDGED, PARKED),
            Change::Mint(JUDGED_UNBADGED, JUDGED, REBADGED),
        ],
        result: ErrorCode::Interrupted,
        words: (0, 0),
        judged_word: None,
        restore: &[Change::Delete(JUDGED), Change::Move(PARKED, JUDGED)],
    },
    // 3: waiting for its server, the judged capability is deleted: the
    // slot is empty when the call goes on (not InvalidCapability: it
    // does not run).
    Step {
        allowed_first: false,
        badge: JUDGED_BADGE,
        changes: &[Change::Delete(JUDGED)],
        result: ErrorCode::Interrupted,
        words: (0, 0),
        judged_word: None,
        restore: &[Change::Copy(JUDGED_HOME, JUDGED)],
    },
    // 4: allowed, then moved away before it ran.
    Step {
        allowed_first: true,
        badge: JUDGED_BADGE,
        changes: &[Change::Move(JUDGED, PARKED)],
        result: ErrorCode::Interrupted,
        words: (0, 0),
        judged_word: None,
        restore: &[Change::Move(PARKED, JUDGED)],
    },
    // 5: the control: other slots change (the other capability moves, a
    // copy of the judged one is made elsewhere), the judged slot does
    // not; the call runs as allowed and signals the judged notification.
    Step {
        allowed_first: false,
        badge: JUDGED_BADGE,
        changes: &[Change::Move(OTHER_HOME, SPARE), Change::Copy(JUDGED, KEEP)],
        result: ErrorCode::Ok,
        words: (JUDGED_BADGE, 0),
        judged_word: None,
        // The last step is judged on a notification made from `SMALL`.
        restore: &[
            Change::Delete(KEEP),
            Change::Move(SPARE, OTHER_HOME),
            Change::Delete(JUDGED),
            Change::Retype(SMALL, JUDGED),
        ],
    },
    // 6: waiting for its server, the judged notification is destroyed
    // (its one capability deleted) and a new one retyped from the same
    // Untyped into the slot: the same object id, type, rights and badge,
    // another object. Nothing is delivered through the new one.
    Step {
        allowed_first: false,
        badge: 0,
        changes: &[Change::Delete(JUDGED), Change::Retype(SMALL, JUDGED)],
        result: ErrorCode::Interrupted,
        words: (0, 0),
        judged_word: Some(0),
        restore: &[Change::Delete(JUDGED)],
    },
];

/// The victim: one `Signal` of `JUDGED` per step (`x2` = the step, which
/// `Signal` ignores and the warden checks), each result reported to the
/// sibling, which has put the CNode back before the next.
pub fn victim() -> i32 {
    for step in 1..=STEPS.len() as u64 {
        let x = raw_syscall_registers(Syscall::Signal.number(), [JUDGED, 0, step, 0, 0, 0, 0, 0]);
        if ipc::send(TO_SIBLING, &Message::new(REPORT, &[step, x[0]])).is_err() {
            return step as i32;
        }
    }
    0
}

/// Makes the victim in its own CNode, confined: its `Signal`s go to the
/// warden, its calls are recorded in a ring this thread maps.
fn make_victim() -> Result<MappedFrame, i32> {
    let fail = |check: i32| {
        move |error: ErrorCode| {
            sdk::println!("check {check} failed: {error:?}");
            check
        }
    };
    cnode::copy(CNODE, JUDGED_HOME, JUDGED).map_err(fail(1))?;
    retype(UNTYPED, CapType::Tcb, 0, VICTIM.0 .0, 1).map_err(fail(2))?;
    VICTIM
        .configure(Cptr(CNODE), VICTIM_PRIORITY)
        .map_err(fail(3))?;
    // A thread of this program in this space: its stack and buffer from
    // the Untyped, in the frame window above the ring's page.
    let victim = OwnThread {
        tcb: VICTIM,
        vspace: OWN_VSPACE,
        untyped: Cptr(UNTYPED),
        first_slot: VICTIM_FRAMES,
        stack_pages: 2,
        area: FRAME_MAP_START + 0x10_0000,
        fault_endpoint: None,
        name: None,
    };
    bind_to_own_space(&victim, BootProgram::SwapVictim.selector(0)).map_err(fail(12))?;
    let mut buffer = [0u8; 64];
    let rules = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::Notify))
        .encode(&mut buffer)
        .map_err(|_| 4)?;
    retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1).map_err(fail(5))?;
    FILTER.load(rules).map_err(fail(6))?;
    let server = FilterServer {
        endpoint: SERVER_CAP,
        thread: WARDEN_TCB,
    };
    VICTIM
        .attach_filter(FILTER, Some(server))
        .map_err(fail(7))?;
    retype(UNTYPED, CapType::Frame, 0, RING.0 .0, 1).map_err(fail(8))?;
    retype(UNTYPED, CapType::Notification, 0, RING_SIGNAL.0, 1).map_err(fail(9))?;
    retype(UNTYPED, CapType::Untyped, 12, SMALL, 1).map_err(fail(13))?;
    let ring = RING
        .map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite)
        .map_err(|_| 10)?;
    VICTIM
        .set_audit(RING, RING_SIGNAL, Some(AuditMode::Lossy), AUDIT_BADGE)
        .map_err(fail(11))?;
    Ok(ring)
}

/// Applies `changes` in order; the first that fails is `check + its
/// index`.
fn apply(changes: &[Change], check: i32) -> Result<(), i32> {
    for (index, &change) in changes.iter().enumerate() {
        if let Err(error) = change.apply() {
            sdk::println!("check {}: {change:?} gave {error:?}", check + index as i32);
            return Err(check + index as i32);
        }
    }
    Ok(())
}

/// Makes and confines the victim, changes the shared CNode each time the
/// warden hands it the CPU, checks each of the victim's results and what
/// reached each notification, then the victim's audit records.
pub fn sibling() -> i32 {
    let mut ring = match make_victim() {
        Ok(ring) => ring,
        Err(check) => return check,
    };
    expect!(12, VICTIM.resume(), Ok(()));
    for (index, step) in STEPS.iter().enumerate() {
        let number = index as u64 + 1;
        let check = 100 * number as i32;
        // The warden has the victim's request (and has allowed it, or not).
        expect!(check, ipc::wait(GO).map(|word| word != 0), Ok(true));
        if let Err(check) = apply(step.changes, check + 1) {
            return check;
        }
        expect!(check + 10, ipc::signal(BACK), Ok(()));
        // The victim's call has gone on (or not) once it reports.
        let Ok(report) = ipc::recv(REPORTS) else {
            return check + 11;
        };
        expect!(
            check + 12,
            (
                report.message.info.label(),
                report.badge,
                report.message.words[0]
            ),
            (REPORT, REPORT_BADGE, number)
        );
        if let Some(word) = step.judged_word {
            expect!(check + 19, ipc::poll(Cptr(JUDGED)), Ok(word));
        }
        if let Err(check) = apply(step.restore, check + 13) {
            return check;
        }
        // How the call ended, and what reached each notification: only
        // what the call as judged delivers, or nothing.
        expect!(
            check + 18,
            (
                ErrorCode::from_raw(report.message.words[1]),
                ipc::poll(Cptr(JUDGED_HOME)),
                ipc::poll(Cptr(OTHER_HOME))
            ),
            (Some(step.result), Ok(step.words.0), Ok(step.words.1))
        );
    }
    // One record per call: each Signal with the arguments it was judged
    // with, cancelled where the slot had changed; each report.
    let mut reader = Reader::new();
    for (index, step) in STEPS.iter().enumerate() {
        let check = 600 + 10 * index as i32;
        let Some(Entry::Record { record, gap: 0 }) = reader.next(&mut ring) else {
            sdk::println!("the record of Signal {} is missing", index + 1);
            return check;
        };
        sdk::println!("[audit] {}", Line(&record));
        let verdict = if step.result == ErrorCode::Interrupted {
            AuditVerdict::Cancelled
        } else {
            AuditVerdict::Allowed
        };
        expect!(
            check + 1,
            (
                record.syscall,
                record.args[0],
                record.args[2],
                record.thread_badge
            ),
            (
                Syscall::Signal.number(),
                JUDGED,
                index as u64 + 1,
                AUDIT_BADGE
            )
        );
        // The server had answered each of them.
        expect!(
            check + 2,
            (record.verdict, record.forwarded, record.result),
            (verdict, true, Some(step.result.raw()))
        );
        let Some(Entry::Record { record, gap: 0 }) = reader.next(&mut ring) else {
            sdk::println!("the record of report {} is missing", index + 1);
            return check + 3;
        };
        expect!(
            check + 4,
            (
                record.syscall,
                record.verdict,
                record.result,
                record.args[2]
            ),
            (
                Syscall::Send.number(),
                AuditVerdict::Allowed,
                Some(ErrorCode::Ok.raw()),
                index as u64 + 1
            )
        );
    }
    expect!(700, reader.next(&mut ring), None);
    // Below the victim: it exits (status 0: every report went through),
    // and its TCB then names the ended thread, which a resume does not run.
    expect!(701, OWN_TCB.set_priority(VICTIM_PRIORITY - 10), Ok(()));
    expect!(702, VICTIM.resume(), Err(ErrorCode::InvalidArgument));
    let Some(Entry::Record { record, gap: 0 }) = reader.next(&mut ring) else {
        return 703;
    };
    expect!(
        704,
        (record.syscall, record.args[2], record.result),
        (Syscall::Exit.number(), 0, None)
    );
    0
}

/// The warden's slots: its endpoint (receive), the hand-over
/// notifications.
const REQUESTS: Cptr = Cptr(2);
const HAND_OVER: Cptr = Cptr(3);
const HANDED_BACK: Cptr = Cptr(4);

/// Hands the CPU to the sibling for one step's changes and waits for it.
fn hand_over() -> Result<(), ErrorCode> {
    ipc::signal(HAND_OVER)?;
    ipc::wait(HANDED_BACK).map(|_| ())
}

/// The victim's policy server: each request is a `Signal` of `JUDGED`
/// holding the judged notification; the sibling changes the CNode before
/// or after the allow. The allow always finds its caller: the slot is
/// looked at when the call goes on.
pub fn warden() -> i32 {
    let allow = PolicyAnswer::Allow.to_message();
    for (index, step) in STEPS.iter().enumerate() {
        let number = index as u64 + 1;
        let check = 10 * number as i32;
        let received = ipc::recv(REQUESTS);
        let Some(request) = received
            .ok()
            .and_then(|r| PolicyRequest::decode(&r, ipc::buffer_word))
        else {
            return check;
        };
        expect!(
            check + 1,
            (
                request.syscall,
                request.endpoint_badge,
                request.args[0],
                request.args[2]
            ),
            (Some(Syscall::Signal), SERVER_BADGE, JUDGED, number)
        );
        // What this server judges: the judged notification's capability.
        expect!(
            check + 2,
            (request.object_type, request.badge),
            (Some(CapType::Notification), step.badge)
        );
        if step.allowed_first {
            expect!(check + 3, ipc::reply(&allow), Ok(()));
            expect!(check + 4, hand_over(), Ok(()));
        } else {
            expect!(check + 5, hand_over(), Ok(()));
            expect!(check + 6, ipc::reply(&allow), Ok(()));
        }
    }
    0
}
