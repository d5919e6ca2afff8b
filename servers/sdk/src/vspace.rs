//! Typed Frame and VSpace capabilities: mapping pages into an address
//! space and unmapping them.

use crate::ipc::Cptr;
use crate::syscall::{raw_syscall, raw_syscall6};
use abi::vspace::MapRights;
use abi::{ErrorCode, Syscall};

/// A Frame capability: one 4 KiB page of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame(pub Cptr);

/// A VSpace capability: names one address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VSpace(pub Cptr);

impl VSpace {
    /// Makes an empty address space from the Untyped capability at
    /// `untyped`, its capability at `target` of this thread's CNode: its
    /// root table and up to `table_pages` more page-table pages (1 ..=
    /// `abi::vspace::MAX_USER_TABLE_PAGES`), all from the Untyped. Bind it
    /// to a new thread with `Tcb::set_space`.
    pub fn retype(untyped: Cptr, table_pages: u64, target: u64) -> Result<VSpace, ErrorCode> {
        crate::syscall::retype(untyped.0, abi::cap::CapType::VSpace, table_pages, target, 1)?;
        Ok(VSpace(Cptr(target)))
    }
}

impl Frame {
    /// Maps the frame into `vspace` at `va` with `rights`.
    pub fn map(self, vspace: VSpace, va: u64, rights: MapRights) -> Result<(), ErrorCode> {
        self.map_raw(vspace, va, rights.raw())
    }

    /// Maps with a raw permissions value (for tests of refused values,
    /// such as write+execute, 7).
    pub fn map_raw(self, vspace: VSpace, va: u64, rights: u64) -> Result<(), ErrorCode> {
        raw_syscall6(
            Syscall::FrameMap.number(),
            self.0 .0,
            [vspace.0 .0, va, rights, 0, 0],
        )
        .into_result()
    }

    /// Unmaps the frame from wherever it is mapped (`Ok` if it is not).
    pub fn unmap(self) -> Result<(), ErrorCode> {
        raw_syscall(Syscall::FrameUnmap.number(), self.0 .0, 0, 0).into_result()
    }
}

/// A frame this thread has mapped readable at `va`: word and byte access
/// within its 4 KiB, for memory shared with the kernel or another thread
/// (an audit ring, say). Only [`Frame::map_view`] makes one, after the
/// mapping succeeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedFrame {
    va: u64,
    writable: bool,
}

impl Frame {
    /// Maps the frame into this thread's own address space (`own` names
    /// it) at `va` and returns a view of it.
    pub fn map_view(
        self,
        own: VSpace,
        va: u64,
        rights: MapRights,
    ) -> Result<MappedFrame, ErrorCode> {
        self.map(own, va, rights)?;
        Ok(MappedFrame {
            va,
            writable: rights.writable(),
        })
    }
}

impl MappedFrame {
    /// The page a system description maps into this task at `va`
    /// (`docs/systems.md`, `maps`): the root maps it before the task
    /// starts, writable if `writable`. A page that is not mapped there
    /// makes the first read fault (the task stops; nothing else is
    /// touched).
    pub const fn described(va: u64, writable: bool) -> MappedFrame {
        MappedFrame {
            va: va & !0xfff,
            writable,
        }
    }

    /// The 64-bit word at byte `offset` (wrapped into the page, aligned
    /// down to 8).
    pub fn read_u64(&self, offset: u64) -> u64 {
        let address = self.va + ((offset % 4096) & !7);
        // SAFETY: the page is mapped readable at `va` in this address
        // space (`map_view` made it so), and the address stays inside it.
        unsafe { (address as *const u64).read_volatile() }
    }

    /// The 32-bit word at byte `offset` (wrapped into the page, aligned
    /// down to 4): one 32-bit access, as device registers want.
    pub fn read_u32(&self, offset: u64) -> u32 {
        let address = self.va + ((offset % 4096) & !3);
        // SAFETY: as `read_u64`.
        unsafe { (address as *const u32).read_volatile() }
    }

    /// The byte at `offset` (wrapped into the page).
    pub fn read_u8(&self, offset: u64) -> u8 {
        let address = self.va + offset % 4096;
        // SAFETY: as `read_u64`.
        unsafe { (address as *const u8).read_volatile() }
    }

    /// Stores a 64-bit word at byte `offset`; `Err(MissingRights)` for a
    /// read-only mapping.
    pub fn write_u64(&self, offset: u64, value: u64) -> Result<(), ErrorCode> {
        if !self.writable {
            return Err(ErrorCode::MissingRights);
        }
        let address = self.va + ((offset % 4096) & !7);
        // SAFETY: as `read_u64`, and the mapping is writable.
        unsafe { (address as *mut u64).write_volatile(value) }
        Ok(())
    }

    /// Copies `bytes` into the page from byte `offset`;
    /// `Err(MissingRights)` for a read-only mapping, `Err(InvalidArgument)`
    /// if they would not fit in the page.
    pub fn write_bytes(&self, offset: u64, bytes: &[u8]) -> Result<(), ErrorCode> {
        if !self.writable {
            return Err(ErrorCode::MissingRights);
        }
        let fits = offset
            .checked_add(bytes.len() as u64)
            .is_some_and(|end| end <= 4096);
        if !fits {
            return Err(ErrorCode::InvalidArgument);
        }
        for (address, byte) in (self.va + offset..).zip(bytes) {
            // SAFETY: as `write_u64`: inside the page (checked above), and
            // the mapping is writable.
            unsafe { (address as *mut u8).write_volatile(*byte) }
        }
        Ok(())
    }
}
