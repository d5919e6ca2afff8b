//! The saved user context, as the entry code sees it.
//!
//! The arch's exception frame implements [`SyscallRegisters`]. Every stage
//! reads arguments straight from the saved registers, in place, at the time
//! it runs: nothing is copied in bulk at entry (a Linux arm64 lesson), so an
//! edit a tracer makes at the entry stop is what policy and audit see.
//!
//! Register roles follow the ABI (`abi` crate): `x8` holds the syscall
//! number, `x0` the capability pointer on entry and the error code on return,
//! `x1` the message info, `x2..x7` the message registers.

/// One of the eight argument registers `x0..=x7`.
///
/// An enum rather than a `usize` so that an out-of-range index cannot be
/// written; [`ArgIndex::new`] converts a runtime index without panicking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[allow(missing_docs)] // X0..X7 name themselves.
pub enum ArgIndex {
    X0 = 0,
    X1 = 1,
    X2 = 2,
    X3 = 3,
    X4 = 4,
    X5 = 5,
    X6 = 6,
    X7 = 7,
}

impl ArgIndex {
    /// Every argument register, in order.
    pub const ALL: [Self; 8] = [
        Self::X0,
        Self::X1,
        Self::X2,
        Self::X3,
        Self::X4,
        Self::X5,
        Self::X6,
        Self::X7,
    ];

    /// The register `x<index>`, or `None` if `index > 7`.
    pub const fn new(index: usize) -> Option<Self> {
        if index < Self::ALL.len() {
            Some(Self::ALL[index])
        } else {
            None
        }
    }

    /// The register number, `0..=7`.
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// Access to a thread's saved user registers during a syscall.
pub trait SyscallRegisters {
    /// The syscall number (`x8`).
    fn syscall_number(&self) -> u64;

    /// Replaces the syscall number (a tracer at the entry stop may).
    fn set_syscall_number(&mut self, number: u64);

    /// Argument register `x<index>`.
    fn arg(&self, index: ArgIndex) -> u64;

    /// Replaces argument register `x<index>`.
    fn set_arg(&mut self, index: ArgIndex, value: u64);

    /// The capability pointer the syscall invokes (`x0` on entry).
    fn capability_pointer(&self) -> u64 {
        self.arg(ArgIndex::X0)
    }

    /// The value the thread will see as the syscall's result (`x0`).
    fn return_value(&self) -> u64;

    /// Sets the syscall's result (`x0`) as user space will see it.
    fn set_return_value(&mut self, value: u64);

    /// The user PC: the instruction after the `svc`.
    fn instruction_pointer(&self) -> u64;
}

#[cfg(test)]
mod tests {
    use super::ArgIndex;

    #[test]
    fn arg_index_round_trips_and_rejects_out_of_range() {
        for (i, reg) in ArgIndex::ALL.iter().enumerate() {
            assert_eq!(ArgIndex::new(i), Some(*reg));
            assert_eq!(reg.index(), i);
        }
        assert_eq!(ArgIndex::new(8), None);
        assert_eq!(ArgIndex::new(usize::MAX), None);
    }
}
