//! Syscall user dispatch (after Linux's `PR_SET_SYSCALL_USER_DISPATCH`):
//! the selector byte, the saved-context frame, and what the handler gets.
//!
//! A thread configures it for itself with `Syscall::SetUserDispatch`:
//!
//! | register | meaning                                                     |
//! |----------|-------------------------------------------------------------|
//! | `x0`     | reserved, must be 0 (`InvalidArgument` otherwise)           |
//! | `x2`     | start of the allowed PC range (inclusive)                   |
//! | `x3`     | end of the allowed PC range (exclusive, `x2 <= x3`)         |
//! | `x4`     | the handler's address (user half, 4-byte aligned)           |
//! | `x5`     | the frame buffer (user half, 8-byte aligned, [`FRAME_BYTES`] writable) |
//! | `x6`     | the selector byte's address (user half, readable)           |
//!
//! `x2..=x6` all 0 turns dispatch off. While it is on, every syscall the
//! thread makes is checked first (stage 1 of the generic entry): if the
//! selector byte reads [`SELECTOR_BLOCK`] (or anything but
//! [`SELECTOR_ALLOW`]) and the `svc` lies outside `[x2, x3)`, the syscall
//! does not run. The kernel writes a [`Frame`] into the buffer and returns
//! to EL0 at the handler with
//!
//! - `x0` = the buffer's address, `x1` = the syscall number,
//! - `x30` (the link register) = 0, so a handler that returns instead of
//!   calling `UserDispatchReturn` faults at address 0,
//! - every other register, `sp` included, as the thread made the syscall
//!   (the handler runs on the interrupted stack, below its `sp`; AAPCS64
//!   has no red zone, so nothing live is there).
//!
//! `Syscall::UserDispatchReturn` with `x0` = a frame's address restores
//! `x0..x30`, `sp`, `pc` and NZCV from it (nothing else of PSTATE) and
//! returns there; it is never redirected, wherever it is made from.

/// Selector value: run every syscall (the range does not matter).
pub const SELECTOR_ALLOW: u8 = 0;
/// Selector value: redirect syscalls made outside the allowed range. Any
/// value other than [`SELECTOR_ALLOW`] blocks, too (fail closed).
pub const SELECTOR_BLOCK: u8 = 1;

/// Frame word: `x0..x30` take words 0 to 30.
pub const X0_WORD: usize = 0;
/// Frame word: the user stack pointer.
pub const SP_WORD: usize = 31;
/// Frame word: where the thread resumes, the instruction after the `svc`.
pub const PC_WORD: usize = 32;
/// Frame word: NZCV (PSTATE bits 31..28, in place; other bits 0).
pub const NZCV_WORD: usize = 33;
/// Frame word: the syscall number (`x8` as the thread made the call).
pub const NUMBER_WORD: usize = 34;
/// Frame word: [`FLAG_SELECTOR_UNREADABLE`] and future flags.
pub const FLAGS_WORD: usize = 35;
/// Words in a frame.
pub const FRAME_WORDS: usize = 36;
/// Bytes in a frame: the least a buffer must hold.
pub const FRAME_BYTES: u64 = (FRAME_WORDS * 8) as u64;

/// Frame flag: the selector byte could not be read (unmapped), so the
/// syscall was redirected as if it read [`SELECTOR_BLOCK`].
pub const FLAG_SELECTOR_UNREADABLE: u64 = 1 << 0;

/// Exit status of a thread whose context could not be saved when a
/// syscall was redirected (its buffer was unmapped or made read-only).
pub const KILLED_BY_USER_DISPATCH: i64 = -36;

/// The saved context as a handler reads it (`repr(C)`: word `i` at byte
/// `8 * i`; the kernel writes it little-endian, as AArch64 stores it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// `x0..x30` when the thread made the syscall.
    pub x: [u64; 31],
    /// The user stack pointer.
    pub sp: u64,
    /// The instruction after the `svc`: where `UserDispatchReturn` resumes.
    pub pc: u64,
    /// NZCV (bits 31..28).
    pub nzcv: u64,
    /// The syscall number.
    pub number: u64,
    /// `FLAG_*` bits.
    pub flags: u64,
}

impl Frame {
    /// The frame as the words the kernel writes, in order.
    pub fn to_words(&self) -> [u64; FRAME_WORDS] {
        let mut words = [0u64; FRAME_WORDS];
        words[X0_WORD..X0_WORD + 31].copy_from_slice(&self.x);
        words[SP_WORD] = self.sp;
        words[PC_WORD] = self.pc;
        words[NZCV_WORD] = self.nzcv;
        words[NUMBER_WORD] = self.number;
        words[FLAGS_WORD] = self.flags;
        words
    }

    /// A frame from its words.
    pub fn from_words(words: &[u64; FRAME_WORDS]) -> Frame {
        let mut x = [0u64; 31];
        x.copy_from_slice(&words[X0_WORD..X0_WORD + 31]);
        Frame {
            x,
            sp: words[SP_WORD],
            pc: words[PC_WORD],
            nzcv: words[NZCV_WORD],
            number: words[NUMBER_WORD],
            flags: words[FLAGS_WORD],
        }
    }

    /// The frame as little-endian bytes (what lands in user memory).
    pub fn to_bytes(&self) -> [u8; FRAME_BYTES as usize] {
        let mut bytes = [0u8; FRAME_BYTES as usize];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(self.to_words()) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// A frame from little-endian bytes.
    pub fn from_bytes(bytes: &[u8; FRAME_BYTES as usize]) -> Frame {
        let mut words = [0u64; FRAME_WORDS];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(chunk);
            *word = u64::from_le_bytes(le);
        }
        Frame::from_words(&words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_the_documented_abi() {
        assert_eq!(core::mem::size_of::<Frame>() as u64, FRAME_BYTES);
        assert_eq!(core::mem::offset_of!(Frame, sp), 8 * SP_WORD);
        assert_eq!(core::mem::offset_of!(Frame, pc), 8 * PC_WORD);
        assert_eq!(core::mem::offset_of!(Frame, nzcv), 8 * NZCV_WORD);
        assert_eq!(core::mem::offset_of!(Frame, number), 8 * NUMBER_WORD);
        assert_eq!(core::mem::offset_of!(Frame, flags), 8 * FLAGS_WORD);
        assert_eq!(FRAME_BYTES, 288);
    }

    #[test]
    fn bytes_round_trip() {
        let mut frame = Frame::default();
        for (i, x) in frame.x.iter_mut().enumerate() {
            *x = 0x1000 + i as u64;
        }
        frame.sp = 0x7fff_0000;
        frame.pc = 0x40_1234;
        frame.nzcv = 0x6000_0000;
        frame.number = 3;
        frame.flags = FLAG_SELECTOR_UNREADABLE;
        let bytes = frame.to_bytes();
        assert_eq!(&bytes[8..16], &0x1001u64.to_le_bytes());
        assert_eq!(
            &bytes[8 * PC_WORD..8 * PC_WORD + 8],
            &0x40_1234u64.to_le_bytes()
        );
        assert_eq!(Frame::from_bytes(&bytes), frame);
    }
}
