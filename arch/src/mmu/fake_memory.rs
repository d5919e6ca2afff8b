//! A `Vec`-backed [`TableMemory`] for host tests, with a table budget so
//! exhaustion can be tested.

use super::address::{PhysAddr, PAGE_SIZE};
use super::table::{TableMemory, ENTRIES_PER_TABLE};

/// Where the fake's tables "live": far from the addresses the tests map.
const FAKE_TABLE_BASE: u64 = 0x0000_8000_0000_0000;

pub(crate) struct FakeTableMemory {
    tables: Vec<[u64; ENTRIES_PER_TABLE]>,
    budget: usize,
}

impl FakeTableMemory {
    /// A memory that can hand out at most `budget` tables.
    pub(crate) fn with_budget(budget: usize) -> Self {
        Self {
            tables: Vec::new(),
            budget,
        }
    }

    pub(crate) fn tables_allocated(&self) -> usize {
        self.tables.len()
    }

    fn slot(table: PhysAddr) -> usize {
        usize::try_from((table.as_u64() - FAKE_TABLE_BASE) / PAGE_SIZE).expect("fake table index")
    }
}

impl TableMemory for FakeTableMemory {
    fn allocate_table(&mut self) -> Option<PhysAddr> {
        if self.tables.len() == self.budget {
            return None;
        }
        self.tables.push([0; ENTRIES_PER_TABLE]);
        let slot = self.tables.len() as u64 - 1;
        Some(PhysAddr::new(FAKE_TABLE_BASE + slot * PAGE_SIZE))
    }

    fn read_entry(&self, table: PhysAddr, index: usize) -> u64 {
        self.tables[Self::slot(table)][index]
    }

    fn write_entry(&mut self, table: PhysAddr, index: usize, value: u64) {
        self.tables[Self::slot(table)][index] = value;
    }
}
