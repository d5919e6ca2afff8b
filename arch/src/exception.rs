//! Decoding ESR_EL1: what kind of exception happened, by name.
//!
//! Used for the fault reports printed for user threads and for kernel
//! panics, and by the syscall entry to recognise `svc`.

/// The exception classes Portcullis tells apart (ESR_EL1.EC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExceptionClass {
    /// EC 0x00: unknown reason, e.g. an undefined instruction.
    Unknown,
    /// EC 0x01: WFI or WFE trapped.
    WfiWfe,
    /// EC 0x07: FP/SIMD access trapped.
    FpAccess,
    /// EC 0x0e: illegal execution state.
    IllegalState,
    /// EC 0x15: `svc` from AArch64.
    Svc64,
    /// EC 0x18: MSR/MRS/system instruction trapped.
    SystemRegister,
    /// EC 0x20: instruction abort from a lower EL.
    InstructionAbortLower,
    /// EC 0x21: instruction abort at the same EL.
    InstructionAbortSame,
    /// EC 0x22: PC alignment fault.
    PcAlignment,
    /// EC 0x24: data abort from a lower EL.
    DataAbortLower,
    /// EC 0x25: data abort at the same EL.
    DataAbortSame,
    /// EC 0x26: SP alignment fault.
    SpAlignment,
    /// EC 0x2c: trapped floating-point exception.
    FpException,
    /// EC 0x2f: SError.
    SError,
    /// EC 0x30/0x31: hardware breakpoint.
    Breakpoint,
    /// EC 0x32/0x33: software step.
    SoftwareStep,
    /// EC 0x34/0x35: watchpoint.
    Watchpoint,
    /// EC 0x3c: `brk` instruction.
    Brk,
    /// Any other class (raw EC kept).
    Other(u8),
}

/// ESR_EL1.EC of an `svc` from AArch64 (the vectors' fast path tests it,
/// `cpu/vectors.s`).
pub const EC_SVC64: u8 = 0x15;

impl ExceptionClass {
    /// Whether an ESR value's EC field is an SVC from AArch64
    /// (`from_esr(esr) == Svc64`, tested with one compare).
    pub const fn is_svc64(esr: u64) -> bool {
        (esr >> 26) & 0x3f == EC_SVC64 as u64
    }

    /// Decodes the EC field of an ESR value.
    pub const fn from_esr(esr: u64) -> Self {
        match ((esr >> 26) & 0x3f) as u8 {
            0x00 => ExceptionClass::Unknown,
            0x01 => ExceptionClass::WfiWfe,
            0x07 => ExceptionClass::FpAccess,
            0x0e => ExceptionClass::IllegalState,
            EC_SVC64 => ExceptionClass::Svc64,
            0x18 => ExceptionClass::SystemRegister,
            0x20 => ExceptionClass::InstructionAbortLower,
            0x21 => ExceptionClass::InstructionAbortSame,
            0x22 => ExceptionClass::PcAlignment,
            0x24 => ExceptionClass::DataAbortLower,
            0x25 => ExceptionClass::DataAbortSame,
            0x26 => ExceptionClass::SpAlignment,
            0x2c => ExceptionClass::FpException,
            0x2f => ExceptionClass::SError,
            0x30 | 0x31 => ExceptionClass::Breakpoint,
            0x32 | 0x33 => ExceptionClass::SoftwareStep,
            0x34 | 0x35 => ExceptionClass::Watchpoint,
            0x3c => ExceptionClass::Brk,
            other => ExceptionClass::Other(other),
        }
    }

    /// A name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            ExceptionClass::Unknown => "undefined instruction",
            ExceptionClass::WfiWfe => "trapped WFI/WFE",
            ExceptionClass::FpAccess => "trapped FP/SIMD access",
            ExceptionClass::IllegalState => "illegal execution state",
            ExceptionClass::Svc64 => "SVC",
            ExceptionClass::SystemRegister => "trapped system register access",
            ExceptionClass::InstructionAbortLower => "instruction abort (EL0)",
            ExceptionClass::InstructionAbortSame => "instruction abort (EL1)",
            ExceptionClass::PcAlignment => "PC alignment fault",
            ExceptionClass::DataAbortLower => "data abort (EL0)",
            ExceptionClass::DataAbortSame => "data abort (EL1)",
            ExceptionClass::SpAlignment => "SP alignment fault",
            ExceptionClass::FpException => "floating-point exception",
            ExceptionClass::SError => "SError",
            ExceptionClass::Breakpoint => "breakpoint",
            ExceptionClass::SoftwareStep => "software step",
            ExceptionClass::Watchpoint => "watchpoint",
            ExceptionClass::Brk => "BRK instruction",
            ExceptionClass::Other(_) => "unexpected exception class",
        }
    }

    /// Does FAR_EL1 hold a meaningful address for this class?
    pub const fn has_fault_address(self) -> bool {
        matches!(
            self,
            ExceptionClass::InstructionAbortLower
                | ExceptionClass::InstructionAbortSame
                | ExceptionClass::DataAbortLower
                | ExceptionClass::DataAbortSame
                | ExceptionClass::PcAlignment
                | ExceptionClass::Watchpoint
        )
    }
}

/// What an abort's fault status code (ISS.DFSC/IFSC) says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultStatus {
    /// Address size fault at a translation level.
    AddressSize(u8),
    /// No valid translation at a level.
    Translation(u8),
    /// The access flag was clear at a level.
    AccessFlag(u8),
    /// The permissions forbid the access at a level.
    Permission(u8),
    /// Alignment fault.
    Alignment,
    /// External abort or anything else (raw code kept).
    Other(u8),
}

impl FaultStatus {
    /// Decodes the low six ISS bits of an abort ESR.
    pub const fn from_esr(esr: u64) -> Self {
        let code = (esr & 0x3f) as u8;
        let level = code & 0b11;
        match code >> 2 {
            0b0000 => FaultStatus::AddressSize(level),
            0b0001 => FaultStatus::Translation(level),
            0b0010 => FaultStatus::AccessFlag(level),
            0b0011 => FaultStatus::Permission(level),
            _ if code == 0x21 => FaultStatus::Alignment,
            _ => FaultStatus::Other(code),
        }
    }

    /// A name for reports (the level is printed separately).
    pub const fn name(self) -> &'static str {
        match self {
            FaultStatus::AddressSize(_) => "address size fault",
            FaultStatus::Translation(_) => "translation fault",
            FaultStatus::AccessFlag(_) => "access flag fault",
            FaultStatus::Permission(_) => "permission fault",
            FaultStatus::Alignment => "alignment fault",
            FaultStatus::Other(_) => "other fault",
        }
    }

    /// The translation level, where the status has one.
    pub const fn level(self) -> Option<u8> {
        match self {
            FaultStatus::AddressSize(l)
            | FaultStatus::Translation(l)
            | FaultStatus::AccessFlag(l)
            | FaultStatus::Permission(l) => Some(l),
            _ => None,
        }
    }
}

/// Was the data abort a write (ISS.WnR)?
pub const fn abort_was_write(esr: u64) -> bool {
    esr & (1 << 6) != 0
}

/// The `imm16` of an `svc` (ISS bits 15:0).
pub const fn svc_immediate(esr: u64) -> u16 {
    (esr & 0xffff) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_svc64_agrees_with_the_decoder_for_every_class() {
        for ec in 0..64u64 {
            // With ISS bits and bits above the EC set, which it must ignore.
            let esr = 0xffff_ffff_0000_0000 | ec << 26 | 0x1ff_ffff;
            assert_eq!(
                ExceptionClass::is_svc64(esr),
                ExceptionClass::from_esr(esr) == ExceptionClass::Svc64,
                "EC {ec:#x}"
            );
        }
    }

    #[test]
    fn decodes_common_classes() {
        assert_eq!(ExceptionClass::from_esr(0x5600_0000), ExceptionClass::Svc64);
        // A data abort from EL0: translation fault level 3 on a read.
        let esr = 0x9200_0007;
        assert_eq!(
            ExceptionClass::from_esr(esr),
            ExceptionClass::DataAbortLower
        );
        assert_eq!(FaultStatus::from_esr(esr), FaultStatus::Translation(3));
        assert!(!abort_was_write(esr));
        assert_eq!(
            ExceptionClass::from_esr(0x0200_0000),
            ExceptionClass::Unknown
        );
        assert_eq!(
            ExceptionClass::from_esr(0xbe00_0000),
            ExceptionClass::SError
        );
        assert_eq!(
            ExceptionClass::from_esr(0x3f << 26),
            ExceptionClass::Other(0x3f)
        );
    }

    #[test]
    fn permission_fault_on_write() {
        let esr = (0x24u64 << 26) | (1 << 6) | 0b001111;
        assert_eq!(FaultStatus::from_esr(esr), FaultStatus::Permission(3));
        assert!(abort_was_write(esr));
        assert_eq!(FaultStatus::from_esr(0x21), FaultStatus::Alignment);
    }

    #[test]
    fn svc_immediate_is_low_bits() {
        assert_eq!(svc_immediate(0x5600_0000 | 0x1234), 0x1234);
    }
}
