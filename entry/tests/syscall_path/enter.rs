//! Entry order, and what each entry stage may do to the syscall.

use crate::fake::{
    regs, run_syscall, Event, FakeKernel, UserReturn, DENY_ERRNO, EMULATED_RESULT, RESUME,
};
use entry::{PolicyVerdict, SkipReason, SyscallEntry, SyscallRegisters, TraceEntry, WorkFlags};

const ALLOW: PolicyVerdict = PolicyVerdict::Allow;

/// Every syscall flag except SYSEMU, which would skip the syscall.
fn all_but_sysemu() -> WorkFlags {
    let mut work = WorkFlags::SYSCALL_WORK;
    work.remove(WorkFlags::SYSEMU);
    work
}

#[test]
fn all_flags_but_sysemu_run_every_stage_in_order() {
    let mut kernel = FakeKernel::new();
    let (entry, user_return) = run_syscall(&mut kernel, &mut regs(), all_but_sysemu());
    assert_eq!(entry, SyscallEntry::Dispatch);
    assert_eq!(user_return, RESUME);
    assert_eq!(
        kernel.events,
        [
            Event::UserDispatch,
            Event::TraceEntry,
            Event::Policy { number: 5, x2: 2 },
            Event::AuditRoom,
            Event::AuditEntry {
                number: 5,
                x2: 2,
                verdict: ALLOW
            },
            Event::Dispatched,
            Event::AuditExit { result: Some(0) },
            Event::TraceExit,
            Event::SingleStep,
            Event::ReadWork,
        ]
    );
}

#[test]
fn no_flags_call_no_hook_but_the_work_read() {
    let mut kernel = FakeKernel::new();
    let (entry, user_return) = run_syscall(&mut kernel, &mut regs(), WorkFlags::empty());
    assert_eq!((entry, user_return), (SyscallEntry::Dispatch, RESUME));
    assert_eq!(kernel.events, [Event::Dispatched, Event::ReadWork]);
}

#[test]
fn each_flag_alone_triggers_only_its_own_stages() {
    let policy = Event::Policy { number: 5, x2: 2 };
    let audit = Event::AuditEntry {
        number: 5,
        x2: 2,
        verdict: ALLOW,
    };
    let cases: [(WorkFlags, &[Event]); 6] = [
        (
            WorkFlags::USER_DISPATCH,
            &[Event::UserDispatch, Event::Dispatched],
        ),
        (
            WorkFlags::TRACE,
            &[Event::TraceEntry, Event::Dispatched, Event::TraceExit],
        ),
        (WorkFlags::SYSEMU, &[Event::TraceEntry]),
        (
            WorkFlags::SINGLESTEP,
            &[Event::Dispatched, Event::SingleStep],
        ),
        (WorkFlags::POLICY, &[policy, Event::Dispatched]),
        (
            WorkFlags::AUDIT,
            &[
                Event::AuditRoom,
                audit,
                Event::Dispatched,
                Event::AuditExit { result: Some(0) },
            ],
        ),
    ];
    for (flag, stages) in cases {
        let mut kernel = FakeKernel::new();
        let (_, user_return) = run_syscall(&mut kernel, &mut regs(), flag);
        assert_eq!(user_return, RESUME, "{flag:?}");
        let mut expected = stages.to_vec();
        expected.push(Event::ReadWork);
        assert_eq!(kernel.events, expected, "{flag:?}");
    }
}

/// Position of an event in the documented order.
fn stage(event: &Event) -> usize {
    match event {
        Event::UserDispatch | Event::Redirect => 1,
        Event::TraceEntry | Event::SendTraceEntryStop => 2,
        Event::Policy { .. } | Event::AskPolicyServer { .. } => 3,
        Event::AuditRoom | Event::WaitForAuditRoom => 4,
        Event::AuditEntry { .. } => 5,
        Event::Dispatched => 6,
        Event::AuditExit { .. } => 7,
        Event::TraceExit => 8,
        Event::SingleStep => 9,
        Event::ReadWork | Event::NeedResched | Event::Rseq | Event::NotifyResume => 10,
    }
}

#[test]
fn every_flag_combination_keeps_the_order_and_runs_only_flagged_stages() {
    for bits in 0..=WorkFlags::SYSCALL_WORK.bits() {
        let work = WorkFlags::from_bits_truncate(bits);
        let mut kernel = FakeKernel::new();
        let (_, user_return) = run_syscall(&mut kernel, &mut regs(), work);
        assert_eq!(user_return, RESUME, "{work:?}");
        let ranks: Vec<usize> = kernel.events.iter().map(stage).collect();
        assert!(ranks.is_sorted(), "{work:?}: {:?}", kernel.events);
        for event in &kernel.events {
            let allowed = match event {
                Event::UserDispatch | Event::Redirect => work.contains(WorkFlags::USER_DISPATCH),
                Event::TraceEntry | Event::SendTraceEntryStop => {
                    work.intersects(WorkFlags::TRACE | WorkFlags::SYSEMU)
                }
                Event::Policy { .. } | Event::AskPolicyServer { .. } => {
                    work.contains(WorkFlags::POLICY)
                }
                Event::AuditRoom
                | Event::WaitForAuditRoom
                | Event::AuditEntry { .. }
                | Event::AuditExit { .. } => work.contains(WorkFlags::AUDIT),
                Event::TraceExit => work.contains(WorkFlags::TRACE),
                Event::SingleStep => work.contains(WorkFlags::SINGLESTEP),
                Event::Dispatched | Event::ReadWork => true,
                Event::NeedResched | Event::Rseq | Event::NotifyResume => false,
            };
            assert!(allowed, "{work:?}: {event:?}");
        }
        let dispatched = kernel.events.contains(&Event::Dispatched);
        assert_eq!(dispatched, !work.contains(WorkFlags::SYSEMU), "{work:?}");
    }
}

#[test]
fn policy_and_audit_see_the_arguments_the_tracer_changed() {
    let mut kernel = FakeKernel::new();
    kernel.tracer_edit = Some((9, 99));
    let mut regs = regs();
    let work = WorkFlags::TRACE | WorkFlags::POLICY | WorkFlags::AUDIT;
    let _ = run_syscall(&mut kernel, &mut regs, work);
    assert_eq!(kernel.events[1], Event::Policy { number: 9, x2: 99 });
    assert_eq!(kernel.events[2], Event::AuditRoom);
    assert_eq!(
        kernel.events[3],
        Event::AuditEntry {
            number: 9,
            x2: 99,
            verdict: ALLOW
        }
    );
    assert_eq!(regs.syscall_number(), 9);
}

#[test]
fn denied_never_dispatches_and_audit_records_the_denial() {
    let mut kernel = FakeKernel::new();
    kernel.verdict = PolicyVerdict::Deny;
    let mut regs = regs();
    let work = WorkFlags::TRACE | WorkFlags::POLICY | WorkFlags::AUDIT | WorkFlags::SINGLESTEP;
    let (entry, user_return) = run_syscall(&mut kernel, &mut regs, work);
    assert_eq!(entry, SyscallEntry::Skipped(SkipReason::Denied));
    assert_eq!(user_return, RESUME);
    assert_eq!(regs.return_value(), DENY_ERRNO);
    let verdict = PolicyVerdict::Deny;
    assert_eq!(
        kernel.events,
        [
            Event::TraceEntry,
            Event::Policy { number: 5, x2: 2 },
            Event::AuditRoom,
            Event::AuditEntry {
                number: 5,
                x2: 2,
                verdict
            },
            Event::AuditExit {
                result: Some(DENY_ERRNO)
            },
            Event::TraceExit,
            Event::SingleStep,
            Event::ReadWork,
        ]
    );
}

#[test]
fn killed_never_dispatches_and_never_returns_to_user_mode() {
    let mut kernel = FakeKernel::new();
    kernel.verdict = PolicyVerdict::Kill;
    kernel.work = WorkFlags::NEED_RESCHED | WorkFlags::NOTIFY_RESUME;
    let (entry, user_return) = run_syscall(&mut kernel, &mut regs(), all_but_sysemu());
    assert_eq!(
        (entry, user_return),
        (SyscallEntry::Killed, UserReturn::Killed)
    );
    let verdict = PolicyVerdict::Kill;
    assert_eq!(
        kernel.events,
        [
            Event::UserDispatch,
            Event::TraceEntry,
            Event::Policy { number: 5, x2: 2 },
            Event::AuditRoom,
            Event::AuditEntry {
                number: 5,
                x2: 2,
                verdict
            },
            // Its record, without a result; no stop, no step, no exit loop.
            Event::AuditExit { result: None },
        ]
    );
}

#[test]
fn a_tracer_skip_without_sysemu_also_skips_everything_after_the_stop() {
    let mut kernel = FakeKernel::new();
    kernel.trace_stop = TraceEntry::Skip;
    let mut regs = regs();
    let work = WorkFlags::TRACE | WorkFlags::POLICY | WorkFlags::AUDIT | WorkFlags::SINGLESTEP;
    let (entry, _) = run_syscall(&mut kernel, &mut regs, work);
    assert_eq!(entry, SyscallEntry::Skipped(SkipReason::Emulated));
    assert_eq!(regs.return_value(), EMULATED_RESULT);
    assert_eq!(kernel.events, [Event::TraceEntry, Event::ReadWork]);
}

#[test]
fn a_redirect_by_user_dispatch_runs_nothing_else() {
    let mut kernel = FakeKernel::new();
    kernel.redirect = true;
    let mut regs = regs();
    let (entry, user_return) = run_syscall(&mut kernel, &mut regs, WorkFlags::SYSCALL_WORK);
    assert_eq!(entry, SyscallEntry::Skipped(SkipReason::Redirected));
    assert_eq!(user_return, RESUME);
    assert_eq!(regs.instruction_pointer(), 0x4000);
    assert_eq!(
        kernel.events,
        [Event::UserDispatch, Event::Redirect, Event::ReadWork]
    );
}
