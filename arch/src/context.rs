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

/// Where the kernel keeps a thread's mask of syscalls refused with a
/// constant code (bit n: syscall n), after the work word and the
/// no-entry-work mask; checked against the TCB layout at build time.
pub const REFUSED_OFFSET: usize = WORK_FLAGS_OFFSET + 16;

/// Where the codes of those refusals lie, a `u16` per syscall number
/// (after the mask, the TTBR0 value and the ASID generation).
pub const REFUSAL_CODES_OFFSET: usize = WORK_FLAGS_OFFSET + 40;

/// Where the kernel keeps a thread's mask of syscalls the lean entry
/// judges (bit n: syscall n), after the 64 codes; checked against the TCB
/// layout at build time.
pub const LEAN_JUDGED_OFFSET: usize = REFUSAL_CODES_OFFSET + 2 * 64;

/// Where the kernel keeps a thread's mask of syscalls whose verdict the
/// vector evaluates on the registers (bit n: syscall n), right after;
/// checked against the TCB layout at build time.
pub const REGISTER_JUDGED_OFFSET: usize = LEAN_JUDGED_OFFSET + 8;

/// Where the kernel keeps a thread's mask of syscalls whose policy
/// request the vector sends (bit n: syscall n), right after; checked
/// against the TCB layout at build time.
pub const ASKED_OFFSET: usize = REGISTER_JUDGED_OFFSET + 8;

/// SPSR value for a fresh EL0 AArch64 thread: EL0t, interrupts enabled.
pub const SPSR_EL0T: u64 = 0;
/// SPSR.SS: software step pending (used when single-stepping a thread).
pub const SPSR_SOFTWARE_STEP: u64 = 1 << 21;
/// SPSR bits a user thread may hold, kept across every kernel entry: NZCV
/// and SS, and the bits of its own PSTATE that EL0 sets on the cores
/// that have them (DIT, TCO, SSBS, BTYPE; a Cortex-A72 has none, and
/// the CPU saves them as 0). Everything else (mode, DAIF masks, PAN, UAO,
/// IL) is forced to the EL0t, interrupts-on state. The IPC fast path,
/// which restores a waiting partner's saved SPSR as it is, returns the
/// same bits (`SPSR_NOT_EL0T` are never set there).
pub const SPSR_USER_WRITABLE: u64 =
    0xF000_0000 | SPSR_TCO | SPSR_DIT | SPSR_SOFTWARE_STEP | SPSR_SSBS | SPSR_BTYPE;
/// SPSR.TCO: tag checks overridden (MTE), which EL0 may set.
const SPSR_TCO: u64 = 1 << 25;
/// SPSR.DIT: data-independent timing, which EL0 may set.
const SPSR_DIT: u64 = 1 << 24;
/// SPSR.SSBS: speculative store bypass safe, which EL0 may set.
const SPSR_SSBS: u64 = 1 << 12;
/// SPSR.BTYPE: the branch type a BTI landing pad checks.
const SPSR_BTYPE: u64 = 0b11 << 10;
/// SPSR mode field.
pub const SPSR_MODE_MASK: u64 = 0b1_1111;
/// SPSR bits an eret straight to a thread must find clear: the mode
/// (EL0t is 0), the DAIF masks and IL. The IPC fast path restores a
/// waiting partner's SPSR without `restore_user_context`'s mask, so every
/// such SPSR must have them clear (`Kernel::check_invariants`).
pub const SPSR_NOT_EL0T: u64 = SPSR_MODE_MASK | (0b1111 << 6) | (1 << 20);

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

    /// Would an eret with this context's SPSR as it is enter EL0t with
    /// interrupts on (nothing of [`SPSR_NOT_EL0T`])?
    pub fn returns_to_el0t(&self) -> bool {
        self.spsr & SPSR_NOT_EL0T == 0
    }
}

/// Typed views of the registers by their role in a syscall (the ABI's
/// table in `abi`'s crate documentation): the kernel reads and writes a
/// thread's syscall registers through these, not by register number.
/// Each is one load or store of the field (`#[inline(always)]`), so the
/// tuned paths compile as they did with `x[n]`.
///
/// | register | on entry | on return |
/// | --- | --- | --- |
/// | `x0` | [`capability_pointer`](Self::capability_pointer) | [`result`](Self::result) |
/// | `x1` | [`message_info`](Self::message_info) | the same |
/// | `x2..x7` | [`message_word`](Self::message_word) `0..6` | the same |
/// | `x0..x7` | [`arg`](Self::arg) (by [`entry::ArgIndex`]) | |
/// | `x8` | [`syscall_number`](Self::syscall_number) | [`value`](Self::value): the badge, a notification's word, a register's value |
impl UserContext {
    /// The registers a syscall is made of, `x0..=x8` (arguments and number).
    pub const SYSCALL_REGISTERS: usize = 9;

    /// The syscall number (`x8` on entry).
    #[inline(always)]
    pub fn syscall_number(&self) -> u64 {
        self.x[8]
    }

    /// Replaces the syscall number (`x8`).
    #[inline(always)]
    pub fn set_syscall_number(&mut self, number: u64) {
        self.x[8] = number;
    }

    /// The capability pointer the syscall invokes (`x0` on entry).
    #[inline(always)]
    pub fn capability_pointer(&self) -> u64 {
        self.x[0]
    }

    /// Argument register `x<index>`.
    #[inline(always)]
    pub fn arg(&self, index: entry::ArgIndex) -> u64 {
        self.x[index.index()]
    }

    /// Replaces argument register `x<index>`.
    #[inline(always)]
    pub fn set_arg(&mut self, index: entry::ArgIndex, value: u64) {
        self.x[index.index()] = value;
    }

    /// The syscall's result as user space sees it (`x0` on return).
    #[inline(always)]
    pub fn result(&self) -> u64 {
        self.x[0]
    }

    /// Sets the syscall's result (`x0`).
    #[inline(always)]
    pub fn set_result(&mut self, code: abi::ErrorCode) {
        self.x[0] = code.raw();
    }

    /// Ends a wait in a syscall with error `code`: `x0` is the code and
    /// `x1..x8` are 0. (The IPC fast path does not save a caller's
    /// `x0..x8`, since a result ends its wait: the error that ends one
    /// leaves the same registers on either path, and none of what the
    /// context held from before.)
    #[inline(always)]
    pub fn end_wait_with(&mut self, code: abi::ErrorCode) {
        self.x[0] = code.raw();
        let x = &mut self.x;
        [x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]] = [0; 8];
    }

    /// Sets `x0` to a raw word (a restored or emulated result, a new
    /// thread's first argument).
    #[inline(always)]
    pub fn set_result_word(&mut self, value: u64) {
        self.x[0] = value;
    }

    /// The message info (`x1`).
    #[inline(always)]
    pub fn message_info(&self) -> abi::MessageInfo {
        abi::MessageInfo::from(self.x[1])
    }

    /// Replaces the message info (`x1`).
    #[inline(always)]
    pub fn set_message_info(&mut self, info: abi::MessageInfo) {
        self.x[1] = info.into();
    }

    /// Message word `index` (`x2 + index`; `index` below
    /// [`abi::REGISTER_MESSAGE_WORDS`]).
    #[inline(always)]
    pub fn message_word(&self, index: usize) -> u64 {
        self.x[2 + index]
    }

    /// Replaces message word `index` (`x2 + index`).
    #[inline(always)]
    pub fn set_message_word(&mut self, index: usize, value: u64) {
        self.x[2 + index] = value;
    }

    /// The message words that travel in registers, `x2..=x7`, read word
    /// by word (a slice copy is a call to `memcpy` on the kernel's
    /// strict-alignment target).
    #[inline(always)]
    pub fn message_words(&self) -> [u64; abi::REGISTER_MESSAGE_WORDS] {
        let x = &self.x;
        [x[2], x[3], x[4], x[5], x[6], x[7]]
    }

    /// Replaces the message words in registers, `x2..=x7`, word by word
    /// (for the same reason).
    #[inline(always)]
    pub fn set_message_words(&mut self, words: [u64; abi::REGISTER_MESSAGE_WORDS]) {
        let x = &mut self.x;
        [x[2], x[3], x[4], x[5], x[6], x[7]] = words;
    }

    /// A call's second result (`x8` on return): the badge of a received
    /// message, a notification's word, a register's value.
    #[inline(always)]
    pub fn value(&self) -> u64 {
        self.x[8]
    }

    /// Sets a call's second result (`x8` on return).
    #[inline(always)]
    pub fn set_value(&mut self, value: u64) {
        self.x[8] = value;
    }

    /// The badge a received message came with (`x8` on return).
    #[inline(always)]
    pub fn badge(&self) -> u64 {
        self.x[8]
    }

    /// Sets the badge a received message came with (`x8` on return).
    #[inline(always)]
    pub fn set_badge(&mut self, badge: u64) {
        self.x[8] = badge;
    }

    /// `x0..=x8`: what a syscall is made of (kept with a stopped call).
    #[inline(always)]
    pub fn syscall_registers(&self) -> [u64; Self::SYSCALL_REGISTERS] {
        let x = &self.x;
        [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]]
    }

    /// Puts a kept syscall's `x0..=x8` back, word by word (as a slice copy
    /// this was a call to `memcpy`; in two statements, for the same reason).
    #[inline(always)]
    pub fn set_syscall_registers(&mut self, r: &[u64; Self::SYSCALL_REGISTERS]) {
        let x = &mut self.x;
        [x[0], x[1], x[2], x[3], x[4]] = [r[0], r[1], r[2], r[3], r[4]];
        [x[5], x[6], x[7], x[8]] = [r[5], r[6], r[7], r[8]];
    }

    /// `x0..=x8` in place, for an answer that changes some of them (a
    /// tracer's at an exit or step stop), as a stopped call's kept
    /// registers are changed.
    #[inline(always)]
    pub fn syscall_registers_mut(&mut self) -> &mut [u64; Self::SYSCALL_REGISTERS] {
        match self.x.first_chunk_mut() {
            Some(registers) => registers,
            None => unreachable!("31 registers hold the syscall's 9"),
        }
    }

    /// Replaces the link register (`x30`).
    #[inline(always)]
    pub fn set_link_register(&mut self, value: u64) {
        self.x[30] = value;
    }

    /// General-purpose register `x<index>` (`index` below 31), for the
    /// calls that name registers by number (`TcbReadRegister`).
    #[inline(always)]
    pub fn register(&self, index: usize) -> u64 {
        self.x[index]
    }

    /// Replaces general-purpose register `x<index>` (`index` below 31).
    #[inline(always)]
    pub fn set_register(&mut self, index: usize, value: u64) {
        self.x[index] = value;
    }

    /// Where the thread resumes (`ELR_EL1`; after a syscall, the
    /// instruction after its `svc`).
    #[inline(always)]
    pub fn pc(&self) -> u64 {
        self.pc
    }

    /// Replaces where the thread resumes.
    #[inline(always)]
    pub fn set_pc(&mut self, pc: u64) {
        self.pc = pc;
    }

    /// The user stack pointer (`SP_EL0`).
    #[inline(always)]
    pub fn sp(&self) -> u64 {
        self.sp
    }

    /// Replaces the user stack pointer.
    #[inline(always)]
    pub fn set_sp(&mut self, sp: u64) {
        self.sp = sp;
    }
}

/// The entry code's view: the typed accessors above.
impl entry::SyscallRegisters for UserContext {
    #[inline(always)]
    fn syscall_number(&self) -> u64 {
        UserContext::syscall_number(self)
    }

    #[inline(always)]
    fn set_syscall_number(&mut self, number: u64) {
        UserContext::set_syscall_number(self, number);
    }

    #[inline(always)]
    fn arg(&self, index: entry::ArgIndex) -> u64 {
        UserContext::arg(self, index)
    }

    #[inline(always)]
    fn set_arg(&mut self, index: entry::ArgIndex, value: u64) {
        UserContext::set_arg(self, index, value);
    }

    #[inline(always)]
    fn capability_pointer(&self) -> u64 {
        UserContext::capability_pointer(self)
    }

    #[inline(always)]
    fn return_value(&self) -> u64 {
        UserContext::result(self)
    }

    #[inline(always)]
    fn set_return_value(&mut self, value: u64) {
        UserContext::set_result_word(self, value);
    }

    #[inline(always)]
    fn instruction_pointer(&self) -> u64 {
        UserContext::pc(self)
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
    fn typed_views_name_the_abi_registers() {
        let mut ctx = UserContext::zeroed();
        for (n, x) in ctx.x.iter_mut().enumerate() {
            *x = 100 + n as u64;
        }
        assert_eq!(ctx.capability_pointer(), 100);
        assert_eq!(ctx.arg(entry::ArgIndex::X7), 107);
        assert_eq!(u64::from(ctx.message_info()), 101);
        assert_eq!(ctx.message_word(0), 102);
        assert_eq!(ctx.message_word(abi::REGISTER_MESSAGE_WORDS - 1), 107);
        assert_eq!(ctx.syscall_number(), 108);
        assert_eq!(
            ctx.syscall_registers(),
            core::array::from_fn(|n| 100 + n as u64)
        );
        ctx.set_result(abi::ErrorCode::Interrupted);
        assert_eq!(ctx.x[0], abi::ErrorCode::Interrupted.raw());
        ctx.set_value(7);
        assert_eq!((ctx.x[8], ctx.badge()), (7, 7));
        ctx.set_syscall_registers(&[1; UserContext::SYSCALL_REGISTERS]);
        assert_eq!(ctx.x[..10], [1, 1, 1, 1, 1, 1, 1, 1, 1, 109]);
        assert_eq!(ctx.message_words(), [1; abi::REGISTER_MESSAGE_WORDS]);
        ctx.set_message_words([2, 3, 4, 5, 6, 7]);
        assert_eq!(ctx.x[1..10], [1, 2, 3, 4, 5, 6, 7, 1, 109]);
        ctx.syscall_registers_mut()[8] = 9;
        ctx.set_link_register(30);
        assert_eq!((ctx.x[8], ctx.x[30]), (9, 30));
        ctx.end_wait_with(abi::ErrorCode::Interrupted);
        assert_eq!(
            ctx.x[..10],
            [
                abi::ErrorCode::Interrupted.raw(),
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                109
            ]
        );
        ctx.set_pc(0x40);
        ctx.set_sp(0x80);
        assert_eq!((ctx.pc, ctx.sp), (0x40, 0x80));
    }

    #[test]
    fn new_user_context_is_el0() {
        let ctx = UserContext::new_user(0x40_0000, 0x7000_0000, 7);
        assert!(ctx.is_el0_aarch64());
        assert_eq!(ctx.x[0], 7);
    }

    #[test]
    fn only_an_el0t_spsr_with_interrupts_on_returns_as_it_is() {
        let mut ctx = UserContext::new_user(0x40_0000, 0x7000_0000, 0);
        assert!(ctx.returns_to_el0t());
        // What a thread may hold: NZCV and a pending software step.
        ctx.spsr = SPSR_USER_WRITABLE;
        assert!(ctx.returns_to_el0t());
        // None of what may come back as it is is masked on the slow path.
        assert_eq!(SPSR_USER_WRITABLE & SPSR_NOT_EL0T, 0);
        // EL1h, EL1t, any DAIF mask, IL: never.
        for bad in [0b0101, 0b0100, 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 20] {
            ctx.spsr = SPSR_USER_WRITABLE | bad;
            assert!(!ctx.returns_to_el0t(), "{bad:#x}");
        }
    }
}
