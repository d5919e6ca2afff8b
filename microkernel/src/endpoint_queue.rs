//! An endpoint's queue of waiting threads: FIFO, all senders or all
//! receivers, linked through the threads' `queue_links`. (Also a
//! notification's waiters and the kernel's audit waiters.) A module of
//! its own, below the IPC engine and the threads: a thread keeps its
//! links, whose type is this module's, so this module may not depend on
//! the thread module, nor the thread module on the IPC engine.

use crate::ids::ThreadId;
use core::ops::IndexMut;

/// A thread's place in an endpoint queue (intrusive, as in seL4: O(1)
/// enqueue, dequeue and removal of any thread, no per-endpoint storage;
/// also a notification's waiters and the kernel's audit waiters). Only
/// this module reads or writes the links (the fields are private): a
/// thread keeps them and hands them over through [`Queued`].
///
/// `repr(C)`, 8-byte aligned: the fast paths' assembly writes both
/// links with one store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct QueueLinks {
    /// The thread queued before this one.
    previous: Option<ThreadId>,
    /// The thread queued after this one.
    next: Option<ThreadId>,
}

impl QueueLinks {
    /// Where `previous` lies in the links (for the IPC fast path's
    /// assembly, which links and unlinks threads itself).
    pub const PREVIOUS_OFFSET: usize = core::mem::offset_of!(QueueLinks, previous);
    /// Where `next` lies.
    pub const NEXT_OFFSET: usize = core::mem::offset_of!(QueueLinks, next);

    /// In no queue.
    pub const UNLINKED: QueueLinks = QueueLinks {
        previous: None,
        next: None,
    };

    /// The thread queued after this one (to walk a queue).
    #[inline(always)]
    pub fn next(&self) -> Option<ThreadId> {
        self.next
    }

    /// The IPC fast path's hand-made unlinks, each one store, beside the
    /// queue's own side (`EndpointQueue::pop_head_to`, `append_receiver`):
    /// the head that leaves (`Call`) is in no queue now.
    #[inline(always)]
    pub fn leave_as_head(&mut self) {
        *self = QueueLinks::UNLINKED;
    }

    /// A thread that joins a queue whose tail is `tail` (`ReplyRecv`).
    #[inline(always)]
    pub fn join_behind(&mut self, tail: Option<ThreadId>) {
        *self = QueueLinks {
            previous: tail,
            next: None,
        };
    }

    /// The head's successor, which becomes the head.
    #[inline(always)]
    pub fn become_head(&mut self) {
        self.previous = None;
    }

    /// The old tail, which `thread` joined behind.
    #[inline(always)]
    pub fn followed_by(&mut self, thread: ThreadId) {
        self.next = Some(thread);
    }
}

/// Something an endpoint queue links: a thread, which keeps its
/// [`QueueLinks`] for the queue (so this module does not depend on the
/// thread module, which depends on it).
pub trait Queued {
    /// Its queue links.
    fn queue_links(&self) -> &QueueLinks;
    /// Its queue links, to change.
    fn queue_links_mut(&mut self) -> &mut QueueLinks;
}

/// Who waits in the queue. A word, not a byte: the queue then has no
/// padding, and the kernel copies one in three word loads (with a byte
/// and three bytes of padding, it copied those four byte by byte). The
/// fast paths' assembly reads and writes its low byte only (the values
/// fit in it; the other three bytes stay zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub enum Waiting {
    /// Nobody.
    #[default]
    Nobody,
    /// Threads blocked in `Send`/`Call`.
    Senders,
    /// Threads blocked in `Recv`.
    Receivers,
}

/// A FIFO of blocked threads (an endpoint's body). 12 bytes, copied in
/// two loads by the IPC fast path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct EndpointQueue {
    head: Option<ThreadId>,
    tail: Option<ThreadId>,
    waiting: Waiting,
}

impl EndpointQueue {
    /// Where the head lies in the queue (for the fast paths' assembly,
    /// which reads and writes head and tail as a pair).
    pub const HEAD_OFFSET: usize = core::mem::offset_of!(EndpointQueue, head);
    /// Where the tail lies.
    pub const TAIL_OFFSET: usize = core::mem::offset_of!(EndpointQueue, tail);
    /// Where who waits lies (a [`Waiting`] word; the assembly uses its
    /// low byte).
    pub const WAITING_OFFSET: usize = core::mem::offset_of!(EndpointQueue, waiting);

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
    #[inline(always)]
    pub fn head(&self) -> Option<ThreadId> {
        self.head
    }

    /// The last waiter.
    #[inline(always)]
    pub fn tail(&self) -> Option<ThreadId> {
        self.tail
    }

    /// The queue's side of taking its head off (the IPC fast path, which
    /// unlinks the threads itself): `next` (the head's successor) is the
    /// new head.
    #[inline(always)]
    pub fn pop_head_to(&mut self, next: Option<ThreadId>) {
        self.head = next;
        if next.is_none() {
            self.tail = None;
            self.waiting = Waiting::Nobody;
        }
    }

    /// The queue's side of appending a receiver (the IPC fast path, which
    /// links the threads itself): the queue is empty or holds receivers.
    /// `head` is the queue's head, read earlier (it saves a load).
    #[inline(always)]
    pub fn append_receiver(&mut self, thread: ThreadId, head: Option<ThreadId>) {
        debug_assert_eq!(self.head, head);
        if head.is_none() {
            self.head = Some(thread);
        }
        self.tail = Some(thread);
        self.waiting = Waiting::Receivers;
    }

    /// Appends `thread`, which waits as `kind`. The caller guarantees the
    /// queue is empty or already holds `kind` waiters.
    pub fn push_back(
        &mut self,
        threads: &mut (impl IndexMut<ThreadId, Output: Queued> + ?Sized),
        thread: ThreadId,
        kind: Waiting,
    ) {
        self.push_back_inline(threads, thread, kind);
    }

    /// `push_back`, always inlined: for the IPC fast path's `ReplyRecv`,
    /// where the compiler's own choice to call it depends on unrelated
    /// code around it (a call costs about 9 instructions there).
    #[inline(always)]
    pub fn push_back_inline(
        &mut self,
        threads: &mut (impl IndexMut<ThreadId, Output: Queued> + ?Sized),
        thread: ThreadId,
        kind: Waiting,
    ) {
        debug_assert!(self.waiting == Waiting::Nobody || self.waiting == kind);
        let links = threads[thread].queue_links_mut();
        links.previous = self.tail;
        links.next = None;
        match self.tail {
            Some(tail) => threads[tail].queue_links_mut().next = Some(thread),
            None => self.head = Some(thread),
        }
        self.tail = Some(thread);
        self.waiting = kind;
    }

    /// Removes and returns the first waiter.
    pub fn pop_front(
        &mut self,
        threads: &mut (impl IndexMut<ThreadId, Output: Queued> + ?Sized),
    ) -> Option<ThreadId> {
        let head = self.head?;
        self.remove_head(threads, head);
        Some(head)
    }

    /// Removes and returns the first waiter if the queue holds `kind`
    /// waiters.
    #[inline(always)]
    pub fn pop_front_of(
        &mut self,
        threads: &mut (impl IndexMut<ThreadId, Output: Queued> + ?Sized),
        kind: Waiting,
    ) -> Option<ThreadId> {
        if self.waiting != kind {
            return None;
        }
        self.pop_front(threads)
    }

    /// Removes `head`, which the caller read from `head()` (the IPC fast
    /// path): `pop_front` without the general unlink, since the head has
    /// no previous waiter.
    #[inline(always)]
    pub fn remove_head(
        &mut self,
        threads: &mut (impl IndexMut<ThreadId, Output: Queued> + ?Sized),
        head: ThreadId,
    ) {
        debug_assert_eq!(self.head, Some(head));
        let next = core::mem::take(threads[head].queue_links_mut()).next;
        match next {
            Some(next) => threads[next].queue_links_mut().previous = None,
            None => {
                self.tail = None;
                self.waiting = Waiting::Nobody;
            }
        }
        self.head = next;
    }

    /// Removes `thread` from wherever it is in this queue.
    pub fn remove(
        &mut self,
        threads: &mut (impl IndexMut<ThreadId, Output: Queued> + ?Sized),
        thread: ThreadId,
    ) {
        let links = *threads[thread].queue_links();
        match links.previous {
            Some(previous) => threads[previous].queue_links_mut().next = links.next,
            None => self.head = links.next,
        }
        match links.next {
            Some(next) => threads[next].queue_links_mut().previous = links.previous,
            None => self.tail = links.previous,
        }
        *threads[thread].queue_links_mut() = QueueLinks::UNLINKED;
        if self.head.is_none() {
            self.waiting = Waiting::Nobody;
        }
    }

    /// Takes every waiter out, first to last (for a deleted endpoint).
    pub fn drain<T>(&mut self, threads: &mut T, mut each: impl FnMut(&mut T, ThreadId))
    where
        T: IndexMut<ThreadId, Output: Queued> + ?Sized,
    {
        while let Some(thread) = self.pop_front(threads) {
            each(threads, thread);
        }
    }
}

#[cfg(test)]
mod tests;
