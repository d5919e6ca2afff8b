//! The run queue: 256 fixed priorities, round robin within a priority.
//!
//! Picking the next thread is O(1): a 256-bit bitmap marks the priorities
//! with a ready thread, and each priority has a FIFO.

use crate::thread::ThreadId;
use heapless::Deque;

/// Priorities are 0 (lowest) ..= 255 (highest).
pub type Priority = u8;
/// Threads one priority can hold ready.
pub const QUEUE_CAPACITY: usize = crate::thread::MAX_THREADS;

/// Why a thread could not be queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// That priority's FIFO is full (more ready threads than exist: a bug).
    Full,
}

/// Ready threads by priority.
pub struct RunQueue {
    ready: [Deque<ThreadId, QUEUE_CAPACITY>; 256],
    nonempty: [u64; 4],
}

impl Default for RunQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl RunQueue {
    /// An empty run queue.
    pub const fn new() -> Self {
        RunQueue {
            ready: [const { Deque::new() }; 256],
            nonempty: [0; 4],
        }
    }

    /// Puts `thread` at the back of its priority's FIFO.
    #[inline(always)]
    pub fn enqueue(&mut self, thread: ThreadId, priority: Priority) -> Result<(), QueueError> {
        self.ready[priority as usize]
            .push_back(thread)
            .map_err(|_| QueueError::Full)?;
        self.nonempty[priority as usize / 64] |= 1 << (priority % 64);
        Ok(())
    }

    /// The highest priority with a ready thread.
    pub fn highest_priority(&self) -> Option<Priority> {
        (0..4).rev().find_map(|word| {
            let bits = self.nonempty[word];
            (bits != 0).then(|| (word * 64 + 63 - bits.leading_zeros() as usize) as Priority)
        })
    }

    /// Takes the first thread of the highest non-empty priority.
    pub fn dequeue(&mut self) -> Option<(ThreadId, Priority)> {
        let priority = self.highest_priority()?;
        let queue = &mut self.ready[priority as usize];
        let thread = queue.pop_front()?;
        if queue.is_empty() {
            self.nonempty[priority as usize / 64] &= !(1 << (priority % 64));
        }
        Some((thread, priority))
    }

    /// Removes `thread` wherever it is queued (it died or blocked).
    pub fn remove(&mut self, thread: ThreadId, priority: Priority) {
        let queue = &mut self.ready[priority as usize];
        let mut kept: Deque<ThreadId, QUEUE_CAPACITY> = Deque::new();
        while let Some(t) = queue.pop_front() {
            if t != thread {
                let _ = kept.push_back(t);
            }
        }
        *queue = kept;
        if queue.is_empty() {
            self.nonempty[priority as usize / 64] &= !(1 << (priority % 64));
        }
    }

    /// Is any thread of priority `at_least` or higher ready?
    pub fn has_ready_at_or_above(&self, at_least: Priority) -> bool {
        self.highest_priority().is_some_and(|p| p >= at_least)
    }

    /// Is `thread` queued at any priority?
    pub fn contains(&self, thread: ThreadId) -> bool {
        self.ready
            .iter()
            .any(|queue| queue.iter().any(|&t| t == thread))
    }

    /// Number of ready threads.
    pub fn len(&self) -> usize {
        self.ready.iter().map(Deque::len).sum()
    }

    /// No thread is ready.
    pub fn is_empty(&self) -> bool {
        self.nonempty == [0; 4]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_priority_first_then_fifo() {
        let mut rq = RunQueue::new();
        rq.enqueue(ThreadId(1), 10).unwrap();
        rq.enqueue(ThreadId(2), 200).unwrap();
        rq.enqueue(ThreadId(3), 10).unwrap();
        rq.enqueue(ThreadId(4), 255).unwrap();
        rq.enqueue(ThreadId(5), 0).unwrap();
        let order: Vec<_> = std::iter::from_fn(|| rq.dequeue()).collect();
        assert_eq!(
            order,
            vec![
                (ThreadId(4), 255),
                (ThreadId(2), 200),
                (ThreadId(1), 10),
                (ThreadId(3), 10),
                (ThreadId(5), 0)
            ]
        );
        assert!(rq.is_empty());
    }

    #[test]
    fn round_robin_by_requeueing() {
        let mut rq = RunQueue::new();
        for t in 0..3 {
            rq.enqueue(ThreadId(t), 7).unwrap();
        }
        let mut seen = vec![];
        for _ in 0..6 {
            let (t, p) = rq.dequeue().unwrap();
            seen.push(t.0);
            rq.enqueue(t, p).unwrap();
        }
        assert_eq!(seen, vec![0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn remove_keeps_order_and_bitmap() {
        let mut rq = RunQueue::new();
        rq.enqueue(ThreadId(1), 64).unwrap();
        rq.enqueue(ThreadId(2), 64).unwrap();
        rq.remove(ThreadId(1), 64);
        assert_eq!(rq.highest_priority(), Some(64));
        rq.remove(ThreadId(2), 64);
        assert_eq!(rq.highest_priority(), None);
        assert!(!rq.has_ready_at_or_above(0));
    }
}
