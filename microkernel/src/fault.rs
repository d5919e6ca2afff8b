//! Reports of faults caused by user threads.

use arch::exception::{abort_was_write, ExceptionClass, FaultStatus};
use core::fmt;

/// What a user thread did wrong, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultReport {
    /// The exception class.
    pub class: ExceptionClass,
    /// ESR_EL1 as taken.
    pub esr: u64,
    /// FAR_EL1 (the faulting address, for aborts).
    pub far: u64,
    /// ELR_EL1: the faulting instruction.
    pub pc: u64,
}

impl FaultReport {
    /// Decodes a fault from the raw registers.
    pub fn new(esr: u64, far: u64, pc: u64) -> Self {
        FaultReport {
            class: ExceptionClass::from_esr(esr),
            esr,
            far,
            pc,
        }
    }

    /// The fault status, for aborts.
    pub fn status(&self) -> Option<FaultStatus> {
        matches!(
            self.class,
            ExceptionClass::DataAbortLower | ExceptionClass::InstructionAbortLower
        )
        .then(|| FaultStatus::from_esr(self.esr))
    }
}

impl fmt::Display for FaultReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.class.name())?;
        if let Some(status) = self.status() {
            write!(f, ", {}", status.name())?;
            if let Some(level) = status.level() {
                write!(f, " at level {level}")?;
            }
            if self.class == ExceptionClass::DataAbortLower {
                let access = if abort_was_write(self.esr) {
                    "write"
                } else {
                    "read"
                };
                write!(f, ", {access}")?;
            }
        }
        if self.class.has_fault_address() {
            write!(f, ", address {:#x}", self.far)?;
        }
        write!(f, ", pc {:#x}, esr {:#010x}", self.pc, self.esr)
    }
}

#[cfg(test)]
mod tests;
