//! What a stopped call remembers of the capability its `x0` names
//! (`Kernel::judged_capability`, checked by `Kernel::still_judged` when
//! the call goes on) tells the judged object from a new one made later in
//! the same memory: deleting the last capability to an endpoint and
//! retyping a new one from the same Untyped into the same slot gives an
//! equal capability (same object id, type, rights, no badge), but not
//! what was judged.

use crate::cap::{CNodeId, Capability, ObjectId};
use crate::kernel::tests::test_kernel::{delete_and_reap, kernel_with_untyped, SPARE_RECORDS};
use crate::kernel::Kernel;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use entry::ArgIndex;

const UNTYPED: u64 = 0;
/// The slot the thread's `x0` names.
const JUDGED: u64 = 5;
const ELSEWHERE: u64 = 6;

/// A kernel whose CNode holds an Untyped (slot 0) whose only child is an
/// endpoint in `JUDGED`; a thread with the CNode as its CSpace and `x0`
/// naming `JUDGED`.
fn judging() -> (Box<Kernel>, CNodeId, ThreadId) {
    let (mut kernel, cnode, _) = kernel_with_untyped(16 * 1024);
    let slot = kernel.objects.slot(cnode, UNTYPED).unwrap();
    let caps = &mut kernel.objects;
    let tcb = caps
        .create_object(CapType::Tcb, 0, 0, SPARE_RECORDS)
        .unwrap();
    caps.install_original(
        caps.slot(cnode, 1).unwrap(),
        Capability::new(CapType::Tcb, Rights::ALL, tcb),
    )
    .unwrap();
    caps.retype(slot, CapType::Endpoint, 0, cnode, JUDGED, 1)
        .unwrap();
    let thread = ThreadId::of(tcb);
    kernel.objects[thread].set_state_for_test(ThreadState::Inactive);
    kernel.objects[thread].created_by_user = true;
    kernel.set_cspace(thread, cnode).unwrap();
    kernel.objects[thread].context.set_arg(ArgIndex::X0, JUDGED);
    (kernel, cnode, thread)
}

fn object_in(kernel: &Kernel, cnode: CNodeId, index: u64) -> ObjectId {
    let slot = kernel.objects.slot(cnode, index).unwrap();
    kernel.objects.lookup(slot).unwrap().object()
}

fn delete(kernel: &mut Kernel, cnode: CNodeId, index: u64) {
    delete_and_reap(kernel, cnode, index);
}

#[test]
fn a_new_endpoint_in_the_judged_ones_memory_and_slot_is_something_else() {
    let (mut kernel, cnode, thread) = judging();
    let judged = kernel.judged_capability(thread);
    let old = object_in(&kernel, cnode, JUDGED);
    assert_eq!(judged.capability.object(), old);
    assert!(kernel.still_judged(thread, judged));
    delete(&mut kernel, cnode, JUDGED);
    assert!(!kernel.still_judged(thread, judged), "an empty slot");
    let untyped = kernel.objects.slot(cnode, UNTYPED).unwrap();
    kernel
        .objects
        .retype(untyped, CapType::Endpoint, 0, cnode, JUDGED, 1)
        .unwrap();
    // The premise: the same place, and a capability equal in every field.
    assert_eq!(
        object_in(&kernel, cnode, JUDGED),
        old,
        "the memory is reused"
    );
    assert_eq!(kernel.capability_named(thread), judged.capability);
    // It is not what was judged.
    assert!(!kernel.still_judged(thread, judged));
    assert_eq!(kernel.check_invariants(), Ok(()));
}

#[test]
fn the_same_capability_moved_away_and_back_is_what_was_judged_whatever_is_made_meanwhile() {
    let (mut kernel, cnode, thread) = judging();
    let judged = kernel.judged_capability(thread);
    let (from, to) = (
        kernel.objects.slot(cnode, JUDGED).unwrap(),
        kernel.objects.slot(cnode, ELSEWHERE).unwrap(),
    );
    kernel.objects.move_cap(from, to).unwrap();
    assert!(!kernel.still_judged(thread, judged));
    kernel.objects.move_cap(to, from).unwrap();
    assert!(kernel.still_judged(thread, judged));
    // Another object made since (its serial number is newer) changes
    // nothing for the judged one, which is older.
    let untyped = kernel.objects.slot(cnode, UNTYPED).unwrap();
    kernel
        .objects
        .retype(untyped, CapType::Endpoint, 0, cnode, ELSEWHERE, 1)
        .unwrap();
    assert!(kernel.objects.newest_serial() > judged.newest_serial.get());
    assert!(kernel.still_judged(thread, judged));
}

#[test]
fn an_empty_slot_is_judged_empty_and_stays_so_until_something_is_put_there() {
    let (mut kernel, cnode, thread) = judging();
    kernel.objects[thread]
        .context
        .set_arg(ArgIndex::X0, ELSEWHERE);
    let judged = kernel.judged_capability(thread);
    assert_eq!(judged.capability, Capability::NULL);
    assert!(kernel.still_judged(thread, judged));
    let untyped = kernel.objects.slot(cnode, UNTYPED).unwrap();
    kernel
        .objects
        .retype(untyped, CapType::Endpoint, 0, cnode, ELSEWHERE, 1)
        .unwrap();
    assert!(!kernel.still_judged(thread, judged));
    // A slot past the CSpace holds nothing.
    kernel.objects[thread].context.set_arg(ArgIndex::X0, 16);
    assert_eq!(kernel.capability_named(thread), Capability::NULL);
}
