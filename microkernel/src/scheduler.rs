//! The run queue: 256 fixed priorities, round robin within a priority.
//!
//! Picking the next thread is O(1): a 256-bit bitmap marks the priorities
//! with a ready thread, and each priority has a FIFO linked through the
//! threads' own `run_links` (as seL4's), so the queue holds any number of
//! threads and costs nothing per thread beyond the TCB.

use crate::ids::ThreadId;
use core::ops::IndexMut;

pub use crate::ids::Priority;

/// A thread's neighbours in its priority's run queue, while it is ready.
/// Only this module reads or writes them (the fields are private): a
/// thread (`Thread`, in the thread module) keeps them and hands them over
/// through [`RunQueued`], and the rest of the kernel can only pass them
/// on as [`RunQueue::append`] returned them. (The yield fast path's
/// assembly reads and writes them too, at the offsets below: `repr(C)`,
/// and aligned so that one 8-byte store writes both.)
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunLinks {
    previous: Option<ThreadId>,
    next: Option<ThreadId>,
}

impl RunLinks {
    /// Where `previous` lies (an optional thread id, 0 for none).
    pub const PREVIOUS_OFFSET: usize = core::mem::offset_of!(RunLinks, previous);
    /// Where `next` lies.
    pub const NEXT_OFFSET: usize = core::mem::offset_of!(RunLinks, next);

    /// In no run queue.
    pub const UNLINKED: RunLinks = RunLinks {
        previous: None,
        next: None,
    };
}

/// Something the run queue links: a thread, which keeps its
/// [`RunLinks`] for the queue (so this module does not depend on the
/// thread module, which depends on it).
pub trait RunQueued {
    /// Its run-queue links.
    fn run_links(&self) -> &RunLinks;
    /// Its run-queue links, to change.
    fn run_links_mut(&mut self) -> &mut RunLinks;
}

/// Bytes of one CPU's run-queue record in the kernel (`CoreQueue`, a
/// run queue in a 4 KiB slot): CPU n's is `n × CORE_QUEUE_BYTES` after
/// CPU 0's.
pub const CORE_QUEUE_BYTES: usize = 4096;

/// Where, from CPU 0's bitmap of non-empty priorities, CPU `cpu`'s word
/// holding `priority`'s bit lies (bit `priority % 64` of it): the yield
/// fast path's one load, kept in each thread (`Thread::run_queue_word`).
pub const fn bitmap_word(cpu: u8, priority: Priority) -> u32 {
    cpu as u32 * CORE_QUEUE_BYTES as u32 + (priority as u32 / 64) * 8
}

/// Ready threads by priority.
pub struct RunQueue {
    heads: [Option<ThreadId>; 256],
    tails: [Option<ThreadId>; 256],
    nonempty: [u64; 4],
}

impl Default for RunQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl RunQueue {
    /// Where the bitmap of non-empty priorities lies (for the yield fast
    /// path's assembly, which tests its thread's priority's bit).
    pub const NONEMPTY_OFFSET: usize = core::mem::offset_of!(RunQueue, nonempty);
    /// Where the first thread of each priority lies (optional thread ids,
    /// by priority), for the yield fast path's assembly.
    pub const HEADS_OFFSET: usize = core::mem::offset_of!(RunQueue, heads);
    /// Where the last thread of each priority lies.
    pub const TAILS_OFFSET: usize = core::mem::offset_of!(RunQueue, tails);

    /// An empty run queue.
    pub const fn new() -> Self {
        RunQueue {
            heads: [None; 256],
            tails: [None; 256],
            nonempty: [0; 4],
        }
    }

    /// Puts `thread` (in no run queue) at the back of its priority's FIFO.
    #[inline(always)]
    pub fn enqueue<T>(&mut self, threads: &mut T, thread: ThreadId, priority: Priority)
    where
        T: IndexMut<ThreadId, Output: RunQueued> + ?Sized,
    {
        let links = self.append(&mut threads[thread], thread, priority);
        self.link_behind(threads, thread, links);
    }

    /// The queue's side of `enqueue`, for a caller that holds the thread
    /// (`queued`, which is `thread`) already: gives it its links and
    /// returns them; `link_behind` finishes.
    #[inline(always)]
    pub fn append(
        &mut self,
        queued: &mut (impl RunQueued + ?Sized),
        thread: ThreadId,
        priority: Priority,
    ) -> RunLinks {
        let p = usize::from(priority);
        let tail = self.tails[p].replace(thread);
        if tail.is_none() {
            self.heads[p] = Some(thread);
        }
        self.nonempty[p / 64] |= 1 << (p % 64);
        let links = RunLinks {
            previous: tail,
            next: None,
        };
        *queued.run_links_mut() = links;
        links
    }

    /// Links the thread in front of `thread` (appended with `links`) to it.
    #[inline(always)]
    pub fn link_behind<T>(&mut self, threads: &mut T, thread: ThreadId, links: RunLinks)
    where
        T: IndexMut<ThreadId, Output: RunQueued> + ?Sized,
    {
        if let Some(previous) = links.previous {
            threads[previous].run_links_mut().next = Some(thread);
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
    pub fn dequeue<T>(&mut self, threads: &mut T) -> Option<(ThreadId, Priority)>
    where
        T: IndexMut<ThreadId, Output: RunQueued> + ?Sized,
    {
        let priority = self.highest_priority()?;
        let p = usize::from(priority);
        let thread = self.heads[p]?;
        // `remove` for the head, which has no previous thread: one look
        // at it and one at its successor.
        let next = core::mem::take(threads[thread].run_links_mut()).next;
        self.heads[p] = next;
        match next {
            Some(next) => threads[next].run_links_mut().previous = None,
            None => {
                self.tails[p] = None;
                self.nonempty[p / 64] &= !(1 << (p % 64));
            }
        }
        Some((thread, priority))
    }

    /// Removes `thread`, queued at `priority`, from the queue.
    pub fn remove<T>(&mut self, threads: &mut T, thread: ThreadId, priority: Priority)
    where
        T: IndexMut<ThreadId, Output: RunQueued> + ?Sized,
    {
        let p = usize::from(priority);
        let queued = threads[thread].run_links_mut();
        let links = *queued;
        if links.previous.is_none() && self.heads[p] != Some(thread) {
            // Not queued at this priority.
            return;
        }
        *queued = RunLinks::UNLINKED;
        match links.previous {
            Some(previous) => threads[previous].run_links_mut().next = links.next,
            None => self.heads[p] = links.next,
        }
        match links.next {
            Some(next) => threads[next].run_links_mut().previous = links.previous,
            None => self.tails[p] = links.previous,
        }
        if self.heads[p].is_none() {
            self.nonempty[p / 64] &= !(1 << (p % 64));
        }
    }

    /// Is a thread of exactly `priority` ready? (One bit: a yield asks it
    /// of its own priority, where none higher can be ready.)
    #[inline(always)]
    pub fn has_ready_at(&self, priority: Priority) -> bool {
        let p = usize::from(priority);
        self.nonempty[p / 64] & (1 << (p % 64)) != 0
    }

    /// Is any thread of priority `at_least` or higher ready?
    pub fn has_ready_at_or_above(&self, at_least: Priority) -> bool {
        self.highest_priority().is_some_and(|p| p >= at_least)
    }

    /// The threads queued at `priority`, first to last (for the invariant
    /// checks).
    pub fn queued_at<'a, T>(
        &self,
        threads: &'a T,
        priority: Priority,
    ) -> impl Iterator<Item = ThreadId> + 'a
    where
        T: core::ops::Index<ThreadId, Output: RunQueued> + ?Sized,
    {
        let mut next = self.heads[usize::from(priority)];
        core::iter::from_fn(move || {
            let thread = next?;
            next = threads[thread].run_links().next;
            Some(thread)
        })
    }

    /// Number of ready threads: a walk of every queue (tests and checks
    /// only; keeping a count cost every append and dequeue three
    /// instructions).
    pub fn count<T>(&self, threads: &T) -> usize
    where
        T: core::ops::Index<ThreadId, Output: RunQueued> + ?Sized,
    {
        (0..=255)
            .map(|priority| self.queued_at(threads, priority).count())
            .sum()
    }

    /// No thread is ready.
    pub fn is_empty(&self) -> bool {
        self.nonempty == [0; 4]
    }
}

#[cfg(test)]
mod tests;
