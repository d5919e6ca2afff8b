//! Per-thread work flags: the one word the fast path reads.
//!
//! Every feature that makes a syscall or a return to user mode slower than
//! the bare minimum sets a bit here, in the thread's TCB. The arch fast path
//! loads the `u64` and compares it with zero; only a non-zero word leads into
//! this crate. That keeps tracing, policy and audit free when unused.
//!
//! # Bit layout (ABI-stable)
//!
//! The arch assembly reads this word directly, so the layout is fixed and
//! [`WorkFlags`] stays `#[repr(transparent)]` over `u64`. New bits may be
//! added; existing bits never move.
//!
//! | bit | flag            | group          | effect                                       |
//! |-----|-----------------|----------------|----------------------------------------------|
//! | 0   | `TRACE`         | entry, syscall | trace entry and exit stops                   |
//! | 1   | `SYSEMU`        | entry, syscall | entry stop, then the syscall is skipped      |
//! | 2   | `SINGLESTEP`    | syscall        | single-step report after the syscall         |
//! | 3   | `POLICY`        | entry, syscall | policy verdict before dispatch               |
//! | 4   | `AUDIT`         | entry, syscall | audit records at entry and exit              |
//! | 5   | `USER_DISPATCH` | entry, syscall | redirect syscalls made outside a PC range    |
//! | 32  | `NEED_RESCHED`  | exit           | reschedule before returning to user mode     |
//! | 33  | `NOTIFY_RESUME` | exit           | deliver pending notification-like work       |
//! | 34  | `RSEQ`          | exit           | an rseq event: check the critical section    |
//!
//! Bits 0..=31 are syscall work, bits 32..=63 exit-to-user work.

use core::ops::BitOr;

/// A thread's pending work: one `u64` in its TCB (layout in the module docs).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WorkFlags(u64);

impl WorkFlags {
    /// A tracer wants a stop at syscall entry and exit.
    pub const TRACE: Self = Self(1 << 0);
    /// A tracer emulates syscalls: stop at entry, then never dispatch.
    pub const SYSEMU: Self = Self(1 << 1);
    /// A tracer single-steps the thread: report after each syscall.
    pub const SINGLESTEP: Self = Self(1 << 2);
    /// A policy filter is attached to the thread.
    pub const POLICY: Self = Self(1 << 3);
    /// The thread's syscalls are audited.
    pub const AUDIT: Self = Self(1 << 4);
    /// Syscalls made outside an allowed PC range go to a user handler.
    pub const USER_DISPATCH: Self = Self(1 << 5);
    /// Another thread should run before this one returns to user mode.
    pub const NEED_RESCHED: Self = Self(1 << 32);
    /// Notification-like work must be delivered before returning to user mode.
    pub const NOTIFY_RESUME: Self = Self(1 << 33);
    /// The thread has restartable sequences registered and an event
    /// (preemption, migration, a stop another thread answered) happened
    /// to it: its critical section and CPU ids are checked before it
    /// returns to user mode ([`crate::rseq`]). A thread with rseq and no
    /// event keeps the bit clear and pays nothing.
    pub const RSEQ: Self = Self(1 << 34);

    /// Flags that have a stage in [`crate::SyscallEnter`].
    pub const ENTRY_WORK: Self = Self(
        Self::TRACE.0 | Self::SYSEMU.0 | Self::POLICY.0 | Self::AUDIT.0 | Self::USER_DISPATCH.0,
    );
    /// Flags that force the slow syscall path (entry and syscall exit
    /// stages). `SINGLESTEP` has only an exit stage but still needs it.
    pub const SYSCALL_WORK: Self = Self(Self::ENTRY_WORK.0 | Self::SINGLESTEP.0);
    /// Flags handled by the exit-to-user loop on every return to user mode.
    pub const EXIT_WORK: Self = Self(Self::NEED_RESCHED.0 | Self::NOTIFY_RESUME.0 | Self::RSEQ.0);
    /// Every defined flag.
    pub const ALL: Self = Self(Self::SYSCALL_WORK.0 | Self::EXIT_WORK.0);

    /// No work: the fast path may be taken.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// Whether no flag is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The raw word, as stored in the TCB.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Flags from a raw word; undefined bits are dropped.
    pub const fn from_bits_truncate(bits: u64) -> Self {
        Self(bits & Self::ALL.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any flag of `other` is set.
    pub const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    /// The flags set in both.
    pub const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// The flags set in either.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Sets the flags of `other`.
    pub fn insert(&mut self, other: Self) {
        self.0 |= other.0;
    }

    /// Clears the flags of `other`.
    pub fn remove(&mut self, other: Self) {
        self.0 &= !other.0;
    }
}

impl BitOr for WorkFlags {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

#[cfg(test)]
mod tests {
    use super::WorkFlags;

    #[test]
    fn bit_layout_is_the_documented_abi() {
        assert_eq!(WorkFlags::TRACE.bits(), 1 << 0);
        assert_eq!(WorkFlags::SYSEMU.bits(), 1 << 1);
        assert_eq!(WorkFlags::SINGLESTEP.bits(), 1 << 2);
        assert_eq!(WorkFlags::POLICY.bits(), 1 << 3);
        assert_eq!(WorkFlags::AUDIT.bits(), 1 << 4);
        assert_eq!(WorkFlags::USER_DISPATCH.bits(), 1 << 5);
        assert_eq!(WorkFlags::NEED_RESCHED.bits(), 1 << 32);
        assert_eq!(WorkFlags::NOTIFY_RESUME.bits(), 1 << 33);
        assert_eq!(WorkFlags::RSEQ.bits(), 1 << 34);
        assert_eq!(WorkFlags::SYSCALL_WORK.bits(), 0x3f);
        assert_eq!(WorkFlags::EXIT_WORK.bits(), 0x7 << 32);
        assert_eq!(core::mem::size_of::<WorkFlags>(), 8);
    }

    #[test]
    fn set_operations() {
        let mut work = WorkFlags::empty();
        assert!(work.is_empty());
        work.insert(WorkFlags::TRACE | WorkFlags::NEED_RESCHED);
        assert!(work.contains(WorkFlags::TRACE));
        assert!(!work.contains(WorkFlags::TRACE | WorkFlags::AUDIT));
        assert!(work.intersects(WorkFlags::TRACE | WorkFlags::AUDIT));
        assert!(work.intersects(WorkFlags::EXIT_WORK));
        work.remove(WorkFlags::TRACE);
        assert_eq!(work, WorkFlags::NEED_RESCHED);
        assert_eq!(WorkFlags::from_bits_truncate(u64::MAX), WorkFlags::ALL);
        assert_eq!(WorkFlags::from_bits_truncate(1 << 40).bits(), 0);
    }
}
