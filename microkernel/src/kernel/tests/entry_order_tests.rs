//! The real kernel carries out the entry and exit stages in the order of
//! docs/entry.md: a thread with a filter, a tracer and an audit ring makes
//! syscalls through `Kernel::syscall`, the user-space servers' answers
//! are the state changes their replies make (`ipc::trace_stop`,
//! `ipc::answer_policy_request`), and after each kernel entry the test
//! looks at what has been sent and written, and what has not yet. The
//! fake machine logs each audit record as it lands in the ring and each
//! console line, so the order of the two is seen too.

use crate::cap::{CNodeId, ObjectId};
use crate::kernel::forward::audit::AuditSetting;
use crate::kernel::tests::test_kernel::kernel_with_untyped;
use crate::kernel::{Interrupt, Kernel};
use crate::platform::{MemoryMaintenance, PhysMemory, Platform};
use crate::stopped_call::{CallSlot, CallStop, PolicyAnswer, StopAnswer};
use crate::thread::{ThreadId, ThreadState, TraceProgress};
use abi::audit::{AuditMode, AuditRecord, AuditVerdict, SLOTS_OFFSET, SLOT_BYTES, WRITTEN_OFFSET};
use abi::cap::CapType;
use abi::policy::{encode, Action, FilterDescription, Rule, MAX_DESCRIPTION_BYTES};
use abi::trace::StopKind;
use abi::{ErrorCode, Syscall};
use arch::context::FpState;
use arch::object_memory::kind;
use entry::{EntryStop, WorkFlags};
use std::collections::HashMap;

mod ipc_entry;
mod lanes;
mod trace_lane;

/// ESR of an `svc` from AArch64 EL0.
const SVC: u64 = 0x15 << 26;
const UNTYPED: u64 = 0;
const TCB: u64 = 1;
const TRACER: u64 = 2;
const SERVER: u64 = 3;
const SIGNAL: u64 = 4;
const RING: u64 = 5;
const FILTER: u64 = 6;
/// The policy server's thread (a new one: it may serve once it runs).
const SERVER_TCB: u64 = 7;
/// The error code the `Errno` rules give.
const ERRNO: u16 = ErrorCode::InvalidArgument.raw() as u16;

/// What the fake machine saw, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    /// An audit record landed in the ring (`written` went to this count).
    Record(u64),
    /// A console line.
    Console(String),
}

#[derive(Default)]
struct Machine {
    ram: HashMap<u64, u8>,
    ring: u64,
    seen: Vec<Seen>,
    /// The console line being written.
    line: String,
    /// An interrupt is pending (a long `Retype` stops at its next
    /// preemption point).
    interrupt: bool,
}

impl PhysMemory for Machine {
    fn read_phys(&self, pa: u64, out: &mut [u8]) {
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = self.ram.get(&(pa + i as u64)).copied().unwrap_or(0);
        }
    }
    fn write_phys(&mut self, pa: u64, data: &[u8]) {
        for (i, byte) in data.iter().enumerate() {
            self.ram.insert(pa + i as u64, *byte);
        }
    }
    fn read_phys_u64(&self, pa: u64) -> u64 {
        let mut bytes = [0u8; 8];
        self.read_phys(pa, &mut bytes);
        u64::from_le_bytes(bytes)
    }
    fn write_phys_u64(&mut self, pa: u64, value: u64) {
        if self.ring != 0 && pa == self.ring + WRITTEN_OFFSET {
            self.seen.push(Seen::Record(value));
        }
        self.write_phys(pa, &value.to_le_bytes());
    }
    fn zero_frame(&mut self, pa: u64) {
        self.write_phys(pa, &[0; 4096]);
    }
}

impl MemoryMaintenance for Machine {
    fn sync_instruction_cache(&mut self, _pa: u64) {}
    fn publish_table_writes(&mut self) {}
    fn flush_tlb_page(&mut self, _asid: u16, _va: u64) {}
    fn flush_tlb_all(&mut self) {}
}

impl Platform for Machine {
    fn console_write(&mut self, text: &str) {
        self.line.push_str(text);
        while let Some(end) = self.line.find('\n') {
            let line: String = self.line.drain(..=end).collect();
            self.seen.push(Seen::Console(line.trim_end().to_string()));
        }
    }
    fn set_fp_access(&mut self, _enabled: bool) {}
    fn fp_access(&self) -> bool {
        false
    }
    fn move_fp_state(&mut self, _outgoing: Option<&mut FpState>, _incoming: &FpState) {}
    fn set_interrupt_enabled(&mut self, _id: u32, _enabled: bool) {}
    fn interrupt_lines(&self) -> u32 {
        64
    }
    fn console_intid(&self) -> u32 {
        33
    }
    fn set_physical_timer(&mut self, _ticks: Option<u64>) {}
    fn set_syscall_floor(&mut self, _on: bool) {}
    fn set_single_step(&mut self, _on: bool) {}
    fn interrupt_is_pending(&self) -> bool {
        self.interrupt
    }
    fn take_pending_interrupt(&mut self) -> Option<Interrupt> {
        None
    }
    fn counter(&self) -> u64 {
        0
    }
    fn counter_frequency(&self) -> u64 {
        62_500_000
    }
}

/// A running thread whose CSpace holds its own TCB, a tracer's and a
/// policy server's endpoints, an audit ring and its notification, and a
/// filter with `rule` (not yet attached).
struct Scene {
    kernel: Box<Kernel>,
    machine: Machine,
    thread: ThreadId,
    cnode: CNodeId,
    ring: u64,
}

impl Scene {
    fn new(rule: Rule) -> Scene {
        Scene::with_rules([rule])
    }

    /// A scene whose filter has these rules, in order (`Allow` by default).
    fn with_rules(rules: impl IntoIterator<Item = Rule>) -> Scene {
        let (mut kernel, cnode, _) = kernel_with_untyped(256 * 1024);
        let untyped = kernel.objects.slot(cnode, UNTYPED).unwrap();
        let caps = &mut kernel.objects;
        let tcb = caps
            .retype(untyped, CapType::Tcb, 0, cnode, TCB, 1)
            .unwrap()[0];
        for (index, object) in [
            (TRACER, CapType::Endpoint),
            (SERVER, CapType::Endpoint),
            (SIGNAL, CapType::Notification),
            (RING, CapType::Frame),
            (FILTER, CapType::Filter),
            (SERVER_TCB, CapType::Tcb),
        ] {
            caps.retype(untyped, object, 0, cnode, index, 1).unwrap();
        }
        let mut description = FilterDescription::new(Action::Allow);
        for rule in rules {
            description.push(rule).unwrap();
        }
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let bytes = encode(&description, &mut buffer).unwrap();
        let filter = object_in(&kernel, cnode, FILTER);
        let body = kernel.objects.get_mut::<kind::Filter>(filter).unwrap();
        body.filter.load(bytes).unwrap();
        let ring = kernel
            .objects
            .get::<kind::Frame>(object_in(&kernel, cnode, RING))
            .unwrap()
            .phys;
        let thread = ThreadId::of(tcb);
        let server = ThreadId::of(object_in(&kernel, cnode, SERVER_TCB));
        kernel.objects[server].make_inactive();
        kernel.set_cspace(thread, cnode).unwrap();
        kernel.objects[thread].run();
        kernel.current = Some(thread);
        let machine = Machine {
            ring,
            ..Machine::default()
        };
        Scene {
            kernel,
            machine,
            thread,
            cnode,
            ring,
        }
    }

    fn traced(mut self) -> Scene {
        self.kernel
            .attach_tracer(self.thread, self.thread, TRACER)
            .unwrap();
        self
    }

    fn filtered(mut self) -> Scene {
        self.kernel
            .attach_filter(
                &mut self.machine,
                self.thread,
                TCB,
                FILTER,
                Some(SERVER),
                SERVER_TCB,
            )
            .unwrap();
        self
    }

    fn audited(self) -> Scene {
        self.audited_in(AuditMode::Lossless)
    }

    fn audited_in(mut self, mode: AuditMode) -> Scene {
        let mode = Some(mode);
        self.kernel
            .set_audit(
                &mut self.machine,
                self.thread,
                TCB,
                AuditSetting {
                    frame: RING,
                    notification: SIGNAL,
                    mode,
                    badge: 7,
                },
            )
            .unwrap();
        self
    }

    /// The thread makes syscall `number` (from `svc` at 0x1000), taken as
    /// the vector takes it (an audit-only thread's by the lean entry), and
    /// the kernel goes back to whatever runs next.
    fn syscall(&mut self, number: Syscall) {
        let context = &mut self.kernel.objects[self.thread].context;
        context.set_syscall_number(number.number());
        context.set_arg(entry::ArgIndex::X0, 0);
        context.set_arg(entry::ArgIndex::X2, 2);
        context.pc = 0x1004;
        let _ = super::test_kernel::svc_as_the_vector_takes_it(
            &mut self.kernel,
            &mut self.machine,
            self.thread,
            SVC,
        );
    }

    fn thread(&self) -> &crate::thread::Thread {
        &self.kernel.objects[self.thread]
    }

    /// The stage the thread's syscall is stopped at, if any.
    fn stopped_at(&self) -> Option<CallStop> {
        self.thread().call.as_ref().map(|call| call.at)
    }

    /// The trace stop the thread waits at, if any.
    fn trace_stop(&self) -> Option<StopKind> {
        self.thread().trace_stop().map(|stop| stop.kind)
    }

    /// The tracer answers the stop the thread waits at: "continue" (what
    /// `ipc::trace_stop::answer_trace_stop` does with that answer).
    fn tracer_continues(&mut self) {
        let stop = self.kernel.objects[self.thread].take_trace_stop();
        assert!(stop.is_some(), "no trace stop to answer");
        self.kernel.cancel_wait(self.thread);
        let thread = &mut self.kernel.objects[self.thread];
        if let Some(call) = thread.call.as_mut() {
            if stop.is_some_and(|stop| stop.kind == StopKind::Entry) {
                call.answer = Some(StopAnswer::TraceContinue);
            }
        }
        self.kernel.make_ready(self.thread);
        self.kernel.current = None;
        let _ = self.kernel.resume(&mut self.machine);
    }

    /// The policy server answers "allow" (what
    /// `ipc::answer_policy_request` does with that answer).
    fn server_allows(&mut self) {
        let thread = &mut self.kernel.objects[self.thread];
        let filter = thread
            .policy_request()
            .expect("no policy request to answer")
            .filter;
        thread.take_kernel_message();
        self.kernel.cancel_wait(self.thread);
        let call = self.kernel.objects[self.thread].call.as_mut().unwrap();
        call.forwarded = true;
        call.waived |= 1 << filter;
        call.answer = Some(StopAnswer::Policy(PolicyAnswer::Allow));
        self.kernel.make_ready(self.thread);
        self.kernel.current = None;
        let _ = self.kernel.resume(&mut self.machine);
    }

    /// The records in the ring, oldest first.
    fn records(&self) -> Vec<AuditRecord> {
        let written = self.machine.read_phys_u64(self.ring + WRITTEN_OFFSET);
        (0..written)
            .map(|n| {
                let slot = self.ring + SLOTS_OFFSET + n * SLOT_BYTES;
                let mut bytes = vec![0u8; SLOT_BYTES as usize];
                self.machine.read_phys(slot, &mut bytes);
                AuditRecord::decode(&bytes).expect("a record")
            })
            .collect()
    }
}

fn object_in(kernel: &Kernel, cnode: CNodeId, index: u64) -> ObjectId {
    let slot = kernel.objects.slot(cnode, index).unwrap();
    kernel.objects.lookup(slot).unwrap().object()
}

fn rule(number: Syscall, action: Action) -> Rule {
    Rule {
        syscall: Some(number.number()),
        ..Rule::new(action)
    }
}

#[test]
fn a_notify_filtered_audited_traced_syscall_goes_through_the_stages_in_order() {
    let mut scene = Scene::new(rule(Syscall::Null, Action::Notify))
        .traced()
        .filtered()
        .audited();
    let work = scene.thread().work;
    assert!(work.contains(WorkFlags::TRACE | WorkFlags::POLICY | WorkFlags::AUDIT));
    scene.syscall(Syscall::Null);
    // Stage 2: the entry stop is sent; nothing later has happened.
    assert_eq!(scene.trace_stop(), Some(StopKind::Entry));
    assert_eq!(
        scene.stopped_at(),
        Some(CallStop::Entry(EntryStop::TraceEntry))
    );
    assert!(scene.thread().policy_request().is_none());
    assert!(scene.thread().audit_pending.is_none());
    assert_eq!(scene.machine.seen, []);
    scene.tracer_continues();
    // Stage 3: the filter's `Notify` asks its server; still no record.
    let request = *scene.thread().policy_request().expect("a policy request");
    let call = scene
        .thread()
        .call
        .as_ref()
        .expect("the call it asks about");
    assert_eq!((request.filter, call.regs[8]), (0, Syscall::Null.number()));
    assert_eq!(scene.stopped_at(), Some(CallStop::Entry(EntryStop::Policy)));
    assert_eq!(scene.trace_stop(), None);
    assert!(scene.thread().audit_pending.is_none());
    assert_eq!(scene.machine.seen, []);
    scene.server_allows();
    // Stage 4 (the record begun, with room), dispatch, stage 5 (the
    // record written with the result), stage 6 (the exit stop), in that
    // order: the record is in the ring before the exit stop is sent.
    assert_eq!(scene.machine.seen, [Seen::Record(1)]);
    let records = scene.records();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.syscall, Syscall::Null.number());
    assert_eq!(record.verdict, AuditVerdict::Allowed);
    assert!(record.forwarded, "the server decided");
    assert_eq!(record.result, Some(ErrorCode::Ok.raw()));
    assert_eq!(record.args[2], 2);
    assert_eq!(scene.thread().call, CallSlot::Empty, "the call ran");
    assert_eq!(scene.thread().context.result(), ErrorCode::Ok.raw());
    assert_eq!(scene.trace_stop(), Some(StopKind::Exit));
    assert_eq!(scene.thread().trace.owed, 0);
    // The tracer answers the exit stop: the thread returns to EL0 with no
    // more work, and nothing more is written.
    scene.tracer_continues();
    assert_eq!(scene.trace_stop(), None);
    assert_eq!(scene.kernel.current, Some(scene.thread));
    assert_eq!(scene.records().len(), 1);
}

#[test]
fn an_errno_denied_audited_traced_syscall_is_recorded_then_stopped_at_its_exit_never_run() {
    let code = Action::Errno(ERRNO);
    let mut scene = Scene::new(rule(Syscall::Exit, code))
        .filtered()
        .audited()
        .traced();
    scene.syscall(Syscall::Exit);
    // The entry stop first; the tracer lets it go on.
    assert_eq!(scene.trace_stop(), Some(StopKind::Entry));
    assert_eq!(scene.machine.seen, []);
    scene.tracer_continues();
    // Stage 3 denies (never dispatched: the thread did not exit), stage 4
    // records the denial, stage 5 writes it with the error code, stage 6
    // sends the exit stop after it.
    assert_eq!(scene.machine.seen, [Seen::Record(1)]);
    let records = scene.records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].syscall, Syscall::Exit.number());
    assert_eq!(records[0].verdict, AuditVerdict::Refused(ERRNO));
    assert_eq!(records[0].result, Some(u64::from(ERRNO)));
    assert!(!records[0].forwarded);
    assert_eq!(scene.thread().context.result(), u64::from(ERRNO));
    assert_eq!(scene.trace_stop(), Some(StopKind::Exit));
    assert!(!scene.thread().state().is_kept_end());
    scene.tracer_continues();
    assert_eq!(scene.kernel.current, Some(scene.thread));
}

#[test]
fn an_errno_denied_audited_syscall_without_a_tracer_returns_at_once_with_its_record() {
    let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO)))
        .filtered()
        .audited();
    scene.syscall(Syscall::Exit);
    assert_eq!(scene.machine.seen, [Seen::Record(1)]);
    assert_eq!(scene.records()[0].verdict, AuditVerdict::Refused(ERRNO));
    assert_eq!(scene.records()[0].result, Some(u64::from(ERRNO)));
    assert_eq!(scene.kernel.current, Some(scene.thread));
    assert_eq!(scene.thread().context.result(), u64::from(ERRNO));
    assert_eq!(scene.thread().call, CallSlot::Empty);
}

#[test]
fn a_trapped_audited_traced_syscall_runs_its_exit_stages_before_its_report() {
    let mut scene = Scene::new(rule(Syscall::Null, Action::Trap))
        .filtered()
        .audited()
        .traced();
    // Its fault handler listens on the server's endpoint.
    let endpoint = object_in(&scene.kernel, scene.cnode, SERVER);
    let reference = scene.kernel.objects.reference(endpoint).unwrap();
    scene.kernel.objects[scene.thread].fault_endpoint = Some((reference, 9));
    scene.syscall(Syscall::Null);
    scene.tracer_continues();
    // Denied like an `Errno`: stage 5 writes the record with `Denied`,
    // stage 6 owes the exit stop; then the report goes to the fault
    // handler (after the record), and the exit stop waits until the
    // thread returns to EL0 after the handler's answer.
    let seen = &scene.machine.seen;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], Seen::Record(1));
    assert!(
        matches!(&seen[1], Seen::Console(line) if line.contains("sent to its fault handler")),
        "{seen:?}"
    );
    let records = scene.records();
    assert_eq!(records[0].verdict, AuditVerdict::Trapped);
    assert_eq!(records[0].result, Some(ErrorCode::Denied.raw()));
    assert!(scene.thread().fault_report().is_some());
    assert_eq!(scene.trace_stop(), None);
    assert_eq!(scene.thread().trace.owed, TraceProgress::OWE_EXIT);
    assert_eq!(scene.thread().call, CallSlot::Empty, "it never runs");
}

#[test]
fn a_lossless_audited_syscall_waits_for_room_at_its_audit_entry_after_its_verdict() {
    let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO)))
        .filtered()
        .audited();
    // A full ring: every slot written, none consumed.
    let ring = scene.ring;
    scene
        .machine
        .write_phys_u64(ring + WRITTEN_OFFSET, abi::audit::RING_SLOTS);
    scene.machine.seen.clear();
    scene.syscall(Syscall::Exit);
    // Stage 3 has judged (the error code is in `x0`), stage 4 waits: no
    // record, not run, stopped with the verdict.
    assert_eq!(scene.thread().state(), ThreadState::BlockedOnAudit);
    assert_eq!(
        scene.stopped_at(),
        Some(CallStop::Entry(EntryStop::AuditEntry(
            entry::PolicyVerdict::Deny
        )))
    );
    assert_eq!(scene.thread().context.result(), u64::from(ERRNO));
    assert_eq!(scene.machine.seen, []);
    // The server drains the ring: the call goes on from its audit entry
    // and its record is written, with the verdict given before the wait.
    scene
        .machine
        .write_phys_u64(ring + abi::audit::CONSUMED_OFFSET, abi::audit::RING_SLOTS);
    let _ = scene.kernel.resume(&mut scene.machine);
    assert_eq!(
        scene.machine.seen,
        [Seen::Record(abi::audit::RING_SLOTS + 1)]
    );
    assert_eq!(scene.kernel.current, Some(scene.thread));
    assert_eq!(scene.thread().call, CallSlot::Empty);
    assert_eq!(scene.thread().context.result(), u64::from(ERRNO));
}

#[test]
fn a_syscall_that_turns_its_own_audit_off_is_recorded_in_the_ring_it_began_with() {
    let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).audited();
    // `TcbSetAudit` on its own TCB, off (`x4` = 0), with the ring's Frame.
    let context = &mut scene.kernel.objects[scene.thread].context;
    context.set_syscall_number(Syscall::TcbSetAudit.number());
    context.set_arg(entry::ArgIndex::X0, TCB);
    context.set_arg(entry::ArgIndex::X2, RING);
    context.set_arg(entry::ArgIndex::X4, 0);
    context.pc = 0x1004;
    let _ = scene.kernel.syscall(&mut scene.machine, scene.thread, SVC);
    assert_eq!(scene.thread().context.result(), ErrorCode::Ok.raw());
    assert_eq!(scene.thread().audit, None, "audit is off");
    // Its record went to the ring its audit entry chose, and is done.
    assert_eq!(scene.machine.seen, [Seen::Record(1)]);
    let records = scene.records();
    assert_eq!(records[0].syscall, Syscall::TcbSetAudit.number());
    assert_eq!(records[0].thread_badge, 7);
    assert_eq!(records[0].args[2], RING);
    assert_eq!(records[0].result, Some(ErrorCode::Ok.raw()));
    assert!(scene.thread().audit_pending.is_none());
    // Not audited any more: the next syscall writes nothing.
    scene.syscall(Syscall::Null);
    assert_eq!(scene.records().len(), 1);
}

#[test]
fn a_drop_after_audit_went_off_and_on_again_to_the_same_ring_counts_for_the_thread() {
    use abi::audit::{CONSUMED_OFFSET, RING_SLOTS};
    let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).audited();
    let sink = scene.thread().audit;
    // A long `Retype` (a 21-page VSpace) is preempted after its audit
    // entry, and a more urgent thread runs.
    let server = ThreadId::of(object_in(&scene.kernel, scene.cnode, SERVER_TCB));
    let urgent = scene.thread().priority + 1;
    scene.kernel.objects[server].set_priority(urgent);
    scene.kernel.make_ready(server);
    scene.machine.interrupt = true;
    let context = &mut scene.kernel.objects[scene.thread].context;
    context.set_syscall_number(Syscall::Retype.number());
    context.set_arg(entry::ArgIndex::X0, UNTYPED);
    context.set_arg(entry::ArgIndex::X2, CapType::VSpace as u64);
    context.set_arg(entry::ArgIndex::X3, 20);
    context.set_arg(entry::ArgIndex::X4, 8);
    context.set_arg(entry::ArgIndex::X5, 1);
    context.pc = 0x1004;
    let _ = scene.kernel.syscall(&mut scene.machine, scene.thread, SVC);
    scene.machine.interrupt = false;
    assert!(
        matches!(scene.stopped_at(), Some(CallStop::Dispatch { .. })),
        "preempted"
    );
    assert!(
        scene.thread().audit_pending.is_some(),
        "its record is pending"
    );
    // Its audit server turns its audit off, then on again: the same ring,
    // notification, mode and badge.
    let off = AuditSetting {
        frame: RING,
        notification: SIGNAL,
        mode: None,
        badge: 7,
    };
    scene
        .kernel
        .set_audit(&mut scene.machine, scene.thread, TCB, off)
        .unwrap();
    let on = AuditSetting {
        frame: RING,
        notification: SIGNAL,
        mode: Some(AuditMode::Lossless),
        badge: 7,
    };
    scene
        .kernel
        .set_audit(&mut scene.machine, scene.thread, TCB, on)
        .unwrap();
    assert_eq!(
        scene.thread().audit,
        sink,
        "audited into the same ring again"
    );
    // The ring fills up meanwhile (other threads' records).
    scene
        .machine
        .write_phys_u64(scene.ring + WRITTEN_OFFSET, RING_SLOTS);
    // The call goes on and ends: its record is dropped.
    // (The urgent thread is done.)
    if scene.kernel.current == Some(server) {
        scene.kernel.current = None;
    } else {
        let home = scene.kernel.home_of(server);
        scene.kernel.run_queues[home]
            .ready
            .remove(&mut scene.kernel.objects, server, urgent);
    }
    scene.kernel.objects[server].suspend();
    scene.kernel.current = None;
    let _ = scene.kernel.resume(&mut scene.machine);
    assert_eq!(scene.stopped_at(), None, "done");
    assert_eq!(scene.thread().context.result(), ErrorCode::Ok.raw());
    assert!(scene.thread().audit_pending.is_none());
    // The thread is audited into that ring: the drop counts for it, and
    // its next written record says so.
    assert_eq!(scene.thread().audit_dropped, 1, "the thread's drop count");
    scene
        .machine
        .write_phys_u64(scene.ring + CONSUMED_OFFSET, RING_SLOTS);
    scene.syscall(Syscall::Null);
    let written = scene.machine.read_phys_u64(scene.ring + WRITTEN_OFFSET);
    let slot = scene.ring + SLOTS_OFFSET + (written - 1) % RING_SLOTS * SLOT_BYTES;
    let mut bytes = vec![0u8; SLOT_BYTES as usize];
    scene.machine.read_phys(slot, &mut bytes);
    let record = AuditRecord::decode(&bytes).unwrap();
    assert_eq!(record.syscall, Syscall::Null.number());
    assert_eq!(record.dropped, 1, "the next record carries the drop");
}

#[test]
fn an_audited_syscall_that_attaches_a_tracer_to_its_own_thread_owes_its_exit_stop() {
    let mut scene = Scene::new(rule(Syscall::Exit, Action::Errno(ERRNO))).audited();
    // `TcbAttachTracer` on its own TCB: from now on it is traced, and the
    // exit stages of this very syscall are those of its new work word
    // (the record, then the exit stop), as the exit machine asks.
    let context = &mut scene.kernel.objects[scene.thread].context;
    context.set_syscall_number(Syscall::TcbAttachTracer.number());
    context.set_arg(entry::ArgIndex::X0, TCB);
    context.set_arg(entry::ArgIndex::X2, TRACER);
    context.pc = 0x1004;
    let _ = scene.kernel.syscall(&mut scene.machine, scene.thread, SVC);
    assert!(scene.thread().work.contains(WorkFlags::TRACE));
    let records = scene.records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].syscall, Syscall::TcbAttachTracer.number());
    assert_eq!(records[0].result, Some(ErrorCode::Ok.raw()));
    assert_eq!(scene.trace_stop(), Some(StopKind::Exit));
}
