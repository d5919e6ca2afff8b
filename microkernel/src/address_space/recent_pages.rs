//! The user pages a space's last walks found, so that pages the kernel
//! reads or writes at every syscall of a thread (a user-dispatch selector
//! and buffer) are walked once, not at each access: a walk of the four
//! levels costs some 150 instructions, a hit about ten.
//!
//! An entry is what a walk said, and only a page EL0 may read is kept (any
//! other is walked again). The tables change only through
//! `AddressSpace`'s `&mut self` methods, and each of them forgets every
//! entry before it writes one (`RecentPages::forget`), so no entry is
//! older than the tables. (Host builds walk again at every hit and
//! compare: `AddressSpace::user_address`.) All of this happens under the
//! kernel lock, as every access to a space does.
//!
//! Two words a page (its user page and what EL0 may do there, its
//! physical page), so that a VSpace's record still fits three granules.

use super::UserAccess;
use arch::layout::PAGE_SIZE;
use core::cell::Cell;

/// How many pages a space remembers: a user-dispatch selector and a
/// buffer within one page (each redirect reads the one and writes the
/// other) fit; a buffer across two pages and its selector do not.
const PAGES: usize = 2;

/// The low bits of an entry's first word (the page's own are 0): the
/// entry holds a page EL0 may read, and one it may also write.
const READABLE: u64 = 1 << 0;
const WRITABLE: u64 = 1 << 1;
const OFFSET: u64 = PAGE_SIZE - 1;

/// The last pages walked, the newest first: each the user page with its
/// access bits, and the physical page (0, 0: none).
#[derive(Debug, Default)]
pub(super) struct RecentPages {
    entries: [(Cell<u64>, Cell<u64>); PAGES],
}

impl RecentPages {
    /// Where user address `va` leads, if its page is remembered and EL0
    /// may access it so.
    #[inline(always)]
    pub fn find(&self, va: u64, access: UserAccess) -> Option<u64> {
        let wanted = match access {
            UserAccess::Read => READABLE,
            UserAccess::Write => WRITABLE,
        };
        let page = va & !OFFSET;
        self.entries.iter().find_map(|(key, frame)| {
            let key = key.get();
            (key & !OFFSET == page && key & wanted != 0).then(|| frame.get() + (va - page))
        })
    }

    /// Remembers that `va` leads to `pa`, a page EL0 may read (and, if
    /// `writable`, write), in place of the oldest page.
    pub fn remember(&self, va: u64, pa: u64, writable: bool) {
        // (A page asked for again with an access it lacks is walked again:
        // it replaces itself.)
        let again = self.entries[0].0.get() & !OFFSET == va & !OFFSET;
        for i in (1..PAGES).rev().filter(|_| !again) {
            self.entries[i].0.set(self.entries[i - 1].0.get());
            self.entries[i].1.set(self.entries[i - 1].1.get());
        }
        let access = if writable {
            READABLE | WRITABLE
        } else {
            READABLE
        };
        self.entries[0].0.set((va & !OFFSET) | access);
        self.entries[0].1.set(pa & !OFFSET);
    }

    /// Forgets every page: the tables are about to change.
    pub fn forget(&mut self) {
        for (key, frame) in &self.entries {
            key.set(0);
            frame.set(0);
        }
    }

    /// The user pages remembered, the newest first (for the tests).
    #[cfg(test)]
    pub fn pages(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries
            .iter()
            .map(|(key, _)| key.get())
            .filter(|key| key & READABLE != 0)
            .map(|key| key & !OFFSET)
    }
}
