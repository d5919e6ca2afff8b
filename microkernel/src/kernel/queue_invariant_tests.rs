//! The invariant checks catch an endpoint queue holding a thread that is
//! not blocked on it (the IPC fast path takes a queue's head as a waiting
//! receiver without looking at its state, and masks it to the thread
//! table instead of bounds-checking it): each test breaks one link by
//! hand, the way a bug in a path that leaves a queue would.

use super::Kernel;
use crate::ipc::queue::Waiting;
use crate::thread::ThreadId;

#[test]
fn a_queue_holding_a_thread_that_is_not_blocked_is_caught() {
    let mut kernel = Box::new(Kernel::new());
    assert_eq!(kernel.check_invariants(), Ok(()));
    // Thread 3 left its wait (a bug: it stayed in the queue) and its slot
    // is free again.
    let Kernel {
        endpoints, threads, ..
    } = &mut *kernel;
    endpoints[5].push_back(threads, ThreadId(3), Waiting::Receivers);
    assert_eq!(
        kernel.check_invariants(),
        Err("an endpoint queue holds a thread not blocked on it")
    );
}
