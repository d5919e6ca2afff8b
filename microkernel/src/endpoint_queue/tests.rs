//! Tests of `queue`.

use super::*;

use crate::thread::test_threads::ThreadVec;

fn threads() -> ThreadVec {
    ThreadVec::new(6)
}

#[test]
fn fifo_order_and_removal_from_the_middle() {
    let mut t = threads();
    let mut q = EndpointQueue::EMPTY;
    for i in 0..4 {
        q.push_back(&mut t, ThreadId::nth(i), Waiting::Senders);
    }
    assert_eq!(q.waiting(), Waiting::Senders);
    q.remove(&mut t, ThreadId::nth(2));
    let order: Vec<_> = std::iter::from_fn(|| q.pop_front(&mut t))
        .map(|id| id.index())
        .collect();
    assert_eq!(order, vec![0, 1, 3]);
    assert_eq!(q.waiting(), Waiting::Nobody);
    assert_eq!(q, EndpointQueue::EMPTY);
}

#[test]
fn remove_head_is_pop_front() {
    for waiters in 1..4u32 {
        let (mut a, mut b) = (threads(), threads());
        let (mut qa, mut qb) = (EndpointQueue::EMPTY, EndpointQueue::EMPTY);
        for i in 0..waiters {
            qa.push_back(&mut a, ThreadId::nth(i), Waiting::Receivers);
            qb.push_back(&mut b, ThreadId::nth(i), Waiting::Receivers);
        }
        let popped = qa.pop_front(&mut a);
        let head = qb.head().unwrap();
        qb.remove_head(&mut b, head);
        assert_eq!(popped, Some(head));
        assert_eq!(qa, qb);
        for (x, y) in a.0.iter().zip(&b.0) {
            assert_eq!(x.queue_links(), y.queue_links());
        }
    }
}

#[test]
fn removing_head_and_tail_keeps_links_consistent() {
    let mut t = threads();
    let mut q = EndpointQueue::EMPTY;
    for i in 0..3 {
        q.push_back(&mut t, ThreadId::nth(i), Waiting::Receivers);
    }
    q.remove(&mut t, ThreadId::nth(0));
    q.remove(&mut t, ThreadId::nth(2));
    assert_eq!(q.head(), Some(ThreadId::nth(1)));
    q.push_back(&mut t, ThreadId::nth(4), Waiting::Receivers);
    let mut seen = vec![];
    q.drain(&mut t, |_, id| seen.push(id.index()));
    assert_eq!(seen, vec![1, 4]);
    assert!(t
        .0
        .iter()
        .all(|thread| *thread.queue_links() == QueueLinks::UNLINKED));
}
