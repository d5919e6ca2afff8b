//! Restartable sequences and the time-slice extension (issue 21,
//! docs/rseq.md) on the kernel of the tests above: registration, the
//! events that restart a section and those that do not, the check's place
//! before any trace report, bad areas ending only their thread, and the
//! extension granted, yielded and overrun.

use super::*;
use abi::rseq::{
    Descriptor, CPU_ID, CPU_ID_START, CPU_ID_UNREGISTERED, CRITICAL_SECTION, REGISTER, SLICE,
    SLICE_GRANTED, SLICE_REQUEST, UNREGISTER,
};
use abi::trace::{TRACE_ENTRY, TRACE_EXIT, TRACE_REPLY_RESULT, TRACE_REPLY_STEP, TRACE_STEP};
use entry::WorkFlags;

/// The root's area and descriptor, another thread's, in the data page.
const AREA: u64 = DATA + 0x900;
const DESCRIPTOR: u64 = DATA + 0x940;
const OTHER_AREA: u64 = DATA + 0x980;
const OTHER_DESCRIPTOR: u64 = DATA + 0x9c0;
/// The section: eight instructions of the code page.
const START: u64 = CODE + 0x100;
const LENGTH: u64 = 0x20;
/// The abort address, with the signature in the word before it (in the
/// data page, which the tests can write; the kernel only reads it).
const ABORT: u64 = DATA + 0xa04;
const SIGNATURE: u32 = 0xd428_bc00;
/// A software-step exception from EL0.
const STEP_ESR: u64 = 0x32 << 26;

fn section() -> Descriptor {
    Descriptor {
        version: 0,
        flags: 0,
        start: START,
        post_commit_offset: LENGTH,
        abort: ABORT,
    }
}

impl Harness {
    /// `SetRseq` from the current thread.
    fn set_rseq(&mut self, area: u64, signature: u64, operation: u64) -> u64 {
        self.syscall(Syscall::SetRseq.number(), [0, area, signature, operation])
    }

    /// The current thread registers `area`, its descriptor at
    /// `descriptor` describes `section`, and it runs at `pc` with the
    /// descriptor in its area (inside its section if `pc` is).
    fn in_section(&mut self, area: u64, descriptor: u64, section: Descriptor, pc: u64) {
        self.poke(ABORT - 4, &SIGNATURE.to_le_bytes());
        assert_eq!(
            self.set_rseq(area, u64::from(SIGNATURE), REGISTER),
            ErrorCode::Ok.raw(),
            "{}",
            self.machine.console
        );
        self.enter(area, descriptor, section, pc);
    }

    /// `in_section` for a traced thread: its `SetRseq` stops at entry
    /// and exit, and the tracer (more urgent, waiting in its `Recv`)
    /// continues it.
    fn traced_in_section(&mut self, tracee: ThreadId, pc: u64) {
        self.poke(ABORT - 4, &SIGNATURE.to_le_bytes());
        let (area, signature) = (OTHER_AREA, u64::from(SIGNATURE));
        assert_eq!(self.set_rseq(area, signature, REGISTER), u64::MAX);
        for stop in [TRACE_ENTRY, TRACE_EXIT] {
            assert_eq!(self.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), 0);
            assert_eq!(received_label(self), stop);
            assert_eq!(self.reply_continue(), 0);
        }
        assert_eq!(self.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
        assert_eq!(self.kernel.current(), Some(tracee));
        assert_eq!(self.context().x[0], ErrorCode::Ok.raw());
        self.enter(OTHER_AREA, OTHER_DESCRIPTOR, section(), pc);
    }

    /// As `in_section`, already registered.
    fn enter(&mut self, area: u64, descriptor: u64, section: Descriptor, pc: u64) {
        self.poke(descriptor, &section.to_bytes());
        self.poke(area + CRITICAL_SECTION, &descriptor.to_le_bytes());
        self.context().pc = pc;
    }

    fn peek_u64(&self, thread: ThreadId, va: u64) -> u64 {
        let mut bytes = [0u8; 8];
        self.kernel
            .thread_space(thread)
            .expect("a space")
            .copy_from_user(&self.machine, va, &mut bytes)
            .expect("readable");
        u64::from_le_bytes(bytes)
    }

    fn peek_u32(&self, thread: ThreadId, va: u64) -> u32 {
        self.peek_u64(thread, va) as u32
    }
}

#[test]
fn registration_writes_the_cpu_ids_and_refuses_what_it_cannot_use() {
    let mut h = Harness::start();
    let root = h.kernel.current().unwrap();
    let signature = u64::from(SIGNATURE);
    h.poke(AREA, &[0xff; 8]);
    let invalid_address = ErrorCode::InvalidAddress.raw();
    let invalid_argument = ErrorCode::InvalidArgument.raw();
    assert_eq!(h.set_rseq(AREA + 8, signature, REGISTER), invalid_address);
    assert_eq!(h.set_rseq(0x10_0000, signature, REGISTER), invalid_address);
    assert_eq!(
        h.set_rseq(CODE + 0x800, signature, REGISTER),
        invalid_address,
        "the code page is not writable"
    );
    assert_eq!(h.set_rseq(!31, signature, REGISTER), invalid_address);
    assert_eq!(h.set_rseq(AREA, signature, 2), invalid_argument);
    assert_eq!(h.set_rseq(AREA, 1 << 32, REGISTER), invalid_argument);
    assert_eq!(
        h.syscall(Syscall::SetRseq.number(), [1, AREA, signature, REGISTER]),
        invalid_argument,
        "x0 is reserved"
    );
    assert_eq!(h.peek_u32(root, AREA + CPU_ID), u32::MAX, "nothing written");

    assert_eq!(h.set_rseq(AREA, signature, REGISTER), ErrorCode::Ok.raw());
    assert_eq!(h.peek_u32(root, AREA + CPU_ID_START), 0);
    assert_eq!(h.peek_u32(root, AREA + CPU_ID), 0);
    assert_eq!(h.set_rseq(AREA, signature, REGISTER), invalid_argument);
    assert_eq!(
        h.set_rseq(OTHER_AREA, signature, REGISTER),
        invalid_argument
    );
    assert_eq!(
        h.set_rseq(AREA, signature + 1, UNREGISTER),
        invalid_argument
    );
    assert_eq!(
        h.set_rseq(OTHER_AREA, signature, UNREGISTER),
        invalid_argument
    );
    assert_eq!(h.set_rseq(AREA, signature, UNREGISTER), ErrorCode::Ok.raw());
    assert_eq!(h.peek_u32(root, AREA + CPU_ID), CPU_ID_UNREGISTERED);
    assert_eq!(h.set_rseq(AREA, signature, UNREGISTER), invalid_argument);
    assert_eq!(
        h.set_rseq(OTHER_AREA, signature, REGISTER),
        ErrorCode::Ok.raw()
    );
    assert!(h.kernel.thread(root).work().is_empty());
}

#[test]
fn a_thread_preempted_inside_its_section_resumes_at_the_abort_address() {
    let mut h = Harness::start();
    let root = h.kernel.current().unwrap();
    h.child(100, 0, NO_CAP);
    for offset in (0..LENGTH).step_by(4) {
        h.in_section(AREA, DESCRIPTOR, section(), START + offset);
        h.tick();
        assert_ne!(h.kernel.current(), Some(root), "preempted");
        assert!(h.kernel.thread(root).work().contains(WorkFlags::RSEQ));
        h.tick();
        assert_eq!(h.kernel.current(), Some(root));
        assert_eq!(h.context().pc, ABORT, "offset {offset:#x}");
        assert_eq!(h.peek_u64(root, AREA + CRITICAL_SECTION), 0);
        assert!(h.kernel.thread(root).work().is_empty());
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(
            h.set_rseq(AREA, u64::from(SIGNATURE), UNREGISTER),
            ErrorCode::Ok.raw()
        );
    }
    // Outside (the commit done, or not begun): the PC stays, the
    // descriptor is cleared.
    for pc in [START + LENGTH, START - 4] {
        h.in_section(AREA, DESCRIPTOR, section(), pc);
        h.tick();
        h.tick();
        assert_eq!(h.context().pc, pc);
        assert_eq!(h.peek_u64(root, AREA + CRITICAL_SECTION), 0);
        assert_eq!(
            h.set_rseq(AREA, u64::from(SIGNATURE), UNREGISTER),
            ErrorCode::Ok.raw()
        );
    }
}

#[test]
fn with_rseq_and_no_event_nothing_runs_and_the_work_word_stays_empty() {
    let mut h = Harness::start();
    let root = h.kernel.current().unwrap();
    h.in_section(AREA, DESCRIPTOR, section(), START + 8);
    // Syscalls, and a tick that preempts nothing (no other thread).
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), 0);
    h.tick();
    assert_eq!(h.syscall(Syscall::Yield.number(), [0; 4]), 0);
    assert_eq!(h.context().pc, START + 8);
    assert_eq!(h.peek_u64(root, AREA + CRITICAL_SECTION), DESCRIPTOR);
    assert!(h.kernel.thread(root).work().is_empty());
}

#[test]
fn a_moved_or_suspended_thread_restarts_its_section() {
    let mut h = Harness::start();
    let root = h.kernel.current().unwrap();
    let (tcb, child) = h.child(100, 0, NO_CAP);
    h.tick();
    assert_eq!(h.kernel.current(), Some(child));
    h.in_section(OTHER_AREA, OTHER_DESCRIPTOR, section(), START);
    h.tick();
    assert_eq!(h.kernel.current(), Some(root));
    // The tick's preemption was one event; a suspension is another.
    assert_eq!(h.syscall(Syscall::TcbSuspend.number(), [tcb, 0, 0, 0]), 0);
    assert_eq!(h.syscall(Syscall::TcbResume.number(), [tcb, 0, 0, 0]), 0);
    h.tick();
    assert_eq!(h.kernel.current(), Some(child));
    assert_eq!(h.context().pc, ABORT);
    // Suspended while ready, with a section entered since.
    h.enter(OTHER_AREA, OTHER_DESCRIPTOR, section(), START + 4);
    h.tick();
    assert_eq!(h.kernel.current(), Some(root));
    let child_work = h.kernel.thread(child).work();
    assert!(
        child_work.contains(WorkFlags::RSEQ),
        "preempted: {child_work:?}"
    );
    assert_eq!(h.syscall(Syscall::TcbSuspend.number(), [tcb, 0, 0, 0]), 0);
    assert_eq!(h.syscall(Syscall::TcbResume.number(), [tcb, 0, 0, 0]), 0);
    h.tick();
    assert_eq!(h.context().pc, ABORT);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_bad_area_or_descriptor_ends_its_thread_with_the_reason_not_the_kernel() {
    let bad_signature = Descriptor {
        abort: ABORT + 4,
        ..section()
    };
    let abort_inside = Descriptor {
        abort: START + 4,
        ..section()
    };
    let cases: [(Descriptor, u64, &str); 3] = [
        (
            bad_signature,
            OTHER_DESCRIPTOR,
            "not the registered signature",
        ),
        (abort_inside, OTHER_DESCRIPTOR, "inside its own section"),
        (
            section(),
            0x10_0000,
            "descriptor at 0x100000 cannot be read",
        ),
    ];
    for (descriptor, pointer, says) in cases {
        let mut h = Harness::start();
        let root = h.kernel.current().unwrap();
        let (_, child) = h.child(100, 0, NO_CAP);
        h.tick();
        assert_eq!(h.kernel.current(), Some(child));
        h.in_section(OTHER_AREA, OTHER_DESCRIPTOR, descriptor, START);
        h.poke(OTHER_AREA + CRITICAL_SECTION, &pointer.to_le_bytes());
        h.tick();
        h.tick();
        assert_eq!(h.kernel.current(), Some(root), "{says}");
        assert!(h.kernel.thread(child).state().has_ended(), "{says}");
        assert!(h.machine.console.contains(says), "{}", h.machine.console);
        assert!(
            h.machine
                .console
                .contains("killed: its restartable-sequence area or descriptor was bad"),
            "{}",
            h.machine.console
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }
}

/// A tracer and its tracee, which registered, entered its section (at
/// its second instruction) and made a `Null`: the call waits at its entry
/// stop, an event, which the tracer (waiting in its `Recv`) now holds.
fn traced_null_in_section() -> (Harness, ThreadId, ThreadId) {
    let mut h = Harness::start();
    let (tracer, tracee) = tracer_attached(&mut h);
    h.traced_in_section(tracee, START + 4);
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(received_label(&mut h), TRACE_ENTRY);
    (h, tracer, tracee)
}

#[test]
fn the_check_runs_before_the_exit_stop_and_a_skipped_syscall_gets_no_report() {
    let (mut h, tracer, tracee) = traced_null_in_section();
    assert_eq!(h.reply_continue(), 0);
    // The exit stop finds the PC at the abort address already.
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), 0);
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(received_label(&mut h), TRACE_EXIT);
    assert_eq!(h.kernel.thread(tracee).context().pc, ABORT);
    assert_eq!(h.reply_continue(), 0);
    // No other stop: the tracee runs on from the abort address.
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracee));
    assert_eq!(h.context().pc, ABORT);
    assert_eq!(h.context().x[0], 0);

    // SYSEMU: the tracer skips the syscall with a result of its own.
    h.enter(OTHER_AREA, OTHER_DESCRIPTOR, section(), START + 8);
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(received_label(&mut h), TRACE_ENTRY);
    assert_eq!(h.reply_with(TRACE_REPLY_RESULT, &[77, 0]), 0);
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracee), "no exit stop");
    assert_eq!(h.context().pc, ABORT);
    assert_eq!(h.context().x[0], 77);
}

#[test]
fn a_stepped_syscall_gets_one_exit_stop_and_one_step_report_and_steps_are_no_events() {
    let (mut h, tracer, tracee) = traced_null_in_section();
    assert_eq!(h.reply_with(TRACE_REPLY_STEP, &[]), 0);
    let mut stops = vec![];
    while h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]) == 0 {
        stops.push(received_label(&mut h));
        assert_eq!(h.kernel.thread(tracee).context().pc, ABORT, "{stops:x?}");
        assert_eq!(h.reply_with(TRACE_REPLY_STEP, &[]), 0);
    }
    assert_eq!(stops, [TRACE_EXIT, TRACE_STEP]);
    assert_eq!(h.kernel.current(), Some(tracee));

    // Stepped through a section: each step report leaves the PC where
    // the step put it.
    h.enter(OTHER_AREA, OTHER_DESCRIPTOR, section(), START);
    for offset in (4..LENGTH).step_by(4) {
        h.context().pc = START + offset;
        h.fault(STEP_ESR, 0);
        assert_eq!(h.kernel.current(), Some(tracer));
        assert_eq!(received_label(&mut h), TRACE_STEP);
        assert_eq!(h.reply_with(TRACE_REPLY_STEP, &[]), 0);
        assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
        assert_eq!(h.kernel.current(), Some(tracee));
        assert_eq!(h.context().pc, START + offset);
    }
    assert_eq!(
        h.peek_u64(tracee, OTHER_AREA + CRITICAL_SECTION),
        OTHER_DESCRIPTOR
    );
}

#[test]
fn the_slice_extension_is_granted_once_yielded_or_overrun() {
    let mut h = Harness::start();
    let root = h.kernel.current().unwrap();
    let (_, child) = h.child(100, 0, NO_CAP);
    assert_eq!(
        h.set_rseq(AREA, u64::from(SIGNATURE), REGISTER),
        ErrorCode::Ok.raw()
    );
    // Not asked: the tick preempts.
    h.tick();
    assert_eq!(h.kernel.current(), Some(child));
    h.tick();
    assert_eq!(h.kernel.current(), Some(root));
    // Asked: the tick grants 50 µs instead, once.
    h.poke(AREA + SLICE, &SLICE_REQUEST.to_le_bytes());
    h.tick();
    assert_eq!(h.kernel.current(), Some(root), "extended");
    assert_eq!(h.peek_u32(root, AREA + SLICE), SLICE_GRANTED);
    assert_eq!(h.machine.slice_ends, [62_500_000 * 50 / 1_000_000]);
    // Yielded: it gives the CPU away and says it had one.
    assert_eq!(h.syscall(Syscall::SliceYield.number(), [0; 4]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(child));
    assert_eq!(h.kernel.thread(root).context().x[8], 1);
    assert_eq!(h.peek_u32(root, AREA + SLICE), 0);
    h.tick();
    assert_eq!(h.kernel.current(), Some(root));
    // Without an extension SliceYield does nothing.
    assert_eq!(h.syscall(Syscall::SliceYield.number(), [0; 4]), 0);
    assert_eq!(h.context().x[8], 0);
    // Overrun: the extension's end preempts it.
    h.poke(AREA + SLICE, &SLICE_REQUEST.to_le_bytes());
    h.tick();
    assert_eq!(h.kernel.current(), Some(root));
    let resume = h
        .kernel
        .handle_el0_interrupt(&mut h.machine, Some(Interrupt::SliceEnd));
    h.resumed(resume);
    assert_eq!(h.kernel.current(), Some(child), "preempted at its end");
    assert_eq!(h.peek_u32(root, AREA + SLICE), 0);
    // One per run: asking again within it gets nothing, the next tick
    // preempts it.
    h.tick();
    assert_eq!(h.kernel.current(), Some(root));
    h.poke(AREA + SLICE, &SLICE_REQUEST.to_le_bytes());
    h.tick();
    assert_eq!(
        h.kernel.current(),
        Some(root),
        "switched out since: granted"
    );
    h.poke(AREA + SLICE, &(SLICE_REQUEST | SLICE_GRANTED).to_le_bytes());
    h.tick();
    assert_eq!(h.kernel.current(), Some(child), "no second extension");
    assert_eq!(h.peek_u32(root, AREA + SLICE), SLICE_REQUEST);
    // A SliceEnd for a thread with no extension changes nothing, and is
    // no tick.
    let ticks = h.kernel.ticks();
    let resume = h
        .kernel
        .handle_el0_interrupt(&mut h.machine, Some(Interrupt::SliceEnd));
    h.resumed(resume);
    assert_eq!(h.kernel.current(), Some(child));
    assert_eq!(h.kernel.ticks(), ticks);
    assert_eq!(h.machine.slice_ends.len(), 3);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}
