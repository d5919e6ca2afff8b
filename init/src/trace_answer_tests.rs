//! A trace exit stop answered on both paths
//! (`BootProgram::TraceAnswerTracer`, `BootProgram::TraceAnswerTracee`):
//! the same `Null`s, their exit stops answered "continue" first in a
//! register-only reply (the IPC fast path answers it and the tracee goes
//! back to EL0 from there: the tracer's `ReplyRecv` is not counted as a
//! generic-path syscall), then in a reply of seven words (the generic
//! entry answers it: counted). The tracee finds the same registers after
//! each `Null` either way, and between the two paths it runs for some
//! timer ticks, at which the kernel checks its invariants (a kernel
//! message the fast path left behind breaks one). Once, a thread more
//! urgent than the tracee is ready when the short answer comes: the
//! answer is the generic entry's, and that thread runs first. Each
//! returns the number of its first failed
//! check (0: all passed).

use crate::programs::ENDPOINT_SLOT;
use abi::{ErrorCode, MessageInfo, Syscall};
use sdk::ipc::{self, Cptr, Message, Received};
use sdk::tcb::Tcb;
use sdk::trace::{self, Stop, StopKind};

/// The tracer's endpoint: receive right.
const STOPS: Cptr = Cptr(ENDPOINT_SLOT);
/// The tracee's TCB: trace right.
const TRACEE: Tcb = Tcb(Cptr(3));
/// The endpoint again, write right: what the tracer attaches through.
const STOPS_SEND: Cptr = Cptr(4);
/// The tracer's own TCB (its statistics).
const OWN_TCB: Cptr = Cptr(5);
/// The notification that wakes the bystander (the tracer signals it).
const WAKE: Cptr = Cptr(6);
/// The notification the bystander signals when it runs (the tracer
/// polls it).
const RAN: Cptr = Cptr(7);
/// The bystander's: the notification it waits on, and the one it signals.
const BYSTANDER_WAKE: Cptr = Cptr(2);
const BYSTANDER_RAN: Cptr = Cptr(3);
/// The exit stop (of the fast path's, a round's first `Null`) before
/// whose answer the tracer wakes the bystander, more urgent than the
/// tracee: the fast path must leave that answer to the generic entry,
/// which runs the bystander first.
const BYSTANDER_EXIT: u64 = 4;

/// `Null`s per path (each round makes two: one with marked `x0..x7`, one
/// with marked `x9..x30`, SP, TPIDR_EL0 and the flags).
pub const ROUNDS: u64 = 4;
/// Exit stops per path.
const EXITS: u64 = 2 * ROUNDS;

/// The tracer's generic-path syscalls so far.
fn generic_syscalls() -> u64 {
    sdk::debug::thread_stats(OWN_TCB).map_or(u64::MAX, |stats| stats.syscalls)
}

/// "Continue" as a reply of seven words (the seventh in the IPC buffer):
/// the same answer, which the IPC fast path leaves to the generic entry.
fn long_continue() -> Message {
    let short = trace::resume(false);
    ipc::set_buffer_word(6, 0);
    Message {
        info: MessageInfo::with(short.info.label(), 7),
        words: short.words,
    }
}

/// The next stop, after answering the last one with `answer`.
fn answered(answer: &Message) -> Option<Stop> {
    let received: Received = ipc::reply_recv(STOPS, answer).ok()?;
    Stop::decode(&received)
}

/// Attaches to the tracee and answers its stops: every entry stop
/// "continue"; the first `EXITS` exit stops "continue" in a register-only
/// reply, the next `EXITS` in a long one, each time counting its own
/// generic-path syscalls across the answer; the last exit stop with a
/// detach.
pub fn tracer() -> i32 {
    // The kernel's invariants checked at timer ticks from now on: while
    // the tracee spins after the fast path's answers, a kernel message
    // left behind would be found.
    expect!(
        1,
        sdk::debug::check_invariants(true).map(|report| report.hold_now),
        Ok(true)
    );
    expect!(1, TRACEE.attach_tracer(STOPS_SEND), Ok(()));
    let mut stop = ipc::recv(STOPS).ok().and_then(|r| Stop::decode(&r));
    // Generic-path syscalls across each exit stop's answer, per path.
    let mut counted = [None::<u64>; 2];
    for exit in 0..2 * EXITS {
        let Some(entry) = stop else {
            sdk::println!("check 2 failed: no entry stop");
            return 2;
        };
        expect!(3, entry.kind, StopKind::Entry);
        expect!(4, entry.number, Syscall::Null.number());
        let Some(done) = answered(&trace::resume(false)) else {
            sdk::println!("check 5 failed: no exit stop");
            return 5;
        };
        expect!(6, (done.kind, done.number), (StopKind::Exit, entry.number));
        expect!(7, done.regs[0], ErrorCode::Ok.raw());
        if exit + 1 == 2 * EXITS {
            // The last: detach, and the tracee runs on untraced.
            expect!(8, ipc::reply(&trace::detach()), Ok(()));
            break;
        }
        let path = (exit / EXITS) as usize;
        let answer = if path == 0 {
            trace::resume(false)
        } else {
            long_continue()
        };
        if exit == BYSTANDER_EXIT {
            // A thread more urgent than the tracee is ready when the
            // short answer comes: it runs before the tracee does (its
            // mark is there at the tracee's next stop).
            expect!(16, ipc::signal(WAKE), Ok(()));
            stop = answered(&answer);
            expect!(17, ipc::poll(RAN), Ok(1));
            continue;
        }
        let before = generic_syscalls();
        stop = answered(&answer);
        let across = generic_syscalls().wrapping_sub(before);
        // The same count across every answer of a path.
        match counted[path] {
            None => counted[path] = Some(across),
            Some(first) => {
                expect!(9 + path as i32, across, first);
            }
        }
    }
    // The long reply takes the generic entry, the short one not: one
    // more syscall counted across each answer.
    match counted {
        [Some(fast), Some(slow)] => {
            expect!(11, slow, fast + 1);
        }
        _ => return 12,
    }
    // The ticks' checks found nothing broken (some were made).
    let Ok(report) = sdk::debug::check_invariants(false) else {
        return 13;
    };
    expect!(
        14,
        (report.hold_now, report.broken_at_a_tick),
        (true, false)
    );
    expect!(15, report.tick_checks > 0, true);
    0
}

/// The traced thread: the same `Null`s on both paths leave the same
/// registers (`x0..x8` round by round; `x9..x30`, SP, TPIDR_EL0 and the
/// flags as they were).
pub fn tracee() -> i32 {
    let mut fast = [[0u64; 9]; ROUNDS as usize];
    for path in 0..2 {
        for round in 0..ROUNDS {
            let marks = core::array::from_fn(|i| 0xa0 + 0x10 * round + i as u64);
            let after = sdk::syscall::raw_syscall_registers(Syscall::Null.number(), marks);
            expect!(20 + path, after[0], ErrorCode::Ok.raw());
            if path == 0 {
                fast[round as usize] = after;
            } else {
                expect!(22, after, fast[round as usize]);
            }
            expect!(
                24 + path,
                sdk::probe::registers_kept_across(Syscall::Null.number(), 0, round, 0),
                (ErrorCode::Ok.raw(), 0)
            );
        }
        if path == 0 {
            // Running, its last stop answered by the fast path, for some
            // ticks: their invariant checks look at it (no syscall, which
            // would stop at its entry).
            let spin = sdk::time::deadline_after(core::time::Duration::from_millis(SPIN_MS));
            while sdk::time::now() < spin {}
        }
    }
    0
}

/// How long the tracee runs between the two paths.
const SPIN_MS: u64 = 100;

/// The bystander (more urgent than the tracee, less than the tracer):
/// woken once by the tracer, it marks that it ran.
pub fn bystander() -> i32 {
    expect!(30, ipc::wait(BYSTANDER_WAKE), Ok(1));
    expect!(31, ipc::signal(BYSTANDER_RAN), Ok(()));
    0
}
