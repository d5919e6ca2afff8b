//! Judging how a case's threads ended: from each one's end message (how:
//! its exit status, the kernel's reason for a kill, its fault's class,
//! address and syndrome) and the counters the test image keeps
//! (`sdk::debug::thread_stats`).

use super::case::{ExceptionClass, Expect};
use abi::fault::{KillReason, ThreadEnd};
use sdk::debug::ThreadStats;

/// How one thread of a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    /// Its end message.
    pub end: ThreadEnd,
    /// Its counters, read before its TCB went.
    pub stats: ThreadStats,
}

/// Why a case failed (the TAP diagnostic).
pub type Failure = &'static str;

/// The fault status code of an abort's syndrome (ISS.DFSC/IFSC).
fn fault_status(esr: u64) -> u64 {
    esr & 0x3f
}

/// An alignment fault (DFSC 0b100001).
const ALIGNMENT_FAULT: u64 = 0x21;

/// A permission fault at any level (DFSC 0b0011xx).
fn is_permission_fault(esr: u64) -> bool {
    fault_status(esr) >> 2 == 0b0011
}

/// The status an exit or a kill ended with (a kill's is the kernel's
/// status for its reason).
fn status_of(end: ThreadEnd) -> Option<i64> {
    match end {
        ThreadEnd::Exited { status } => Some(status),
        ThreadEnd::Killed(reason) => Some(reason.status()),
        ThreadEnd::Faulted { .. } => None,
    }
}

/// Checks the ended threads of a case against what it expects.
pub fn evaluate(expect: Expect, ended: &[Ended]) -> Result<(), Failure> {
    if ended.is_empty() {
        return Err("no thread ran");
    }
    for thread in ended {
        check_end(expect, thread.end)?;
        let stats = thread.stats;
        match expect {
            Expect::ExitZeroWithInterrupts(at_least) if stats.interrupts < at_least => {
                return Err("too few interrupts arrived while the thread ran at EL0");
            }
            Expect::ExitZeroPreempted if stats.preemptions == 0 => {
                return Err("a thread was never preempted");
            }
            Expect::ExitZeroAfterYields(count) if stats.yields != count => {
                return Err("yield count differs");
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether one thread's end is one `expect` allows (the case fails if not,
/// whatever the other threads do).
pub fn check_end(expect: Expect, end: ThreadEnd) -> Result<(), Failure> {
    match expect {
        Expect::AnyEnd => Ok(()),
        Expect::ExitZeroOrKilled => match end {
            ThreadEnd::Exited { status: 0 } | ThreadEnd::Killed(KillReason::Policy { .. }) => {
                Ok(())
            }
            ThreadEnd::Exited { .. } => Err("a thread exited with a non-zero status"),
            ThreadEnd::Killed(_) => Err("a thread was killed for another reason"),
            ThreadEnd::Faulted { .. } => Err("a thread faulted"),
        },
        Expect::ExitStatus(want) => match status_of(end) {
            Some(status) if status == want => Ok(()),
            Some(_) => Err("a thread exited with another status"),
            None => Err("a thread faulted"),
        },
        Expect::ExitZero
        | Expect::ExitZeroWithInterrupts(_)
        | Expect::ExitZeroPreempted
        | Expect::ExitZeroAfterYields(_) => match end {
            ThreadEnd::Exited { status: 0 } => Ok(()),
            ThreadEnd::Exited { .. } => Err("a thread exited with a non-zero status"),
            ThreadEnd::Killed(_) => Err("a thread was killed"),
            ThreadEnd::Faulted { .. } => Err("a thread faulted"),
        },
        Expect::AlignmentFault => match end {
            ThreadEnd::Faulted { class, esr, .. }
                if class == ExceptionClass::DataAbortLower as u64
                    && fault_status(esr) == ALIGNMENT_FAULT =>
            {
                Ok(())
            }
            ThreadEnd::Faulted { .. } => Err("not an alignment fault"),
            _ => Err("a thread did not fault"),
        },
        Expect::Fault {
            class,
            address,
            permission,
        } => {
            let ThreadEnd::Faulted {
                class: got,
                far,
                esr,
                ..
            } = end
            else {
                return Err("a thread did not fault");
            };
            if got != class as u64 {
                return Err("wrong exception class");
            }
            if address.is_some_and(|a| a != far) {
                return Err("wrong fault address");
            }
            if permission.is_some_and(|want| want != is_permission_fault(esr)) {
                return Err("wrong fault status");
            }
            Ok(())
        }
    }
}
