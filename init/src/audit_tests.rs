//! Audit programs of the in-guest suite: a server that makes the ring and
//! audits an app, in lossy mode (stalled during the app's burst: drops
//! counted, gaps visible) and lossless mode (the burst waits for room:
//! nothing lost). Each returns the number of its first failed check.

use crate::programs::{AUDIT_APP_BADGE, AUDIT_BURST, AUDIT_SCENARIO_LOSSLESS};
use abi::audit::{AuditVerdict, RING_SLOTS};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::syscall::raw_syscall6;
use sdk::vspace::{Frame, MappedFrame, VSpace};

const ENDPOINT: Cptr = Cptr(crate::programs::ENDPOINT_SLOT);
const APP_TCB: u64 = 3;
const UNTYPED: u64 = 4;
const NOTIFICATION: Cptr = Cptr(5);
const OWN_VSPACE: VSpace = VSpace(Cptr(6));
const RING: Frame = Frame(Cptr(8));
const OWN_TCB: u64 = 7;

/// Attaches a filter to the app whose `Null` rule is `Log`.
fn log_nulls() -> Result<(), i32> {
    use sdk::policy::{Action, FilterBuilder, RuleBuilder};
    use sdk::tcb::{FilterCap, Tcb};
    let filter = FilterCap(Cptr(10));
    let mut buffer = [0u8; 64];
    let rules = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::Log))
        .encode(&mut buffer)
        .map_err(|_| 40)?;
    sdk::syscall::retype(UNTYPED, CapType::Filter, 0, filter.0 .0, 1).map_err(|_| 41)?;
    filter.load(rules).map_err(|_| 42)?;
    Tcb(Cptr(APP_TCB))
        .attach_filter(filter, None)
        .map_err(|_| 43)
}

/// `TcbSetAudit` on the TCB in `tcb`.
fn set_audit(tcb: u64, frame: Frame, mode: u64, badge: u64) -> Result<(), ErrorCode> {
    raw_syscall6(
        Syscall::TcbSetAudit.number(),
        tcb,
        [frame.0 .0, NOTIFICATION.0, mode, badge, 0],
    )
    .into_result()
}

/// Reads every record there is, printing each; checks they are the app's
/// and counts what it expects of them.
fn drain(
    ring: &mut MappedFrame,
    reader: &mut Reader,
    nulls: &mut u64,
    null_verdict: AuditVerdict,
) -> Result<(), i32> {
    while let Some(entry) = reader.next(ring) {
        match entry {
            Entry::Record { record, gap } => {
                // The burst's Nulls are counted, the rest printed.
                if record.syscall != Syscall::Null.number() || gap > 0 {
                    println!("[audit] {}", Line(&record));
                }
                if gap > 0 {
                    println!("[audit] {gap} records lost before #{}", record.sequence);
                }
                if record.thread_badge != AUDIT_APP_BADGE {
                    return Err(50);
                }
                if record.syscall == Syscall::Null.number() {
                    if record.result != Some(ErrorCode::Ok.raw()) || record.verdict != null_verdict
                    {
                        return Err(51);
                    }
                    *nulls += 1;
                }
            }
            Entry::Garbled { index } => {
                println!("[audit] record {index} is garbled");
                return Err(52);
            }
        }
    }
    Ok(())
}

/// Retypes the ring's Frame from the Untyped and maps it read-write at
/// the start of the frame window; `Err` is the failed check (1: retype,
/// 2: map), the numbers both programs using it report.
fn make_ring() -> Result<MappedFrame, i32> {
    let retyped = sdk::syscall::retype(UNTYPED, CapType::Frame, 0, RING.0 .0, 1);
    if retyped != Ok(()) {
        println!("check 1 failed: {retyped:?} != Ok(())");
        return Err(1);
    }
    RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite)
        .map_err(|_| 2)
}

/// The audit server (see `BootProgram::AuditServer`).
pub fn server(scenario: u64) -> i32 {
    let lossless = scenario == AUDIT_SCENARIO_LOSSLESS;
    let mut ring = match make_ring() {
        Ok(ring) => ring,
        Err(failed) => return failed,
    };
    // Refusals first: a bad mode, the wrong type for the ring, no ring.
    expect!(
        3,
        set_audit(APP_TCB, RING, 3, 0),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        4,
        set_audit(APP_TCB, Frame(NOTIFICATION), 1, 0),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        5,
        set_audit(APP_TCB, Frame(Cptr(12)), 1, 0),
        Err(ErrorCode::InvalidCapability)
    );
    // Lossless: a filter also logs the app's Nulls (`Log` verdicts show in
    // their records); lossy: no filter.
    let null_verdict = if lossless {
        if let Err(check) = log_nulls() {
            return check;
        }
        AuditVerdict::Logged
    } else {
        AuditVerdict::Allowed
    };
    let mode = if lossless { 2 } else { 1 };
    expect!(6, set_audit(APP_TCB, RING, mode, AUDIT_APP_BADGE), Ok(()));
    let mut reader = Reader::new();
    let mut nulls = 0;
    if !lossless {
        // Stalled: the app's burst overflows the ring while this thread
        // waits for its report.
        let Ok(report) = ipc::recv(ENDPOINT) else {
            return 10;
        };
        expect!(11, report.message.words[0], AUDIT_BURST);
        expect!(12, ipc::poll(NOTIFICATION).map(|w| w != 0), Ok(true));
        if let Err(check) = drain(&mut ring, &mut reader, &mut nulls, null_verdict) {
            return check;
        }
        expect!(13, (reader.records, reader.missing), (RING_SLOTS, 0));
        expect!(14, nulls, RING_SLOTS);
        // The ring is empty again: the next record signals once more.
        expect!(15, ipc::poll(NOTIFICATION), Ok(0));
        let Ok(second) = ipc::reply_recv(ENDPOINT, &Message::new(0, &[])) else {
            return 16;
        };
        expect!(17, ipc::poll(NOTIFICATION).map(|w| w != 0), Ok(true));
        if let Err(check) = drain(&mut ring, &mut reader, &mut nulls, null_verdict) {
            return check;
        }
        // The burst's other Nulls and the first report were lost: the
        // next record's sequence number jumps by exactly that, and the
        // record says so itself.
        let lost = AUDIT_BURST - RING_SLOTS + 1;
        expect!(18, reader.missing, lost);
        expect!(19, second.message.words[0], 1);
        println!(
            "[audit] lossy: {} records read, {} lost, every loss accounted for",
            reader.records, reader.missing
        );
        // The ring's Frame destroyed (its only capability deleted, which
        // unmaps it) while the app, blocked in its second report, is
        // audited into it: the kernel turns the app's audit off at once,
        // so its invariants hold now (an audited thread's ring lives and
        // lists it), and a new ring may be set (a second `TcbSetAudit` on
        // a thread that is audited is `Denied`).
        expect!(
            20,
            sdk::syscall::cnode::delete(crate::programs::CNODE_SLOT, RING.0 .0),
            Ok(())
        );
        expect!(
            21,
            sdk::debug::check_invariants(false).map(|report| report.hold_now),
            Ok(true)
        );
        let second_ring = Frame(Cptr(13));
        expect!(
            22,
            sdk::syscall::retype(UNTYPED, CapType::Frame, 0, second_ring.0 .0, 1),
            Ok(())
        );
        expect!(
            23,
            set_audit(APP_TCB, second_ring, 1, AUDIT_APP_BADGE),
            Ok(())
        );
        println!("[audit] the ring destroyed: the app's audit was off at once");
        let _ = ipc::reply(&Message::new(0, &[]));
        return 0;
    }
    // Lossless: wait below the app so its burst fills the ring, waits for
    // room, and goes on as this thread drains.
    expect!(30, sdk::tcb::Tcb(Cptr(OWN_TCB)).set_priority(90), Ok(()));
    loop {
        if let Err(check) = drain(&mut ring, &mut reader, &mut nulls, null_verdict) {
            return check;
        }
        match ipc::nb_recv(ENDPOINT) {
            Ok(report) => {
                expect!(31, report.message.words[0], AUDIT_BURST);
                if let Err(check) = drain(&mut ring, &mut reader, &mut nulls, null_verdict) {
                    return check;
                }
                break;
            }
            Err(ErrorCode::WouldBlock) => {
                let _ = ipc::wait(NOTIFICATION);
            }
            Err(_) => return 32,
        }
    }
    expect!(33, reader.missing, 0);
    expect!(34, nulls, AUDIT_BURST);
    println!(
        "[audit] lossless: {} records read, none lost (the burst waited for room)",
        reader.records
    );
    let _ = ipc::reply(&Message::new(0, &[]));
    0
}

/// The audited app: a burst of Nulls, then its report (a Call).
pub fn app(scenario: u64) -> i32 {
    for _ in 0..AUDIT_BURST {
        if sdk::syscall::null().is_err() {
            return 1;
        }
    }
    if ipc::call(ENDPOINT, &Message::new(1, &[AUDIT_BURST])).is_err() {
        return 2;
    }
    if scenario != AUDIT_SCENARIO_LOSSLESS && ipc::call(ENDPOINT, &Message::new(1, &[1])).is_err() {
        return 3;
    }
    0
}

/// Both audit and trace the app (its TCB in slot 3, trace and policy
/// rights; stops come to the endpoint in slot 2, named through the send
/// capability in slot 9): when the exit stop of its `Null` arrives, the
/// ring must already hold that `Null`'s record with its result (the audit
/// exit stage runs before the trace exit stop).
pub fn audit_then_trace() -> i32 {
    use sdk::trace::Stop;
    let mut ring = match make_ring() {
        Ok(ring) => ring,
        Err(failed) => return failed,
    };
    expect!(3, set_audit(APP_TCB, RING, 1, AUDIT_APP_BADGE), Ok(()));
    expect!(
        4,
        sdk::tcb::Tcb(Cptr(APP_TCB)).attach_tracer(Cptr(9)),
        Ok(())
    );
    let mut reader = Reader::new();
    let mut nulls = 0;
    // The entry stop of the app's Null: no record yet.
    let Ok(first) = ipc::recv(ENDPOINT) else {
        return 5;
    };
    expect!(
        6,
        Stop::decode(&first).map(|s| (s.is_entry(), s.number)),
        Some((true, Syscall::Null.number()))
    );
    if let Err(check) = drain(&mut ring, &mut reader, &mut nulls, AuditVerdict::Allowed) {
        return check;
    }
    expect!(7, reader.records, 0);
    // Its exit stop: the record is already there, with the result.
    let Ok(second) = ipc::reply_recv(ENDPOINT, &sdk::trace::resume(false)) else {
        return 8;
    };
    expect!(9, Stop::decode(&second).map(|s| s.is_exit()), Some(true));
    if let Err(check) = drain(&mut ring, &mut reader, &mut nulls, AuditVerdict::Allowed) {
        return check;
    }
    expect!(10, (reader.records, nulls), (1, 1));
    println!("[audit] the Null's record was in the ring before its trace exit stop");
    // Let the app go: detach (its exit then runs untraced).
    expect!(11, ipc::reply(&sdk::trace::detach()), Ok(()));
    0
}

/// Makes one `Null`, then exits (audited and traced).
pub fn one_null() -> i32 {
    match sdk::syscall::null() {
        Ok(()) => 0,
        Err(_) => 1,
    }
}
