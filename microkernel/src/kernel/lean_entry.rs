//! The lean syscall entry (docs/architecture.md, "The lean entry's
//! context model"): a syscall of a thread with no work, or with audit
//! or policy alone, carried out with only `x0..x18` and `x30` saved.
//!
//! Its stub (`el0_svc_generic` in `arch/src/cpu/vectors.s`) keeps the
//! rest of the thread's registers in the CPU while the kernel decides.
//! When the thread goes back as it is (the common case: a syscall that
//! returns to its caller with nothing due), only what was saved is loaded
//! again. Otherwise the kernel keeps its lock, the stub saves the rest of
//! the frame, and [`Kernel::finish_lean_syscall`] goes on as the generic
//! entry would: no other CPU sees the thread's context until it is whole.

use crate::kernel::{Kernel, Resume};
use crate::platform::Platform;
use crate::stopped_call::Progress;
use crate::syscall;
use crate::thread::ThreadId;
use entry::WorkFlags;

/// What became of a syscall offered to the lean entry.
#[derive(Debug, PartialEq, Eq)]
pub enum LeanSyscall {
    /// Not for the lean entry (the thread has work other than policy
    /// alone, for `lean_syscall`, or audit alone, for
    /// `lean_audited_syscall`; a filter that may trap or kill the
    /// syscall; or the syscall reads or writes saved registers the entry
    /// did not save: see `syscall::lean_entry_takes`): nothing was done.
    /// Save the whole frame and take the generic entry.
    NotLean,
    /// Done, and the thread goes back as it is, with this TTBR0: load
    /// what was saved and return.
    Returns {
        /// Its address space root and ASID. Never 0 or 1, which the stub
        /// reads as the other answers: ASID 0 is the kernel's own (the
        /// empty table of software PAN) and never a space's, so a
        /// thread's TTBR0 is at least 2^48 (the host harness checks every
        /// one it is given).
        ttbr0: u64,
    },
    /// Done, and something is due before any return (a switch, exit
    /// work, a reschedule, a freed object, another CPU to wake): save the
    /// rest of the frame, then [`Kernel::finish_lean_syscall`].
    Finish,
}

impl Kernel {
    /// The syscall of the thread on this CPU, by the lean entry, if it may
    /// take it: the thread has no work at all (so no entry or exit work),
    /// or policy alone (`lean_syscall_with_work`), and the
    /// syscall reads and writes no saved register beyond `x0..x18` and
    /// `x30` (`syscall::lean_entry_takes`).
    pub fn lean_syscall<P: Platform>(&mut self, platform: &mut P, esr: u64) -> LeanSyscall {
        let Some(current) = self.lean_current() else {
            return LeanSyscall::NotLean;
        };
        let thread = &mut self.objects[current];
        if !thread.work.is_empty() {
            // Rare beside the no-work case: laid out as its test's
            // second way (taken first, the audit test cost every lean
            // syscall 2 instructions).
            core::hint::cold_path();
            return self.lean_syscall_with_work(platform, current, esr);
        }
        if !syscall::lean_entry_takes(thread.context.syscall_number()) {
            return LeanSyscall::NotLean;
        }
        thread.stats.count_syscall();
        match syscall::decode_copy::<{ syscall::LEAN_COPY }>(&thread.context) {
            Ok(call) => {
                let result = self.dispatch::<P, { syscall::LEAN_COPY }>(
                    platform,
                    current,
                    call,
                    Progress::NONE,
                );
                self.apply_result(platform, current, esr, None, result);
            }
            Err(code) => {
                Self::write_result(thread, code);
                // A refused call changes nothing else: the thread goes
                // back as `resume` would send it, without looking it up
                // again (12 instructions of `syscall_slow_path_error`).
                // Nothing is retired (checked on the way in).
                if !self.attention {
                    if let Some(Resume::User { ttbr0, .. }) = Self::as_it_is(thread) {
                        return LeanSyscall::Returns { ttbr0 };
                    }
                }
                return LeanSyscall::Finish;
            }
        }
        self.lean_end(current)
    }

    /// The lean entry's syscall of a thread whose only work is audit
    /// (the vector's own entry for it, `el0_svc_audited`): the audit-only
    /// lane (`syscall_audited`), inlined here with the thread in hand.
    /// Its records read x0..x8 and the result, nothing else of the frame,
    /// and the lane's other ways (a full ring, a syscall that gave its
    /// own thread work) ask nothing of it either:
    /// `syscall::reads_or_writes_whole_context` declines a tracer's
    /// attach, the only work whose stops would. Anything else (other
    /// work, a syscall that reads or writes saved registers the stub did
    /// not save) is `NotLean`, with nothing done. The number is below 64
    /// (the vector's test), and no number is excused (see below).
    pub fn lean_audited_syscall<P: Platform>(&mut self, platform: &mut P, esr: u64) -> LeanSyscall {
        let Some(current) = self.lean_current() else {
            return LeanSyscall::NotLean;
        };
        let thread = &mut self.objects[current];
        let number = thread.context.syscall_number();
        if thread.work != WorkFlags::AUDIT || !syscall::lean_entry_takes(number) {
            return LeanSyscall::NotLean;
        }
        // Not asked again: the vector sends here only a number below 64
        // (`x8`, the thread's own, which no other CPU writes while this
        // one holds the lock), and the no-entry-work mask of a thread
        // whose syscall work is not policy alone is 0 (`computed_masks`;
        // the invariant checks hold every mask to it), so with audit
        // alone no number is excused.
        debug_assert!(number < 64 && !thread.skips_entry_work(number));
        thread.stats.count_syscall();
        // The lane's common end says how the thread goes back, with the
        // thread in hand (a second look-up here cost the audited syscall
        // some 10 instructions).
        match self.syscall_audited(platform, current, esr) {
            Some(ttbr0) => self.lean_back(current, ttbr0),
            None => self.lean_end(current),
        }
    }

    /// `lean_syscall` for a thread with work: policy alone (the vector
    /// sends no other work here; a thread whose only work is audit has
    /// an entry of its own, `lean_audited_syscall`), for a syscall its
    /// no-entry-work mask does not excuse. It takes the policy-only lane's
    /// lean form (`lean_judged`) when its verdict reads nothing of the
    /// frame beyond x0..x8 and does nothing with it but write x0
    /// (`VerdictCache::judged_by_lean_entry`): no rule that can decide
    /// the number reads the PC, and the verdict is always `Allow`, `Log`
    /// or `Errno`. A `Notify`'s request carries the PC and a `Trap`'s
    /// fault report too, so a number that may get either takes the
    /// generic entry, as does one that may be killed, and one judged on
    /// memory (see the cache's docs).
    #[inline(always)]
    fn lean_syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) -> LeanSyscall {
        let thread = &mut self.objects[current];
        let number = thread.context.syscall_number();
        if thread.work != WorkFlags::POLICY
            || !thread.verdicts.judged_by_lean_entry(number)
            || thread.skips_entry_work(number)
            || !syscall::lean_entry_takes(number)
        {
            return LeanSyscall::NotLean;
        }
        thread.stats.count_syscall();
        // The lane's common end says how the thread goes back, with the
        // thread in hand.
        if let Some(ttbr0) = self.lean_judged(platform, current, esr) {
            return self.lean_back(current, ttbr0);
        }
        self.lean_end(current)
    }

    /// The thread on this CPU, whose syscall a lean entry's half takes
    /// (`None`: none is, and the half declines). Nothing is retired: every
    /// kernel entry frees what it retired before it ends.
    #[inline(always)]
    fn lean_current(&self) -> Option<ThreadId> {
        debug_assert!(
            !self.objects.has_retired(),
            "an earlier kernel entry left retired objects"
        );
        self.current
    }

    /// How a lean syscall of `current` ends when its lane found the thread
    /// going back as it is, with this TTBR0, as far as the thread says:
    /// back, if it is still the CPU's (a syscall may suspend its own
    /// thread and return) and nothing else is due.
    #[inline(always)]
    fn lean_back(&mut self, current: ThreadId, ttbr0: u64) -> LeanSyscall {
        if self.current != Some(current) || !self.nothing_due() {
            return LeanSyscall::Finish;
        }
        #[cfg(feature = "rseq-counters")]
        crate::kernel::rseq::counters::count_exit(&self.objects[current]);
        LeanSyscall::Returns { ttbr0 }
    }

    /// How a lean syscall of `current` ends: it goes back as it is if it
    /// is still on the CPU and nothing is due.
    #[inline(always)]
    fn lean_end(&mut self, current: ThreadId) -> LeanSyscall {
        if self.current == Some(current) && self.nothing_due() {
            if let Some(Resume::User { ttbr0, .. }) = Self::as_it_is(&mut self.objects[current]) {
                return LeanSyscall::Returns { ttbr0 };
            }
        }
        LeanSyscall::Finish
    }

    /// After [`LeanSyscall::Finish`], with the whole frame saved: where
    /// the CPU goes, as the generic entry would have sent it.
    ///
    /// The stub saved the frame into the record of a thread that may have
    /// ended in its syscall: that record is freed only here (`reap`, at
    /// the end of `resume`), and nothing was retired before the syscall,
    /// so no mid-entry `reap` could have freed it first.
    #[inline(never)]
    pub fn finish_lean_syscall<P: Platform>(&mut self, platform: &mut P) -> Resume {
        self.resume(platform)
    }
}
