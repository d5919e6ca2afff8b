//! The judged copy of the memory a syscall carries: taken once, before
//! the policy check, and the only copy the call ever uses.
//!
//! Linux's seccomp cannot look behind a pointer, and its user-notify
//! `CONTINUE` is documented as unsafe for security decisions: the memory a
//! supervisor inspected can change before the kernel reads it (TOCTOU).
//! Here a filtered thread's syscall whose verdict may depend on memory (a
//! rule reads a message word or the bytes it carries, or a policy server
//! is asked) has that memory copied into its TCB first
//! (`Thread::judged`): the filters judge the copy, a `Notify` request
//! carries the copy to the server, and when the call runs it prints,
//! loads or sends the copy, never the caller's memory read again. So
//! another thread of the same address space rewriting the buffer while
//! the call is judged, waits for its server, or waits for a receiver
//! changes nothing that runs.
//!
//! * **What is copied.** `DebugPrint`'s text and `FilterLoad`'s
//!   description (`x2` address, `x3` length; the first
//!   [`MAX_JUDGED_BYTES`]), and the IPC buffer words (word 6 up to the
//!   message's length) of a message sent by `Send`, `NBSend`, `Call`,
//!   `Reply` and `ReplyRecv` (`abi::Syscall::carries_memory`). Other
//!   syscalls carry no memory.
//! * **Where it lives, and who pays.** In the calling thread's TCB record,
//!   [`MAX_JUDGED_BYTES`] bytes of it, paid by the Untyped memory the TCB
//!   was retyped from (the kernel's own records for the threads it
//!   makes). One syscall is in flight per thread, so one copy suffices,
//!   however long the call waits (for a server's answer, or queued on an
//!   endpoint for a receiver).
//! * **Past the size.** A message's buffer words fit whole (58 words, 464
//!   bytes), and so does a `DebugPrint` text (256 bytes). A `FilterLoad`
//!   description longer than [`MAX_JUDGED_BYTES`] is judged by its first
//!   512 bytes; the load uses those from the copy and reads the rest when
//!   it runs (a rule that must see every byte also asks `when x3 <= 512`).
//! * **Unreadable.** A buffer that cannot be read when the call is judged
//!   is remembered as such: no rule on its bytes holds, and the call fails
//!   with `InvalidAddress` when it runs, even if the memory has been
//!   mapped since.

use crate::filter::JudgedView;
use abi::policy::MAX_JUDGED_BYTES;
use abi::policy_request::CarriedMemory;

/// The copy's bytes, aligned for word access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct JudgedBytes(pub [u8; MAX_JUDGED_BYTES]);

/// What the copy holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// Nothing taken for the thread's current syscall: it was not judged
    /// on memory, or it carries none (nothing reads the copy).
    Nothing,
    /// Taken: the buffer (`length` bytes at `address`) could not be read.
    Unreadable {
        /// The buffer's address.
        address: u64,
        /// The buffer's length.
        length: u64,
    },
    /// Taken: the first `judged` bytes of a `length`-byte buffer at
    /// `address`.
    Buffer {
        /// The buffer's address.
        address: u64,
        /// The buffer's length.
        length: u64,
        /// How many bytes were copied (at most [`MAX_JUDGED_BYTES`]).
        judged: u16,
    },
    /// Taken: a message's IPC buffer words, `words` of them (word 6 on).
    Message {
        /// How many buffer words were copied.
        words: u8,
    },
}

/// A thread's judged copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JudgedMemory {
    /// What it holds.
    pub judged: Judged,
    /// The bytes (valid as `judged` says).
    pub bytes: JudgedBytes,
}

impl JudgedMemory {
    /// Nothing taken.
    pub const fn new() -> JudgedMemory {
        JudgedMemory {
            judged: Judged::Nothing,
            bytes: JudgedBytes([0; MAX_JUDGED_BYTES]),
        }
    }

    /// Forgets the copy (a new syscall begins): only the state changes;
    /// the bytes are never read while it is `Nothing`.
    #[inline(always)]
    pub fn forget(&mut self) {
        self.judged = Judged::Nothing;
    }

    /// Has a copy been taken for the current syscall?
    #[inline(always)]
    pub fn is_taken(&self) -> bool {
        self.judged != Judged::Nothing
    }

    /// The copied bytes (empty when none were copied).
    pub fn copied(&self) -> &[u8] {
        let len = match self.judged {
            Judged::Buffer { judged, .. } => usize::from(judged),
            Judged::Message { words } => usize::from(words) * 8,
            _ => 0,
        };
        &self.bytes.0[..len.min(MAX_JUDGED_BYTES)]
    }

    /// What the copy holds, as a policy request describes it: its kind,
    /// the memory's length, the bytes carried.
    pub fn described(&self) -> (CarriedMemory, u64, u64) {
        match self.judged {
            Judged::Nothing | Judged::Unreadable { .. } => (CarriedMemory::None, 0, 0),
            Judged::Buffer { length, judged, .. } => {
                (CarriedMemory::Buffer, length, u64::from(judged))
            }
            Judged::Message { words } => {
                let bytes = u64::from(words) * 8;
                (CarriedMemory::Message, bytes, bytes)
            }
        }
    }

    /// Is it the copy of a message?
    #[inline(always)]
    pub fn is_message(&self) -> bool {
        matches!(self.judged, Judged::Message { .. })
    }

    /// The buffer words (past the registers) of a judged message, if the
    /// copy is a message's: what the filters judged, so what is sent.
    pub fn message_words(&self) -> Option<usize> {
        match self.judged {
            Judged::Message { words } => Some(usize::from(words)),
            _ => None,
        }
    }

    /// Word `k` of the copy's bytes (bytes `8k..8k + 8`, little-endian;
    /// 0 past the array), read from the aligned array in one load. (The
    /// target has strict alignment: assembled from the bytes of a chunk
    /// an iterator handed out, a word took some 20 instructions.)
    #[inline(always)]
    fn word(&self, k: usize) -> u64 {
        let (chunks, _) = self.bytes.0.as_chunks::<8>();
        chunks.get(k).map_or(0, |chunk| u64::from_le_bytes(*chunk))
    }

    /// The copied bytes as little-endian words, the last word's bytes
    /// past the copy zero: what a policy request carries of them.
    pub fn copied_words(&self) -> impl Iterator<Item = u64> + '_ {
        let length = self.copied().len();
        (0..length.div_ceil(8)).map(move |k| {
            let word = self.word(k);
            match length - 8 * k {
                whole if whole >= 8 => word,
                tail => word & ((1 << (8 * tail)) - 1),
            }
        })
    }

    /// Buffer word `index` (6 and up) of a judged message, if it was sent.
    pub fn message_word(&self, index: usize) -> Option<u64> {
        let Judged::Message { words } = self.judged else {
            return None;
        };
        let i = index.checked_sub(abi::REGISTER_MESSAGE_WORDS)?;
        if i >= usize::from(words) {
            return None;
        }
        Some(self.word(i))
    }

    /// Sets the copy to `words` message buffer words, `word(i)` giving
    /// buffer word `6 + i`.
    ///
    /// (Out of line: only as a function's argument is the copy known to
    /// the compiler as 8-aligned, which the word stores need on the
    /// strict-alignment kernel target; inlined, each word was eight byte
    /// stores.)
    #[inline(never)]
    pub fn take_message(&mut self, words: usize, mut word: impl FnMut(usize) -> u64) {
        let words = words.min(MAX_JUDGED_BYTES / 8);
        // Whole words into the aligned array's chunks, indexed: one store
        // each. (Through the chunks an iterator handed out, the target's
        // strict alignment made each word eight byte stores.)
        let (chunks, _) = self.bytes.0.as_chunks_mut::<8>();
        for i in 0..words.min(chunks.len()) {
            chunks[i] = word(i).to_le_bytes();
        }
        self.judged = Judged::Message { words: words as u8 };
    }

    /// Makes the copy the one of the `length`-byte buffer at `address`,
    /// if the copy already holds all of it: the same buffer, or a shorter
    /// one at the same address (a policy server's "allow with" that
    /// lowers the length: the server judged these very bytes, which are
    /// never read again). `false` if the copy does not hold it (another
    /// address, or more bytes than were copied): then it must be copied,
    /// and judged, again.
    pub fn narrow_to(&mut self, address: u64, length: u64) -> bool {
        match self.judged {
            Judged::Buffer {
                address: a,
                length: l,
                judged,
            } if a == address && (length == l || length <= u64::from(judged)) => {
                self.judged = Judged::Buffer {
                    address,
                    length,
                    judged: judged.min(length as u16),
                };
                true
            }
            Judged::Unreadable {
                address: a,
                length: l,
            } => a == address && l == length,
            _ => false,
        }
    }

    /// Sets the copy to the first bytes of the `length`-byte buffer at
    /// `address`, read a word at a time: `word_at(va)` gives the aligned
    /// 8-byte word at `va` (`Err`: it cannot be read). Only the words that
    /// hold the copied bytes are read, so a buffer ending just before an
    /// unmapped page copies. (A byte-wise copy went through `memcpy`, some
    /// eight instructions a byte on the kernel target.)
    pub fn take_buffer_by_words<E>(
        &mut self,
        address: u64,
        length: u64,
        mut word_at: impl FnMut(u64) -> Result<u64, E>,
    ) {
        let judged = usize::try_from(length).map_or(MAX_JUDGED_BYTES, |l| l.min(MAX_JUDGED_BYTES));
        let unreadable = Judged::Unreadable { address, length };
        if judged > 0 {
            let Some(last) = address.checked_add(judged as u64 - 1) else {
                self.judged = unreadable;
                return;
            };
            let first = address & !7;
            // Bits the buffer starts into its first word.
            let shift = 8 * (address % 8) as u32;
            let Ok(mut low) = word_at(first) else {
                self.judged = unreadable;
                return;
            };
            // Each chunk indexed from the aligned array: one store a word.
            // (The target has strict alignment: the chunks an iterator
            // handed out here, with the shifts between, were stored a byte
            // at a time, 15 instructions a word.)
            let (chunks, _) = self.bytes.0.as_chunks_mut::<8>();
            for k in 0..judged.div_ceil(8).min(chunks.len()) {
                let next_at = first + 8 * (k as u64 + 1);
                // The next word, when a byte of it is copied into this one.
                let high = if shift != 0 && next_at <= last {
                    match word_at(next_at) {
                        Ok(word) => word,
                        Err(_) => {
                            self.judged = unreadable;
                            return;
                        }
                    }
                } else {
                    0
                };
                let word = match shift {
                    0 => low,
                    _ => (low >> shift) | (high << (64 - shift)),
                };
                chunks[k] = word.to_le_bytes();
                low = match shift {
                    0 if next_at <= last => match word_at(next_at) {
                        Ok(word) => word,
                        Err(_) => {
                            self.judged = unreadable;
                            return;
                        }
                    },
                    0 => 0,
                    _ => high,
                };
            }
        }
        self.judged = Judged::Buffer {
            address,
            length,
            judged: judged as u16,
        };
    }

    /// What a call that runs reads of the `length`-byte buffer at
    /// `address`: `Some(Ok(bytes))`, the judged copy of its first
    /// `bytes.len()` bytes; `Some(Err(()))`, it could not be read when it
    /// was judged (the call fails, even if it could be now); `None`, it
    /// was not judged (nothing looked at it: the call reads it itself).
    pub fn buffer_for(&self, address: u64, length: u64) -> Option<Result<&[u8], ()>> {
        match self.judged {
            Judged::Buffer {
                address: a,
                length: l,
                ..
            } if a == address && l == length => Some(Ok(self.copied())),
            Judged::Unreadable {
                address: a,
                length: l,
            } if a == address && l == length => Some(Err(())),
            _ => None,
        }
    }

    /// The copy as rules see it. (Inlined where the facts are built:
    /// called, the view went through memory.)
    #[inline(always)]
    pub fn view(&self) -> JudgedView<'_> {
        match self.judged {
            Judged::Nothing => JudgedView::default(),
            Judged::Unreadable { length, .. } => JudgedView {
                bytes: None,
                length: usize::try_from(length).unwrap_or(usize::MAX),
                message: false,
            },
            Judged::Buffer { length, .. } => JudgedView {
                bytes: Some(self.copied()),
                length: usize::try_from(length).unwrap_or(usize::MAX),
                message: false,
            },
            Judged::Message { words } => JudgedView {
                bytes: Some(self.copied()),
                length: usize::from(words) * 8,
                message: true,
            },
        }
    }
}

impl Default for JudgedMemory {
    fn default() -> JudgedMemory {
        JudgedMemory::new()
    }
}

#[cfg(test)]
mod tests;
