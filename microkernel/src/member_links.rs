//! A thread's place among the threads that use an object (its CSpace
//! CNode's, its VSpace's, its IPC buffer Frame's), and the two list
//! operations that change those places. The links' fields are this
//! module's: the object's keeper (`kernel::members`) finds a list's head
//! and each thread's links through [`MemberList`], and nothing else can
//! write a link. A leaf below the threads, as the run and endpoint queues
//! are (`scheduler::RunLinks`, `endpoint_queue::QueueLinks`).

use crate::ids::ThreadId;

/// A thread's place in one object's list of threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemberLinks {
    previous: Option<ThreadId>,
    next: Option<ThreadId>,
}

impl MemberLinks {
    /// In no list.
    pub const NONE: MemberLinks = MemberLinks {
        previous: None,
        next: None,
    };

    /// The thread listed before this one.
    #[inline(always)]
    pub fn previous(self) -> Option<ThreadId> {
        self.previous
    }

    /// The thread listed after this one.
    #[inline(always)]
    pub fn next(self) -> Option<ThreadId> {
        self.next
    }
}

/// One object's list of threads, as the object's keeper finds it: the
/// head in the object's body, the links in each thread.
pub trait MemberList {
    /// The object's first thread (`None`: the object is not of the
    /// list's type, and has no list).
    fn head(&mut self) -> Option<&mut Option<ThreadId>>;
    /// `thread`'s links in this list.
    fn links(&mut self, thread: ThreadId) -> &mut MemberLinks;
}

/// Adds `thread` (in no list of this kind) at the front of `list`.
pub fn join(list: &mut impl MemberList, thread: ThreadId) {
    let Some(head) = list.head() else {
        return;
    };
    let old = head.replace(thread);
    *list.links(thread) = MemberLinks {
        previous: None,
        next: old,
    };
    if let Some(old) = old {
        list.links(old).previous = Some(thread);
    }
}

/// Takes `thread` out of `list`.
pub fn leave(list: &mut impl MemberList, thread: ThreadId) {
    let links = core::mem::take(list.links(thread));
    match links.previous {
        Some(previous) => list.links(previous).next = links.next,
        None => {
            if let Some(head) = list.head() {
                if *head == Some(thread) {
                    *head = links.next;
                }
            }
        }
    }
    if let Some(next) = links.next {
        list.links(next).previous = links.previous;
    }
}

#[cfg(test)]
mod tests;
