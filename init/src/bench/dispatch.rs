//! `user_dispatch_redirect` (`BootProgram::BenchUserDispatch`): a `Null`
//! made outside the allowed range while the selector blocks goes to the
//! thread's handler, which answers it and resumes the thread with
//! `UserDispatchReturn`. One sample is the whole trip: from the counter
//! read before the `svc` (stage 1 of the generic entry, the frame written,
//! the handler entered), the handler (its count, its answer in the
//! frame's `x0`), the return syscall and its restore, to the read after
//! the `svc`.

use super::{print_row, time_row};
use abi::bench::{BenchParameter, MAX_ITERATIONS, WARM_UP_ITERATIONS};
use abi::Syscall;
use core::sync::atomic::{AtomicU64, Ordering};
use sdk::println;
use sdk::syscall::raw_syscall;
use sdk::timing::timed_syscall;
use sdk::user_dispatch::{
    self, trampoline_range, trampoline_syscall, DispatchBuffer, Frame, Selector, SelectorByte,
};

const ROW: &str = "user_dispatch_redirect";

static SELECTOR: SelectorByte = SelectorByte::new(Selector::Allow);
static FRAME: DispatchBuffer = DispatchBuffer::new();
/// Syscalls the handler answered.
static HANDLED: AtomicU64 = AtomicU64::new(0);
/// The handler's answer: recognisably not the kernel's.
const EMULATED: u64 = 0xd15b_a7c4;

/// Counts the redirect, answers it and resumes the interrupted code.
extern "C" fn handler(frame: &mut Frame, _number: u64) -> ! {
    HANDLED.fetch_add(1, Ordering::Relaxed);
    frame.x[0] = EMULATED;
    let _ = user_dispatch::return_to(frame);
    // A refused frame: leave through the trampoline (an `exit` from here
    // would be redirected again).
    trampoline_syscall(Syscall::Exit.number(), [0, 0, 91, 0, 0, 0, 0, 0]);
    loop {
        core::hint::spin_loop();
    }
}

/// Configures dispatch, checks one redirect answers with the handler's
/// value, times the row, then checks every timed `Null` was redirected.
pub fn run(parameter: BenchParameter) -> i32 {
    if !parameter.runs(ROW) {
        return 0;
    }
    if user_dispatch::set(trampoline_range(), handler, &FRAME, &SELECTOR).is_err() {
        return error(ROW, "SetUserDispatch failed");
    }
    SELECTOR.set(Selector::Block);
    let answer = raw_syscall(Syscall::Null.number(), 0, 0, 0).0;
    SELECTOR.set(Selector::Allow);
    if answer != EMULATED || HANDLED.load(Ordering::Relaxed) != 1 {
        return error(ROW, "a blocked Null was not answered by the handler");
    }
    SELECTOR.set(Selector::Block);
    let row = time_row(parameter, || timed_syscall(Syscall::Null.number(), 0));
    // Printing is a syscall: only with the selector at allow.
    SELECTOR.set(Selector::Allow);
    let redirected = HANDLED.load(Ordering::Relaxed) - 1;
    let timed = u64::from(WARM_UP_ITERATIONS + parameter.iterations.min(MAX_ITERATIONS));
    if redirected != timed {
        return error(ROW, "not every timed Null went to the handler");
    }
    print_row(parameter, ROW, row);
    if user_dispatch::clear().is_err() {
        return error(ROW, "turning dispatch off failed");
    }
    0
}

fn error(row: &str, reason: &str) -> i32 {
    println!("BENCH-ERROR name={row} reason={reason}");
    1
}
