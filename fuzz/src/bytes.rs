//! Reading fuzz input as a stream of small values.
//!
//! Structured targets (the capability operations, the syscall facts) take
//! their choices from the input one value at a time. Running out of input
//! is not an error: every read then yields zero, and `is_empty` tells the
//! caller to stop, so every input, however short, is a valid run.

/// A cursor over the fuzz input.
pub(crate) struct Bytes<'a> {
    rest: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// Reads `data` from the start.
    pub(crate) fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { rest: data }
    }

    /// Is the input used up?
    pub(crate) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next byte (0 past the end).
    pub(crate) fn u8(&mut self) -> u8 {
        match self.rest.split_first() {
            Some((first, rest)) => {
                self.rest = rest;
                *first
            }
            None => 0,
        }
    }

    /// The next 8 bytes, little endian (missing bytes are 0).
    pub(crate) fn u64(&mut self) -> u64 {
        let mut word = [0u8; 8];
        for byte in &mut word {
            *byte = self.u8();
        }
        u64::from_le_bytes(word)
    }

    /// The next `len` bytes, or what is left if fewer.
    pub(crate) fn take(&mut self, len: usize) -> &'a [u8] {
        let (taken, rest) = self.rest.split_at(len.min(self.rest.len()));
        self.rest = rest;
        taken
    }
}
