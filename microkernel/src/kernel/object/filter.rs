//! Filter objects: loading a description, attaching a filter to a
//! thread, its stack of filters and its verdict cache.
//!
//! The rule engine itself (evaluation, stacking, the verdict cache, the
//! wire format) is `crate::filter` and host-tested there.

use crate::cap::FilterUser;
use crate::cap::ObjectId;
use crate::filter::{Filter, RegisterProgram, VerdictCache};
use crate::kernel::object::filter_server;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::thread::{AttachedFilter, ThreadId};
use abi::cap::{CapType, Rights};
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::ErrorCode;
use arch::object_memory::kind;
use entry::WorkFlags;

impl Kernel {
    /// `FilterLoad`: replaces the rules of an unattached filter with the
    /// description at `address`.
    #[inline(never)]
    pub(in crate::kernel) fn filter_load<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        cptr: u64,
        address: u64,
        len: usize,
    ) -> Result<(), ErrorCode> {
        let cap = self.thread_cap(current, cptr, CapType::Filter, Rights::WRITE)?;
        let requested = len;
        let len = len.min(MAX_DESCRIPTION_BYTES);
        let vspace = self.objects[current]
            .space
            .ok_or(ErrorCode::InvalidAddress)?;
        let space = self
            .objects
            .get::<kind::VSpace>(vspace)
            .and_then(|v| v.space.as_ref())
            .ok_or(ErrorCode::InvalidAddress)?;
        let bytes = &mut self.policy_scratch[..len];
        // The description as judged, if a filter or server judged it: its
        // first `MAX_JUDGED_BYTES` from the copy, the rest (never judged)
        // read now.
        let judged = self.objects[current]
            .judged
            .buffer_for(address, requested as u64);
        match judged {
            Some(Err(())) => return Err(ErrorCode::InvalidAddress),
            Some(Ok(copy)) => {
                let from_copy = copy.len().min(len);
                bytes[..from_copy].copy_from_slice(&copy[..from_copy]);
                let rest = address
                    .checked_add(from_copy as u64)
                    .ok_or(ErrorCode::InvalidAddress)?;
                space
                    .copy_from_user(platform, rest, &mut bytes[from_copy..])
                    .map_err(|_| ErrorCode::InvalidAddress)?;
            }
            None => space
                .copy_from_user(platform, address, bytes)
                .map_err(|_| ErrorCode::InvalidAddress)?,
        }
        let body = self
            .objects
            .get_mut::<kind::Filter>(cap.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        // Attached filters are frozen: their threads' verdict caches were
        // computed from them.
        if body.attached.is_some() {
            return Err(ErrorCode::Denied);
        }
        body.filter
            .load(&self.policy_scratch[..len])
            .map_err(|_| ErrorCode::InvalidArgument)
    }

    /// `TcbAttachFilter`: pushes a filter on a thread's stack, with the
    /// policy server its `Notify` verdicts go to (`server`: the endpoint
    /// capability, and `server_thread` the server thread's TCB's), then recomputes the
    /// thread's verdicts and mask. Nothing an attach does changes what an
    /// earlier filter decides or where its `Notify` goes: each filter
    /// keeps the server named with it. After the capabilities,
    /// `InvalidArgument`: a filter that can say `Notify` with no server, a
    /// server thread that cannot serve (ended), or the target thread
    /// itself as its server (it would wait for its own answer).
    #[inline(never)]
    pub(in crate::kernel) fn attach_filter<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        tcb: u64,
        filter: u64,
        server: Option<u64>,
        server_thread: u64,
    ) -> Result<(), ErrorCode> {
        let tcb = self.thread_cap(current, tcb, CapType::Tcb, Rights::POLICY)?;
        let filter = self.thread_cap(current, filter, CapType::Filter, Rights::READ)?;
        let server = match server {
            Some(endpoint) => Some(self.named_server(current, endpoint, server_thread)?),
            None => None,
        };
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let asks = self
            .objects
            .get::<kind::Filter>(filter.object())
            .ok_or(ErrorCode::InvalidCapability)?
            .filter
            .asks_a_server();
        match server {
            None if asks => return Err(ErrorCode::InvalidArgument),
            Some((_, thread))
                if thread == target || !filter_server::can_serve(&self.objects[thread]) =>
            {
                return Err(ErrorCode::InvalidArgument)
            }
            _ => {}
        }
        // Another CPU running it stops first (as for every TCB
        // operation): it must not go on with the work word and masks it
        // read before the change (the vector reads them without the
        // kernel lock, and the fast paths act on what it read).
        self.stop_elsewhere(platform, target);
        self.push_filter(
            target,
            AttachedFilter {
                filter: filter.object(),
                server: server.map(|(server, _)| server),
                next: None,
                previous: None,
            },
        )
    }

    /// Puts `attached` on top of `target`'s stack (`OutOfResources` when
    /// it is full) and on the filter's list of threads, with its work bit,
    /// verdicts and mask.
    pub(in crate::kernel) fn push_filter(
        &mut self,
        target: ThreadId,
        attached: AttachedFilter,
    ) -> Result<(), ErrorCode> {
        let filter = attached.filter;
        let head = self
            .objects
            .get::<kind::Filter>(filter)
            .ok_or(ErrorCode::InvalidCapability)?
            .attached;
        let thread = &mut self.objects[target];
        let position = thread.filters.len() as u8;
        thread
            .filters
            .push(AttachedFilter {
                next: head,
                previous: None,
                ..attached
            })
            .map_err(|_| ErrorCode::OutOfResources)?;
        thread.work.insert(WorkFlags::POLICY);
        let user = FilterUser {
            thread: target,
            position,
        };
        if let Some(old) = head {
            if let Some(entry) = self.objects[old.thread]
                .filters
                .get_mut(usize::from(old.position))
            {
                entry.previous = Some(user);
            }
        }
        if let Some(body) = self.objects.get_mut::<kind::Filter>(filter) {
            body.attached = Some(user);
        }
        if let Some(server) = attached.server {
            self.mark_server(&server);
        }
        self.refresh_verdicts(target);
        Ok(())
    }

    /// Takes an ending thread's filters off (each filter's list of threads
    /// included). One entry at a time, from the top, reading each one's
    /// links as they are then: a thread may have one filter attached
    /// twice, and then its entries link to each other.
    pub(in crate::kernel) fn detach_filters(&mut self, id: ThreadId) {
        while let Some(attached) = self.objects[id].filters.last().copied() {
            match attached.previous {
                Some(previous) => {
                    if let Some(entry) = self
                        .objects
                        .thread_mut(previous.thread)
                        .and_then(|t| t.filters.get_mut(usize::from(previous.position)))
                    {
                        entry.next = attached.next;
                    }
                }
                None => {
                    if let Some(body) = self.objects.get_mut::<kind::Filter>(attached.filter) {
                        body.attached = attached.next;
                    }
                }
            }
            if let Some(next) = attached.next {
                if let Some(entry) = self
                    .objects
                    .thread_mut(next.thread)
                    .and_then(|t| t.filters.get_mut(usize::from(next.position)))
                {
                    entry.previous = attached.previous;
                }
            }
            self.objects[id].filters.pop();
            // The last thread of a filter whose capabilities are gone:
            // the filter goes now.
            let unused = self
                .objects
                .get::<kind::Filter>(attached.filter)
                .is_some_and(|f| f.attached.is_none());
            if unused {
                self.objects.retire_pinned(attached.filter);
            }
        }
    }

    /// Recomputes a thread's verdict cache, its compiled verdicts and its
    /// no-entry-work mask from its filter stack.
    fn refresh_verdicts(&mut self, target: ThreadId) {
        let (cache, program) = {
            let stack: heapless::Vec<&Filter, { crate::thread::MAX_STACKED_FILTERS }> = self
                .objects[target]
                .filters
                .iter()
                .filter_map(|a| self.objects.get::<kind::Filter>(a.filter))
                .map(|body| &body.filter)
                .collect();
            let cache = VerdictCache::new(&stack);
            let program = RegisterProgram::new(&stack, &cache);
            (cache, program)
        };
        let thread = &mut self.objects[target];
        thread.verdicts = cache;
        thread.register_program = program;
        thread.recompute_no_entry_work();
    }
}

impl Kernel {
    /// A Filter's last capability is deleted: that never lifts a restriction: a filter
    /// still attached stays (pinned, its rules in force) until the
    /// last thread it confines has ended.
    pub(in crate::kernel) fn filter_destroyed(&mut self, object: ObjectId) {
        let attached = self
            .objects
            .get::<kind::Filter>(object)
            .is_some_and(|f| f.attached.is_some());
        if attached {
            self.objects.pin(object);
        }
    }
}
