//! Synchronous IPC through endpoints.
//!
//! The operations here change thread and endpoint state only; they return
//! what the scheduler must do next (`Effects`). The rules:
//!
//! * A send meets the first waiting receiver (FIFO), or the sender waits
//!   (or, non-blocking, gets `WouldBlock`). A receive meets the first
//!   waiting sender, or the receiver waits (or gets `WouldBlock`).
//! * A `Call` is a send after which the caller waits for the reply; the
//!   receiver then owes it a reply (`reply_to`). When a `Call` meets a
//!   waiting receiver, the CPU goes straight to the receiver (the caller
//!   is blocked anyway): the same switch the fast path makes. A kernel
//!   message (a fault, a policy request, a trace stop) that meets a
//!   waiting receiver switches the same way.
//! * `Reply` delivers to the thread owed a reply and makes it ready;
//!   `ReplyRecv` replies, then receives, and when the receive blocks the
//!   CPU goes straight to the caller it replied to.
//! * The badge of the sender's capability arrives in the receiver's `x8`.

pub mod message;
pub mod notification;
pub mod trace_stop;

use crate::endpoint_queue::{EndpointQueue, Waiting};
use crate::fault::FaultReport;
use crate::ids::ObjectId;
use crate::platform::PhysMemory;
use crate::stopped_call::{PolicyAnswer, StopAnswer};
use crate::thread::{KernelMessage, PolicyRequest, Thread, ThreadId, ThreadState, Threads};
use abi::fault::{FaultMessage, FaultReply, ServerLoss};
use abi::policy_request::PolicyAnswer as Verdict;
use abi::policy_request::POLICY_REQUEST_MEMORY_WORD;
use abi::ErrorCode;
use message::transfer;

/// Where the CPU goes after an IPC operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The calling thread carries on (its x0 holds the result).
    Continue,
    /// The calling thread waits; run the next ready thread.
    Blocked,
    /// The calling thread waits; run this thread next, directly.
    SwitchTo(ThreadId),
}

/// Most threads one IPC operation can make ready.
pub const MAX_WOKEN: usize = 3;

/// What an IPC operation asks of the scheduler.
///
/// 32 bytes, aligned to 8: the kernel target (strict alignment) copies a
/// value this size in four load/store pairs, a larger one through
/// `memcpy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct Effects {
    /// Where the CPU goes.
    pub next: Next,
    /// Threads that became ready and must join the run queue, in order.
    woken: [Option<ThreadId>; MAX_WOKEN],
    /// A message that carries capabilities went from the first thread to
    /// the second (the kernel then moves them); `None` for none. Set only
    /// for such a message, so that the common one costs the kernel no
    /// second look at the sender.
    carried_caps: [Option<ThreadId>; 2],
}

const _: () = assert!(core::mem::size_of::<Effects>() <= 32);

impl Effects {
    pub(crate) fn new(next: Next) -> Effects {
        Effects {
            next,
            woken: [None; MAX_WOKEN],
            carried_caps: [None; 2],
        }
    }

    /// A message went from `from` to `to`; `carries_caps`: it names
    /// capabilities to move (`transfer` says).
    fn delivering(mut self, from: ThreadId, to: ThreadId, carries_caps: bool) -> Effects {
        if carries_caps {
            self.carried_caps = [Some(from), Some(to)];
        }
        self
    }

    pub(crate) fn wake(mut self, thread: ThreadId) -> Effects {
        self.add_woken(thread);
        self
    }

    /// `wake`, in place.
    pub(crate) fn add_woken(&mut self, thread: ThreadId) {
        if let Some(free) = self.woken.iter_mut().find(|w| w.is_none()) {
            *free = Some(thread);
        }
    }

    /// The thread a message carrying capabilities went from and the one
    /// it went to, if one was delivered.
    pub fn carried_caps(&self) -> Option<(ThreadId, ThreadId)> {
        Some((self.carried_caps[0]?, self.carried_caps[1]?))
    }

    /// The caller carries on and `thread` became ready (a `Reply`).
    pub fn continue_and_wake(thread: ThreadId) -> Effects {
        Effects::new(Next::Continue).wake(thread)
    }

    /// The woken threads.
    pub fn woken(&self) -> impl Iterator<Item = ThreadId> + '_ {
        // Filled in order (`add_woken`): the first empty entry ends them.
        self.woken.iter().map_while(|w| *w)
    }
}

/// Why an IPC operation failed (mapped to `ErrorCode` by the kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpcError {
    /// A non-blocking operation found no partner.
    WouldBlock,
    /// `Reply` with nobody owed a reply.
    NoReplyTarget,
}

/// How a send behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendKind {
    /// Wait for a receiver (`Send`, `Call`) or not (`NBSend`).
    pub blocking: bool,
    /// A `Call`: wait for the reply afterwards.
    pub call: bool,
}

/// `sender` sends its message through endpoint `endpoint` (index
/// `endpoint_index`) with `badge`. Inlined into `ipc_syscall`'s body, its
/// one caller, as `reply_receive` is: called, each built its `Effects` in
/// memory for the caller to copy again.
#[inline(always)]
pub fn send<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    endpoint: &mut EndpointQueue,
    endpoint_index: ObjectId,
    sender: ThreadId,
    badge: u64,
    kind: SendKind,
) -> Result<Effects, IpcError> {
    if let Some(receiver) = endpoint.pop_front_of(threads, Waiting::Receivers) {
        let (from, to) = threads.pair_mut(sender, receiver);
        let caps = transfer(phys, from, to, badge);
        if kind.call {
            let effects = Effects::new(Next::SwitchTo(receiver)).delivering(sender, receiver, caps);
            let displaced = owe_reply(from, sender, to, receiver);
            return Ok(displace(threads, displaced, effects));
        }
        from.context.set_result(ErrorCode::Ok);
        to.make_ready();
        return Ok(Effects::new(Next::Continue)
            .wake(receiver)
            .delivering(sender, receiver, caps));
    }
    if !kind.blocking {
        return Err(IpcError::WouldBlock);
    }
    threads[sender].block_on_send(endpoint_index, badge, kind.call, false);
    endpoint.push_back(threads, sender, Waiting::Senders);
    Ok(Effects::new(Next::Blocked))
}

/// `receiver` receives from endpoint `endpoint`.
pub fn receive<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    endpoint: &mut EndpointQueue,
    endpoint_index: ObjectId,
    receiver: ThreadId,
    blocking: bool,
) -> Result<Effects, IpcError> {
    receive_inline(phys, threads, endpoint, endpoint_index, receiver, blocking)
}

/// `receive`, inlined into `reply_receive`: called, its effects came back
/// through memory and were packed again (30 instructions of a slow
/// `ReplyRecv`).
#[inline(always)]
fn receive_inline<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    endpoint: &mut EndpointQueue,
    endpoint_index: ObjectId,
    receiver: ThreadId,
    blocking: bool,
) -> Result<Effects, IpcError> {
    if let Some(sender) = endpoint.pop_front_of(threads, Waiting::Senders) {
        let (from, to) = threads.pair_mut(sender, receiver);
        let (badge, call, kernel_message) = match *from.state_ref() {
            ThreadState::BlockedOnSend {
                badge,
                call,
                kernel_message,
                ..
            } => (badge, call, kernel_message),
            ThreadState::EndPending { badge, .. } => {
                // An ended thread's end message: taken, no reply owed.
                deliver_end(phys, from, to, badge);
                from.end_with(ThreadState::Ended);
                return Ok(Effects::new(Next::Continue));
            }
            _ => unreachable!("only blocked senders and ended threads wait in a sender queue"),
        };
        if kernel_message {
            // The pair in hand serves the message and the owed answer.
            deliver_kernel_message(phys, from, to, badge);
            let displaced = owe_answer(from, sender, to, receiver);
            return Ok(displace(threads, displaced, Effects::new(Next::Continue)));
        }
        let caps = transfer(phys, from, to, badge);
        let effects = Effects::new(Next::Continue).delivering(sender, receiver, caps);
        if call {
            let displaced = owe_reply(from, sender, to, receiver);
            return Ok(displace(threads, displaced, effects));
        }
        from.context.set_result(ErrorCode::Ok);
        from.make_ready();
        return Ok(effects.wake(sender));
    }
    if !blocking {
        return Err(IpcError::WouldBlock);
    }
    threads[receiver].block_on_receive(endpoint_index);
    endpoint.push_back(threads, receiver, Waiting::Receivers);
    Ok(Effects::new(Next::Blocked))
}

/// `sender` has a kernel message to send (`Thread::kernel_message`: a
/// fault, a policy request or a trace stop) through `endpoint` (its fault
/// endpoint, its filter's policy server, its tracer): the message goes to
/// the first waiting receiver, or the thread waits in the endpoint's
/// queue; either way it then waits for the answer. Its registers are
/// untouched.
pub fn send_kernel_message<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    endpoint: &mut EndpointQueue,
    endpoint_index: ObjectId,
    sender: ThreadId,
    badge: u64,
) -> Effects {
    if endpoint.waiting() == Waiting::Receivers {
        if let Some(receiver) = endpoint.pop_front(threads) {
            // One look at the two threads for the message, the handler's
            // wake-up and the owed reply (three were a third of a traced
            // syscall's stop).
            let (from, to) = threads.pair_mut(sender, receiver);
            deliver_kernel_message(phys, from, to, badge);
            let displaced = owe_answer(from, sender, to, receiver);
            // The sender waits: straight to its server, as a `Call` goes
            // (the scheduler's `possibleSwitchTo` rule still applies).
            let effects = Effects::new(Next::SwitchTo(receiver));
            return displace(threads, displaced, effects);
        }
    }
    threads[sender].block_on_send(endpoint_index, badge, true, true);
    endpoint.push_back(threads, sender, Waiting::Senders);
    Effects::new(Next::Blocked)
}

/// `ended` has ended (`Thread::end` says how) and its fault endpoint is
/// `endpoint`: its end message goes to the first waiting receiver (returned:
/// it is ready, to be queued by the caller), or `ended` waits in the
/// endpoint's queue as a sender (`EndPending`) until one receives. No reply
/// is owed either way.
pub fn send_end<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    endpoint: &mut EndpointQueue,
    endpoint_index: ObjectId,
    ended: ThreadId,
    badge: u64,
) -> Option<ThreadId> {
    if endpoint.waiting() == Waiting::Receivers {
        if let Some(receiver) = endpoint.pop_front(threads) {
            let (from, to) = threads.pair_mut(ended, receiver);
            deliver_end(phys, from, to, badge);
            to.make_ready();
            return Some(receiver);
        }
    }
    threads[ended].end_pending(endpoint_index, badge);
    endpoint.push_back(threads, ended, Waiting::Senders);
    None
}

/// The end message of `ended` into `receiver`'s registers
/// (`abi::fault::ThreadEnd::encode`) and IPC buffer (its loss as a policy
/// server, `abi::fault::ServerLoss`; a receiver without a buffer gets the
/// register words only).
fn deliver_end<M: PhysMemory>(phys: &mut M, ended: &Thread, receiver: &mut Thread, badge: u64) {
    let words = ended
        .end
        .map_or([0; abi::fault::END_WORDS], abi::fault::ThreadEnd::encode);
    let length = match receiver.ipc_buffer {
        Some(buffer) => {
            let first = abi::fault::END_SERVER_LOSS_WORD as u64;
            for (i, word) in server_loss(ended).encode().into_iter().enumerate() {
                phys.write_phys_u64(buffer + 8 * (first + i as u64), word);
            }
            abi::fault::END_MESSAGE_WORDS
        }
        None => abi::fault::END_WORDS as u8,
    };
    let context = &mut receiver.context;
    context.set_result(ErrorCode::Ok);
    context.set_message_info(abi::MessageInfo::with(abi::fault::END_LABEL, length));
    context.set_message_words(words);
    context.set_badge(badge);
}

/// The kernel message of `sender` into `receiver`'s registers (and, for
/// a policy request, IPC buffer).
#[inline(always)]
fn deliver_kernel_message<M: PhysMemory>(
    phys: &mut M,
    sender: &Thread,
    receiver: &mut Thread,
    badge: u64,
) {
    match sender.kernel_message() {
        Some(KernelMessage::PolicyRequest(request)) => {
            deliver_policy_request(phys, request, sender, receiver, badge)
        }
        Some(KernelMessage::TraceStop(stop)) => {
            trace_stop::deliver_trace_stop(phys, stop, sender, receiver, badge)
        }
        Some(KernelMessage::Fault(report)) => {
            deliver_fault(Some(*report), server_loss(sender), receiver, badge)
        }
        None => deliver_fault(None, ServerLoss::NONE, receiver, badge),
    }
}

/// What `thread`'s loss as a policy server came to (`Thread::served`).
fn server_loss(thread: &Thread) -> ServerLoss {
    ServerLoss {
        attachments: u64::from(thread.served.lost),
        refused: u64::from(thread.served.refused),
    }
}

/// A fault message (`abi::fault::FaultMessage`, then the faulter's loss as
/// a policy server) into `handler`'s registers (all zero words for no
/// report, which no sender has).
#[inline(always)]
fn deliver_fault(report: Option<FaultReport>, loss: ServerLoss, handler: &mut Thread, badge: u64) {
    let words = report.map_or([0; 4], |r| FaultMessage::new(r.esr, r.far, r.pc).encode());
    let context = &mut handler.context;
    context.set_result(ErrorCode::Ok);
    context.set_message_info(FaultMessage::info());
    let [esr, far, pc, word3] = words;
    let [lost, refused] = loss.encode();
    context.set_message_words([esr, far, pc, word3, lost, refused]);
    context.set_badge(badge);
}

/// A policy request into `server`'s registers and IPC buffer
/// (`abi::policy_request::PolicyRequest::encode`).
fn deliver_policy_request<M: PhysMemory>(
    phys: &mut M,
    request: &PolicyRequest,
    asker: &Thread,
    server: &mut Thread,
    badge: u64,
) {
    // The call's registers, kept with the thread while it asks (a call
    // cancelled takes its request with it, so there is one: the
    // invariants check it); word by word: array copies can become
    // `memcpy` calls on the strict-alignment target. Were there none,
    // the server would see zeros and its answer would find no call to
    // decide, which the thread learns as `Denied`
    // (`answer_policy_request`): closed either way.
    let no_call = [0; 9];
    debug_assert!(asker.call.as_ref().is_some(), "a request without its call");
    let a = asker.call.as_ref().map_or(&no_call, |call| &call.regs);
    // The judged copy of the memory the call carries: what the server
    // decides on is what runs if it allows (`crate::judged_memory`).
    let (memory, memory_length, judged) = asker.judged.described();
    let words = abi::policy_request::PolicyRequest {
        number: a[8],
        object_type: request.object_type,
        badge: request.badge,
        thread: u64::from(asker.number),
        cookie: request.cookie,
        args: [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]],
        pc: asker.context.pc(),
        memory,
        memory_length,
        judged,
    }
    .encode();
    if let Some(buffer) = server.ipc_buffer {
        // One translation for the buffer words (the buffer is a page).
        phys.write_phys_words(buffer + 8 * 6, &words[6..]);
        // Word by word (a byte copy was `memcpy`, byte by byte), each
        // read from the copy in one load (`JudgedMemory::copied_words`;
        // words assembled from the bytes were some 20 instructions each);
        // the last word's bytes past the copy are zero.
        let mut at = buffer + 8 * POLICY_REQUEST_MEMORY_WORD as u64;
        for word in asker.judged.copied_words() {
            phys.write_phys_u64(at, word);
            at += 8;
        }
    }
    let context = &mut server.context;
    context.set_result(ErrorCode::Ok);
    context.set_message_info(abi::policy_request::PolicyRequest::info());
    context.set_message_words([words[0], words[1], words[2], words[3], words[4], words[5]]);
    context.set_badge(badge);
}

/// `sender` waits for `receiver`'s answer to its kernel message:
/// `owe_reply`, in the `BlockedOnAnswer` state. Returns the caller
/// `receiver` owed a reply before (`displace`).
#[inline(always)]
fn owe_answer(
    sender: &mut Thread,
    sender_id: ThreadId,
    receiver: &mut Thread,
    receiver_id: ThreadId,
) -> Option<ThreadId> {
    let displaced = owe_reply(sender, sender_id, receiver, receiver_id);
    sender.block_on_answer();
    displaced
}

/// `replier` replies to the thread it owes a reply; that thread is ready
/// afterwards (returned). A faulted thread is resumed as the reply's label
/// says (retry, new PC), or marked stopped (`ThreadState::Faulted`, which
/// the kernel then cleans up) for `FAULT_REPLY_STOP`; its registers get
/// no message.
pub fn reply<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    replier: ThreadId,
) -> Result<ThreadId, IpcError> {
    reply_inline(phys, threads, replier)
}

/// `reply`, inlined into `reply_receive`.
#[inline(always)]
fn reply_inline<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    replier: ThreadId,
) -> Result<ThreadId, IpcError> {
    let caller = threads[replier]
        .reply_to
        .take()
        .ok_or(IpcError::NoReplyTarget)?;
    answer_inline(phys, threads, replier, caller, true)
}

/// `replier` answers `caller`, which it owed a reply (through `reply_to`,
/// or through a Reply capability), exactly as `reply` does; the caller is
/// ready afterwards (returned). `NoReplyTarget` if it no longer waits.
pub fn answer<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    replier: ThreadId,
    caller: ThreadId,
) -> Result<ThreadId, IpcError> {
    answer_inline(phys, threads, replier, caller, false)
}

/// `answer`; `from_reply_to`: the reply was owed through `reply_to`
/// (just taken), so the caller stops naming the replier in `reply_from`.
#[inline(always)]
fn answer_inline<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    replier: ThreadId,
    caller: ThreadId,
    from_reply_to: bool,
) -> Result<ThreadId, IpcError> {
    if replier == caller {
        // A running thread waits for no reply.
        return Err(IpcError::NoReplyTarget);
    }
    let (from, to) = threads.pair_mut(replier, caller);
    if from_reply_to {
        to.reply_from = None;
    }
    match to.state_ref() {
        ThreadState::BlockedOnReply => {}
        ThreadState::BlockedOnAnswer => {
            take_answer(phys, from, to);
            return Ok(caller);
        }
        _ => return Err(IpcError::NoReplyTarget),
    }
    transfer(phys, from, to, 0);
    to.make_ready();
    from.context.set_result(ErrorCode::Ok);
    Ok(caller)
}

/// `replier`'s reply is the answer to `caller`'s kernel message: a
/// tracer's lets it go on, a policy server's decides its stopped call, a
/// fault handler's resumes or stops it. Takes the pair `answer_inline`
/// already looked up: each look at a thread by id costs a bounds and kind
/// check.
fn take_answer<M: PhysMemory>(phys: &mut M, replier: &mut Thread, caller: &mut Thread) {
    let message = caller.take_kernel_message();
    if let Some(KernelMessage::TraceStop(stop)) = message {
        trace_stop::answer_trace_stop(phys, replier, caller, stop);
        replier.context.set_result(ErrorCode::Ok);
        return;
    }
    let label = message::sent_info(replier).label();
    if let Some(KernelMessage::PolicyRequest(request)) = message {
        // Only the message registers: a copy of all 31 saved registers
        // was a 216-byte memcpy the optimiser did not always drop.
        let verdict = Verdict::decode(label, &replier.context.message_words());
        answer_policy_request(caller, &request, verdict);
        replier.context.set_result(ErrorCode::Ok);
        return;
    }
    let reply = FaultReply::decode(label, replier.context.message_word(0));
    let report = match message {
        Some(KernelMessage::Fault(report)) => Some(report),
        _ => None,
    };
    match (reply, report) {
        (FaultReply::SetPc(pc), _) => {
            caller.context.pc = pc;
            caller.make_ready();
        }
        (FaultReply::Stop, Some(report)) => caller.end_with(ThreadState::Faulted(report)),
        _ => caller.make_ready(),
    }
    replier.context.set_result(ErrorCode::Ok);
}

/// Applies a policy server's answer (`verdict`, its reply decoded by
/// `abi::policy_request::PolicyAnswer::decode`) to the stopped call of the
/// thread that asked, which is ready afterwards and goes on with it (`Kernel::continue_call`): an
/// allow lets the filters judge the call again with the asking filter's
/// `Notify` waived (with new `x2..x7` for "allow with these"), anything
/// else decides it. The thread's own registers are not touched.
fn answer_policy_request(asker: &mut Thread, request: &PolicyRequest, verdict: Verdict) {
    asker.make_ready();
    let Some(call) = asker.call.as_mut() else {
        // No call to answer (cannot happen while requests are only sent
        // for stopped calls): the thread learns nothing ran.
        asker.context.set_result(ErrorCode::Denied);
        return;
    };
    let asking = 1u8.checked_shl(u32::from(request.filter)).unwrap_or(0);
    call.forwarded = true;
    let answer = match verdict {
        Verdict::Allow => {
            call.waived |= asking;
            PolicyAnswer::Allow
        }
        Verdict::AllowWith(regs) => {
            // Other filters' servers allowed the old arguments, not these.
            call.regs[2..8].copy_from_slice(&regs);
            call.waived = asking;
            PolicyAnswer::AllowWith
        }
        // An unknown label or error code came as `Errno(Denied)`.
        Verdict::Errno(code) => PolicyAnswer::Refuse(code),
        Verdict::Emulate { x0, x8 } => PolicyAnswer::Emulate { x0, x8 },
        Verdict::Kill => PolicyAnswer::Kill,
    };
    call.answer = Some(StopAnswer::Policy(answer));
}

/// `thread`'s policy request will never be answered (its server ended,
/// moved on, or lost its endpoint): its call goes on refused with
/// `Denied` (policy fails closed). The thread is ready afterwards.
pub fn fail_policy_request(threads: &mut impl Threads, thread: ThreadId) {
    let asker = &mut threads[thread];
    asker.take_kernel_message();
    match asker.call.as_mut() {
        Some(call) => {
            call.forwarded = true;
            call.answer = Some(StopAnswer::Policy(PolicyAnswer::Refuse(ErrorCode::Denied)));
        }
        None => asker.context.set_result(ErrorCode::Denied),
    }
    asker.make_ready();
}

/// `ReplyRecv`: reply if a reply is owed, then receive. When the receive
/// waits, the CPU goes straight to the caller just replied to.
#[inline(always)]
pub fn reply_receive<M: PhysMemory>(
    phys: &mut M,
    threads: &mut impl Threads,
    endpoint: &mut EndpointQueue,
    endpoint_index: ObjectId,
    replier: ThreadId,
) -> Result<Effects, IpcError> {
    let replied = reply_inline(phys, threads, replier).ok();
    // Changed in place: building a new `Effects` from this one was two
    // `memcpy` calls.
    let mut effects = receive_inline(phys, threads, endpoint, endpoint_index, replier, true)?;
    if let Some(caller) = replied {
        if effects.next == Next::Blocked {
            effects.next = Next::SwitchTo(caller);
        } else {
            effects.add_woken(caller);
        }
    }
    Ok(effects)
}

/// `caller` (thread `caller_id`) has delivered a `Call` to `receiver`
/// (thread `receiver_id`) and waits for the reply. Returns the caller the
/// receiver owed a reply before, which will get none (see `displace`).
#[inline(always)]
fn owe_reply(
    caller: &mut Thread,
    caller_id: ThreadId,
    receiver: &mut Thread,
    receiver_id: ThreadId,
) -> Option<ThreadId> {
    caller.block_on_reply();
    caller.reply_from = Some(receiver_id);
    receiver
        .reply_to
        .replace(caller_id)
        .filter(|previous| *previous != caller_id)
}

/// The receiver of a `Call` never answered its previous caller
/// (`displaced`): that caller learns it will get no reply, instead of
/// waiting forever.
/// (The effects are changed in place: passed through the cold call and
/// back, they were copied twice on every `Call`.)
#[inline(always)]
fn displace(
    threads: &mut impl Threads,
    displaced: Option<ThreadId>,
    mut effects: Effects,
) -> Effects {
    if let Some(previous) = displaced {
        abandon_caller(threads, previous, &mut effects);
    }
    effects
}

/// `displace`'s work, out of the IPC paths.
#[cold]
#[inline(never)]
fn abandon_caller(threads: &mut impl Threads, previous: ThreadId, effects: &mut Effects) {
    threads[previous].reply_from = None;
    if threads[previous].policy_request().is_some() {
        // Its policy server moved on without a verdict: closed.
        fail_policy_request(threads, previous);
    } else if let Some(stop) = threads[previous].take_trace_stop() {
        // Its tracer moved on without an answer: open.
        threads[previous].abandon_trace_stop(stop);
    } else if threads[previous].state() == ThreadState::BlockedOnAnswer {
        // A faulted thread cannot take an error code: its handler moved
        // on without an answer, so it stops (the kernel ends a woken
        // thread in the `Faulted` state).
        let stopped = threads[previous].take_fault_report();
        match stopped {
            Some(report) => threads[previous].end_with(ThreadState::Faulted(report)),
            None => threads[previous].make_ready(),
        }
    } else {
        fail_waiter(threads, previous, ErrorCode::ObjectDeleted);
    }
    effects.add_woken(previous);
}

/// Wakes a blocked thread with error `code` in x0.
pub fn fail_waiter(threads: &mut impl Threads, thread: ThreadId, code: ErrorCode) {
    let waiter = &mut threads[thread];
    // Its call is over: a message it was to send goes with it.
    waiter.judged.forget();
    waiter.context.end_wait_with(code);
    waiter.make_ready();
}

#[cfg(test)]
mod tests;
