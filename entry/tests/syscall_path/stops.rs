//! Stopped syscalls: a stage that waits for user space ends the pass, and
//! the resumed pass runs that stage again and only the later ones.

use crate::fake::{
    regs, resume, Event, FakeKernel, FakeRegs, UserReturn, ASKING_FILTER, DISPATCH_RESULT,
};
use entry::{
    EntryStep, EntryStop, PolicyVerdict, SkipReason, SyscallEnter, SyscallEntry, SyscallRegisters,
    TraceEntry, WorkFlags,
};

/// Runs the entry of one syscall to its end, answering each stop as
/// `answer` says before resuming; returns the entry's outcome and every
/// stop it met.
fn enter_answering(
    kernel: &mut FakeKernel,
    regs: &mut FakeRegs,
    work: WorkFlags,
    answer: impl Fn(&mut FakeKernel, EntryStop),
) -> (SyscallEntry, Vec<EntryStop>) {
    kernel.work.insert(work);
    let mut stops = Vec::new();
    let mut entry = kernel.enter(regs, SyscallEnter::start(work));
    while let SyscallEntry::Stopped(stop) = entry {
        assert!(
            stops.len() < 8,
            "a stop that is answered must not come back"
        );
        stops.push(stop);
        answer(kernel, stop);
        entry = resume(kernel, regs, work, stop);
    }
    (entry, stops)
}

/// The answers that let a stopped syscall go on as it would have.
fn answer_go_on(kernel: &mut FakeKernel, stop: EntryStop) {
    match stop {
        EntryStop::TraceEntry => kernel.trace_stop = TraceEntry::Continue,
        EntryStop::Policy => kernel.ask = false,
        EntryStop::AuditEntry(_) => kernel.audit_wait = false,
    }
}

#[test]
fn a_trace_stop_ends_the_pass_before_anything_else_runs() {
    let mut kernel = FakeKernel::new();
    kernel.trace_stop = TraceEntry::Stop;
    let mut work = WorkFlags::SYSCALL_WORK;
    work.remove(WorkFlags::SYSEMU);
    kernel.work = work;
    let entry = kernel.enter(&mut regs(), SyscallEnter::start(work));
    assert_eq!(entry, SyscallEntry::Stopped(EntryStop::TraceEntry));
    assert_eq!(
        kernel.events,
        [
            Event::UserDispatch,
            Event::TraceEntry,
            Event::SendTraceEntryStop
        ]
    );
}

#[test]
fn a_stopped_syscall_runs_no_exit_stage_and_no_exit_loop() {
    let mut kernel = FakeKernel::new();
    kernel.work = WorkFlags::NEED_RESCHED;
    for stop in [
        EntryStop::TraceEntry,
        EntryStop::Policy,
        EntryStop::AuditEntry(PolicyVerdict::Allow),
    ] {
        let user_return = kernel.exit(
            &mut regs(),
            SyscallEntry::Stopped(stop),
            WorkFlags::SYSCALL_WORK,
        );
        assert_eq!(user_return, UserReturn::Stopped);
    }
    assert_eq!(kernel.events, []);
}

#[test]
fn resuming_runs_the_stopped_stage_again_and_never_an_earlier_one() {
    let mut kernel = FakeKernel::new();
    kernel.trace_stop = TraceEntry::Stop;
    kernel.ask = true;
    kernel.audit_wait = true;
    let work = WorkFlags::USER_DISPATCH | WorkFlags::TRACE | WorkFlags::POLICY | WorkFlags::AUDIT;
    let (entry, stops) = enter_answering(&mut kernel, &mut regs(), work, answer_go_on);
    assert_eq!(entry, SyscallEntry::Dispatch);
    assert_eq!(
        stops,
        [
            EntryStop::TraceEntry,
            EntryStop::Policy,
            EntryStop::AuditEntry(PolicyVerdict::Allow)
        ]
    );
    let policy = Event::Policy { number: 5, x2: 2 };
    let audit = Event::AuditEntry {
        number: 5,
        x2: 2,
        verdict: PolicyVerdict::Allow,
    };
    // Each stopped stage is asked again, its stop sent once; the record
    // is written once, after the wait.
    assert_eq!(
        kernel.events,
        [
            Event::UserDispatch,
            Event::TraceEntry,
            Event::SendTraceEntryStop,
            Event::TraceEntry,
            policy,
            Event::AskPolicyServer {
                filter: ASKING_FILTER
            },
            policy,
            Event::AuditRoom,
            Event::WaitForAuditRoom,
            Event::AuditRoom,
            audit,
            Event::Dispatched,
        ]
    );
}

#[test]
fn every_combination_of_flags_and_stops_ends_as_the_unstopped_syscall() {
    // For every work word and every set of stages that stop once, the
    // stages that run (counting a stopped stage once) and the outcome are
    // those of the same syscall with no stop.
    let stages = [
        (WorkFlags::TRACE | WorkFlags::SYSEMU, 0),
        (WorkFlags::POLICY, 1),
        (WorkFlags::AUDIT, 2),
    ];
    for bits in 0..=WorkFlags::SYSCALL_WORK.bits() {
        let work = WorkFlags::from_bits_truncate(bits);
        for verdict in [
            PolicyVerdict::Allow,
            PolicyVerdict::Deny,
            PolicyVerdict::Kill,
        ] {
            let mut plain = FakeKernel::new();
            plain.verdict = verdict;
            plain.work.insert(work);
            let mut plain_regs = regs();
            let expected = plain.enter(&mut plain_regs, SyscallEnter::start(work));
            for stopping in 0..8u8 {
                let mut kernel = FakeKernel::new();
                kernel.verdict = verdict;
                kernel.trace_stop = if stopping & 1 != 0 {
                    TraceEntry::Stop
                } else {
                    TraceEntry::Continue
                };
                kernel.ask = stopping & 2 != 0;
                kernel.audit_wait = stopping & 4 != 0;
                let mut stopped_regs = regs();
                let (entry, stops) =
                    enter_answering(&mut kernel, &mut stopped_regs, work, answer_go_on);
                assert_eq!(entry, expected, "{work:?} {verdict:?} {stopping}");
                // One stop sent per stop met, and nothing else in a stop's
                // place: without the stops, and counting a stage asked
                // again once, the events are the unstopped syscall's.
                let sent = kernel.events.iter().filter(|e| e.is_stop()).count();
                assert_eq!(sent, stops.len(), "{work:?} {verdict:?} {stopping}");
                let mut events: Vec<Event> = kernel
                    .events
                    .iter()
                    .copied()
                    .filter(|e| !e.is_stop())
                    .collect();
                events.dedup();
                assert_eq!(events, plain.events, "{work:?} {verdict:?} {stopping}");
                assert_eq!(stopped_regs.x, plain_regs.x);
                for stop in &stops {
                    let (flags, index) = match stop {
                        EntryStop::TraceEntry => stages[0],
                        EntryStop::Policy => stages[1],
                        EntryStop::AuditEntry(_) => stages[2],
                    };
                    assert!(work.intersects(flags), "{work:?}: {stop:?}");
                    assert!(stopping & (1 << index) != 0, "{stop:?} was not asked for");
                }
            }
        }
    }
}

#[test]
fn a_syscall_skipped_at_its_answered_entry_stop_runs_nothing_after_it() {
    let mut kernel = FakeKernel::new();
    kernel.trace_stop = TraceEntry::Stop;
    let mut regs = regs();
    let work = WorkFlags::TRACE | WorkFlags::POLICY | WorkFlags::AUDIT;
    let (entry, _) = enter_answering(&mut kernel, &mut regs, work, |kernel, _| {
        kernel.trace_stop = TraceEntry::Skip;
    });
    assert_eq!(entry, SyscallEntry::Skipped(SkipReason::Emulated));
    assert_eq!(
        kernel.events,
        [
            Event::TraceEntry,
            Event::SendTraceEntryStop,
            Event::TraceEntry
        ]
    );
}

#[test]
fn a_verdict_given_after_a_stop_is_the_one_audit_and_the_exit_see() {
    let mut kernel = FakeKernel::new();
    kernel.ask = true;
    let mut regs = regs();
    let work = WorkFlags::POLICY | WorkFlags::AUDIT | WorkFlags::TRACE;
    kernel.trace_stop = TraceEntry::Continue;
    let (entry, _) = enter_answering(&mut kernel, &mut regs, work, |kernel, _| {
        // The server refuses: the policy hook writes its error this time.
        kernel.ask = false;
        kernel.verdict = PolicyVerdict::Deny;
    });
    assert_eq!(entry, SyscallEntry::Skipped(SkipReason::Denied));
    let user_return = kernel.exit(&mut regs, entry, work);
    assert_eq!(
        user_return,
        UserReturn::Resume {
            left_pending: WorkFlags::empty()
        }
    );
    assert!(kernel.events.contains(&Event::AuditEntry {
        number: 5,
        x2: 2,
        verdict: PolicyVerdict::Deny
    }));
    assert!(kernel.events.contains(&Event::AuditExit {
        result: Some(crate::fake::DENY_ERRNO)
    }));
    assert!(kernel.events.contains(&Event::TraceExit));
    assert_ne!(regs.return_value(), DISPATCH_RESULT);
}

#[test]
fn each_stop_says_what_to_send_and_the_resumed_pass_asks_its_stage_again() {
    let work = WorkFlags::SYSCALL_WORK;
    let enter = SyscallEnter::start(work).0;
    assert_eq!(
        enter.trace_entry(TraceEntry::Stop),
        EntryStep::SendTraceEntryStop
    );
    assert_eq!(
        enter.policy(entry::PolicyDecision::Ask { filter: 3 }),
        EntryStep::AskPolicyServer { filter: 3 }
    );
    let deny = PolicyVerdict::Deny;
    assert_eq!(
        enter.audit_room(deny, entry::AuditRoom::Full),
        EntryStep::WaitForAuditRoom(deny)
    );
    for (stop, asked) in [
        (EntryStop::TraceEntry, EntryStep::TraceEntry),
        (EntryStop::Policy, EntryStep::Policy),
        (EntryStop::AuditEntry(deny), EntryStep::AuditRoom(deny)),
    ] {
        assert_eq!(SyscallEnter::resume(work, stop).1, asked);
    }
    // The stop steps end the pass as the stop they are.
    assert_eq!(
        EntryStep::WaitForAuditRoom(deny).entry(),
        Some(SyscallEntry::Stopped(EntryStop::AuditEntry(deny)))
    );
    assert_eq!(EntryStep::Policy.entry(), None);
}
