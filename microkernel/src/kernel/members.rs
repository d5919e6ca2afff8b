//! The threads that use an object: its CSpace CNode's, its VSpace's, its
//! IPC buffer Frame's, its audit ring Frame's and its audit notification's.
//!
//! Each such object keeps the first of its threads in its body, and the
//! threads link to each other through a pair of links of their own (seL4
//! keeps the same kind of list for a notification's bound thread). So
//! destroying the object finds exactly its threads, however many threads
//! the system has, and a thread joins or leaves in O(1).

use crate::cap::{CNodeId, ObjectId, Objects};
use crate::member_links::{self, MemberLinks, MemberList};
use crate::thread::{Thread, ThreadId};
use arch::object_memory::kind;

/// Which use of an object a list is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::kernel) enum Use {
    /// The CNode is the thread's CSpace.
    CSpace,
    /// The VSpace is the thread's address space.
    Space,
    /// The Frame is the thread's IPC buffer.
    Buffer,
    /// The Frame holds the ring of the thread's audit.
    AuditRing,
    /// The Notification is the one the thread's audit signals.
    AuditSignal,
}

impl Use {
    /// The thread's links for this use.
    fn links(self, thread: &mut Thread) -> &mut MemberLinks {
        match self {
            Use::CSpace => &mut thread.cspace_links,
            Use::Space => &mut thread.space_links,
            Use::Buffer => &mut thread.buffer_links,
            Use::AuditRing => &mut thread.audit_ring_links,
            Use::AuditSignal => &mut thread.audit_signal_links,
        }
    }

    /// The thread's links for this use, to read.
    fn links_of(self, thread: &Thread) -> MemberLinks {
        match self {
            Use::CSpace => thread.cspace_links,
            Use::Space => thread.space_links,
            Use::Buffer => thread.buffer_links,
            Use::AuditRing => thread.audit_ring_links,
            Use::AuditSignal => thread.audit_signal_links,
        }
    }

    /// The object's first thread, to read.
    fn head_of(self, objects: &Objects, object: ObjectId) -> Option<ThreadId> {
        match self {
            Use::CSpace => objects.get::<kind::CNode>(object)?.users,
            Use::Space => objects.get::<kind::VSpace>(object)?.users,
            Use::Buffer => objects.get::<kind::Frame>(object)?.buffer_users,
            Use::AuditRing => objects.get::<kind::Frame>(object)?.audit_users,
            Use::AuditSignal => objects.get::<kind::Notification>(object)?.audit_users,
        }
    }

    /// The object's first thread, if the object is of this use's type.
    fn head(self, objects: &mut Objects, object: ObjectId) -> Option<&mut Option<ThreadId>> {
        match self {
            Use::CSpace => objects.get_mut::<kind::CNode>(object).map(|c| &mut c.users),
            Use::Space => objects
                .get_mut::<kind::VSpace>(object)
                .map(|v| &mut v.users),
            Use::Buffer => objects
                .get_mut::<kind::Frame>(object)
                .map(|f| &mut f.buffer_users),
            Use::AuditRing => objects
                .get_mut::<kind::Frame>(object)
                .map(|f| &mut f.audit_users),
            Use::AuditSignal => objects
                .get_mut::<kind::Notification>(object)
                .map(|n| &mut n.audit_users),
        }
    }
}

/// One object's list of threads of one use, for `member_links`.
struct ObjectMembers<'a> {
    objects: &'a mut Objects,
    object: ObjectId,
    what: Use,
}

impl MemberList for ObjectMembers<'_> {
    fn head(&mut self) -> Option<&mut Option<ThreadId>> {
        self.what.head(self.objects, self.object)
    }

    fn links(&mut self, thread: ThreadId) -> &mut MemberLinks {
        self.what.links(&mut self.objects[thread])
    }
}

/// Adds `thread` (in no list of this use) to `object`'s threads.
pub(in crate::kernel) fn join(
    objects: &mut Objects,
    object: ObjectId,
    thread: ThreadId,
    what: Use,
) {
    // (An object of another type has no list: the thread would be on
    // none, and destroying the object would not find it.)
    debug_assert!(
        what.head(objects, object).is_some(),
        "a thread joins the list of an object of another type"
    );
    member_links::join(
        &mut ObjectMembers {
            objects,
            object,
            what,
        },
        thread,
    );
}

/// Takes `thread` out of `object`'s threads.
pub(in crate::kernel) fn leave(
    objects: &mut Objects,
    object: ObjectId,
    thread: ThreadId,
    what: Use,
) {
    member_links::leave(
        &mut ObjectMembers {
            objects,
            object,
            what,
        },
        thread,
    );
}

/// The first of `object`'s threads.
pub(in crate::kernel) fn first(objects: &Objects, object: ObjectId, what: Use) -> Option<ThreadId> {
    what.head_of(objects, object)
}

/// The thread after `thread` among its object's threads.
pub(in crate::kernel) fn next(objects: &Objects, thread: ThreadId, what: Use) -> Option<ThreadId> {
    objects.thread(thread).and_then(|t| what.links_of(t).next())
}

/// Is `thread` among `object`'s threads, its links answered both ways?
/// (For the invariant checks: walks the list, at most as many steps as
/// there are objects.)
pub(in crate::kernel) fn contains(
    objects: &Objects,
    object: ObjectId,
    thread: ThreadId,
    what: Use,
) -> bool {
    let mut previous = None;
    let mut next = first(objects, object, what);
    for _ in 0..=objects.count() {
        let Some(current) = next else {
            return false;
        };
        let Some(t) = objects.thread(current) else {
            return false;
        };
        let links = what.links_of(t);
        if links.previous() != previous {
            return false;
        }
        if current == thread {
            return true;
        }
        previous = Some(current);
        next = links.next();
    }
    false
}

impl crate::kernel::Kernel {
    /// Every thread (the body of every TCB object), newest first.
    pub(in crate::kernel) fn all_threads(&self) -> impl Iterator<Item = ThreadId> + '_ {
        self.objects
            .iter()
            .map(ThreadId::of)
            .filter(|t| self.objects.thread(*t).is_some())
    }

    /// Makes CNode `cnode` `thread`'s CSpace (leaving the one it had).
    pub(in crate::kernel) fn set_cspace(
        &mut self,
        thread: ThreadId,
        cnode: CNodeId,
    ) -> Result<(), crate::cap::CapError> {
        let slots = self
            .objects
            .cnode_slots(cnode)
            .map(crate::thread::cached_cspace_slots)?;
        self.leave_cspace(thread);
        let t = &mut self.objects[thread];
        t.cspace = Some(cnode);
        t.cspace_slots = slots;
        join(&mut self.objects, cnode.object(), thread, Use::CSpace);
        Ok(())
    }

    /// `thread` has no CSpace any more.
    pub(in crate::kernel) fn leave_cspace(&mut self, thread: ThreadId) {
        let t = &mut self.objects[thread];
        t.cspace_slots = crate::thread::NO_CSPACE_SLOTS;
        if let Some(cnode) = t.cspace.take() {
            leave(&mut self.objects, cnode.object(), thread, Use::CSpace);
        }
    }

    /// Makes Frame `frame` (its page at `phys`) `thread`'s IPC buffer
    /// (leaving any Frame it had).
    pub(in crate::kernel) fn set_buffer_frame(
        &mut self,
        thread: ThreadId,
        frame: ObjectId,
        phys: u64,
    ) {
        self.leave_buffer(thread);
        let t = &mut self.objects[thread];
        t.ipc_buffer_frame = Some(frame);
        t.ipc_buffer = Some(phys);
        join(&mut self.objects, frame, thread, Use::Buffer);
    }

    /// `thread` no longer has a Frame as its IPC buffer.
    pub(in crate::kernel) fn leave_buffer(&mut self, thread: ThreadId) {
        if let Some(frame) = self.objects[thread].ipc_buffer_frame.take() {
            self.objects[thread].ipc_buffer = None;
            leave(&mut self.objects, frame, thread, Use::Buffer);
        }
    }
}
