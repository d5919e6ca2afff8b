//! The kernel's consistency checks, run by the fuzzer after every round
//! (and by tests): the capability layer's own checks, plus everything that
//! ties threads, queues and objects together.

use super::Kernel;
use crate::ipc::queue::Waiting;
use crate::thread::{ThreadId, ThreadState, MAX_THREADS};
use entry::WorkFlags;

impl Kernel {
    /// Checks every invariant; the first one broken is named.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        self.caps
            .check_invariants()
            .map_err(|_| "the capability layer's invariants are broken")?;
        for (index, thread) in self.threads.iter().enumerate() {
            let id = ThreadId(index as u16);
            let queued = self.run_queue_contains(id);
            match thread.state {
                ThreadState::Ready if !queued => {
                    return Err("a ready thread is not in the run queue")
                }
                ThreadState::Ready => {}
                _ if queued => return Err("a thread that is not ready is in the run queue"),
                ThreadState::Running if self.current != Some(id) => {
                    return Err("a running thread is not the current one")
                }
                ThreadState::BlockedOnSend { endpoint, .. } => {
                    self.queued_in(id, endpoint, Waiting::Senders, false)?
                }
                ThreadState::BlockedOnReceive { endpoint } => {
                    self.queued_in(id, endpoint, Waiting::Receivers, false)?
                }
                ThreadState::BlockedOnNotification { notification } => {
                    self.queued_in(id, notification, Waiting::Receivers, true)?
                }
                ThreadState::BlockedOnReply | ThreadState::BlockedOnFaultReply => {
                    let owed = self
                        .threads
                        .iter()
                        .filter(|t| t.reply_to == Some(id))
                        .count();
                    // Owed by one server, or through one saved Reply
                    // object (`check_reply_links`), never both.
                    let saved = usize::from(thread.saved_reply.is_some());
                    if owed + saved != 1 {
                        return Err(
                            "a thread waiting for a reply is owed it by no thread, or by several",
                        );
                    }
                }
                _ => {}
            }
            // A stopped syscall waits for its answer where such answers
            // come from, or has it and goes on when its thread runs: a
            // thread with one is never anywhere else (an ordinary IPC
            // wait, a suspension: those cancel it).
            if let Some(call) = &thread.call {
                let waiting_for_answer = match thread.state {
                    ThreadState::BlockedOnSend { fault: true, .. }
                    | ThreadState::BlockedOnFaultReply => {
                        thread.pending_policy.is_some() || thread.pending_trace.is_some()
                    }
                    ThreadState::BlockedOnAudit => true,
                    _ => false,
                };
                let about_to_go_on = call.is_answered()
                    && matches!(thread.state, ThreadState::Ready | ThreadState::Running);
                if !(waiting_for_answer && !call.is_answered()) && !about_to_go_on {
                    return Err(
                        "a stopped syscall is neither waiting for its answer nor about to go on",
                    );
                }
            }
            if let Some(caller) = thread.reply_to {
                let waiting = matches!(
                    self.threads[caller.index()].state,
                    ThreadState::BlockedOnReply | ThreadState::BlockedOnFaultReply
                );
                if !waiting {
                    return Err("a thread owes a reply to a thread that is not waiting for one");
                }
            }
            if let Some(n) = thread.bound_notification {
                if self.notifications[n as usize].bound != Some(id) {
                    return Err("a thread's bound notification is not bound to it");
                }
            }
            let alive = !matches!(thread.state, ThreadState::Free) && !thread.state.has_ended();
            if alive != thread.tcb.is_some() {
                return Err("a live thread has no TCB object, or a dead one still has one");
            }
            // A new thread has an address space (and its VSpace object)
            // once configured.
            let has_space =
                alive && (thread.state != ThreadState::Inactive || thread.space.is_some());
            if has_space != thread.vspace.is_some() {
                return Err("a live thread has no VSpace object, or a dead one still has one");
            }
            if thread.state == ThreadState::Inactive && !thread.created_by_user {
                return Err("a thread the kernel started is inactive");
            }
            // The IPC fast path tests only the cached slots.
            let cached_slots = match thread.cspace {
                Some(cspace) => self
                    .caps
                    .cnode_slots(cspace)
                    .ok()
                    .map(crate::thread::cached_cspace_slots),
                None => Some(crate::thread::NO_CSPACE_SLOTS),
            };
            if cached_slots != Some(thread.cspace_slots) {
                return Err("a thread's cached CSpace slots are not its CNode's");
            }
            if thread.state == ThreadState::Free
                && (thread.space.is_some() || thread.cspace.is_some())
            {
                return Err("a free thread slot still holds an address space or CSpace");
            }
        }
        self.check_endpoint_queue_members()?;
        self.check_spaces()?;
        self.check_frame_mappings()?;
        self.check_reply_links()?;
        if let Some(current) = self.current {
            let thread = &self.threads[current.index()];
            if thread.state != ThreadState::Running {
                return Err("the current thread is not running");
            }
            // The IPC fast path relies on this: a running thread with no
            // pending reschedule is at least as urgent as every ready one.
            if !thread.work.contains(WorkFlags::NEED_RESCHED)
                && self
                    .run_queue
                    .highest_priority()
                    .is_some_and(|ready| ready > thread.priority)
            {
                return Err(
                    "a more urgent thread is ready, but the current one is not asked to yield",
                );
            }
        }
        Ok(())
    }

    /// Between cases: every thread has ended, those made from user space
    /// included (their TCBs came from the case's Untyped, released with
    /// it), so nothing leaks into the next case.
    pub fn check_no_threads_left(&self) -> Result<(), &'static str> {
        if self.threads.iter().any(|t| t.state != ThreadState::Free) {
            return Err("a thread outlived its case");
        }
        Ok(())
    }

    fn run_queue_contains(&self, id: ThreadId) -> bool {
        self.run_queue.contains(id)
    }

    /// The reverse of `queued_in`: every thread an endpoint queue holds is
    /// in the thread table and blocked on that endpoint as the queue's
    /// kind of waiter. The IPC fast path masks a queue head to the table
    /// instead of bounds-checking it, and takes it as a waiting receiver
    /// without looking at its state: this is what makes both sound.
    fn check_endpoint_queue_members(&self) -> Result<(), &'static str> {
        for (index, queue) in self.endpoints.iter().enumerate() {
            let mut cursor = queue.head();
            for _ in 0..MAX_THREADS {
                let Some(thread) = cursor else { break };
                let member = self
                    .threads
                    .get(thread.index())
                    .ok_or("an endpoint queue names a thread outside the table")?;
                let blocked_here = match (member.state, queue.waiting()) {
                    (ThreadState::BlockedOnReceive { endpoint }, Waiting::Receivers)
                    | (ThreadState::BlockedOnSend { endpoint, .. }, Waiting::Senders) => {
                        endpoint as usize == index
                    }
                    _ => false,
                };
                if !blocked_here {
                    return Err("an endpoint queue holds a thread not blocked on it");
                }
                cursor = member.queue_links.next;
            }
        }
        Ok(())
    }

    /// Walks the queue of endpoint (or notification) `index` and checks
    /// `id` is in it exactly once and the queue holds `kind` waiters.
    fn queued_in(
        &self,
        id: ThreadId,
        index: u32,
        kind: Waiting,
        notification: bool,
    ) -> Result<(), &'static str> {
        let queue = if notification {
            &self
                .notifications
                .get(index as usize)
                .ok_or("a wait on a notification index out of range")?
                .waiters
        } else {
            self.endpoints
                .get(index as usize)
                .ok_or("a wait on an endpoint index out of range")?
        };
        if queue.waiting() != kind {
            return Err("a blocked thread's queue holds the other kind of waiter");
        }
        let mut cursor = queue.head();
        let mut seen = 0;
        for _ in 0..MAX_THREADS {
            let Some(thread) = cursor else { break };
            if thread == id {
                seen += 1;
            }
            cursor = self.threads[thread.index()].queue_links.next;
        }
        match (seen, cursor) {
            (1, None) => Ok(()),
            (_, Some(_)) => Err("an endpoint queue is longer than the thread table (a cycle)"),
            _ => Err("a blocked thread is missing from its queue"),
        }
    }
}
