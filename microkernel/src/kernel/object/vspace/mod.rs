//! Frame and VSpace invocations: mapping pages into address spaces.
//!
//! A VSpace capability names one address space. Two kinds exist:
//!
//! - Kernel-made: the kernel makes the VSpace object when it builds a
//!   thread's space around a program (the root task's) and destroys it when the thread ends (ending first
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
//! once at a time (seL4's rule), and the kernel remembers where (in the
//! Frame's record: `FrameMapping`, its VSpace named by `ObjectRef`), so that unmapping, deleting the frame's last capability
//! and revoking its Untyped all take the mapping down first.

pub(in crate::kernel) mod spaces;

use crate::address_space::{user_device_permissions, user_permissions, FrameMapError};
use crate::cap::{FrameMapping, ObjectId};
use crate::kernel::members::{self, Use};
use crate::kernel::Kernel;
use crate::kernel::VSPACE_DESTROYED_STATUS;
use crate::platform::Platform;
use crate::thread::ThreadId;
use crate::thread::ThreadState;
use abi::cap::{CapType, Rights};
use abi::vspace::{is_frame_map_address, MapRights};
use abi::ErrorCode;
use arch::layout::PAGE_SIZE;
use arch::object_memory::kind;

impl Kernel {
    /// The VSpace `mapping` is in, if it is still in place: that VSpace
    /// lives (not one made since in its memory), with the same space it
    /// was made in (not taken down since).
    fn mapped_space(&self, mapping: FrameMapping) -> Option<ObjectId> {
        let vspace = self.objects.resolve(mapping.space, CapType::VSpace)?;
        self.objects
            .get::<kind::VSpace>(vspace)
            .filter(|v| v.generation == mapping.generation && v.space.is_some())
            .map(|_| vspace)
    }

    /// Is `mapping` still in place (see `mapped_space`)?
    pub(in crate::kernel) fn mapping_is_live(&self, mapping: FrameMapping) -> bool {
        self.mapped_space(mapping).is_some()
    }

    /// Takes `mapping` out of its address space's tables and out of the
    /// TLB (`AddressSpace::unmap_page`), if it is still in place.
    pub(in crate::kernel) fn unmap<P: Platform>(
        &mut self,
        platform: &mut P,
        mapping: FrameMapping,
    ) {
        let Some(vspace) = self.mapped_space(mapping) else {
            return;
        };
        if let Some(space) = self
            .objects
            .get_mut::<kind::VSpace>(vspace)
            .and_then(|v| v.space.as_mut())
        {
            space.unmap_page(platform, mapping.va);
        }
    }

    /// `FrameMap`: the frame at `frame_cptr` (read; write too for RW) into
    /// the space of the VSpace at `vspace_cptr` (write) at `va`. Kept out
    /// of line, like every rarer syscall, so that `dispatch` stays small
    /// on the IPC slow path.
    #[inline(never)]
    pub(in crate::kernel) fn frame_map_syscall<P: Platform>(
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
        let (user_made, generation) = self
            .objects
            .get::<kind::VSpace>(target)
            .and_then(|v| Some((v.space.as_ref()?.object_pages().is_some(), v.generation)))
            .ok_or(ErrorCode::InvalidCapability)?;
        let reference = self
            .objects
            .reference(target)
            .ok_or(ErrorCode::InvalidCapability)?;
        if !user_made && !is_frame_map_address(va) {
            // A kernel-made space keeps its program, stack and IPC buffer
            // out of reach.
            return Err(ErrorCode::InvalidAddress);
        }
        let body = *self
            .objects
            .get::<kind::Frame>(frame.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        // Device memory: Device-nGnRE, never executable.
        let permissions = if body.is_device() {
            user_device_permissions(rights).ok_or(ErrorCode::InvalidArgument)?
        } else {
            user_permissions(rights)
        };
        if body.mapping.is_some_and(|m| self.mapping_is_live(m)) {
            return Err(ErrorCode::AlreadyMapped);
        }
        let space = self
            .objects
            .get_mut::<kind::VSpace>(target)
            .and_then(|v| v.space.as_mut())
            .ok_or(ErrorCode::InvalidCapability)?;
        space
            .map_frame(platform, &mut self.frames, body.phys, va, permissions)
            .map_err(|e| match e {
                FrameMapError::AlreadyMapped => ErrorCode::AlreadyMapped,
                FrameMapError::OutOfTables => ErrorCode::OutOfResources,
                FrameMapError::Refused => ErrorCode::InvalidAddress,
            })?;
        if let Some(f) = self.objects.get_mut::<kind::Frame>(frame.object()) {
            f.mapping = Some(FrameMapping {
                space: reference,
                generation,
                va,
            });
        }
        Ok(())
    }

    /// `FrameUnmap`: the frame at `frame_cptr` (any rights) leaves the
    /// space it is mapped in; `Ok` if it was not mapped.
    #[inline(never)]
    pub(in crate::kernel) fn frame_unmap_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        frame_cptr: u64,
    ) -> Result<(), ErrorCode> {
        let frame = self.thread_cap(current, frame_cptr, CapType::Frame, Rights::NONE)?;
        let mapping = self
            .objects
            .get_mut::<kind::Frame>(frame.object())
            .and_then(|f| f.mapping.take());
        if let Some(mapping) = mapping {
            self.unmap(platform, mapping);
        }
        Ok(())
    }

    /// Was this VSpace object made by `Retype` (from an Untyped)?
    pub(in crate::kernel) fn is_user_vspace(&self, vspace: ObjectId) -> bool {
        self.objects
            .object(vspace)
            .is_some_and(|h| h.cap_type == CapType::VSpace && h.parent().is_some())
    }

    /// Every live mapping is a live Frame's, in a live space; every
    /// thread's IPC buffer Frame and fault endpoint are live objects of
    /// their type, and a user-made space is built in its own object's
    /// pages.
    pub(in crate::kernel) fn check_frame_mappings(&self) -> Result<(), &'static str> {
        for id in self.all_threads() {
            let thread = &self.objects[id];
            if let Some(vspace) = thread.space {
                let header = self
                    .objects
                    .object(vspace)
                    .filter(|h| h.live() && h.cap_type == CapType::VSpace)
                    .ok_or("a thread's VSpace is no live VSpace")?;
                let body = self
                    .objects
                    .get::<kind::VSpace>(vspace)
                    .ok_or("a thread's VSpace is no live VSpace")?;
                let space = body
                    .space
                    .as_ref()
                    .ok_or("a thread has a VSpace but no address space")?;
                let expected = header.parent().map(|_| (body.phys, body.pages));
                if space.object_pages() != expected || space.root() != body.phys {
                    return Err("an address space is not built in its VSpace object");
                }
            }
            if let Some(frame) = thread.ipc_buffer_frame {
                let body = self
                    .objects
                    .get::<kind::Frame>(frame)
                    .filter(|_| self.objects.object(frame).is_some_and(|h| h.live()))
                    .ok_or("a thread's IPC buffer is no live Frame")?;
                if thread.ipc_buffer != Some(body.phys) {
                    return Err("a thread's IPC buffer is not its Frame's page");
                }
            }
        }
        for id in self.objects.iter() {
            let Some(frame) = self.objects.get::<kind::Frame>(id) else {
                continue;
            };
            if let Some(mapping) = frame.mapping {
                if self.mapping_is_live(mapping)
                    && self.objects.get::<kind::VSpace>(mapping.space.id).is_none()
                {
                    return Err("a frame is recorded as mapped into a space that is gone");
                }
            }
            if frame.phys % PAGE_SIZE != 0 {
                return Err("a Frame's page is not page aligned");
            }
        }
        Ok(())
    }
}

impl Kernel {
    /// A VSpace is destroyed: a space built in the object's pages cannot outlive them: its
    /// threads end (the last one takes the space down). A
    /// kernel-made one goes only as its owner ends, after its
    /// guests.
    pub(in crate::kernel) fn vspace_destroyed<P: Platform>(
        &mut self,
        platform: &mut P,
        object: ObjectId,
    ) {
        while let Some(user) = members::first(&self.objects, object, Use::Space) {
            self.end_thread(platform, user, ThreadState::Exited(VSPACE_DESTROYED_STATUS));
            // An ended thread kept for its supervisor (ended now or
            // before) stays, without a space.
            self.leave_space(platform, user);
        }
    }
}

impl Kernel {
    /// A Frame is destroyed: it is unmapped before its memory can be handed out again (records
    /// are freed, and the Untyped's memory with them, only once the
    /// kernel entry is over).
    pub(in crate::kernel) fn frame_destroyed<P: Platform>(
        &mut self,
        platform: &mut P,
        object: ObjectId,
    ) {
        let mapping = self
            .objects
            .get_mut::<kind::Frame>(object)
            .and_then(|f| f.mapping.take());
        if let Some(mapping) = mapping {
            self.unmap(platform, mapping);
        }
        // A thread whose IPC buffer it was has none from now on.
        while let Some(user) = members::first(&self.objects, object, Use::Buffer) {
            members::leave(&mut self.objects, object, user, Use::Buffer);
            let thread = &mut self.objects[user];
            thread.ipc_buffer_frame = None;
            thread.ipc_buffer = None;
        }
        // A thread whose audit ring it was is audited no more.
        self.audit_sink_destroyed(platform, object, Use::AuditRing);
    }
}
