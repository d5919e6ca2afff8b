//! Policy in the syscall path: Filter objects, attaching them to threads,
//! and the entry hook that turns a thread's filters into a verdict.
//!
//! The rule engine itself (evaluation, stacking, the verdict cache, the
//! wire format) is `crate::policy` and host-tested there; this file is the
//! glue: capabilities and rights, Filter objects, each thread's stack
//! and no-entry-work mask, and what each verdict does.

use super::Kernel;
use crate::cap::{FilterUser, OtherObjects};
use crate::platform::Platform;
use crate::policy::{routed_verdict, Filter, SyscallFacts, VerdictCache};
use crate::stopped_call::{CallStop, PolicyAnswer, Resumed, StopAnswer, StoppedCall};
use crate::thread::{AttachedFilter, PolicyRequest, Thread, ThreadId, TraceProgress};
use abi::cap::{CapType, Rights};
use abi::policy::{Action, MAX_DESCRIPTION_BYTES};
use abi::trace::StopKind;
use abi::ErrorCode;
use arch::context::UserContext;
use arch::object_memory::kind;
use entry::{
    AuditEntry, EntryHooks, PolicyDecision, PolicyVerdict, SyscallEntry, TraceEntry, UserDispatch,
    WorkFlags,
};

pub use crate::stopped_call::EntryOutcome;

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
        space
            .copy_from_user(platform, address, bytes)
            .map_err(|_| ErrorCode::InvalidAddress)?;
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
    /// policy server its `Notify` verdicts go to (none: they are
    /// `Denied`), then recomputes the thread's verdicts and mask. Nothing
    /// an attach does changes what an earlier filter decides or where its
    /// `Notify` goes: each filter keeps the server named with it.
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
                let reference = self
                    .objects
                    .reference(endpoint.object())
                    .ok_or(ErrorCode::InvalidCapability)?;
                Some((reference, endpoint.badge()))
            }
            None => None,
        };
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        self.push_filter(
            target,
            AttachedFilter {
                filter: filter.object(),
                server,
                next: None,
                previous: None,
            },
        )
    }

    /// Puts `attached` on top of `target`'s stack (`OutOfResources` when
    /// it is full) and on the filter's list of threads, with its work bit,
    /// verdicts and mask.
    pub(super) fn push_filter(
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
        self.refresh_verdicts(target);
        Ok(())
    }

    /// Takes an ending thread's filters off (each filter's list of threads
    /// included). One entry at a time, from the top, reading each one's
    /// links as they are then: a thread may have one filter attached
    /// twice, and then its entries link to each other.
    pub(super) fn detach_filters(&mut self, id: ThreadId) {
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

    /// Recomputes a thread's verdict cache and no-entry-work mask from its
    /// filter stack.
    fn refresh_verdicts(&mut self, target: ThreadId) {
        let cache = {
            let stack: heapless::Vec<&Filter, { crate::thread::MAX_STACKED_FILTERS }> = self
                .objects[target]
                .filters
                .iter()
                .filter_map(|a| self.objects.get::<kind::Filter>(a.filter))
                .map(|body| &body.filter)
                .collect();
            VerdictCache::new(&stack)
        };
        let thread = &mut self.objects[target];
        thread.verdicts = cache;
        thread.recompute_no_entry_work();
    }
}

/// The syscall entry and exit work of one thread: its work word, what
/// the policy stage needs, what a stopped call goes on with, and the
/// trace stops the exit stages owe (the kernel sends them on the way back
/// to EL0: a stop blocks the thread).
pub(super) struct SyscallWork<'a> {
    pub work: &'a mut WorkFlags,
    pub policy: Option<PolicyCheck<'a>>,
    pub outcome: EntryOutcome,
    /// The answer a stopped call goes on with (`None`: a new syscall, or
    /// one past the stage its answer was for).
    pub answer: Option<StopAnswer>,
    /// Filters whose `Notify` a server allowed (see `StoppedCall::waived`).
    pub waived: u8,
    /// A policy server decided this call.
    pub forwarded: bool,
    /// Stops the exit stages asked for (`TraceProgress::OWE_*`).
    pub owed: u8,
    /// Stage 1's answer, worked out before the entry code ran (it reads
    /// user memory): `Some(flags)` redirects.
    pub redirect: Option<u64>,
    /// Stage 4's answer, worked out before the entry code ran (it reads
    /// the ring): lossless audit into a full ring waits.
    pub audit_full: bool,
    /// `x0` and `x8` as the policy stage saw them, before a refusal wrote
    /// its result there (what the audit record and the exit stop show).
    pub checked: Option<(u64, u64)>,
}

impl<'a> SyscallWork<'a> {
    /// The hooks for the exit stages only.
    pub fn exit_only(work: &'a mut WorkFlags) -> SyscallWork<'a> {
        SyscallWork {
            work,
            policy: None,
            outcome: EntryOutcome::Run,
            answer: None,
            waived: 0,
            forwarded: false,
            owed: 0,
            redirect: None,
            audit_full: false,
            checked: None,
        }
    }
}

/// A thread's filters and what evaluating them may need.
pub(super) struct PolicyCheck<'a> {
    pub verdicts: &'a VerdictCache,
    pub stack: heapless::Vec<&'a Filter, { crate::thread::MAX_STACKED_FILTERS }>,
    /// The thread's stack as attached (with each filter's server), read
    /// only when a verdict is `Notify` (`served`).
    attached: &'a [AttachedFilter],
    /// Every other object, for `served`.
    others: OtherObjects<'a>,
    /// Type and badge of the capability `x0` names, if the cache says a
    /// rule looks at them and the slot holds one.
    pub capability: Option<(CapType, u64)>,
}

impl<'a> PolicyCheck<'a> {
    /// The inputs for evaluating a thread's policy: its verdict cache and
    /// filter stack; the capability `x0` names (through the thread's
    /// cached CSpace range) is looked up only when a rule that can decide
    /// this syscall looks at its type or badge. A filter's server counts
    /// only while its endpoint lives.
    pub fn new(
        verdicts: &'a VerdictCache,
        stack: &'a [AttachedFilter],
        others: OtherObjects<'a>,
        (first, slots): (crate::cap::SlotId, u32),
        regs: &UserContext,
    ) -> PolicyCheck<'a> {
        let capability = if verdicts.needs_capability(regs.x[8]) && regs.x[0] < u64::from(slots) {
            others
                .slot_content(crate::cap::SlotId(first.0 + regs.x[0] as u32))
                .filter(|cap| !cap.is_null())
                .map(|cap| (cap.cap_type(), cap.badge()))
        } else {
            None
        };
        PolicyCheck {
            verdicts,
            stack: stack
                .iter()
                .filter_map(|a| others.get::<kind::Filter>(a.filter))
                .map(|body| &body.filter)
                .collect(),
            attached: stack,
            others,
            capability,
        }
    }

    /// Bit n: the n-th filter has a policy server (one whose endpoint
    /// lives). Asked only for a `Notify`: resolving each server on every
    /// judged syscall cost a look-up per filter. (Nothing changes while
    /// the check exists: it borrows every object.)
    fn served(&self) -> u8 {
        self.attached
            .iter()
            .enumerate()
            .filter(|(_, attached)| {
                attached
                    .server
                    .is_some_and(|(server, _)| self.others.resolves(server, CapType::Endpoint))
            })
            .fold(0u8, |bits, (i, _)| bits | 1 << i)
    }

    /// The stack's verdict for the syscall in `regs`, from the registers as
    /// they are now (the copy the dispatched call will use), with the
    /// `Notify` verdicts in `waived` allowed; for `Notify`, the filter
    /// whose server is asked.
    fn verdict(&self, regs: &UserContext, waived: u8) -> (Action, Option<u8>) {
        // Word by word: a slice copy was a call to `memcpy`.
        let x = &regs.x;
        let args = [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]];
        let mut facts = SyscallFacts::from_registers(x[8], args);
        if let Some((object_type, badge)) = self.capability {
            facts = facts.with_capability(object_type, badge);
        }
        // The cache answers everything but `Notify`, whose filter (and
        // so its server) only an evaluation of each filter tells; with one
        // filter, the stack's verdict is that filter's.
        if waived == 0 || self.stack.len() == 1 {
            let verdict = self.verdicts.verdict(&self.stack, &facts);
            match verdict {
                Action::Notify if self.stack.len() == 1 => {
                    // A waived `Notify` (its server allowed it) needs
                    // no server.
                    return if waived & 1 != 0 {
                        (Action::Allow, None)
                    } else if self.served() & 1 != 0 {
                        (Action::Notify, Some(0))
                    } else {
                        (Action::Errno(ErrorCode::Denied.raw() as u16), None)
                    };
                }
                Action::Notify => {}
                verdict => return (verdict, None),
            }
        }
        self.routed(&facts, waived)
    }

    #[cold]
    #[inline(never)]
    fn routed(&self, facts: &SyscallFacts, waived: u8) -> (Action, Option<u8>) {
        routed_verdict(&self.stack, facts, waived, self.served())
    }
}

impl SyscallWork<'_> {
    /// Do not run the syscall: `result` in `x0`.
    fn refuse(
        &mut self,
        regs: &mut UserContext,
        result: u64,
        outcome: EntryOutcome,
    ) -> PolicyDecision {
        regs.x[0] = result;
        self.outcome = outcome;
        PolicyDecision::Verdict(PolicyVerdict::Deny)
    }

    /// A policy server decided the call (anything but "allow").
    #[cold]
    #[inline(never)]
    fn server_decided(&mut self, regs: &mut UserContext, answer: PolicyAnswer) -> PolicyDecision {
        match answer {
            PolicyAnswer::Refuse(code) => self.refuse(regs, code.raw(), EntryOutcome::Refused),
            PolicyAnswer::Emulate { x0, x8 } => {
                regs.x[8] = x8;
                self.refuse(regs, x0, EntryOutcome::Emulated)
            }
            PolicyAnswer::Kill => {
                self.outcome = EntryOutcome::Kill;
                PolicyDecision::Verdict(PolicyVerdict::Kill)
            }
            PolicyAnswer::Allow => PolicyDecision::Verdict(PolicyVerdict::Allow),
        }
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
        match self.answer.take() {
            // The tracer's changes are in the registers already.
            Some(StopAnswer::TraceContinue) => TraceEntry::Continue,
            Some(StopAnswer::TraceSkip) => TraceEntry::Skip,
            // Not answered yet: the stop blocks the thread, and the kernel
            // sends it once the entry code has returned.
            _ => TraceEntry::Stop,
        }
    }

    fn trace_exit(&mut self, _regs: &mut UserContext) {
        self.owed |= TraceProgress::OWE_EXIT;
    }

    fn single_step(&mut self, _regs: &mut UserContext) {
        self.owed |= TraceProgress::OWE_STEP;
    }

    // Inlined: it is the policy stage of every filtered syscall, and its
    // rare parts are out of line.
    #[inline(always)]
    fn policy(&mut self, regs: &mut UserContext) -> PolicyDecision {
        self.checked = Some((regs.x[0], regs.x[8]));
        // A policy server's answer decides, unless it allowed the call:
        // then the filters judge it again (its `Notify` waived).
        if let Some(StopAnswer::Policy(answer)) = self.answer {
            self.answer = None;
            if answer != PolicyAnswer::Allow {
                return self.server_decided(regs, answer);
            }
        }
        let Some(check) = &self.policy else {
            // Policy work with nothing to check it against: fail closed.
            return self.refuse(regs, ErrorCode::Denied.raw(), EntryOutcome::Refused);
        };
        let (action, asker) = check.verdict(regs, self.waived);
        self.outcome = EntryOutcome::Run;
        match action {
            Action::Allow => PolicyDecision::Verdict(PolicyVerdict::Allow),
            // `Log` runs the syscall; an audited thread's record of it says
            // a filter logged it.
            Action::Log => {
                self.outcome = EntryOutcome::Logged;
                PolicyDecision::Verdict(PolicyVerdict::Allow)
            }
            Action::Errno(code) => self.refuse(regs, u64::from(code), EntryOutcome::Refused),
            Action::Trap => self.refuse(regs, ErrorCode::Denied.raw(), EntryOutcome::Trap),
            Action::Notify => match asker {
                // The registers stay as they are: the kernel keeps them
                // as the stopped call, and the request carries them.
                Some(filter) => {
                    self.outcome = EntryOutcome::Ask { filter };
                    PolicyDecision::Ask
                }
                None => self.refuse(regs, ErrorCode::Denied.raw(), EntryOutcome::Refused),
            },
            Action::Kill => {
                self.outcome = EntryOutcome::Kill;
                PolicyDecision::Verdict(PolicyVerdict::Kill)
            }
        }
    }

    fn audit_entry(&mut self, _regs: &UserContext, _verdict: PolicyVerdict) -> AuditEntry {
        // "There is room now" is only a reason to look again: the kernel
        // looked at the ring before this pass (`audit_full`).
        if self.answer == Some(StopAnswer::AuditRoom) {
            self.answer = None;
        }
        if self.audit_full {
            AuditEntry::Wait
        } else {
            AuditEntry::Continue
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
    /// `Notify`: the stopped call waits for the answer of the policy
    /// server of the filter at position `filter` of its thread's stack
    /// (sent like a fault message, so the server sees an ordinary call).
    /// The request is built from the stopped call's registers. A filter
    /// with no server never asks (`routed_verdict` refuses for it); one
    /// whose server went away meanwhile is answered `Denied` here.
    pub(super) fn notify_policy_server<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        filter: u8,
    ) {
        let server = self.objects[current]
            .filters
            .get(usize::from(filter))
            .and_then(|attached| attached.server)
            .and_then(|(r, badge)| Some((self.objects.resolve(r, CapType::Endpoint)?, badge)));
        let cspace = self.objects[current].cspace;
        let Some(call) = self.objects[current].call.as_mut() else {
            return;
        };
        let Some((endpoint, badge)) = server else {
            call.answer = Some(StopAnswer::Policy(PolicyAnswer::Refuse(ErrorCode::Denied)));
            call.forwarded = true;
            return;
        };
        // Word by word: copies of the registers as arrays or slices
        // were calls to `memcpy`.
        let r = &call.regs;
        let args = [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]];
        let number = r[8];
        let (object_type, cap_badge) = cspace
            .and_then(|cnode| {
                let cap = self
                    .objects
                    .lookup(self.objects.slot(cnode, args[0]).ok()?)
                    .ok()?;
                Some((u64::from(cap.cap_type().raw()), cap.badge()))
            })
            .unwrap_or((0, 0));
        self.policy_cookie += 1;
        self.objects[current].pending_policy = Some(PolicyRequest {
            filter,
            number,
            object_type,
            badge: cap_badge,
            cookie: self.policy_cookie,
            args,
        });
        self.send_on_behalf(platform, current, endpoint, badge);
    }
}

/// What one pass through the entry work came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entered {
    /// The entry code's answer.
    pub entry: SyscallEntry,
    /// What the stages decided (see `EntryOutcome`).
    pub outcome: EntryOutcome,
    /// Filters whose `Notify` a server allowed.
    pub waived: u8,
    /// A policy server decided the call.
    pub forwarded: bool,
}

impl Entered {
    /// A syscall of a thread without entry work: dispatched as made.
    pub fn dispatch_without_work() -> Entered {
        Entered {
            entry: SyscallEntry::Dispatch,
            outcome: EntryOutcome::Run,
            waived: 0,
            forwarded: false,
        }
    }
}

impl Kernel {
    /// The generic entry for a syscall with entry work (out of line: the
    /// common syscall has none): a new one (`resumed` is `None`), or one
    /// that stopped in its entry work and whose answer has come (its
    /// registers are in the context again). Stage 1 (user dispatch) and
    /// stage 4's room check read memory, so their answers are worked out
    /// here before the entry code runs.
    #[cold]
    #[inline(never)]
    pub(super) fn enter_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        resumed: Option<&Resumed>,
    ) -> Entered {
        // One look at the thread, unless it has user dispatch or audit
        // to ask about first (they need the whole kernel: the thread is
        // looked up again after them).
        let Some((mut thread, mut others)) = self.objects.split_thread(current) else {
            unreachable!("the current thread is a thread");
        };
        let dispatches = resumed.is_none() && thread.work.contains(WorkFlags::USER_DISPATCH);
        let audited = thread.audit.is_some();
        let (mut redirect, mut audit_full) = (None, false);
        if dispatches || audited {
            if dispatches {
                redirect = self.user_dispatch_decision(platform, current);
            }
            audit_full = audited && self.audit_ring_is_full(platform, current);
            let Some(again) = self.objects.split_thread(current) else {
                unreachable!("the current thread is a thread");
            };
            (thread, others) = again;
        }
        let Thread {
            work,
            context,
            verdicts,
            filters: stack,
            cspace_slots,
            trace,
            ..
        } = thread;
        let flags = *work;
        let policy = flags
            .contains(WorkFlags::POLICY)
            .then(|| PolicyCheck::new(verdicts, stack, others, *cspace_slots, context));
        // A new syscall goes on with nothing (`NEW`'s `at` is never read:
        // where a call goes on is `resumed`'s). Read from one reference:
        // an `Option` made from each field (`and_then`) copied the
        // answer's payload with a `memcpy` call, byte by byte.
        const NEW: Resumed = Resumed {
            at: CallStop::Dispatch { progress: 0, at: 0 },
            answer: None,
            waived: 0,
            forwarded: false,
            outcome: EntryOutcome::Run,
        };
        let going_on = resumed.unwrap_or(&NEW);
        let mut hooks = SyscallWork {
            policy,
            outcome: going_on.outcome,
            answer: going_on.answer,
            waived: going_on.waived,
            forwarded: going_on.forwarded,
            redirect,
            audit_full,
            ..SyscallWork::exit_only(work)
        };
        let entry = match resumed.map(|call| call.at) {
            Some(CallStop::Entry(stop)) => {
                entry::syscall_resume_entry(&mut hooks, context, flags, stop)
            }
            _ => entry::syscall_enter_from_user_mode(&mut hooks, context, flags),
        };
        let checked = hooks.checked;
        // The number as judged (an emulated result may be in `x8` now).
        trace.number = checked.map_or(context.x[8], |(_, x8)| x8);
        let entered = Entered {
            entry,
            outcome: hooks.outcome,
            waived: hooks.waived,
            forwarded: hooks.forwarded,
        };
        drop(hooks);
        // The record shows the arguments as the entry work left them (as
        // the policy saw them, not a refusal's error code).
        if audited && !matches!(entry, SyscallEntry::Stopped(_)) {
            self.audit_begin(current, &entered, checked);
        }
        entered
    }

    /// The generic exit for a syscall that went through `enter_with_work`.
    #[cold]
    #[inline(never)]
    pub(super) fn exit_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        entry: SyscallEntry,
    ) {
        if Self::exit_work_on(&mut self.objects[current], entry) {
            self.end_thread(
                platform,
                current,
                crate::thread::ThreadState::Exited(KILLED_BY_POLICY),
            );
        }
    }

    /// The exit stages (5 to 8) of `thread`'s syscall, on the thread in
    /// hand (`exit_with_work`, and its callers' common cases, which
    /// spare a second look at the thread); `true`: its policy killed it
    /// (the caller ends it).
    #[inline(always)]
    pub(super) fn exit_work_on(thread: &mut Thread, entry: SyscallEntry) -> bool {
        let flags = thread.work;
        let mut hooks = SyscallWork::exit_only(&mut thread.work);
        let outcome =
            entry::syscall_exit_to_user_mode(&mut hooks, &mut thread.context, entry, flags);
        let owed = hooks.owed;
        drop(hooks);
        // Sent on the way back to EL0 (`Kernel::resume`), exit stop first.
        thread.trace.owed |= owed;
        outcome == entry::UserReturn::Killed
    }

    /// A syscall stopped in its entry work: the kernel keeps it as judged
    /// so far (the registers now), and sends what it waits for (the entry
    /// stop to the tracer, the request to a policy server) or leaves it
    /// waiting for audit room. The thread blocks.
    #[cold]
    #[inline(never)]
    pub(super) fn stop_call<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        stop: entry::EntryStop,
        entered: &Entered,
    ) {
        let capability = match stop {
            // Judged after the stop: nothing to hold it to.
            entry::EntryStop::TraceEntry => None,
            _ => Some(self.judged_capability(current)),
        };
        let thread = &mut self.objects[current];
        // Word by word: a slice copy was a call to `memcpy`.
        let x = &thread.context.x;
        let regs = [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]];
        // Made in place, then the rest field by field: the struct
        // literal was built apart and then stored whole. (The outcome's
        // payload is still a byte-wise `memcpy` call: its tag and filter
        // are loaded apart, for the match below.)
        let call = thread
            .call
            .insert(StoppedCall::new(regs, CallStop::Entry(stop)));
        call.esr = esr;
        call.capability = capability;
        call.waived = entered.waived;
        call.forwarded = entered.forwarded;
        call.outcome = entered.outcome;
        match stop {
            entry::EntryStop::TraceEntry => {
                self.trace_stop(platform, current, StopKind::Entry, regs[8]);
            }
            entry::EntryStop::Policy => {
                let filter = match entered.outcome {
                    EntryOutcome::Ask { filter } => filter,
                    // The policy stage stops only to ask.
                    _ => u8::MAX,
                };
                self.notify_policy_server(platform, current, filter);
            }
            entry::EntryStop::AuditEntry(_) => {
                self.wait_for_audit_room(current);
                self.current = None;
            }
        }
    }
}

impl Kernel {
    /// A syscall the entry stages did not let run: a redirect enters the
    /// user-dispatch handler (or kills the thread), a `Trap` becomes a
    /// fault report; an `Errno` needs nothing more. `false`: the thread
    /// does not return from the syscall now (it waits, or it ended).
    #[cold]
    #[inline(never)]
    pub(super) fn policy_skipped<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        outcome: EntryOutcome,
    ) -> bool {
        match outcome {
            EntryOutcome::Trap => {
                // The syscall did not run; its report goes to the fault
                // endpoint (or stops the thread), with `Denied` in `x0`.
                let context = &self.objects[current].context;
                let report = crate::fault::FaultReport::new(esr, context.x[8], context.pc);
                self.report_fault(platform, current, report);
                false
            }
            EntryOutcome::Redirect { flags } => self.redirect_to_handler(platform, current, flags),
            EntryOutcome::Run
            | EntryOutcome::Logged
            | EntryOutcome::Refused
            | EntryOutcome::Emulated
            | EntryOutcome::Ask { .. }
            | EntryOutcome::Kill => true,
        }
    }
}
