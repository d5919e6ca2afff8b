//! Error codes returned in `x0`.

/// The result code of a syscall, returned in `x0`. Zero is success.
///
/// Codes are stable ABI. A syscall that fails changes no kernel state.
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// The call succeeded.
    Ok = 0,
    /// `x8` holds a number that is no syscall.
    InvalidSyscall = 1,
    /// The capability pointer names no capability (empty slot or out of range).
    InvalidCapability = 2,
    /// The capability is of the wrong type for this call.
    WrongCapabilityType = 3,
    /// The capability lacks a right this call needs.
    MissingRights = 4,
    /// A pointer argument is not a mapped, accessible user address range.
    InvalidAddress = 5,
    /// A length, alignment or other argument is out of range.
    InvalidArgument = 6,
    /// The kernel has no room left for the request.
    OutOfResources = 7,
    /// The syscall was refused by a policy filter.
    Denied = 8,
    /// The destination slot already holds a capability (delete it first).
    SlotOccupied = 9,
    /// The object was destroyed (its last capability deleted) while the
    /// call used it, e.g. a thread blocked on an endpoint that went away.
    ObjectDeleted = 10,
    /// The Untyped capability has too little free memory left for the
    /// objects asked for (revoke it to reclaim what was made from it).
    NotEnoughMemory = 11,
    /// A non-blocking IPC operation found no partner waiting.
    WouldBlock = 12,
    /// `Reply` with no caller waiting for this thread's reply.
    NoReplyTarget = 13,
    /// The thread was suspended (`TcbSuspend`) while this call waited; it
    /// returns this once the thread is resumed.
    Interrupted = 14,
    /// `FrameMap`: the frame is already mapped somewhere, or the address
    /// is already taken in that address space (unmap first).
    AlreadyMapped = 15,
    /// `IrqControlGet`: the interrupt has an IrqHandler already (delete
    /// its last capability first).
    IrqInUse = 16,
}

impl ErrorCode {
    /// Decodes a value user space read from `x0`.
    pub const fn from_raw(raw: u64) -> Option<ErrorCode> {
        Some(match raw {
            0 => ErrorCode::Ok,
            1 => ErrorCode::InvalidSyscall,
            2 => ErrorCode::InvalidCapability,
            3 => ErrorCode::WrongCapabilityType,
            4 => ErrorCode::MissingRights,
            5 => ErrorCode::InvalidAddress,
            6 => ErrorCode::InvalidArgument,
            7 => ErrorCode::OutOfResources,
            8 => ErrorCode::Denied,
            9 => ErrorCode::SlotOccupied,
            10 => ErrorCode::ObjectDeleted,
            11 => ErrorCode::NotEnoughMemory,
            12 => ErrorCode::WouldBlock,
            13 => ErrorCode::NoReplyTarget,
            14 => ErrorCode::Interrupted,
            15 => ErrorCode::AlreadyMapped,
            16 => ErrorCode::IrqInUse,
            _ => return None,
        })
    }

    /// The value written to `x0`.
    pub const fn raw(self) -> u64 {
        self as u64
    }

    /// The code's name in snake case (`invalid_argument`), for rule files
    /// and traces.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorCode::Ok => "ok",
            ErrorCode::InvalidSyscall => "invalid_syscall",
            ErrorCode::InvalidCapability => "invalid_capability",
            ErrorCode::WrongCapabilityType => "wrong_capability_type",
            ErrorCode::MissingRights => "missing_rights",
            ErrorCode::InvalidAddress => "invalid_address",
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::OutOfResources => "out_of_resources",
            ErrorCode::Denied => "denied",
            ErrorCode::SlotOccupied => "slot_occupied",
            ErrorCode::ObjectDeleted => "object_deleted",
            ErrorCode::NotEnoughMemory => "not_enough_memory",
            ErrorCode::WouldBlock => "would_block",
            ErrorCode::NoReplyTarget => "no_reply_target",
            ErrorCode::Interrupted => "interrupted",
            ErrorCode::AlreadyMapped => "already_mapped",
            ErrorCode::IrqInUse => "irq_in_use",
        }
    }

    /// The code named `name` (as [`ErrorCode::name`] spells it).
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        (0..64)
            .filter_map(ErrorCode::from_raw)
            .find(|code| code.name() == name)
    }

    /// A short description for people.
    pub const fn describe(self) -> &'static str {
        match self {
            ErrorCode::Ok => "success",
            ErrorCode::InvalidSyscall => "no such syscall",
            ErrorCode::InvalidCapability => "no capability in that slot",
            ErrorCode::WrongCapabilityType => "capability of the wrong type",
            ErrorCode::MissingRights => "capability lacks the needed rights",
            ErrorCode::InvalidAddress => "bad user address",
            ErrorCode::InvalidArgument => "bad argument",
            ErrorCode::OutOfResources => "out of kernel resources",
            ErrorCode::Denied => "denied by policy",
            ErrorCode::SlotOccupied => "destination slot is not empty",
            ErrorCode::ObjectDeleted => "the object was deleted",
            ErrorCode::NotEnoughMemory => "untyped memory exhausted",
            ErrorCode::WouldBlock => "no partner waiting",
            ErrorCode::NoReplyTarget => "no caller waits for a reply",
            ErrorCode::Interrupted => "the waiting thread was suspended",
            ErrorCode::AlreadyMapped => "frame or address already mapped",
            ErrorCode::IrqInUse => "the interrupt has a handler already",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for raw in 0..17 {
            let code = ErrorCode::from_raw(raw).expect("defined");
            assert_eq!(code.raw(), raw);
            assert!(!code.describe().is_empty());
            assert_eq!(ErrorCode::from_name(code.name()), Some(code));
        }
        assert_eq!(ErrorCode::from_raw(17), None);
        assert_eq!(ErrorCode::from_raw(u64::MAX), None);
    }
}
