//! Notifications bound to threads (`TcbBindNotification`).
//!
//! A server that waits for requests on an endpoint and for interrupts or
//! signals on a notification binds the notification to itself: a signal
//! that no `Wait`er takes then ends the server's `Recv` (or the receive of
//! its `ReplyRecv`) with `NOTIFICATION_LABEL` and the word in `x8`, and a
//! `Recv` made while the word is non-zero returns it at once. One
//! notification is bound to at most one thread and the other way round.

use super::Kernel;
use crate::ipc::notification;
use crate::ipc::{Effects, IpcError};
use crate::platform::Platform;
use crate::syscall::IpcOperation;
use crate::syscall::SyscallResult;
use crate::thread::{Thread, ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::message::NOTIFICATION_LABEL;
use abi::{ErrorCode, MessageInfo};

impl Kernel {
    /// `TcbBindNotification`: binds the notification at `notification`
    /// (read right) to the thread the TCB at `tcb` (write right) names, or
    /// unbinds its notification (`None`).
    #[inline(never)]
    pub(super) fn bind_notification(
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
        let index = cap.object().index();
        // One each way: unbind first to move a binding.
        if self.threads[target.index()].bound_notification.is_some()
            || self.notifications[index].bound.is_some()
        {
            return Err(ErrorCode::InvalidArgument);
        }
        self.threads[target.index()].bound_notification = Some(index as u32);
        self.notifications[index].bound = Some(target);
        Ok(())
    }

    /// Drops a thread's binding, if it has one.
    pub(super) fn unbind(&mut self, thread: ThreadId) {
        if let Some(index) = self.threads[thread.index()].bound_notification.take() {
            self.notifications[index as usize].bound = None;
        }
    }

    /// `Signal` of notification `index` with `bits`: its first waiter takes
    /// the word, else a bound thread waiting in `Recv` does.
    pub(super) fn signal_notification(&mut self, index: usize, bits: u64) -> Effects {
        let effects = notification::signal(&mut self.threads, &mut self.notifications[index], bits);
        if effects.woken().next().is_some() {
            return effects;
        }
        let Some(bound) = self.notifications[index].bound else {
            return effects;
        };
        let ThreadState::BlockedOnReceive { endpoint } = self.threads[bound.index()].state else {
            return effects;
        };
        self.endpoints[endpoint as usize].remove(&mut self.threads, bound);
        let word = core::mem::take(&mut self.notifications[index].word);
        deliver(&mut self.threads[bound.index()], word);
        effects.wake(bound)
    }

    /// A receive by a thread whose bound notification has bits: it returns
    /// them at once (after the reply of a `ReplyRecv`). `None`: receive as
    /// usual.
    #[cold]
    #[inline(never)]
    pub(super) fn receive_bound<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: IpcOperation,
    ) -> Option<SyscallResult> {
        let index = self.threads[current.index()].bound_notification? as usize;
        if self.notifications[index].word == 0 {
            return None;
        }
        let mut effects = Effects::new(crate::ipc::Next::Continue);
        if operation == IpcOperation::ReplyRecv {
            match crate::ipc::reply(platform, &mut self.threads, current) {
                Ok(caller) => effects = effects.wake(caller),
                Err(IpcError::NoReplyTarget) | Err(IpcError::WouldBlock) => {}
            }
        }
        let word = core::mem::take(&mut self.notifications[index].word);
        deliver(&mut self.threads[current.index()], word);
        Some(SyscallResult::Ipc(effects))
    }
}

/// A `Recv` that ends with the bound notification's word.
fn deliver(thread: &mut Thread, word: u64) {
    thread.context.x[0] = ErrorCode::Ok.raw();
    thread.context.x[1] = MessageInfo::with(NOTIFICATION_LABEL, 0).into();
    thread.context.x[8] = word;
    if matches!(thread.state, ThreadState::BlockedOnReceive { .. }) {
        thread.state = ThreadState::Ready;
    }
}
