//! Tests of `scheduler`.

use super::*;
use crate::thread::test_threads::ThreadVec;

#[test]
fn highest_priority_first_then_fifo() {
    let mut t = ThreadVec::new(6);
    let mut rq = RunQueue::new();
    rq.enqueue(&mut t, ThreadId::nth(1), 10);
    rq.enqueue(&mut t, ThreadId::nth(2), 200);
    rq.enqueue(&mut t, ThreadId::nth(3), 10);
    rq.enqueue(&mut t, ThreadId::nth(4), 255);
    rq.enqueue(&mut t, ThreadId::nth(5), 0);
    assert_eq!(rq.count(&t), 5);
    let order: Vec<_> = std::iter::from_fn(|| rq.dequeue(&mut t)).collect();
    assert_eq!(
        order,
        vec![
            (ThreadId::nth(4), 255),
            (ThreadId::nth(2), 200),
            (ThreadId::nth(1), 10),
            (ThreadId::nth(3), 10),
            (ThreadId::nth(5), 0)
        ]
    );
    assert!(rq.is_empty());
    assert_eq!(rq.count(&t), 0);
}

#[test]
fn round_robin_by_requeueing() {
    let mut t = ThreadVec::new(3);
    let mut rq = RunQueue::new();
    for i in 0..3 {
        rq.enqueue(&mut t, ThreadId::nth(i), 7);
    }
    let mut seen = vec![];
    for _ in 0..6 {
        let (thread, p) = rq.dequeue(&mut t).unwrap();
        seen.push(thread.index());
        rq.enqueue(&mut t, thread, p);
    }
    assert_eq!(seen, vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn remove_keeps_order_and_bitmap() {
    let mut t = ThreadVec::new(4);
    let mut rq = RunQueue::new();
    for i in 1..4 {
        rq.enqueue(&mut t, ThreadId::nth(i), 64);
    }
    rq.remove(&mut t, ThreadId::nth(2), 64);
    assert_eq!(
        rq.queued_at(&t, 64).collect::<Vec<_>>(),
        vec![ThreadId::nth(1), ThreadId::nth(3)]
    );
    rq.remove(&mut t, ThreadId::nth(2), 64);
    assert_eq!(
        rq.count(&t),
        2,
        "removing an unqueued thread changes nothing"
    );
    rq.remove(&mut t, ThreadId::nth(1), 64);
    rq.remove(&mut t, ThreadId::nth(3), 64);
    assert_eq!(rq.highest_priority(), None);
    assert!(!rq.has_ready_at_or_above(0));
}
