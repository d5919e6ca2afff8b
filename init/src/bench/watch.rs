//! The tracing and audit rows: syscalls of a traced thread and of an
//! audited one. As the policy rows, each program first checks that what
//! the row is about is in force (a row timed without the tracer attached,
//! or with its records dropped, would measure something else), and
//! reports a failure rather than a row when it is not.

use crate::programs::{ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT};
use abi::audit::{AuditMode, CONSUMED_OFFSET, DROPPED_OFFSET, WRITTEN_OFFSET};
use abi::bench::{BenchParameter, MAX_ITERATIONS, WARM_UP_ITERATIONS};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::Syscall;
use sdk::ipc::{Cptr, Received};
use sdk::println;
use sdk::syscall;
use sdk::tcb::Tcb;
use sdk::timing::timed_syscall;
use sdk::trace::{self, Next, Stop, TraceServer};
use sdk::vspace::{Frame, VSpace};

use super::measure;

fn error(row: &str, reason: &str) -> i32 {
    println!("BENCH-ERROR name={row} reason={reason}");
    1
}

/// `audit_lossy_null_syscall` (`BootProgram::BenchAudited`): the Untyped
/// in slot 2, its own TCB (policy right) in 3, its own VSpace in 4, a
/// notification in 5. The thread audits itself, lossy, into a ring it
/// maps, and drains the ring after each timed `Null` (untimed, as an audit
/// server keeping up would), so every record is written, none dropped.
pub fn run_audited(parameter: BenchParameter) -> i32 {
    const UNTYPED: u64 = ENDPOINT_SLOT;
    const SELF: Tcb = Tcb(Cptr(SECOND_ENDPOINT_SLOT));
    const OWN_VSPACE: VSpace = VSpace(Cptr(4));
    const NOTIFICATION: Cptr = Cptr(5);
    const RING: Frame = Frame(Cptr(8));
    let row = "audit_lossy_null_syscall";
    if !parameter.runs(row) {
        return 0;
    }
    if syscall::retype(UNTYPED, CapType::Frame, 0, RING.0 .0, 1).is_err() {
        return error(row, "retype failed");
    }
    let Ok(ring) = RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite) else {
        return error(row, "map failed");
    };
    if SELF
        .set_audit(RING, NOTIFICATION, Some(AuditMode::Lossy), 1)
        .is_err()
    {
        return error(row, "TcbSetAudit failed");
    }
    let drain = || {
        let _ = ring.write_u64(CONSUMED_OFFSET, ring.read_u64(WRITTEN_OFFSET));
    };
    let before = ring.read_u64(WRITTEN_OFFSET);
    if syscall::null() != Ok(()) || ring.read_u64(WRITTEN_OFFSET) != before + 1 {
        return error(row, "an audited Null wrote no record");
    }
    drain();
    measure(parameter, row, || {
        let instructions = timed_syscall(Syscall::Null.number(), 0);
        drain();
        instructions
    });
    let timed = u64::from(WARM_UP_ITERATIONS + parameter.iterations.min(MAX_ITERATIONS));
    if ring.read_u64(DROPPED_OFFSET) != 0 || ring.read_u64(WRITTEN_OFFSET) < before + 1 + timed {
        return error(row, "records were dropped or not written");
    }
    0
}

/// The traced thread of `trace_syscall_entry_exit`
/// (`BootProgram::BenchTraced`): times `Null`, each one an entry and an
/// exit stop its tracer answers.
pub fn run_traced(parameter: BenchParameter) -> i32 {
    let row = "trace_syscall_entry_exit";
    if parameter.runs(row) {
        measure(parameter, row, || timed_syscall(Syscall::Null.number(), 0));
    }
    0
}

/// Continues every stop, counting the `Null`s' stops; ends at the traced
/// thread's `exit`.
struct Counter {
    entries: u64,
    exits: u64,
}

impl TraceServer for Counter {
    fn stop(&mut self, stop: &Stop) -> Next {
        if stop.syscall() == Some(Syscall::Null) {
            self.entries += u64::from(stop.is_entry());
            self.exits += u64::from(stop.is_exit());
        }
        if stop.is_entry() && stop.syscall() == Some(Syscall::Exit) {
            Next::AnswerThenStop(trace::resume(false))
        } else {
            Next::Answer(trace::resume(false))
        }
    }

    fn other(&mut self, _received: &Received) -> Next {
        Next::Stop
    }
}

/// The tracer of `trace_syscall_entry_exit` (`BootProgram::BenchTracer`):
/// its endpoint in slot 2 (receive) and 4 (send), the traced thread's TCB
/// (trace right) in 3. It attaches before the traced thread runs (it is
/// more urgent), answers every stop with "continue", and checks at the
/// end that each timed `Null` stopped at its entry and its exit.
pub fn run_tracer(parameter: BenchParameter) -> i32 {
    let row = "trace_syscall_entry_exit";
    let traced = Tcb(Cptr(SECOND_ENDPOINT_SLOT));
    if traced.attach_tracer(Cptr(4)).is_err() {
        return error(row, "attach failed");
    }
    let mut counter = Counter {
        entries: 0,
        exits: 0,
    };
    if trace::serve(Cptr(ENDPOINT_SLOT), &mut counter).is_err() {
        return error(row, "a receive or an answer failed");
    }
    let timed = if parameter.runs(row) {
        u64::from(WARM_UP_ITERATIONS + parameter.iterations.min(MAX_ITERATIONS))
    } else {
        0
    };
    if counter.entries != counter.exits || counter.entries < timed {
        return error(row, "not every Null stopped at its entry and its exit");
    }
    0
}
