//! The cases the driver runs: the in-guest test suite, the demo's steps,
//! the benchmarks and the fuzzer's round, each a list of `Case`s.

use super::case::*;
use crate::policy_server_tests::{LOSS_DELETE, LOSS_EXIT, LOSS_FAULT};
use crate::programs::{BootProgram, ENDPOINT_SLOT, KERNEL_PROBE_ADDRESS, SECOND_ENDPOINT_SLOT};
use crate::programs::{AUDIT_SCENARIO_LOSSLESS, AUDIT_SCENARIO_LOSSY};
use crate::programs::{CANCEL_SCENARIO_POLICY, CANCEL_SCENARIO_TRACE};
use crate::programs::{REPLY_CLIENT_FIRST, REPLY_CLIENT_SECOND};
use crate::programs::{TCB_SCENARIO_REGISTERS, TCB_SCENARIO_SUSPEND};
use crate::rseq_tests::{
    RSEQ_BAD, RSEQ_COUNTERS, RSEQ_MIGRATE, RSEQ_ONE_CPU, RSEQ_SLICE, RSEQ_STEP,
};
use crate::smp_tests::{SMP_MIGRATE, SMP_PING_PONG, SMP_REMOTE_TCB, SMP_REVOKE, SMP_UNMAP};
use abi::cap::Rights;

/// The EL1 physical timer's interrupt (a PPI): the device cases are given
/// (the kernel ticks with the virtual timer).
pub const PHYSICAL_TIMER_INTID: u32 = 30;

/// The in-guest tests of the foundation.
pub const TEST_CASES: &[Case] = &[
    case(
        "syscall round trip from EL0 (results and error codes)",
        &[BootProgram::Syscalls.selector(0)],
        Expect::ExitZero,
    ),
    case(
        "user write to address 0 faults and only that thread stops",
        &[BootProgram::NullWrite.selector(0)],
        fault(ExceptionClass::DataAbortLower, Some(0), Some(false)),
    ),
    case(
        "user read of a kernel address faults",
        &[BootProgram::ReadKernel.selector(0)],
        fault(
            ExceptionClass::DataAbortLower,
            Some(KERNEL_PROBE_ADDRESS),
            None,
        ),
    ),
    case(
        "undefined instruction stops the thread",
        &[BootProgram::Undefined.selector(0)],
        fault(ExceptionClass::Unknown, None, None),
    ),
    case(
        "branch to a misaligned address is a PC alignment fault",
        &[BootProgram::MisalignedPc.selector(0)],
        fault(ExceptionClass::PcAlignment, None, None),
    ),
    case(
        "misaligned exclusive load is an alignment fault",
        &[BootProgram::MisalignedExclusive.selector(0)],
        Expect::AlignmentFault,
    ),
    case(
        "user code is not writable (W^X)",
        &[BootProgram::WriteText.selector(0)],
        fault(ExceptionClass::DataAbortLower, None, Some(true)),
    ),
    case(
        "user stack is not executable (W^X)",
        &[BootProgram::ExecuteStack.selector(0)],
        fault(ExceptionClass::InstructionAbortLower, None, Some(true)),
    ),
    case(
        "timer interrupts arrive while a user thread spins",
        // 150 ms of spinning for 3 of about 15 ticks: under emulation the
        // host may starve QEMU's timer thread for a while (see `tick`).
        &[BootProgram::Spin.selector(150)],
        Expect::ExitZeroWithInterrupts(3),
    ),
    case(
        "two spinning threads are preempted round robin",
        &[
            BootProgram::Spin.selector(150),
            BootProgram::Spin.selector(150),
        ],
        Expect::ExitZeroPreempted,
    ),
    case(
        "FP/SIMD registers survive preemption by another FP user",
        &[
            BootProgram::FpCheck.selector(1),
            BootProgram::FpCheck.selector(2),
        ],
        Expect::ExitZeroPreempted,
    ),
    case(
        "yield hands the CPU between threads",
        &[
            BootProgram::Yield.selector(50),
            BootProgram::Yield.selector(50),
        ],
        Expect::ExitZeroAfterYields(50),
    ),
    IPC_CASES[0],
    IPC_CASES[1],
    IPC_CASES[2],
    IPC_CASES[3],
    IPC_CASES[4],
    IPC_CASES[5],
    IPC_CASES[6],
    IPC_CASES[7],
    IPC_CASES[8],
    IPC_CASES[9],
    IPC_CASES[10],
    IPC_CASES[11],
    IPC_CASES[12],
    TCB_CASES[0],
    TCB_CASES[1],
    TCB_CASES[2],
    POLICY_CASES[0],
    POLICY_CASES[1],
    POLICY_TRAP_CASE,
    AUDIT_CASES[0],
    AUDIT_CASES[1],
    REVOKE_IN_USE_CASE,
    KILLED_RECEIVER_CASE,
    VSPACE_CASE,
    TRACE_CASE,
    AUDIT_BEFORE_TRACE_CASE,
    BOUND_NOTIFICATION_CASE,
    USER_DISPATCH_CASES[0],
    USER_DISPATCH_CASES[1],
    USER_THREADS_CASE,
    REPLY_CAPS_CASE,
    USER_SPACE_CASE,
    ROOT_TASK_CASE,
    POLICY_FAST_PATH_CASE,
    EL0_DEVICE_CASES[0],
    EL0_DEVICE_CASES[1],
    EL0_DEVICE_CASES[2],
    SELF_ENDING_CASE,
    POLICY_ROUTING_CASE,
    STOPPED_CALL_CASES[0],
    STOPPED_CALL_CASES[1],
    VERDICT_RECORDS_CASE,
    INHERITED_CONFINEMENT_CASE,
    PREEMPTIBLE_RETYPE_CASE,
    STOPPED_CALL_CASES[2],
    CAPABILITY_SWAP_CASE,
    EXHAUSTION_CASE,
    FILTER_LIFETIME_CASE,
    SUPERVISION_CASE,
    ASYNC_POLICY_CASE,
    SERVER_LOSS_CASES[0],
    SERVER_LOSS_CASES[1],
    SERVER_LOSS_CASES[2],
    JUDGED_MEMORY_CASE,
    SMP_CASES[0],
    SMP_CASES[1],
    SMP_CASES[2],
    SMP_CASES[3],
    SMP_CASES[4],
    SMP_FUZZ_CASES[0],
    SMP_FUZZ_CASES[1],
    RSEQ_CASES[0],
    RSEQ_CASES[1],
    RSEQ_CASES[2],
    RSEQ_CASES[3],
    RSEQ_CASES[4],
    RSEQ_CASES[5],
    YIELD_TO_PREEMPTED_CALL_CASE,
    USER_DISPATCH_CASES[2],
    POLICY_PATHS_CASE,
    TRACE_ANSWER_PATHS_CASE,
    TRACE_ENTRY_PATHS_CASE,
    POLICY_REQUEST_PATHS_CASE,
];

/// Restartable sequences (`init/src/rseq_tests.rs`): one case thread per
/// case (the SMP cases' grants), which makes its workers in its own space
/// and CNode (up to eight, five slots each from slot 32).
const fn rseq_case(name: &'static str, threads: &'static [u64], cpus: Cpus) -> Case {
    Case {
        untyped_pages: 128,
        cnode_radix: Some(7),
        cpus,
        ..smp_case(name, threads)
    }
}

const RSEQ_CASES: [Case; 6] = [
    Case {
        irq: Some(PHYSICAL_TIMER_INTID),
        grants: RSEQ_TIMER_GRANTS,
        ..rseq_case("rseq: a per-CPU counter incremented 12 000 000 times through the SDK's restartable sequence by 3 threads on CPU 0 (4 000 000 each), preempted by a 100 us tick made in user space (a more urgent thread woken by the physical timer): the sum is exact, sections aborted, and the kernel's fix-ups are exactly the aborts the threads saw", &[BootProgram::RseqMain.selector(RSEQ_ONE_CPU)], Cpus::Boot)
    },
    rseq_case("rseq: two threads on each CPU but the migrator's (CPUs 1..3) increment a per-CPU counter at least 4 000 000 times each and for at least 1.5 s while the migrator moves them from CPU to CPU: the sum is exact, every thread added on several CPUs, sections aborted, each abort a kernel fix-up", &[BootProgram::RseqMain.selector(RSEQ_MIGRATE)], Cpus::AtLeast(2)),
    rseq_case("rseq: a tracer single-steps a thread through its critical section (no abort: a step is not an event), then makes an event before each instruction in turn (a move to another CPU, then a suspension): inside the section the thread goes to its abort handler, outside it does not; the count stays exact", &[BootProgram::RseqMain.selector(RSEQ_STEP)], Cpus::Boot),
    rseq_case("rseq: SetRseq refuses a misaligned or unmapped area, an unknown operation, a second registration and an unregistration with another area or signature; a wrong signature, an unmapped descriptor, an abort address inside its section and an area unmapped after registration each end the thread (KILLED_BY_RSEQ, KillReason::Rseq), not the kernel", &[BootProgram::RseqMain.selector(RSEQ_BAD)], Cpus::Boot),
    Case {
        priorities: &[crate::rseq_slice_tests::SLICE_PRIORITY as u8],
        ..rseq_case("rseq: time-slice extension at the highest priority with a peer ready: granted once and ended by SliceYield (which says 1), overrun when not ended (preempted at its end, the grant taken back, the overrun counted), and a request kept set for 300 ms does not starve the peer", &[BootProgram::RseqMain.selector(RSEQ_SLICE)], Cpus::Boot)
    },
    rseq_case("rseq: the kernel's rseq counters of the run (DebugRseqCounters, also printed by the kernel): fix-ups, extensions granted and overrun all seen, and consistent with each other", &[BootProgram::RseqMain.selector(RSEQ_COUNTERS)], Cpus::Boot),
];

/// The SMP grants and the physical timer's IrqHandler in slot 5.
const RSEQ_TIMER_GRANTS: &[Grant] = &[
    Grant {
        thread: 0,
        slot: 2,
        object: CaseObject::Untyped,
        rights: Rights::ALL,
        badge: 0,
    },
    vspace_grant(0, 3, 0, Rights::ALL),
    tcb_grant(0, 4, 0, Rights::ALL),
    Grant {
        thread: 0,
        slot: 5,
        object: CaseObject::Irq,
        rights: Rights::READ_WRITE,
        badge: 0,
    },
];

/// What only several CPUs can break (`init/src/smp_tests.rs`): one case
/// thread per case, which makes its workers in its own space and puts
/// them on their CPUs. Each needs two CPUs (skipped on one).
const fn smp_case(name: &'static str, threads: &'static [u64]) -> Case {
    Case {
        name,
        threads,
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 0,
        untyped_pages: 64,
        irq: None,
        grants: SMP_GRANTS,
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: Some(6),
        root_task: false,
        cpus: Cpus::AtLeast(2),
    }
}

/// The case thread's Untyped, VSpace and TCB (`init/src/smp_tests.rs`).
const SMP_GRANTS: &[Grant] = &[
    Grant {
        thread: 0,
        slot: 2,
        object: CaseObject::Untyped,
        rights: Rights::ALL,
        badge: 0,
    },
    vspace_grant(0, 3, 0, Rights::ALL),
    tcb_grant(0, 4, 0, Rights::ALL),
];

const SMP_CASES: [Case; 5] = [
    smp_case("SMP: 20 000 IPC calls from one CPU answered on another (slow path, the partner made ready on its CPU), every reply's words and both sides' CPUs checked", &[BootProgram::SmpMain.selector(SMP_PING_PONG)]),
    smp_case("SMP: capabilities revoked and deleted on CPU 0 while threads on the other CPUs signal and send through them: nothing succeeds once the revoke returned, every later call is InvalidCapability, the invariants hold while they run", &[BootProgram::SmpMain.selector(SMP_REVOKE)]),
    smp_case("SMP: a frame unmapped on CPU 0 while another CPU reads it: the next load faults at that page (translation), never reaching the memory, which is retyped and written elsewhere (16 rounds)", &[BootProgram::SmpMain.selector(SMP_UNMAP)]),
    smp_case("SMP: threads moved between CPUs blocked in Recv, blocked in Call, ready and running (through every CPU), and a thread moving itself: each runs next on its new CPU, its message intact", &[BootProgram::SmpMain.selector(SMP_MIGRATE)]),
    smp_case("SMP: a thread another CPU runs: registers read while it runs, its PC written while it runs, suspended (it stops; registers stay), x0 and PC written and resumed, a syscall loop suspended and resumed 100 times", &[BootProgram::SmpMain.selector(SMP_REMOTE_TCB)]),
];

/// The fuzzer with its three threads on CPUs 1, 2 and 3 (`Cpus::Spread`;
/// the threads they make stay on their CPU): two short rounds, the
/// kernel's invariants checked after each (and at every 4th tick while
/// they run).
const SMP_FUZZ_CASES: [Case; 2] = [
    smp_fuzz_case("SMP: fuzz round 1 with a fuzzer on each of CPUs 1..3, invariants checked at ticks and after", &[
        smp_fuzz_selector(0, 0x5e_0001),
        smp_fuzz_selector(1, 0x5e_0001),
        smp_fuzz_selector(2, 0x5e_0001),
    ]),
    smp_fuzz_case("SMP: fuzz round 2 with a fuzzer on each of CPUs 1..3, invariants checked at ticks and after", &[
        smp_fuzz_selector(0, 0x5e_0002),
        smp_fuzz_selector(1, 0x5e_0002),
        smp_fuzz_selector(2, 0x5e_0002),
    ]),
];

/// Calls each fuzzer of an SMP round makes.
const SMP_FUZZ_CALLS: u32 = 2_000;

const fn smp_fuzz_selector(index: u8, seed: u32) -> u64 {
    BootProgram::Fuzzer.selector(
        crate::programs::FuzzParameter {
            index,
            seed,
            calls: SMP_FUZZ_CALLS,
        }
        .encode(),
    )
}

const fn smp_fuzz_case(name: &'static str, threads: &'static [u64]) -> Case {
    Case {
        name,
        threads,
        cpus: Cpus::Spread,
        ..FUZZ_CASES[0]
    }
}

/// A policy server answers later (`init/src/policy_server_tests.rs`):
/// the server (thread 0, most urgent) confines the three askers (1..=3)
/// with a filter naming itself, then serves.
const ASYNC_POLICY_CASE: Case = Case {
    name: "a policy server answers later: it saves the requests of three confined threads in Reply objects and answers them in reverse order, each thread getting its own verdict; a saved request whose Reply object is deleted is refused (Denied); a second save or a second answer finds nothing; a Notify filter is not attached without a server nor with the confined thread as its server (InvalidArgument), a filter without Notify is",
    threads: &[
        BootProgram::AsyncPolicyServer.selector(0),
        BootProgram::AsyncAsker.selector(0),
        BootProgram::AsyncAsker.selector(1),
        BootProgram::AsyncAsker.selector(2),
    ],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 0,
    untyped_pages: 16,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        Grant { thread: 0, slot: 3, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        tcb_grant(0, 4, 1, TCB_WITH_POLICY),
        tcb_grant(0, 5, 2, TCB_WITH_POLICY),
        tcb_grant(0, 6, 3, TCB_WITH_POLICY),
        grant(0, 7, SEND, POLICY_ASKER_BADGE),
        tcb_grant(0, 8, 0, Rights::READ),
        grant(1, ENDPOINT_SLOT, SEND, 0),
    ],
    priorities: &[
        DEFAULT_PRIORITY + 10,
        DEFAULT_PRIORITY,
        DEFAULT_PRIORITY,
        DEFAULT_PRIORITY,
    ],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// A policy server lost (`init/src/policy_server_tests.rs`): one
/// supervisor makes the server and three askers itself.
const SERVER_LOSS_CASES: [Case; 3] = [
    loss_case(
        "a policy server that exits holding a saved request, a delivered one and a queued one: all three askers are refused (Denied) at once, their next requests too without reaching anyone; the supervisor reads the loss in the end message (3 attachments, 3 refused); it restarts the server and hands it the filter (a reader, a confined thread or a handover to the ended thread is refused) and the askers are served again",
        &[BootProgram::LossSupervisor.selector(LOSS_EXIT)],
    ),
    loss_case(
        "a policy server that faults (a handler could resume it) fails its filters' requests at once, as one that exits; the fault message and then the end message say so",
        &[BootProgram::LossSupervisor.selector(LOSS_FAULT)],
    ),
    loss_case(
        "a policy server whose TCB is deleted fails its filters' requests at once; while it lived, a handover took none of its attachments",
        &[BootProgram::LossSupervisor.selector(LOSS_DELETE)],
    ),
];

const fn loss_case(name: &'static str, threads: &'static [u64]) -> Case {
    Case {
        name,
        threads,
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 0,
        untyped_pages: 64,
        irq: None,
        grants: &[
            Grant {
                thread: 0,
                slot: 2,
                object: CaseObject::Untyped,
                rights: Rights::ALL,
                badge: 0,
            },
            Grant {
                thread: 0,
                slot: 3,
                object: CaseObject::VSpace(0),
                rights: Rights::READ_WRITE,
                badge: 0,
            },
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: Some(6),
        root_task: false,
        cpus: Cpus::Boot,
    }
}

/// What a call carries in memory runs as judged
/// (`init/src/judged_memory_tests.rs`): the scribbler (thread 0) makes
/// the app in its own space and CSpace; the server (thread 1) is the
/// app's policy server (endpoint 1) and receives its calls (endpoint 0);
/// the scribbler wakes it through notification 0.
const JUDGED_MEMORY_CASE: Case = Case {
    name: "memory is judged once and used as judged (no TOCTOU): a sibling in the caller's address space rewrites its IPC buffer after every check, while the call waits queued for its receiver or for its policy server's answer (allow, allow with new registers); the receiver always gets the judged words, the server's request carries the judged bytes; racing the check in a tight loop, spoiled buffers are refused and every delivered one is the judged pattern",
    threads: &[BootProgram::JudgedScribbler.selector(0), BootProgram::JudgedServer.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 2,
    notifications: 1,
    untyped_pages: 64,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        vspace_grant(0, 3, 0, Rights::READ_WRITE),
        tcb_grant(0, 4, 0, Rights::READ_WRITE),
        grant(0, 5, SEND, JUDGED_APP_BADGE),
        nth_endpoint_grant(1, 0, 6, SEND, JUDGED_POLICY_BADGE),
        nth_notification_grant(0, 0, 7, SEND, 0),
        grant(1, 2, RECEIVE, 0),
        nth_endpoint_grant(1, 1, 3, RECEIVE, 0),
        nth_notification_grant(0, 1, 4, RECEIVE, 0),
        tcb_grant(1, 5, 1, Rights::READ_WRITE),
        tcb_grant(0, 15, 1, Rights::READ),
    ],
    priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY + 5],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(5),
    root_task: false,
    cpus: Cpus::Boot,
};
/// The badges `init/src/judged_memory_tests.rs` checks.
const JUDGED_APP_BADGE: u64 = crate::judged_memory_tests::APP_BADGE;
const JUDGED_POLICY_BADGE: u64 = crate::judged_memory_tests::POLICY_BADGE;

/// A thread's end reaches its supervisor (`init/src/supervision_tests.rs`).
const SUPERVISION_CASE: Case = Case {
    name: "a thread's end reaches its supervisor: threads made from user space with its fault endpoint (badged) end by an exit, a filter's Kill rule and a fault whose handler answers stop; each comes as an end message naming how (the status; the filter, rule and syscall; the fault's class, FAR, ESR and PC) with the badge, the TCB kept ended (a resume refused); a restart with new registers runs one again and it ends again; deleting an ended TCB gives its memory back (a new TCB fits in the same Untyped)",
    threads: &[BootProgram::Supervisor.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 0,
    untyped_pages: 96,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 0, slot: 3, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(6),
    root_task: false,
    cpus: Cpus::Boot,
};

/// A filter's memory and the threads it confines
/// (`init/src/filter_lifetime_tests.rs`).
const FILTER_LIFETIME_CASE: Case = Case {
    name: "a filter is paid for like any object and never lifted: a 16 KiB Untyped holds one filter (a second is NotEnoughMemory); deleting its capability leaves both threads it confines running under it and its memory taken, until the last of them has ended (then a new filter fits); revoking the Untyped ends the thread a new filter confines and gives the memory back, also when the same revoke destroys another object made from it; a revoke through a copy without the write right ends nobody",
    threads: &[BootProgram::FilterOwner.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 2,
    untyped_pages: 64,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 0, slot: 3, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
        nth_notification_grant(0, 0, 4, Rights::READ_WRITE, 0),
        nth_notification_grant(1, 0, 5, RECEIVE, 0),
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(5),
    root_task: false,
    cpus: Cpus::Boot,
};

/// Exhaustion from a small Untyped (`init/src/exhaustion_tests.rs`): both
/// threads hold the case's Untyped; the exhauster fills a 512 KiB one of
/// its own kind by kind, the survivor makes every kind meanwhile.
const EXHAUSTION_CASE: Case = Case {
    name: "exhaustion: a 512 KiB Untyped filled with each kind of object in turn holds more than the kernel's old tables did (1024 objects, 4096 CNode slots, 32 threads and spaces, 16 filters) and ends in NotEnoughMemory, the same count again after a revoke; while it is full another thread makes one object of every kind",
    threads: &[
        BootProgram::Exhauster.selector(0),
        BootProgram::Survivor.selector(0),
    ],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 2,
    untyped_pages: 384,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 1, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 0, 3, SEND, 0),
        nth_notification_grant(0, 1, 3, RECEIVE, 0),
        nth_notification_grant(1, 1, 4, SEND, 0),
        nth_notification_grant(1, 0, 4, RECEIVE, 0),
    ],
    priorities: &[DEFAULT_PRIORITY + 1, DEFAULT_PRIORITY],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(14),
    root_task: false,
    cpus: Cpus::Boot,
};

/// An interrupt nothing in the suite uses (the EL1 secure physical timer's
/// PPI): an IrqHandler for it is not the physical timer's.
const UNUSED_INTID: u32 = 29;

/// EL0 and the devices only the kernel programs
/// (`init/src/el0_device_tests.rs`): the EL1 physical timer (armed only
/// through its IrqHandler, `IrqSetTimer`) and the PMU (EL0 reads the cycle
/// counter, nothing else).
const EL0_DEVICE_CASES: [Case; 3] = [
    Case {
        name: "EL0 cannot program the EL1 physical timer: IrqSetTimer through another interrupt's IrqHandler is InvalidArgument, and a write of CNTP_CTL_EL0 traps (trapped system register access)",
        threads: &[BootProgram::TimerRegisterWriter.selector(0)],
        expect: fault(ExceptionClass::SystemRegister, None, None),
        endpoints: 0,
        notifications: 0,
        untyped_pages: 0,
        irq: Some(UNUSED_INTID),
        grants: &[
            Grant { thread: 0, slot: ENDPOINT_SLOT, object: CaseObject::Irq, rights: Rights::READ_WRITE, badge: 0 },
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    case(
        "EL0 reads the PMU cycle counter but cannot write the PMU: a write of PMCR_EL0 traps (trapped system register access)",
        &[BootProgram::PmuWriter.selector(0)],
        fault(ExceptionClass::SystemRegister, None, None),
    ),
    // The holder is more urgent: it waits for the prober's faults first.
    Case {
        name: "the physical timer only through its IrqHandler: a thread without capabilities arming, disarming or reading it, reading the physical counter or writing the PMU traps at each access (its handler resumes it) and no interrupt comes; IrqSetTimer's refusals; armed, disarmed (0) and re-armed through the capability",
        threads: &[BootProgram::TimerHolder.selector(0), BootProgram::DeviceProber.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 1,
        untyped_pages: 0,
        irq: Some(PHYSICAL_TIMER_INTID),
        grants: &[
            Grant { thread: 0, slot: ENDPOINT_SLOT, object: CaseObject::Irq, rights: Rights::READ_WRITE, badge: 0 },
            nth_notification_grant(0, 0, 3, Rights::READ_WRITE, 0x100),
            grant(0, 4, RECEIVE, 0),
            Grant { thread: 0, slot: 5, object: CaseObject::Irq, rights: Rights::READ, badge: 0 },
        ],
        priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
        endpoint_owner: None,
        fault_endpoints: &[(1, 0)],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
];

/// Syscalls that end their own thread are audited
/// (`init/src/audit_record_tests.rs`): the auditor shares its CNode (64
/// slots) and its address space with each audited thread it makes, whose
/// stack and IPC buffer come from the Untyped; they end before it does.
const SELF_ENDING_CASE: Case = Case {
    name: "a syscall that ends its own thread is audited: Exit, deleting its own TCB capability and revoking the Untyped its TCB came from each leave one record, with no result",
    threads: &[BootProgram::SelfEndAuditor.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 0,
    untyped_pages: 32,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 0, slot: 3, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
        Grant { thread: 0, slot: 4, object: CaseObject::Tcb(0), rights: Rights::READ_WRITE, badge: 0 },
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(6),
    root_task: false,
    cpus: Cpus::Boot,
};

/// Each filter's `Notify` goes to its own server
/// (`init/src/policy_routing_tests.rs`): the app (thread 0), server A
/// (thread 1, endpoint 0) and server B (thread 2, endpoint 1). A runs
/// first and starts B (notification 0); A tells B each time it allowed a
/// call (notification 1); the app polls notification 2.
const POLICY_ROUTING_CASE: Case = Case {
    name: "each filter keeps its policy server: a later filter naming another server takes over none of the first's Notify verdicts; both servers asked in stack order and both must allow, an AllowWith asks the first again; a Notify filter is never attached without a server (InvalidArgument), one that refuses is; a second TcbSetAudit is Denied and only the ring's Frame turns audit off",
    threads: &[
        BootProgram::RoutedApp.selector(0),
        BootProgram::RouteServerA.selector(0),
        BootProgram::RouteServerB.selector(0),
    ],
    expect: Expect::ExitZero,
    endpoints: 2,
    notifications: 3,
    untyped_pages: 32,
    irq: None,
    grants: &[
        grant(0, 2, SEND, 0xd0),
        nth_notification_grant(2, 0, 3, Rights::READ_WRITE, 0),
        grant(1, 2, RECEIVE, 0),
        grant(1, 3, SEND, ROUTE_BADGE_A),
        tcb_grant(1, 4, 0, TCB_WITH_POLICY),
        Grant { thread: 1, slot: 5, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 1, 6, SEND, 0),
        nth_notification_grant(1, 1, 7, SEND, 0),
        nth_endpoint_grant(1, 1, 8, SEND, 0xd1),
        nth_endpoint_grant(1, 2, 2, RECEIVE, 0),
        nth_endpoint_grant(1, 2, 3, SEND, ROUTE_BADGE_B),
        tcb_grant(2, 4, 0, TCB_WITH_POLICY),
        Grant { thread: 2, slot: 5, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 2, 6, RECEIVE, 0),
        nth_notification_grant(1, 2, 7, RECEIVE, 0),
        tcb_grant(1, 14, 1, Rights::READ),
        tcb_grant(2, 14, 2, Rights::READ),
    ],
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY + 5],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};
/// The badges `init/src/policy_routing_tests.rs` checks its servers'
/// requests arrive with.
const ROUTE_BADGE_A: u64 = 0xa;
const ROUTE_BADGE_B: u64 = 0xb;

/// A stopped call runs as judged or not at all
/// (`init/src/stopped_call_tests.rs`): the victim (thread 0), the attacker
/// holding its TCB (thread 1) and the warden (thread 2: its policy server
/// and auditor, or its tracer and policy server), each more urgent than
/// the last. The warden hands the CPU to the attacker through
/// notification 1 and takes it back through 2; a `Signal` slipped into
/// the victim's calls would hit notification 0.
const STOPPED_CALL_CASES: [Case; 3] = [
    Case {
        name: "a policy server's verdict covers the call, not the svc: a sibling writing x0..x8 of a thread waiting for its server (or answered, not yet run, or queued, or blocked in a Call) cancels the call (Interrupted, the writer told), as does a suspension; x9 and NZCV cancel nothing; its own x0 and x8 are refused; the server's late answer finds no caller; each call has one audit record, the cancelled ones 'cancelled'",
        threads: &[
            BootProgram::PolicyVictim.selector(0),
            BootProgram::CancelAttacker.selector(CANCEL_SCENARIO_POLICY),
            BootProgram::PolicyWarden.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 3,
        untyped_pages: 8,
        irq: None,
        grants: &[
            grant(0, 2, SEND, STOPPED_VICTIM_BADGE),
            nth_notification_grant(0, 0, 3, Rights::READ_WRITE, 0),
            tcb_grant(0, 4, 0, Rights::READ_WRITE),
            tcb_grant(1, 2, 0, Rights::READ_WRITE),
            tcb_grant(1, 3, 1, Rights::READ_WRITE),
            nth_notification_grant(1, 1, 4, RECEIVE, 0),
            nth_notification_grant(2, 1, 5, SEND, 0),
            grant(2, 2, RECEIVE, 0),
            grant(2, 3, SEND, POLICY_ASKER_BADGE),
            tcb_grant(2, 4, 0, TCB_WITH_TRACE),
            Grant { thread: 2, slot: 5, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
            nth_notification_grant(1, 2, 6, SEND, 0),
            nth_notification_grant(2, 2, 7, RECEIVE, 0),
            nth_notification_grant(0, 2, 8, RECEIVE, 0),
            vspace_grant(2, 9, 2, Rights::READ_WRITE),
            tcb_grant(2, 13, 2, Rights::READ),
        ],
        priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 5, DEFAULT_PRIORITY + 10],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "a tracer's answer covers the call it saw: a sibling writing x0..x8 of a traced thread at its entry stop, after the tracer continued, modified or skipped it, or at its policy stop after the entry stop, cancels the call (Interrupted); the tracer then gets an exit stop saying so if it had answered the entry stop, none if not; a write of x9 cancels nothing",
        threads: &[
            BootProgram::TraceVictim.selector(0),
            BootProgram::CancelAttacker.selector(CANCEL_SCENARIO_TRACE),
            BootProgram::TraceWarden.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 3,
        untyped_pages: 8,
        irq: None,
        grants: &[
            grant(0, 2, SEND, STOPPED_VICTIM_BADGE),
            nth_notification_grant(0, 0, 3, Rights::READ_WRITE, 0),
            tcb_grant(1, 2, 0, Rights::READ_WRITE),
            tcb_grant(1, 3, 1, Rights::READ_WRITE),
            nth_notification_grant(1, 1, 4, RECEIVE, 0),
            nth_notification_grant(2, 1, 5, SEND, 0),
            grant(2, 2, RECEIVE, 0),
            grant(2, 3, SEND, POLICY_ASKER_BADGE),
            tcb_grant(2, 4, 0, TCB_WITH_TRACE),
            Grant { thread: 2, slot: 5, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
            nth_notification_grant(1, 2, 6, SEND, 0),
            nth_notification_grant(2, 2, 7, RECEIVE, 0),
            nth_notification_grant(0, 2, 8, RECEIVE, 0),
            grant(2, 9, SEND, TRACEE_BADGE),
            tcb_grant(2, 13, 2, Rights::READ),
        ],
        priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 5, DEFAULT_PRIORITY + 10],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    // The app (thread 0), its auditor (1, most urgent) and the attacker
    // (2, least urgent: it runs only once both others wait).
    Case {
        name: "a call waiting for room in a lossless audit ring is a stopped call too: a sibling's write of x2 cancels it (Interrupted, the writer told), and its record, which the full ring cannot take, is a counted drop: a sequence gap the next record reports",
        threads: &[
            BootProgram::RoomApp.selector(0),
            BootProgram::RoomAuditor.selector(0),
            BootProgram::RoomAttacker.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 4,
        irq: None,
        grants: &[
            grant(0, 2, SEND, 0),
            grant(1, 2, RECEIVE, 0),
            tcb_grant(1, 3, 0, TCB_WITH_POLICY),
            Grant { thread: 1, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
            vspace_grant(1, 5, 1, Rights::READ_WRITE),
            tcb_grant(2, 2, 0, Rights::READ_WRITE),
            grant(2, 3, SEND, 0),
        ],
        priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY - 10],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
];
/// The badge of the stopped-call victim's own capability to its warden.
const STOPPED_VICTIM_BADGE: u64 = 0xa5;

/// The capability `x0` names is part of what was judged
/// (`init/src/capability_swap_tests.rs`): the sibling (thread 0) makes
/// the victim in its own CNode and confines it, sending its `Signal`s to
/// the warden (thread 1, more urgent), which hands the CPU to the sibling
/// through notification 2 and takes it back through 3 while a `Signal`
/// of the slot holding notification 0's capability is stopped; the
/// sibling moves notification 1's capability in (or notification 0's
/// under another badge, minted from the unbadged one in slot 12), or the
/// judged one out; last, the judged call names a notification the
/// sibling made from a one-page Untyped of its own, which it destroys and
/// makes again in the same memory. Endpoint 1 carries the victim's
/// reports to the sibling. 32-slot CNodes.
const CAPABILITY_SWAP_CASE: Case = Case {
    name: "the capability x0 names is part of what was judged: a sibling sharing the CSpace that moves another capability into the slot of a Signal waiting for its policy server (another notification, or the same one under another badge), deletes the judged one, destroys it and retypes a new one in its memory into the slot (an equal capability to another object), or moves it away after the server's allow has the call cancelled when it goes on (Interrupted, recorded 'cancelled', nothing signalled through any of them; the allow still finds its caller); a change of other slots cancels nothing",
    threads: &[BootProgram::SwapSibling.selector(0), BootProgram::SwapWarden.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 2,
    notifications: 4,
    untyped_pages: 16,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        vspace_grant(0, 3, 0, Rights::READ_WRITE),
        tcb_grant(0, 4, 0, Rights::READ_WRITE),
        grant(0, 5, SEND, POLICY_ASKER_BADGE),
        nth_endpoint_grant(1, 0, 6, RECEIVE, 0),
        nth_endpoint_grant(1, 0, 7, SEND, SWAP_REPORT_BADGE),
        nth_notification_grant(2, 0, 8, RECEIVE, 0),
        nth_notification_grant(3, 0, 9, SEND, 0),
        nth_notification_grant(0, 0, 10, Rights::READ_WRITE, SWAP_JUDGED_BADGE),
        nth_notification_grant(1, 0, 11, Rights::READ_WRITE, SWAP_OTHER_BADGE),
        nth_notification_grant(0, 0, 12, Rights::READ_WRITE, 0),
        tcb_grant(0, 30, 1, Rights::READ),
        grant(1, 2, RECEIVE, 0),
        nth_notification_grant(2, 1, 3, SEND, 0),
        nth_notification_grant(3, 1, 4, RECEIVE, 0),
    ],
    priorities: &[DEFAULT_PRIORITY + 5, DEFAULT_PRIORITY + 10],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(5),
    root_task: false,
    cpus: Cpus::Boot,
};
/// The badges `init/src/capability_swap_tests.rs` checks: the victim's
/// reports, the judged notification capability, the other one.
const SWAP_REPORT_BADGE: u64 = 0xa5;
const SWAP_JUDGED_BADGE: u64 = 0xa1;
const SWAP_OTHER_BADGE: u64 = 0xb2;

/// One record per syscall, whoever decided it
/// (`init/src/audit_record_tests.rs`): the app (thread 0) is traced,
/// filtered, audited by the warden (thread 1, more urgent), which is also
/// its policy server and fault handler (endpoint 0 for all of it).
const VERDICT_RECORDS_CASE: Case = Case {
    name: "one audit record per syscall once its verdict is final: a filter's allow, errno and log, a policy server's errno, emulate and allow (each forwarded), a trap and a kill; a call the policy server answered itself still has its trace exit stop",
    threads: &[BootProgram::VerdictApp.selector(0), BootProgram::VerdictWarden.selector(0)],
    expect: Expect::ExitZeroOrKilled,
    endpoints: 1,
    notifications: 1,
    untyped_pages: 8,
    irq: None,
    grants: &[
        nth_notification_grant(0, 0, 2, Rights::READ_WRITE, 0),
        grant(0, 3, RECEIVE, 0),
        grant(1, 2, RECEIVE, 0),
        grant(1, 3, SEND, POLICY_ASKER_BADGE),
        grant(1, 4, SEND, TRACEE_BADGE),
        tcb_grant(1, 5, 0, TCB_WITH_TRACE),
        Grant { thread: 1, slot: 6, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        vspace_grant(1, 7, 1, Rights::READ_WRITE),
        tcb_grant(1, 8, 1, Rights::READ_WRITE),
    ],
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10],
    endpoint_owner: None,
    fault_endpoints: &[(0, 0)],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// Confinement is inherited (`init/src/confinement_tests.rs`): the
/// warden (thread 1, more urgent) confines the parent (thread 0) through
/// endpoint 0 before it runs; endpoint 1 is the parent's own, and so is
/// its VSpace (slot 5), which the child shares. 32-slot CNodes.
const INHERITED_CONFINEMENT_CASE: Case = Case {
    name: "confinement is inherited: a thread made by a filtered, audited, traced thread has its filters (with their server), its audit (same ring and badge, its own thread in the records) and its tracer; the creator's rights over the new TCB turn none of it off, replace none of it, and a filter it adds naming its own server lifts and re-routes nothing",
    threads: &[BootProgram::ConfinementParent.selector(0), BootProgram::ConfinementWarden.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 2,
    notifications: 0,
    untyped_pages: 24,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        tcb_grant(0, 3, 0, Rights::READ_WRITE),
        vspace_grant(0, 5, 0, Rights::READ_WRITE),
        nth_endpoint_grant(1, 0, 4, SEND, 0),
        grant(1, 2, RECEIVE, 0),
        grant(1, 3, SEND, POLICY_ASKER_BADGE),
        grant(1, 4, SEND, TRACEE_BADGE),
        tcb_grant(1, 5, 0, TCB_WITH_TRACE),
        tcb_grant(1, 13, 1, Rights::READ),
        Grant { thread: 1, slot: 6, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        vspace_grant(1, 7, 1, Rights::READ_WRITE),
    ],
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(5),
    root_task: false,
    cpus: Cpus::Boot,
};

/// A long `Retype` is preemptible (`init/src/preemption_tests.rs`): the
/// retyper (thread 0) has 16 MiB of Untyped; the preemptor (thread 1,
/// more urgent) traces, judges and audits it (endpoint 0) and holds the
/// physical timer. Both CNodes have 128 slots (62 VSpaces and more).
const PREEMPTIBLE_RETYPE_CASE: Case = Case {
    name: "a long Retype is preemptible: 16 MiB of VSpaces being zeroed stop at a pending interrupt, the more urgent thread it wakes runs while the call is unfinished (x0 still its Untyped), and the call goes on to make them all; judged, traced and audited once however often it stopped; a register write while it is stopped cancels it and nothing is made",
    threads: &[BootProgram::PreemptedRetyper.selector(0), BootProgram::Preemptor.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 1,
    untyped_pages: 4096,
    irq: Some(PHYSICAL_TIMER_INTID),
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 1, slot: 2, object: CaseObject::Irq, rights: Rights::READ_WRITE, badge: 0 },
        nth_notification_grant(0, 1, 3, Rights::READ_WRITE, 0),
        grant(1, 4, RECEIVE, 0),
        grant(1, 5, SEND, TRACEE_BADGE),
        grant(1, 6, SEND, POLICY_ASKER_BADGE),
        tcb_grant(1, 7, 0, TCB_WITH_TRACE),
        tcb_grant(1, 8, 1, Rights::READ_WRITE),
        Grant { thread: 1, slot: 9, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        vspace_grant(1, 10, 1, Rights::READ_WRITE),
    ],
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(7),
    root_task: false,
    cpus: Cpus::Boot,
};

/// A yield to a thread preempted in a long `Retype`
/// (`init/src/preemption_tests.rs`): the retyper (thread 0) has 16 MiB
/// of Untyped and no entry work; the yielder (thread 1) has its priority.
/// Both hold the notification the retyper signals at its end (slot 3)
/// and the one the yielder signals after each yield (slot 4).
const YIELD_TO_PREEMPTED_CALL_CASE: Case = Case {
    name: "a yield to a thread preempted in a long Retype (no entry work, queued by the round robin with its call kept) lets the call go on: each Retype of 16 MiB makes all 62 VSpaces and returns Ok, in rounds until the yielder has run during two",
    threads: &[BootProgram::YieldRetyper.selector(0), BootProgram::RetypeYielder.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 2,
    untyped_pages: 4096,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 0, 3, Rights::READ_WRITE, 1),
        nth_notification_grant(0, 1, 3, Rights::READ_WRITE, 1),
        nth_notification_grant(1, 0, 4, Rights::READ_WRITE, 1),
        nth_notification_grant(1, 1, 4, Rights::READ_WRITE, 1),
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(7),
    root_task: false,
    cpus: Cpus::Boot,
};

/// Reply capabilities (`init/src/reply_tests.rs`): the server (thread 0,
/// most urgent) saves the first client's reply, answers the second client
/// first and the first one through its Reply capability, then makes each
/// kind of saved reply go stale (caller suspended, killed) or deletes it.
/// The server's slots: its endpoint (2, receive and send), the first
/// client's TCB (3), an Untyped (4) for the thread it makes and kills (a
/// thread of its own space, whose stack and buffer come from the Untyped
/// too) and its own VSpace (14).
const REPLY_CAPS_CASE: Case = Case {
    name: "reply capabilities: ReplySave refusals; a saved reply moves but is never copied, answers after another caller, once; suspending or killing its caller makes it stale (NoReplyTarget); deleting it wakes the caller with ObjectDeleted",
    threads: &[
        BootProgram::ReplyServer.selector(0),
        BootProgram::ReplyClient.selector(REPLY_CLIENT_FIRST),
        BootProgram::ReplyClient.selector(REPLY_CLIENT_SECOND),
    ],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 0,
    untyped_pages: 12,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, Rights::READ_WRITE, 0),
        tcb_grant(0, SECOND_ENDPOINT_SLOT, 1, Rights::WRITE),
        Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        vspace_grant(0, 14, 0, Rights::READ_WRITE),
        grant(1, ENDPOINT_SLOT, SEND, REPLY_CLIENT_FIRST),
        grant(2, ENDPOINT_SLOT, SEND, REPLY_CLIENT_SECOND),
    ],
    priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY + 5, DEFAULT_PRIORITY],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(5),
    root_task: false,
    cpus: Cpus::Boot,
};

/// Threads made from user space (`init/src/thread_tests.rs`): the root
/// has an Untyped (slot 2), a 64-slot CNode, its own TCB (slot 10) and
/// VSpace (slot 11, which its children share);
/// the two threads it makes are ended with the case's Untyped at the
/// latest, and no thread may outlive the case (`Kernel::finish_case`).
const USER_THREADS_CASE: Case = Case {
    name: "threads from user space: retype TCBs and CNodes, give each child only its capabilities, configure (MCP; a program selector refused: the kernel loads no program) and start each as a thread of the root's own program and address space, stack and IPC buffer from its Untyped; the children talk over an endpoint and report; TCBs are made until the Untyped runs out (NotEnoughMemory: no thread table); deleting a TCB ends its thread",
    threads: &[BootProgram::ThreadsRoot.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 0,
    untyped_pages: 28,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 0, slot: 10, object: CaseObject::Tcb(0), rights: Rights::READ_WRITE, badge: 0 },
        vspace_grant(0, 11, 0, Rights::READ_WRITE),
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(6),
    root_task: false,
    cpus: Cpus::Boot,
};

/// An address space built from user space (`init/src/user_space_tests.rs`):
/// the root's VSpace, TCB, CNode and Frames come from the case's Untyped;
/// the child it makes ends with its VSpace, TCB or that Untyped at the
/// latest.
const USER_SPACE_CASE: Case = Case {
    name: "address spaces from user space: retype a VSpace (its tables charged to the Untyped), TcbConfigure without a program, TcbSetSpace with IPC buffer and fault endpoint; the child runs a hand-written program in its own space, signals and faults to its handler; a second thread bound to the same VSpace runs the same code, mapped once, from another entry and signals, and so does a thread bound to the root's own VSpace (the driver's making, the root running in it); every bad argument refused; the table budget runs out; deleting the VSpace ends both threads, ending the thread frees the VSpace for reuse, revoking the Untyped reclaims everything",
    threads: &[BootProgram::UserSpaceRoot.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 0,
    untyped_pages: 32,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 2, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 0, slot: 3, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
        Grant { thread: 0, slot: 16, object: CaseObject::Tcb(0), rights: Rights::READ_WRITE, badge: 0 },
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(6),
    root_task: false,
    cpus: Cpus::Boot,
};

/// Syscall user dispatch (`init/src/user_dispatch_tests.rs`).
const USER_DISPATCH_CASES: [Case; 3] = [
    case(
        "syscall user dispatch: bad configurations get typed errors; a blocked call from outside the trampoline runs the handler, which sees its number and arguments and returns an emulated result; the selector switches it without a syscall; calls from the trampoline always run",
        &[BootProgram::UserDispatch.selector(0)],
        Expect::ExitZero,
    ),
    Case {
        name: "syscall user dispatch, memory gone: an unreadable selector blocks (and the frame says so); a buffer that cannot be written kills the thread, never the kernel",
        threads: &[BootProgram::UserDispatchUnmapped.selector(0)],
        expect: Expect::ExitStatus(abi::user_dispatch::KILLED_BY_USER_DISPATCH),
        endpoints: 0,
        notifications: 0,
        untyped_pages: 4,
        irq: None,
        grants: &[
            Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
            Grant { thread: 0, slot: 6, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "syscall user dispatch on both paths: a redirect and its return into the SDK's buffer (one page: the fast path, uncounted by the generic entry) and into a buffer across two pages (the generic entry, both syscalls counted) give the caller the handler's answer and the handler the same frame",
        threads: &[BootProgram::UserDispatchPaths.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 0,
        untyped_pages: 4,
        irq: None,
        grants: &[
            Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
            Grant { thread: 0, slot: 6, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
            Grant { thread: 0, slot: 7, object: CaseObject::Tcb(0), rights: Rights::READ_WRITE, badge: 0 },
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
];

/// The policy fast path against the generic entry
/// (`init/src/policy_paths_tests.rs`).
const POLICY_PATHS_CASE: Case = Case {
    name: "policy judged on the registers on both paths: the same Null and Yield calls through two stacked filters whose rules compare registers every way a rule can get the same results from the vector's walk of the compiled verdicts (no call reaches the generic entry) and, once a filter that reads the PC is attached, from the generic entry (every call counted)",
    threads: &[BootProgram::PolicyPaths.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 0,
    untyped_pages: 16,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 0, slot: 7, object: CaseObject::Tcb(0), rights: TCB_WITH_TRACE, badge: 0 },
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// A trace exit stop answered on both paths
/// (`init/src/trace_answer_tests.rs`): the tracer (thread 0, more urgent,
/// so it attaches before the tracee runs), its tracee (thread 1) and a
/// bystander between them (thread 2).
const TRACE_ANSWER_PATHS_CASE: Case = Case {
    name: "a trace exit stop answered on both paths: the same Nulls, their exit stops answered continue in a register-only reply (the IPC fast path: the tracer's ReplyRecv is not counted) and in a seven-word one (the generic entry: counted), leave the tracee the same registers",
    threads: &[
        BootProgram::TraceAnswerTracer.selector(0),
        BootProgram::TraceAnswerTracee.selector(0),
        BootProgram::TraceAnswerBystander.selector(0),
    ],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 2,
    untyped_pages: 0,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        tcb_grant(0, 3, 1, TCB_WITH_TRACE),
        grant(0, 4, SEND, TRACEE_BADGE),
        tcb_grant(0, 5, 0, Rights::READ_WRITE),
        nth_notification_grant(0, 0, 6, Rights::READ_WRITE, 1),
        nth_notification_grant(1, 0, 7, Rights::READ_WRITE, 0),
        nth_notification_grant(0, 2, 2, Rights::READ_WRITE, 0),
        nth_notification_grant(1, 2, 3, Rights::READ_WRITE, 1),
    ],
    // The bystander between the two: the tracer's wake leaves it ready.
    priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY, DEFAULT_PRIORITY + 5],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// A trace entry stop sent on both paths (`init/src/trace_entry_tests.rs`):
/// the tracer (thread 0), its tracee (thread 1), more urgent, which waits
/// for the tracer's start, and a bystander between them (thread 2), which
/// holds the physical timer.
const TRACE_ENTRY_PATHS_CASE: Case = Case {
    name: "a trace entry stop sent on both paths: the same syscalls stop at their entry while the tracer waits in ReplyRecv (the trace fast path: the tracee's syscall is not counted), while it waits but a more urgent thread is ready (the generic entry, which runs that thread first) and while it does not wait (the generic entry queues the stop), and the stops carry the same words",
    threads: &[
        BootProgram::TraceEntryTracer.selector(0),
        BootProgram::TraceEntryTracee.selector(0),
        BootProgram::TraceEntryBystander.selector(0),
    ],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 4,
    untyped_pages: 0,
    irq: Some(PHYSICAL_TIMER_INTID),
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        tcb_grant(0, 3, 1, TCB_WITH_TRACE),
        grant(0, 4, SEND, TRACEE_BADGE),
        nth_notification_grant(0, 0, 6, Rights::READ_WRITE, 1),
        nth_notification_grant(0, 1, 2, Rights::READ_WRITE, 0),
        Grant { thread: 2, slot: 2, object: CaseObject::Irq, rights: Rights::READ_WRITE, badge: 0 },
        nth_notification_grant(1, 2, 3, Rights::READ_WRITE, 1),
        nth_notification_grant(2, 0, 7, Rights::READ_WRITE, 1),
        nth_notification_grant(2, 2, 4, Rights::READ_WRITE, 0),
        nth_notification_grant(3, 2, 5, Rights::READ_WRITE, 1),
        nth_notification_grant(3, 0, 8, Rights::READ_WRITE, 0),
    ],
    // The tracee most urgent: a `Reply` to its exit stop lets it make its
    // next syscall before the tracer's `Recv`. The bystander, woken while
    // the tracee runs, is ready above the tracer when the tracee stops.
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 5, DEFAULT_PRIORITY + 2],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// A policy request sent on both paths (`init/src/policy_request_tests.rs`):
/// the server (thread 0) and the asker (thread 1), more urgent, whose
/// filter names the server.
const POLICY_REQUEST_PATHS_CASE: Case = Case {
    name: "a policy request sent on both paths: the same Null, Yield and Poll calls, each its one filter's constant Notify, ask the server while it waits in ReplyRecv (the policy request fast path: the asker's syscall is not counted) and while it does not (the generic entry queues the request), and the requests carry the same words, each cookie one more",
    threads: &[
        BootProgram::PolicyRequestServer.selector(0),
        BootProgram::PolicyRequestAsker.selector(0),
    ],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 2,
    untyped_pages: 8,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        tcb_grant(0, 3, 1, Rights::READ),
        nth_notification_grant(0, 0, 6, Rights::READ_WRITE, 0),
        grant(1, ENDPOINT_SLOT, SEND, crate::policy_request_tests::ASKER_BADGE),
        tcb_grant(1, 3, 1, TCB_WITH_POLICY),
        Grant { thread: 1, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        tcb_grant(1, 5, 0, Rights::READ),
        nth_notification_grant(0, 1, 6, Rights::READ_WRITE, 1),
        nth_notification_grant(1, 1, 7, Rights::READ_WRITE, crate::policy_request_tests::POLLED_BADGE),
    ],
    // The asker most urgent: after a `Reply` it asks again before the
    // server's `Recv`.
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 5],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// A TCB capability that may attach a tracer and filters.
const TCB_WITH_TRACE: Rights =
    Rights::from_bytes([Rights::READ_WRITE.raw() | Rights::TRACE.raw() | Rights::POLICY.raw()]);

/// The badge of the tracer's capability to its own endpoint, which every
/// stop carries (`init/src/trace_tests.rs` checks it).
const TRACEE_BADGE: u64 = 0x7ace;

/// Tracing: a tracer (thread 0, more urgent, so it attaches before the
/// tracee runs) and its tracee (thread 1). See `init/src/trace_tests.rs`
/// for the slots.
const TRACE_CASE: Case = Case {
    name: "tracing: entry and exit stops, a skipped call has no exit stop, changed arguments and number are what policy sees, single-step over an svc reports after it returns, SYSEMU while stepping reports no spurious step, a tracer that exits at a stop lets the thread run on",
    threads: &[
        BootProgram::TraceTracer.selector(0),
        BootProgram::TraceTracee.selector(0),
    ],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 1,
    untyped_pages: 8,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        tcb_grant(0, 3, 1, TCB_WITH_TRACE),
        grant(0, 4, SEND, TRACEE_BADGE),
        tcb_grant(0, 5, 1, Rights::READ_WRITE),
        Grant { thread: 0, slot: 7, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 1, 5, Rights::READ_WRITE, 0),
    ],
    priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
    // The tracer holds the endpoint's original: its end keeps its CNode
    // (a user-made thread's TCB is kept), so it destroys the endpoint
    // before it exits, and the tracee's tracing goes with it.
    endpoint_owner: Some((0, 6)),
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// Frames and address spaces: a mapper (thread 1) with its Untyped in
/// slot 2, its own VSpace in slots 4 (read-write) and 5 (read-only) and
/// the handler's in 6;
/// its faults go to a handler (thread 0, above it in priority so it waits
/// first) holding the endpoint in slot 2 and the mapper's TCB in slot 4.
/// See `init/src/vspace_tests.rs`.
const VSPACE_CASE: Case = Case {
    name: "address spaces: frames from Untyped mapped R, RW and RX (never W+X), every refusal; unmap, delete and revoke take mappings down",
    threads: &[
        BootProgram::VSpaceFaultHandler.selector(0),
        BootProgram::VSpaceMapper.selector(0),
    ],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 0,
    untyped_pages: 5,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        Grant {
            thread: 0,
            slot: 4,
            object: CaseObject::Tcb(1),
            rights: Rights::READ,
            badge: 0,
        },
        Grant {
            thread: 1,
            slot: ENDPOINT_SLOT,
            object: CaseObject::Untyped,
            rights: Rights::READ_WRITE,
            badge: 0,
        },
        Grant {
            thread: 1,
            slot: 4,
            object: CaseObject::VSpace(1),
            rights: Rights::READ_WRITE,
            badge: 0,
        },
        Grant {
            thread: 1,
            slot: 5,
            object: CaseObject::VSpace(1),
            rights: Rights::READ,
            badge: 0,
        },
        // The handler's address space (the host tests map into it).
        Grant {
            thread: 1,
            slot: 6,
            object: CaseObject::VSpace(0),
            rights: Rights::READ_WRITE,
            badge: 0,
        },
    ],
    priorities: &[DEFAULT_PRIORITY + 1, DEFAULT_PRIORITY],
    endpoint_owner: None,
    fault_endpoints: &[(1, 0)],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

const fn tcb_grant(thread: u8, slot: u64, of_thread: u8, rights: Rights) -> Grant {
    Grant {
        thread,
        slot,
        object: CaseObject::Tcb(of_thread),
        rights,
        badge: 0,
    }
}

const fn vspace_grant(thread: u8, slot: u64, of_thread: u8, rights: Rights) -> Grant {
    Grant {
        thread,
        slot,
        object: CaseObject::VSpace(of_thread),
        rights,
        badge: 0,
    }
}

/// The slots `init/src/tcb_tests.rs` finds its capabilities in.
const PEER_TCB_SLOT: u64 = 4;
const PEER_TCB_READ_ONLY_SLOT: u64 = 5;
const TCB_NOTIFICATION_SLOT: u64 = 6;
const OWN_TCB_SLOT: u64 = 7;

const TCB_CONTROL_GRANTS: &[Grant] = &[
    tcb_grant(0, PEER_TCB_SLOT, 1, Rights::READ_WRITE),
    tcb_grant(0, PEER_TCB_READ_ONLY_SLOT, 1, Rights::READ),
    grant(0, ENDPOINT_SLOT, SEND, 0),
    grant(1, ENDPOINT_SLOT, RECEIVE, 0),
    tcb_grant(1, OWN_TCB_SLOT, 1, Rights::READ_WRITE),
];

/// A `TcbController` and its `TcbSubject` (above it in priority, so the
/// subject waits in `Recv` before the controller runs).
const fn tcb_control_case(name: &'static str, threads: &'static [u64]) -> Case {
    Case {
        name,
        threads,
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: TCB_CONTROL_GRANTS,
        priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    }
}

/// A TCB capability that may attach filters.
const TCB_WITH_POLICY: Rights =
    Rights::from_bytes([Rights::READ_WRITE.raw() | Rights::POLICY.raw()]);

/// A `Trap` verdict goes to the fault endpoint.
const POLICY_TRAP_CASE: Case = Case {
    name: "a Trap rule: the syscall does not run, its report (class SVC, the syscall number) goes to the fault handler, whose retry resumes after it with Denied",
    threads: &[BootProgram::PolicyTrapped.selector(0), BootProgram::PolicyTrapHandler.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 0,
    untyped_pages: 8,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: ENDPOINT_SLOT, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        tcb_grant(0, 3, 0, TCB_WITH_POLICY),
        grant(1, ENDPOINT_SLOT, RECEIVE, 0),
    ],
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10],
    endpoint_owner: None,
    fault_endpoints: &[(0, 0)],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// Filters whose verdict for `Call` is not a constant `Allow`, on a caller
/// whose server waits in `Recv`: the vector's mask test must keep those
/// calls off the IPC fast path. Equal priorities, so both directions of
/// the unfiltered and constant-`Allow` calls can take the fast path.
const POLICY_FAST_PATH_CASE: Case = Case {
    name: "filters and the IPC fast path: a constant Allow for Call keeps it, a rule on Call's x2 or a constant Errno refuses with the server waiting, a number past 63 aliasing Call's mask bit is still no Call",
    threads: &[BootProgram::PolicyFastCaller.selector(0), BootProgram::PolicyFastServer.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 0,
    untyped_pages: 16,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, SEND, 0),
        Grant { thread: 0, slot: 3, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        tcb_grant(0, 4, 0, TCB_WITH_POLICY),
        grant(1, ENDPOINT_SLOT, RECEIVE, 0),
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// Policy cases of the in-guest suite.
const POLICY_CASES: [Case; 2] = [Case {
    name: "filters from user space: load checks, attach needs the policy right, Errno/Kill verdicts, stacking, constant Allow and constant Errno in the vector (no aliasing of numbers above 63, x1..x8 untouched), deleting a filter's capability lifts nothing",
    threads: &[BootProgram::PolicyUser.selector(0)],
    expect: Expect::ExitStatus(abi::policy_request::KILLED_BY_POLICY),
    endpoints: 0,
    notifications: 1,
    untyped_pages: 16,
    irq: None,
    grants: &[
        Grant { thread: 0, slot: ENDPOINT_SLOT, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        tcb_grant(0, 3, 0, TCB_WITH_POLICY),
        tcb_grant(0, 4, 0, Rights::READ_WRITE),
        nth_notification_grant(0, 0, 5, Rights::READ_WRITE, 0),
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
}, Case {
    name: "Notify verdicts go to the policy server: allow, errno, emulate, changed arguments checked again; its death fails the waiting call and every later one at once, also once its endpoint is destroyed",
    threads: &[BootProgram::PolicyAsker.selector(0), BootProgram::PolicyServer.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 1,
    untyped_pages: 8,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, SEND, POLICY_ASKER_BADGE),
        tcb_grant(0, 3, 0, TCB_WITH_POLICY),
        Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 0, 5, Rights::READ_WRITE, 0),
        tcb_grant(0, 7, 1, Rights::READ),
        grant(1, ENDPOINT_SLOT, RECEIVE, 0),
    ],
    // The server is more urgent: it waits in Recv before the asker runs.
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10],
    // The asker holds the endpoint's original: the server's end keeps its
    // CNode (a user-made thread's TCB is kept), so the asker destroys the
    // endpoint once the server has ended, and every copy with it.
    endpoint_owner: Some((0, 6)),
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
}];

const AUDIT_GRANTS: &[Grant] = &[
    grant(0, ENDPOINT_SLOT, RECEIVE, 0),
    tcb_grant(0, 3, 1, TCB_WITH_POLICY),
    Grant {
        thread: 0,
        slot: 4,
        object: CaseObject::Untyped,
        rights: Rights::ALL,
        badge: 0,
    },
    nth_notification_grant(0, 0, 5, Rights::READ_WRITE, 0),
    Grant {
        thread: 0,
        slot: 6,
        object: CaseObject::VSpace(0),
        rights: Rights::READ_WRITE,
        badge: 0,
    },
    tcb_grant(0, 7, 0, Rights::READ_WRITE),
    grant(1, ENDPOINT_SLOT, SEND, 0),
];

const fn audit_case(name: &'static str, threads: &'static [u64]) -> Case {
    Case {
        name,
        threads,
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 1,
        untyped_pages: 12,
        irq: None,
        grants: AUDIT_GRANTS,
        // The server sets the ring up before the app runs.
        priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    }
}

/// Fault injection: the receiver of an in-progress call ends under it.
const KILLED_RECEIVER_CASE: Case = Case {
    name: "the receiver of an in-progress Call is killed (a supervisor attaches a Kill filter): the caller wakes with ObjectDeleted, the receiver has ended (its kept TCB refuses TcbResume, its registers show the killed Reply)",
    threads: &[
        BootProgram::KillSupervisor.selector(0),
        BootProgram::KillServer.selector(0),
        BootProgram::KillClient.selector(0),
    ],
    expect: Expect::ExitZeroOrKilled,
    endpoints: 1,
    notifications: 1,
    untyped_pages: 8,
    irq: None,
    grants: &[
        tcb_grant(0, 3, 1, TCB_WITH_POLICY),
        Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 0, 5, SEND, 0),
        grant(1, ENDPOINT_SLOT, RECEIVE, 0),
        nth_notification_grant(0, 1, 5, RECEIVE, 0),
        grant(2, ENDPOINT_SLOT, SEND, 0),
    ],
    // Server first (it waits in Recv), then the client calls, then the
    // supervisor acts while the call is in progress.
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY + 5],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// Fault injection: an Untyped revoked while its objects are in use.
const REVOKE_IN_USE_CASE: Case = Case {
    name: "an Untyped revoked while in use: a thread waiting on an endpoint made from it wakes with ObjectDeleted, every copy and mapping goes, the memory returns zeroed",
    threads: &[BootProgram::RevokeOwner.selector(0), BootProgram::RevokeWaiter.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 0,
    untyped_pages: 4,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, Rights::from_bytes([Rights::READ_WRITE.raw() | Rights::GRANT.raw()]), 0),
        Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        Grant { thread: 0, slot: 6, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
        grant(1, ENDPOINT_SLOT, Rights::READ_WRITE, 0),
    ],
    // The waiter is more urgent: it is waiting whenever the owner acts.
    priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY + 10],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// A notification bound to a thread ends its `Recv`.
const BOUND_NOTIFICATION_CASE: Case = Case {
    name: "a notification bound to a thread: a signal ends its Recv (and one sent before it receives is returned at once); messages still arrive; unbinding ends it",
    threads: &[BootProgram::BindWaiter.selector(0), BootProgram::BindSignaller.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 1,
    untyped_pages: 0,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        nth_notification_grant(0, 0, 3, RECEIVE, 0),
        tcb_grant(0, 4, 0, Rights::READ_WRITE),
        nth_notification_grant(0, 0, 5, SEND, 0x80),
        grant(1, ENDPOINT_SLOT, SEND, 0),
        nth_notification_grant(0, 1, 3, SEND, 0x40),
    ],
    priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// The audit exit record comes before the trace exit stop.
const AUDIT_BEFORE_TRACE_CASE: Case = Case {
    name: "a syscall both audited and traced: its audit record is written before its trace exit stop is sent",
    threads: &[BootProgram::AuditThenTrace.selector(0), BootProgram::OneNull.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 1,
    untyped_pages: 4,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, RECEIVE, 0),
        tcb_grant(0, 3, 1, TCB_WITH_TRACE),
        Grant { thread: 0, slot: 4, object: CaseObject::Untyped, rights: Rights::ALL, badge: 0 },
        nth_notification_grant(0, 0, 5, Rights::READ_WRITE, 0),
        Grant { thread: 0, slot: 6, object: CaseObject::VSpace(0), rights: Rights::READ_WRITE, badge: 0 },
        grant(0, 9, SEND, 0),
    ],
    priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: None,
    root_task: false,
    cpus: Cpus::Boot,
};

/// Audit cases of the in-guest suite.
const AUDIT_CASES: [Case; 2] = [
    audit_case(
        "audit, lossy: a stalled server loses records, each loss is counted and shows as a sequence gap",
        &[
            BootProgram::AuditServer.selector(AUDIT_SCENARIO_LOSSY),
            BootProgram::AuditedApp.selector(AUDIT_SCENARIO_LOSSY),
        ],
    ),
    audit_case(
        "audit, lossless: a full ring makes the audited thread wait, nothing is lost",
        &[
            BootProgram::AuditServer.selector(AUDIT_SCENARIO_LOSSLESS),
            BootProgram::AuditedApp.selector(AUDIT_SCENARIO_LOSSLESS),
        ],
    ),
];

/// The badge of `PolicyAsker`'s capability to its server's endpoint
/// (`init/src/policy_tests.rs` checks it arrives).
const POLICY_ASKER_BADGE: u64 = 0x5e;

/// TCB cases of the in-guest suite.
const TCB_CASES: [Case; 3] = [
    Case {
        name: "TCB priorities: MCP bounds every change, rights and types are checked, a lowered thread yields at once",
        threads: &[
            BootProgram::TcbPriority.selector(0),
            BootProgram::TcbPeer.selector(0),
            BootProgram::TcbPeer.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 1,
        untyped_pages: 0,
        irq: None,
        grants: &[
            tcb_grant(0, PEER_TCB_SLOT, 1, Rights::READ_WRITE),
            tcb_grant(0, PEER_TCB_READ_ONLY_SLOT, 1, Rights::READ),
            nth_notification_grant(0, 0, TCB_NOTIFICATION_SLOT, RECEIVE, 0),
            tcb_grant(0, OWN_TCB_SLOT, 0, Rights::READ_WRITE),
            nth_notification_grant(0, 1, TCB_NOTIFICATION_SLOT, SEND, 1),
            nth_notification_grant(0, 2, TCB_NOTIFICATION_SLOT, SEND, 2),
        ],
        priorities: &[DEFAULT_PRIORITY, DEFAULT_PRIORITY - 10, DEFAULT_PRIORITY - 20],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    tcb_control_case(
        "TCB suspend and resume: a thread suspended in Recv leaves the queue and sees Interrupted; a thread can suspend itself",
        &[
            BootProgram::TcbController.selector(TCB_SCENARIO_SUSPEND),
            BootProgram::TcbSubject.selector(TCB_SCENARIO_SUSPEND),
        ],
    ),
    tcb_control_case(
        "TCB registers: read and written through the capability's rights; a suspended thread resumes where they say",
        &[
            BootProgram::TcbController.selector(TCB_SCENARIO_REGISTERS),
            BootProgram::TcbSubject.selector(TCB_SCENARIO_REGISTERS),
        ],
    ),
];

/// IPC cases of the in-guest suite.
const IPC_CASES: [Case; 13] = [
    ipc_case(
        "IPC call and reply: badge delivered, fast and slow paths give the same result; after a Call or ReplyRecv x9..x18 hold the thread's own values or zero, never its partner's",
        &[
            BootProgram::IpcEchoServer.selector(0),
            BootProgram::IpcClient.selector(CLIENT_BADGE),
        ],
        &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, SEND, CLIENT_BADGE),
        ],
    ),
    ipc_case(
        "IPC error paths: empty slot, wrong type, missing right, would block, no reply target",
        &[BootProgram::IpcErrors.selector(0)],
        &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(0, SECOND_ENDPOINT_SLOT, SEND, 0),
        ],
    ),
    Case {
        name: "IPC senders are served in FIFO order",
        threads: &[
            BootProgram::IpcFifoSender.selector(0),
            BootProgram::IpcFifoSender.selector(1),
            BootProgram::IpcFifoSender.selector(2),
            BootProgram::IpcFifoReceiver.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, SEND, 100),
            grant(1, ENDPOINT_SLOT, SEND, 101),
            grant(2, ENDPOINT_SLOT, SEND, 102),
            grant(3, ENDPOINT_SLOT, RECEIVE, 0),
        ],
        // Strictly decreasing: each sender runs until it blocks, so they
        // queue in order 0, 1, 2 whatever the timer does; the receiver
        // runs last.
        priorities: &[103, 102, 101, 100],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "capabilities: mint, copy, move errors; revoke and delete while a thread waits on the endpoint",
        threads: &[BootProgram::CapOwner.selector(0), BootProgram::CapWaiter.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: &[grant(1, ENDPOINT_SLOT, RECEIVE, 0)],
        // The waiter runs first and blocks; then the owner acts.
        priorities: &[99, 100],
        endpoint_owner: Some((0, ENDPOINT_SLOT)),
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "notifications: signals OR their badges together; Poll never waits",
        threads: &[BootProgram::NotifySignaler.selector(0), BootProgram::NotifyWaiter.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 1,
        untyped_pages: 0,
        irq: None,
        grants: &[
            notification_grant(0, ENDPOINT_SLOT, Rights::READ_WRITE, 0b001),
            notification_grant(0, SECOND_ENDPOINT_SLOT, SEND, 0b100),
            notification_grant(1, ENDPOINT_SLOT, RECEIVE, 0),
        ],
        // The signaler runs first and finishes before the waiter looks.
        priorities: &[101, 100],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "Untyped: retype endpoints and notifications, errors, revoke reclaims the memory",
        threads: &[BootProgram::UntypedUser.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 0,
        untyped_pages: 4,
        irq: None,
        grants: &[Grant {
            thread: 0,
            slot: ENDPOINT_SLOT,
            object: CaseObject::Untyped,
            rights: Rights::READ_WRITE,
            badge: 0,
        }],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "faults go to the fault endpoint as messages; the handler's reply resumes the thread at a new PC",
        threads: &[BootProgram::FaultHandler.selector(0), BootProgram::HandledFaulter.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: &[grant(0, ENDPOINT_SLOT, RECEIVE, 0)],
        // The handler waits first.
        priorities: &[101, 100],
        endpoint_owner: None,
        fault_endpoints: &[(1, 0)],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "confinement: every slot x every operation, exactly the granted ones allowed; badges cannot be forged",
        threads: &[BootProgram::Confined.selector(0), BootProgram::BadgeWitness.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 1,
        untyped_pages: 0,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            nth_notification_grant(0, 0, SECOND_ENDPOINT_SLOT, SEND, 4),
            nth_notification_grant(0, 1, ENDPOINT_SLOT, RECEIVE, 0),
        ],
        // The witness waits first; the confined task runs after.
        priorities: &[100, 101],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "a server that ends while owing a reply: its caller wakes with ObjectDeleted and x1..x8 zero, on the fast path and the slow one",
        threads: &[
            BootProgram::Quitter.selector(0),
            BootProgram::Quitter.selector(0),
            BootProgram::AbandonedCaller.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, RECEIVE, 0),
            grant(2, ENDPOINT_SLOT, SEND, 0),
        ],
        priorities: &[101, 101, 100],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "capability transfer: refused without the grant right, a badged copy arrives with it",
        threads: &[BootProgram::CapTaker.selector(0), BootProgram::CapGiver.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 1,
        untyped_pages: 0,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, Rights::WRITE.union(Rights::GRANT), 0),
            grant(1, SECOND_ENDPOINT_SLOT, SEND, 0),
            nth_notification_grant(0, 1, 4, Rights::READ_WRITE, 9),
        ],
        // The taker waits first.
        priorities: &[101, 100],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "an interrupt reaches user space through its IrqHandler's notification and comes again after IrqAck",
        threads: &[BootProgram::IrqUser.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 1,
        untyped_pages: 0,
        irq: Some(PHYSICAL_TIMER_INTID),
        grants: &[
            Grant { thread: 0, slot: ENDPOINT_SLOT, object: CaseObject::Irq, rights: Rights::READ_WRITE, badge: 0 },
            nth_notification_grant(0, 0, SECOND_ENDPOINT_SLOT, Rights::READ_WRITE, 0x100),
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "a signal wakes a thread waiting on the notification",
        threads: &[BootProgram::NotifySleeper.selector(0), BootProgram::NotifyWaker.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 1,
        untyped_pages: 0,
        irq: None,
        grants: &[
            notification_grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            notification_grant(1, ENDPOINT_SLOT, SEND, 0b10),
        ],
        // The sleeper runs first and blocks; the waker's signal wakes it.
        priorities: &[101, 100],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "a direct IPC switch never jumps a more urgent ready thread",
        threads: &[
            BootProgram::PrioServer.selector(0),
            BootProgram::PrioMiddle.selector(0),
            BootProgram::PrioCaller.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 2,
        untyped_pages: 0,
        irq: None,
        // Notification 0 wakes the middle thread, notification 1 tells the
        // caller the middle thread ran.
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            nth_notification_grant(0, 0, SECOND_ENDPOINT_SLOT, SEND, 1),
            nth_notification_grant(0, 1, ENDPOINT_SLOT, RECEIVE, 0),
            nth_notification_grant(1, 1, SECOND_ENDPOINT_SLOT, SEND, 1),
            grant(2, ENDPOINT_SLOT, SEND, 0),
            nth_notification_grant(1, 2, SECOND_ENDPOINT_SLOT, RECEIVE, 0),
        ],
        // Server, then middle, block in that order before the caller runs;
        // the server's ReplyRecv must run the middle thread, not the caller.
        priorities: &[102, 101, 100],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
];

/// The benchmark suite: a fault under the syscall floor (no row), the
/// rows of one thread, yield, IPC and notification round trips between
/// two address spaces, then the same kinds of syscall from filtered
/// threads (the policy rows). The kernel adds the run's
/// `abi::bench::BenchParameter` to each selector.
pub const BENCH_CASES: &[Case] = &[
    // Under the floor a fault must still reach the kernel (and stop the
    // thread); the floor goes with the thread.
    case(
        "a fault under the syscall floor stops the thread",
        &[BootProgram::FloorFaulter.selector(0)],
        fault(ExceptionClass::DataAbortLower, Some(0), Some(false)),
    ),
    case(
        "benchmarks in one thread",
        &[BootProgram::Bench.selector(0)],
        Expect::ExitZero,
    ),
    case(
        "yield round trips between two address spaces",
        &[
            BootProgram::BenchYieldPing.selector(0),
            BootProgram::BenchYieldPartner.selector(0),
        ],
        Expect::ExitZero,
    ),
    ipc_case(
        "IPC call, reply and round trip between two address spaces",
        &[
            BootProgram::BenchIpcServer.selector(0),
            BootProgram::BenchIpcClient.selector(0),
        ],
        &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, SEND, 0),
        ],
    ),
    // The scale rows: the same server, a client whose 32768-slot CNode
    // fills with up to 10 000 endpoints retyped from its Untyped (64 bytes
    // each) before the null syscall and the fast-path Call are timed
    // again, then with 10 000 TCBs more (3200 bytes each).
    Case {
        name: "null syscall and IPC call with 100, 1000 and 10 000 extra endpoints alive, and IPC call with 10 000 extra threads alive",
        threads: &[
            BootProgram::BenchIpcServer.selector(0),
            BootProgram::BenchScaleClient.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 8200,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, SEND, 0),
            Grant {
                thread: 1,
                slot: SECOND_ENDPOINT_SLOT,
                object: CaseObject::Untyped,
                rights: Rights::READ_WRITE,
                badge: 0,
            },
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: Some(15),
        root_task: false,
        cpus: Cpus::Boot,
    },
    // The same-space rows: the server makes its client a thread of its
    // own space and CSpace (`init/src/bench/same_as.rs`).
    Case {
        name: "IPC call, reply and round trip between two threads of one address space, each with its own IPC buffer",
        threads: &[BootProgram::BenchSameAsServer.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 8,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, Rights::READ_WRITE, 0),
            Grant {
                thread: 0,
                slot: SECOND_ENDPOINT_SLOT,
                object: CaseObject::Untyped,
                rights: Rights::READ_WRITE,
                badge: 0,
            },
            Grant {
                thread: 0,
                slot: 4,
                object: CaseObject::VSpace(0),
                rights: Rights::READ_WRITE,
                badge: 0,
            },
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "notification round trips between two address spaces",
        threads: &[
            BootProgram::BenchNotifyPing.selector(0),
            BootProgram::BenchNotifyPong.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 2,
        untyped_pages: 0,
        irq: None,
        // Ping signals notification 0 and waits on 1; pong the reverse.
        grants: &[
            nth_notification_grant(0, 0, ENDPOINT_SLOT, SEND, 0),
            nth_notification_grant(1, 0, SECOND_ENDPOINT_SLOT, RECEIVE, 0),
            nth_notification_grant(0, 1, ENDPOINT_SLOT, RECEIVE, 0),
            nth_notification_grant(1, 1, SECOND_ENDPOINT_SLOT, SEND, 0),
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    // The policy rows. Each thread retypes its filters from the case's
    // Untyped and attaches them through its own TCB (the policy right).
    Case {
        name: "a filtered thread's null syscall: constant Allow, cached Errno, evaluated Allow",
        threads: &[BootProgram::BenchPolicy.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 0,
        untyped_pages: 16,
        irq: None,
        grants: &[
            Grant {
                thread: 0,
                slot: ENDPOINT_SLOT,
                object: CaseObject::Untyped,
                rights: Rights::ALL,
                badge: 0,
            },
            tcb_grant(0, SECOND_ENDPOINT_SLOT, 0, TCB_WITH_POLICY),
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "IPC call, reply and round trip between two filtered threads (constant Allow)",
        threads: &[
            BootProgram::BenchIpcServerFiltered.selector(0),
            BootProgram::BenchIpcClientFiltered.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 16,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, SEND, 0),
            Grant {
                thread: 0,
                slot: SECOND_ENDPOINT_SLOT,
                object: CaseObject::Untyped,
                rights: Rights::ALL,
                badge: 0,
            },
            Grant {
                thread: 1,
                slot: SECOND_ENDPOINT_SLOT,
                object: CaseObject::Untyped,
                rights: Rights::ALL,
                badge: 0,
            },
            tcb_grant(0, 4, 0, TCB_WITH_POLICY),
            tcb_grant(1, 4, 1, TCB_WITH_POLICY),
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "null syscalls forwarded to a policy server that allows them (Notify)",
        threads: &[
            BootProgram::BenchPolicyServer.selector(0),
            BootProgram::BenchPolicyAsker.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 8,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, SEND, 0),
            tcb_grant(1, SECOND_ENDPOINT_SLOT, 1, TCB_WITH_POLICY),
            tcb_grant(1, 5, 0, Rights::READ),
            Grant {
                thread: 1,
                slot: 4,
                object: CaseObject::Untyped,
                rights: Rights::ALL,
                badge: 0,
            },
        ],
        // The server is more urgent: it waits in Recv before the asker runs.
        priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    // The audit and tracing rows (`init/src/bench/watch.rs`).
    Case {
        name: "an audited null syscall (lossy, the ring drained after each)",
        threads: &[BootProgram::BenchAudited.selector(0)],
        expect: Expect::ExitZero,
        endpoints: 0,
        notifications: 1,
        untyped_pages: 4,
        irq: None,
        grants: &[
            Grant {
                thread: 0,
                slot: ENDPOINT_SLOT,
                object: CaseObject::Untyped,
                rights: Rights::ALL,
                badge: 0,
            },
            tcb_grant(0, SECOND_ENDPOINT_SLOT, 0, TCB_WITH_POLICY),
            vspace_grant(0, 4, 0, Rights::READ_WRITE),
            nth_notification_grant(0, 0, 5, Rights::READ_WRITE, 0),
        ],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "a traced null syscall: entry and exit stops, each continued by the tracer",
        threads: &[
            BootProgram::BenchTracer.selector(0),
            BootProgram::BenchTraced.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            tcb_grant(0, SECOND_ENDPOINT_SLOT, 1, TCB_WITH_TRACE),
            grant(0, 4, SEND, TRACEE_BADGE),
        ],
        // The tracer attaches and waits before the traced thread runs.
        priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    // The priority rows (`init/src/bench/prio.rs`).
    Case {
        name: "IPC call to a more urgent server",
        threads: &[
            BootProgram::BenchIpcServer.selector(0),
            BootProgram::BenchLowPrioCaller.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, RECEIVE, 0),
            grant(1, ENDPOINT_SLOT, SEND, 0),
        ],
        // The server waits in Recv before its client runs.
        priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    Case {
        name: "IPC send to a less urgent waiting receiver (no switch)",
        threads: &[
            BootProgram::BenchHighPrioSender.selector(0),
            BootProgram::BenchLowPrioReceiver.selector(0),
        ],
        expect: Expect::ExitZero,
        endpoints: 2,
        notifications: 1,
        untyped_pages: 0,
        irq: None,
        // Endpoint 0 carries the timed messages, endpoint 1 the sync
        // calls; the receiver signals the notification after each message.
        grants: &[
            nth_endpoint_grant(0, 0, ENDPOINT_SLOT, SEND, 0),
            nth_endpoint_grant(0, 1, ENDPOINT_SLOT, RECEIVE, 0),
            nth_endpoint_grant(1, 0, SECOND_ENDPOINT_SLOT, SEND, 0),
            nth_endpoint_grant(1, 1, SECOND_ENDPOINT_SLOT, RECEIVE, 0),
            nth_notification_grant(0, 0, 4, RECEIVE, 0),
            nth_notification_grant(0, 1, 4, SEND, 1),
        ],
        priorities: &[DEFAULT_PRIORITY + 10, DEFAULT_PRIORITY],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
    // `init/src/bench/dispatch.rs`.
    case(
        "a syscall redirected to the thread's user-dispatch handler and back",
        &[BootProgram::BenchUserDispatch.selector(0)],
        Expect::ExitZero,
    ),
];

/// The SMP rows (page 1 of `abi::bench::ROWS`; `init/src/bench/smp.rs`):
/// one benchmark thread that makes its servers and clients threads of its
/// own space, each on its CPU; and the rseq rows (page 1 too,
/// `init/src/bench/rseq.rs`), one thread. Run after `BENCH_CASES`, with
/// the parameter's page 1.
pub const BENCH_SMP_CASES: &[Case] = &[
    Case {
    name: "IPC between two CPUs, and IPC throughput with 1, 2 and 4 pairs each on its own CPU",
    threads: &[BootProgram::BenchSmp.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 1,
    notifications: 0,
    // Nine threads of its space (a TCB, four stack pages and a buffer
    // each), four endpoints and eight notifications.
    // The rows skip themselves (`BENCH-SKIP`) when too few CPUs run.
    cpus: Cpus::Boot,
    untyped_pages: 80,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, Rights::READ_WRITE, 0),
        Grant {
            thread: 0,
            slot: SECOND_ENDPOINT_SLOT,
            object: CaseObject::Untyped,
            rights: Rights::READ_WRITE,
            badge: 0,
        },
        vspace_grant(0, 4, 0, Rights::READ_WRITE),
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    // Room for the threads' slots and the pairs' objects (up to 123).
    cnode_radix: Some(8),
    root_task: false,
    },
    case(
        "a per-CPU increment through a restartable sequence against an atomic and a lock, and syscalls with an rseq area registered",
        &[BootProgram::BenchRseq.selector(0)],
        Expect::ExitZero,
    ),
];

/// The fuzzer: three threads with a CNode holding an endpoint, a
/// notification and an Untyped (slots 2, 3, 4; 28 pages, of which each
/// fuzzer keeps 4 for the stacks and IPC buffers of the threads it starts
/// in its own space), each issuing random syscalls. The kernel adds the round's seed and call count to each
/// selector (the low two parameter bits are the thread's index).
pub const FUZZ_CASES: &[Case] = &[Case {
    name: "fuzz round",
    threads: &[
        BootProgram::Fuzzer.selector(0),
        BootProgram::Fuzzer.selector(1),
        BootProgram::Fuzzer.selector(2),
    ],
    expect: Expect::AnyEnd,
    endpoints: 1,
    notifications: 1,
    // 28 pages for the fuzzers, 8 each for their scribblers.
    untyped_pages: 52,
    irq: None,
    grants: &[
        grant(0, ENDPOINT_SLOT, Rights::ALL, 10),
        grant(1, ENDPOINT_SLOT, Rights::ALL, 11),
        grant(2, ENDPOINT_SLOT, Rights::READ, 0),
        nth_notification_grant(0, 0, SECOND_ENDPOINT_SLOT, Rights::ALL, 1),
        nth_notification_grant(0, 1, SECOND_ENDPOINT_SLOT, Rights::ALL, 2),
        nth_notification_grant(0, 2, SECOND_ENDPOINT_SLOT, Rights::READ, 0),
        Grant {
            thread: 0,
            slot: 4,
            object: CaseObject::Untyped,
            rights: Rights::ALL,
            badge: 0,
        },
        Grant {
            thread: 1,
            slot: 4,
            object: CaseObject::Untyped,
            rights: Rights::ALL,
            badge: 0,
        },
        Grant {
            thread: 2,
            slot: 4,
            object: CaseObject::Untyped,
            rights: Rights::READ_WRITE,
            badge: 0,
        },
        // Each fuzzer may suspend, resume, re-prioritise and rewrite the
        // registers of the next one, and of itself.
        tcb_grant(0, 5, 1, Rights::ALL),
        tcb_grant(1, 5, 2, Rights::ALL),
        tcb_grant(2, 5, 0, Rights::READ),
        tcb_grant(0, 6, 0, Rights::ALL),
        tcb_grant(1, 6, 1, Rights::ALL),
        tcb_grant(2, 6, 2, Rights::ALL),
        // Each maps frames into its own address space (slot 7) and the
        // next one's (slot 8; the last one read-only: refused).
        vspace_grant(0, 7, 0, Rights::ALL),
        vspace_grant(1, 7, 1, Rights::ALL),
        vspace_grant(2, 7, 2, Rights::ALL),
        vspace_grant(0, 8, 1, Rights::ALL),
        vspace_grant(1, 8, 2, Rights::ALL),
        vspace_grant(2, 8, 0, Rights::READ),
    ],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    // Slots 20.. hold each fuzzer's scribbler and judged channel
    // (`init/src/fuzz.rs`).
    cnode_radix: Some(5),
    root_task: false,
    cpus: Cpus::Boot,
}];

/// The root-task case: one thread, started as `abi::bootinfo` says.
const ROOT_TASK_CASE: Case = Case {
    name: "the root task gets its own TCB, CNode, VSpace and IPC buffer, an IrqHandler and all free RAM as Untyped, and builds the system from them",
    threads: &[BootProgram::RootTask.selector(0)],
    expect: Expect::ExitZero,
    endpoints: 0,
    notifications: 0,
    untyped_pages: 0,
    irq: Some(PHYSICAL_TIMER_INTID),
    grants: &[],
    priorities: &[],
    endpoint_owner: None,
    fault_endpoints: &[],
    cnode_radix: Some(abi::bootinfo::ROOT_CNODE_RADIX),
    root_task: true,
    cpus: Cpus::Boot,
};

/// What the demo shows.
pub const DEMO_CASES: &[Case] = &[
    ROOT_TASK_CASE,
    case(
        "init greets from EL0",
        &[BootProgram::Demo.selector(0)],
        Expect::ExitZero,
    ),
    case(
        "a faulting thread is stopped, the kernel carries on",
        &[BootProgram::NullWrite.selector(0)],
        fault(ExceptionClass::DataAbortLower, Some(0), Some(false)),
    ),
    Case {
        name:
            "a supervisor confines, traces and audits an app; the policy server, the tracer and the audit ring report",
        threads: &[
            BootProgram::DemoSupervisor.selector(0),
            BootProgram::DemoPolicyServer.selector(0),
            BootProgram::DemoApp.selector(0),
            BootProgram::DemoTracer.selector(0),
        ],
        expect: Expect::ExitZero,
        // The policy server's and the tracer's.
        endpoints: 2,
        // The app's, and the audit ring's.
        notifications: 2,
        untyped_pages: 8,
        irq: None,
        grants: &[
            grant(0, ENDPOINT_SLOT, SEND, DEMO_APP_BADGE),
            tcb_grant(0, 3, 2, TCB_WITH_TRACE),
            Grant {
                thread: 0,
                slot: 4,
                object: CaseObject::Untyped,
                rights: Rights::ALL,
                badge: 0,
            },
            nth_notification_grant(1, 0, 5, Rights::READ_WRITE, 0),
            nth_endpoint_grant(1, 0, 6, SEND, DEMO_APP_BADGE),
            tcb_grant(0, 10, 0, Rights::READ_WRITE),
            vspace_grant(0, 11, 0, Rights::READ_WRITE),
            tcb_grant(0, 12, 1, Rights::READ),
            grant(1, ENDPOINT_SLOT, RECEIVE, 0),
            // The policy server's rules, and its own address space to map
            // them in.
            Grant {
                thread: 1,
                slot: 3,
                object: CaseObject::File(crate::demo::RULES_IN_DRIVER),
                rights: Rights::READ,
                badge: 0,
            },
            vspace_grant(1, 4, 1, Rights::READ_WRITE),
            grant(2, ENDPOINT_SLOT, SEND, 0),
            nth_notification_grant(0, 2, 5, Rights::READ_WRITE, 0),
            nth_endpoint_grant(1, 3, ENDPOINT_SLOT, RECEIVE, 0),
        ],
        // The supervisor confines the app before it runs, then steps below
        // it to read the audit ring once it ended; the policy server and
        // the tracer wait for the app before it runs.
        priorities: &[
            DEFAULT_PRIORITY + 30,
            DEFAULT_PRIORITY + 20,
            DEFAULT_PRIORITY,
            DEFAULT_PRIORITY + 10,
        ],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    },
];

/// The badge of the supervisor's capability to the policy server's
/// endpoint: the server sees it on every request about the app.
const DEMO_APP_BADGE: u64 = 0xa99;
