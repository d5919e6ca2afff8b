//! The kernel's consistency checks, run by the fuzzer after every round
//! (and by tests): the capability layer's own checks, plus everything that
//! ties threads, queues and objects together.

use crate::cap::{FilterUser, ObjectId, ObjectState};
use crate::endpoint_queue::{EndpointQueue, Queued, Waiting};
use crate::kernel::members::{self, Use};
use crate::kernel::Kernel;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::CapType;
use arch::layout::MAX_CPUS;
use arch::object_memory::kind;
use entry::WorkFlags;

impl Kernel {
    /// Checks every invariant; the first one broken is named.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        self.objects
            .check_invariants()
            .map_err(|_| "the capability layer's invariants are broken")?;
        for id in self.all_threads() {
            let thread = &self.objects[id];
            let queued = self.run_queue_contains(self.home_of(id), id);
            let running_on = (0..MAX_CPUS)
                .filter(|&cpu| self.current_on(cpu) == Some(id))
                .count();
            // The IPC fast path's partners: their SPSR goes to the eret
            // as it is (`ipc_fast_path.s`, `return_to_partner`). Those
            // waiting for the answer to a trace exit stop are its
            // partners too (`answer_trace_exit_or_refuse`), which also
            // takes it that such a thread has no exit work left to run
            // (`trace_before_user` ran it before it sent the stop).
            let exit_stopped = thread.state() == ThreadState::BlockedOnAnswer
                && thread
                    .trace_stop()
                    .is_some_and(|stop| stop.kind == abi::trace::StopKind::Exit);
            let fast_partner = exit_stopped
                || matches!(
                    thread.state(),
                    ThreadState::BlockedOnReceive { .. } | ThreadState::BlockedOnReply
                );
            if fast_partner && !thread.context.returns_to_el0t() {
                return Err("a thread waiting in IPC has an SPSR that does not return to EL0t");
            }
            if exit_stopped && thread.trace.exit_deferred.is_some() {
                return Err("a thread waits at its exit stop with exit work still deferred");
            }
            // The fast paths take a current generation for a space.
            if thread.ttbr0 == 0 && thread.asid_generation != 0 {
                return Err("a thread without an address space has an ASID generation");
            }
            match thread.state() {
                ThreadState::Ready if !queued => {
                    return Err("a ready thread is not in the run queue")
                }
                ThreadState::Ready => {}
                _ if queued => return Err("a thread that is not ready is in the run queue"),
                ThreadState::Running if running_on == 0 => {
                    return Err("a running thread is the current thread of no CPU")
                }
                ThreadState::BlockedOnSend { endpoint, .. }
                | ThreadState::EndPending { endpoint, .. } => {
                    self.queued_in(id, endpoint, Waiting::Senders, false)?
                }
                ThreadState::BlockedOnReceive { endpoint } => {
                    self.queued_in(id, endpoint, Waiting::Receivers, false)?
                }
                ThreadState::BlockedOnNotification { notification } => {
                    self.queued_in(id, notification, Waiting::Receivers, true)?
                }
                ThreadState::BlockedOnReply | ThreadState::BlockedOnAnswer => {
                    let owed = thread
                        .reply_from
                        .and_then(|server| self.objects.thread(server))
                        .is_some_and(|server| server.reply_to == Some(id));
                    if thread.reply_from.is_some() && !owed {
                        return Err(
                            "a thread waits for a reply from a thread that does not owe it",
                        );
                    }
                    // Owed by one server, or through one saved Reply
                    // object (`check_reply_links`), never both.
                    let saved = thread.saved_reply.is_some();
                    if owed == saved {
                        return Err(
                            "a thread waiting for a reply is owed it by no thread, or twice",
                        );
                    }
                }
                ThreadState::BlockedOnAudit if !self.in_queue(&self.audit_waiters, id) => {
                    return Err("a thread waiting for audit room is not on the kernel's list");
                }
                _ => {}
            }
            // The judged copy of a call's memory lives as long as the
            // call (`crate::judged_memory`): only a thread whose call is
            // kept (stopped) or queued to send its message has one (the
            // fuzzer's round ends in a syscall of the checking thread,
            // which its copy, if any, is not for: it is skipped).
            let in_flight = thread.call.is_some()
                || matches!(thread.state(), ThreadState::BlockedOnSend { .. });
            if thread.judged.is_taken() && !in_flight && self.current != Some(id) {
                return Err("a thread whose call is over still has a judged copy of its memory");
            }
            // A kernel message lives while its thread sends it or waits
            // for its answer, and no longer: whoever answers it (the IPC
            // fast path too, for a trace exit stop) or gives up on it
            // takes it. One that outlived its wait would be taken for a
            // stop, request or fault the thread no longer has.
            let sending_or_asking = matches!(
                thread.state(),
                ThreadState::BlockedOnSend {
                    kernel_message: true,
                    ..
                } | ThreadState::BlockedOnAnswer
            );
            if thread.kernel_message().is_some() != sending_or_asking {
                return Err("a kernel message outlives its wait, or a thread waits without one");
            }
            // A policy request is built from the call it asks about
            // (`ipc::deliver_policy_request`): a thread that asks keeps
            // it (a cancelled call takes its request with it).
            if thread.policy_request().is_some() && !thread.call.is_some() {
                return Err("a thread asks its policy server about a call it no longer has");
            }
            // A stopped syscall waits for its answer where such answers
            // come from, or has it and goes on when its thread runs: a
            // thread with one is never anywhere else (an ordinary IPC
            // wait, a suspension: those cancel it).
            if let Some(call) = thread.call.as_ref() {
                let waiting_for_answer = match thread.state() {
                    ThreadState::BlockedOnSend {
                        kernel_message: true,
                        ..
                    }
                    | ThreadState::BlockedOnAnswer => {
                        thread.policy_request().is_some() || thread.trace_stop().is_some()
                    }
                    ThreadState::BlockedOnAudit => true,
                    _ => false,
                };
                let about_to_go_on = call.is_answered()
                    && matches!(thread.state(), ThreadState::Ready | ThreadState::Running);
                let waiting = waiting_for_answer && !call.is_answered();
                if !waiting && !about_to_go_on {
                    return Err(
                        "a stopped syscall is neither waiting for its answer nor about to go on",
                    );
                }
            }
            if let Some(caller) = thread.reply_to {
                let waiting = self.objects.thread(caller).is_some_and(|c| {
                    matches!(
                        c.state(),
                        ThreadState::BlockedOnReply | ThreadState::BlockedOnAnswer
                    ) && c.reply_from == Some(id)
                });
                if !waiting {
                    return Err("a thread owes a reply to a thread that is not waiting for it");
                }
            }
            if let Some(n) = thread.bound_notification {
                let bound = self
                    .objects
                    .get::<kind::Notification>(n)
                    .and_then(|n| n.bound);
                if bound != Some(id) {
                    return Err("a thread's bound notification is not bound to it");
                }
            }
            let alive = !matches!(thread.state(), ThreadState::Free) && !thread.state().has_ended();
            // A new thread has an address space once `TcbSetSpace` gave it
            // one; an ended one kept for its supervisor keeps its own, or has
            // none once it was destroyed.
            let kept = thread.state().is_kept_end();
            let has_space =
                alive && (thread.state() != ThreadState::Inactive || thread.space.is_some());
            if !kept && has_space != thread.space.is_some() {
                return Err("a live thread has no address space, or a dead one still has one");
            }
            if kept != thread.end.is_some() {
                return Err("an ended thread does not say how it ended, or a live one does");
            }
            if kept
                && (!thread.created_by_user
                    || thread.call.is_some()
                    || thread.reply_to.is_some()
                    || thread.reply_from.is_some())
            {
                return Err("an ended thread is one the kernel made, or still in a call");
            }
            if let Some(cnode) = thread.cspace {
                if !members::contains(&self.objects, cnode.object(), id, Use::CSpace) {
                    return Err("a thread is not on its CSpace CNode's list");
                }
            }
            if let Some(frame) = thread.ipc_buffer_frame {
                if !members::contains(&self.objects, frame, id, Use::Buffer) {
                    return Err("a thread is not on its IPC buffer Frame's list");
                }
            }
            if let Some(sink) = thread.audit {
                let (signal, _) = sink.notification;
                if self.objects.resolve(sink.frame, CapType::Frame).is_none()
                    || self
                        .objects
                        .resolve(signal, CapType::Notification)
                        .is_none()
                {
                    return Err("a thread's audit writes into a ring or signals a notification that is gone");
                }
                if !members::contains(&self.objects, sink.frame.id, id, Use::AuditRing)
                    || !members::contains(&self.objects, signal.id, id, Use::AuditSignal)
                {
                    return Err("a thread is not on its audit ring's or notification's list");
                }
            }
            // (Read by the vector only for a thread with syscall work: a
            // thread without has them as its last change left them.)
            if thread.work.intersects(WorkFlags::SYSCALL_WORK) && !thread.entry_masks_are_current()
            {
                return Err("a thread's no-entry-work, refused or judged masks are stale");
            }
            for (position, attached) in thread.filters.iter().enumerate() {
                let user = FilterUser {
                    thread: id,
                    position: position as u8,
                };
                if !self.filter_lists(attached.filter, user) {
                    return Err("an attached filter does not list its thread");
                }
            }
            if thread.state() == ThreadState::Inactive && !thread.created_by_user {
                return Err("a thread the kernel started is inactive");
            }
            // An rseq event is only ever raised on, and a time-slice
            // extension only granted to, a thread with an area.
            if thread.rseq.is_none()
                && (thread.work.contains(WorkFlags::RSEQ)
                    || thread.slice != crate::thread::SliceExtension::Unused)
            {
                return Err("a thread without an rseq area has rseq work or an extension");
            }
            // The user-dispatch fast path reads the configuration of a
            // thread with the work bit without looking at the option.
            if thread.work.contains(WorkFlags::USER_DISPATCH) != thread.user_dispatch.is_some() {
                return Err("a thread's user-dispatch work and its configuration disagree");
            }
            // The policy fast path walks the compiled verdicts of a number
            // in the mask with no bound of its own: only compiled numbers,
            // and links that only go forward.
            if thread.register_judged & !thread.register_program.compiled_mask() != 0
                || !thread.register_program.links_go_forward()
            {
                return Err("a thread's register-judged syscalls are not its compiled ones");
            }
            // The IPC fast path tests only the cached slots.
            let cached_slots = match thread.cspace {
                Some(cspace) => self
                    .objects
                    .cnode_slots(cspace)
                    .ok()
                    .map(crate::thread::cached_cspace_slots),
                None => Some(crate::thread::NO_CSPACE_SLOTS),
            };
            if cached_slots != Some(thread.cspace_slots) {
                return Err("a thread's cached CSpace slots are not its CNode's");
            }
            if thread.state() == ThreadState::Free
                && (thread.space.is_some() || thread.cspace.is_some())
            {
                return Err("a free thread slot still holds an address space or CSpace");
            }
        }
        self.check_endpoint_queue_members()?;
        self.check_filter_lists()?;
        self.check_spaces()?;
        self.check_frame_mappings()?;
        self.check_reply_links()?;
        self.check_server_bindings()?;
        self.check_cores()?;
        // The CPU checking: its own thread. (Another CPU's is checked
        // when that CPU checks: the reschedule it is owed may be in
        // flight, an interrupt this one sent.)
        if let Some(current) = self.current {
            let thread = &self.objects[current];
            if thread.state() != ThreadState::Running {
                return Err("the current thread is not running");
            }
            // The IPC fast path relies on this: a running thread with no
            // pending reschedule is at least as urgent as every ready one.
            if !thread.work.contains(WorkFlags::NEED_RESCHED)
                && self.run_queues[self.cpu % MAX_CPUS]
                    .ready
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

    /// What ties threads to CPUs (`cores.rs`): each thread's affinity
    /// names a CPU that runs, its fast-path key matches, it waits in no
    /// other CPU's queue and is no two CPUs' current thread; every CPU's
    /// current thread is running; FP/SIMD registers are live on one CPU
    /// at most.
    pub(in crate::kernel) fn check_cores(&self) -> Result<(), &'static str> {
        for id in self.all_threads() {
            let thread = &self.objects[id];
            if !thread.key_is_consistent() {
                return Err("a thread's fast-path key does not match its priority and affinity");
            }
            let home = usize::from(thread.affinity);
            if home >= MAX_CPUS || !self.is_online(home as u64) {
                return Err("a thread has affinity with a CPU the kernel does not run on");
            }
            if (0..MAX_CPUS).any(|cpu| cpu != home && self.run_queue_contains(cpu, id)) {
                return Err("a thread is in the run queue of a CPU it has no affinity with");
            }
            let running_on = (0..MAX_CPUS)
                .filter(|&cpu| self.current_on(cpu) == Some(id))
                .count();
            if running_on > 1 {
                return Err("a thread is the current thread of two CPUs");
            }
        }
        for cpu in 0..MAX_CPUS {
            if let Some(other) = self.current_on(cpu) {
                if self.objects[other].state() != ThreadState::Running {
                    return Err("the current thread of a CPU is not running");
                }
            }
        }
        let mut fp_owners = [None; MAX_CPUS];
        for (cpu, owner) in fp_owners.iter_mut().enumerate() {
            *owner = self.fp_owner_on(cpu);
        }
        for (cpu, owner) in fp_owners.iter().enumerate() {
            if owner.is_some() && fp_owners[cpu + 1..].contains(owner) {
                return Err("a thread's FP/SIMD registers are live on two CPUs");
            }
        }
        Ok(())
    }

    fn run_queue_contains(&self, cpu: usize, id: ThreadId) -> bool {
        let priority = self.objects[id].priority;
        self.run_queues[cpu % MAX_CPUS]
            .ready
            .queued_at(&self.objects, priority)
            .take(self.objects.count())
            .any(|t| t == id)
    }

    /// Is `id` in `queue` (walked at most as many steps as objects exist)?
    fn in_queue(&self, queue: &EndpointQueue, id: ThreadId) -> bool {
        let mut cursor = queue.head();
        for _ in 0..=self.objects.count() {
            let Some(thread) = cursor else { return false };
            if thread == id {
                return true;
            }
            cursor = self
                .objects
                .thread(thread)
                .and_then(|t| t.queue_links().next());
        }
        false
    }

    /// Does Filter `filter` (a live one) list `user` among its threads?
    fn filter_lists(&self, filter: ObjectId, user: FilterUser) -> bool {
        // Live, or pinned: destroyed while attached, its rules in force
        // until the last thread it confines has ended.
        let in_force = |h: &crate::cap::ObjectHeader| h.live() || h.state == ObjectState::Pinned;
        if !self.objects.object(filter).is_some_and(in_force) {
            return false;
        }
        let mut cursor = self
            .objects
            .get::<kind::Filter>(filter)
            .and_then(|f| f.attached);
        for _ in 0..=self.objects.count() {
            let Some(at) = cursor else { return false };
            if at == user {
                return true;
            }
            cursor = self
                .objects
                .thread(at.thread)
                .and_then(|t| t.filters.get(usize::from(at.position)))
                .and_then(|a| a.next);
        }
        false
    }

    /// The reverse of `queued_in`: every thread an endpoint queue holds is
    /// a thread blocked on that endpoint as the queue's kind of waiter. The
    /// IPC fast path takes a queue head as a waiting receiver without
    /// looking at its state: this is what makes that sound.
    fn check_endpoint_queue_members(&self) -> Result<(), &'static str> {
        for index in self.objects.iter() {
            let Some(queue) = self.objects.get::<kind::Endpoint>(index) else {
                continue;
            };
            let mut cursor = queue.head();
            for _ in 0..=self.objects.count() {
                let Some(thread) = cursor else { break };
                let member = self
                    .objects
                    .thread(thread)
                    .ok_or("an endpoint queue names something that is no thread")?;
                let blocked_here = match (member.state(), queue.waiting()) {
                    (ThreadState::BlockedOnReceive { endpoint }, Waiting::Receivers)
                    | (ThreadState::BlockedOnSend { endpoint, .. }, Waiting::Senders)
                    | (ThreadState::EndPending { endpoint, .. }, Waiting::Senders) => {
                        endpoint == index
                    }
                    _ => false,
                };
                if !blocked_here {
                    return Err("an endpoint queue holds a thread not blocked on it");
                }
                cursor = member.queue_links().next();
            }
        }
        Ok(())
    }

    /// Every Filter's list of threads names only entries of live threads'
    /// stacks that are attachments of that filter, linked both ways; a
    /// pinned filter (no capability left) has some.
    fn check_filter_lists(&self) -> Result<(), &'static str> {
        for filter in self.objects.iter() {
            let Some(body) = self.objects.get::<kind::Filter>(filter) else {
                continue;
            };
            let pinned = self
                .objects
                .object(filter)
                .is_some_and(|h| h.state == crate::cap::ObjectState::Pinned);
            if pinned && body.attached.is_none() {
                return Err("a pinned filter confines no thread");
            }
            let mut previous = None;
            let mut cursor = body.attached;
            for _ in 0..=self.objects.count() * crate::thread::MAX_STACKED_FILTERS {
                let Some(user) = cursor else { break };
                let entry = self
                    .objects
                    .thread(user.thread)
                    .and_then(|t| t.filters.get(usize::from(user.position)))
                    .ok_or("a filter lists an attachment that does not exist")?;
                if entry.filter != filter || entry.previous != previous {
                    return Err("a filter's list of threads is broken");
                }
                previous = Some(user);
                cursor = entry.next;
            }
            if cursor.is_some() {
                return Err("a filter's list of threads loops");
            }
        }
        Ok(())
    }

    /// Walks the queue of endpoint (or notification) `object` and checks
    /// `id` is in it exactly once and the queue holds `kind` waiters.
    fn queued_in(
        &self,
        id: ThreadId,
        object: ObjectId,
        kind: Waiting,
        notification: bool,
    ) -> Result<(), &'static str> {
        let queue = if notification {
            self.objects
                .get::<kind::Notification>(object)
                .ok_or("a wait on something that is no notification")?
                .waiters
        } else {
            *self
                .objects
                .get::<kind::Endpoint>(object)
                .ok_or("a wait on something that is no endpoint")?
        };
        if queue.waiting() != kind {
            return Err("a blocked thread's queue holds the other kind of waiter");
        }
        let mut cursor = queue.head();
        let mut seen = 0;
        for _ in 0..=self.objects.count() {
            let Some(thread) = cursor else { break };
            if thread == id {
                seen += 1;
            }
            cursor = self
                .objects
                .thread(thread)
                .and_then(|t| t.queue_links().next());
        }
        match (seen, cursor) {
            (1, None) => Ok(()),
            (_, Some(_)) => Err("an endpoint queue is longer than there are objects (a cycle)"),
            _ => Err("a blocked thread is missing from its queue"),
        }
    }
}
