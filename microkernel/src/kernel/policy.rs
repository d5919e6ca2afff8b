//! Policy in the syscall path: Filter objects, attaching them to threads,
//! and the entry hook that turns a thread's filters into a verdict.
//!
//! The rule engine itself (evaluation, stacking, the verdict cache, the
//! wire format) is `crate::policy` and host-tested there; this file is the
//! glue: capabilities and rights, the filter store, each thread's stack
//! and no-entry-work mask, and what each verdict does.

use super::Kernel;
use crate::cap::CapSpace;
use crate::platform::Platform;
use crate::policy::{Filter, FilterStore, SyscallFacts, VerdictCache};
use crate::thread::TraceProgress;
use crate::thread::{PolicyRequest, Thread, ThreadId};
use abi::cap::{CapType, Rights};
use abi::policy::{Action, MAX_DESCRIPTION_BYTES};
use abi::trace::StopKind;
use abi::ErrorCode;
use arch::context::UserContext;
use entry::{EntryHooks, PolicyVerdict, TraceEntry, UserDispatch, WorkFlags};

pub use abi::policy_request::KILLED_BY_POLICY;

impl Kernel {
    /// `FilterLoad`: replaces the rules of an unattached filter with the
    /// description at `address`.
    #[inline(never)]
    pub(super) fn filter_load<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        cptr: u64,
        address: u64,
        len: usize,
    ) -> Result<(), ErrorCode> {
        let cap = self.thread_cap(current, cptr, CapType::Filter, Rights::WRITE)?;
        let index = self
            .filters
            .of_object(cap.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let len = len.min(MAX_DESCRIPTION_BYTES);
        let space = self.threads[current.index()]
            .space
            .and_then(|id| self.spaces[id.index()].as_ref())
            .ok_or(ErrorCode::InvalidAddress)?;
        let bytes = &mut self.policy_scratch[..len];
        space
            .copy_from_user(platform, address, bytes)
            .map_err(|_| ErrorCode::InvalidAddress)?;
        let filter = self
            .filters
            .unattached_mut(index)
            .ok_or(ErrorCode::Denied)?;
        filter
            .load(&self.policy_scratch[..len])
            .map_err(|_| ErrorCode::InvalidArgument)
    }

    /// `TcbAttachFilter`: pushes a filter on a thread's stack (and maybe
    /// names its policy server), then recomputes its verdicts and mask.
    #[inline(never)]
    pub(super) fn attach_filter(
        &mut self,
        current: ThreadId,
        tcb: u64,
        filter: u64,
        server: Option<u64>,
    ) -> Result<(), ErrorCode> {
        let tcb = self.thread_cap(current, tcb, CapType::Tcb, Rights::POLICY)?;
        let filter = self.thread_cap(current, filter, CapType::Filter, Rights::READ)?;
        let server = match server {
            Some(cptr) => {
                let endpoint = self.thread_cap(current, cptr, CapType::Endpoint, Rights::WRITE)?;
                Some((endpoint.object().index() as u32, endpoint.badge()))
            }
            None => None,
        };
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let index = self
            .filters
            .of_object(filter.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let thread = &mut self.threads[target.index()];
        thread
            .filters
            .push(index)
            .map_err(|_| ErrorCode::OutOfResources)?;
        self.filters.attach(index);
        if server.is_some() {
            thread.policy_server = server;
        }
        thread.work.insert(WorkFlags::POLICY);
        refresh_verdicts(thread, &self.filters);
        Ok(())
    }

    /// Lets go of an ending thread's filters.
    pub(super) fn detach_filters(&mut self, id: ThreadId) {
        let stack = core::mem::take(&mut self.threads[id.index()].filters);
        for index in stack {
            self.filters.detach(index);
        }
    }

    /// Makes `count` new Filter objects' entries; called by retype, which
    /// checked `filters.free_count()` first.
    pub(super) fn filters_created(&mut self, objects: &[crate::cap::ObjectId]) {
        for &object in objects {
            let _ = self.filters.create(object);
        }
    }
}

/// Recomputes a thread's verdict cache and no-entry-work mask from its
/// filter stack.
fn refresh_verdicts(thread: &mut Thread, store: &FilterStore) {
    let stack: heapless::Vec<&Filter, { crate::thread::MAX_STACKED_FILTERS }> =
        thread.filters.iter().map(|&i| store.filter(i)).collect();
    thread.verdicts = VerdictCache::new(&stack);
    thread.recompute_no_entry_work();
}

/// What the trace and policy stages decided for the syscall in progress,
/// for the kernel to act on once the entry code returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EntryOutcome {
    /// No verdict was needed, or it let the syscall run.
    Run,
    /// The tracer gets an entry stop first (the syscall runs again, or
    /// not, once it answers).
    TraceStop,
    /// A `Log` rule let it run (its audit record says so).
    Logged,
    /// Do not run it; the error code is in `x0`.
    Refused,
    /// `Trap`: report it to the thread's fault endpoint.
    Trap,
    /// `Notify`: ask the thread's policy server.
    Notify,
    /// `Kill`.
    Kill,
    /// User dispatch (stage 1) redirects the syscall to the thread's
    /// handler; `flags` is the frame's flags word.
    Redirect {
        /// `abi::user_dispatch::FLAG_*`.
        flags: u64,
    },
}

/// The syscall entry and exit work of one thread: its work word, what
/// the policy stage needs, and the trace stops (the kernel sends them once
/// the entry code returns: a stop blocks the thread).
pub(super) struct SyscallWork<'a> {
    pub work: &'a mut WorkFlags,
    pub policy: Option<PolicyCheck<'a>>,
    pub outcome: EntryOutcome,
    /// The tracer already answered this syscall's entry stop.
    pub trace_answered: bool,
    /// Stops the exit stages asked for (`TraceProgress::OWE_*`).
    pub owed: u8,
    /// Stage 1's answer, worked out before the entry code ran (it reads
    /// user memory): `Some(flags)` redirects.
    pub redirect: Option<u64>,
    /// `x0` as the policy stage saw it, before a refusal wrote its error
    /// there (what the audit record shows).
    pub checked_x0: Option<u64>,
}

/// A thread's filters and what evaluating them may need.
pub(super) struct PolicyCheck<'a> {
    pub verdicts: &'a VerdictCache,
    pub stack: heapless::Vec<&'a Filter, { crate::thread::MAX_STACKED_FILTERS }>,
    /// Type and badge of the capability `x0` names, if the cache says a
    /// rule looks at them and the slot holds one.
    pub capability: Option<(CapType, u64)>,
    /// The policy server already allowed this syscall: a `Notify` verdict
    /// is waived (any stricter one still applies).
    pub approved: bool,
}

impl<'a> PolicyCheck<'a> {
    /// The inputs for evaluating a thread's policy: its verdict cache and
    /// filter stack; the capability `x0` names is looked up only when a
    /// rule that can decide this syscall looks at its type or badge.
    pub fn new(
        verdicts: &'a VerdictCache,
        stack: &[crate::policy::FilterIndex],
        store: &'a FilterStore,
        cspace: Option<crate::cap::CNodeId>,
        regs: &UserContext,
        caps: &CapSpace<{ super::MAX_SLOTS }, { super::MAX_OBJECTS }>,
    ) -> PolicyCheck<'a> {
        let capability = if verdicts.needs_capability(regs.x[8]) {
            cspace.and_then(|cnode| {
                let slot = caps.slot(cnode, regs.x[0]).ok()?;
                let cap = caps.lookup(slot).ok()?;
                Some((cap.cap_type(), cap.badge()))
            })
        } else {
            None
        };
        PolicyCheck {
            verdicts,
            stack: stack.iter().map(|&i| store.filter(i)).collect(),
            capability,
            approved: false,
        }
    }

    /// The stack's verdict for the syscall in `regs`, from the registers as
    /// they are now (the copy the dispatched call will use).
    fn verdict(&self, regs: &UserContext) -> Action {
        let mut args = [0u64; 8];
        args.copy_from_slice(&regs.x[..8]);
        let mut facts = SyscallFacts::from_registers(regs.x[8], args);
        if let Some((object_type, badge)) = self.capability {
            facts = facts.with_capability(object_type, badge);
        }
        self.verdicts.verdict(&self.stack, &facts)
    }
}

impl EntryHooks for SyscallWork<'_> {
    type Regs = UserContext;

    fn user_dispatch(&mut self, _regs: &mut UserContext) -> UserDispatch {
        match self.redirect {
            // The kernel saves the context and enters the handler once the
            // entry code has returned (`Kernel::redirect_to_handler`).
            Some(flags) => {
                self.outcome = EntryOutcome::Redirect { flags };
                UserDispatch::Redirected
            }
            None => UserDispatch::Continue,
        }
    }

    fn trace_entry(&mut self, _regs: &mut UserContext) -> TraceEntry {
        if self.trace_answered {
            return TraceEntry::Continue;
        }
        // Not now: the stop blocks the thread, and the tracer's answer
        // runs the SVC again (past this stage) or skips it.
        self.outcome = EntryOutcome::TraceStop;
        TraceEntry::Skip
    }

    fn trace_exit(&mut self, _regs: &mut UserContext) {
        self.owed |= TraceProgress::OWE_EXIT;
    }

    fn single_step(&mut self, _regs: &mut UserContext) {
        self.owed |= TraceProgress::OWE_STEP;
    }

    fn policy(&mut self, regs: &mut UserContext) -> PolicyVerdict {
        self.checked_x0 = Some(regs.x[0]);
        let Some(check) = &self.policy else {
            // Policy work with nothing to check it against: fail closed.
            regs.x[0] = ErrorCode::Denied.raw();
            self.outcome = EntryOutcome::Refused;
            return PolicyVerdict::Deny;
        };
        match check.verdict(regs) {
            Action::Allow => PolicyVerdict::Allow,
            // `Log` runs the syscall; an audited thread's record of it says
            // a filter logged it.
            Action::Log => {
                self.outcome = EntryOutcome::Logged;
                PolicyVerdict::Allow
            }
            Action::Errno(code) => {
                regs.x[0] = u64::from(code);
                self.outcome = EntryOutcome::Refused;
                PolicyVerdict::Deny
            }
            Action::Trap => {
                regs.x[0] = ErrorCode::Denied.raw();
                self.outcome = EntryOutcome::Trap;
                PolicyVerdict::Deny
            }
            Action::Notify if check.approved => PolicyVerdict::Allow,
            Action::Notify => {
                // The registers stay as they are: the request carries them,
                // and an allowed syscall runs again from them.
                self.outcome = EntryOutcome::Notify;
                PolicyVerdict::Deny
            }
            Action::Kill => {
                self.outcome = EntryOutcome::Kill;
                PolicyVerdict::Kill
            }
        }
    }

    fn current_work(&mut self) -> WorkFlags {
        // A pending reschedule is left set for `Kernel::resume`, which
        // requeues the thread once the syscall's exit work is done.
        let mut work = *self.work;
        work.remove(WorkFlags::NEED_RESCHED);
        work
    }

    fn handle_notify_resume(&mut self) {
        self.work.remove(WorkFlags::NOTIFY_RESUME);
    }
}

impl Kernel {
    /// `Notify`: the thread's syscall waits for its policy server's answer
    /// (sent like a fault message, so the server sees an ordinary call).
    /// With no server (none named, or its endpoint destroyed) it fails
    /// closed with `Denied`: `None` returns to the thread.
    pub(super) fn notify_policy_server<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Option<super::Resume> {
        let thread = &self.threads[current.index()];
        let Some((endpoint, badge)) = thread.policy_server else {
            self.threads[current.index()].context.x[0] = ErrorCode::Denied.raw();
            return None;
        };
        let context = &thread.context;
        let mut args = [0u64; 8];
        args.copy_from_slice(&context.x[..8]);
        let number = context.x[8];
        let (object_type, cap_badge) = thread
            .cspace
            .and_then(|cnode| {
                let cap = self
                    .caps
                    .lookup(self.caps.slot(cnode, args[0]).ok()?)
                    .ok()?;
                Some((u64::from(cap.cap_type().raw()), cap.badge()))
            })
            .unwrap_or((0, 0));
        self.policy_cookie += 1;
        self.threads[current.index()].pending_policy = Some(PolicyRequest {
            number,
            object_type,
            badge: cap_badge,
            cookie: self.policy_cookie,
            args,
        });
        self.send_on_behalf(platform, current, endpoint, badge);
        Some(self.resume(platform))
    }
}

impl Kernel {
    /// The generic entry for a syscall with entry work (out of line: the
    /// common syscall has none).
    #[cold]
    #[inline(never)]
    pub(super) fn enter_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Option<(entry::SyscallEntry, EntryOutcome)> {
        // Stage 1 reads user memory, so its answer is worked out here;
        // the entry code still decides what it means (nothing else runs).
        let redirect = if self.threads[current.index()]
            .work
            .contains(WorkFlags::USER_DISPATCH)
        {
            self.user_dispatch_decision(platform, current)
        } else {
            None
        };
        // Lossless audit with a full ring: wait before anything runs (a
        // redirected syscall is not audited, so it does not wait).
        if redirect.is_none() && !self.audit_admits(platform, current) {
            return None;
        }
        let Kernel {
            threads,
            filters,
            caps,
            ..
        } = self;
        let Thread {
            work,
            context,
            verdicts,
            filters: stack,
            cspace,
            policy_approved,
            trace,
            ..
        } = &mut threads[current.index()];
        let flags = *work;
        // The SVC the policy server allowed is the one re-entering now.
        let svc = context.pc.wrapping_sub(4);
        let approved = policy_approved.take() == Some(svc);
        let policy = flags.contains(WorkFlags::POLICY).then(|| PolicyCheck {
            approved,
            ..PolicyCheck::new(verdicts, stack, filters, *cspace, context, caps)
        });
        let mut hooks = SyscallWork {
            work,
            policy,
            outcome: EntryOutcome::Run,
            trace_answered: trace.entry_answered == Some(svc),
            owed: 0,
            redirect,
            checked_x0: None,
        };
        let entry = entry::syscall_enter_from_user_mode(&mut hooks, context, flags);
        // The answered entry stop stays answered while the policy server
        // is asked (the SVC runs again after its verdict); otherwise this
        // syscall is past its entry stop.
        if hooks.outcome != EntryOutcome::Notify {
            trace.entry_answered = None;
        }
        trace.number = context.x[8];
        let outcome = hooks.outcome;
        let checked_x0 = hooks.checked_x0;
        drop(hooks);
        // The record shows the arguments as the entry work left them (as
        // the policy saw them, not a refusal's error code).
        self.audit_snapshot(current, checked_x0);
        Some((entry, outcome))
    }

    /// The generic exit for a syscall that went through `enter_with_work`.
    #[cold]
    #[inline(never)]
    pub(super) fn exit_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        entry: entry::SyscallEntry,
    ) {
        let thread = &mut self.threads[current.index()];
        let flags = thread.work;
        let mut hooks = SyscallWork {
            work: &mut thread.work,
            policy: None,
            outcome: EntryOutcome::Run,
            trace_answered: false,
            owed: 0,
            redirect: None,
            checked_x0: None,
        };
        let outcome =
            entry::syscall_exit_to_user_mode(&mut hooks, &mut thread.context, entry, flags);
        let owed = hooks.owed;
        drop(hooks);
        // Sent on the way back to EL0 (`Kernel::resume`), exit stop first.
        thread.trace.owed |= owed;
        if outcome == entry::UserReturn::Killed {
            self.end_thread(
                platform,
                current,
                crate::thread::ThreadState::Exited(KILLED_BY_POLICY),
            );
        }
    }
}

impl Kernel {
    /// A syscall the entry stages did not let run: a redirect enters the
    /// user-dispatch handler (or kills the thread), an entry stop
    /// goes to the tracer, a `Trap` becomes a fault report, a `Notify` goes
    /// to the policy server; an `Errno` needs nothing more (`None`: return
    /// to the thread).
    #[cold]
    #[inline(never)]
    pub(super) fn policy_skipped<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        outcome: EntryOutcome,
    ) -> Option<super::Resume> {
        match outcome {
            EntryOutcome::Trap => {
                // The syscall did not run; its report goes to the fault
                // endpoint (or stops the thread), with `Denied` in `x0`.
                let context = &self.threads[current.index()].context;
                let report = crate::fault::FaultReport::new(esr, context.x[8], context.pc);
                Some(self.fault(platform, current, report))
            }
            EntryOutcome::Notify => self.notify_policy_server(platform, current),
            EntryOutcome::Redirect { flags } => self.redirect_to_handler(platform, current, flags),
            EntryOutcome::TraceStop => {
                let number = self.threads[current.index()].context.x[8];
                Some(self.trace_stop(platform, current, StopKind::Entry, number))
            }
            EntryOutcome::Run
            | EntryOutcome::Logged
            | EntryOutcome::Refused
            | EntryOutcome::Kill => None,
        }
    }
}
