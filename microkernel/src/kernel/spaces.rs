//! The table of address spaces, and which threads run in each.
//!
//! An address space lives in `Kernel::spaces`, not in a thread; a thread
//! names its slot (`Thread::space`), so any number of threads may run in
//! one space (seL4's TCBs naming one VSpace). Each thread caches its
//! space's TTBR0 value and ASID generation, so switching to it reads the
//! thread alone (the IPC fast path's cost); `bind_space` and
//! `sync_space_caches` keep those copies right.
//!
//! Lifetime: a space lives while at least one thread is bound to it. A
//! kernel-made space lives as long as its owner (the thread the kernel
//! built it for): threads bound to it by `TcbSetSpace` end first when the
//! owner ends, and the owner's end destroys it and its VSpace object; a
//! user-made one (`Retype`, bound by
//! `TcbSetSpace`) has one or more, and when the last of them ends the
//! space is taken down (mappings forgotten, TLB flushed) and its VSpace is
//! unbound again, empty and reusable. Destroying a user-made VSpace ends
//! every thread bound to it. So there are never more live spaces than
//! threads, and the table has one slot per thread.

use super::{Kernel, KERNEL_VSPACE_SLOTS, VSPACE_DESTROYED_STATUS};
use crate::address_space::{AddressSpace, SpaceId, MAX_SPACES};
use crate::cap::ObjectId;
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};

impl Kernel {
    /// The space `thread` runs in.
    pub fn thread_space(&self, thread: ThreadId) -> Option<&AddressSpace> {
        let id = self.threads[thread.index()].space?;
        self.spaces[id.index()].as_ref()
    }

    /// Puts a new space in a free slot; if none is free (unreachable
    /// while each live space has a thread of its own) its frames go back
    /// to the pool and `None` says so.
    pub(super) fn install_space(&mut self, space: AddressSpace) -> Option<SpaceId> {
        match self.spaces.iter().position(Option::is_none) {
            Some(index) => {
                self.spaces[index] = Some(space);
                Some(SpaceId(index as u16))
            }
            None => {
                space.release(&mut self.frames);
                None
            }
        }
    }

    /// Binds `thread` to the space in slot `id` (its caches included).
    pub(super) fn bind_space(&mut self, thread: ThreadId, id: SpaceId) {
        let (ttbr0, generation) = self.spaces[id.index()]
            .as_ref()
            .map_or((0, 0), |space| (space.ttbr0(), space.asid().generation()));
        let thread = &mut self.threads[thread.index()];
        thread.space = Some(id);
        thread.ttbr0 = ttbr0;
        thread.asid_generation = generation;
    }

    /// Rewrites the TTBR0 and generation copies of every thread bound to
    /// the space in slot `id` (after its ASID changed).
    pub(super) fn sync_space_caches(&mut self, id: SpaceId) {
        let Some(space) = self.spaces[id.index()].as_ref() else {
            return;
        };
        let (ttbr0, generation) = (space.ttbr0(), space.asid().generation());
        for thread in self.threads.iter_mut().filter(|t| t.space == Some(id)) {
            thread.ttbr0 = ttbr0;
            thread.asid_generation = generation;
        }
    }

    /// The space a VSpace object stands for while threads are bound to it.
    pub(super) fn vspace_space(&self, vspace: ObjectId) -> Option<SpaceId> {
        self.threads
            .iter()
            .find(|t| t.vspace == Some(vspace))
            .and_then(|t| t.space)
    }

    /// Another thread than `except` bound to the space in slot `id`.
    fn other_space_user(&self, id: SpaceId, except: ThreadId) -> Option<ThreadId> {
        self.threads
            .iter()
            .enumerate()
            .find(|(index, t)| *index != except.index() && t.space == Some(id))
            .map(|(index, _)| ThreadId(index as u16))
    }

    /// Does `thread` own a kernel-made space: is its VSpace object the
    /// one the kernel made for it (whose original is the kernel's slot
    /// for that thread)?
    fn owns_kernel_space(&self, thread: ThreadId) -> bool {
        let Some(vspace) = self.threads[thread.index()].vspace else {
            return false;
        };
        self.kernel_slot(KERNEL_VSPACE_SLOTS + thread.index() as u64)
            .ok()
            .and_then(|slot| self.caps.slot_content(slot))
            .is_some_and(|cap| cap.object() == vspace)
    }

    /// `owner` is ending: if it owns a kernel-made space that other
    /// threads share (bound by `TcbSetSpace`), they end first, as threads
    /// bound to a destroyed VSpace do (`VSPACE_DESTROYED_STATUS`): the
    /// space and its VSpace object live exactly as long as their owner.
    /// Those guests are threads made from user space, never the boot
    /// suite's, and own no kernel-made space, so this goes one level deep.
    pub(super) fn end_space_guests<P: Platform>(&mut self, platform: &mut P, owner: ThreadId) {
        let Some(id) = self.threads[owner.index()].space else {
            return;
        };
        if !self.owns_kernel_space(owner) {
            return;
        }
        while let Some(guest) = self.other_space_user(id, owner) {
            self.end_thread(
                platform,
                guest,
                ThreadState::Exited(VSPACE_DESTROYED_STATUS),
            );
        }
    }

    /// `thread` (ending) leaves its space. The last thread to leave takes
    /// the space down: its frames go back to the pool, the frames mapped
    /// into it are no longer mapped (their capabilities live on), and the
    /// TLB is flushed so no stale translation reaches reused memory. A
    /// space others still run in stays as it is, mappings included; if
    /// `thread` ran last, one of them stands for the live ASID instead.
    pub(super) fn leave_space<P: Platform>(&mut self, platform: &mut P, thread: ThreadId) {
        let Some(id) = self.threads[thread.index()].space.take() else {
            return;
        };
        self.threads[thread.index()].ttbr0 = 0;
        self.threads[thread.index()].asid_generation = 0;
        if let Some(other) = self.other_space_user(id, thread) {
            if self.last_ran == Some(thread) {
                self.last_ran = Some(other);
            }
            return;
        }
        for mapping in self.frame_maps.iter_mut() {
            if mapping.is_some_and(|m| m.space == id) {
                *mapping = None;
            }
        }
        if let Some(space) = self.spaces[id.index()].take() {
            space.release(&mut self.frames);
            platform.flush_tlb_all();
        }
    }

    /// Every thread's space is a live slot and its caches match it; every
    /// live space has a thread; threads sharing a space share its VSpace
    /// object, and a VSpace stands for one space at most.
    pub(super) fn check_spaces(&self) -> Result<(), &'static str> {
        for thread in self.threads.iter() {
            let Some(id) = thread.space else {
                if thread.ttbr0 != 0 {
                    return Err("a thread without a space caches a TTBR0 value");
                }
                continue;
            };
            let space = self
                .spaces
                .get(id.index())
                .and_then(Option::as_ref)
                .ok_or("a thread names an address space that is gone")?;
            if thread.ttbr0 != space.ttbr0() || thread.asid_generation != space.asid().generation()
            {
                return Err("a thread's cached TTBR0 or ASID generation is not its space's");
            }
        }
        for index in 0..MAX_SPACES {
            if self.spaces[index].is_none() {
                continue;
            }
            let id = SpaceId(index as u16);
            let mut users = self.threads.iter().filter(|t| t.space == Some(id));
            let first = users.next().ok_or("a live address space has no thread")?;
            if users.any(|t| t.vspace != first.vspace) {
                return Err("threads sharing a space name different VSpace objects");
            }
            if let Some(vspace) = first.vspace {
                if self
                    .threads
                    .iter()
                    .any(|t| t.vspace == Some(vspace) && t.space != Some(id))
                {
                    return Err("a VSpace stands for more than one address space");
                }
            }
        }
        Ok(())
    }
}
