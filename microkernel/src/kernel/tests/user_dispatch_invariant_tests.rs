//! The invariant checks catch a thread whose `USER_DISPATCH` work bit and
//! user-dispatch configuration disagree: the user-dispatch fast path
//! (`user_dispatch_fast_path.s`) reads the configuration's words of every
//! thread with the bit without looking at the option. The test breaks the
//! pair by hand, both ways, the way a path that changed one without the
//! other would.

use super::test_kernel::kernel_with_a_thread;
use crate::thread::UserDispatchConfig;
use entry::WorkFlags;

#[test]
fn user_dispatch_work_without_its_configuration_or_the_reverse_is_caught() {
    let (mut kernel, thread) = kernel_with_a_thread();
    assert_eq!(kernel.check_invariants(), Ok(()));
    let disagree = Err("a thread's user-dispatch work and its configuration disagree");
    kernel.objects[thread].work.insert(WorkFlags::USER_DISPATCH);
    assert_eq!(kernel.check_invariants(), disagree);
    kernel.objects[thread].user_dispatch = Some(UserDispatchConfig {
        start: 0x1000,
        end: 0x1008,
        handler: 0x2000,
        buffer: 0x3000,
        selector: 0x4000,
    });
    assert_eq!(kernel.check_invariants(), Ok(()));
    kernel.objects[thread].work.remove(WorkFlags::USER_DISPATCH);
    assert_eq!(kernel.check_invariants(), disagree);
}
