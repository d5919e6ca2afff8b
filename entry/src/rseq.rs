//! The restartable-sequence check of the exit work (`WorkFlags::RSEQ`,
//! `docs/rseq.md`): what the kernel does to a thread's rseq area and PC
//! on its way back to EL0 after an event.
//!
//! The check is the first thing the exit work does with the thread once
//! its syscall (if any) is over: before a trace exit stop or a
//! single-step report is sent, so a tracer sees the PC the thread will
//! run, and a thread never runs one instruction of an interrupted section
//! past the event. It reads and writes user memory only through
//! [`UserMemory`], whose every access may fail: a bad pointer is an
//! [`RseqError`], which the kernel turns into the end of the thread, never
//! its own fault.
//!
//! In order:
//! 1. the area is read (its CPU ids and the descriptor pointer);
//! 2. the CPU ids are written if they are not the CPU the thread returns
//!    on;
//! 3. with no descriptor, that is all;
//! 4. the descriptor is read and checked: aligned, version 0, no flags,
//!    a section that does not wrap, an abort address 4-byte aligned and
//!    outside the section, and the signature word before it equal to the
//!    registered one (checked whether or not the PC is inside, as Linux
//!    does, so a bad descriptor is found at its first check);
//! 5. a PC inside `[start, start + post_commit_offset)` becomes `abort`;
//! 6. the descriptor pointer is cleared.

use abi::rseq::{
    Descriptor, AREA_BYTES, CPU_ID, CPU_ID_START, CRITICAL_SECTION, DESCRIPTOR_ALIGN,
    DESCRIPTOR_BYTES, DESCRIPTOR_VERSION,
};
use core::fmt;

/// A thread's user memory as the kernel reaches it: every access may fail
/// (unmapped, read-only, device memory), and fails whole.
pub trait UserMemory {
    /// Reads `out.len()` bytes at `address`; `false` if any is unreadable.
    fn read(&self, address: u64, out: &mut [u8]) -> bool;
    /// Writes `data` at `address`; `false` (and nothing written) if any
    /// byte is not writable.
    fn write(&mut self, address: u64, data: &[u8]) -> bool;
}

/// What a thread registered (`Syscall::SetRseq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The area's user address.
    pub area: u64,
    /// The signature the word before every abort address must hold.
    pub signature: u32,
}

/// What one check did (the kernel counts it: `abi::rseq::Counters`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// The PC to return to, if the thread was inside its section.
    pub abort_to: Option<u64>,
    /// The CPU ids were written.
    pub ids_updated: bool,
    /// A descriptor was looked at.
    pub section_checked: bool,
    /// The descriptor pointer was cleared.
    pub cleared: bool,
}

/// Why a check failed: the kernel ends the thread and prints this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RseqError {
    /// The area cannot be read.
    AreaUnreadable {
        /// Its address.
        area: u64,
    },
    /// The area cannot be written.
    AreaUnwritable {
        /// Its address.
        area: u64,
    },
    /// The descriptor pointer is not 32-byte aligned.
    DescriptorMisaligned {
        /// The pointer.
        descriptor: u64,
    },
    /// The descriptor cannot be read.
    DescriptorUnreadable {
        /// Its address.
        descriptor: u64,
    },
    /// The descriptor's version or flags are not 0.
    DescriptorVersion {
        /// Its address.
        descriptor: u64,
    },
    /// `start + post_commit_offset` wraps around.
    SectionWraps {
        /// The descriptor's address.
        descriptor: u64,
    },
    /// The abort address is not 4-byte aligned, or lies inside the section.
    BadAbort {
        /// The abort address.
        abort: u64,
    },
    /// The word before the abort address cannot be read.
    SignatureUnreadable {
        /// The abort address.
        abort: u64,
    },
    /// The word before the abort address is not the registered signature.
    SignatureMismatch {
        /// The abort address.
        abort: u64,
        /// What the word holds.
        found: u32,
        /// The registered signature.
        expected: u32,
    },
}

impl fmt::Display for RseqError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RseqError::AreaUnreadable { area } => {
                write!(f, "its rseq area at {area:#x} cannot be read")
            }
            RseqError::AreaUnwritable { area } => {
                write!(f, "its rseq area at {area:#x} cannot be written")
            }
            RseqError::DescriptorMisaligned { descriptor } => write!(
                f,
                "its rseq descriptor pointer {descriptor:#x} is not 32-byte aligned"
            ),
            RseqError::DescriptorUnreadable { descriptor } => {
                write!(f, "its rseq descriptor at {descriptor:#x} cannot be read")
            }
            RseqError::DescriptorVersion { descriptor } => write!(
                f,
                "its rseq descriptor at {descriptor:#x} has a version or flags other than 0"
            ),
            RseqError::SectionWraps { descriptor } => write!(
                f,
                "its rseq descriptor at {descriptor:#x} has a section that wraps around"
            ),
            RseqError::BadAbort { abort } => write!(
                f,
                "its rseq abort address {abort:#x} is unaligned or inside its own section"
            ),
            RseqError::SignatureUnreadable { abort } => write!(
                f,
                "the signature before its rseq abort address {abort:#x} cannot be read"
            ),
            RseqError::SignatureMismatch {
                abort,
                found,
                expected,
            } => write!(
                f,
                "the word before its rseq abort address {abort:#x} is {found:#010x}, not the registered signature {expected:#010x}"
            ),
        }
    }
}

/// The check: `pc` is where the thread would return, `cpu` the CPU it
/// returns on. On success the caller sets the PC to `abort_to`, if any.
pub fn check_on_exit<M: UserMemory>(
    memory: &mut M,
    registration: Registration,
    cpu: u32,
    pc: u64,
) -> Result<Checked, RseqError> {
    let area = registration.area;
    let mut checked = Checked::default();
    let mut bytes = [0u8; AREA_BYTES as usize];
    if !memory.read(area, &mut bytes) {
        return Err(RseqError::AreaUnreadable { area });
    }
    let word = |at: u64| -> u32 {
        let at = at as usize;
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    };
    let (cpu_id_start, cpu_id) = (word(CPU_ID_START), word(CPU_ID));
    if cpu_id_start != cpu || cpu_id != cpu {
        let mut ids = [0u8; 8];
        ids[..4].copy_from_slice(&cpu.to_le_bytes());
        ids[4..].copy_from_slice(&cpu.to_le_bytes());
        if !memory.write(area + CPU_ID_START, &ids) {
            return Err(RseqError::AreaUnwritable { area });
        }
        checked.ids_updated = true;
    }
    let at = CRITICAL_SECTION as usize;
    let descriptor = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    if descriptor == 0 {
        return Ok(checked);
    }
    checked.section_checked = true;
    let section = read_descriptor(memory, descriptor)?;
    let end = section
        .start
        .checked_add(section.post_commit_offset)
        .ok_or(RseqError::SectionWraps { descriptor })?;
    let abort = section.abort;
    if !abort.is_multiple_of(4) || (section.start..end).contains(&abort) {
        return Err(RseqError::BadAbort { abort });
    }
    let mut signature = [0u8; 4];
    if abort < 4 || !memory.read(abort - 4, &mut signature) {
        return Err(RseqError::SignatureUnreadable { abort });
    }
    let found = u32::from_le_bytes(signature);
    if found != registration.signature {
        return Err(RseqError::SignatureMismatch {
            abort,
            found,
            expected: registration.signature,
        });
    }
    if (section.start..end).contains(&pc) {
        checked.abort_to = Some(abort);
    }
    if !memory.write(area + CRITICAL_SECTION, &0u64.to_le_bytes()) {
        return Err(RseqError::AreaUnwritable { area });
    }
    checked.cleared = true;
    Ok(checked)
}

/// Reads and checks the descriptor at `descriptor` (alignment, version,
/// flags).
fn read_descriptor<M: UserMemory>(memory: &M, descriptor: u64) -> Result<Descriptor, RseqError> {
    if !descriptor.is_multiple_of(DESCRIPTOR_ALIGN) {
        return Err(RseqError::DescriptorMisaligned { descriptor });
    }
    let mut bytes = [0u8; DESCRIPTOR_BYTES as usize];
    if !memory.read(descriptor, &mut bytes) {
        return Err(RseqError::DescriptorUnreadable { descriptor });
    }
    let section = Descriptor::from_bytes(&bytes);
    if section.version != DESCRIPTOR_VERSION || section.flags != 0 {
        return Err(RseqError::DescriptorVersion { descriptor });
    }
    Ok(section)
}
