//! Endpoints: IPC through an endpoint capability, capability transfer,
//! messages the kernel sends on a thread's behalf, and an endpoint's end.

use crate::cap::ObjectId;
use crate::ipc::message;
use crate::ipc::{self, Effects, IpcError, Next, SendKind};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::IpcOperation;
use crate::syscall::SyscallResult;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::{ErrorCode, IPC_BUFFER_RECEIVE_SLOT_WORD, IPC_BUFFER_SEND_CAPS_WORD};
use arch::object_memory::kind;

impl Kernel {
    /// An IPC syscall: checks the endpoint capability, runs the operation
    /// and reports what the scheduler must do.
    ///
    /// `ReplyRecv`, a server loop's one syscall, has a copy of its own with
    /// the operation a constant; the other operations share one
    /// (`ipc_operation`, one function with two copies). With one copy for
    /// all of them, a slow `ReplyRecv` paid 41 instructions more for the
    /// tests of the operation (does it send, receive, reply first, which
    /// rights, which queue operation), and a slow `Call` 23 more, its path
    /// laid out around the reply-and-receive paths the shared copy now
    /// lacks (`portcullis bench`). A third copy for `Call` cost it 26 more: the
    /// compiler built its `Effects` on the stack byte by byte and moved
    /// them into the result through a 15-byte `memcpy`.
    #[inline(always)]
    pub(in crate::kernel) fn ipc_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: IpcOperation,
        cptr: u64,
    ) -> SyscallResult {
        match operation {
            IpcOperation::ReplyRecv => {
                self.ipc_operation::<P, true>(platform, current, operation, cptr)
            }
            _ => self.ipc_operation::<P, false>(platform, current, operation, cptr),
        }
    }

    /// The body of `ipc_syscall`, one copy for `ReplyRecv`
    /// (`REPLY_RECV`: `operation` is that constant) and one for the rest.
    #[inline(never)]
    fn ipc_operation<P: Platform, const REPLY_RECV: bool>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: IpcOperation,
        cptr: u64,
    ) -> SyscallResult {
        self.ipc_operation_inline::<P, REPLY_RECV>(platform, current, operation, cptr)
    }

    /// `ipc_operation`, inlined where it is called: the IPC entry's `Call`
    /// (`Kernel::ipc_entry`) runs it in place, which saved a slow `Call` 51
    /// instructions (the entry's other callers keep the one call: inlined
    /// there too, a slow `ReplyRecv` paid 20 more, the generic entry's
    /// rows some 85).
    #[inline(always)]
    pub(in crate::kernel) fn ipc_operation_inline<P: Platform, const REPLY_RECV: bool>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: IpcOperation,
        cptr: u64,
    ) -> SyscallResult {
        let operation = if REPLY_RECV {
            IpcOperation::ReplyRecv
        } else {
            operation
        };
        // A message longer than the registers, or carrying capabilities,
        // is read from the sender's IPC buffer: a thread given none by
        // `TcbSetSpace` (or whose buffer Frame was destroyed) cannot send
        // one.
        let thread = &self.objects[current];
        let sent = message::sent_info(thread);
        if operation.sends() && thread.ipc_buffer.is_none() && !message::fits_in_registers(sent) {
            return SyscallResult::Return(ErrorCode::InvalidAddress);
        }
        // Read now, in the same look at the thread (the capability look-up
        // below changes neither): each later look costs a bounds and kind
        // check.
        let has_bound = thread.bound_notification.is_some();
        if operation == IpcOperation::Reply {
            return match ipc::reply(platform, &mut self.objects, current) {
                Ok(caller) => SyscallResult::Ipc(Effects::continue_and_wake(caller)),
                Err(error) => SyscallResult::Return(ipc_error(error)),
            };
        }
        let needed = if operation.sends() && operation != IpcOperation::ReplyRecv {
            Rights::WRITE
        } else {
            Rights::READ
        };
        let cap = match self.thread_cap(current, cptr, CapType::Endpoint, needed) {
            Ok(cap) => cap,
            // `Send` and `NBSend` also answer a saved reply.
            Err(ErrorCode::WrongCapabilityType)
                if matches!(operation, IpcOperation::Send | IpcOperation::NBSend) =>
            {
                return match self.reply_capability(current, cptr) {
                    Some(reply) => self.reply_through_capability(platform, current, reply),
                    None => SyscallResult::Return(ErrorCode::WrongCapabilityType),
                }
            }
            Err(code) => return SyscallResult::Return(code),
        };
        // Capabilities travel only through an endpoint capability with the
        // grant right; asking without it changes nothing.
        // (Not a reply: the decoder refused one whose message names
        // capabilities, so `ReplyRecv`'s copy skips the test; with it, a
        // slow `ReplyRecv` paid 14 instructions, most of them in the
        // layout the test's branch forced. A sender's capabilities that
        // its receive half takes were checked when that sender sent.)
        debug_assert!(operation.may_carry_caps() || sent.caps() == 0 || !operation.sends());
        let carries_caps = !REPLY_RECV && operation.sends() && sent.caps() != 0;
        if carries_caps && !cap.rights().grant() {
            return SyscallResult::Return(ErrorCode::MissingRights);
        }
        // A bound notification with bits pending ends a receive at once.
        let receives = !operation.sends() || operation == IpcOperation::ReplyRecv;
        if receives && has_bound {
            if let Some(result) = self.receive_bound(platform, current, operation) {
                return result;
            }
        }
        let endpoint_id = cap.object();
        let Some(mut endpoint) = self.objects.get::<kind::Endpoint>(endpoint_id).copied() else {
            return SyscallResult::Return(ErrorCode::InvalidCapability);
        };
        let threads = &mut self.objects;
        let send = |blocking, call| SendKind { blocking, call };
        let result = match operation {
            IpcOperation::Send => ipc::send(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                cap.badge(),
                send(true, false),
            ),
            IpcOperation::NBSend => ipc::send(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                cap.badge(),
                send(false, false),
            ),
            IpcOperation::Call => ipc::send(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                cap.badge(),
                send(true, true),
            ),
            IpcOperation::Recv => {
                ipc::receive(platform, threads, &mut endpoint, endpoint_id, current, true)
            }
            IpcOperation::NBRecv => ipc::receive(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                false,
            ),
            IpcOperation::ReplyRecv => {
                ipc::reply_receive(platform, threads, &mut endpoint, endpoint_id, current)
            }
            IpcOperation::Reply => unreachable!("handled above"),
        };
        if let Some(queue) = self.objects.get_mut::<kind::Endpoint>(endpoint_id) {
            *queue = endpoint;
        }
        match result {
            Ok(effects) => {
                if let Some((from, to)) = effects.carried_caps() {
                    self.transfer_caps(platform, from, to);
                }
                SyscallResult::Ipc(effects)
            }
            Err(error) => SyscallResult::Return(ipc_error(error)),
        }
    }

    /// Moves the capabilities a delivered message carries: the sender
    /// lists them in its IPC buffer (words `IPC_BUFFER_SEND_CAPS_WORD..`),
    /// the receiver names where they go (word
    /// `IPC_BUFFER_RECEIVE_SLOT_WORD`). Each arrives as a copy (a child of
    /// the sender's); the first that cannot (bad pointer, occupied or
    /// missing slot) stops the transfer, and the receiver's message info
    /// says how many arrived.
    #[inline(never)]
    pub(in crate::kernel) fn transfer_caps<P: Platform>(
        &mut self,
        platform: &mut P,
        from: ThreadId,
        to: ThreadId,
    ) {
        let wanted = message::sent_info(&self.objects[from]).caps();
        if wanted == 0 {
            return;
        }
        let (sender, receiver) = (&self.objects[from], &self.objects[to]);
        let (sender, receiver) = (
            (sender.ipc_buffer, sender.cspace),
            (receiver.ipc_buffer, receiver.cspace),
        );
        let mut moved = 0u8;
        if let (
            (Some(send_buffer), Some(source_cnode)),
            (Some(receive_buffer), Some(target_cnode)),
        ) = (sender, receiver)
        {
            let first_target =
                platform.read_phys_u64(receive_buffer + 8 * IPC_BUFFER_RECEIVE_SLOT_WORD as u64);
            for i in 0..u64::from(wanted) {
                let cptr = platform
                    .read_phys_u64(send_buffer + 8 * (IPC_BUFFER_SEND_CAPS_WORD as u64 + i));
                let slots = self.objects.slot(source_cnode, cptr).and_then(|source| {
                    Ok((
                        source,
                        self.objects
                            .slot(target_cnode, first_target.wrapping_add(i))?,
                    ))
                });
                match slots.and_then(|(source, target)| self.objects.copy(source, target)) {
                    Ok(()) => moved += 1,
                    Err(_) => break,
                }
            }
        }
        let context = &mut self.objects[to].context;
        context.set_message_info(context.message_info().with_caps(moved));
    }

    /// Applies what an IPC operation asked of the scheduler.
    ///
    /// Inlined into its callers, with `switch_to_inline`: called, its
    /// `Effects` went through memory and it tail-called an out-of-line
    /// copy of the switch, which cost a slow `Call` or `ReplyRecv` some 10
    /// to 20 instructions and a trace stop or policy request as much again
    /// (`portcullis bench`).
    #[inline(always)]
    pub(in crate::kernel) fn apply_ipc<P: Platform>(&mut self, platform: &mut P, effects: Effects) {
        // A caller that waits leaves the CPU before anyone wakes, so that
        // waking a more urgent thread does not ask it, blocked, to yield
        // (a stale NEED_RESCHED would also keep it off the fast path).
        if effects.next != Next::Continue {
            self.current = None;
        }
        for thread in effects.woken() {
            match *self.objects[thread].state_ref() {
                // A fault handler replied "stop": the thread ends here.
                ThreadState::Faulted(report) => {
                    self.end_thread(platform, thread, ThreadState::Faulted(report))
                }
                // Its policy server answered "kill".
                ThreadState::Exited(status) => {
                    self.end_thread(platform, thread, ThreadState::Exited(status))
                }
                _ => self.make_ready(thread),
            }
        }
        let Next::SwitchTo(thread) = effects.next else {
            return;
        };
        // What the tests below read of the partner, in one look (the
        // run queue's search is a call, after which the compiler looked
        // the thread up again).
        let partner = &self.objects[thread];
        let ends = matches!(
            partner.state_ref(),
            ThreadState::Faulted(_) | ThreadState::Exited(_)
        );
        let (affinity, priority) = (usize::from(partner.affinity), partner.priority);
        if ends {
            // A fault reply "stop" sent with ReplyRecv: the faulter ends
            // instead of resuming at the faulting instruction.
            let state = *self.objects[thread].state_ref();
            self.end_thread(platform, thread, state);
            return;
        }
        if affinity != self.cpu
            || self.run_queues[self.cpu % arch::layout::MAX_CPUS]
                .ready
                .highest_priority()
                .is_some_and(|ready| ready > priority)
        {
            // seL4's possibleSwitchTo: the direct switch may not jump a
            // more urgent ready thread, nor take a thread to another CPU
            // than its own; the partner queues and its CPU's scheduler
            // picks.
            self.make_ready(thread);
            return;
        }
        let _ = self.switch_to_inline(platform, thread);
    }

    /// Sends the kernel message `thread` has pending (a fault report, a
    /// policy request or a trace stop) to endpoint `endpoint` as if the
    /// thread had called it, with `badge`; the thread waits for the reply.
    pub(in crate::kernel) fn send_on_behalf<P: Platform>(
        &mut self,
        platform: &mut P,
        thread: ThreadId,
        endpoint: ObjectId,
        badge: u64,
    ) {
        let Some(mut queue) = self.objects.get::<kind::Endpoint>(endpoint).copied() else {
            return;
        };
        let effects = ipc::send_kernel_message(
            platform,
            &mut self.objects,
            &mut queue,
            endpoint,
            thread,
            badge,
        );
        if let Some(body) = self.objects.get_mut::<kind::Endpoint>(endpoint) {
            *body = queue;
        }
        self.apply_ipc(platform, effects);
    }

    /// Every thread waiting in the endpoint wakes: a sender or receiver
    /// with `ObjectDeleted`, a policy request refused (closed), a trace
    /// stop continued (open), a faulted thread left to fault again.
    pub(in crate::kernel) fn endpoint_destroyed(&mut self, object: ObjectId) {
        let Some(queue) = self
            .objects
            .get_mut::<kind::Endpoint>(object)
            .map(core::mem::take)
        else {
            return;
        };
        let mut queue = queue;
        while let Some(waiter) = queue.pop_front(&mut self.objects) {
            let thread = &self.objects[waiter];
            if thread.state().is_kept_end() {
                // Its end message goes with the endpoint; it stays ended.
                self.objects[waiter].end_with(ThreadState::Ended);
                continue;
            }
            let faulted = thread.fault_report().is_some();
            let asked_policy = thread.policy_request().is_some();
            if asked_policy {
                // Its policy server's endpoint is gone: closed.
                ipc::fail_policy_request(&mut self.objects, waiter);
            } else if let Some(stop) = self.objects[waiter].take_trace_stop() {
                // Its tracer's endpoint is gone: open, and it runs on
                // untraced (other threads traced through this endpoint
                // find it gone at their next stop: `live_tracer`).
                let thread = &mut self.objects[waiter];
                thread.abandon_trace_stop(stop);
                thread.detach_tracer();
            } else if faulted {
                // No handler any more: the faulting instruction runs
                // again, faults again and stops the thread.
                self.objects[waiter].make_ready();
            } else {
                ipc::fail_waiter(&mut self.objects, waiter, ErrorCode::ObjectDeleted);
            }
            self.make_ready(waiter);
        }
    }
}

/// The error code user space sees for an IPC failure.
pub(in crate::kernel) fn ipc_error(error: IpcError) -> ErrorCode {
    match error {
        IpcError::WouldBlock => ErrorCode::WouldBlock,
        IpcError::NoReplyTarget => ErrorCode::NoReplyTarget,
    }
}
