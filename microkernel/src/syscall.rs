//! Syscall dispatch: raw registers → typed call → safe handler → result.
//!
//! `decode` turns the saved registers into a `Call` (checking everything
//! that can be checked without kernel state); the kernel then carries the
//! call out and writes one `SyscallResult` back in one place.

use abi::{ErrorCode, Syscall, DEBUG_PRINT_MAX};
use arch::context::UserContext;

/// A syscall with its arguments, decoded and range-checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `Syscall::Null`.
    Null,
    /// `Syscall::Yield`.
    Yield,
    /// `Syscall::Exit` with its status.
    Exit {
        /// Exit status (x2, signed).
        status: i64,
    },
    /// `Syscall::BenchFloor`: turn the benchmark floor on or off.
    BenchFloor {
        /// On (x2 == 1) or off (x2 == 0).
        on: bool,
    },
    /// `Syscall::DebugPrint` of `len` bytes at user address `address`.
    DebugPrint {
        /// User address of the text.
        address: u64,
        /// Its length (at most `DEBUG_PRINT_MAX`).
        len: usize,
    },
}

/// What the kernel does once a call is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyscallResult {
    /// Return to the caller with this code in x0.
    Return(ErrorCode),
    /// Return Ok, but let another thread run first.
    Yield,
    /// The caller has ended; never return to it.
    Exited(i64),
}

/// Decodes the caller's registers into a call, or the error to return.
pub fn decode(context: &UserContext) -> Result<Call, ErrorCode> {
    let syscall = Syscall::from_number(context.x[8]).ok_or(ErrorCode::InvalidSyscall)?;
    let capability = context.x[0];
    match syscall {
        Syscall::Null => Ok(Call::Null),
        Syscall::Yield => Ok(Call::Yield),
        Syscall::Exit => Ok(Call::Exit {
            status: context.x[2] as i64,
        }),
        Syscall::BenchFloor => match context.x[2] {
            0 => Ok(Call::BenchFloor { on: false }),
            1 => Ok(Call::BenchFloor { on: true }),
            _ => Err(ErrorCode::InvalidArgument),
        },
        Syscall::DebugPrint => {
            // Until capabilities exist the console is implicit: slot 0.
            if capability != 0 {
                return Err(ErrorCode::InvalidCapability);
            }
            let len = context.x[3];
            if len > DEBUG_PRINT_MAX as u64 {
                return Err(ErrorCode::InvalidArgument);
            }
            let address = context.x[2];
            if !arch::layout::is_user_range(address, len) {
                return Err(ErrorCode::InvalidAddress);
            }
            Ok(Call::DebugPrint {
                address,
                len: len as usize,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regs(number: u64, x0: u64, x2: u64, x3: u64) -> UserContext {
        let mut ctx = UserContext::default();
        ctx.x[8] = number;
        ctx.x[0] = x0;
        ctx.x[2] = x2;
        ctx.x[3] = x3;
        ctx
    }

    #[test]
    fn decodes_each_syscall() {
        assert_eq!(decode(&regs(0, 0, 0, 0)), Ok(Call::Null));
        assert_eq!(decode(&regs(1, 0, 0, 0)), Ok(Call::Yield));
        assert_eq!(
            decode(&regs(2, 0, (-3i64) as u64, 0)),
            Ok(Call::Exit { status: -3 })
        );
        assert_eq!(
            decode(&regs(3, 0, 0x40_0000, 5)),
            Ok(Call::DebugPrint {
                address: 0x40_0000,
                len: 5
            })
        );
    }

    #[test]
    fn bad_arguments_get_typed_errors() {
        assert_eq!(decode(&regs(999, 0, 0, 0)), Err(ErrorCode::InvalidSyscall));
        assert_eq!(
            decode(&regs(u64::MAX, 0, 0, 0)),
            Err(ErrorCode::InvalidSyscall)
        );
        assert_eq!(
            decode(&regs(3, 7, 0x40_0000, 5)),
            Err(ErrorCode::InvalidCapability)
        );
        assert_eq!(
            decode(&regs(3, 0, 0x40_0000, 257)),
            Err(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            decode(&regs(3, 0, abi::boot_program::KERNEL_PROBE_ADDRESS, 8)),
            Err(ErrorCode::InvalidAddress)
        );
        assert_eq!(
            decode(&regs(3, 0, u64::MAX - 2, 8)),
            Err(ErrorCode::InvalidAddress)
        );
    }
}
