//! The invariant checks catch a thread whose `USER_DISPATCH` work bit and
//! user-dispatch configuration disagree: the user-dispatch fast path
//! (`user_dispatch_fast_path.s`) reads the configuration's words of every
//! thread with the bit without looking at the option. The test breaks the
//! pair by hand, both ways, the way a path that changed one without the
//! other would.

use crate::cap::{Capability, Memory};
use crate::kernel::Kernel;
use crate::thread::{ThreadId, UserDispatchConfig};
use abi::cap::{CapType, Rights};
use entry::WorkFlags;

#[test]
fn user_dispatch_work_without_its_configuration_or_the_reverse_is_caught() {
    let mut kernel = Box::new(Kernel::new());
    // From a page below the CNode's: the first holds granule 0, which
    // holds no record.
    let memory = Memory::on_heap(0x0f_f000, (1 << 20) + 0x1000);
    assert!(kernel.install_object_memory(memory));
    let objects = &mut kernel.objects;
    let cnode = objects.create_cnode(2, 0x10_0000).unwrap();
    let untyped = objects
        .create_object(CapType::Untyped, 0x18_0000, 64 * 1024, 0x10_1000)
        .unwrap();
    let slot = objects.slot(cnode, 0).unwrap();
    objects
        .install_original(
            slot,
            Capability::new(CapType::Untyped, Rights::ALL, untyped),
        )
        .unwrap();
    let tcb = objects.retype(slot, CapType::Tcb, 0, cnode, 1, 1).unwrap()[0];
    let thread = ThreadId::of(tcb);
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
