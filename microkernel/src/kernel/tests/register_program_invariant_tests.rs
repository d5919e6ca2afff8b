//! The invariant checks catch a thread whose `register_judged` mask names
//! a syscall its compiled verdicts do not hold: the policy fast path
//! (`policy_fast_path.s`) would walk an empty program for it and allow
//! it. The test breaks the mask by hand, the way a path that changed the
//! program without the mask would.

use super::test_kernel::kernel_with_a_thread;
use crate::filter::{Filter, RegisterProgram, VerdictCache};
use abi::policy::{Action, ArgMatch, ArgOp, FilterDescription, Rule};
use abi::{ErrorCode, Syscall};

#[test]
fn a_register_judged_syscall_without_its_comparisons_is_caught() {
    let (mut kernel, thread) = kernel_with_a_thread();
    // Null refused when x2 is 1: compiled.
    let mut rule = Rule {
        syscall: Some(Syscall::Null.number()),
        ..Rule::new(Action::errno(ErrorCode::Denied))
    };
    rule.push_arg(ArgMatch::register(2, u64::MAX, ArgOp::Eq, 1))
        .unwrap();
    let mut description = FilterDescription::new(Action::Allow);
    description.push(rule).unwrap();
    let filter = Filter::from_description(description).unwrap();
    let cache = VerdictCache::new(&[&filter]);
    let program = RegisterProgram::new(&[&filter], &cache);
    assert_eq!(program.compiled_mask(), 1 << Syscall::Null.number());
    kernel.objects[thread].register_program = program;
    kernel.objects[thread].register_judged = program.compiled_mask();
    assert_eq!(kernel.check_invariants(), Ok(()));
    kernel.objects[thread].register_judged |= 1 << Syscall::Yield.number();
    assert_eq!(
        kernel.check_invariants(),
        Err("a thread's register-judged syscalls are not its compiled ones")
    );
}
