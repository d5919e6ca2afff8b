//! Mapping, unmapping and translation in one half's four-level table.
//!
//! `map` first walks the whole range without writing (a dry run), so a
//! conflict leaves the tables untouched; only table exhaustion can stop the
//! writing pass part-way (the tables allocated so far stay linked, and
//! `unmap` of the same range undoes the leaves). Intermediate tables are
//! never freed here.
//!
//! After `map`, the caller needs DSB ISHST (+ ISB) before relying on the new
//! entries; no TLBI is needed since invalid entries are never cached. After
//! `unmap`, it needs DSB ISHST; TLBI VAE1IS per page with the ASID (VAAE1IS
//! if [`Unmapped::global`]); DSB ISH; ISB.

use super::address::{is_aligned, Half, PhysAddr, VirtAddr, PAGE_SHIFT, PAGE_SIZE, PHYS_ADDR_END};
use super::attributes::{Owner, PermissionError, Permissions};
use super::descriptor::{BlockPageDescriptor, Entry, TableDescriptor};
use super::table::{Level, TableMemory};

/// Which leaf sizes `map` may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    /// 1 GiB and 2 MiB blocks where virtual address, physical address and
    /// remaining size allow; 4 KiB pages elsewhere.
    Largest,
    /// 4 KiB pages only (user space, the kernel image). An identical
    /// existing block is still accepted, not split.
    Pages,
}

/// A request to map `size` bytes at `va` to `pa`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First virtual address; page-aligned.
    pub va: VirtAddr,
    /// First physical address; page-aligned.
    pub pa: PhysAddr,
    /// Bytes; a non-zero multiple of the page size.
    pub size: u64,
    /// Permissions of every entry written.
    pub permissions: Permissions,
    /// Leaf sizes allowed.
    pub granularity: Granularity,
}

/// Where a virtual address leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The physical address `va` translates to.
    pub pa: PhysAddr,
    /// The leaf's permissions.
    pub permissions: Permissions,
    /// The leaf's level: L1/L2 for a block, L3 for a page.
    pub level: Level,
}

/// What `unmap` removed, for the caller's TLB maintenance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unmapped {
    /// Start of the range unmapped.
    pub va: VirtAddr,
    /// Size of the range unmapped (holes in it included).
    pub size: u64,
    /// Leaf entries cleared; 0 means no TLB maintenance is needed.
    pub leaves: usize,
    /// Whether any cleared leaf was global (nG = 0): TLBI by VA for all
    /// ASIDs then.
    pub global: bool,
}

/// Why a map, unmap or translate failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// An address or size is not a multiple of the page size.
    Misaligned,
    /// The size is zero.
    EmptyRange,
    /// The virtual range leaves the table's half.
    OutsideHalf,
    /// The physical range does not fit 48 bits.
    PhysicalOutOfRange,
    /// User permissions asked for in the kernel (TTBR1) half.
    UserMappingInKernelHalf,
    /// `va` already translates differently.
    AlreadyMapped {
        /// The first address found mapped differently.
        va: VirtAddr,
    },
    /// The range covers only part of the block that maps `va`.
    PartialBlock {
        /// An address in the block.
        va: VirtAddr,
    },
    /// The address translates to nothing.
    NotMapped,
    /// [`TableMemory::allocate_table`] returned `None`.
    OutOfTables,
    /// [`TableMemory::allocate_table`] returned an address that is not
    /// 4 KiB-aligned or does not fit 48 bits.
    BadTableAddress,
    /// A reserved descriptor encoding was found in the tables.
    ReservedDescriptor,
    /// A leaf's attributes are not ones this module writes.
    Permission(PermissionError),
}

/// Where a walk stops: the first entry for an address that is not a table
/// descriptor, and the table and level it sits in.
struct Stop {
    table: PhysAddr,
    level: Level,
    entry: Entry,
}

/// How far one step of `unmap` got, and whether it cleared a leaf.
struct UnmapStep {
    size: u64,
    /// `Some(global)` if a leaf was (or, in the dry run, would be) cleared.
    cleared: Option<bool>,
}

/// The translation table of one half, by its root (L0) table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageTable {
    root: PhysAddr,
    half: Half,
}

impl PageTable {
    /// Allocates an empty root table for `half`.
    pub fn new<M: TableMemory>(memory: &mut M, half: Half) -> Result<Self, MapError> {
        Ok(Self {
            root: allocate_table(memory)?,
            half,
        })
    }

    /// A table whose root already exists at `root`.
    pub const fn from_root(root: PhysAddr, half: Half) -> Self {
        Self { root, half }
    }

    /// The root table's physical address: TTBRn_EL1.BADDR.
    pub const fn root(&self) -> PhysAddr {
        self.root
    }

    /// The half this table translates.
    pub const fn half(&self) -> Half {
        self.half
    }

    /// Maps `mapping`, using blocks where allowed and possible. Parts that
    /// already translate identically are accepted; any other existing
    /// translation in the range refuses the whole request, unwritten.
    pub fn map<M: TableMemory>(&self, memory: &mut M, mapping: &Mapping) -> Result<(), MapError> {
        self.check_range(mapping.va, mapping.size)?;
        let pa = mapping.pa.as_u64();
        if !is_aligned(pa, PAGE_SIZE) {
            return Err(MapError::Misaligned);
        }
        match pa.checked_add(mapping.size) {
            Some(end) if end <= PHYS_ADDR_END => {}
            _ => return Err(MapError::PhysicalOutOfRange),
        }
        if self.half == Half::Upper && mapping.permissions.owner() == Owner::User {
            return Err(MapError::UserMappingInKernelHalf);
        }
        for write in [false, true] {
            let mut done = 0;
            while done < mapping.size {
                done += self.map_step(memory, mapping, done, write)?;
            }
        }
        Ok(())
    }

    /// How many tables `map` would add to map one page at `va`: the
    /// levels missing below the deepest table that covers it (0 when a
    /// leaf covers it already). Lets a caller with a table budget refuse
    /// before anything is written.
    pub fn tables_to_map_page<M: TableMemory>(
        &self,
        memory: &M,
        va: VirtAddr,
    ) -> Result<usize, MapError> {
        self.check_range(va, PAGE_SIZE)?;
        let stop = walk(memory, self.root, Level::FIRST, va.as_u64())?;
        Ok(match stop.entry {
            Entry::Invalid => stop.level.levels_below() as usize,
            _ => 0,
        })
    }

    /// Removes every leaf in `[va, va + size)`; holes are skipped. Refuses,
    /// unwritten, a range that covers only part of a block.
    pub fn unmap<M: TableMemory>(
        &self,
        memory: &mut M,
        va: VirtAddr,
        size: u64,
    ) -> Result<Unmapped, MapError> {
        self.check_range(va, size)?;
        let mut unmapped = Unmapped {
            va,
            size,
            leaves: 0,
            global: false,
        };
        for write in [false, true] {
            unmapped.leaves = 0;
            let mut done = 0;
            while done < size {
                let step = self.unmap_step(memory, va.as_u64() + done, size - done, write)?;
                if let Some(global) = step.cleared {
                    unmapped.leaves += 1;
                    unmapped.global |= global;
                }
                done += step.size;
            }
        }
        Ok(unmapped)
    }

    /// Walks the tables for `va`.
    pub fn translate<M: TableMemory>(
        &self,
        memory: &M,
        va: VirtAddr,
    ) -> Result<Translation, MapError> {
        if !self.half.contains(va.as_u64(), 1) {
            return Err(MapError::OutsideHalf);
        }
        let stop = walk(memory, self.root, Level::FIRST, va.as_u64())?;
        match stop.entry {
            Entry::Leaf(raw) => {
                let leaf = BlockPageDescriptor::from(raw);
                let offset = va.as_u64() & (stop.level.entry_size() - 1);
                Ok(Translation {
                    pa: PhysAddr::new(leaf.base_address(stop.level) + offset),
                    permissions: Permissions::from_leaf(leaf).map_err(MapError::Permission)?,
                    level: stop.level,
                })
            }
            _ => Err(MapError::NotMapped),
        }
    }

    fn check_range(&self, va: VirtAddr, size: u64) -> Result<(), MapError> {
        if size == 0 {
            return Err(MapError::EmptyRange);
        }
        if !is_aligned(va.as_u64(), PAGE_SIZE) || !is_aligned(size, PAGE_SIZE) {
            return Err(MapError::Misaligned);
        }
        if !self.half.contains(va.as_u64(), size) {
            return Err(MapError::OutsideHalf);
        }
        Ok(())
    }

    /// Maps (or, if not `write`, checks) the part of `mapping` from offset
    /// `done` that one entry decides; returns that part's size.
    fn map_step<M: TableMemory>(
        &self,
        memory: &mut M,
        mapping: &Mapping,
        done: u64,
        write: bool,
    ) -> Result<u64, MapError> {
        let va = mapping.va.as_u64() + done;
        let pa = mapping.pa.as_u64() + done;
        let remaining = mapping.size - done;
        let mut table = self.root;
        let mut level = Level::FIRST;
        loop {
            let stop = walk(memory, table, level, va)?;
            let entry_size = stop.level.entry_size();
            let offset = va & (entry_size - 1);
            let in_entry = remaining.min(entry_size - offset);
            let leaf = |base: u64| leaf_descriptor(base, mapping.permissions, stop.level);
            match stop.entry {
                Entry::Leaf(existing) => {
                    let same = pa
                        .checked_sub(offset)
                        .is_some_and(|base| leaf(base) == Ok(existing));
                    return if same {
                        Ok(in_entry)
                    } else {
                        Err(MapError::AlreadyMapped {
                            va: VirtAddr::new(va),
                        })
                    };
                }
                Entry::Invalid => {
                    let size_allowed = stop.level == Level::Three
                        || (stop.level.may_be_leaf()
                            && mapping.granularity == Granularity::Largest);
                    let fits = size_allowed
                        && offset == 0
                        && is_aligned(pa, entry_size)
                        && remaining >= entry_size;
                    if fits {
                        if write {
                            memory.write_entry(stop.table, stop.level.index(va), leaf(pa)?);
                        }
                        return Ok(entry_size);
                    }
                    if !write {
                        // Nothing below an invalid entry can conflict.
                        return Ok(in_entry);
                    }
                    let next = allocate_table(memory)?;
                    let descriptor =
                        TableDescriptor::pointing_to(next).ok_or(MapError::BadTableAddress)?;
                    memory.write_entry(stop.table, stop.level.index(va), u64::from(descriptor));
                    table = next;
                    level = stop.level.next().ok_or(MapError::ReservedDescriptor)?;
                }
                Entry::Table(_) | Entry::Reserved => return Err(MapError::ReservedDescriptor),
            }
        }
    }

    /// Clears (or, if not `write`, checks) the leaf deciding `va`.
    fn unmap_step<M: TableMemory>(
        &self,
        memory: &mut M,
        va: u64,
        remaining: u64,
        write: bool,
    ) -> Result<UnmapStep, MapError> {
        let stop = walk(memory, self.root, Level::FIRST, va)?;
        let entry_size = stop.level.entry_size();
        let offset = va & (entry_size - 1);
        match stop.entry {
            Entry::Leaf(leaf) => {
                if offset != 0 || remaining < entry_size {
                    return Err(MapError::PartialBlock {
                        va: VirtAddr::new(va),
                    });
                }
                if write {
                    memory.write_entry(stop.table, stop.level.index(va), 0);
                }
                Ok(UnmapStep {
                    size: entry_size,
                    cleared: Some(!BlockPageDescriptor::from(leaf).not_global()),
                })
            }
            _ => Ok(UnmapStep {
                size: remaining.min(entry_size - offset),
                cleared: None,
            }),
        }
    }
}

/// Follows table descriptors for `va` from `table` at `level` down to the
/// first entry that is not one.
fn walk<M: TableMemory>(
    memory: &M,
    table: PhysAddr,
    level: Level,
    va: u64,
) -> Result<Stop, MapError> {
    let mut table = table;
    let mut level = level;
    loop {
        match Entry::decode(memory.read_entry(table, level.index(va)), level) {
            Entry::Table(next) => {
                table = TableDescriptor::from(next).table_address();
                level = level.next().ok_or(MapError::ReservedDescriptor)?;
            }
            Entry::Reserved => return Err(MapError::ReservedDescriptor),
            entry => {
                return Ok(Stop {
                    table,
                    level,
                    entry,
                })
            }
        }
    }
}

/// A block or page descriptor mapping `pa` with `permissions` at `level`.
fn leaf_descriptor(pa: u64, permissions: Permissions, level: Level) -> Result<u64, MapError> {
    permissions
        .leaf_template()
        .with_is_page(!level.leaf_is_block())
        .with_output_address_checked(pa >> PAGE_SHIFT)
        .map(u64::from)
        .map_err(|_| MapError::PhysicalOutOfRange)
}

/// A new zeroed table, checked to be usable in a table descriptor.
fn allocate_table<M: TableMemory>(memory: &mut M) -> Result<PhysAddr, MapError> {
    let table = memory.allocate_table().ok_or(MapError::OutOfTables)?;
    if !is_aligned(table.as_u64(), PAGE_SIZE) || table.as_u64() >= PHYS_ADDR_END {
        return Err(MapError::BadTableAddress);
    }
    Ok(table)
}
