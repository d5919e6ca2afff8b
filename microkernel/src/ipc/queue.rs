//! An endpoint's queue of waiting threads: FIFO, all senders or all
//! receivers, linked through the threads' `queue_links`.

use crate::thread::{Thread, ThreadId};

/// Who waits in the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Waiting {
    /// Nobody.
    #[default]
    Nobody,
    /// Threads blocked in `Send`/`Call`.
    Senders,
    /// Threads blocked in `Recv`.
    Receivers,
}

/// A FIFO of blocked threads.
///
/// 16 bytes (10 of them used): a power of two, so finding an endpoint's
/// queue in the table is one shifted add, not a multiply (the IPC fast
/// path does it on every call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(16))]
pub struct EndpointQueue {
    head: Option<ThreadId>,
    tail: Option<ThreadId>,
    waiting: Waiting,
}

impl EndpointQueue {
    /// An empty queue.
    pub const EMPTY: EndpointQueue = EndpointQueue {
        head: None,
        tail: None,
        waiting: Waiting::Nobody,
    };

    /// Who waits.
    pub fn waiting(&self) -> Waiting {
        self.waiting
    }

    /// The first waiter.
    pub fn head(&self) -> Option<ThreadId> {
        self.head
    }

    /// Appends `thread`, which waits as `kind`. The caller guarantees the
    /// queue is empty or already holds `kind` waiters.
    pub fn push_back(&mut self, threads: &mut [Thread], thread: ThreadId, kind: Waiting) {
        self.push_back_inline(threads, thread, kind);
    }

    /// `push_back`, always inlined: for the IPC fast path's `ReplyRecv`,
    /// where the compiler's own choice to call it depends on unrelated
    /// code around it (a call costs about 9 instructions there).
    #[inline(always)]
    pub fn push_back_inline(&mut self, threads: &mut [Thread], thread: ThreadId, kind: Waiting) {
        debug_assert!(self.waiting == Waiting::Nobody || self.waiting == kind);
        threads[thread.index()].queue_links.previous = self.tail;
        threads[thread.index()].queue_links.next = None;
        match self.tail {
            Some(tail) => threads[tail.index()].queue_links.next = Some(thread),
            None => self.head = Some(thread),
        }
        self.tail = Some(thread);
        self.waiting = kind;
    }

    /// Removes and returns the first waiter.
    pub fn pop_front(&mut self, threads: &mut [Thread]) -> Option<ThreadId> {
        let head = self.head?;
        self.remove(threads, head);
        Some(head)
    }

    /// Removes `head`, which the caller read from `head()` (the IPC fast
    /// path): `pop_front` without the general unlink, since the head has
    /// no previous waiter.
    #[inline(always)]
    pub fn remove_head(&mut self, threads: &mut [Thread], head: ThreadId) {
        debug_assert_eq!(self.head, Some(head));
        let next = threads[head.index()].queue_links.next;
        match next {
            Some(next) => threads[next.index()].queue_links.previous = None,
            None => {
                self.tail = None;
                self.waiting = Waiting::Nobody;
            }
        }
        self.head = next;
        threads[head.index()].queue_links = Default::default();
    }

    /// Removes `thread` from wherever it is in this queue.
    pub fn remove(&mut self, threads: &mut [Thread], thread: ThreadId) {
        let links = threads[thread.index()].queue_links;
        match links.previous {
            Some(previous) => threads[previous.index()].queue_links.next = links.next,
            None => self.head = links.next,
        }
        match links.next {
            Some(next) => threads[next.index()].queue_links.previous = links.previous,
            None => self.tail = links.previous,
        }
        threads[thread.index()].queue_links = Default::default();
        if self.head.is_none() {
            self.waiting = Waiting::Nobody;
        }
    }

    /// Takes every waiter out, first to last (for a deleted endpoint).
    pub fn drain(&mut self, threads: &mut [Thread], mut each: impl FnMut(&mut [Thread], ThreadId)) {
        while let Some(thread) = self.pop_front(threads) {
            each(threads, thread);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threads() -> Vec<Thread> {
        (0..6).map(|_| Thread::EMPTY).collect()
    }

    #[test]
    fn fifo_order_and_removal_from_the_middle() {
        let mut t = threads();
        let mut q = EndpointQueue::EMPTY;
        for i in 0..4 {
            q.push_back(&mut t, ThreadId(i), Waiting::Senders);
        }
        assert_eq!(q.waiting(), Waiting::Senders);
        q.remove(&mut t, ThreadId(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_front(&mut t))
            .map(|id| id.0)
            .collect();
        assert_eq!(order, vec![0, 1, 3]);
        assert_eq!(q.waiting(), Waiting::Nobody);
        assert_eq!(q, EndpointQueue::EMPTY);
    }

    #[test]
    fn a_queue_is_sixteen_bytes() {
        assert_eq!(core::mem::size_of::<EndpointQueue>(), 16);
    }

    #[test]
    fn remove_head_is_pop_front() {
        for waiters in 1..4u16 {
            let (mut a, mut b) = (threads(), threads());
            let (mut qa, mut qb) = (EndpointQueue::EMPTY, EndpointQueue::EMPTY);
            for i in 0..waiters {
                qa.push_back(&mut a, ThreadId(i), Waiting::Receivers);
                qb.push_back(&mut b, ThreadId(i), Waiting::Receivers);
            }
            let popped = qa.pop_front(&mut a);
            let head = qb.head().unwrap();
            qb.remove_head(&mut b, head);
            assert_eq!(popped, Some(head));
            assert_eq!(qa, qb);
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.queue_links, y.queue_links);
            }
        }
    }

    #[test]
    fn removing_head_and_tail_keeps_links_consistent() {
        let mut t = threads();
        let mut q = EndpointQueue::EMPTY;
        for i in 0..3 {
            q.push_back(&mut t, ThreadId(i), Waiting::Receivers);
        }
        q.remove(&mut t, ThreadId(0));
        q.remove(&mut t, ThreadId(2));
        assert_eq!(q.head(), Some(ThreadId(1)));
        q.push_back(&mut t, ThreadId(4), Waiting::Receivers);
        let mut seen = vec![];
        q.drain(&mut t, |_, id| seen.push(id.0));
        assert_eq!(seen, vec![1, 4]);
        let unlinked = crate::thread::QueueLinks::default();
        assert!(t.iter().all(|thread| thread.queue_links == unlinked));
    }
}
