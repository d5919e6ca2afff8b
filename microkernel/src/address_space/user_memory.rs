//! The kernel's reads and writes of a thread's memory: copies in and out,
//! and word by word access to a short, 8-aligned range (a user-dispatch
//! frame).
//!
//! Every access goes through one check, `AddressSpace::user_address`:
//! the page must be mapped for EL0 (for a write: EL0-writable) as Normal
//! memory. The kernel walks the tables in software (TTBR0 holds an empty
//! table while it runs: software PAN, `arch::cpu::user_return`), so a bad
//! pointer is an error, never a kernel fault, and it reads and writes
//! through its own map of RAM.

use super::{AddressSpace, UserAccessError};
use crate::platform::PhysMemory;
use arch::layout::{page_floor, PAGE_SIZE};
use arch::mmu::{Access, MemoryKind, Owner, Permissions};

/// Words in a page: the longest range `AddressSpace::user_words` takes
/// (so that it spans at most two pages).
const PAGE_WORDS: usize = (PAGE_SIZE / 8) as usize;

/// What an access needs of EL0's permissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserAccess {
    /// Mapped for EL0 reading, as Normal memory.
    Read,
    /// Mapped for EL0 reading and writing, as Normal memory.
    Write,
}

/// Where the words of an 8-aligned user range lie: the physical address of
/// its first word, how many of its words are on that page, and where the
/// rest begin (the next page, which the range reaches only if it crosses).
/// Words are never split: the range is 8-aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserWords {
    first: u64,
    on_first: usize,
    second: u64,
    len: usize,
}

impl UserWords {
    /// The words of the range, `index..index + len`, as the two runs that
    /// lie on the first and on the second page (either may be empty);
    /// clipped to the range.
    fn runs(&self, index: usize, len: usize) -> [(u64, usize); 2] {
        let end = index.saturating_add(len).min(self.len);
        let start = index.min(end);
        let split = self.on_first.clamp(start, end);
        [
            (self.first + 8 * start as u64, split - start),
            (
                self.second + 8 * split.saturating_sub(self.on_first) as u64,
                end - split,
            ),
        ]
    }

    /// Word `index` of the range (0 past its end).
    pub fn read<M: PhysMemory>(&self, phys: &M, index: usize) -> u64 {
        match self.runs(index, 1) {
            [(pa, 1), _] | [_, (pa, 1)] => phys.read_phys_u64(pa),
            _ => 0,
        }
    }

    /// Reads words `index..index + out.len()` into `out` (a part past the
    /// range's end is left as it is).
    pub fn read_into<M: PhysMemory>(&self, phys: &M, index: usize, out: &mut [u64]) {
        let [(first, on_first), (second, on_second)] = self.runs(index, out.len());
        let (head, tail) = out.split_at_mut(on_first);
        phys.read_phys_words(first, head);
        // (Most ranges lie on one page: no call for an empty second run.)
        if on_second != 0 {
            phys.read_phys_words(second, &mut tail[..on_second]);
        }
    }

    /// Writes `words` from word `index` of the range on (a part past the
    /// range's end is not written).
    pub fn write<M: PhysMemory>(&self, phys: &mut M, index: usize, words: &[u64]) {
        let [(first, on_first), (second, on_second)] = self.runs(index, words.len());
        let (head, tail) = words.split_at(on_first);
        phys.write_phys_words(first, head);
        if on_second != 0 {
            phys.write_phys_words(second, &tail[..on_second]);
        }
    }
}

impl AddressSpace {
    /// The physical address user address `va` leads to, if its page is
    /// mapped as Normal memory with `access` for EL0 (the one check of
    /// every access: see the module's comment). A page EL0 may read is
    /// remembered (`RecentPages`), and found again without a walk.
    #[inline(always)]
    pub fn user_address<M: PhysMemory>(
        &self,
        phys: &M,
        va: u64,
        access: UserAccess,
    ) -> Result<u64, UserAccessError> {
        if let Some(pa) = self.recent.find(va, access) {
            debug_assert!(
                self.translate_user(phys, va).is_some_and(
                    |(walked, permissions)| walked == pa && allows(permissions, access)
                ),
                "a remembered page is stale"
            );
            return Ok(pa);
        }
        self.walk_for(phys, va, access)
    }

    /// `user_address` for a page not remembered: walked, and remembered
    /// if EL0 may read it. (Out of line: the lookup alone stays small
    /// where it is inlined, as in a loop over a judged buffer's words.)
    #[inline(never)]
    fn walk_for<M: PhysMemory>(
        &self,
        phys: &M,
        va: u64,
        access: UserAccess,
    ) -> Result<u64, UserAccessError> {
        match self.translate_user(phys, va) {
            Some((pa, permissions)) if allows(permissions, UserAccess::Read) => {
                let writable = allows(permissions, UserAccess::Write);
                self.recent.remember(va, pa, writable);
                if access == UserAccess::Write && !writable {
                    return Err(UserAccessError::NotMapped);
                }
                Ok(pa)
            }
            _ => Err(UserAccessError::NotMapped),
        }
    }

    /// The physical address of the user page holding `va`, if it is
    /// mapped for EL0 reading as normal memory (what `copy_from_user`
    /// reads; device memory is never read by the kernel).
    pub fn user_readable_page<M: PhysMemory>(&self, phys: &M, va: u64) -> Option<u64> {
        self.user_address(phys, page_floor(va), UserAccess::Read)
            .ok()
    }

    /// The byte at user address `va`, if its page is mapped for EL0
    /// reading (a user-dispatch selector): one word read, where a copy of
    /// one byte cost some 70 instructions.
    pub fn read_user_byte<M: PhysMemory>(&self, phys: &M, va: u64) -> Result<u8, UserAccessError> {
        let pa = self.user_address(phys, va, UserAccess::Read)?;
        // Little-endian: the byte at `pa` is its word's byte `pa % 8`.
        let word = phys.read_phys_u64(pa & !7);
        Ok((word >> (8 * (pa & 7))) as u8)
    }

    /// Copies `out.len()` bytes from user address `va`. Every page must be
    /// mapped for EL0 reading.
    pub fn copy_from_user<M: PhysMemory>(
        &self,
        phys: &M,
        va: u64,
        out: &mut [u8],
    ) -> Result<(), UserAccessError> {
        let mut done = 0usize;
        while done < out.len() {
            let address = va
                .checked_add(done as u64)
                .ok_or(UserAccessError::NotMapped)?;
            let pa = self.user_address(phys, address, UserAccess::Read)?;
            let in_page = (PAGE_SIZE - (address % PAGE_SIZE)) as usize;
            let chunk = in_page.min(out.len() - done);
            phys.read_phys(pa, &mut out[done..done + chunk]);
            done += chunk;
        }
        Ok(())
    }

    /// Copies `data` to user address `va`. Every page must be mapped for
    /// EL0 writing; all are checked before the first byte is written, so a
    /// refused copy changes nothing.
    ///
    /// Always inlined: a user-dispatch redirect wrote its frame with it on
    /// a measured path (a call cost it 29 instructions once the rseq code,
    /// which calls it through one out-of-line wrapper, was a second
    /// caller).
    #[inline(always)]
    pub fn copy_to_user<M: PhysMemory>(
        &self,
        phys: &mut M,
        va: u64,
        data: &[u8],
    ) -> Result<(), UserAccessError> {
        // Within one page: the check gives the address to write, so the
        // page is looked up once, not once to check and once to copy.
        let end = va.checked_add(data.len() as u64);
        if end.is_some_and(|end| end > va && page_floor(end - 1) == page_floor(va)) {
            let pa = self.user_address(&*phys, va, UserAccess::Write)?;
            phys.write_phys(pa, data);
            return Ok(());
        }
        self.check_user_writable(phys, va, data.len() as u64)?;
        let mut done = 0usize;
        while done < data.len() {
            let address = va + done as u64;
            // Checked above, and nothing changes the tables in between.
            let pa = self.user_address(&*phys, address, UserAccess::Write)?;
            let in_page = (PAGE_SIZE - (address % PAGE_SIZE)) as usize;
            let chunk = in_page.min(data.len() - done);
            phys.write_phys(pa, &data[done..done + chunk]);
            done += chunk;
        }
        Ok(())
    }

    /// Is every page of `[va, va + len)` mapped for EL0 writing? (A
    /// read-only or executable page, or one that is the kernel's, is not.)
    pub fn check_user_writable<M: PhysMemory>(
        &self,
        phys: &M,
        va: u64,
        len: u64,
    ) -> Result<(), UserAccessError> {
        let end = va.checked_add(len).ok_or(UserAccessError::NotMapped)?;
        let mut page = page_floor(va);
        while page < end {
            self.user_address(phys, page, UserAccess::Write)?;
            page += PAGE_SIZE;
        }
        Ok(())
    }

    /// The `len` words from user address `va` (8-aligned, at most a page
    /// of words), every page of them mapped as Normal memory with
    /// `access` for EL0; `NotMapped` otherwise, or for an unaligned or
    /// longer range.
    /// (Inlined: with the length known where it is called, the split of
    /// the range into its runs folds away; called, it cost a user-dispatch
    /// redirect and its return some 90 instructions.)
    #[inline(always)]
    pub fn user_words<M: PhysMemory>(
        &self,
        phys: &M,
        va: u64,
        len: usize,
        access: UserAccess,
    ) -> Result<UserWords, UserAccessError> {
        if !va.is_multiple_of(8) || len == 0 || len > PAGE_WORDS {
            return Err(UserAccessError::NotMapped);
        }
        let end = va
            .checked_add(8 * len as u64 - 1)
            .ok_or(UserAccessError::NotMapped)?;
        let first = self.user_address(phys, va, access)?;
        let on_first = ((PAGE_SIZE - va % PAGE_SIZE) / 8) as usize;
        let second = if page_floor(end) != page_floor(va) {
            self.user_address(phys, page_floor(end), access)?
        } else {
            0
        };
        Ok(UserWords {
            first,
            on_first: on_first.min(len),
            second,
            len,
        })
    }
}

/// Does a page mapped with `permissions` give EL0 `access`? Device memory
/// never does: the kernel does not read or write registers for a thread.
fn allows(permissions: Permissions, access: UserAccess) -> bool {
    permissions.owner() == Owner::User
        && permissions.memory() == MemoryKind::Normal
        && (access == UserAccess::Read || permissions.access() == Access::ReadWrite)
}
