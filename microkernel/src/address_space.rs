//! User address spaces: a TTBR0 table tagged with an ASID, the frames it
//! owns, loading a program into it, and copying from user memory.
//!
//! The kernel never dereferences a user pointer. `copy_from_user` walks
//! the thread's own tables in software and reads the frames through the
//! kernel's linear map, so a bad pointer is an error code, never a kernel
//! fault, and no window opens onto user memory (software PAN stays shut).
//!
//! Every change to a space's tables is finished here, with the maintenance
//! the architecture asks for (`MemoryMaintenance`), so no caller can
//! forget it: a frame is made fetchable (`sync_instruction_cache`) after
//! its last write and before the entry that maps it executable; the table
//! stores of a map are made visible to the walker (`publish_table_writes`)
//! before the space can be entered; an unmap clears the entry, then drops
//! the page's TLB entries (`flush_tlb_page`). While the kernel runs, TTBR0
//! holds the empty table, so nothing walks a user table half-written.

use crate::frames::FrameAllocator;
use crate::platform::{MemoryMaintenance, PhysMemory};
use abi::elf::{self, ElfError, Image};
use abi::vspace::MapRights;
use abi::IPC_BUFFER_ADDRESS;
use arch::layout::{PAGE_SIZE, USER_END};
use arch::mmu::{
    AsidWithGeneration, Granularity, Half, MapError, Mapping, PageTable, Permissions, PhysAddr,
    TableMemory, VirtAddr,
};

/// Frames one kernel-built address space may own (program, stack, IPC
/// buffer and page tables): what one page of the list of them holds.
pub const MAX_FRAMES: usize = (PAGE_SIZE / 8) as usize;
/// Top of the user stack (exclusive, 16-byte aligned).
pub const USER_STACK_TOP: u64 = 0x0000_7fff_ffff_0000;
/// Pages of user stack; the page below stays unmapped as a guard.
pub const USER_STACK_PAGES: u64 = 32;
/// Most pages a program's segments may take in a space the kernel builds:
/// what [`MAX_FRAMES`] leaves after the stack and the IPC buffer (a file
/// needing more could never load), not `abi::elf::MAX_PAGES`, which
/// bounds the frames and slots of one task the SDK loads. The root
/// task's ELF needs about 30 pages today; the page tables come on top and
/// are still checked as the load takes them.
pub const MAX_PROGRAM_PAGES: usize = MAX_FRAMES - USER_STACK_PAGES as usize - 1;

// Every segment the shared parser accepts lies in the user half (TTBR0)
// and off page 0: the range check the kernel's own parser made with
// `arch::layout::is_user_range` is `abi::elf`'s image range now. Its
// pages are the MMU's.
const _: () = assert!(
    elf::IMAGE_START >= PAGE_SIZE && elf::IMAGE_END <= USER_END && elf::PAGE_SIZE == PAGE_SIZE
);

/// Checks a program's ELF file as [`AddressSpace::load`] does: the shared
/// parser (`abi::elf`, the SDK's task loader uses it too) with the
/// kernel's page limit, [`MAX_PROGRAM_PAGES`].
pub fn parse_program(file: &[u8]) -> Result<Image, ElfError> {
    elf::parse_within(file, MAX_PROGRAM_PAGES)
}

/// The EL0 page permissions of `rights` (never writable and executable:
/// `MapRights` cannot say so).
pub const fn user_permissions(rights: MapRights) -> Permissions {
    match rights {
        MapRights::Read => Permissions::USER_RO,
        MapRights::ReadWrite => Permissions::USER_RW,
        MapRights::ReadExecute => Permissions::USER_RX,
    }
}

/// The EL0 page permissions of `rights` for a device Frame: Device-nGnRE,
/// read-only or read-write; `None` for `ReadExecute` (device memory is
/// never executable).
pub const fn user_device_permissions(rights: MapRights) -> Option<Permissions> {
    match rights {
        MapRights::Read => Some(Permissions::USER_DEVICE_RO),
        MapRights::ReadWrite => Some(Permissions::USER_DEVICE_RW),
        MapRights::ReadExecute => None,
    }
}

/// Why an address space could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpaceError {
    /// The program file is not acceptable.
    Elf(ElfError),
    /// The page tables refused a mapping.
    Map(MapError),
    /// No RAM left, or the space owns its maximum number of frames.
    OutOfMemory,
}

impl From<MapError> for SpaceError {
    fn from(e: MapError) -> Self {
        match e {
            MapError::OutOfTables => SpaceError::OutOfMemory,
            other => SpaceError::Map(other),
        }
    }
}

/// Why a user range could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserAccessError {
    /// Some page of the range is unmapped, or not readable (for a copy to
    /// user memory: not writable) from EL0.
    NotMapped,
}

/// One user address space (the body of its VSpace's record).
pub struct AddressSpace {
    table: PageTable,
    asid: AsidWithGeneration,
    /// The frames a space the kernel built owns (`None` for one built in
    /// a VSpace object, which owns nothing).
    frames: Option<OwnedFrames>,
    ipc_buffer: u64,
    tables: TableSource,
    /// The pages the last walks for the kernel's accesses found
    /// (`user_address`); forgotten by every method that writes an entry.
    recent: RecentPages,
}

/// The frames a kernel-built space owns, listed in a page of the kernel's
/// pool (so the space itself stays small): entry `i` is the `u64` at
/// byte `8 * i` of `page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OwnedFrames {
    page: u64,
    count: usize,
}

impl OwnedFrames {
    /// Adds `frame`; `false` if the list is full.
    fn push<M: PhysMemory>(&mut self, phys: &mut M, frame: u64) -> bool {
        if self.count >= MAX_FRAMES {
            return false;
        }
        phys.write_phys_u64(self.page + 8 * self.count as u64, frame);
        self.count += 1;
        true
    }

    /// Gives every listed frame and the list's own page back.
    fn release<M: PhysMemory>(self, phys: &M, allocator: &mut FrameAllocator) {
        for i in 0..self.count {
            allocator.free(phys.read_phys_u64(self.page + 8 * i as u64));
        }
        allocator.free(self.page);
    }
}

/// Where the page-table pages `map_frame` adds come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TableSource {
    /// The kernel's frame pool (a space the kernel built around a
    /// program): owned in `frames`, at most
    /// `abi::vspace::MAX_TABLE_PAGES` of them; `used` so far.
    Pool { used: usize },
    /// The pages of a VSpace object made by `Retype`: the root is its
    /// first page, tables are taken from the next ones in order; `used`
    /// counts the root too. Nothing is owned: the memory is the Untyped's.
    Object { base: u64, pages: u64, used: u64 },
}

/// Table memory for a space built in a VSpace object's own pages.
struct ObjectMemory<'a, M: PhysMemory> {
    phys: &'a mut M,
    base: u64,
    pages: u64,
    used: &'a mut u64,
}

impl<M: PhysMemory> TableMemory for ObjectMemory<'_, M> {
    fn allocate_table(&mut self) -> Option<PhysAddr> {
        if *self.used >= self.pages {
            return None;
        }
        let page = self.base + *self.used * PAGE_SIZE;
        *self.used += 1;
        // Zeroed now, not only at retype: a space rebuilt in the same
        // object after its thread ended finds no stale entries.
        self.phys.zero_frame(page);
        Some(PhysAddr::new(page))
    }

    fn read_entry(&self, table: PhysAddr, index: usize) -> u64 {
        self.phys.read_phys_u64(table.as_u64() + 8 * index as u64)
    }

    fn write_entry(&mut self, table: PhysAddr, index: usize, value: u64) {
        self.phys
            .write_phys_u64(table.as_u64() + 8 * index as u64, value)
    }
}

/// Why `map_frame` refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameMapError {
    /// The address translates already.
    AlreadyMapped,
    /// The space has used up its page-table allowance, or RAM is out.
    OutOfTables,
    /// The mapper refused the request otherwise (bad address).
    Refused,
}

/// Table memory for a user space: frames from the allocator, recorded as
/// owned by the space so they are freed with it.
struct SpaceMemory<'a, M: PhysMemory> {
    phys: &'a mut M,
    allocator: &'a mut FrameAllocator,
    owned: &'a mut OwnedFrames,
    /// Frames this memory may still take (`usize::MAX`: no limit beyond
    /// `MAX_FRAMES`).
    allowance: usize,
}

impl<M: PhysMemory> SpaceMemory<'_, M> {
    fn frame(&mut self) -> Option<u64> {
        if self.owned.count >= MAX_FRAMES || self.allowance == 0 {
            return None;
        }
        self.allowance -= 1;
        let frame = self.allocator.allocate()?;
        self.phys.zero_frame(frame);
        self.owned.push(self.phys, frame);
        Some(frame)
    }
}

impl<M: PhysMemory> TableMemory for SpaceMemory<'_, M> {
    fn allocate_table(&mut self) -> Option<PhysAddr> {
        self.frame().map(PhysAddr::new)
    }

    fn read_entry(&self, table: PhysAddr, index: usize) -> u64 {
        self.phys.read_phys_u64(table.as_u64() + 8 * index as u64)
    }

    fn write_entry(&mut self, table: PhysAddr, index: usize, value: u64) {
        self.phys
            .write_phys_u64(table.as_u64() + 8 * index as u64, value)
    }
}

/// Read-only table access for walks.
struct WalkMemory<'a, M: PhysMemory>(&'a M);

impl<M: PhysMemory> TableMemory for WalkMemory<'_, M> {
    fn allocate_table(&mut self) -> Option<PhysAddr> {
        None
    }

    fn read_entry(&self, table: PhysAddr, index: usize) -> u64 {
        self.0.read_phys_u64(table.as_u64() + 8 * index as u64)
    }

    fn write_entry(&mut self, _table: PhysAddr, _index: usize, _value: u64) {}
}

/// Table access that may write entries but never allocate (unmap).
struct TablesOnly<'a, M: PhysMemory>(&'a mut M);

impl<M: PhysMemory> TableMemory for TablesOnly<'_, M> {
    fn allocate_table(&mut self) -> Option<PhysAddr> {
        None
    }

    fn read_entry(&self, table: PhysAddr, index: usize) -> u64 {
        self.0.read_phys_u64(table.as_u64() + 8 * index as u64)
    }

    fn write_entry(&mut self, table: PhysAddr, index: usize, value: u64) {
        self.0
            .write_phys_u64(table.as_u64() + 8 * index as u64, value)
    }
}

impl AddressSpace {
    /// Builds a space holding `program` and a stack; returns it with the
    /// program's entry point. On failure every frame taken is returned.
    pub fn load<M: PhysMemory + MemoryMaintenance>(
        phys: &mut M,
        allocator: &mut FrameAllocator,
        asid: AsidWithGeneration,
        file: &[u8],
    ) -> Result<(AddressSpace, u64), SpaceError> {
        Self::load_with_file(phys, allocator, asid, file, None)
    }

    /// As `load`, and with `file_at` a read-only copy of the whole file
    /// at that (page-aligned) address: how the root task finds its own
    /// ELF (`abi::bootinfo::ROOT_IMAGE_ADDRESS`), to load its programs
    /// into the spaces it builds.
    pub fn load_with_file<M: PhysMemory + MemoryMaintenance>(
        phys: &mut M,
        allocator: &mut FrameAllocator,
        asid: AsidWithGeneration,
        file: &[u8],
        file_at: Option<u64>,
    ) -> Result<(AddressSpace, u64), SpaceError> {
        let image = parse_program(file).map_err(SpaceError::Elf)?;
        let mut owned = OwnedFrames {
            page: allocator.allocate().ok_or(SpaceError::OutOfMemory)?,
            count: 0,
        };
        let result = Self::populate(phys, allocator, &mut owned, &image, file, file_at);
        match result {
            Ok((table, ipc_buffer)) => Ok((
                AddressSpace {
                    table,
                    asid,
                    frames: Some(owned),
                    ipc_buffer,
                    tables: TableSource::Pool { used: 0 },
                    recent: RecentPages::default(),
                },
                image.entry,
            )),
            Err(e) => {
                owned.release(phys, allocator);
                Err(e)
            }
        }
    }

    /// An empty space built in the `pages` pages of a VSpace object at
    /// `base` (made by `Retype`): its root is the first page, and every
    /// table a mapping needs comes from the rest. It owns no frame, maps
    /// nothing and has no IPC buffer of its own (`ipc_buffer` is 0).
    /// `None` if the object has no page for the root.
    pub fn in_object<M: PhysMemory + MemoryMaintenance>(
        phys: &mut M,
        asid: AsidWithGeneration,
        base: u64,
        pages: u64,
    ) -> Option<AddressSpace> {
        let mut used = 0;
        let mut memory = ObjectMemory {
            phys,
            base,
            pages,
            used: &mut used,
        };
        let table = PageTable::new(&mut memory, Half::Lower).ok()?;
        // The zeroed root is what the walker reads first.
        memory.phys.publish_table_writes();
        Some(AddressSpace {
            table,
            asid,
            frames: None,
            ipc_buffer: 0,
            tables: TableSource::Object { base, pages, used },
            recent: RecentPages::default(),
        })
    }

    /// The VSpace object pages this space is built in (base and count),
    /// if it was made by `Retype`; `None` for a space the kernel built.
    pub fn object_pages(&self) -> Option<(u64, u64)> {
        match self.tables {
            TableSource::Object { base, pages, .. } => Some((base, pages)),
            TableSource::Pool { .. } => None,
        }
    }

    fn populate<M: PhysMemory + MemoryMaintenance>(
        phys: &mut M,
        allocator: &mut FrameAllocator,
        owned: &mut OwnedFrames,
        image: &Image,
        file: &[u8],
        file_at: Option<u64>,
    ) -> Result<(PageTable, u64), SpaceError> {
        let mut memory = SpaceMemory {
            phys,
            allocator,
            owned,
            allowance: usize::MAX,
        };
        let table = PageTable::new(&mut memory, Half::Lower)?;
        // Checked segments share no page, so each page is mapped once.
        for segment in image.segments() {
            let permissions = user_permissions(segment.rights);
            let mut page = segment.first_page();
            while page < segment.end_page() {
                let frame = memory.frame().ok_or(SpaceError::OutOfMemory)?;
                // Copy the part of the file that lands in this page.
                let file_start = segment.vaddr;
                let file_end = segment.vaddr + segment.file_size;
                let from = page.max(file_start);
                let to = (page + PAGE_SIZE).min(file_end);
                if from < to {
                    let offset = (segment.offset + (from - file_start)) as usize;
                    let bytes = &file[offset..offset + (to - from) as usize];
                    memory.phys.write_phys(frame + (from - page), bytes);
                }
                if permissions.is_executable() {
                    // Its bytes are all written; the frame may have held
                    // other code before (freed frames are reused first).
                    memory.phys.sync_instruction_cache(frame);
                }
                table.map(
                    &mut memory,
                    &Mapping {
                        va: VirtAddr::new(page),
                        pa: PhysAddr::new(frame),
                        size: PAGE_SIZE,
                        permissions,
                        granularity: Granularity::Pages,
                    },
                )?;
                page += PAGE_SIZE;
            }
        }
        let stack_bottom = USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE;
        for page in 0..USER_STACK_PAGES {
            let frame = memory.frame().ok_or(SpaceError::OutOfMemory)?;
            table.map(
                &mut memory,
                &Mapping {
                    va: VirtAddr::new(stack_bottom + page * PAGE_SIZE),
                    pa: PhysAddr::new(frame),
                    size: PAGE_SIZE,
                    permissions: Permissions::USER_RW,
                    granularity: Granularity::Pages,
                },
            )?;
        }
        if let Some(base) = file_at {
            for (index, chunk) in file.chunks(PAGE_SIZE as usize).enumerate() {
                let frame = memory.frame().ok_or(SpaceError::OutOfMemory)?;
                memory.phys.write_phys(frame, chunk);
                table.map(
                    &mut memory,
                    &Mapping {
                        va: VirtAddr::new(base + index as u64 * PAGE_SIZE),
                        pa: PhysAddr::new(frame),
                        size: PAGE_SIZE,
                        permissions: Permissions::USER_RO,
                        granularity: Granularity::Pages,
                    },
                )?;
            }
        }
        let ipc_buffer = memory.frame().ok_or(SpaceError::OutOfMemory)?;
        table.map(
            &mut memory,
            &Mapping {
                va: VirtAddr::new(IPC_BUFFER_ADDRESS),
                pa: PhysAddr::new(ipc_buffer),
                size: PAGE_SIZE,
                permissions: Permissions::USER_RW,
                granularity: Granularity::Pages,
            },
        )?;
        memory.phys.publish_table_writes();
        Ok((table, ipc_buffer))
    }

    /// Maps `pages` pages of RAM from `start` read-only at `va` (both
    /// page-aligned) in place: the pages stay the caller's, neither owned
    /// by this space nor freed with it; only the tables they need are
    /// taken from `allocator`, and owned. How the root sees the system
    /// image, which may be 64 MiB: copied into owned frames it would not
    /// fit the one page that lists them ([`MAX_FRAMES`]). Only for a space
    /// the kernel built. On failure the tables taken stay owned (and go
    /// with the space).
    pub fn map_in_place<M: PhysMemory + MemoryMaintenance>(
        &mut self,
        phys: &mut M,
        allocator: &mut FrameAllocator,
        start: u64,
        pages: u64,
        va: u64,
    ) -> Result<(), SpaceError> {
        self.recent.forget();
        let owned = self.frames.as_mut().ok_or(SpaceError::OutOfMemory)?;
        let mut memory = SpaceMemory {
            phys,
            allocator,
            owned,
            allowance: usize::MAX,
        };
        for page in 0..pages {
            self.table.map(
                &mut memory,
                &Mapping {
                    va: VirtAddr::new(va + page * PAGE_SIZE),
                    pa: PhysAddr::new(start + page * PAGE_SIZE),
                    size: PAGE_SIZE,
                    permissions: Permissions::USER_RO,
                    granularity: Granularity::Pages,
                },
            )?;
        }
        memory.phys.publish_table_writes();
        Ok(())
    }

    /// Physical address of the IPC buffer page (mapped at
    /// `abi::IPC_BUFFER_ADDRESS`).
    pub fn ipc_buffer(&self) -> u64 {
        self.ipc_buffer
    }

    /// Physical address of the root table (what a VSpace object stands
    /// for).
    pub fn root(&self) -> u64 {
        self.table.root().as_u64()
    }

    /// The TTBR0_EL1 value: table root and ASID.
    pub fn ttbr0(&self) -> u64 {
        self.table.root().as_u64() | self.asid.asid().ttbr_bits()
    }

    /// The ASID (with its generation) this space holds.
    pub fn asid(&self) -> AsidWithGeneration {
        self.asid
    }

    /// Takes a new ASID (after a generation rollover).
    pub fn set_asid(&mut self, asid: AsidWithGeneration) {
        self.asid = asid;
    }

    /// Frames this space owns (its list's page not counted).
    pub fn frame_count(&self) -> usize {
        self.frames.map_or(0, |f| f.count)
    }

    /// Maps the page `frame` at `va` for EL0 with `permissions` (the
    /// caller has checked `va` is in the frame window and the permissions
    /// are R, RW or RX). Page-table pages come from `allocator`, owned by
    /// this space and charged against `abi::vspace::MAX_TABLE_PAGES`, or,
    /// for a space built in a VSpace object, from that object's pages. An
    /// executable mapping makes the frame's contents fetchable first. No
    /// TLB maintenance is needed: an invalid entry is never cached.
    pub fn map_frame<M: PhysMemory + MemoryMaintenance>(
        &mut self,
        phys: &mut M,
        allocator: &mut FrameAllocator,
        frame: u64,
        va: u64,
        permissions: Permissions,
    ) -> Result<(), FrameMapError> {
        self.recent.forget();
        // A different translation (or the very same one: a frame is mapped
        // once) already there.
        if self
            .table
            .translate(&WalkMemory(&*phys), VirtAddr::new(va))
            .is_ok()
        {
            return Err(FrameMapError::AlreadyMapped);
        }
        // Every table the mapping needs must be there to take before the
        // first is linked: a refused `FrameMap` changes nothing, its
        // budget included.
        let needed = self
            .table
            .tables_to_map_page(&WalkMemory(&*phys), VirtAddr::new(va))
            .map_err(|_| FrameMapError::Refused)?;
        let owned = self.frame_count();
        let room = match self.tables {
            TableSource::Pool { used } => {
                abi::vspace::MAX_TABLE_PAGES.saturating_sub(used) >= needed
                    && MAX_FRAMES - owned >= needed
                    && allocator.available() >= needed as u64
            }
            TableSource::Object { pages, used, .. } => pages.saturating_sub(used) >= needed as u64,
        };
        if !room {
            return Err(FrameMapError::OutOfTables);
        }
        let mapping = Mapping {
            va: VirtAddr::new(va),
            pa: PhysAddr::new(frame),
            size: PAGE_SIZE,
            permissions,
            granularity: Granularity::Pages,
        };
        if permissions.is_executable() {
            // Code written through another mapping (the frame is mapped
            // once at a time) must reach the instruction side before it
            // can be fetched.
            phys.sync_instruction_cache(frame);
        }
        // Cannot run out of tables now (checked above).
        let result = match (&mut self.tables, self.frames.as_mut()) {
            (TableSource::Pool { used }, Some(owned)) => {
                let before = owned.count;
                let mut memory = SpaceMemory {
                    phys,
                    allocator,
                    owned,
                    allowance: abi::vspace::MAX_TABLE_PAGES.saturating_sub(*used),
                };
                let result = self.table.map(&mut memory, &mapping);
                *used += owned.count - before;
                result
            }
            (TableSource::Pool { .. }, None) => Err(MapError::OutOfTables),
            (TableSource::Object { base, pages, used }, _) => {
                let mut memory = ObjectMemory {
                    phys,
                    base: *base,
                    pages: *pages,
                    used,
                };
                self.table.map(&mut memory, &mapping)
            }
        };
        // Whatever was written, tables linked included, before the space
        // runs again.
        phys.publish_table_writes();
        result.map_err(|e| match e {
            MapError::OutOfTables => FrameMapError::OutOfTables,
            MapError::AlreadyMapped { .. } => FrameMapError::AlreadyMapped,
            _ => FrameMapError::Refused,
        })
    }

    /// Removes the page mapped at `va`, entry first, then its TLB entries
    /// for this space's ASID (a stale-generation ASID still names the only
    /// entries that can exist for this space). Returns whether a page was
    /// mapped there.
    pub fn unmap_page<M: PhysMemory + MemoryMaintenance>(&mut self, phys: &mut M, va: u64) -> bool {
        self.recent.forget();
        let cleared = self
            .table
            .unmap(&mut TablesOnly(&mut *phys), VirtAddr::new(va), PAGE_SIZE)
            .is_ok_and(|unmapped| unmapped.leaves > 0);
        if cleared {
            phys.flush_tlb_page(self.asid.asid().as_u16(), va);
        }
        cleared
    }

    /// Page-table pages `map_frame` has added so far.
    pub fn map_tables(&self) -> usize {
        match self.tables {
            TableSource::Pool { used } => used,
            TableSource::Object { used, .. } => used.saturating_sub(1) as usize,
        }
    }

    /// Where user address `va` leads (its physical address and the
    /// mapping's permissions), if it is mapped.
    pub fn translate_user<M: PhysMemory>(&self, phys: &M, va: u64) -> Option<(u64, Permissions)> {
        self.table
            .translate(&WalkMemory(phys), VirtAddr::new(va))
            .ok()
            .map(|t| (t.pa.as_u64(), t.permissions))
    }

    /// Returns every frame it owns to `allocator`. The caller flushes the
    /// ASID's TLB entries before the frames can be reused.
    pub fn release<M: PhysMemory>(self, phys: &M, allocator: &mut FrameAllocator) {
        if let Some(frames) = self.frames {
            frames.release(phys, allocator);
        }
    }
}

mod recent_pages;
mod user_memory;
use recent_pages::RecentPages;
pub use user_memory::{UserAccess, UserWords};

#[cfg(test)]
mod tests;
