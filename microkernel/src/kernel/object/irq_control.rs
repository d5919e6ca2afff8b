//! `IrqControlGet`: the IrqControl capability makes an IrqHandler for any
//! interrupt the kernel does not keep, one handler object per interrupt.
//!
//! The kernel keeps the SGIs (0..16, for the inter-processor interrupts
//! of a multi-core kernel), its tick (the virtual timer's PPI 27) and its
//! console UART's line. Every other interrupt ID the GIC has may get one
//! IrqHandler at a time: its record is on a page of the kernel's pool
//! (bounded by `MAX_IRQ_HANDLERS`), its capability a child of the
//! IrqControl capability that issued it, so revoking that capability
//! takes every handler back. When the handler's last capability goes, the
//! interrupt is masked (`let_go`) and free for another `IrqControlGet`.

use crate::cap::{Capability, SlotId};
use crate::kernel::{Kernel, MAX_IRQ_HANDLERS};
use crate::platform::Platform;
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::boards::{KERNEL_TICK_INTID, SGI_COUNT};
use arch::object_memory::kind;

/// Is `intid` one the kernel keeps for itself (never handed out)?
pub(in crate::kernel) fn kept_by_kernel(intid: u32, console_intid: u32) -> bool {
    intid < SGI_COUNT || intid == KERNEL_TICK_INTID || intid == console_intid
}

impl Kernel {
    /// `IrqControlGet` by `current`: an IrqHandler for `intid` in its
    /// slot `target`, through the IrqControl capability at `control`.
    #[inline(never)]
    pub(in crate::kernel) fn irq_control_get<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        control: u64,
        intid: u64,
        target: u64,
    ) -> Result<(), ErrorCode> {
        self.thread_cap(current, control, CapType::IrqControl, Rights::WRITE)?;
        let intid = u32::try_from(intid)
            .ok()
            .filter(|&i| i < platform.interrupt_lines())
            .ok_or(ErrorCode::InvalidArgument)?;
        if kept_by_kernel(intid, platform.console_intid()) {
            return Err(ErrorCode::Denied);
        }
        let (first, slots) = self.objects[current].cspace_slots;
        if target >= u64::from(slots) {
            return Err(ErrorCode::InvalidArgument);
        }
        // In range: `control` and `target` are below `slots` (checked).
        let control_slot = SlotId(first.0 + control as u32);
        let target_slot = SlotId(first.0 + target as u32);
        self.issue_irq_handler(control_slot, target_slot, intid)
    }

    /// Makes an IrqHandler for `intid` (checked to be one user space may
    /// have) with its capability in empty `target`, a child of the
    /// IrqControl capability in `control`.
    pub(in crate::kernel) fn issue_irq_handler(
        &mut self,
        control: SlotId,
        target: SlotId,
        intid: u32,
    ) -> Result<(), ErrorCode> {
        self.objects.check_empty(target)?;
        if self.irq_handler_of(intid).is_some() {
            return Err(ErrorCode::IrqInUse);
        }
        if self.irq_handlers.len() >= MAX_IRQ_HANDLERS {
            return Err(ErrorCode::OutOfResources);
        }
        let handler = self.kernel_object(CapType::IrqHandler, 0, 0)?;
        let cap = Capability::new(CapType::IrqHandler, Rights::ALL, handler);
        // Cannot fail: the control capability, the empty target and the
        // new object were all checked above.
        self.objects.install_issued(control, target, cap)?;
        if let Some(body) = self.objects.get_mut::<kind::IrqHandler>(handler) {
            body.intid = Some(intid);
        }
        // Cannot fail: the length was checked above.
        let _ = self.irq_handlers.push(handler);
        Ok(())
    }

    /// The IrqHandler object for `intid`, if it has one.
    pub(in crate::kernel) fn irq_handler_of(&self, intid: u32) -> Option<crate::cap::ObjectId> {
        self.irq_handlers.iter().copied().find(|&h| {
            self.objects
                .get::<kind::IrqHandler>(h)
                .is_some_and(|body| body.intid == Some(intid))
        })
    }
}
