//! Notifications bound to threads (`TcbBindNotification`).
//!
//! A server that waits for requests on an endpoint and for interrupts or
//! signals on a notification binds the notification to itself: a signal
//! that no `Wait`er takes then ends the server's `Recv` (or the receive of
//! its `ReplyRecv`) with `NOTIFICATION_LABEL` and the word in `x8`, and a
//! `Recv` made while the word is non-zero returns it at once. One
//! notification is bound to at most one thread and the other way round.

use crate::cap::ObjectId;
use crate::ipc::notification;
use crate::ipc::{Effects, IpcError};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::IpcOperation;
use crate::syscall::SyscallResult;
use crate::thread::{Thread, ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::message::NOTIFICATION_LABEL;
use abi::{ErrorCode, MessageInfo};
use arch::object_memory::kind;

impl Kernel {
    /// `TcbBindNotification`: binds the notification at `notification`
    /// (read right) to the thread the TCB at `tcb` (write right) names, or
    /// unbinds its notification (`None`).
    #[inline(never)]
    pub(in crate::kernel) fn bind_notification(
        &mut self,
        current: ThreadId,
        tcb: u64,
        notification: Option<u64>,
    ) -> Result<(), ErrorCode> {
        let tcb = self.thread_cap(current, tcb, CapType::Tcb, Rights::WRITE)?;
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let Some(cptr) = notification else {
            self.unbind(target);
            return Ok(());
        };
        let cap = self.thread_cap(current, cptr, CapType::Notification, Rights::READ)?;
        let object = cap.object();
        let bound = self
            .objects
            .get::<kind::Notification>(object)
            .ok_or(ErrorCode::InvalidCapability)?
            .bound;
        // One each way: unbind first to move a binding.
        if self.objects[target].bound_notification.is_some() || bound.is_some() {
            return Err(ErrorCode::InvalidArgument);
        }
        self.objects[target].bound_notification = Some(object);
        if let Some(n) = self.objects.get_mut::<kind::Notification>(object) {
            n.bound = Some(target);
        }
        Ok(())
    }

    /// Drops a thread's binding, if it has one.
    pub(in crate::kernel) fn unbind(&mut self, thread: ThreadId) {
        if let Some(object) = self.objects[thread].bound_notification.take() {
            if let Some(n) = self.objects.get_mut::<kind::Notification>(object) {
                n.bound = None;
            }
        }
    }

    /// `Signal` of notification `object` with `bits`: its first waiter
    /// takes the word, else a bound thread waiting in `Recv` does.
    /// Inlined: with nobody to wake (no waiter, no bound thread, the
    /// common case of every caller) the bits are set in place, with no
    /// call and no `Effects` built in memory; waking is out of line.
    #[inline(always)]
    pub(in crate::kernel) fn signal_notification(
        &mut self,
        object: ObjectId,
        bits: u64,
    ) -> Effects {
        let Some(body) = self.objects.get_mut::<kind::Notification>(object) else {
            return Effects::new(crate::ipc::Next::Continue);
        };
        if body.waiters.head().is_none() && body.bound.is_none() {
            body.word |= bits;
            return Effects::new(crate::ipc::Next::Continue);
        }
        self.signal_and_wake(object, bits)
    }

    /// `signal_notification` with a waiter or a bound thread.
    #[cold]
    #[inline(never)]
    fn signal_and_wake(&mut self, object: ObjectId, bits: u64) -> Effects {
        let Some(body) = self.objects.get_mut::<kind::Notification>(object) else {
            return Effects::new(crate::ipc::Next::Continue);
        };
        let mut state = *body;
        let effects = notification::signal(&mut self.objects, &mut state, bits);
        let woke_bound = effects.woken().next().is_none()
            && state.bound.is_some_and(|bound| {
                matches!(
                    self.objects[bound].state(),
                    ThreadState::BlockedOnReceive { .. }
                )
            });
        let mut effects = effects;
        if woke_bound {
            if let Some(bound) = state.bound {
                if let ThreadState::BlockedOnReceive { endpoint } = self.objects[bound].state() {
                    if let Some(mut queue) = self.objects.get::<kind::Endpoint>(endpoint).copied() {
                        queue.remove(&mut self.objects, bound);
                        if let Some(body) = self.objects.get_mut::<kind::Endpoint>(endpoint) {
                            *body = queue;
                        }
                    }
                }
                let word = core::mem::take(&mut state.word);
                deliver(&mut self.objects[bound], word);
                effects = effects.wake(bound);
            }
        }
        if let Some(body) = self.objects.get_mut::<kind::Notification>(object) {
            *body = state;
        }
        effects
    }

    /// A receive by a thread whose bound notification has bits: it returns
    /// them at once (after the reply of a `ReplyRecv`). `None`: receive as
    /// usual.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn receive_bound<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: IpcOperation,
    ) -> Option<SyscallResult> {
        let object = self.objects[current].bound_notification?;
        if self.objects.get::<kind::Notification>(object)?.word == 0 {
            return None;
        }
        let mut effects = Effects::new(crate::ipc::Next::Continue);
        if operation == IpcOperation::ReplyRecv {
            match crate::ipc::reply(platform, &mut self.objects, current) {
                Ok(caller) => effects = effects.wake(caller),
                Err(IpcError::NoReplyTarget) | Err(IpcError::WouldBlock) => {}
            }
        }
        let word = self
            .objects
            .get_mut::<kind::Notification>(object)
            .map_or(0, |n| core::mem::take(&mut n.word));
        deliver(&mut self.objects[current], word);
        Some(SyscallResult::Ipc(effects))
    }
}

/// A `Recv` that ends with the bound notification's word: a message of
/// no words (`x2..x7` are 0, whatever the context held: the IPC fast
/// path does not save a waiting caller's registers there).
fn deliver(thread: &mut Thread, word: u64) {
    thread.context.set_result(ErrorCode::Ok);
    thread
        .context
        .set_message_info(MessageInfo::with(NOTIFICATION_LABEL, 0));
    thread
        .context
        .set_message_words([0; abi::REGISTER_MESSAGE_WORDS]);
    thread.context.set_value(word);
    if matches!(thread.state(), ThreadState::BlockedOnReceive { .. }) {
        thread.make_ready();
    }
}
