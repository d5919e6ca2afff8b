//! Host tests of the verdict cache's masks: the numbers whose judging
//! needs a capability looked up or memory copied, and those whose request
//! the vector sends.

use super::tests::{filter, filter_with_default, rule, with_arg, DENIED};
use super::*;
use abi::cap::CapType;
use abi::policy::{Action, ArgOp, Rule};
use abi::Syscall;

/// The `asked` mask: the numbers whose verdict is one filter's constant
/// `Notify` and whose request carries no memory.
#[test]
fn the_vector_asks_only_a_constant_notify_of_one_filter_on_registers_alone() {
    let every = filter_with_default(&[], Action::Notify);
    let cache = VerdictCache::new(&[&every]);
    for syscall in Syscall::ALL {
        let asked = cache.asked_mask() & (1 << syscall.number()) != 0;
        assert_eq!(asked, !syscall.carries_memory(), "{syscall:?}");
    }
    assert!(cache.asked_mask() & (1 << Syscall::Null.number()) != 0);
    assert!(cache.asked_mask() & (1 << Syscall::Poll.number()) != 0);
    assert!(cache.asked_mask() & (1 << Syscall::Call.number()) == 0);
    // Two filters: the request goes to one of them, found by evaluation.
    assert_eq!(VerdictCache::new(&[&every, &every]).asked_mask(), 0);
    // A `Notify` that depends on the registers is not constant.
    let on_x2 = filter(&[with_arg(
        rule(Some(Syscall::Null), Action::Notify),
        2,
        u64::MAX,
        ArgOp::Eq,
        2,
    )]);
    assert_eq!(VerdictCache::new(&[&on_x2]).asked_mask(), 0);
    // Nor is any other verdict asked.
    let refused = filter_with_default(&[], Action::Errno(7));
    assert_eq!(VerdictCache::new(&[&refused]).asked_mask(), 0);
    assert_eq!(VerdictCache::unfiltered().asked_mask(), 0);
}

#[test]
fn only_a_syscall_that_carries_memory_has_it_copied_for_a_server() {
    // Every syscall asks a server: only those with memory of their own
    // (a buffer, a message's words past the registers) need a copy.
    let f = filter_with_default(&[], Action::Notify);
    let cache = VerdictCache::new(&[&f]);
    for syscall in Syscall::ALL {
        assert_eq!(
            cache.needs_memory(syscall.number()),
            syscall.carries_memory(),
            "{syscall:?}"
        );
    }
    assert!(cache.needs_memory(Syscall::Call.number()));
    assert!(cache.needs_memory(Syscall::DebugPrint.number()));
    assert!(!cache.needs_memory(Syscall::Null.number()));
}

#[test]
fn a_syscall_that_names_no_capability_has_none_looked_up() {
    // The same rule on the object type, for a syscall that names one in
    // x0 and for one that does not: only the first looks it up.
    let on_type = |syscall| Rule {
        object_type: Some(CapType::Endpoint),
        ..rule(Some(syscall), DENIED)
    };
    let f = filter(&[on_type(Syscall::Send), on_type(Syscall::Null)]);
    let cache = VerdictCache::new(&[&f]);
    assert!(cache.needs_capability(Syscall::Send.number()));
    assert!(!cache.needs_capability(Syscall::Null.number()));
    for syscall in Syscall::ALL {
        let number = syscall.number();
        assert_eq!(
            Syscall::number_names_capability(number),
            syscall.names_capability()
        );
        if !syscall.names_capability() {
            assert!(!cache.needs_capability(number), "{syscall:?}");
        }
    }
    // An unknown number is judged as one that names a capability.
    assert!(Syscall::number_names_capability(999));
    assert!(Syscall::number_names_capability(u64::MAX));
}
