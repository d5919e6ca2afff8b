//! IrqHandlers for the interrupts cases are given, from the root's
//! IrqControl capability.

use abi::bootinfo::ROOT_IRQ_CONTROL_SLOT;
use abi::ErrorCode;

/// An IrqHandler for `intid` in `slot` of the root's CNode.
pub fn handler_for(intid: u32, slot: u64) -> Result<(), ErrorCode> {
    sdk::syscall::irq_control_get(ROOT_IRQ_CONTROL_SLOT, intid, slot)
}
