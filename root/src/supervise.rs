//! Supervision: the root waits on its endpoint, where the faults and
//! ends of every task without a fault handler of its own arrive, badged
//! with the task's index + 1. It prints how each ended, rebuilds the
//! task if its restart rule says so, and ends the system when a task
//! marked `ends_system` has ended for good, or when every task has.
//! Control requests (`abi::control`) come on the same endpoint, badged
//! `CONTROL_BADGE` | the asker's index + 1 (`crate::control`).

use crate::control::ReceiveSlot;
use crate::tasks::System;
use abi::control::CONTROL_BADGE;
use abi::fault::{ThreadEnd, END_LABEL, FAULT_LABEL, FAULT_REPLY_STOP};
use abi::system::plan::{Restart, TaskPlan};
use abi::Syscall;
use sdk::ipc::{self, Message};
use sdk::println;

/// Supervises until the system ends; returns its status.
// A frame of its own: inlined, every step's locals would share
// one frame bigger than the root's 128 KiB stack.
#[inline(never)]
pub fn run(system: &mut System) -> i32 {
    let Some(mut receive) = ReceiveSlot::new(system) else {
        println!("system: the root's CNode is full");
        return 1;
    };
    loop {
        let received = match ipc::recv(system.endpoint) {
            Ok(received) => received,
            Err(error) => {
                println!("system: the supervisor's endpoint failed: {}", error.name());
                return 1;
            }
        };
        let control = received.badge & CONTROL_BADGE != 0;
        let plan_index = (received.badge & !CONTROL_BADGE)
            .checked_sub(1)
            .and_then(|i| u16::try_from(i).ok());
        let Some((index, plan)) =
            plan_index.and_then(|i| Some((usize::from(i), system.plan.task(i)?)))
        else {
            println!(
                "system: a message with badge {:#x} on the supervisor's endpoint; ignored",
                received.badge
            );
            continue;
        };
        if control {
            if let Some(status) = crate::control::serve(system, &mut receive, index, &received) {
                return status;
            }
            continue;
        }
        let message = received.message;
        match message.info.label() {
            FAULT_LABEL => {
                // Stopped: the kernel then sends its end (faulted), which
                // is where the restart rule is applied.
                let _ = ipc::reply(&Message::new(FAULT_REPLY_STOP, &[]));
            }
            END_LABEL => {
                let Some(end) = sdk::supervision::end_of(&message) else {
                    continue;
                };
                // An end is reported once: a task that ended for good and
                // was run again by a holder of its TCB is not the root's.
                if system.built(index).is_some_and(|built| built.ended) {
                    continue;
                }
                if let Some(status) = ended(system, index, &plan, end) {
                    return status;
                }
            }
            label => println!(
                "system: an unexpected message (label {label:#x}) from {}; ignored",
                plan.name
            ),
        }
    }
}

/// Task `index` ended as `end`: says so, applies its restart rule, and
/// returns the system's status if the system ends.
// A frame of its own: inlined, every step's locals would share
// one frame bigger than the root's 128 KiB stack.
#[inline(never)]
fn ended(
    system: &mut System,
    index: usize,
    plan: &TaskPlan<'static>,
    end: ThreadEnd,
) -> Option<i32> {
    let failed = !matches!(end, ThreadEnd::Exited { status: 0 });
    let restarts = system.built(index).map_or(0, |b| b.restarts);
    let (restart, max) = match plan.restart {
        Restart::Never => (false, 0),
        Restart::OnFault { max } => (
            !matches!(end, ThreadEnd::Exited { .. }) && restarts < max,
            max,
        ),
        Restart::Always { max } => (restarts < max, max),
    };
    let restart = restart && plan.privileged.is_none();
    if restart {
        println!(
            "system: {} {}; restarting it ({} of {max})",
            plan.name,
            How(end),
            restarts + 1
        );
    } else {
        println!("system: {} {}", plan.name, How(end));
    }
    let mut failed = failed;
    if restart {
        match system.rebuild(index) {
            Ok(()) => return None,
            // It stays ended; the system goes on unless its end ends it.
            Err(failure) => {
                println!("system: {failure}");
                failed = true;
            }
        }
    }
    if let Some(built) = system.tasks.get_mut(index).and_then(Option::as_mut) {
        built.ended = true;
        built.failed = failed;
    }
    let status = match end {
        ThreadEnd::Exited { status } if !failed => i32::try_from(status).unwrap_or(1),
        _ => 1,
    };
    after_end(system, index, status)
}

/// Task `index` has ended for good (`status`: the system's status if its
/// end ends the system): the system's status if the system ends now,
/// because the task says so or because every supervised task has ended.
pub fn after_end(system: &System, index: usize, status: i32) -> Option<i32> {
    let plan = system.plan.task(index as u16)?;
    if plan.ends_system {
        println!("system: {} ended the system (status {status})", plan.name);
        return Some(status);
    }
    // Only the tasks the root supervises report their end to it; a task
    // a failed rebuild left unbuilt has ended, failed.
    let supervised = |i: usize| {
        system
            .plan
            .task(i as u16)
            .is_some_and(|task| task.fault_handler.is_none())
    };
    let mut all_ended = true;
    let mut any_failed = false;
    for (i, built) in system.tasks.iter().enumerate() {
        if !supervised(i) {
            continue;
        }
        match built {
            Some(built) => {
                all_ended &= built.ended;
                any_failed |= built.failed;
            }
            None => any_failed = true,
        }
    }
    if all_ended {
        println!("system: every task has ended");
        return Some(i32::from(any_failed));
    }
    None
}

/// How a thread ended, for a console line.
struct How(ThreadEnd);

impl core::fmt::Display for How {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use abi::fault::KillReason;
        match self.0 {
            ThreadEnd::Exited { status } => write!(f, "exited with status {status}"),
            ThreadEnd::Killed(KillReason::Policy {
                filter,
                rule,
                syscall,
                by_server,
            }) => {
                let call = Syscall::from_number(syscall).map_or("an unknown syscall", |s| s.name());
                if by_server {
                    write!(
                        f,
                        "was killed by its policy server (filter {filter}, rule {rule}, at {call})"
                    )
                } else {
                    write!(
                        f,
                        "was killed by a Kill rule (filter {filter}, rule {rule}, at {call})"
                    )
                }
            }
            ThreadEnd::Killed(reason) => write!(f, "was killed ({reason:?})"),
            ThreadEnd::Faulted { class, far, pc, .. } => write!(
                f,
                "faulted (exception class {class:#x}, address {far:#x}, pc {pc:#x})"
            ),
        }
    }
}
