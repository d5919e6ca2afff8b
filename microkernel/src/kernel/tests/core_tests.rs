//! The kernel on several CPUs (`kernel/cores.rs`), driven as the arch glue
//! drives it: each entry names its CPU (`on_core`), and a fake machine
//! records the interrupts sent and answers stall requests.

use crate::kernel::tests::test_kernel::kernel_with_untyped;
use crate::kernel::Kernel;
use crate::platform::{Interrupt, MemoryMaintenance, PhysMemory, Platform, StalledCpu};
use crate::thread::{ThreadId, ThreadState};
use abi::cap::CapType;
use abi::ErrorCode;
use arch::context::FpState;

/// Tokens standing for each CPU's (its stack top on the target).
fn token(cpu: usize) -> u64 {
    0x1000 * (cpu as u64 + 1)
}

fn enter(kernel: &mut Kernel, cpu: usize) {
    kernel.on_core(token(cpu), || cpu);
}

#[derive(Default)]
struct Cores {
    reschedules: Vec<usize>,
    stalls: Vec<(usize, bool)>,
    /// What a stalled CPU says it waits to handle.
    syndrome: Option<u64>,
}

impl PhysMemory for Cores {
    fn read_phys(&self, _pa: u64, out: &mut [u8]) {
        out.fill(0);
    }
    fn write_phys(&mut self, _pa: u64, _data: &[u8]) {}
    fn read_phys_u64(&self, _pa: u64) -> u64 {
        0
    }
    fn write_phys_u64(&mut self, _pa: u64, _value: u64) {}
    fn zero_frame(&mut self, _pa: u64) {}
}

impl MemoryMaintenance for Cores {
    fn sync_instruction_cache(&mut self, _pa: u64) {}
    fn publish_table_writes(&mut self) {}
    fn flush_tlb_page(&mut self, _asid: u16, _va: u64) {}
    fn flush_tlb_all(&mut self) {}
}

impl Platform for Cores {
    fn console_write(&mut self, _text: &str) {}
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
    #[cfg(feature = "bench-calls")]
    fn set_syscall_floor(&mut self, _on: bool) {}
    fn set_single_step(&mut self, _on: bool) {}
    fn interrupt_is_pending(&self) -> bool {
        false
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
    fn send_reschedule(&mut self, cpu: usize) {
        self.reschedules.push(cpu);
    }
    fn stall_cpu(&mut self, cpu: usize, fp: Option<&mut FpState>) -> StalledCpu {
        self.stalls.push((cpu, fp.is_some()));
        StalledCpu {
            el0_sync_syndrome: self.syndrome,
        }
    }
}

/// A kernel with four CPUs online and `n` new threads (inactive, in the
/// CNode's slots 1..).
fn four_cores(n: u64) -> (Box<Kernel>, Vec<ThreadId>) {
    let (kernel, _, threads) = four_cores_in_cnode(n);
    (kernel, threads)
}

/// `four_cores`, with the CNode holding the Untyped (slot 0) and the
/// threads' TCBs (slots 1..=n).
fn four_cores_in_cnode(n: u64) -> (Box<Kernel>, crate::cap::CNodeId, Vec<ThreadId>) {
    let (mut kernel, cnode, _) = kernel_with_untyped(256 * 1024);
    for cpu in 1..4 {
        enter(&mut kernel, cpu);
        kernel.core_online(cpu);
    }
    enter(&mut kernel, 0);
    let untyped = kernel.objects.slot(cnode, 0).unwrap();
    let tcbs = kernel
        .objects
        .retype(untyped, CapType::Tcb, 0, cnode, 1, n)
        .unwrap();
    let threads = tcbs.iter().map(|&tcb| ThreadId::of(tcb)).collect();
    (kernel, cnode, threads)
}

/// `thread`, given affinity with CPU 1, runs there at `pc`; the kernel is
/// back on CPU 0.
fn running_on_cpu_1(kernel: &mut Kernel, thread: ThreadId, pc: u64) {
    kernel.objects[thread].set_affinity(1);
    enter(kernel, 1);
    kernel.objects[thread].make_ready();
    kernel.objects[thread].run();
    kernel.current = Some(thread);
    kernel.objects[thread].context.set_pc(pc);
    enter(kernel, 0);
}

#[test]
fn each_cpu_keeps_its_own_view_across_entries() {
    let (mut kernel, threads) = four_cores(2);
    enter(&mut kernel, 0);
    kernel.current = Some(threads[0]);
    kernel.fp_owner = Some(threads[0]);
    enter(&mut kernel, 1);
    assert_eq!(kernel.current, None, "CPU 1 runs nothing yet");
    assert_eq!(kernel.fp_owner, None);
    kernel.current = Some(threads[1]);
    enter(&mut kernel, 0);
    assert_eq!(kernel.current, Some(threads[0]));
    assert_eq!(kernel.fp_owner, Some(threads[0]));
    assert_eq!(kernel.current_on(1), Some(threads[1]));
    assert_eq!(kernel.running_elsewhere(threads[1]), Some(1));
    assert_eq!(kernel.running_elsewhere(threads[0]), None);
}

#[test]
fn a_thread_made_ready_on_another_cpu_waits_there_and_that_cpu_is_interrupted() {
    let (mut kernel, threads) = four_cores(1);
    let mut cores = Cores::default();
    let thread = threads[0];
    kernel.objects[thread].set_affinity(2);
    kernel.make_ready(thread);
    assert_eq!(kernel.check_cores(), Ok(()));
    assert_eq!(kernel.run_queues[2].ready.count(&kernel.objects), 1);
    assert_eq!(kernel.run_queues[0].ready.count(&kernel.objects), 0);
    assert!(kernel.attention, "the entry must not end on a quick way");
    kernel.send_wakeups(&mut cores);
    assert_eq!(cores.reschedules, [2]);
    assert!(!kernel.attention);
}

#[test]
fn moving_a_ready_thread_moves_it_between_queues_and_an_offline_cpu_is_refused() {
    let (mut kernel, threads) = four_cores(2);
    let mut cores = Cores::default();
    let (caller, target) = (threads[0], threads[1]);
    kernel.make_ready(target);
    assert_eq!(
        kernel.set_affinity(&mut cores, caller, target, 4),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        kernel.set_affinity(&mut cores, caller, target, 3),
        ErrorCode::Ok
    );
    assert_eq!(kernel.objects[target].affinity, 3);
    assert_eq!(kernel.run_queues[0].ready.count(&kernel.objects), 0);
    assert_eq!(kernel.run_queues[3].ready.count(&kernel.objects), 1);
    assert_eq!(kernel.check_cores(), Ok(()));
}

#[test]
fn a_thread_running_on_another_cpu_is_stalled_taken_back_and_its_syscall_runs_again() {
    let (mut kernel, threads) = four_cores(1);
    let thread = threads[0];
    // It runs on CPU 1, which holds its FP/SIMD registers, and has just
    // trapped with an SVC that CPU has yet to handle.
    running_on_cpu_1(&mut kernel, thread, 0x40_1004);
    enter(&mut kernel, 1);
    kernel.fp_owner = Some(thread);
    enter(&mut kernel, 0);
    let mut cores = Cores {
        syndrome: Some(0x15 << 26),
        ..Cores::default()
    };
    kernel.stop_elsewhere(&mut cores, thread);
    assert_eq!(cores.stalls, [(1, true)], "stalled, FP saved");
    assert_eq!(kernel.current_on(1), None);
    assert_eq!(kernel.fp_owner_on(1), None);
    assert_eq!(kernel.objects[thread].state(), ThreadState::Ready);
    assert_eq!(
        kernel.objects[thread].context.pc(),
        0x40_1000,
        "back to its svc"
    );
    assert_eq!(kernel.check_cores(), Ok(()));
    // CPU 1 then handles its entry with no thread: it picks from its queue.
    enter(&mut kernel, 1);
    assert_eq!(kernel.current, None);
}

#[test]
fn a_fault_taken_on_the_stalled_cpu_is_not_rewound() {
    let (mut kernel, threads) = four_cores(1);
    let thread = threads[0];
    running_on_cpu_1(&mut kernel, thread, 0x40_2000);
    // A data abort from EL0 (EC 0x24): the instruction runs again anyway.
    let mut cores = Cores {
        syndrome: Some(0x24 << 26),
        ..Cores::default()
    };
    kernel.stop_elsewhere(&mut cores, thread);
    assert_eq!(cores.stalls, [(1, false)]);
    assert_eq!(kernel.objects[thread].context.pc(), 0x40_2000);
}

#[test]
fn the_invariant_check_catches_a_thread_on_two_cpus_and_a_stale_key() {
    let (mut kernel, threads) = four_cores(1);
    let thread = threads[0];
    kernel.objects[thread].make_ready();
    let home = kernel.home_of(thread);
    let priority = kernel.objects[thread].priority;
    kernel.run_queues[home]
        .ready
        .remove(&mut kernel.objects, thread, priority);
    kernel.objects[thread].run();
    kernel.current = Some(thread);
    enter(&mut kernel, 1);
    kernel.current = Some(thread);
    assert_eq!(
        kernel.check_cores(),
        Err("a thread is the current thread of two CPUs")
    );
    kernel.current = None;
    assert_eq!(kernel.check_cores(), Ok(()));
    kernel.objects[thread].priority = 7;
    assert_eq!(
        kernel.check_cores(),
        Err("a thread's fast-path key does not match its priority and affinity")
    );
}

/// Attaching a filter to a thread, or turning its audit on, changes its
/// work word and the masks the vector reads without the kernel lock: a
/// target another CPU runs is stalled and taken off it first (its SVC runs
/// again under the new work), as for every TCB operation. (Without the
/// stop, the thread went on with what its CPU had read before the change:
/// a `Call` with no filter check after the attach returned.)
#[test]
fn attaching_a_filter_or_an_audit_stops_a_target_another_cpu_runs() {
    use crate::kernel::forward::audit::AuditSetting;
    use abi::audit::AuditMode;
    use abi::policy::{encode, Action, FilterDescription, MAX_DESCRIPTION_BYTES};
    use arch::object_memory::kind;
    use entry::WorkFlags;
    // Slots of the CNode: 0 the Untyped, then the attacher's and the
    // target's TCBs, a Filter, a Frame (the ring) and a Notification.
    const TARGET_TCB: u64 = 2;
    const FILTER: u64 = 3;
    const RING: u64 = 4;
    const SIGNAL: u64 = 5;
    for audit in [false, true] {
        let (mut kernel, cnode, threads) = four_cores_in_cnode(2);
        let untyped = kernel.objects.slot(cnode, 0).unwrap();
        for (slot, object) in [
            (FILTER, CapType::Filter),
            (RING, CapType::Frame),
            (SIGNAL, CapType::Notification),
        ] {
            kernel
                .objects
                .retype(untyped, object, 0, cnode, slot, 1)
                .unwrap();
        }
        let filter_slot = kernel.objects.slot(cnode, FILTER).unwrap();
        let filter = kernel.objects.lookup(filter_slot).unwrap().object();
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let bytes = encode(&FilterDescription::new(Action::Allow), &mut buffer).unwrap();
        let body = kernel.objects.get_mut::<kind::Filter>(filter).unwrap();
        body.filter.load(bytes).unwrap();
        let (attacher, target) = (threads[0], threads[1]);
        // The target runs on CPU 1 and has just trapped with an SVC that
        // CPU has yet to handle; the attacher runs on CPU 0.
        running_on_cpu_1(&mut kernel, target, 0x40_1004);
        kernel.set_cspace(attacher, cnode).unwrap();
        kernel.objects[attacher].make_ready();
        kernel.objects[attacher].run();
        kernel.current = Some(attacher);
        let mut cores = Cores {
            syndrome: Some(0x15 << 26),
            ..Cores::default()
        };
        let (done, work) = if audit {
            let setting = AuditSetting {
                frame: RING,
                notification: SIGNAL,
                mode: Some(AuditMode::Lossy),
                badge: 7,
            };
            let done = kernel.set_audit(&mut cores, attacher, TARGET_TCB, setting);
            (done, WorkFlags::AUDIT)
        } else {
            let done = kernel.attach_filter(&mut cores, attacher, TARGET_TCB, FILTER, None, 0);
            (done, WorkFlags::POLICY)
        };
        assert_eq!(done, Ok(()), "audit {audit}");
        assert_eq!(cores.stalls, [(1, false)], "CPU 1 stalled (audit {audit})");
        assert_eq!(kernel.current_on(1), None);
        assert_eq!(kernel.objects[target].state(), ThreadState::Ready);
        assert_eq!(
            kernel.objects[target].context.pc(),
            0x40_1000,
            "back to its svc, to run under the new work"
        );
        assert!(kernel.objects[target].work.contains(work));
        assert_eq!(kernel.check_cores(), Ok(()));
    }
}
