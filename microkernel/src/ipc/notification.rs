//! Notifications: asynchronous signals. A notification holds a word;
//! `Signal` ORs the signalling capability's badge into it, `Wait` takes the
//! word (blocking while it is zero), `Poll` takes it without blocking.
//! Each signal that finds a waiter hands that first waiter the whole word.

use super::{Effects, Next};
use crate::endpoint_queue::{EndpointQueue, Waiting};
use crate::ids::ObjectId;
use crate::thread::{ThreadId, Threads};
use abi::ErrorCode;

/// A notification's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Notification {
    /// Signalled bits not yet taken.
    pub word: u64,
    /// Threads blocked in `Wait`, first come first served.
    pub waiters: EndpointQueue,
    /// The thread it is bound to (`TcbBindNotification`): a signal no
    /// waiter takes ends that thread's `Recv`.
    pub bound: Option<ThreadId>,
    /// The first thread whose audit signals it (linked through
    /// `Thread::audit_signal_links`): destroying it turns their audit off.
    pub audit_users: Option<ThreadId>,
}

impl Notification {
    /// A notification with no bits and no waiters.
    pub const EMPTY: Notification = Notification {
        word: 0,
        waiters: EndpointQueue::EMPTY,
        bound: None,
        audit_users: None,
    };
}

/// The bits a capability signals: its badge, or bit 0 if it has none.
pub fn signal_bits(badge: u64, badged: bool) -> u64 {
    if badged && badge != 0 {
        badge
    } else {
        1
    }
}

/// `Signal` with `bits`. The signaller continues; a woken waiter is
/// reported.
pub fn signal(threads: &mut impl Threads, notification: &mut Notification, bits: u64) -> Effects {
    notification.word |= bits;
    match notification.waiters.pop_front(threads) {
        Some(waiter) => {
            deliver(threads, waiter, core::mem::take(&mut notification.word));
            Effects::new(Next::Continue).wake(waiter)
        }
        None => Effects::new(Next::Continue),
    }
}

/// `Wait` (`blocking`) or `Poll` by `thread` on notification `object`.
pub fn wait(
    threads: &mut impl Threads,
    notification: &mut Notification,
    object: ObjectId,
    thread: ThreadId,
    blocking: bool,
) -> Effects {
    if notification.word != 0 || !blocking {
        deliver(threads, thread, core::mem::take(&mut notification.word));
        return Effects::new(Next::Continue);
    }
    threads[thread].block_on_notification(object);
    notification
        .waiters
        .push_back(threads, thread, Waiting::Receivers);
    Effects::new(Next::Blocked)
}

/// `Ok` in x0 and the word in x8.
fn deliver(threads: &mut impl Threads, thread: ThreadId, word: u64) {
    let context = &mut threads[thread].context;
    context.set_result(ErrorCode::Ok);
    context.set_value(word);
}

#[cfg(test)]
mod tests;
