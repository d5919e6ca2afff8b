//! IRQ handlers: an interrupt delivered to its notification, and the
//! handler's syscalls (bind, acknowledge, the timer).

use crate::cap::IrqHandlerBody;
use crate::cap::ObjectId;
use crate::ipc::notification;
use crate::kernel::Kernel;
use crate::platform::{Console, Platform};
use crate::syscall::SyscallResult;
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::boards::PHYSICAL_TIMER_INTID;
use arch::object_memory::kind;
use core::fmt::Write;

impl Kernel {
    /// An interrupt some IrqHandler stands for: masked until acknowledged,
    /// and its notification signalled. One nobody handles is masked. The
    /// console UART's is the kernel's own: its input is kept for readers
    /// (`console_input.rs`).
    #[inline(never)]
    pub(in crate::kernel) fn deliver_interrupt<P: Platform>(&mut self, platform: &mut P, id: u32) {
        if id == platform.console_intid() {
            self.console_input_arrived(platform);
            return;
        }
        platform.set_interrupt_enabled(id, false);
        let binding = self
            .irq_handlers
            .iter()
            .filter_map(|h| self.objects.get::<kind::IrqHandler>(*h))
            .find(|h| h.intid == Some(id))
            .and_then(|h| h.notification)
            .and_then(|(n, bits)| Some((self.objects.resolve(n, CapType::Notification)?, bits)));
        let Some((notification, bits)) = binding else {
            let _ = writeln!(
                Console(platform),
                "[kernel] interrupt {id} has no handler; masked"
            );
            return;
        };
        let effects = self.signal_notification(notification, bits);
        for thread in effects.woken() {
            self.make_ready(thread);
        }
    }

    /// `IrqSetNotification` and `IrqAck`.
    #[inline(never)]
    pub(in crate::kernel) fn irq_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        handler: u64,
        notification: Option<u64>,
    ) -> Result<(), ErrorCode> {
        let handler = self.thread_cap(current, handler, CapType::IrqHandler, Rights::WRITE)?;
        let state = *self
            .objects
            .get::<kind::IrqHandler>(handler.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let intid = state.intid.ok_or(ErrorCode::InvalidCapability)?;
        match notification {
            Some(cptr) => {
                let target =
                    self.thread_cap(current, cptr, CapType::Notification, Rights::WRITE)?;
                let bits = notification::signal_bits(target.badge(), target.is_badged());
                let reference = self
                    .objects
                    .reference(target.object())
                    .ok_or(ErrorCode::InvalidCapability)?;
                if let Some(body) = self.objects.get_mut::<kind::IrqHandler>(handler.object()) {
                    body.notification = Some((reference, bits));
                }
                platform.set_interrupt_enabled(intid, true);
            }
            None => {
                let bound = state
                    .notification
                    .and_then(|(n, _)| self.objects.resolve(n, CapType::Notification));
                if bound.is_none() {
                    return Err(ErrorCode::InvalidArgument);
                }
                platform.set_interrupt_enabled(intid, true);
            }
        }
        Ok(())
    }

    /// `IrqSetTimer`: programs the EL1 physical timer for the holder of
    /// its IrqHandler (EL0 cannot reach the timer's registers).
    #[inline(never)]
    pub(in crate::kernel) fn irq_set_timer<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        handler: u64,
        ticks: u64,
    ) -> SyscallResult {
        let handler = match self.thread_cap(current, handler, CapType::IrqHandler, Rights::WRITE) {
            Ok(handler) => handler,
            Err(code) => return SyscallResult::Return(code),
        };
        let intid = self
            .objects
            .get::<kind::IrqHandler>(handler.object())
            .and_then(|h| h.intid);
        if intid != Some(PHYSICAL_TIMER_INTID) {
            return SyscallResult::Return(ErrorCode::InvalidArgument);
        }
        platform.set_physical_timer((ticks != 0).then_some(ticks));
        SyscallResult::Return(ErrorCode::Ok)
    }
}

impl Kernel {
    /// An IrqHandler is destroyed: its interrupt is masked and forgotten (and
    /// the physical timer, whose holder is gone, stopped).
    pub(in crate::kernel) fn irq_handler_destroyed<P: Platform>(
        &mut self,
        platform: &mut P,
        object: ObjectId,
    ) {
        let body = self
            .objects
            .get_mut::<kind::IrqHandler>(object)
            .map(|b| core::mem::replace(b, IrqHandlerBody::NONE));
        if let Some(position) = self.irq_handlers.iter().position(|&h| h == object) {
            self.irq_handlers.swap_remove(position);
        }
        if let Some(intid) = body.and_then(|b| b.intid) {
            platform.set_interrupt_enabled(intid, false);
            // Nobody may program the timer any more: stop it.
            if intid == PHYSICAL_TIMER_INTID {
                platform.set_physical_timer(None);
            }
        }
    }
}
