//! init: the project's test driver, written as a root task. It runs as
//! the one task, `driver`, of the project's own systems
//! (`systems/{demo,test,bench,fuzz}.toml`): a privileged task, to which
//! the root (`root/`) hands what the kernel handed the root, in the same
//! slots, with a `BootInfo` in its IPC buffer and
//! `abi::bootinfo::ROOT_ARGUMENT` in `x0`. It starts the rest of the
//! run from this same ELF, each thread with a program selector in `x0`
//! (see `programs`): the demo, the in-guest test suite and its programs,
//! the benchmarks, the fuzzer, as its command line's `portcullis.mode`
//! says.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

#[macro_use]
mod check;

mod audit_record_tests;
mod audit_tests;
mod bench;
mod binding_tests;
mod capability_swap_tests;
mod confinement_tests;
mod demo;
mod device_checks;
mod driver;
mod el0_device_tests;
mod exhaustion_tests;
mod filter_lifetime_tests;
mod fuzz;
mod ipc_tests;
mod judged_memory_tests;
mod policy_paths_tests;
mod policy_request_tests;
mod policy_routing_tests;
mod policy_server_tests;
mod policy_tests;
mod preemption_tests;
mod programs;
mod reply_tests;
mod revoke_tests;
mod root_task;
mod rseq_slice_tests;
mod rseq_step_tests;
mod rseq_tests;
mod smp_tests;
mod stopped_call_tests;
mod supervision_tests;
mod tasks;
mod tcb_tests;
mod thread_tests;
mod timer_checks;
mod trace_answer_tests;
mod trace_entry_tests;
mod trace_tests;
mod user_dispatch_tests;
mod user_space_tests;
mod vspace_tests;

use crate::programs::{BootProgram, KERNEL_PROBE_ADDRESS};
use abi::bench::BenchParameter;
use abi::{ErrorCode, Syscall, DEBUG_PRINT_MAX};
use sdk::println;
use sdk::probe;
use sdk::syscall::{self, raw_syscall};

/// The program's entry, called by the SDK's `_start`.
// `no_mangle` counts as unsafe code: `_start` finds the entry by this name.
#[allow(unsafe_code)]
#[no_mangle]
fn portcullis_main(selector: u64) -> i32 {
    if selector == abi::bootinfo::ROOT_ARGUMENT {
        return root_task::root_task();
    }
    let Some((program, parameter)) = BootProgram::decode(selector) else {
        println!("init: unknown program selector {selector:#x}");
        return 2;
    };
    match program {
        BootProgram::Demo => demo(),
        BootProgram::Syscalls => syscall_checks(),
        BootProgram::NullWrite => {
            probe::write_u64(0);
            1
        }
        BootProgram::FloorFaulter => {
            if sdk::syscall::bench_floor(true).is_err() {
                return 2;
            }
            probe::write_u64(0);
            1
        }
        BootProgram::ReadKernel => {
            probe::read_u64(KERNEL_PROBE_ADDRESS);
            1
        }
        BootProgram::Undefined => {
            probe::undefined_instruction();
            1
        }
        BootProgram::MisalignedPc => {
            probe::jump_to(portcullis_main as *const () as u64 + 2);
            1
        }
        BootProgram::Bench => bench::run_single_thread_rows(BenchParameter::decode(parameter)),
        BootProgram::BenchYieldPing => bench::run_yield_ping(BenchParameter::decode(parameter)),
        BootProgram::BenchYieldPartner => {
            bench::run_yield_partner(BenchParameter::decode(parameter))
        }
        BootProgram::IpcEchoServer => ipc_tests::echo_server(),
        BootProgram::IpcClient => ipc_tests::client(parameter),
        BootProgram::IpcErrors => ipc_tests::errors(),
        BootProgram::IpcFifoSender => ipc_tests::fifo_sender(parameter),
        BootProgram::IpcFifoReceiver => ipc_tests::fifo_receiver(),
        BootProgram::BenchIpcServer => bench::run_ipc_server(BenchParameter::decode(parameter)),
        BootProgram::BenchIpcClient => bench::run_ipc_client(BenchParameter::decode(parameter)),
        BootProgram::BenchScaleClient => bench::run_scale_client(BenchParameter::decode(parameter)),
        BootProgram::BenchNotifyPing => bench::run_notify_ping(BenchParameter::decode(parameter)),
        BootProgram::BenchNotifyPong => bench::run_notify_pong(BenchParameter::decode(parameter)),
        BootProgram::BenchPolicy => {
            bench::policy::run_single_thread(BenchParameter::decode(parameter))
        }
        BootProgram::BenchIpcServerFiltered => {
            bench::policy::run_filtered_ipc_server(BenchParameter::decode(parameter))
        }
        BootProgram::BenchIpcClientFiltered => {
            bench::policy::run_filtered_ipc_client(BenchParameter::decode(parameter))
        }
        BootProgram::BenchPolicyAsker => {
            bench::policy::run_notify_asker(BenchParameter::decode(parameter))
        }
        BootProgram::BenchPolicyServer => {
            bench::policy::run_notify_server(BenchParameter::decode(parameter))
        }
        BootProgram::NotifySignaler => ipc_tests::notify_signaler(),
        BootProgram::NotifyWaiter => ipc_tests::notify_waiter(),
        BootProgram::NotifySleeper => ipc_tests::notify_sleeper(),
        BootProgram::NotifyWaker => ipc_tests::notify_waker(),
        BootProgram::PrioServer => ipc_tests::prio_server(),
        BootProgram::PrioMiddle => ipc_tests::prio_middle(),
        BootProgram::PrioCaller => ipc_tests::prio_caller(),
        BootProgram::Fuzzer => fuzz::run(parameter),
        BootProgram::IrqUser => ipc_tests::irq_user(),
        BootProgram::CapGiver => ipc_tests::cap_giver(),
        BootProgram::CapTaker => ipc_tests::cap_taker(),
        BootProgram::Confined => ipc_tests::confined(),
        BootProgram::BadgeWitness => ipc_tests::badge_witness(),
        BootProgram::Quitter => ipc_tests::quitter(),
        BootProgram::AbandonedCaller => ipc_tests::abandoned_caller(),
        BootProgram::UntypedUser => ipc_tests::untyped_user(),
        BootProgram::FaultHandler => ipc_tests::fault_handler(),
        BootProgram::PolicyUser => policy_tests::user(),
        BootProgram::PolicyTrapped => policy_tests::trapped(),
        BootProgram::PolicyTrapHandler => policy_tests::trap_handler(),
        BootProgram::PolicyAsker => policy_tests::asker(),
        BootProgram::PolicyServer => policy_tests::server(),
        BootProgram::TcbPriority => tcb_tests::priority(),
        BootProgram::TcbPeer => tcb_tests::peer(),
        BootProgram::TcbController => tcb_tests::controller(parameter),
        BootProgram::TcbSubject => tcb_tests::subject(parameter),
        BootProgram::VSpaceMapper => vspace_tests::mapper(),
        BootProgram::VSpaceFaultHandler => vspace_tests::fault_handler(),
        BootProgram::DemoSupervisor => demo::supervisor(),
        BootProgram::DemoPolicyServer => demo::policy_server(),
        BootProgram::DemoApp => demo::app(),
        BootProgram::DemoTracer => demo::tracer(),
        BootProgram::BenchAudited => bench::watch::run_audited(BenchParameter::decode(parameter)),
        BootProgram::BenchTracer => bench::watch::run_tracer(BenchParameter::decode(parameter)),
        BootProgram::BenchTraced => bench::watch::run_traced(BenchParameter::decode(parameter)),
        BootProgram::BenchLowPrioCaller => {
            bench::prio::run_low_prio_caller(BenchParameter::decode(parameter))
        }
        BootProgram::BenchHighPrioSender => {
            bench::prio::run_high_prio_sender(BenchParameter::decode(parameter))
        }
        BootProgram::BenchLowPrioReceiver => {
            bench::prio::run_low_prio_receiver(BenchParameter::decode(parameter))
        }
        BootProgram::BenchUserDispatch => bench::dispatch::run(BenchParameter::decode(parameter)),
        BootProgram::BenchSameAsServer => {
            bench::same_as::run_server(BenchParameter::decode(parameter))
        }
        BootProgram::BenchSameAsClient => {
            bench::same_as::run_client(BenchParameter::decode(parameter))
        }
        BootProgram::RevokeOwner => revoke_tests::owner(),
        BootProgram::RevokeWaiter => revoke_tests::waiter(),
        BootProgram::KillSupervisor => revoke_tests::kill_supervisor(),
        BootProgram::KillServer => revoke_tests::kill_server(),
        BootProgram::KillClient => revoke_tests::kill_client(),
        BootProgram::AuditServer => audit_tests::server(parameter),
        BootProgram::AuditThenTrace => audit_tests::audit_then_trace(),
        BootProgram::OneNull => audit_tests::one_null(),
        BootProgram::BindWaiter => binding_tests::waiter(),
        BootProgram::BindSignaller => binding_tests::signaller(),
        BootProgram::UserDispatch => user_dispatch_tests::run(),
        BootProgram::UserDispatchUnmapped => user_dispatch_tests::unmapped(),
        BootProgram::ThreadsRoot => thread_tests::root(),
        BootProgram::UserSpaceRoot => user_space_tests::root(),
        BootProgram::PolicyFastCaller => policy_tests::fast_caller(),
        BootProgram::PolicyFastServer => policy_tests::fast_server(),
        BootProgram::ThreadsCaller => thread_tests::caller(),
        BootProgram::ThreadsServer => thread_tests::server(),
        BootProgram::ReplyServer => reply_tests::server(),
        BootProgram::ReplyClient => reply_tests::client(parameter),
        BootProgram::RootTask => root_task::root_task(),
        BootProgram::AuditedApp => audit_tests::app(parameter),
        BootProgram::TraceTracer => trace_tests::tracer(),
        BootProgram::TraceTracee => trace_tests::tracee(),
        BootProgram::HandledFaulter => ipc_tests::handled_faulter(),
        BootProgram::CapOwner => ipc_tests::cap_owner(),
        BootProgram::CapWaiter => ipc_tests::cap_waiter(),
        BootProgram::TimerRegisterWriter => el0_device_tests::timer_register_writer(),
        BootProgram::PmuWriter => el0_device_tests::pmu_writer(),
        BootProgram::TimerHolder => el0_device_tests::timer_holder(),
        BootProgram::DeviceProber => el0_device_tests::device_prober(),
        BootProgram::SelfEndAuditor => audit_record_tests::self_end_auditor(),
        BootProgram::SelfEnder => audit_record_tests::self_ender(parameter),
        BootProgram::RoutedApp => policy_routing_tests::app(),
        BootProgram::RouteServerA => policy_routing_tests::server_a(),
        BootProgram::RouteServerB => policy_routing_tests::server_b(),
        BootProgram::PolicyVictim => stopped_call_tests::policy_victim(),
        BootProgram::CancelAttacker => stopped_call_tests::attacker(parameter),
        BootProgram::PolicyWarden => stopped_call_tests::policy_warden(),
        BootProgram::TraceVictim => stopped_call_tests::trace_victim(),
        BootProgram::TraceWarden => stopped_call_tests::trace_warden(),
        BootProgram::VerdictApp => audit_record_tests::verdict_app(),
        BootProgram::VerdictWarden => audit_record_tests::verdict_warden(),
        BootProgram::ConfinementParent => confinement_tests::parent(),
        BootProgram::ConfinementWarden => confinement_tests::warden(),
        BootProgram::ConfinedChild => confinement_tests::child(),
        BootProgram::PreemptedRetyper => preemption_tests::retyper(),
        BootProgram::Preemptor => preemption_tests::preemptor(),
        BootProgram::YieldRetyper => preemption_tests::yield_retyper(),
        BootProgram::RetypeYielder => preemption_tests::retype_yielder(),
        BootProgram::UserDispatchPaths => user_dispatch_tests::paths(),
        BootProgram::PolicyPaths => policy_paths_tests::paths(),
        BootProgram::TraceAnswerTracer => trace_answer_tests::tracer(),
        BootProgram::TraceAnswerTracee => trace_answer_tests::tracee(),
        BootProgram::TraceAnswerBystander => trace_answer_tests::bystander(),
        BootProgram::TraceEntryTracer => trace_entry_tests::tracer(),
        BootProgram::TraceEntryTracee => trace_entry_tests::tracee(),
        BootProgram::TraceEntryBystander => trace_entry_tests::bystander(),
        BootProgram::PolicyRequestServer => policy_request_tests::server(),
        BootProgram::PolicyRequestAsker => policy_request_tests::asker(),
        BootProgram::RoomApp => stopped_call_tests::room_app(),
        BootProgram::RoomAuditor => stopped_call_tests::room_auditor(),
        BootProgram::RoomAttacker => stopped_call_tests::room_attacker(),
        BootProgram::SwapSibling => capability_swap_tests::sibling(),
        BootProgram::SwapWarden => capability_swap_tests::warden(),
        BootProgram::SwapVictim => capability_swap_tests::victim(),
        BootProgram::JudgedScribbler => judged_memory_tests::scribbler(),
        BootProgram::JudgedServer => judged_memory_tests::server(),
        BootProgram::JudgedApp => judged_memory_tests::app(),
        BootProgram::FuzzScribbler => fuzz::scribbler(),
        BootProgram::SmpMain => smp_tests::main(parameter),
        BootProgram::SmpWorker => smp_tests::worker_main(parameter),
        BootProgram::BenchSmp => bench::smp::run(BenchParameter::decode(parameter)),
        BootProgram::BenchCrossCoreServer => bench::smp::run_cross_core_server(),
        BootProgram::BenchPairClient => bench::smp::run_pair_client(parameter),
        BootProgram::BenchPairServer => bench::smp::run_pair_server(parameter),
        BootProgram::RseqMain => rseq_tests::main(parameter),
        BootProgram::RseqWorker => rseq_tests::worker_main(parameter),
        BootProgram::BenchRseq => bench::rseq::run(BenchParameter::decode(parameter)),
        BootProgram::Exhauster => exhaustion_tests::exhauster(),
        BootProgram::Survivor => exhaustion_tests::survivor(),
        BootProgram::FilterOwner => filter_lifetime_tests::owner(),
        BootProgram::Supervisor => supervision_tests::supervisor(),
        BootProgram::Supervised => supervision_tests::child(parameter),
        BootProgram::AsyncPolicyServer => policy_server_tests::async_server(),
        BootProgram::AsyncAsker => policy_server_tests::async_asker(parameter),
        BootProgram::LossSupervisor => policy_server_tests::loss_supervisor(parameter),
        BootProgram::LossServer => policy_server_tests::loss_server(parameter),
        BootProgram::LossAsker => policy_server_tests::loss_asker(parameter),
        BootProgram::FilterChild => filter_lifetime_tests::child(parameter),
        BootProgram::MisalignedExclusive => {
            let word = [0u64; 2];
            probe::exclusive_load(word.as_ptr() as u64 + 4);
            1
        }
        BootProgram::WriteText => {
            probe::write_u64(portcullis_main as *const () as u64);
            1
        }
        BootProgram::ExecuteStack => {
            // A `ret` on the stack: executable only if W^X were broken.
            let code = [0xd65f_03c0_u32; 4];
            probe::jump_to(code.as_ptr() as u64);
            1
        }
        BootProgram::Spin => {
            probe::spin_ms(parameter);
            0
        }
        BootProgram::FpCheck => {
            if probe::fp_registers_survive(parameter << 32, 150) {
                0
            } else {
                println!("FP/SIMD registers changed while the thread was preempted");
                1
            }
        }
        BootProgram::Yield => {
            for _ in 0..parameter {
                if syscall::yield_now().is_err() {
                    return 1;
                }
            }
            0
        }
    }
}

fn demo() -> i32 {
    let (_, frequency) = probe::counter();
    println!("hello from EL0: init runs in its own address space");
    println!("  the counter ticks at {frequency} Hz; the kernel's tick is 100 Hz");
    let result = syscall::null();
    println!("  null syscall -> {:?}", result);
    let bogus = raw_syscall(99, 0, 0, 0).into_result();
    println!("  syscall 99 -> {:?} (an error code, not a crash)", bogus);
    let kernel = syscall::debug_print_raw(KERNEL_PROBE_ADDRESS, 8);
    println!("  debug_print of a kernel address -> {:?}", kernel);
    println!("  yielding, then exiting with status 0");
    let _ = syscall::yield_now();
    0
}

/// One syscall check: what it tests, what the kernel returned, what it
/// should have returned.
type Check = (&'static str, Result<(), ErrorCode>, Result<(), ErrorCode>);

/// Checks the result of each syscall and each error path; returns the
/// number of the first check that failed (0 when all pass).
fn syscall_checks() -> i32 {
    let text = b"syscall round trip: hello from EL0\n";
    let big = [b'x'; DEBUG_PRINT_MAX + 1];
    let checks: [Check; 11] = [
        ("null returns Ok", syscall::null(), Ok(())),
        (
            "unknown number",
            raw_syscall(999, 0, 0, 0).into_result(),
            Err(ErrorCode::InvalidSyscall),
        ),
        (
            "number u64::MAX",
            raw_syscall(u64::MAX, 0, 0, 0).into_result(),
            Err(ErrorCode::InvalidSyscall),
        ),
        (
            "debug_print of own memory",
            syscall::debug_print(text),
            Ok(()),
        ),
        (
            "debug_print of a kernel address",
            syscall::debug_print_raw(KERNEL_PROBE_ADDRESS, 8),
            Err(ErrorCode::InvalidAddress),
        ),
        (
            "debug_print of an unmapped user address",
            syscall::debug_print_raw(0x1000, 8),
            Err(ErrorCode::InvalidAddress),
        ),
        (
            "debug_print longer than the limit",
            syscall::debug_print(&big),
            Err(ErrorCode::InvalidArgument),
        ),
        (
            "debug_print through a capability that does not exist",
            raw_syscall(Syscall::DebugPrint.number(), 5, text.as_ptr() as u64, 4).into_result(),
            Err(ErrorCode::InvalidCapability),
        ),
        (
            "debug_print through the CNode capability (wrong type)",
            raw_syscall(Syscall::DebugPrint.number(), 0, text.as_ptr() as u64, 4).into_result(),
            Err(ErrorCode::WrongCapabilityType),
        ),
        (
            "debug_print running off the end of the mapped stack",
            syscall::debug_print_raw(0x0000_7fff_ffff_0000 - 4, 8),
            Err(ErrorCode::InvalidAddress),
        ),
        ("yield returns Ok", syscall::yield_now(), Ok(())),
    ];
    for (number, (what, got, want)) in checks.iter().enumerate() {
        if got != want {
            println!(
                "check {} ({what}) failed: got {got:?}, want {want:?}",
                number + 1
            );
            return number as i32 + 1;
        }
    }
    // Every kernel entry a syscall can take keeps x9..x30, sp, TPIDR_EL0
    // and NZCV: the vector's Null, the lean entry (an unknown number), and
    // the generic entry after the lean one declined (a register read,
    // refused here for its empty slot).
    let entries = [
        (
            "null (the vector)",
            Syscall::Null.number(),
            0,
            ErrorCode::Ok,
        ),
        (
            "an unknown number (the lean entry)",
            999,
            0,
            ErrorCode::InvalidSyscall,
        ),
        (
            "a register read of an empty slot (the generic entry)",
            Syscall::TcbReadRegister.number(),
            0xfff,
            ErrorCode::InvalidCapability,
        ),
    ];
    for (what, number, x0, want) in entries {
        let (result, changed) = probe::registers_kept_across(number, x0, 0, 0);
        if result != want.raw() || changed != 0 {
            println!("{what}: x0 {result:#x} (want {want:?}), {changed} kept registers changed");
            return checks.len() as i32 + 1;
        }
    }
    if !embedded_tasks_plan() {
        return checks.len() as i32 + 2;
    }
    match test_image_calls() {
        0 => {}
        failed => return checks.len() as i32 + 2 + failed,
    }
    println!("all {} syscall checks passed", checks.len() + 2 + 4);
    0
}

/// The test image's calls (this suite runs on it): the kernel's
/// invariants hold, and checks at timer ticks are made while this thread
/// spins; a thread's counters need a TCB capability.
fn test_image_calls() -> i32 {
    use sdk::debug;
    let Ok(now) = debug::check_invariants(true) else {
        return 1;
    };
    expect!(1, now.hold_now, true);
    // Spin across a few ticks (the kernel ticks every 10 ms, checks at
    // every 4th).
    probe::spin_ms(100);
    let Ok(after) = debug::check_invariants(false) else {
        return 2;
    };
    expect!(2, (after.hold_now, after.broken_at_a_tick), (true, false));
    expect!(2, after.tick_checks > 0, true);
    // Off: no more checks at ticks.
    probe::spin_ms(30);
    expect!(
        3,
        debug::check_invariants(false).map(|r| r.tick_checks),
        Ok(0)
    );
    expect!(
        4,
        debug::thread_stats(sdk::ipc::Cptr(abi::task::CONSOLE_SLOT)),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        4,
        debug::thread_stats(sdk::ipc::Cptr(999)),
        Err(ErrorCode::InvalidCapability)
    );
    0
}

/// Do the task ELFs embedded in this image pass the loader's checks?
/// Prints each one's entry point and page count.
fn embedded_tasks_plan() -> bool {
    let mut all = true;
    for (name, file) in [
        ("echo", tasks::ECHO_ELF),
        ("echo-client", tasks::ECHO_CLIENT_ELF),
    ] {
        match sdk::loader::plan(file) {
            Ok(plan) => println!(
                "embedded task {name}: {} bytes, entry {:#x}, {} pages",
                file.len(),
                plan.entry(),
                plan.page_count()
            ),
            Err(error) => {
                println!("embedded task {name} is refused by the loader: {error:?}");
                all = false;
            }
        }
    }
    all
}
