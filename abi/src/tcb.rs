//! Thread control blocks as user space sees them: register numbers for
//! `TcbReadRegister` / `TcbWriteRegister`, the priority range, and the
//! names `TcbSetName` takes.

/// The only `x4` `TcbConfigure` takes (any other value is
/// `InvalidArgument`): the kernel loads no program for user space, the
/// thread gets its CSpace and priority only, and its address space from
/// `Syscall::TcbSetSpace`.
pub const NO_PROGRAM: u64 = u64::MAX;

/// "No capability" in an optional capability argument of
/// `Syscall::TcbSetSpace` (the IPC buffer, the fault endpoint).
pub const NO_CAP: u64 = u64::MAX;

/// Highest priority (and maximum controlled priority) a thread can have;
/// 0 is the lowest.
pub const MAX_PRIORITY: u64 = 255;

/// The longest name `Syscall::TcbSetName` takes, in bytes.
pub const MAX_NAME_BYTES: usize = 24;

/// Is `name` one `Syscall::TcbSetName` takes? 1 ..= [`MAX_NAME_BYTES`]
/// bytes of printable ASCII other than space, `#`, `[` and `]`: a console
/// line's `[name#N]` prefix then always reads back as name and number.
pub const fn is_valid_name(name: &[u8]) -> bool {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if !matches!(name[i], 0x21..=0x7e) || matches!(name[i], b'#' | b'[' | b']') {
            return false;
        }
        i += 1;
    }
    true
}

/// A register of a stopped or running thread, numbered as `x2` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Register {
    /// General-purpose register `x0`..`x30` (number 0..=30).
    X(u8),
    /// The EL0 stack pointer (number 31).
    Sp,
    /// The address the thread resumes at (number 32).
    Pc,
    /// The condition flags N, Z, C, V in bits 31..28 (number 33); other
    /// bits read as zero and must be written as zero.
    Nzcv,
}

/// The NZCV bits of PSTATE, the only part user space may write.
pub const NZCV_MASK: u64 = 0xF000_0000;

impl Register {
    /// Number of the stack pointer.
    pub const SP: u64 = 31;
    /// Number of the program counter.
    pub const PC: u64 = 32;
    /// Number of the condition flags.
    pub const NZCV: u64 = 33;

    /// Decodes a register number; `None` past 33.
    pub const fn from_number(number: u64) -> Option<Register> {
        match number {
            0..=30 => Some(Register::X(number as u8)),
            Self::SP => Some(Register::Sp),
            Self::PC => Some(Register::Pc),
            Self::NZCV => Some(Register::Nzcv),
            _ => None,
        }
    }

    /// The number user space passes in `x2`.
    pub const fn number(self) -> u64 {
        match self {
            Register::X(n) => n as u64,
            Register::Sp => Self::SP,
            Register::Pc => Self::PC,
            Register::Nzcv => Self::NZCV,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_numbers_round_trip() {
        for number in 0..=33 {
            let register = Register::from_number(number).expect("defined");
            assert_eq!(register.number(), number);
        }
        assert_eq!(Register::from_number(34), None);
        assert_eq!(Register::from_number(u64::MAX), None);
    }

    #[test]
    fn names_are_short_printable_and_read_back_from_a_prefix() {
        for good in ["echo", "echo-client", "a", "0123456789abcdef", "x_y.z:1!"] {
            assert!(is_valid_name(good.as_bytes()), "{good}");
        }
        for bad in [
            "",
            "0123456789abcdefghijklmno",
            "two words",
            "a#1",
            "[a",
            "a]",
            "tab\t",
            "new\nline",
            "caf\u{e9}",
        ] {
            assert!(!is_valid_name(bad.as_bytes()), "{bad:?}");
        }
        assert!(!is_valid_name(&[0x7f]));
        assert!(!is_valid_name(&[0]));
    }
}
