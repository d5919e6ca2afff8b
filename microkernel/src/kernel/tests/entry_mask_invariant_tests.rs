//! The invariant checks catch a thread with syscall work whose entry
//! masks are not what its work word and filters give: the vector reads
//! them without the kernel lock, so a traced thread left with a
//! no-entry-work mask would skip its tracer for the syscalls it names.
//! The tests break the masks by hand, the way a path that changed the
//! work word without recomputing them would.

use super::test_kernel::kernel_with_a_thread;
use entry::WorkFlags;

#[test]
fn stale_entry_masks_of_a_thread_with_syscall_work_are_caught() {
    let (mut kernel, thread) = kernel_with_a_thread();
    // Without syscall work the vector never reads the masks.
    kernel.objects[thread].no_entry_work = 1;
    assert_eq!(kernel.check_invariants(), Ok(()));
    // Trace work, recomputed: nothing is excused.
    kernel.objects[thread].work.insert(WorkFlags::TRACE);
    kernel.objects[thread].recompute_no_entry_work();
    assert_eq!(kernel.objects[thread].no_entry_work, 0);
    assert_eq!(kernel.check_invariants(), Ok(()));
    // A mask left excusing `Null` for a traced thread.
    kernel.objects[thread].no_entry_work = 1;
    assert_eq!(
        kernel.check_invariants(),
        Err("a thread's no-entry-work, refused or judged masks are stale")
    );
}

#[test]
fn a_step_asked_as_it_already_is_keeps_the_masks_current() {
    let (mut kernel, thread) = kernel_with_a_thread();
    let traced = &mut kernel.objects[thread];
    traced.work.insert(WorkFlags::TRACE);
    traced.recompute_no_entry_work();
    // No step asked, none on: nothing changes.
    traced.set_single_step(false);
    assert!(!traced.work.contains(WorkFlags::SINGLESTEP));
    assert!(traced.entry_masks_are_current());
    // On, then off again: the work word changes each time, and the masks
    // with it.
    traced.set_single_step(true);
    assert!(traced.work.contains(WorkFlags::SINGLESTEP));
    assert!(traced.entry_masks_are_current());
    traced.set_single_step(false);
    assert!(!traced.work.contains(WorkFlags::SINGLESTEP));
    assert_eq!(traced.context.spsr & arch::context::SPSR_SOFTWARE_STEP, 0);
    assert!(traced.entry_masks_are_current());
    assert_eq!(kernel.check_invariants(), Ok(()));
}
