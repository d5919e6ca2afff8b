//! A filter's policy server is a thread, not only an endpoint: each
//! attachment names the endpoint its `Notify` requests go to and the
//! thread that answers them (`FilterServer`). While that thread lives the
//! attachment is served; when it ends, faults or its TCB goes, the
//! attachment loses it at once (`lose_policy_server`): every request of
//! that attachment still waiting (queued on the endpoint, delivered and
//! owed, or saved in a Reply object) is refused with `Denied`, and every
//! later `Notify` of it is `Denied` at once, until the filter's maker hands
//! it to another server (`FilterSetServer`, `filter_set_server`).
//!
//! The kernel has no thread table: the attachments that name a server are
//! found by walking every object, but only for a thread that was ever
//! named (`ServedFilters::named`): a thread that served no filter pays
//! nothing when it ends.

use crate::cap::{FilterUser, ObjectRef, OtherObjects};
use crate::ipc;
use crate::kernel::Kernel;
use crate::platform::{Console, Platform};
use crate::thread::{AttachedFilter, FilterServer, Thread, ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::object_memory::kind;
use core::fmt::Write;

/// Can `thread` answer requests: it exists and has not ended (a new,
/// suspended or waiting thread can, once it runs).
pub(in crate::kernel) fn can_serve(thread: &Thread) -> bool {
    let state = thread.state();
    state != ThreadState::Free && !state.has_ended()
}

/// Does an attachment's server serve, as a verdict sees it (`PolicyCheck`,
/// which holds the asking thread for changing and every other object for
/// reading): its endpoint lives. Its thread is not looked at here: its
/// loss clears the binding at once (`lose_policy_server`, an invariant
/// the checks hold the kernel to); a look per filter on each judged
/// `Notify` cost the forwarded round trip tens of instructions.
pub(in crate::kernel) fn serves_in(others: &OtherObjects<'_>, server: &FilterServer) -> bool {
    others.resolves(server.endpoint, CapType::Endpoint)
}

impl Kernel {
    /// The thread a server's TCB reference names, if it still exists.
    fn server_thread(&self, reference: ObjectRef) -> Option<ThreadId> {
        self.objects
            .resolve(reference, CapType::Tcb)
            .map(ThreadId::of)
    }

    /// The endpoint and badge an attachment's `Notify` asks, while it has
    /// a server and that server's endpoint lives. The server thread is
    /// not looked at: its loss cleared the binding at once
    /// (`lose_policy_server`; `check_server_bindings` holds the kernel to
    /// it), and looking it up again on every request cost the forwarded
    /// round trip about 40 instructions.
    pub(in crate::kernel) fn live_server(
        &self,
        attached: &AttachedFilter,
    ) -> Option<(crate::cap::ObjectId, u64)> {
        let server = attached.server?;
        let endpoint = self.objects.resolve(server.endpoint, CapType::Endpoint)?;
        Some((endpoint, server.badge))
    }

    /// Has an attachment a server that serves: its endpoint lives, and its
    /// thread exists and has not ended (the whole check, for a handover).
    fn is_served(&self, attached: &AttachedFilter) -> bool {
        attached.server.is_some_and(|server| {
            self.objects
                .resolve(server.endpoint, CapType::Endpoint)
                .is_some()
                && self
                    .server_thread(server.thread)
                    .is_some_and(|thread| can_serve(&self.objects[thread]))
        })
    }

    /// The server `current` names through its endpoint capability at
    /// `endpoint` (write right) and the TCB capability at `thread` (read
    /// right), and that thread. Capability errors only: whether the
    /// thread may serve is the caller's check.
    pub(in crate::kernel) fn named_server(
        &self,
        current: ThreadId,
        endpoint: u64,
        thread: u64,
    ) -> Result<(FilterServer, ThreadId), ErrorCode> {
        let endpoint = self.thread_cap(current, endpoint, CapType::Endpoint, Rights::WRITE)?;
        let tcb = self.thread_cap(current, thread, CapType::Tcb, Rights::READ)?;
        let invalid = ErrorCode::InvalidCapability;
        let server = FilterServer {
            endpoint: self.objects.reference(endpoint.object()).ok_or(invalid)?,
            badge: endpoint.badge(),
            thread: self.objects.reference(tcb.object()).ok_or(invalid)?,
        };
        let thread = self.tcb_thread(tcb.object()).ok_or(invalid)?;
        Ok((server, thread))
    }

    /// `thread` is named as a server: its end will have to look for the
    /// attachments naming it.
    pub(in crate::kernel) fn mark_server(&mut self, server: &FilterServer) {
        if let Some(thread) = self.server_thread(server.thread) {
            self.objects[thread].served.named = true;
        }
    }

    /// `FilterSetServer`: the filter at `filter` (write right: its
    /// maker's) is handed to the server named by `endpoint` and `thread`.
    /// Every attachment of the filter without a live server (its thread
    /// gone, its endpoint destroyed, or none named) gets this one; an
    /// attachment whose server lives keeps it. Returns how many were
    /// handed over. After the capabilities: `InvalidArgument` for a
    /// thread that cannot serve (ended) or that the filter confines
    /// (it would judge its own calls).
    #[inline(never)]
    pub(in crate::kernel) fn filter_set_server(
        &mut self,
        current: ThreadId,
        filter: u64,
        endpoint: u64,
        thread: u64,
    ) -> Result<u64, ErrorCode> {
        let filter = self.thread_cap(current, filter, CapType::Filter, Rights::WRITE)?;
        let (server, server_thread) = self.named_server(current, endpoint, thread)?;
        if !can_serve(&self.objects[server_thread]) {
            return Err(ErrorCode::InvalidArgument);
        }
        let head = self
            .objects
            .get::<kind::Filter>(filter.object())
            .ok_or(ErrorCode::InvalidCapability)?
            .attached;
        if self
            .attachments(head)
            .any(|(user, _)| user.thread == server_thread)
        {
            return Err(ErrorCode::InvalidArgument);
        }
        let mut handed = 0u64;
        let mut cursor = head;
        // Bounded as every list walk: a broken list never hangs the kernel.
        for _ in 0..=self.objects.count() * crate::thread::MAX_STACKED_FILTERS {
            let Some(user) = cursor else { break };
            let Some(attached) = self.attached(user) else {
                break;
            };
            cursor = attached.next;
            if self.is_served(&attached) {
                continue;
            }
            if let Some(entry) = self.objects[user.thread]
                .filters
                .get_mut(usize::from(user.position))
            {
                entry.server = Some(server);
                handed += 1;
            }
        }
        if handed > 0 {
            self.mark_server(&server);
        }
        Ok(handed)
    }

    /// The attachment `user` names.
    fn attached(&self, user: FilterUser) -> Option<AttachedFilter> {
        self.objects
            .thread(user.thread)?
            .filters
            .get(usize::from(user.position))
            .copied()
    }

    /// A filter's attachments from `head` on, each with its entry.
    fn attachments(
        &self,
        head: Option<FilterUser>,
    ) -> impl Iterator<Item = (FilterUser, AttachedFilter)> + '_ {
        let mut cursor = head;
        let mut steps = self.objects.count() * crate::thread::MAX_STACKED_FILTERS + 1;
        core::iter::from_fn(move || {
            steps = steps.checked_sub(1)?;
            let user = cursor?;
            let attached = self.attached(user)?;
            cursor = attached.next;
            Some((user, attached))
        })
    }

    /// Thread `server` can answer no more (it ends or faults, `how`; its
    /// TCB may be going): every attachment naming it loses it, and each of
    /// their requests still waiting is refused with `Denied` at once
    /// (queued on the endpoint, delivered and owed, or saved in a Reply
    /// object). The console says so, and its end or fault message will
    /// (`ServedFilters`). Nothing for a thread never named as a server.
    pub(in crate::kernel) fn lose_policy_server<P: Platform>(
        &mut self,
        platform: &mut P,
        server: ThreadId,
        how: &str,
    ) {
        if !self.objects[server].served.named {
            return;
        }
        self.objects[server].served.named = false;
        // `live`: attachments of threads that can still run, whose loss
        // is worth a line (an ended thread's matters only if it restarts).
        let (mut lost, mut live, mut refused) = (0u32, 0u32, 0u32);
        let mut cursor = None;
        while let Some(object) = self.objects.next_after(cursor) {
            cursor = Some(object);
            let thread = crate::thread::ThreadId::of(object);
            let Some(t) = self.objects.thread_mut(thread) else {
                continue;
            };
            let asking = t.policy_request().map(|r| usize::from(r.filter));
            let runs = can_serve(t);
            let mut its_request_lost = false;
            for (position, attached) in t.filters.iter_mut().enumerate() {
                // By place alone: the TCB may be going, and a reference to
                // an older TCB there was cleared when that one went.
                if attached
                    .server
                    .is_some_and(|s| s.thread.id == server.object())
                {
                    attached.server = None;
                    lost += 1;
                    live += u32::from(runs);
                    its_request_lost |= asking == Some(position);
                }
            }
            let waiting = matches!(
                t.state(),
                ThreadState::BlockedOnSend {
                    kernel_message: true,
                    ..
                } | ThreadState::BlockedOnAnswer
            );
            if its_request_lost && waiting && thread != server {
                self.cancel_wait(thread);
                ipc::fail_policy_request(&mut self.objects, thread);
                self.make_ready(thread);
                refused += 1;
            }
        }
        let served = &mut self.objects[server].served;
        served.lost = served.lost.saturating_add(lost);
        served.refused = served.refused.saturating_add(refused);
        if live > 0 {
            self.end_user_lines(platform);
            let thread = &self.objects[server];
            let _ = writeln!(
                Console(platform),
                "[kernel] policy server {}#{} {how}: {refused} waiting request{} refused; {live} filter attachment{} without a server until a handover",
                thread.name,
                thread.number,
                if refused == 1 { "" } else { "s" },
                if live == 1 { "" } else { "s" },
            );
        }
    }

    /// Every attachment's server thread, while it exists, can serve and
    /// knows it was named (its end looks for the attachments naming it).
    pub(in crate::kernel) fn check_server_bindings(&self) -> Result<(), &'static str> {
        for id in self.all_threads() {
            for attached in &self.objects[id].filters {
                let Some(server) = attached.server else {
                    continue;
                };
                let Some(thread) = self.server_thread(server.thread) else {
                    continue;
                };
                let t = &self.objects[thread];
                if !can_serve(t) || !t.served.named {
                    return Err(
                        "a filter's policy server is a thread that ended or was not told it serves",
                    );
                }
            }
        }
        Ok(())
    }
}
