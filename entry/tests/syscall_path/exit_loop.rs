//! The exit-to-user loop: re-reads work until none is pending, and is bounded.

use crate::fake::{regs, run_syscall, Event, FakeKernel, UserReturn};
use entry::{exit_to_user_mode, WorkFlags, MAX_EXIT_WORK_ROUNDS};

#[test]
fn handles_resched_then_the_notification_it_raised_then_stops() {
    let mut kernel = FakeKernel::new();
    kernel.work = WorkFlags::NEED_RESCHED;
    kernel.resched_raises = WorkFlags::NOTIFY_RESUME;
    let (_, user_return) = run_syscall(&mut kernel, &mut regs(), WorkFlags::empty());
    assert_eq!(
        user_return,
        UserReturn::Resume {
            left_pending: WorkFlags::empty()
        }
    );
    assert_eq!(
        kernel.events,
        [
            Event::Dispatched,
            Event::ReadWork,
            Event::NeedResched,
            Event::ReadWork,
            Event::NotifyResume,
            Event::ReadWork,
        ]
    );
    assert!(kernel.work.is_empty());
}

#[test]
fn reschedules_before_delivering_notifications() {
    let mut kernel = FakeKernel::new();
    kernel.work = WorkFlags::NOTIFY_RESUME | WorkFlags::NEED_RESCHED;
    let work = kernel.work;
    let left = exit_to_user_mode(&mut kernel, work);
    assert!(left.is_empty());
    assert_eq!(
        kernel.events,
        [
            Event::NeedResched,
            Event::ReadWork,
            Event::NotifyResume,
            Event::ReadWork
        ]
    );
}

#[test]
fn checks_a_restartable_sequence_after_the_reschedule_and_before_notifications() {
    let mut kernel = FakeKernel::new();
    kernel.work = WorkFlags::NOTIFY_RESUME | WorkFlags::RSEQ | WorkFlags::NEED_RESCHED;
    let work = kernel.work;
    assert!(exit_to_user_mode(&mut kernel, work).is_empty());
    assert_eq!(
        kernel.events,
        [
            Event::NeedResched,
            Event::ReadWork,
            Event::Rseq,
            Event::ReadWork,
            Event::NotifyResume,
            Event::ReadWork
        ]
    );
}

#[test]
fn with_no_exit_work_it_calls_no_hook() {
    let mut kernel = FakeKernel::new();
    let syscall_work_only = WorkFlags::TRACE | WorkFlags::AUDIT;
    assert!(exit_to_user_mode(&mut kernel, syscall_work_only).is_empty());
    assert!(kernel.events.is_empty());
}

#[test]
fn a_handler_that_never_clears_its_bit_stops_at_the_cap() {
    let mut kernel = FakeKernel::new();
    kernel.handlers_clear = false;
    kernel.work = WorkFlags::NEED_RESCHED;
    let work = kernel.work;
    let left = exit_to_user_mode(&mut kernel, work);
    assert_eq!(left, WorkFlags::NEED_RESCHED);
    let handled = kernel
        .events
        .iter()
        .filter(|e| **e == Event::NeedResched)
        .count();
    let reads = kernel
        .events
        .iter()
        .filter(|e| **e == Event::ReadWork)
        .count();
    assert_eq!(
        (handled, reads),
        (MAX_EXIT_WORK_ROUNDS, MAX_EXIT_WORK_ROUNDS)
    );
}

#[test]
fn work_left_at_the_cap_is_reported_by_the_syscall_exit() {
    let mut kernel = FakeKernel::new();
    kernel.work = WorkFlags::NEED_RESCHED;
    kernel.resched_raises = WorkFlags::NEED_RESCHED;
    let (_, user_return) = run_syscall(&mut kernel, &mut regs(), WorkFlags::empty());
    let left_pending = WorkFlags::NEED_RESCHED;
    assert_eq!(user_return, UserReturn::Resume { left_pending });
}
