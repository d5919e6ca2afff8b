//! Word by word access to a short, 8-aligned user range (a user-dispatch
//! frame): its page, or its two pages, are walked and checked once, and the
//! words are then read or written through the kernel's map of RAM with no
//! byte buffer in between. (A frame copied as bytes cost three `memcpy`
//! and two `memset` calls per redirect and return.)

use super::{AddressSpace, UserAccessError};
use crate::platform::PhysMemory;
use arch::layout::{page_floor, PAGE_SIZE};
use arch::mmu::{Access, MemoryKind, Owner, Permissions};

/// Words in a page: the longest range `AddressSpace::user_words` takes
/// (so that it spans at most two pages).
const PAGE_WORDS: usize = (PAGE_SIZE / 8) as usize;

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

/// What the range must allow EL0: reading, or reading and writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserWordAccess {
    /// Mapped for EL0 reading, as normal memory.
    Read,
    /// Mapped for EL0 reading and writing, as normal memory.
    Write,
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
        phys.read_phys_words(second, &mut tail[..on_second]);
    }

    /// Writes `words` from word `index` of the range on (a part past the
    /// range's end is not written).
    pub fn write<M: PhysMemory>(&self, phys: &mut M, index: usize, words: &[u64]) {
        let [(first, on_first), (second, on_second)] = self.runs(index, words.len());
        let (head, tail) = words.split_at(on_first);
        phys.write_phys_words(first, head);
        phys.write_phys_words(second, &tail[..on_second]);
    }
}

impl AddressSpace {
    /// The `len` words from user address `va` (8-aligned, at most a page
    /// of words), every page of them mapped as normal memory with
    /// `access` for EL0; `NotMapped` otherwise, or for an unaligned or
    /// longer range.
    pub fn user_words<M: PhysMemory>(
        &self,
        phys: &M,
        va: u64,
        len: usize,
        access: UserWordAccess,
    ) -> Result<UserWords, UserAccessError> {
        if !va.is_multiple_of(8) || len == 0 || len > PAGE_WORDS {
            return Err(UserAccessError::NotMapped);
        }
        let end = va
            .checked_add(8 * len as u64 - 1)
            .ok_or(UserAccessError::NotMapped)?;
        let first = self.user_page(phys, va, access)?;
        let on_first = ((PAGE_SIZE - va % PAGE_SIZE) / 8) as usize;
        let second = if page_floor(end) != page_floor(va) {
            self.user_page(phys, page_floor(end), access)?
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

    /// The physical address `va` leads to, if its page is mapped as
    /// normal memory with `access` for EL0.
    fn user_page<M: PhysMemory>(
        &self,
        phys: &M,
        va: u64,
        access: UserWordAccess,
    ) -> Result<u64, UserAccessError> {
        let (pa, permissions) = self
            .translate_user(phys, va)
            .ok_or(UserAccessError::NotMapped)?;
        if allows(permissions, access) {
            Ok(pa)
        } else {
            Err(UserAccessError::NotMapped)
        }
    }
}

/// Does a page mapped with `permissions` give EL0 `access`? Device memory
/// never does: the kernel does not read or write registers for a thread.
fn allows(permissions: Permissions, access: UserWordAccess) -> bool {
    permissions.owner() == Owner::User
        && permissions.memory() == MemoryKind::Normal
        && (access == UserWordAccess::Read || permissions.access() == Access::ReadWrite)
}
