//! The invariant checks catch an endpoint queue holding a thread that is
//! not blocked on it (the IPC fast path takes a queue's head as a waiting
//! receiver without looking at its state): the test breaks one link by
//! hand, the way a bug in a path that leaves a queue would.

use crate::cap::{Capability, Memory};
use crate::endpoint_queue::Waiting;
use crate::kernel::Kernel;
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use arch::object_memory::kind;

#[test]
fn a_queue_holding_a_thread_that_is_not_blocked_is_caught() {
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
    let endpoint = objects
        .retype(slot, CapType::Endpoint, 0, cnode, 1, 1)
        .unwrap()[0];
    let tcb = objects.retype(slot, CapType::Tcb, 0, cnode, 2, 1).unwrap()[0];
    assert_eq!(kernel.check_invariants(), Ok(()));
    // The thread left its wait (a bug: it stayed in the queue).
    let mut queue = *kernel.objects.get::<kind::Endpoint>(endpoint).unwrap();
    queue.push_back(&mut kernel.objects, ThreadId::of(tcb), Waiting::Receivers);
    *kernel.objects.get_mut::<kind::Endpoint>(endpoint).unwrap() = queue;
    assert_eq!(
        kernel.check_invariants(),
        Err("an endpoint queue holds a thread not blocked on it")
    );
}
