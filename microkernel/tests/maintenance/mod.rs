//! What the fake platform records of the kernel's stores and of the
//! cache and TLB maintenance it asks for, and the check made at every
//! return to EL0: the space about to run has no table store the walker
//! might miss and no executable page the instruction cache might not see.
//!
//! Time is a counter of recorded operations. A table store is published
//! by a later `publish_table_writes`, `flush_tlb_page` or `flush_tlb_all`
//! (each begins with DSB ISHST on the hardware). An executable page is
//! fetchable when its frame was synced after the frame's last store and
//! after the entry's previous value was written (so the sync belongs to
//! this mapping, not to an earlier one of the same frame). Stores made
//! from EL0 through a writable mapping are invisible here; the kernel
//! cannot see them either, which is why every executable mapping syncs.

use std::collections::HashMap;

/// Bits 47:12 of a descriptor: the next table or the output page.
const OUTPUT_ADDRESS: u64 = 0x0000_ffff_ffff_f000;
/// UXN: EL0 may not execute from the page.
const USER_EXECUTE_NEVER: u64 = 1 << 54;
const PAGE: u64 = 4096;

#[derive(Default)]
pub struct Recorder {
    now: u64,
    /// Page → when any byte of it was last stored.
    stored: HashMap<u64, u64>,
    /// 8-byte slot → when it was last stored as a word, and the time
    /// before that.
    words: HashMap<u64, (u64, Option<u64>)>,
    /// Frame → when it was last made fetchable.
    synced: HashMap<u64, u64>,
    /// When table stores were last made visible to the walker.
    published: Option<u64>,
    /// Syncs asked for so far.
    pub syncs: usize,
}

impl Recorder {
    fn tick(&mut self) -> u64 {
        self.now += 1;
        self.now
    }

    pub fn stored(&mut self, pa: u64, len: u64) {
        let now = self.tick();
        let mut page = pa & !(PAGE - 1);
        while page < pa + len {
            self.stored.insert(page, now);
            page += PAGE;
        }
    }

    pub fn stored_word(&mut self, pa: u64) {
        self.stored(pa, 8);
        let now = self.now;
        let previous = self.words.get(&pa).map(|&(last, _)| last);
        self.words.insert(pa, (now, previous));
    }

    pub fn synced(&mut self, pa: u64) {
        let now = self.tick();
        self.synced.insert(pa & !(PAGE - 1), now);
        self.syncs += 1;
    }

    pub fn published(&mut self) {
        self.published = Some(self.tick());
    }

    /// Checks the space whose root table is at `root`, reading memory
    /// with `read`; returns the number of executable pages it checked.
    pub fn check_space(&self, read: impl Fn(u64) -> u64, root: u64) -> Result<usize, String> {
        let mut executable = 0;
        let mut tables = vec![(root, 0u32)];
        while let Some((table, level)) = tables.pop() {
            if let Some(&stored) = self.stored.get(&table) {
                if self.published.is_none_or(|published| published < stored) {
                    return Err(format!(
                        "the level {level} table at {table:#x} was stored at {stored}, after the last publish ({:?})",
                        self.published
                    ));
                }
            }
            for index in 0..512 {
                let slot = table + 8 * index;
                let entry = read(slot);
                if entry & 0b11 != 0b11 {
                    // Blocks are never used for user space; invalid entries
                    // are never cached.
                    continue;
                }
                if level < 3 {
                    tables.push((entry & OUTPUT_ADDRESS, level + 1));
                } else if entry & USER_EXECUTE_NEVER == 0 {
                    executable += 1;
                    self.check_executable(slot, entry & OUTPUT_ADDRESS)?;
                }
            }
        }
        Ok(executable)
    }

    fn check_executable(&self, slot: u64, frame: u64) -> Result<(), String> {
        let synced = self.synced.get(&frame).copied();
        let contents = self.stored.get(&frame).copied().unwrap_or(0);
        let entry_before = self.words.get(&slot).and_then(|&(_, previous)| previous);
        let fresh = synced.is_some_and(|synced| {
            synced > contents && entry_before.is_none_or(|before| synced > before)
        });
        if fresh {
            Ok(())
        } else {
            Err(format!(
                "the executable page {frame:#x} (entry at {slot:#x}, its previous value stored at {entry_before:?}) \
                 was last stored at {contents} and synced at {synced:?}: the instruction cache may not see it"
            ))
        }
    }
}
