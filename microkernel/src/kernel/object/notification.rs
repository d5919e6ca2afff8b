//! Notifications: signal, wait and poll, and a notification's end.

use crate::cap::ObjectId;
use crate::ipc;
use crate::ipc::notification;
use crate::kernel::members::Use;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::NotificationOperation;
use crate::syscall::SyscallResult;
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::object_memory::kind;

impl Kernel {
    /// `Signal`, `Wait` or `Poll` through the notification capability at
    /// `cptr` (signal: write right; wait and poll: read right).
    #[inline(never)]
    pub(in crate::kernel) fn notification_syscall(
        &mut self,
        current: ThreadId,
        operation: NotificationOperation,
        cptr: u64,
    ) -> SyscallResult {
        let needed = match operation {
            NotificationOperation::Signal => Rights::WRITE,
            NotificationOperation::Wait | NotificationOperation::Poll => Rights::READ,
        };
        let cap = match self.thread_cap(current, cptr, CapType::Notification, needed) {
            Ok(cap) => cap,
            Err(code) => return SyscallResult::Return(code),
        };
        let object = cap.object();
        if operation == NotificationOperation::Signal {
            // Like the IPC operations (`SyscallResult::Ipc`), it writes
            // its caller's `x0` itself, before the effects, which may
            // switch threads. (A result variant carrying the code with
            // the effects, for the write-back to write, cost 62 more
            // instructions on a signal and wait round trip.)
            self.objects[current].context.set_result(ErrorCode::Ok);
            let bits = notification::signal_bits(cap.badge(), cap.is_badged());
            return SyscallResult::Ipc(self.signal_notification(object, bits));
        }
        let Some(body) = self.objects.get_mut::<kind::Notification>(object) else {
            return SyscallResult::Return(ErrorCode::InvalidCapability);
        };
        let blocking = operation == NotificationOperation::Wait;
        if body.word != 0 || !blocking {
            // `notification::wait`'s answer at once, taken in place: a
            // copy of the body out and back cost a second look-up.
            let word = core::mem::take(&mut body.word);
            self.objects[current].context.set_value(word);
            return SyscallResult::Return(ErrorCode::Ok);
        }
        let mut state = *body;
        let effects = notification::wait(&mut self.objects, &mut state, object, current, blocking);
        if let Some(body) = self.objects.get_mut::<kind::Notification>(object) {
            *body = state;
        }
        SyscallResult::Ipc(effects)
    }

    /// Its waiters wake with `ObjectDeleted`, its bound thread is unbound,
    /// the interrupts signalling it are masked, and threads whose audit
    /// signals it are audited no more (before its state is taken: the
    /// list of them is in it).
    pub(in crate::kernel) fn notification_destroyed<P: Platform>(
        &mut self,
        platform: &mut P,
        object: ObjectId,
    ) {
        self.audit_sink_destroyed(platform, object, Use::AuditSignal);
        let Some(state) = self
            .objects
            .get_mut::<kind::Notification>(object)
            .map(core::mem::take)
        else {
            return;
        };
        if let Some(bound) = state.bound {
            self.objects[bound].bound_notification = None;
        }
        for index in 0..self.irq_handlers.len() {
            let handler = self.irq_handlers[index];
            let Some(body) = self.objects.get_mut::<kind::IrqHandler>(handler) else {
                continue;
            };
            if body.notification.is_some_and(|(n, _)| n.id == object) {
                body.notification = None;
                if let Some(intid) = body.intid {
                    platform.set_interrupt_enabled(intid, false);
                }
            }
        }
        let mut waiters = state.waiters;
        while let Some(waiter) = waiters.pop_front(&mut self.objects) {
            ipc::fail_waiter(&mut self.objects, waiter, ErrorCode::ObjectDeleted);
            self.make_ready(waiter);
        }
    }
}
