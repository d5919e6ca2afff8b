//! Restartable sequences (after Linux's `rseq(2)`): the area a thread
//! registers, the critical-section descriptor, the time-slice extension
//! bits and the kernel's counters. `docs/rseq.md` has the design.
//!
//! A thread registers an [`Area`] in its own memory with
//! `Syscall::SetRseq` (`x2` = its address, [`AREA_ALIGN`]-aligned and
//! writable; `x3` = the signature, a `u32`; `x4` = [`REGISTER`] or
//! [`UNREGISTER`]; `x0` reserved, 0). The kernel writes the CPU the thread
//! runs on into [`CPU_ID_START`] and [`CPU_ID`] at once, and again on its
//! way back to EL0 after every event (below) that moved it.
//!
//! To run a critical section the thread stores the address of a
//! [`Descriptor`] into [`CRITICAL_SECTION`]. After an *event*: it was
//! preempted (by the tick or a more urgent thread, or suspended), moved
//! to another CPU, or stopped for a fault, a policy server's verdict or a
//! trace stop that another thread answered (a single-step report is not
//! an event), the kernel looks at the descriptor before the thread next
//! returns to EL0: if its PC lies in `[start, start + post_commit_offset)`
//! the PC becomes `abort`, and in any case the kernel clears
//! [`CRITICAL_SECTION`]. The `u32` just before `abort` must equal the
//! signature the thread registered (Linux's rule: rseq cannot send a
//! thread anywhere but to code made for it). A descriptor or area the
//! kernel cannot read or write, a wrong signature, an abort address inside
//! its own section or outside the user half end the thread with
//! [`KILLED_BY_RSEQ`] and a console line that says which.

/// Bytes of the area.
pub const AREA_BYTES: u64 = 32;
/// The area's alignment (it never straddles a page).
pub const AREA_ALIGN: u64 = 32;
/// Area offset: the CPU the thread runs on, a `u32` the kernel writes
/// (Linux's `cpu_id_start`: always a valid CPU number once registered).
pub const CPU_ID_START: u64 = 0;
/// Area offset: the CPU the thread runs on, a `u32` the kernel writes
/// ([`CPU_ID_UNREGISTERED`] after `UNREGISTER`).
pub const CPU_ID: u64 = 4;
/// Area offset: the address of the current [`Descriptor`], a `u64` the
/// thread writes (0: none) and the kernel clears after a check.
pub const CRITICAL_SECTION: u64 = 8;
/// Area offset: the time-slice extension word, a `u32`: the thread sets
/// [`SLICE_REQUEST`], the kernel sets [`SLICE_GRANTED`].
pub const SLICE: u64 = 16;

/// [`CPU_ID`] of an area no longer registered.
pub const CPU_ID_UNREGISTERED: u32 = u32::MAX;

/// [`SLICE`] bit: the thread asks not to be preempted by the tick for a
/// moment (it holds a user-space lock). The kernel clears it when it
/// grants an extension.
pub const SLICE_REQUEST: u32 = 1 << 0;
/// [`SLICE`] bit: the kernel granted an extension: the thread must call
/// `Syscall::SliceYield` as soon as it leaves its lock.
pub const SLICE_GRANTED: u32 = 1 << 1;

/// `SetRseq` `x4`: register the area.
pub const REGISTER: u64 = 0;
/// `SetRseq` `x4`: unregister it (`x2` and `x3` must be as registered).
pub const UNREGISTER: u64 = 1;

/// Bytes of a descriptor.
pub const DESCRIPTOR_BYTES: u64 = 32;
/// A descriptor's alignment.
pub const DESCRIPTOR_ALIGN: u64 = 32;
/// The only descriptor version.
pub const DESCRIPTOR_VERSION: u32 = 0;

/// The status of a thread the kernel ended for a bad area or descriptor
/// (`abi::fault::KillReason::Rseq`).
pub const KILLED_BY_RSEQ: i64 = -37;

/// A critical section, as the thread lays it out in memory (32 bytes,
/// [`DESCRIPTOR_ALIGN`]-aligned, little-endian).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Descriptor {
    /// [`DESCRIPTOR_VERSION`].
    pub version: u32,
    /// Reserved, 0.
    pub flags: u32,
    /// The first instruction of the section.
    pub start: u64,
    /// Bytes from `start` to the instruction after the commit (the
    /// section is `[start, start + post_commit_offset)`).
    pub post_commit_offset: u64,
    /// Where an interrupted section goes on; the `u32` before it holds the
    /// signature.
    pub abort: u64,
}

impl Descriptor {
    /// Decodes the 32 bytes at the descriptor's address.
    pub fn from_bytes(bytes: &[u8; DESCRIPTOR_BYTES as usize]) -> Descriptor {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        Descriptor {
            version: word(0) as u32,
            flags: (word(0) >> 32) as u32,
            start: word(8),
            post_commit_offset: word(16),
            abort: word(24),
        }
    }

    /// The 32 bytes of the descriptor.
    pub fn to_bytes(&self) -> [u8; DESCRIPTOR_BYTES as usize] {
        let mut bytes = [0u8; DESCRIPTOR_BYTES as usize];
        bytes[0..4].copy_from_slice(&self.version.to_le_bytes());
        bytes[4..8].copy_from_slice(&self.flags.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.start.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.post_commit_offset.to_le_bytes());
        bytes[24..32].copy_from_slice(&self.abort.to_le_bytes());
        bytes
    }
}

/// What the kernel counted (a kernel image built with its `rseq-counters`
/// feature: the test image), as `Syscall::DebugRseqCounters` writes it:
/// [`COUNTERS`] `u64`s in this order, little-endian.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Returns to EL0, of any thread.
    pub exits: u64,
    /// Returns to EL0 that ran the rseq exit work (an event was pending).
    pub slow_path: u64,
    /// Returns to EL0 of a thread with rseq registered and no event: the
    /// work word stayed empty, nothing ran.
    pub fast_path: u64,
    /// CPU-id fields written.
    pub id_updates: u64,
    /// Critical-section descriptors looked at.
    pub cs_checks: u64,
    /// [`CRITICAL_SECTION`] fields cleared.
    pub cleared: u64,
    /// PCs moved to an abort address.
    pub fixups: u64,
    /// Time-slice extensions granted.
    pub slice_granted: u64,
    /// Extensions that ran out before the thread yielded.
    pub slice_overrun: u64,
}

/// How many counters there are.
pub const COUNTERS: usize = 9;
/// Bytes `DebugRseqCounters` writes.
pub const COUNTERS_BYTES: u64 = COUNTERS as u64 * 8;

impl Counters {
    /// The counters in ABI order.
    pub const fn to_array(&self) -> [u64; COUNTERS] {
        [
            self.exits,
            self.slow_path,
            self.fast_path,
            self.id_updates,
            self.cs_checks,
            self.cleared,
            self.fixups,
            self.slice_granted,
            self.slice_overrun,
        ]
    }

    /// Counters from the ABI order.
    pub const fn from_array(words: [u64; COUNTERS]) -> Counters {
        Counters {
            exits: words[0],
            slow_path: words[1],
            fast_path: words[2],
            id_updates: words[3],
            cs_checks: words[4],
            cleared: words[5],
            fixups: words[6],
            slice_granted: words[7],
            slice_overrun: words[8],
        }
    }

    /// Each counter's name, in ABI order (as the console line prints them).
    pub const NAMES: [&'static str; COUNTERS] = [
        "exits to user",
        "slow path",
        "fast path",
        "id updates",
        "cs checks",
        "cleared",
        "fix-ups",
        "extensions granted",
        "extensions overrun",
    ];

    /// What one run counted since `earlier`.
    pub fn since(&self, earlier: &Counters) -> Counters {
        let (now, then) = (self.to_array(), earlier.to_array());
        let mut words = [0u64; COUNTERS];
        for (i, word) in words.iter_mut().enumerate() {
            *word = now[i].wrapping_sub(then[i]);
        }
        Counters::from_array(words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_round_trips_through_its_bytes() {
        let descriptor = Descriptor {
            version: 0,
            flags: 0,
            start: 0x40_1000,
            post_commit_offset: 0x24,
            abort: 0x40_1040,
        };
        assert_eq!(Descriptor::from_bytes(&descriptor.to_bytes()), descriptor);
        assert_eq!(descriptor.to_bytes()[8], 0x00);
        assert_eq!(descriptor.to_bytes()[9], 0x10);
    }

    #[test]
    fn counters_keep_their_order() {
        let words = [1, 2, 3, 4, 5, 6, 7, 8, 9];
        let counters = Counters::from_array(words);
        assert_eq!(counters.fixups, 7);
        assert_eq!(counters.to_array(), words);
        assert_eq!(
            Counters::from_array([3; COUNTERS]).since(&counters).exits,
            2
        );
    }
}
