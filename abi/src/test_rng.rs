//! A deterministic xorshift64* generator for the randomised tests of the
//! wire formats (policy descriptions, rule text, system plans): the same
//! seed gives the same run.

/// The generator's state.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// The next number.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}
