//! ASID allocation with generations, after Linux's arm64 allocator
//! (arch/arm64/mm/context.c), shared by every CPU (the caller serialises
//! it: the kernel lock).
//!
//! An address space holds an [`AsidWithGeneration`]. Before it runs, the
//! kernel calls [`AsidAllocator::assign`]: an ASID of the current generation
//! is kept; an older one is renewed; when no ASID is free the generation
//! bumps, every number becomes free again, and the caller is told to flush
//! the whole TLB before using the returned ASID.
//!
//! Why recycling is safe:
//! - Within one generation each number goes to at most one address space (a
//!   bitmap records the numbers taken), so every TLB entry tagged with it
//!   belongs to that address space.
//! - Numbers change hands only across a rollover, and a rollover returns
//!   `flush_all`: the caller runs TLBI VMALLE1IS; DSB ISH before loading the
//!   new ASID, which removes every entry tagged under the old generation.
//! - The address space that may still be live in TTBR0 at the rollover
//!   could refill the TLB with its old number after the flush
//!   (speculation), so that number stays reserved for it in the new
//!   generation, as Linux's per-CPU `reserved_asids` do. The caller names
//!   those spaces (`live`, one per CPU, at most [`MAX_LIVE`]): the one
//!   assigned last is *not* necessarily it (a space made for later, or one
//!   whose current-generation ASID was kept without a call here, breaks
//!   that guess).
//! - The flush a rollover asks for is broadcast (TLBI VMALLE1IS), so every
//!   CPU's TLB loses the old generation at once; a CPU still running a
//!   reserved space keeps using its number, which no other space gets.
//! - ASID 0 is never handed out: it tags the kernel's empty TTBR0 (software
//!   PAN), which maps nothing.
//! - A destroyed address space's number is not freed here; its stale entries
//!   die at the next rollover's flush. The kernel must still TLBI ASIDE1IS
//!   that ASID before reusing the address space's table memory.

/// ID_AA64MMFR0_EL1.ASIDBits is bits [7:4].
const ASID_BITS_SHIFT: u32 = 4;
const ASID_BITS_MASK: u64 = 0b1111;
/// ASIDBits = 0b0010: 16-bit ASIDs supported.
const ASID_BITS_SIXTEEN: u64 = 0b0010;
/// TTBRn_EL1.ASID is bits [63:48].
const TTBR_ASID_SHIFT: u32 = 48;
/// The most live ASIDs a rollover keeps: one per CPU the kernel runs on.
pub const MAX_LIVE: usize = crate::layout::MAX_CPUS;
/// Bitmap storage for the largest ASID space (2^16 numbers: 8 KiB).
const MAX_ASIDS: usize = 1 << 16;
const BITS_PER_WORD: usize = u64::BITS as usize;
const BITMAP_WORDS: usize = MAX_ASIDS / BITS_PER_WORD;

/// ASID width the CPU supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsidBits {
    /// 256 ASIDs.
    Eight,
    /// 65536 ASIDs (TCR_EL1.AS = 1).
    Sixteen,
}

impl AsidBits {
    /// Reads ASIDBits from an ID_AA64MMFR0_EL1 value.
    pub const fn from_id_aa64mmfr0(mmfr0: u64) -> Self {
        if (mmfr0 >> ASID_BITS_SHIFT) & ASID_BITS_MASK == ASID_BITS_SIXTEEN {
            Self::Sixteen
        } else {
            Self::Eight
        }
    }

    /// How many ASID numbers exist, the reserved 0 included.
    pub const fn count(self) -> usize {
        match self {
            Self::Eight => 1 << 8,
            Self::Sixteen => 1 << 16,
        }
    }
}

/// An address space identifier, as loaded into TTBR0_EL1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Asid(u16);

impl Asid {
    /// The reserved ASID of the kernel's empty TTBR0 table; never assigned.
    pub const KERNEL: Self = Self(0);

    /// The number.
    pub const fn as_u16(self) -> u16 {
        self.0
    }

    /// The ASID in position for TTBR0_EL1 (bits [63:48]); OR the table base
    /// address into it.
    pub const fn ttbr_bits(self) -> u64 {
        (self.0 as u64) << TTBR_ASID_SHIFT
    }
}

/// An ASID and the allocator generation it was assigned in. An address
/// space stores this and hands it back to [`AsidAllocator::assign`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsidWithGeneration {
    asid: Asid,
    generation: u64,
}

impl AsidWithGeneration {
    /// The ASID.
    pub const fn asid(self) -> Asid {
        self.asid
    }

    /// The generation it belongs to.
    pub const fn generation(self) -> u64 {
        self.generation
    }
}

/// The result of [`AsidAllocator::assign`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "the address space must store the ASID, and a flush may be due"]
pub struct Assignment {
    /// What the address space runs with and stores for next time.
    pub asid: AsidWithGeneration,
    /// The generation rolled over: TLBI VMALLE1IS; DSB ISH; ISB before
    /// loading `asid` into TTBR0_EL1.
    pub flush_all: bool,
}

/// Hands out ASIDs, recycling them by generation (see the module docs).
/// Fixed-size: 8 KiB of bitmap whatever the ASID width.
pub struct AsidAllocator {
    bits: AsidBits,
    generation: u64,
    /// Bit n set: ASID n is taken in the current generation.
    taken: [u64; BITMAP_WORDS],
    /// Where the next search for a free number starts.
    cursor: usize,
    /// The ASIDs the caller said were live at the latest rollover (one
    /// per CPU at most); their numbers stayed taken.
    reserved: [Option<AsidWithGeneration>; MAX_LIVE],
}

impl AsidAllocator {
    /// Where the generation lies in the allocator: the IPC fast path's
    /// assembly compares it with the partner thread's.
    pub const GENERATION_OFFSET: usize = core::mem::offset_of!(AsidAllocator, generation);

    /// The first generation: 0 is none's, so a thread without an address
    /// space, whose generation copy is 0, never has a current ASID (the
    /// fast paths' one compare refuses it).
    pub const FIRST_GENERATION: u64 = 1;

    /// An allocator for `bits`-wide ASIDs, with only ASID 0 taken.
    pub const fn new(bits: AsidBits) -> Self {
        let mut taken = [0; BITMAP_WORDS];
        taken[0] = 1 << Asid::KERNEL.0;
        Self {
            bits,
            generation: Self::FIRST_GENERATION,
            taken,
            cursor: 1,
            reserved: [None; MAX_LIVE],
        }
    }

    /// The current generation.
    pub const fn generation(&self) -> u64 {
        self.generation
    }

    /// The ASID for an address space, given the one it holds (`None` if it
    /// has none yet). Keeps a current-generation ASID, renews an older one
    /// (keeping its number if still free), else takes a free number, else
    /// rolls over and asks for a full TLB flush.
    ///
    /// `live` are the ASIDs that may be in some CPU's TTBR0_EL1 (and so
    /// refill the TLB) at this moment, one per CPU (past [`MAX_LIVE`] they
    /// are not kept); none for a CPU whose TTBR0 holds the kernel's empty
    /// table. A rollover keeps their numbers reserved for those spaces.
    pub fn assign(
        &mut self,
        current: Option<AsidWithGeneration>,
        live: impl IntoIterator<Item = AsidWithGeneration>,
    ) -> Assignment {
        if let Some(held) = current {
            if held.generation == self.generation {
                return self.keep(held.asid, false);
            }
            if self.reserved.contains(&Some(held)) || self.try_take(held.asid) {
                return self.keep(held.asid, false);
            }
        }
        if let Some(asid) = self.take_free() {
            return self.keep(asid, false);
        }
        self.roll_over(live);
        // The bitmap is empty but for 0 and the reserved number.
        let renewed =
            current.filter(|held| self.reserved.contains(&Some(*held)) || self.try_take(held.asid));
        match renewed.map(|held| held.asid).or_else(|| self.take_free()) {
            Some(asid) => self.keep(asid, true),
            // Unreachable: at most MAX_LIVE + 2 of at least 256 numbers are
            // taken.
            None => self.keep(Asid::KERNEL, true),
        }
    }

    fn keep(&self, asid: Asid, flush_all: bool) -> Assignment {
        Assignment {
            asid: AsidWithGeneration {
                asid,
                generation: self.generation,
            },
            flush_all,
        }
    }

    /// Starts a new generation: every number is free again except 0 and
    /// the numbers of the address spaces that may still be live.
    fn roll_over(&mut self, live: impl IntoIterator<Item = AsidWithGeneration>) {
        // Wrapping: 2^64 rollovers never happen; no overflow panic path.
        self.generation = self.generation.wrapping_add(1);
        self.taken = [0; BITMAP_WORDS];
        self.taken[0] = 1 << Asid::KERNEL.0;
        self.cursor = 1;
        self.reserved = [None; MAX_LIVE];
        for (index, live) in live.into_iter().take(MAX_LIVE).enumerate() {
            self.reserved[index] = Some(live);
            self.mark(live.asid);
        }
    }

    /// Takes `asid` if it is free in the current generation.
    fn try_take(&mut self, asid: Asid) -> bool {
        let number = usize::from(asid.0);
        let free = number < self.bits.count()
            && self.taken[number / BITS_PER_WORD] & (1 << (number % BITS_PER_WORD)) == 0;
        if free {
            self.mark(asid);
        }
        free
    }

    /// Takes the first free number at or after the cursor. Numbers freed
    /// below it are left for the next generation, as Linux does.
    fn take_free(&mut self) -> Option<Asid> {
        let count = self.bits.count();
        let mut word = self.cursor / BITS_PER_WORD;
        while word < BITMAP_WORDS && word * BITS_PER_WORD < count {
            let free_bits = !self.taken[word];
            if free_bits != 0 {
                let number = word * BITS_PER_WORD + free_bits.trailing_zeros() as usize;
                if number >= count {
                    return None;
                }
                // `number < count <= 2^16`, so it fits a u16.
                let asid = Asid(number as u16);
                self.mark(asid);
                self.cursor = number + 1;
                return Some(asid);
            }
            word += 1;
        }
        None
    }

    fn mark(&mut self, asid: Asid) {
        let number = usize::from(asid.0);
        self.taken[number / BITS_PER_WORD] |= 1 << (number % BITS_PER_WORD);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn asid_width_is_read_from_mmfr0_bits_7_to_4() {
        assert_eq!(AsidBits::from_id_aa64mmfr0(0x25), AsidBits::Sixteen);
        assert_eq!(AsidBits::from_id_aa64mmfr0(0x05), AsidBits::Eight);
        assert_eq!(Asid(0x1234).ttbr_bits(), 0x1234 << 48);
    }

    #[test]
    fn a_generation_hands_out_every_nonzero_asid_once() {
        let mut allocator = AsidAllocator::new(AsidBits::Eight);
        let mut seen = HashSet::new();
        for _ in 1..256 {
            let assignment = allocator.assign(None, None);
            assert!(!assignment.flush_all);
            assert_ne!(assignment.asid.asid(), Asid::KERNEL);
            assert!(seen.insert(assignment.asid.asid()), "{:?}", assignment.asid);
        }
        assert_eq!(seen.len(), 255);
    }

    #[test]
    fn current_generation_asid_is_kept_without_flush() {
        let mut allocator = AsidAllocator::new(AsidBits::Sixteen);
        let first = allocator.assign(None, None);
        let again = allocator.assign(Some(first.asid), Some(first.asid));
        assert_eq!(
            again,
            Assignment {
                asid: first.asid,
                flush_all: false
            }
        );
    }

    #[test]
    fn a_rollover_keeps_the_asid_live_on_every_cpu_reserved() {
        let mut allocator = AsidAllocator::new(AsidBits::Eight);
        let held: Vec<_> = (1..256)
            .map(|_| allocator.assign(None, None).asid)
            .collect();
        // Four CPUs, each running a space of its own.
        let live = [held[3], held[100], held[200], held[254]];
        let overflow = allocator.assign(None, live);
        assert!(overflow.flush_all);
        assert!(!live.iter().any(|l| l.asid() == overflow.asid.asid()));
        for l in live {
            let renewed = allocator.assign(Some(l), live);
            assert!(!renewed.flush_all);
            assert_eq!(renewed.asid.asid(), l.asid(), "each live number is kept");
            assert_eq!(renewed.asid.generation(), 2);
        }
        // The others renew to numbers no live space holds.
        for old in held.iter().filter(|h| !live.contains(h)).take(100) {
            let renewed = allocator.assign(Some(*old), live);
            assert!(!live.iter().any(|l| l.asid() == renewed.asid.asid()));
        }
    }

    #[test]
    fn exhaustion_rolls_over_flushes_and_keeps_the_live_asid_reserved() {
        let mut allocator = AsidAllocator::new(AsidBits::Eight);
        let held: Vec<_> = (1..256)
            .map(|_| allocator.assign(None, None).asid)
            .collect();
        let live = held[254];
        let overflow = allocator.assign(None, Some(live));
        assert!(overflow.flush_all);
        assert_eq!(overflow.asid.generation(), 2);
        assert_ne!(overflow.asid.asid(), Asid::KERNEL);
        assert_ne!(
            overflow.asid.asid(),
            live.asid(),
            "live ASID must stay reserved"
        );

        // The live address space keeps its number; others renew theirs.
        let renewed_live = allocator.assign(Some(live), Some(live));
        assert!(!renewed_live.flush_all);
        assert_eq!(renewed_live.asid.asid(), live.asid());
        assert_eq!(renewed_live.asid.generation(), 2);
        let mut seen = HashSet::from([overflow.asid.asid(), live.asid()]);
        for old in &held[..254] {
            let renewed = allocator.assign(Some(*old), Some(live));
            if renewed.flush_all {
                // A second rollover is allowed only once the space is full.
                assert_eq!(seen.len(), 255);
                assert_eq!(renewed.asid.generation(), 3);
                break;
            }
            assert_eq!(renewed.asid.generation(), 2);
            assert!(seen.insert(renewed.asid.asid()), "{:?}", renewed.asid);
        }
    }

    #[test]
    fn asid_zero_is_never_handed_out_across_rollovers() {
        let mut allocator = AsidAllocator::new(AsidBits::Eight);
        let mut flushes = 0;
        let mut previous = None;
        for _ in 0..2000 {
            let assignment = allocator.assign(None, previous);
            assert_ne!(assignment.asid.asid(), Asid::KERNEL);
            flushes += usize::from(assignment.flush_all);
            // Renewing an older generation's ASID never yields 0 either.
            if let Some(old) = previous {
                assert_ne!(
                    allocator.assign(Some(old), Some(old)).asid.asid(),
                    Asid::KERNEL
                );
            }
            previous = Some(assignment.asid);
        }
        assert!(flushes >= 7, "{flushes}");
        assert_eq!(
            allocator.generation(),
            AsidAllocator::FIRST_GENERATION + flushes as u64
        );
    }

    /// The review finding at the old `roll_over`: it reserved the ASID
    /// *assigned* last, which need not be the one live in TTBR0. Here the
    /// live space (`running`) got its ASID first; a space made for later
    /// was assigned after it; the rollover must keep `running`'s number
    /// for `running` alone.
    #[test]
    fn the_rollover_reserves_the_live_asid_not_the_last_assigned() {
        let mut allocator = AsidAllocator::new(AsidBits::Eight);
        let running = allocator.assign(None, None).asid;
        let held: Vec<_> = (2..256)
            .map(|_| allocator.assign(None, Some(running)).asid)
            .collect();
        assert_eq!(held.len(), 254, "every number is taken");
        // A new space while `running` is in TTBR0: the generation rolls.
        let newcomer = allocator.assign(None, Some(running));
        assert!(newcomer.flush_all);
        assert_ne!(newcomer.asid.asid(), running.asid());
        // Nobody else may get `running`'s number in this generation.
        for old in &held {
            let renewed = allocator.assign(Some(*old), Some(newcomer.asid));
            if renewed.flush_all {
                break;
            }
            assert_ne!(renewed.asid.asid(), running.asid(), "{old:?}");
        }
        let back = allocator.assign(Some(running), Some(running));
        assert_eq!(back.asid.asid(), running.asid());
    }
}
