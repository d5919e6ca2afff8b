//! Long kernel operations are preemptible (issue 13, point 7): a `Retype`
//! that zeroes 16 MiB (62 VSpaces of 65 pages) stops at a preemption point
//! when an interrupt is pending, a more urgent thread woken by it runs,
//! and the call goes on later from where it stopped. It is judged (one
//! policy request), traced (one entry and one exit stop) and audited (one
//! record) once, however often it stopped; a register write while it is
//! stopped cancels it like any stopped call, and nothing is made.
//!
//! The preemptor (more urgent) is the retyper's tracer, policy server and
//! auditor, and holds the physical timer's IrqHandler, bound through a
//! notification to its own TCB: the timer it arms when it allows a
//! `Retype` ends its receive while the zeroing runs. Each program returns
//! the number of its first failed check.

use crate::programs::CNODE_SLOT;
use abi::audit::{AuditMode, AuditVerdict};
use abi::cap::CapType;
use abi::message::NOTIFICATION_LABEL;
use abi::tcb::Register;
use abi::trace::StopKind;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, PolicyAnswer, PolicyRequest};
use sdk::syscall::{cnode, irq_ack, irq_set_notification, irq_set_timer, retype};
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::trace::Stop;
use sdk::vspace::{Frame, VSpace};

/// The retyper's Untyped (4096 pages), and what it makes: `COUNT`
/// VSpaces of `TABLES` table pages (65 pages each with the root) into
/// slots `TARGET..`.
const UNTYPED: u64 = 2;
const TABLES: u64 = 64;
const COUNT: u64 = 62;
const TARGET: u64 = 64;
const SPARE: u64 = 127;
/// What the tracer's skip makes the retyper's `Null` return.
const SKIPPED: u64 = 0x5c1d;
/// What the preemptor writes into the retyper's `x9` while its second
/// `Retype` is stopped (nothing is cancelled).
const X9_WRITTEN: u64 = 0x9999;

fn retype_spaces() -> Result<(), ErrorCode> {
    retype(UNTYPED, CapType::VSpace, TABLES, TARGET, COUNT)
}

/// Retypes 16 MiB of VSpaces twice: the first is cancelled while it is
/// stopped, the second goes through its stops to the end.
pub fn retyper() -> i32 {
    expect!(1, retype_spaces(), Err(ErrorCode::Interrupted));
    // Skipped by the tracer: it returns what the tracer says (and leaves
    // no audit record, as no skipped call does).
    let x = sdk::syscall::raw_syscall_registers(Syscall::Null.number(), [0; 8]);
    expect!(2, x[0], SKIPPED);
    // Nothing was made.
    expect!(
        3,
        cnode::copy(CNODE_SLOT, TARGET, SPARE),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(4, retype_spaces(), Ok(()));
    // All of them were made, into the slots named.
    expect!(
        5,
        retype(UNTYPED, CapType::VSpace, TABLES, TARGET + COUNT - 1, 1),
        Err(ErrorCode::SlotOccupied)
    );
    0
}

/// The notification the yield retyper signals when it is done, and the
/// one the yielder signals after each yield.
const DONE: Cptr = Cptr(3);
const YIELDED: Cptr = Cptr(4);
/// Most rounds of `retype_spaces` the yield retyper makes (16 MiB zeroed
/// each) before it gives up on seeing the yielder run during two.
const MOST_ROUNDS: u32 = 200;

/// `retype_spaces` with no entry work (no tracer, filter or audit), in
/// rounds, while `retype_yielder` of its priority yields: a tick during
/// the zeroing stops the call at a preemption point and the round robin
/// queues the thread with its call kept; the yielder's next yield
/// switches back to it. A yield that returned it to EL0 as it is (the
/// yield fast path, `yield_fast_path.s`, refuses a thread with a stopped
/// call) would leave the call unfinished: `x0` still the Untyped's slot
/// as its result, nothing or part made. Each round checks that all were
/// made and revokes them; it goes on until the yielder has run during
/// two rounds (the zeroing is most of a round).
pub fn yield_retyper() -> i32 {
    let mut rounds_with_yields = 0;
    for _ in 0..MOST_ROUNDS {
        expect!(1, retype_spaces(), Ok(()));
        expect!(
            2,
            retype(UNTYPED, CapType::VSpace, TABLES, TARGET + COUNT - 1, 1),
            Err(ErrorCode::SlotOccupied)
        );
        expect!(3, cnode::revoke(CNODE_SLOT, UNTYPED), Ok(()));
        match ipc::poll(YIELDED) {
            Ok(0) => {}
            Ok(_) => rounds_with_yields += 1,
            Err(_) => return 4,
        }
        if rounds_with_yields == 2 {
            break;
        }
    }
    expect!(5, rounds_with_yields, 2);
    expect!(6, ipc::signal(DONE), Ok(()));
    0
}

/// Yields until the retyper is done, saying so after each yield. It runs
/// only while the retyper is preempted (or before it starts).
pub fn retype_yielder() -> i32 {
    loop {
        match ipc::poll(DONE) {
            Ok(0) => {}
            Ok(_) => return 0,
            Err(_) => return 1,
        }
        if sdk::syscall::yield_now().is_err() {
            return 2;
        }
        if ipc::signal(YIELDED).is_err() {
            return 3;
        }
    }
}

/// The preemptor's slots.
const HANDLER: u64 = 2;
const TIMER: Cptr = Cptr(3);
const STOPS: Cptr = Cptr(4);
const AS_TRACER: Cptr = Cptr(5);
const AS_SERVER: Cptr = Cptr(6);
const RETYPER: Tcb = Tcb(Cptr(7));
const OWN_TCB: Tcb = Tcb(Cptr(8));
const OWN_UNTYPED: u64 = 9;
const OWN_VSPACE: VSpace = VSpace(Cptr(10));
const FILTER: FilterCap = FilterCap(Cptr(16));
const RING: Frame = Frame(Cptr(17));
const RING_SIGNAL: Cptr = Cptr(18);
/// The badges of the stops and requests, and of the records.
pub const TRACER_BADGE: u64 = 0x7ace;
/// See [`TRACER_BADGE`].
pub const SERVER_BADGE: u64 = 0x5e;
const AUDIT_BADGE: u64 = 0x7e7;
/// Timer interrupts the preemptor takes during the second `Retype`.
const SECOND_WAKES: usize = 3;

/// What the preemptor counted for one `Retype`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    entries: u32,
    requests: u32,
    wakes: u32,
    exits: u32,
}

/// Sets itself up as the retyper's tracer, policy server (`Notify` for
/// `Retype`) and auditor; arms the timer whenever it allows a `Retype`,
/// and at each interrupt checks the retyper is still inside it; cancels
/// the first, lets the second go on; then checks the counts and records.
pub fn preemptor() -> i32 {
    let mut buffer = [0u8; 128];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Retype).action(Action::Notify))
        .encode(&mut buffer)
    else {
        return 1;
    };
    expect!(
        2,
        retype(OWN_UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1),
        Ok(())
    );
    expect!(3, FILTER.load(rules), Ok(()));
    let server = FilterServer {
        endpoint: AS_SERVER,
        thread: OWN_TCB,
    };
    expect!(4, RETYPER.attach_filter(FILTER, Some(server)), Ok(()));
    expect!(
        5,
        retype(OWN_UNTYPED, CapType::Frame, 0, RING.0 .0, 1),
        Ok(())
    );
    expect!(
        6,
        retype(OWN_UNTYPED, CapType::Notification, 0, RING_SIGNAL.0, 1),
        Ok(())
    );
    let Ok(mut ring) = RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite) else {
        return 7;
    };
    expect!(
        8,
        RETYPER.set_audit(RING, RING_SIGNAL, Some(AuditMode::Lossy), AUDIT_BADGE),
        Ok(())
    );
    expect!(9, RETYPER.attach_tracer(AS_TRACER), Ok(()));
    expect!(10, OWN_TCB.bind_notification(Some(TIMER)), Ok(()));
    expect!(11, irq_set_notification(HANDLER, TIMER.0), Ok(()));

    // A quarter of a millisecond: well inside the zeroing (16 MiB take 5
    // to 45 ms under QEMU), so the interrupt comes while it runs.
    let (_, frequency) = sdk::probe::counter();
    let delay = frequency / 4000;
    let retype_number = Syscall::Retype.number();
    // Per `Retype` (the third is refused before any zeroing).
    let mut counts = [Counts::default(); 3];
    let mut round = 0;
    let mut inside = false;
    let mut started = 0;
    let mut answer = None;
    loop {
        let received = match answer.take() {
            None => ipc::recv(STOPS),
            Some(answer) => ipc::reply_recv(STOPS, &answer),
        };
        let Ok(received) = received else {
            return 20;
        };
        if received.message.info.label() == NOTIFICATION_LABEL {
            // The timer, while the Retype it allowed is still inside the
            // kernel: x0 is its Untyped, not a result.
            expect!(21, inside, true);
            let count = &mut counts[round - 1];
            let x0 = RETYPER.read_register(Register::X(0));
            if round == 2 && count.wakes >= 1 && x0 == Ok(ErrorCode::Ok.raw()) {
                // The timer re-armed after a wake fired once the zeroing
                // had ended, before its exit stop reached this thread
                // (the bound notification comes first): the call is
                // done, not preempted.
                expect!(29, irq_set_timer(HANDLER, 0), Ok(()));
                expect!(38, irq_ack(HANDLER), Ok(()));
                continue;
            }
            count.wakes += 1;
            expect!(22, x0, Ok(UNTYPED));
            expect!(23, RETYPER.read_register(Register::X(8)), Ok(retype_number));
            expect!(24, irq_set_timer(HANDLER, 0), Ok(()));
            expect!(25, irq_ack(HANDLER), Ok(()));
            if round == 1 {
                // Its count, while it is stopped: cancelled.
                expect!(26, RETYPER.write_register(Register::X(5), 1), Ok(true));
            } else {
                // Not one of the call's registers: it goes on.
                expect!(
                    27,
                    RETYPER.write_register(Register::X(9), X9_WRITTEN),
                    Ok(false)
                );
                if count.wakes < SECOND_WAKES as u32 {
                    expect!(28, irq_set_timer(HANDLER, delay), Ok(()));
                }
            }
            continue;
        }
        if let Some(request) = PolicyRequest::decode(&received, ipc::buffer_word) {
            expect!(
                30,
                (request.number, request.endpoint_badge),
                (retype_number, SERVER_BADGE)
            );
            let Some(count) = counts.get_mut(round.saturating_sub(1)) else {
                return 31;
            };
            count.requests += 1;
            // The timer fires while the zeroing runs.
            if round <= 2 {
                inside = true;
                started = sdk::probe::counter().0;
                expect!(32, irq_set_timer(HANDLER, delay), Ok(()));
            }
            answer = Some(PolicyAnswer::Allow.to_message());
            continue;
        }
        let Some(stop) = Stop::decode(&received).filter(|s| s.badge == TRACER_BADGE) else {
            return 40;
        };
        let resume = sdk::trace::resume(false);
        match (stop.kind, stop.syscall()) {
            (StopKind::Entry, Some(Syscall::Retype)) => {
                round += 1;
                let Some(count) = counts.get_mut(round - 1) else {
                    return 41;
                };
                count.entries += 1;
                answer = Some(resume);
            }
            (StopKind::Exit, Some(Syscall::Retype)) => {
                let count = &mut counts[round - 1];
                count.exits += 1;
                let want = match round {
                    1 => ErrorCode::Interrupted,
                    2 => ErrorCode::Ok,
                    _ => ErrorCode::SlotOccupied,
                };
                if inside {
                    let ms = (sdk::probe::counter().0 - started) / (frequency / 1000);
                    sdk::println!(
                        "Retype {round}: {} timer interrupt(s) taken while it ran, {ms} ms",
                        count.wakes
                    );
                }
                inside = false;
                expect!(42, irq_set_timer(HANDLER, 0), Ok(()));
                expect!(43, stop.regs[0], want.raw());
                answer = Some(resume);
            }
            (StopKind::Entry, Some(Syscall::Null)) => {
                answer = Some(sdk::trace::result(SKIPPED, 0, false));
            }
            (StopKind::Entry, Some(Syscall::Exit)) => {
                // Its status: every check passed.
                expect!(44, stop.regs[2], 0);
                break;
            }
            _ => answer = Some(resume),
        }
    }
    expect!(45, ipc::reply(&sdk::trace::resume(false)), Ok(()));
    // Each Retype judged, traced and audited once, however often it
    // stopped; the interrupts ran the preemptor during the first two.
    let once = |count: &Counts| (count.entries, count.requests, count.exits) == (1, 1, 1);
    expect!(50, (once(&counts[0]), counts[0].wakes), (true, 1));
    expect!(51, (once(&counts[1]), counts[1].wakes >= 1), (true, true));
    expect!(52, (once(&counts[2]), counts[2].wakes), (true, 0));
    let (allowed, interrupted) = (AuditVerdict::Allowed, ErrorCode::Interrupted.raw());
    let records = [
        (
            Syscall::Retype,
            AuditVerdict::Cancelled,
            true,
            Some(interrupted),
        ),
        // The skipped Null has none.
        (
            Syscall::CapCopy,
            allowed,
            false,
            Some(ErrorCode::InvalidCapability.raw()),
        ),
        (Syscall::Retype, allowed, true, Some(ErrorCode::Ok.raw())),
        (
            Syscall::Retype,
            allowed,
            true,
            Some(ErrorCode::SlotOccupied.raw()),
        ),
    ];
    let mut reader = Reader::new();
    for (index, (syscall, verdict, forwarded, result)) in records.into_iter().enumerate() {
        let check = 60 + index as i32;
        let Some(Entry::Record { record, gap: 0 }) = reader.next(&mut ring) else {
            sdk::println!("record {index} is missing");
            return check;
        };
        sdk::println!("[audit] {}", Line(&record));
        expect!(
            check,
            (
                record.syscall,
                record.verdict,
                record.forwarded,
                record.result,
                record.thread_badge
            ),
            (syscall.number(), verdict, forwarded, result, AUDIT_BADGE)
        );
    }
    // The retyper's Exit comes later; nothing else is there.
    expect!(70, reader.next(&mut ring), None);
    0
}
