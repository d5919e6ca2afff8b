//! Frame and VSpace invocations: mapping pages into address spaces.
//!
//! A VSpace capability names one thread's address space (the kernel makes
//! the VSpace object when it starts the thread and destroys it when the
//! thread ends, so a VSpace capability never outlives its space). A Frame
//! is a page retyped from Untyped memory; it is mapped at most once at a
//! time (seL4's rule), and the kernel remembers where (`frame_maps`), so
//! that unmapping, deleting the frame's last capability and revoking its
//! Untyped all take the mapping down first.
//!
//! Page tables: the tables a mapping needs come from the kernel's frame
//! pool, owned by the address space (freed with it) and limited to
//! `abi::vspace::MAX_TABLE_PAGES` per space, not from an Untyped the
//! caller names. That is a documented simplification: the memory is
//! bounded per space, but not charged to the caller's Untyped.

use super::Kernel;
use crate::address_space::FrameMapError;
use crate::platform::Platform;
use crate::thread::{Thread, ThreadId, MAX_THREADS};
use abi::cap::{CapType, Rights};
use abi::vspace::MapRights;
use abi::ErrorCode;
use arch::mmu::Permissions;

/// Where one frame is mapped: the address space of `thread`, at `va`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameMapping {
    /// The thread whose address space holds the mapping.
    pub thread: ThreadId,
    /// The page's user address.
    pub va: u64,
}

/// Takes `mapping` out of its address space's tables and out of the TLB
/// (by that space's ASID and the address; a stale-generation ASID still
/// names the only entries that can exist for this space).
pub(super) fn unmap<P: Platform>(
    platform: &mut P,
    threads: &mut [Thread; MAX_THREADS],
    mapping: FrameMapping,
) {
    if let Some(space) = threads[mapping.thread.index()].space.as_mut() {
        if space.unmap_page(platform, mapping.va) {
            platform.flush_tlb_page(space.asid().asid().as_u16(), mapping.va);
        }
    }
}

impl Kernel {
    /// `FrameMap`: the frame at `frame_cptr` (read; write too for RW) into
    /// the space of the VSpace at `vspace_cptr` (write) at `va`. Kept out
    /// of line, like every rarer syscall, so that `dispatch` stays small
    /// on the IPC slow path.
    #[inline(never)]
    pub(super) fn frame_map_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        frame_cptr: u64,
        vspace_cptr: u64,
        va: u64,
        rights: MapRights,
    ) -> Result<(), ErrorCode> {
        let needed = if rights.writable() {
            Rights::READ_WRITE
        } else {
            Rights::READ
        };
        let frame = self.thread_cap(current, frame_cptr, CapType::Frame, needed)?;
        let vspace = self.thread_cap(current, vspace_cptr, CapType::VSpace, Rights::WRITE)?;
        let target = self
            .threads
            .iter()
            .position(|t| t.vspace == Some(vspace.object()))
            .map(|index| ThreadId(index as u16))
            // Unreachable while VSpace objects live exactly as long as
            // their spaces; a typed error rather than a panic all the same.
            .ok_or(ErrorCode::InvalidCapability)?;
        let index = frame.object().index();
        if self.frame_maps[index].is_some() {
            return Err(ErrorCode::AlreadyMapped);
        }
        let phys = self
            .caps
            .object(frame.object())
            .map(|header| header.phys)
            .ok_or(ErrorCode::InvalidCapability)?;
        let permissions = match rights {
            MapRights::Read => Permissions::USER_RO,
            MapRights::ReadWrite => Permissions::USER_RW,
            MapRights::ReadExecute => Permissions::USER_RX,
        };
        if rights == MapRights::ReadExecute {
            // Code written through another mapping must reach the
            // instruction side before it can be fetched.
            platform.sync_instruction_cache(phys);
        }
        let space = self.threads[target.index()]
            .space
            .as_mut()
            .ok_or(ErrorCode::InvalidCapability)?;
        space
            .map_frame(platform, &mut self.frames, phys, va, permissions)
            .map_err(|e| match e {
                FrameMapError::AlreadyMapped => ErrorCode::AlreadyMapped,
                FrameMapError::OutOfTables => ErrorCode::OutOfResources,
                FrameMapError::Refused => ErrorCode::InvalidAddress,
            })?;
        self.frame_maps[index] = Some(FrameMapping { thread: target, va });
        Ok(())
    }

    /// `FrameUnmap`: the frame at `frame_cptr` (any rights) leaves the
    /// space it is mapped in; `Ok` if it was not mapped.
    #[inline(never)]
    pub(super) fn frame_unmap_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        frame_cptr: u64,
    ) -> Result<(), ErrorCode> {
        let frame = self.thread_cap(current, frame_cptr, CapType::Frame, Rights::NONE)?;
        if let Some(mapping) = self.frame_maps[frame.object().index()].take() {
            unmap(platform, &mut self.threads, mapping);
        }
        Ok(())
    }

    /// Every recorded mapping is a live Frame's, in a live space.
    pub(super) fn check_frame_mappings(&self) -> Result<(), &'static str> {
        for (index, mapping) in self.frame_maps.iter().enumerate() {
            let Some(mapping) = mapping else {
                continue;
            };
            self.caps
                .object(crate::cap::ObjectId(index as u32))
                .filter(|h| h.live() && h.cap_type == CapType::Frame)
                .ok_or("a mapping is recorded for something that is no live Frame")?;
            let thread = &self.threads[mapping.thread.index()];
            if thread.vspace.is_none() || thread.space.is_none() {
                return Err("a frame is recorded as mapped into a space that is gone");
            }
        }
        Ok(())
    }
}
