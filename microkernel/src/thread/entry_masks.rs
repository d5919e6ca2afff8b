//! What a thread's syscalls may skip: the generic entry altogether (its
//! constant-`Allow` syscalls, `no_entry_work`) or all but the refusal
//! (its constant-`Errno` syscalls, `refused`), which the vector reads.

use super::Thread;
use entry::WorkFlags;

impl Thread {
    /// May syscall `number` skip the generic entry? Yes with no work at
    /// all, or with only syscall work that the no-entry-work mask excuses
    /// for this number (never with exit work pending).
    #[inline(always)]
    pub fn skips_entry_work(&self, number: u64) -> bool {
        self.work.is_empty() || self.work_is_excused(number)
    }

    /// The part of `skips_entry_work` for a thread with work (a filtered
    /// thread's fast path): behind the no-work test, inlined.
    #[inline(always)]
    fn work_is_excused(&self, number: u64) -> bool {
        !self.work.intersects(WorkFlags::EXIT_WORK)
            && number < 64
            && (self.no_entry_work >> number) & 1 == 1
    }

    /// Has the thread nothing to do on its way back to EL0 from a syscall
    /// it is blocked in? Policy work is entry work only. One masked test
    /// (`tst`), for a partner with or without a filter alike.
    #[inline(always)]
    pub fn has_no_exit_side_work(&self) -> bool {
        self.work.bits() & !WorkFlags::POLICY.bits() == 0
    }

    /// Recomputes `no_entry_work`, `refused`, `lean_judged`,
    /// `register_judged` and `asked` after the filters (or any other entry
    /// work) changed: the policy's constant-`Allow` and constant-`Errno`
    /// syscalls, those the lean entry judges, those the vector judges on
    /// the registers and those whose request it sends, as long as policy
    /// is the only syscall work.
    pub fn recompute_no_entry_work(&mut self) {
        (
            self.no_entry_work,
            self.refused,
            self.lean_judged,
            self.register_judged,
            self.asked,
        ) = self.computed_masks();
        // Only the refused numbers' codes are read (the vector tests the
        // bit first), so only theirs are written: this runs at every trace
        // stop, and a loop over all 64 cost 700 instructions there.
        let mut refused = self.refused;
        while refused != 0 {
            let number = refused.trailing_zeros();
            self.refusal_codes[number as usize] = self.verdicts.refusal_code(u64::from(number));
            refused &= refused - 1;
        }
    }

    /// `no_entry_work`, `refused`, `lean_judged`, `register_judged` and
    /// `asked` as the work word and the filters give them.
    #[inline(always)]
    fn computed_masks(&self) -> (u64, u64, u64, u64, u64) {
        let other_work =
            self.work.intersection(WorkFlags::SYSCALL_WORK).bits() & !WorkFlags::POLICY.bits();
        if other_work == 0 {
            (
                self.verdicts.no_entry_work_mask(),
                self.verdicts.refused_mask(),
                self.verdicts.lean_judged_mask(),
                self.register_program.compiled_mask(),
                self.verdicts.asked_mask(),
            )
        } else {
            (0, 0, 0, 0, 0)
        }
    }

    /// Do the masks (and the refused numbers' codes) say what the work
    /// word, the verdict cache and the compiled verdicts give? (The
    /// cache and the compiled verdicts are not checked against the
    /// filters here.) `check_invariants` asks it of every thread with
    /// syscall work, the only ones whose masks the vector reads. Every
    /// change of any of them recomputes the masks, so a change that
    /// leaves the work word as it was may leave them alone
    /// (`set_single_step`).
    pub fn entry_masks_are_current(&self) -> bool {
        let masks = (
            self.no_entry_work,
            self.refused,
            self.lean_judged,
            self.register_judged,
            self.asked,
        );
        let mut refused = self.refused;
        while refused != 0 {
            let number = refused.trailing_zeros();
            if self.refusal_codes[number as usize] != self.verdicts.refusal_code(u64::from(number))
            {
                return false;
            }
            refused &= refused - 1;
        }
        masks == self.computed_masks()
    }
}
