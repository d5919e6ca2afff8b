//! A trace entry stop sent on both paths (`BootProgram::TraceEntryTracer`,
//! `BootProgram::TraceEntryTracee`): the same `Null`s with marked
//! `x0..x7` stop at their entry, first while the tracer waits in its
//! `ReplyRecv` (the trace fast path sends the stop from the vector: the
//! tracee's `Null` is not counted as a generic-path syscall), then while
//! it does not (the tracer answers the exit stop with `Reply`, and the
//! tracee, more urgent, makes its next `Null` before the tracer's `Recv`:
//! the generic entry queues the stop, counted). The stops carry the same
//! words either way, each written afresh (the tracer marks its IPC
//! buffer's stop words before each receive), and the tracee finds its
//! registers kept. Each returns the number of its first failed check (0:
//! all passed).

use crate::programs::ENDPOINT_SLOT;
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Received};
use sdk::tcb::Tcb;
use sdk::trace::{self, Stop, StopKind};

/// The tracer's endpoint: receive right.
const STOPS: Cptr = Cptr(ENDPOINT_SLOT);
/// The tracee's TCB: trace right (and its statistics).
const TRACEE: Tcb = Tcb(Cptr(3));
/// The endpoint again, write right: what the tracer attaches through.
const STOPS_SEND: Cptr = Cptr(4);
/// The notification that lets the tracee start (the tracer's, to signal;
/// the tracee's, to wait on).
const GO: Cptr = Cptr(6);
const TRACEE_GO: Cptr = Cptr(2);

/// `Null`s per path.
pub const ROUNDS: usize = 4;
/// What the tracer writes into its IPC buffer's stop words (6..12)
/// before each receive: a stop that left one unwritten shows it.
const STALE: u64 = 0x57a1e;

/// The marks of round `round`'s `x0..x7`.
fn marks(round: usize) -> [u64; 8] {
    core::array::from_fn(|i| 0xe0 + 0x10 * round as u64 + i as u64)
}

/// The tracee's generic-path syscalls so far.
fn tracee_syscalls() -> u64 {
    sdk::debug::thread_stats(TRACEE.0).map_or(u64::MAX, |stats| stats.syscalls)
}

/// The next stop (received after marking the buffer's stop words).
fn next_stop(received: Result<Received, ErrorCode>) -> Option<Stop> {
    Stop::decode(&received.ok()?)
}

/// Marks the IPC buffer's stop words.
fn mark_buffer() {
    for word in 6..abi::trace::TRACE_STOP_WORDS as usize {
        ipc::set_buffer_word(word, STALE);
    }
}

/// Attaches, lets the tracee start and answers its stops "continue":
/// path 0 with `ReplyRecv` (the next entry stop finds it waiting), path
/// 1 with `Reply` and then `Recv`. Compares each path's entry stops.
pub fn tracer() -> i32 {
    expect!(1, TRACEE.attach_tracer(STOPS_SEND), Ok(()));
    // The tracee (more urgent) runs at once and makes its first `Null`,
    // whose stop waits in the queue for this `Recv`.
    expect!(2, ipc::signal(GO), Ok(()));
    mark_buffer();
    let mut stop = next_stop(ipc::recv(STOPS));
    let mut entries = [[None::<Stop>; ROUNDS]; 2];
    let mut last_time = 0;
    for path in 0..2 {
        for round in 0..ROUNDS {
            let Some(entry) = stop else {
                sdk::println!("check 3 failed: no entry stop");
                return 3;
            };
            expect!(
                4,
                (entry.kind, entry.number),
                (StopKind::Entry, Syscall::Null.number())
            );
            expect!(5, &entry.regs[..8], &marks(round)[..]);
            expect!(6, entry.time >= last_time && entry.time != STALE, true);
            last_time = entry.time;
            entries[path][round] = Some(Stop { time: 0, ..entry });
            mark_buffer();
            let Some(done) = next_stop(ipc::reply_recv(STOPS, &trace::resume(false))) else {
                sdk::println!("check 7 failed: no exit stop");
                return 7;
            };
            expect!(
                8,
                (done.kind, done.regs[0]),
                (StopKind::Exit, ErrorCode::Ok.raw())
            );
            if path == 1 && round + 1 == ROUNDS {
                // The last: detach, and the tracee runs on untraced.
                expect!(9, ipc::reply(&trace::detach()), Ok(()));
                break;
            }
            // The path of the next entry stop: the tracee's count across
            // it (0 from the vector, 1 through the generic entry).
            let next_path = if round + 1 == ROUNDS { path + 1 } else { path };
            let before = tracee_syscalls();
            mark_buffer();
            stop = if next_path == 0 {
                next_stop(ipc::reply_recv(STOPS, &trace::resume(false)))
            } else {
                expect!(10, ipc::reply(&trace::resume(false)), Ok(()));
                mark_buffer();
                next_stop(ipc::recv(STOPS))
            };
            expect!(
                11 + next_path as i32,
                tracee_syscalls().wrapping_sub(before),
                next_path as u64
            );
        }
    }
    // Both paths sent the same stops (but for the time).
    for round in 0..ROUNDS {
        expect!(13, entries[1][round], entries[0][round]);
        expect!(14, entries[0][round].is_some(), true);
    }
    0
}

/// The traced thread: waits to be traced, then makes the same `Null`s
/// on both paths, each leaving `x0` `Ok` and `x1..x8` as they were made.
pub fn tracee() -> i32 {
    expect!(20, ipc::wait(TRACEE_GO), Ok(1));
    for _path in 0..2 {
        for round in 0..ROUNDS {
            let marks = marks(round);
            let after = sdk::syscall::raw_syscall_registers(Syscall::Null.number(), marks);
            expect!(21, after[0], ErrorCode::Ok.raw());
            expect!(22, &after[1..8], &marks[1..8]);
            expect!(23, after[8], Syscall::Null.number());
        }
    }
    0
}
