//! Syscall exit stages: no spurious stops or reports after a skip.

use crate::fake::{regs, run_syscall, Event, FakeKernel, FakeRegs, EMULATED_RESULT, RESUME};
use entry::{SkipReason, SyscallEntry, SyscallRegisters, WorkFlags};

#[test]
fn sysemu_skips_dispatch_exit_stop_audit_and_step_report() {
    let mut kernel = FakeKernel::new();
    let mut regs = regs();
    let work = WorkFlags::SYSEMU | WorkFlags::SINGLESTEP | WorkFlags::AUDIT | WorkFlags::POLICY;
    let (entry, user_return) = run_syscall(&mut kernel, &mut regs, work);
    assert_eq!(entry, SyscallEntry::Skipped(SkipReason::Emulated));
    assert_eq!(user_return, RESUME);
    assert_eq!(regs.return_value(), EMULATED_RESULT);
    assert_eq!(kernel.events, [Event::TraceEntry, Event::ReadWork]);
}

#[test]
fn sysemu_with_trace_also_gets_no_exit_stop() {
    let mut kernel = FakeKernel::new();
    let work = WorkFlags::SYSEMU | WorkFlags::TRACE | WorkFlags::SINGLESTEP;
    let _ = run_syscall(&mut kernel, &mut regs(), work);
    assert_eq!(kernel.events, [Event::TraceEntry, Event::ReadWork]);
}

#[test]
fn sysemu_in_the_exit_work_suppresses_the_step_report_by_itself() {
    let mut kernel = FakeKernel::new();
    let work = WorkFlags::SYSEMU | WorkFlags::SINGLESTEP;
    let user_return = kernel.exit(&mut regs(), SyscallEntry::Dispatch, work);
    assert_eq!(user_return, RESUME);
    assert_eq!(kernel.events, [Event::ReadWork]);
}

#[test]
fn exit_work_is_what_the_caller_read_after_dispatch() {
    // A tracer attached while the syscall blocked: no entry stop, but an exit stop.
    let mut kernel = FakeKernel::new();
    let mut regs = FakeRegs::default();
    regs.set_return_value(3);
    let work = WorkFlags::TRACE | WorkFlags::AUDIT;
    let user_return = kernel.exit(&mut regs, SyscallEntry::Dispatch, work);
    assert_eq!(user_return, RESUME);
    assert_eq!(
        kernel.events,
        [
            Event::AuditExit { result: Some(3) },
            Event::TraceExit,
            Event::ReadWork
        ]
    );
}
