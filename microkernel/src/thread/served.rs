//! A thread as a policy server: what a filter's attachment names, and
//! what the thread's loss as a server came to.

use crate::ids::ObjectRef;

/// A filter's policy server, as an attach or a handover named it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterServer {
    /// The endpoint its requests go to.
    pub endpoint: ObjectRef,
    /// The badge of the endpoint capability it was named through.
    pub badge: u64,
    /// The thread that answers them: while it lives, it may; once it
    /// ends, faults or its TCB goes, the binding is cleared and every
    /// request of the filter fails closed.
    pub thread: ObjectRef,
}

/// What a thread's being a policy server came to (`Thread::served`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServedFilters {
    /// An attachment may name it as its server (set when one is made;
    /// cleared when its loss clears them all): a thread that never served
    /// pays nothing when it ends.
    pub named: bool,
    /// Attachments that lost it as their server since it (re)started.
    pub lost: u32,
    /// Requests of theirs then refused.
    pub refused: u32,
}

impl ServedFilters {
    /// Never a server.
    pub const NONE: ServedFilters = ServedFilters {
        named: false,
        lost: 0,
        refused: 0,
    };
}
