//! Why a capability operation failed, and the code user space sees.
use abi::ErrorCode;

/// A capability operation's failure. A failed operation changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapError {
    /// The slot is empty, the index lies outside the CNode, or the CNode
    /// does not exist.
    InvalidCapability,
    /// The capability refers to an object of another type.
    WrongCapabilityType,
    /// The capability lacks a right the operation needs (for mint: the
    /// rights asked for are not a subset of the source's).
    MissingRights,
    /// An argument is out of range: a size, a radix, a count, a badge on a
    /// capability that cannot carry one, an object type that cannot be made.
    InvalidArgument,
    /// The destination slot already holds a capability.
    SlotOccupied,
    /// The Untyped has too little room left above its watermark.
    NotEnoughMemory,
    /// A fixed resource of the kernel's own is used up (the kernel's pool
    /// of pages, its CNode for the objects it makes itself).
    OutOfResources,
}

impl From<CapError> for ErrorCode {
    fn from(error: CapError) -> Self {
        match error {
            CapError::InvalidCapability => ErrorCode::InvalidCapability,
            CapError::WrongCapabilityType => ErrorCode::WrongCapabilityType,
            CapError::MissingRights => ErrorCode::MissingRights,
            CapError::InvalidArgument => ErrorCode::InvalidArgument,
            CapError::SlotOccupied => ErrorCode::SlotOccupied,
            CapError::NotEnoughMemory => ErrorCode::NotEnoughMemory,
            CapError::OutOfResources => ErrorCode::OutOfResources,
        }
    }
}

#[cfg(test)]
mod tests;
