//! A thread's saved user state.
//!
//! `UserContext` is what the exception vectors store on entry from EL0 and
//! what `restore_user_context` loads on the way back; its layout is shared
//! with `cpu/vectors.s` (offsets checked by the tests below).

/// General-purpose registers and the EL1 return state of a thread.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserContext {
    /// `x0`..`x30`.
    pub x: [u64; 31],
    /// The user stack pointer (`SP_EL0`).
    pub sp: u64,
    /// Where the thread resumes (`ELR_EL1`).
    pub pc: u64,
    /// The thread's PSTATE (`SPSR_EL1`).
    pub spsr: u64,
    /// The user thread pointer (`TPIDR_EL0`): saved on entry, loaded on the
    /// way back, like the registers above.
    pub tpidr: u64,
    padding: u64,
}

/// Where the kernel keeps a thread's work word relative to its saved
/// registers: right after them (the fast path in `cpu/vectors.s` reads it
/// at `SP_EL1 + WORK_FLAGS_OFFSET`; the kernel's TCB layout is checked
/// against this constant at build time).
pub const WORK_FLAGS_OFFSET: usize = core::mem::size_of::<UserContext>();

/// SPSR value for a fresh EL0 AArch64 thread: EL0t, interrupts enabled.
pub const SPSR_EL0T: u64 = 0;
/// SPSR.SS: software step pending (used when single-stepping a thread).
pub const SPSR_SOFTWARE_STEP: u64 = 1 << 21;
/// SPSR bits a user thread may hold: NZCV and SS. Everything else (mode,
/// DAIF masks, PAN, IL) is forced to the EL0t, interrupts-on state.
pub const SPSR_USER_WRITABLE: u64 = 0xF000_0000 | SPSR_SOFTWARE_STEP;
/// SPSR mode field.
pub const SPSR_MODE_MASK: u64 = 0b1_1111;

impl UserContext {
    /// All registers zero (usable in constants).
    pub const fn zeroed() -> Self {
        UserContext {
            x: [0; 31],
            sp: 0,
            pc: 0,
            spsr: 0,
            tpidr: 0,
            padding: 0,
        }
    }

    /// A context that starts at `pc` with stack `sp` and `x0 = arg`.
    pub fn new_user(pc: u64, sp: u64, arg: u64) -> Self {
        let mut ctx = UserContext {
            pc,
            sp,
            spsr: SPSR_EL0T,
            ..UserContext::default()
        };
        ctx.x[0] = arg;
        ctx
    }

    /// This context with `TPIDR_EL0` = `tpidr` (where a new thread finds
    /// its IPC buffer).
    pub fn with_thread_pointer(mut self, tpidr: u64) -> Self {
        self.tpidr = tpidr;
        self
    }

    /// Did this context come from EL0 AArch64 (mode bits all zero)?
    pub fn is_el0_aarch64(&self) -> bool {
        self.spsr & SPSR_MODE_MASK == 0
    }
}

impl entry::SyscallRegisters for UserContext {
    fn syscall_number(&self) -> u64 {
        self.x[8]
    }

    fn set_syscall_number(&mut self, number: u64) {
        self.x[8] = number;
    }

    fn arg(&self, index: entry::ArgIndex) -> u64 {
        self.x[index.index()]
    }

    fn set_arg(&mut self, index: entry::ArgIndex, value: u64) {
        self.x[index.index()] = value;
    }

    fn return_value(&self) -> u64 {
        self.x[0]
    }

    fn set_return_value(&mut self, value: u64) {
        self.x[0] = value;
    }

    fn instruction_pointer(&self) -> u64 {
        self.pc
    }
}

/// FP/SIMD state: `q0`..`q31`, FPCR, FPSR (layout shared with `fp_save`).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FpState {
    /// `q0`..`q31`.
    pub q: [u128; 32],
    /// Floating-point control register.
    pub fpcr: u64,
    /// Floating-point status register.
    pub fpsr: u64,
}

impl FpState {
    /// All registers zero (usable in constants).
    pub const fn zeroed() -> Self {
        FpState {
            q: [0; 32],
            fpcr: 0,
            fpsr: 0,
        }
    }
}

impl Default for FpState {
    fn default() -> Self {
        Self::zeroed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    #[test]
    fn layout_matches_vectors_s() {
        assert_eq!(offset_of!(UserContext, x), 0);
        assert_eq!(offset_of!(UserContext, sp), 248);
        assert_eq!(offset_of!(UserContext, pc), 256);
        assert_eq!(offset_of!(UserContext, spsr), 264);
        assert_eq!(offset_of!(UserContext, tpidr), 272);
        assert_eq!(size_of::<UserContext>(), 288);
        assert_eq!(offset_of!(FpState, fpcr), 512);
        assert_eq!(offset_of!(FpState, fpsr), 520);
    }

    #[test]
    fn vectors_s_takes_its_numbers_from_rust() {
        // Every `.equ` of the vectors is a const operand (`cpu/mod.rs`),
        // so the layout and numbers above cannot drift from the assembly.
        for file in [
            include_str!("cpu/vectors.s"),
            include_str!("cpu/floor_vectors.s"),
        ] {
            for line in file.lines().filter(|l| l.starts_with(".equ ")) {
                let is_kind = line.starts_with(".equ KIND_");
                assert!(
                    is_kind || line.contains('{'),
                    "a number in the assembly: {line}"
                );
            }
        }
    }

    #[test]
    fn new_user_context_is_el0() {
        let ctx = UserContext::new_user(0x40_0000, 0x7000_0000, 7);
        assert!(ctx.is_el0_aarch64());
        assert_eq!(ctx.x[0], 7);
    }
}
