//! Policy forwarding: a thread's filters judging its syscall
//! (`PolicyCheck`), and a `Notify` verdict's request to the filter's
//! policy server.

use crate::cap::OtherObjects;
use crate::filter::{
    evaluate, evaluate_deciding, routed_verdict, Filter, RegisterProgram, SyscallFacts,
    VerdictCache,
};
use crate::ipc::message::MAX_MESSAGE_WORDS;
use crate::judged_memory::JudgedMemory;
use crate::kernel::object::filter_server::serves_in;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::stopped_call::{PolicyAnswer, StopAnswer};
use crate::thread::KernelMessage;
use crate::thread::{AttachedFilter, PolicyRequest, ThreadId};
use abi::cap::CapType;
use abi::policy::Action;
use abi::{ErrorCode, MessageInfo, Syscall};
use arch::context::UserContext;
use arch::object_memory::kind;
use entry::ArgIndex;

/// Type and badge of the capability `x0` names (through the thread's
/// cached CSpace range, `first` and `slots`), if the cache says a rule
/// that can decide this syscall looks at them and the slot holds one.
#[inline(always)]
fn judged_capability(
    verdicts: &VerdictCache,
    others: &OtherObjects<'_>,
    (first, slots): (crate::cap::SlotId, u32),
    regs: &UserContext,
) -> Option<(CapType, u64)> {
    let cptr = regs.capability_pointer();
    if verdicts.needs_capability(regs.syscall_number()) && cptr < u64::from(slots) {
        others
            .slot_content(crate::cap::SlotId(first.0 + cptr as u32))
            .filter(|cap| !cap.is_null())
            .map(|cap| (cap.cap_type(), cap.badge()))
    } else {
        None
    }
}

/// The verdict of a syscall the lean entry judges
/// (`VerdictCache::judged_by_lean_entry`), as `PolicyCheck::verdict`
/// gives it for a new call: its filters' on `x0..x7`, the number and the
/// capability `x0` names. No rule that can decide it reads the PC (which
/// the lean entry leaves unsaved: the facts say 0) or memory (none is
/// copied), and its verdict is never `Notify`, so no server is routed
/// to. A syscall whose filters compare registers alone is judged by the
/// thread's compiled comparisons (`RegisterProgram`, which the vector
/// walked already); for any other, only the filters that can give it
/// anything but `Allow` are looked up and evaluated.
#[inline(always)]
pub(in crate::kernel) fn lean_verdict(
    verdicts: &VerdictCache,
    program: &RegisterProgram,
    attached: &[AttachedFilter],
    others: OtherObjects<'_>,
    cspace: (crate::cap::SlotId, u32),
    regs: &UserContext,
) -> Action {
    let number = regs.syscall_number();
    debug_assert!(verdicts.judged_by_lean_entry(number));
    if let Some(verdict) = verdicts.cached_verdict(number) {
        return verdict;
    }
    let [x0, x1, x2, x3, x4, x5, x6, x7, _] = regs.syscall_registers();
    if let Some(verdict) = program.verdict(number, &[x0, x1, x2, x3, x4, x5, x6, x7]) {
        return verdict;
    }
    let deciding = verdicts.deciding_filters(number);
    // (Attached filters are pinned: each is there, at the position the
    // cache was computed for.)
    let stack: heapless::Vec<&Filter, { crate::thread::MAX_STACKED_FILTERS }> = attached
        .iter()
        .enumerate()
        .filter(|&(position, _)| position >= 8 || deciding & (1 << position) != 0)
        .filter_map(|(_, a)| others.get::<kind::Filter>(a.filter))
        .map(|body| &body.filter)
        .collect();
    let capability = judged_capability(verdicts, &others, cspace, regs);
    let [x0, x1, x2, x3, x4, x5, x6, x7, number] = regs.syscall_registers();
    let facts = SyscallFacts {
        number,
        object_type: capability.map(|(object_type, _)| object_type),
        label: MessageInfo::from(x1).label(),
        badge: capability.map(|(_, badge)| badge),
        args: [x0, x1, x2, x3, x4, x5, x6, x7],
        pc: 0,
        memory: crate::filter::JudgedView::default(),
    };
    evaluate(&stack, &facts)
}

/// The filters of a thread's stack, in order.
type Stack<'a> = heapless::Vec<&'a Filter, { crate::thread::MAX_STACKED_FILTERS }>;

/// A thread's filters and what evaluating them may need.
pub(in crate::kernel) struct PolicyCheck<'a> {
    pub verdicts: &'a VerdictCache,
    /// The thread's stack as attached (with each filter's server). Its
    /// filters are resolved (`stack`) only for a verdict the cache does
    /// not give: resolved on every judged syscall they cost some 45
    /// instructions, which a cached verdict (a `Notify` among them) never
    /// needed.
    attached: &'a [AttachedFilter],
    /// Every other object, for `stack` and `served`.
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
    /// only while its endpoint lives. (Inlined into both its callers, the
    /// generic entry's policy stage and the policy-only lane: called, it
    /// and `verdict` cost each some 25 instructions.)
    #[inline(always)]
    pub(in crate::kernel) fn new(
        verdicts: &'a VerdictCache,
        stack: &'a [AttachedFilter],
        others: OtherObjects<'a>,
        (first, slots): (crate::cap::SlotId, u32),
        regs: &UserContext,
    ) -> PolicyCheck<'a> {
        let capability = judged_capability(verdicts, &others, (first, slots), regs);
        PolicyCheck {
            verdicts,
            attached: stack,
            others,
            capability,
        }
    }

    /// The attached filters, resolved. Each is there: an attached filter
    /// is pinned until the last thread it confines ends (checked by
    /// `check_invariants`), so the stack has one filter per attached
    /// entry, at its position (`deciding` still checks). (Inlined: the
    /// stack is built where it is used.)
    #[inline(always)]
    fn stack(&self) -> Stack<'a> {
        self.attached
            .iter()
            .filter_map(|a| self.others.get::<kind::Filter>(a.filter))
            .map(|body| &body.filter)
            .collect()
    }

    /// One filter is attached: its verdict is the stack's.
    #[inline(always)]
    fn one_filter(&self) -> bool {
        self.attached.len() == 1
    }

    /// Bit n: the n-th filter has a policy server (one whose endpoint
    /// lives; a lost server thread cleared its binding already). Asked only for a `Notify`: resolving each server on every
    /// judged syscall cost a look-up per filter. (Nothing changes while
    /// the check exists: it borrows every object.)
    fn served(&self) -> u8 {
        self.attached
            .iter()
            .enumerate()
            .filter(|(_, attached)| {
                attached
                    .server
                    .is_some_and(|server| serves_in(&self.others, &server))
            })
            .fold(0u8, |bits, (i, _)| bits | 1 << i)
    }

    /// `served`'s bit 0 alone, for a stack of one filter: the fold over
    /// the stack cost its `Notify` some 20 instructions more.
    #[inline(always)]
    fn first_served(&self) -> bool {
        self.attached
            .first()
            .and_then(|attached| attached.server)
            .is_some_and(|server| serves_in(&self.others, &server))
    }

    /// The stack's verdict for the syscall in `regs`, from the registers as
    /// they are now and the judged copy of its memory (the copies the
    /// dispatched call will use), with the
    /// `Notify` verdicts in `waived` allowed; for `Notify`, the filter
    /// whose server is asked. (Inlined: see `new`.)
    #[inline(always)]
    pub(in crate::kernel) fn verdict(
        &self,
        regs: &UserContext,
        waived: u8,
        memory: &JudgedMemory,
    ) -> (Action, Option<u8>) {
        // The cache answers everything but `Notify`, whose filter (and
        // so its server) only an evaluation of each filter tells; with one
        // filter, the stack's verdict is that filter's.
        if waived == 0 || self.one_filter() {
            let number = regs.syscall_number();
            if let Some(verdict) = self.verdicts.cached_verdict(number) {
                match verdict {
                    Action::Notify if self.one_filter() => return self.one_notify(waived),
                    Action::Notify => {}
                    verdict => return (verdict, None),
                }
            } else {
                // (Each way ends here: the stack is not moved, which
                // was a `memcpy` of it.)
                let stack = self.stack();
                let facts = self.facts(regs, memory);
                let verdict = if self.one_filter() {
                    // One filter decides alone: nothing to skip.
                    evaluate(&stack, &facts)
                } else {
                    evaluate_deciding(&stack, self.deciding(&stack, number), &facts)
                };
                return match verdict {
                    Action::Notify if self.one_filter() => self.one_notify(waived),
                    Action::Notify => self.routed(&stack, &facts, waived),
                    verdict => (verdict, None),
                };
            }
        }
        self.routed(&self.stack(), &self.facts(regs, memory), waived)
    }

    /// The verdict of a thread's one filter, `Notify`: allowed if waived
    /// (its server allowed it), else asked of its server, or refused if
    /// it has none.
    #[inline(always)]
    fn one_notify(&self, waived: u8) -> (Action, Option<u8>) {
        if waived & 1 != 0 {
            (Action::Allow, None)
        } else if self.first_served() {
            (Action::Notify, Some(0))
        } else {
            (Action::Errno(ErrorCode::Denied.raw() as u16), None)
        }
    }

    /// The filters whose verdict for syscall `number` can be other than
    /// `Allow` (`VerdictCache::deciding_filters`), by their positions in
    /// the stack the cache was computed for; all of them should a filter
    /// of the attached stack be missing from `stack` (the positions would
    /// not match).
    #[inline(always)]
    fn deciding(&self, stack: &Stack<'_>, number: u64) -> u8 {
        if stack.len() == self.attached.len() {
            self.verdicts.deciding_filters(number)
        } else {
            u8::MAX
        }
    }

    /// The facts the rules are evaluated on, built only when rules are
    /// (a cached verdict needs none). Word by word (the view's): a slice
    /// copy was a call to `memcpy`. Built in one go: each `with_*` copy
    /// of the facts was a copy of the whole struct. (Inlined: as a
    /// closure the compiler called it, and the facts went through
    /// memory.)
    #[inline(always)]
    fn facts<'m>(&self, regs: &UserContext, memory: &'m JudgedMemory) -> SyscallFacts<'m> {
        let [x0, x1, x2, x3, x4, x5, x6, x7, number] = regs.syscall_registers();
        SyscallFacts {
            number,
            object_type: self.capability.map(|(object_type, _)| object_type),
            label: MessageInfo::from(x1).label(),
            badge: self.capability.map(|(_, badge)| badge),
            args: [x0, x1, x2, x3, x4, x5, x6, x7],
            pc: regs.pc(),
            memory: memory.view(),
        }
    }

    #[cold]
    #[inline(never)]
    fn routed(&self, stack: &Stack<'_>, facts: &SyscallFacts, waived: u8) -> (Action, Option<u8>) {
        routed_verdict(stack, facts, waived, self.served())
    }
}

impl Kernel {
    /// `Notify`: the stopped call waits for the answer of the policy
    /// server of the filter at position `filter` of its thread's stack
    /// (sent like a fault message, so the server sees an ordinary call).
    /// The request is built from the stopped call's registers. A filter
    /// with no server never asks (`routed_verdict` refuses for it); one
    /// whose server went away meanwhile is answered `Denied` here.
    pub(in crate::kernel) fn notify_policy_server<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        filter: u8,
    ) {
        let server = self.objects[current]
            .filters
            .get(usize::from(filter))
            .and_then(|attached| self.live_server(attached));
        let Some(call) = self.objects[current].call.as_mut() else {
            return;
        };
        let Some((endpoint, badge)) = server else {
            call.answer = Some(StopAnswer::Policy(PolicyAnswer::Refuse(ErrorCode::Denied)));
            call.forwarded = true;
            return;
        };
        // The capability `x0` names is the one the call was judged on,
        // kept with it by `stop_call` a moment ago (looked up again here,
        // it cost every request some 20 instructions). 0 and 0 for a
        // syscall that names no capability, whatever `x0` holds
        // (`Syscall::names_capability`), and for an empty slot.
        let named = match call.capability {
            Some(judged) if Syscall::number_names_capability(call.regs[8]) => judged.capability,
            _ => crate::cap::Capability::NULL,
        };
        let (object_type, cap_badge) = if named.is_null() {
            (0, 0)
        } else {
            (u64::from(named.cap_type().raw()), named.badge())
        };
        self.policy_cookie += 1;
        self.objects[current].set_kernel_message(KernelMessage::PolicyRequest(PolicyRequest {
            filter,
            object_type,
            badge: cap_badge,
            cookie: self.policy_cookie,
        }));
        self.send_on_behalf(platform, current, endpoint, badge);
    }
}

impl Kernel {
    /// Copies the memory `current`'s syscall carries into its judged copy
    /// (`crate::judged_memory`), before its filters judge it: once per
    /// call. A policy server's "allow with" that shortens the buffer keeps
    /// the copy's first bytes; one that names another buffer, or a longer
    /// one, has that one copied (and judged) again. Called only for
    /// a syscall whose verdict may depend on memory
    /// (`VerdictCache::needs_memory`).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn take_judged_memory<P: Platform>(
        &mut self,
        platform: &P,
        current: ThreadId,
    ) {
        let thread = &self.objects[current];
        let context = &thread.context;
        match Syscall::from_number(context.syscall_number()) {
            Some(Syscall::DebugPrint | Syscall::ConsoleWriteFrame | Syscall::FilterLoad) => {
                let (address, length) = (context.arg(ArgIndex::X2), context.arg(ArgIndex::X3));
                let vspace = thread.space;
                let Some((thread, others)) = self.objects.split_thread(current) else {
                    return;
                };
                if thread.judged.narrow_to(address, length) {
                    return;
                }
                let space = vspace
                    .and_then(|v| others.get::<kind::VSpace>(v))
                    .and_then(|v| v.space.as_ref());
                let Some(space) = space else {
                    thread
                        .judged
                        .take_buffer_by_words(address, length, |_| Err(()));
                    return;
                };
                // Each page walked once (a buffer spans at most two).
                let mut page: Option<(u64, u64)> = None;
                thread.judged.take_buffer_by_words(address, length, |va| {
                    let frame = match page {
                        Some((virt, phys)) if virt == va & !0xfff => phys,
                        _ => {
                            let phys = space.user_readable_page(platform, va).ok_or(())?;
                            page = Some((va & !0xfff, phys));
                            phys
                        }
                    };
                    Ok::<u64, ()>(platform.read_phys_u64(frame + (va & 0xfff)))
                });
            }
            Some(
                Syscall::Send
                | Syscall::NBSend
                | Syscall::Call
                | Syscall::Reply
                | Syscall::ReplyRecv,
            ) => {
                if thread.judged.is_taken() {
                    return;
                }
                // The words past the registers that `message::transfer`
                // would send: up to the message's length, and only from
                // an IPC buffer.
                let length = usize::from(context.message_info().length()).min(MAX_MESSAGE_WORDS);
                let words = length.saturating_sub(abi::REGISTER_MESSAGE_WORDS);
                let buffer = thread.ipc_buffer;
                let judged = &mut self.objects[current].judged;
                match buffer {
                    Some(buffer) => judged.take_message(words, |i| {
                        let word = (abi::REGISTER_MESSAGE_WORDS + i) as u64;
                        platform.read_phys_u64(buffer + 8 * word)
                    }),
                    None => judged.take_message(0, |_| 0),
                }
            }
            // Other syscalls carry no memory: nothing to copy (and the
            // verdict cache never asks for it).
            other => debug_assert!(!other.is_some_and(Syscall::carries_memory)),
        }
    }
}
