//! A trace entry stop sent on both paths (`BootProgram::TraceEntryTracer`,
//! `BootProgram::TraceEntryTracee`): the same syscalls (with marked
//! `x0..x7`, and with marked `x9..x30`, SP, TPIDR_EL0 and the flags) stop
//! at their entry, first while the tracer waits in its `ReplyRecv` (the
//! trace fast path sends the stop from the vector: the tracee's syscall
//! is not counted as a generic-path one), then while it does not (the
//! tracer answers the exit stop with `Reply`, and the tracee, more
//! urgent, makes its next syscall before the tracer's `Recv`: the generic
//! entry queues the stop, counted). The stops carry the same words either
//! way, each written afresh (the tracer marks its IPC buffer's stop words
//! before each receive), and the tracee finds the same results and its
//! registers kept. Between the paths a bystander more urgent than the
//! tracer (less than the tracee) is woken by a timer while the tracee
//! runs: the next entry stop finds the tracer waiting, but the bystander
//! ready above it, so the fast path leaves the stop to the generic entry,
//! which runs the bystander first. Each returns the number of its first
//! failed check (0: all passed).

use crate::programs::ENDPOINT_SLOT;
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Received};
use sdk::syscall::{irq_ack, irq_set_notification, irq_set_timer};
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
/// The notification that has the bystander arm its timer (the tracer's),
/// and the one the bystander signals once it has run (the tracer polls).
const ARM: Cptr = Cptr(7);
const RAN: Cptr = Cptr(8);
/// The bystander's: the physical timer's IrqHandler, the notification
/// its interrupt signals, `ARM` and `RAN`.
const HANDLER: u64 = 2;
const TIMER: Cptr = Cptr(3);
const BYSTANDER_ARM: Cptr = Cptr(4);
const BYSTANDER_RAN: Cptr = Cptr(5);
/// How long after it is armed the bystander's timer fires, and how long
/// the tracee runs between the paths (without a syscall, which would
/// stop): the interrupt comes while it runs, long after the tracer has
/// gone back to waiting.
const ARMED_MS: u64 = 50;
const SPIN_MS: u64 = 300;

/// Rounds per path; each makes two syscalls (`CALLS`).
pub const ROUNDS: usize = 4;
/// Syscalls per round: one with marked `x0..x7` (a `Null` in even
/// rounds, the unused number `OTHER` in odd ones, so that the stop's
/// number and `x8` are not always 0), then a `Null` with marked
/// `x9..x30`, SP, TPIDR_EL0 and the flags (`probe::registers_kept_across`).
const CALLS: usize = 2;
/// A number below 64 that names no syscall: it stops at its entry as
/// any does, then fails with `InvalidSyscall`.
const OTHER: u64 = 63;
const _: () = assert!(Syscall::from_number(OTHER).is_none() && OTHER < 64);
/// What the tracer writes into its IPC buffer's stop words (6..12)
/// before each receive: a stop that left one unwritten shows it.
const STALE: u64 = 0x57a1e;

/// The marks of round `round`'s `x0..x7`.
fn marks(round: usize) -> [u64; 8] {
    core::array::from_fn(|i| 0xe0 + 0x10 * round as u64 + i as u64)
}

/// Round `round`'s first syscall number.
fn number(round: usize) -> u64 {
    if round.is_multiple_of(2) {
        Syscall::Null.number()
    } else {
        OTHER
    }
}

/// The tracee's generic-path syscalls so far.
fn tracee_syscalls() -> u64 {
    sdk::debug::thread_stats(TRACEE.0).map_or(u64::MAX, |stats| stats.syscalls)
}

/// The stop received (after the buffer's stop words were marked).
fn next_stop(received: Result<Received, ErrorCode>) -> Option<Stop> {
    Stop::decode(&received.ok()?)
}

/// What of a stop both paths must show alike: not its time, nor its PC
/// (each path's calls may be compiled apart), nor, for the probe's
/// syscall (not `first`), the registers the probe does not set (`x1`,
/// `x4..x7`).
fn compared(stop: Stop, first: bool) -> Stop {
    let mut regs = stop.regs;
    if !first {
        for unset in [1, 4, 5, 6, 7] {
            regs[unset] = 0;
        }
    }
    Stop {
        time: 0,
        pc: 0,
        regs,
        ..stop
    }
}

/// Marks the IPC buffer's stop words.
fn mark_buffer() {
    for word in 6..abi::trace::TRACE_STOP_WORDS as usize {
        ipc::set_buffer_word(word, STALE);
    }
}

/// Attaches, lets the tracee start and answers its stops "continue":
/// path 0's exit stops with `ReplyRecv` (the next entry stop finds it
/// waiting), path 1's with `Reply` and then `Recv`. Compares each path's
/// entry stops.
pub fn tracer() -> i32 {
    expect!(1, TRACEE.attach_tracer(STOPS_SEND), Ok(()));
    // The tracee (more urgent) runs at once and makes its first syscall,
    // whose stop waits in the queue for this `Recv`.
    expect!(2, ipc::signal(GO), Ok(()));
    mark_buffer();
    let mut stop = next_stop(ipc::recv(STOPS));
    let mut entries = [[None::<Stop>; CALLS * ROUNDS]; 2];
    let mut exits = [[None::<Stop>; CALLS * ROUNDS]; 2];
    let mut last_time = 0;
    for path in 0..2 {
        for call in 0..CALLS * ROUNDS {
            let (round, first) = (call / CALLS, call % CALLS == 0);
            let Some(entry) = stop else {
                sdk::println!("check 3 failed: no entry stop");
                return 3;
            };
            let want = if first {
                number(round)
            } else {
                Syscall::Null.number()
            };
            expect!(
                4,
                (entry.kind, entry.number, entry.regs[8]),
                (StopKind::Entry, want, want)
            );
            if first {
                expect!(5, &entry.regs[..8], &marks(round)[..]);
            }
            expect!(6, entry.time >= last_time && entry.time != STALE, true);
            last_time = entry.time;
            entries[path][call] = Some(compared(entry, first));
            mark_buffer();
            let Some(done) = next_stop(ipc::reply_recv(STOPS, &trace::resume(false))) else {
                sdk::println!("check 7 failed: no exit stop");
                return 7;
            };
            expect!(8, (done.kind, done.number), (StopKind::Exit, want));
            exits[path][call] = Some(compared(done, first));
            if path == 1 && call + 1 == CALLS * ROUNDS {
                // The last: detach, and the tracee runs on untraced.
                expect!(9, ipc::reply(&trace::detach()), Ok(()));
                break;
            }
            // The path of the next entry stop: the tracee's count across
            // it (0 from the vector, 1 through the generic entry).
            let next_path = if call + 1 == CALLS * ROUNDS {
                path + 1
            } else {
                path
            };
            // Between the paths: the bystander arms its timer (it runs
            // at once, more urgent), and the tracer waits for the next
            // stop, which comes once the bystander is ready above it.
            let bystander = next_path != path;
            if bystander {
                expect!(16, ipc::signal(ARM), Ok(()));
            }
            let before = tracee_syscalls();
            mark_buffer();
            stop = if next_path == 0 || bystander {
                next_stop(ipc::reply_recv(STOPS, &trace::resume(false)))
            } else {
                expect!(10, ipc::reply(&trace::resume(false)), Ok(()));
                next_stop(ipc::recv(STOPS))
            };
            expect!(
                11 + next_path as i32,
                tracee_syscalls().wrapping_sub(before),
                next_path as u64
            );
            if bystander {
                // It ran before this stop reached the tracer.
                expect!(17, ipc::poll(RAN), Ok(1));
            }
        }
    }
    // Both paths sent the same stops (but for the time).
    for call in 0..CALLS * ROUNDS {
        expect!(
            13,
            entries[0][call].is_some() && exits[0][call].is_some(),
            true
        );
        expect!(14, entries[1][call], entries[0][call]);
        expect!(15, exits[1][call], exits[0][call]);
    }
    0
}

/// The traced thread: waits to be traced, then makes the same syscalls
/// on both paths, each leaving the same `x0..x8` on both and every
/// register it must keep as it was.
pub fn tracee() -> i32 {
    expect!(20, ipc::wait(TRACEE_GO), Ok(1));
    let mut first_path = [[0u64; 9]; ROUNDS];
    for path in 0..2 {
        for (round, kept) in first_path.iter_mut().enumerate() {
            let after = sdk::syscall::raw_syscall_registers(number(round), marks(round));
            let want = if round.is_multiple_of(2) {
                ErrorCode::Ok
            } else {
                ErrorCode::InvalidSyscall
            };
            expect!(21, after[0], want.raw());
            if path == 0 {
                *kept = after;
            } else {
                expect!(22, after, *kept);
            }
            expect!(
                23 + path,
                sdk::probe::registers_kept_across(Syscall::Null.number(), 0, round as u64, 0),
                (ErrorCode::Ok.raw(), 0)
            );
        }
        if path == 0 {
            // Running while the bystander's timer fires (no syscall, which
            // would stop at its entry).
            let spin = sdk::time::deadline_after(core::time::Duration::from_millis(SPIN_MS));
            while sdk::time::now() < spin {}
        }
    }
    0
}

/// The bystander (more urgent than the tracer, less than the tracee):
/// told by the tracer, it arms the physical timer and waits for its
/// interrupt, which makes it ready while the tracee runs; then it marks
/// that it ran.
pub fn bystander() -> i32 {
    expect!(30, irq_set_notification(HANDLER, TIMER.0), Ok(()));
    expect!(31, ipc::wait(BYSTANDER_ARM), Ok(1));
    let (_, frequency) = sdk::probe::counter();
    expect!(
        32,
        irq_set_timer(HANDLER, frequency / 1000 * ARMED_MS),
        Ok(())
    );
    expect!(33, ipc::wait(TIMER).map(|bits| bits != 0), Ok(true));
    // Disarmed before the acknowledgement: an armed timer's interrupt
    // stays asserted and would come again at once.
    expect!(36, irq_set_timer(HANDLER, 0), Ok(()));
    expect!(34, irq_ack(HANDLER), Ok(()));
    expect!(35, ipc::signal(BYSTANDER_RAN), Ok(()));
    0
}
