//! IrqHandlers for the interrupts cases are given, from the root's
//! IrqControl capability.

use abi::ErrorCode;

/// An IrqHandler for `intid` in `slot` of the root's CNode `cnode`.
pub fn handler_for(_cnode: u64, _intid: u32, _slot: u64) -> Result<(), ErrorCode> {
    Err(ErrorCode::InvalidCapability)
}
