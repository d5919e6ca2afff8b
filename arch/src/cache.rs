//! What CTR_EL0 says about the caches, and so what making freshly
//! written instructions fetchable takes.
//!
//! The kernel writes code through its cacheable linear map (init's ELF
//! segments) or hands out frames that user space filled through a
//! writable mapping, then maps them executable. The data cache and the
//! instruction cache are not coherent on a Cortex-A72: the new bytes may
//! still sit in the data cache only, and the instruction cache may still
//! hold the lines of whatever the frame held before (freed frames are
//! reused last in, first out). The architecture's sequence (Arm ARM,
//! "Concurrent modification and execution of instructions") is: clean
//! the data cache to the point of unification, DSB, invalidate the
//! instruction cache, DSB, ISB. CTR_EL0 says which steps a CPU needs and
//! how: `IDC` and `DIC` waive the clean and the invalidate, and `L1Ip`
//! says whether invalidating by one virtual address reaches every alias
//! (a PIPT instruction cache) or the whole instruction cache must go.

/// CTR_EL0, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheType(u64);

/// How the instruction cache is invalidated after new code was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstructionInvalidation {
    /// CTR_EL0.DIC: instruction fetch is coherent with the data side.
    NotNeeded,
    /// `IC IVAU` by line: the instruction cache is PIPT, so the kernel's
    /// own (linear-map) address of a line reaches the line user space
    /// fetches through another address.
    ByLine,
    /// `IC IALLUIS`: a VIPT (or VPIPT) instruction cache may hold the
    /// line under the user's address, which the kernel does not map.
    All,
}

/// CTR_EL0.L1Ip (bits 15:14) of a PIPT instruction cache.
const L1IP_PIPT: u64 = 0b11;

impl CacheType {
    /// Wraps a CTR_EL0 value.
    pub const fn from_ctr_el0(value: u64) -> Self {
        CacheType(value)
    }

    /// The smallest data cache line, in bytes (4 << DminLine).
    pub const fn data_line_bytes(self) -> u64 {
        4 << ((self.0 >> 16) & 0xf)
    }

    /// The smallest instruction cache line, in bytes (4 << IminLine).
    pub const fn instruction_line_bytes(self) -> u64 {
        4 << (self.0 & 0xf)
    }

    /// Whether new code must be cleaned from the data cache to the point
    /// of unification before it can be fetched (CTR_EL0.IDC = 0).
    pub const fn needs_data_clean(self) -> bool {
        (self.0 >> 28) & 1 == 0
    }

    /// How the instruction cache forgets stale lines of a frame.
    pub const fn instruction_invalidation(self) -> InstructionInvalidation {
        if (self.0 >> 29) & 1 == 1 {
            InstructionInvalidation::NotNeeded
        } else if (self.0 >> 14) & 0b11 == L1IP_PIPT {
            InstructionInvalidation::ByLine
        } else {
            InstructionInvalidation::All
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Cortex-A72's CTR_EL0 (its TRM; QEMU's `cortex-a72` reads the
    /// same): 64-byte lines, PIPT instruction cache, neither IDC nor DIC.
    const CORTEX_A72: u64 = 0x8444_c004;

    #[test]
    fn a_cortex_a72_cleans_and_invalidates_by_64_byte_line() {
        let cache = CacheType::from_ctr_el0(CORTEX_A72);
        assert_eq!(cache.data_line_bytes(), 64);
        assert_eq!(cache.instruction_line_bytes(), 64);
        assert!(cache.needs_data_clean());
        assert_eq!(
            cache.instruction_invalidation(),
            InstructionInvalidation::ByLine
        );
    }

    #[test]
    fn an_instruction_cache_that_is_not_pipt_is_invalidated_whole() {
        for l1ip in [0b00, 0b01, 0b10] {
            let ctr = (CORTEX_A72 & !(0b11 << 14)) | (l1ip << 14);
            assert_eq!(
                CacheType::from_ctr_el0(ctr).instruction_invalidation(),
                InstructionInvalidation::All,
                "L1Ip = {l1ip:#b}"
            );
        }
    }

    #[test]
    fn idc_and_dic_waive_their_step() {
        let idc = CacheType::from_ctr_el0(CORTEX_A72 | (1 << 28));
        assert!(!idc.needs_data_clean());
        assert_eq!(
            idc.instruction_invalidation(),
            InstructionInvalidation::ByLine
        );
        let dic = CacheType::from_ctr_el0(CORTEX_A72 | (1 << 29));
        assert!(dic.needs_data_clean());
        assert_eq!(
            dic.instruction_invalidation(),
            InstructionInvalidation::NotNeeded
        );
    }

    #[test]
    fn line_sizes_follow_the_log2_word_fields() {
        // DminLine = 3 (32 bytes), IminLine = 5 (128 bytes).
        let cache = CacheType::from_ctr_el0((3 << 16) | 5 | (L1IP_PIPT << 14));
        assert_eq!(cache.data_line_bytes(), 32);
        assert_eq!(cache.instruction_line_bytes(), 128);
    }
}
