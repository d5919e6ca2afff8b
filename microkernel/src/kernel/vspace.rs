//! Frame and VSpace invocations: mapping pages into address spaces.
//!
//! A VSpace capability names one address space. Two kinds exist:
//!
//! - Kernel-made: the kernel makes the VSpace object when it builds a
//!   thread's space around a program (boot-suite threads, `TcbConfigure`
//!   with a program) and destroys it when the thread ends (ending first
//!   any thread `TcbSetSpace` bound to it since), so such a capability
//!   never outlives its space. Tables a mapping needs come from
//!   the kernel's frame pool, owned by the space (freed with it), at most
//!   `abi::vspace::MAX_TABLE_PAGES` of them; frames may be mapped only in
//!   the window `FRAME_MAP_START .. FRAME_MAP_END` (clear of the program,
//!   stack and IPC buffer the kernel put there).
//! - User-made (`Retype` of `CapType::VSpace`): `1 + size` pages of the
//!   Untyped, its root table first and every table a mapping needs from
//!   the rest, so all of its memory is charged to the Untyped and comes
//!   back with it. It is unbound until `TcbSetSpace` binds it to a
//!   thread, and any number of threads may be bound to it after that;
//!   `FrameMap` into an unbound one is `InvalidArgument`. Its window is the
//!   whole user half but page 0. When the last thread bound to it ends it
//!   is unbound again, empty and reusable; when it is destroyed while
//!   bound, every thread bound to it ends (`VSPACE_DESTROYED_STATUS`).
//!
//! A Frame is a page retyped from Untyped memory; it is mapped at most
//! once at a time (seL4's rule), and the kernel remembers where
//! (`frame_maps`), so that unmapping, deleting the frame's last capability
//! and revoking its Untyped all take the mapping down first.

use super::Kernel;
use crate::address_space::{user_permissions, AddressSpace, FrameMapError, SpaceId, MAX_SPACES};
use crate::cap::ObjectId;
use crate::platform::Platform;
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::vspace::{is_frame_map_address, MapRights};
use abi::ErrorCode;
use arch::layout::PAGE_SIZE;

/// Where one frame is mapped: the address space `space`, at `va`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameMapping {
    /// The address space that holds the mapping (whichever threads run
    /// in it).
    pub space: SpaceId,
    /// The page's user address.
    pub va: u64,
}

/// Takes `mapping` out of its address space's tables and out of the TLB
/// (`AddressSpace::unmap_page`).
pub(super) fn unmap<P: Platform>(
    platform: &mut P,
    spaces: &mut [Option<AddressSpace>; MAX_SPACES],
    mapping: FrameMapping,
) {
    if let Some(space) = spaces[mapping.space.index()].as_mut() {
        space.unmap_page(platform, mapping.va);
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
        let target = match self.vspace_space(vspace.object()) {
            Some(space) => space,
            // A user-made space has no tables until it is bound.
            None if self.is_user_vspace(vspace.object()) => return Err(ErrorCode::InvalidArgument),
            // Unreachable while kernel-made VSpace objects live exactly as
            // long as their spaces; a typed error rather than a panic.
            None => return Err(ErrorCode::InvalidCapability),
        };
        let user_made = self.spaces[target.index()]
            .as_ref()
            .is_some_and(|space| space.object_pages().is_some());
        if !user_made && !is_frame_map_address(va) {
            // A kernel-made space keeps its program, stack and IPC buffer
            // out of reach.
            return Err(ErrorCode::InvalidAddress);
        }
        let index = frame.object().index();
        if self.frame_maps[index].is_some() {
            return Err(ErrorCode::AlreadyMapped);
        }
        let phys = self
            .caps
            .object(frame.object())
            .map(|header| header.phys)
            .ok_or(ErrorCode::InvalidCapability)?;
        let permissions = user_permissions(rights);
        let space = self.spaces[target.index()]
            .as_mut()
            .ok_or(ErrorCode::InvalidCapability)?;
        space
            .map_frame(platform, &mut self.frames, phys, va, permissions)
            .map_err(|e| match e {
                FrameMapError::AlreadyMapped => ErrorCode::AlreadyMapped,
                FrameMapError::OutOfTables => ErrorCode::OutOfResources,
                FrameMapError::Refused => ErrorCode::InvalidAddress,
            })?;
        self.frame_maps[index] = Some(FrameMapping { space: target, va });
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
            unmap(platform, &mut self.spaces, mapping);
        }
        Ok(())
    }

    /// Was this VSpace object made by `Retype` (from an Untyped)?
    pub(super) fn is_user_vspace(&self, vspace: ObjectId) -> bool {
        self.caps
            .object(vspace)
            .is_some_and(|h| h.cap_type == CapType::VSpace && h.parent_untyped.is_some())
    }

    /// Every recorded mapping is a live Frame's, in a live space; every
    /// thread's VSpace, IPC buffer Frame and fault endpoint are live
    /// objects of their type, each VSpace standing for one space at most
    /// (`check_spaces`), and a user-made space is built in its own
    /// object's pages.
    pub(super) fn check_frame_mappings(&self) -> Result<(), &'static str> {
        for (index, thread) in self.threads.iter().enumerate() {
            let live = |id: ObjectId, cap_type: CapType| {
                self.caps
                    .object(id)
                    .filter(|h| h.live() && h.cap_type == cap_type)
                    .copied()
            };
            if let Some(vspace) = thread.vspace {
                let header =
                    live(vspace, CapType::VSpace).ok_or("a thread's VSpace is no live VSpace")?;
                let space = self
                    .thread_space(ThreadId(index as u16))
                    .ok_or("a thread has a VSpace but no address space")?;
                let expected = header
                    .parent_untyped
                    .map(|_| (header.phys, header.size_bytes / PAGE_SIZE));
                if space.object_pages() != expected || space.root() != header.phys {
                    return Err("an address space is not built in its VSpace object");
                }
            } else if self
                .thread_space(ThreadId(index as u16))
                .is_some_and(|s| s.object_pages().is_some())
            {
                return Err("a space built in a VSpace object outlived the object");
            }
            if let Some(frame) = thread.ipc_buffer_frame {
                let header =
                    live(frame, CapType::Frame).ok_or("a thread's IPC buffer is no live Frame")?;
                if thread.ipc_buffer != Some(header.phys) {
                    return Err("a thread's IPC buffer is not its Frame's page");
                }
            }
            if let Some((endpoint, _)) = thread.fault_endpoint {
                live(ObjectId(endpoint), CapType::Endpoint)
                    .ok_or("a thread's fault endpoint is no live Endpoint")?;
            }
        }
        for (index, mapping) in self.frame_maps.iter().enumerate() {
            let Some(mapping) = mapping else {
                continue;
            };
            self.caps
                .object(crate::cap::ObjectId(index as u32))
                .filter(|h| h.live() && h.cap_type == CapType::Frame)
                .ok_or("a mapping is recorded for something that is no live Frame")?;
            self.spaces
                .get(mapping.space.index())
                .and_then(Option::as_ref)
                .ok_or("a frame is recorded as mapped into a space that is gone")?;
        }
        Ok(())
    }
}
