//! The run queue: 256 fixed priorities, round robin within a priority.
//!
//! Picking the next thread is O(1): a 256-bit bitmap marks the priorities
//! with a ready thread, and each priority has a FIFO linked through the
//! threads' own `run_links` (as seL4's), so the queue holds any number of
//! threads and costs nothing per thread beyond the TCB.

use crate::thread::{QueueLinks, ThreadId, Threads};

pub use crate::ids::Priority;

/// Ready threads by priority.
pub struct RunQueue {
    heads: [Option<ThreadId>; 256],
    tails: [Option<ThreadId>; 256],
    nonempty: [u64; 4],
    len: usize,
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
            heads: [None; 256],
            tails: [None; 256],
            nonempty: [0; 4],
            len: 0,
        }
    }

    /// Puts `thread` (in no run queue) at the back of its priority's FIFO.
    #[inline(always)]
    pub fn enqueue(&mut self, threads: &mut impl Threads, thread: ThreadId, priority: Priority) {
        let links = self.append(thread, priority);
        threads[thread].run_links = links;
        self.link_behind(threads, thread, links);
    }

    /// The queue's side of `enqueue`, for a caller that holds the thread
    /// already: returns the `run_links` the thread must get, then
    /// `link_behind` finishes.
    #[inline(always)]
    pub fn append(&mut self, thread: ThreadId, priority: Priority) -> QueueLinks {
        let p = usize::from(priority);
        let tail = self.tails[p].replace(thread);
        if tail.is_none() {
            self.heads[p] = Some(thread);
        }
        self.nonempty[p / 64] |= 1 << (p % 64);
        self.len += 1;
        QueueLinks {
            previous: tail,
            next: None,
        }
    }

    /// Links the thread in front of `thread` (appended with `links`) to it.
    #[inline(always)]
    pub fn link_behind(&mut self, threads: &mut impl Threads, thread: ThreadId, links: QueueLinks) {
        if let Some(previous) = links.previous {
            threads[previous].run_links.next = Some(thread);
        }
    }

    /// The highest priority with a ready thread.
    pub fn highest_priority(&self) -> Option<Priority> {
        (0..4).rev().find_map(|word| {
            let bits = self.nonempty[word];
            (bits != 0).then(|| (word * 64 + 63 - bits.leading_zeros() as usize) as Priority)
        })
    }

    /// Takes the first thread of the highest non-empty priority.
    pub fn dequeue(&mut self, threads: &mut impl Threads) -> Option<(ThreadId, Priority)> {
        let priority = self.highest_priority()?;
        let p = usize::from(priority);
        let thread = self.heads[p]?;
        // `remove` for the head, which has no previous thread: one look
        // at it and one at its successor.
        let next = core::mem::take(&mut threads[thread].run_links).next;
        self.heads[p] = next;
        match next {
            Some(next) => threads[next].run_links.previous = None,
            None => {
                self.tails[p] = None;
                self.nonempty[p / 64] &= !(1 << (p % 64));
            }
        }
        self.len -= 1;
        Some((thread, priority))
    }

    /// Removes `thread`, queued at `priority`, from the queue.
    pub fn remove(&mut self, threads: &mut impl Threads, thread: ThreadId, priority: Priority) {
        let p = usize::from(priority);
        let queued = &mut threads[thread];
        let links = queued.run_links;
        if links.previous.is_none() && self.heads[p] != Some(thread) {
            // Not queued at this priority.
            return;
        }
        queued.run_links = QueueLinks::default();
        match links.previous {
            Some(previous) => threads[previous].run_links.next = links.next,
            None => self.heads[p] = links.next,
        }
        match links.next {
            Some(next) => threads[next].run_links.previous = links.previous,
            None => self.tails[p] = links.previous,
        }
        if self.heads[p].is_none() {
            self.nonempty[p / 64] &= !(1 << (p % 64));
        }
        self.len -= 1;
    }

    /// Is any thread of priority `at_least` or higher ready?
    pub fn has_ready_at_or_above(&self, at_least: Priority) -> bool {
        self.highest_priority().is_some_and(|p| p >= at_least)
    }

    /// The threads queued at `priority`, first to last (for the invariant
    /// checks).
    pub fn queued_at<'a>(
        &self,
        threads: &'a impl Threads,
        priority: Priority,
    ) -> impl Iterator<Item = ThreadId> + 'a {
        let mut next = self.heads[usize::from(priority)];
        core::iter::from_fn(move || {
            let thread = next?;
            next = threads[thread].run_links.next;
            Some(thread)
        })
    }

    /// Number of ready threads.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No thread is ready.
    pub fn is_empty(&self) -> bool {
        self.nonempty == [0; 4]
    }
}

#[cfg(test)]
mod tests;
