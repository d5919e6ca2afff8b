//! The trace-only lane (`Kernel::syscall_traced`, `Kernel::continue_traced`)
//! against the entry machine (`Kernel::syscall_by_machine`): a syscall of
//! a thread whose only syscall work is tracing leaves the same state
//! either way, at its entry stop and after every answer its tracer can
//! give.

use super::*;

/// The syscalls the lane tests make: returning ones, one that yields, one
/// that blocks (a `Call` to the tracer's endpoint, where nobody receives)
/// and one that ends its thread.
const NUMBERS: [Syscall; 6] = [
    Syscall::Null,
    Syscall::Poll,
    Syscall::DebugPrint,
    Syscall::Yield,
    Syscall::Call,
    Syscall::Exit,
];

/// A tracer's answer to an entry stop, as `ipc::trace_stop::answer_trace_stop`
/// applies it to the stopped call.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Continue,
    /// New number and `x0`.
    Modify(Syscall, u64),
    /// Skipped: this result in `x0`.
    Skip(u64),
    Detach,
}

/// A traced thread (tracing its only work) about to make `number`.
fn traced_scene(number: Syscall) -> Scene {
    let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).traced();
    assert_eq!(scene.thread().work, WorkFlags::TRACE);
    let thread = scene.thread;
    let context = &mut scene.kernel.objects[thread].context;
    context.set_syscall_number(number.number());
    // The `Call`'s endpoint; `Poll`'s notification; `DebugPrint`'s text
    // of length 0.
    let x0 = if number == Syscall::Call {
        TRACER
    } else {
        SIGNAL
    };
    context.set_arg(entry::ArgIndex::X0, x0);
    context.set_arg(entry::ArgIndex::X2, 2);
    context.pc = 0x1004;
    scene
}

/// A new syscall stops at its entry the same way by the lane
/// (`Kernel::syscall`, which routes it there) as by the machine.
#[test]
fn a_traced_syscall_stops_at_its_entry_by_the_trace_only_lane_as_by_the_entry_machine() {
    for number in NUMBERS {
        let mut states = Vec::new();
        for by_lane in [true, false] {
            let mut scene = traced_scene(number);
            let thread = scene.thread;
            let machine = &mut scene.machine;
            if by_lane {
                let _ = scene.kernel.syscall(machine, thread, SVC);
            } else {
                scene.kernel.objects[thread].stats.count_syscall();
                scene.kernel.syscall_by_machine(machine, thread, SVC, None);
                let _ = scene.kernel.resume(machine);
            }
            assert_eq!(scene.trace_stop(), Some(StopKind::Entry), "{number:?}");
            assert_eq!(
                scene.stopped_at(),
                Some(CallStop::Entry(EntryStop::TraceEntry)),
                "{number:?}"
            );
            states.push(scene.lane_state());
        }
        assert_eq!(states[0], states[1], "{number:?}");
    }
}

/// The call a traced syscall keeps at its entry stop is
/// `CallSlot::TRACE_ENTRY` with the syscall's `x0..x8` and ESR: what the
/// trace fast path (`trace_fast_path.s`) copies and writes in its place.
#[test]
fn a_traced_entry_stop_keeps_the_trace_fast_paths_call() {
    for number in NUMBERS {
        let mut scene = traced_scene(number);
        let thread = scene.thread;
        let regs = scene.kernel.objects[thread].context.syscall_registers();
        let _ = scene.kernel.syscall(&mut scene.machine, thread, SVC);
        let mut expected = CallSlot::TRACE_ENTRY;
        let call = expected.as_mut().expect("a stopped call");
        call.regs = regs;
        call.esr = SVC;
        assert_eq!(scene.kernel.objects[thread].call, expected, "{number:?}");
        assert_eq!(scene.kernel.objects[thread].trace.number, number.number());
    }
}

/// Work the thread gains or loses while it waits at its entry stop (by
/// another thread's syscall, or its tracer's answer).
#[derive(Clone, Copy, Debug)]
enum Change {
    None,
    /// Single-stepping switched on (the tracer's "step").
    StepOn,
    /// Single-stepping it had at the stop switched off.
    StepOff,
    Sysemu,
    Audited(AuditMode),
    Filtered,
    /// Exit work: a reschedule, a notify-resume, an rseq event.
    Exit(WorkFlags),
    /// The tracer detached (`TcbDetachTracer`) after its answer.
    Detached,
}

const CHANGES: [Change; 10] = [
    Change::None,
    Change::StepOn,
    Change::StepOff,
    Change::Sysemu,
    Change::Audited(AuditMode::Lossless),
    Change::Audited(AuditMode::Lossy),
    Change::Filtered,
    Change::Exit(WorkFlags::NEED_RESCHED),
    Change::Exit(WorkFlags::NOTIFY_RESUME),
    Change::Exit(WorkFlags::RSEQ),
];

/// After each answer the tracer can give to the entry stop, whatever
/// work the thread gained or lost while it waited, the call goes on by
/// `continue_call` (the lane, when tracing is still its only work) as by
/// the machine: the same state, records, stops and requests, for every
/// syscall (one that returns, yields, blocks or ends), the exit stop sent
/// (or not) once the thread is on its way back to EL0.
#[test]
fn a_tracer_answer_goes_on_by_the_trace_only_lane_as_by_the_entry_machine() {
    let answers = [
        Answer::Continue,
        Answer::Modify(Syscall::Null, 9),
        Answer::Modify(Syscall::Poll, SIGNAL),
        Answer::Skip(77),
        Answer::Detach,
    ];
    let (mut lane_taken, mut exit_stops) = (0, 0);
    for number in NUMBERS {
        for answer in answers {
            for change in CHANGES.into_iter().chain([Change::Detached]) {
                let mut states = Vec::new();
                for by_lane in [true, false] {
                    let mut scene = traced_scene(number);
                    if let Change::StepOff = change {
                        scene.kernel.objects[scene.thread].set_single_step(true);
                    }
                    scene.syscall_as_made();
                    scene = scene.changed(change);
                    scene.tracer_answers(answer);
                    let thread = scene.thread;
                    if let Change::Detached = change {
                        scene.kernel.objects[thread].detach_tracer();
                    }
                    // As `pick_resume` finds it: the thread runs.
                    scene.kernel.current = Some(thread);
                    scene.kernel.objects[thread].run();
                    let work = scene.thread().work.intersection(WorkFlags::SYSCALL_WORK);
                    let machine = &mut scene.machine;
                    if by_lane {
                        lane_taken += usize::from(work == WorkFlags::TRACE);
                        // Routed by its work as it is now.
                        let _ = scene.kernel.continue_call(machine, thread);
                    } else {
                        // `continue_call`'s own steps, then the machine.
                        let t = &mut scene.kernel.objects[thread];
                        let call = t.call.as_ref().expect("a stopped call");
                        let (regs, esr, resumed) = (call.regs, call.esr, call.resumed());
                        t.context.set_syscall_registers(&regs);
                        t.call.clear();
                        scene
                            .kernel
                            .syscall_by_machine(machine, thread, esr, Some(&resumed));
                    }
                    let _ = scene.kernel.resume(machine);
                    let t = scene.thread();
                    let asks = t.policy_request().map(|request| request.filter);
                    let pending = t.audit_pending.is_some();
                    let mut records = scene.records();
                    for record in &mut records {
                        record.time = 0;
                    }
                    let stop = scene.trace_stop();
                    if change_is_none(change) {
                        exit_stops += usize::from(stop == Some(StopKind::Exit));
                    }
                    states.push((scene.lane_state(), stop, asks, pending, records));
                }
                assert_eq!(
                    states[0], states[1],
                    "{answer:?} to {number:?} after {change:?}"
                );
            }
        }
    }
    // The lane was not checked on nothing: it took every case whose
    // syscall work stayed tracing alone, all answers but a detach after
    // no change, stepping switched off, or exit work (5 changes).
    assert_eq!(lane_taken, NUMBERS.len() * 4 * 5);
    // With nothing changed, both ways, every continued or modified call
    // that returns gets its exit stop: `Null`, `Poll`, `DebugPrint` and
    // `Yield` continued (4), and every number modified into `Null` or
    // `Poll` (12); not a skip, a detach, a call that blocks or one that
    // ends its thread.
    assert_eq!(exit_stops, 2 * (4 + 12));
}

fn change_is_none(change: Change) -> bool {
    matches!(change, Change::None)
}

impl Scene {
    /// The thread, stopped, gains or loses `change`'s work.
    fn changed(mut self, change: Change) -> Scene {
        let thread = self.thread;
        let t = &mut self.kernel.objects[thread];
        match change {
            Change::None | Change::Detached => {}
            Change::StepOn => t.set_single_step(true),
            Change::StepOff => t.set_single_step(false),
            Change::Sysemu => {
                t.work.insert(WorkFlags::SYSEMU);
                t.recompute_no_entry_work();
            }
            Change::Exit(work) => t.work.insert(work),
            Change::Audited(mode) => return self.audited_in(mode),
            Change::Filtered => return self.filtered(),
        }
        self
    }

    /// The thread's syscall as set up, taken as the vector takes it.
    fn syscall_as_made(&mut self) {
        let _ = super::super::test_kernel::svc_as_the_vector_takes_it(
            &mut self.kernel,
            &mut self.machine,
            self.thread,
            SVC,
        );
        assert_eq!(self.trace_stop(), Some(StopKind::Entry));
    }

    /// The tracer's `answer` to the entry stop the thread waits at,
    /// applied as `ipc::trace_stop::answer_trace_stop` applies it; the
    /// thread is ready afterwards and nothing runs.
    fn tracer_answers(&mut self, answer: Answer) {
        let thread = self.thread;
        assert!(self.kernel.objects[thread].take_trace_stop().is_some());
        self.kernel.cancel_wait(thread);
        let t = &mut self.kernel.objects[thread];
        let call = t.call.as_mut().expect("a stopped call");
        call.answer = Some(StopAnswer::TraceContinue);
        match answer {
            Answer::Continue => {}
            Answer::Modify(number, x0) => {
                call.regs[8] = number.number();
                call.regs[0] = x0;
            }
            Answer::Skip(x0) => {
                call.regs[0] = x0;
                call.answer = Some(StopAnswer::TraceSkip);
            }
            Answer::Detach => t.detach_tracer(),
        }
        t.make_ready();
        self.kernel.current = None;
    }
}

/// A traced thread whose exit stop was answered owes its tracer nothing:
/// it goes back to EL0 as it is (`Kernel::as_it_is`), its tracing left
/// alone. A tracer whose endpoint went meanwhile is then found gone at
/// the thread's next stop: that syscall runs as made, untraced, and the
/// tracer is detached.
#[test]
fn a_traced_thread_that_owes_nothing_goes_back_as_it_is_and_a_gone_tracer_is_found_at_its_next_stop(
) {
    let mut scene = traced_scene(Syscall::Null);
    scene.syscall_as_made();
    scene.tracer_continues();
    assert_eq!(scene.trace_stop(), Some(StopKind::Exit));
    // The exit stop answered, the tracer's endpoint gone before the
    // thread is back.
    let thread = scene.thread;
    assert!(scene.kernel.objects[thread].take_trace_stop().is_some());
    scene.kernel.cancel_wait(thread);
    scene.kernel.make_ready(thread);
    scene.kernel.current = None;
    let cnode = scene.cnode;
    super::super::test_kernel::delete_and_reap(&mut scene.kernel, cnode, TRACER);
    let back = scene.kernel.resume(&mut scene.machine);
    assert!(matches!(back, crate::kernel::Resume::User { .. }));
    assert_eq!(scene.kernel.current, Some(thread));
    assert_eq!(scene.thread().trace, TraceProgress::NONE, "nothing owed");
    assert!(
        scene.thread().work.contains(WorkFlags::TRACE),
        "not detached on the way back: at the next stop"
    );
    // The next syscall finds the tracer gone: no stop, run as made.
    let before = scene.thread().stats.counts();
    scene.syscall(Syscall::Null);
    assert_eq!(scene.trace_stop(), None);
    assert_eq!(scene.thread().call, CallSlot::Empty);
    assert_eq!(scene.thread().tracer, None);
    assert!(!scene.thread().work.contains(WorkFlags::TRACE));
    assert_eq!(scene.thread().context.result(), ErrorCode::Ok.raw());
    assert_ne!(scene.thread().stats.counts(), before, "the syscall ran");
    assert_eq!(scene.kernel.current, Some(thread));
}
