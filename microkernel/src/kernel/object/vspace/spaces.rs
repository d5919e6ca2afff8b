//! Address spaces, and which threads run in each.
//!
//! An address space lives in its VSpace object's record
//! (`VSpaceBody::space`), not in a thread; a thread names the VSpace
//! (`Thread::space`), so any number of threads may run in one space
//! (seL4's TCBs naming one VSpace), and the VSpace lists them
//! (`members::Use::Space`). Each thread caches its space's TTBR0 value and
//! ASID generation, so switching to it reads the thread alone (the IPC
//! fast path's cost); `bind_space` and `sync_space_caches` keep those
//! copies right.
//!
//! Lifetime: a space lives while at least one thread is bound to it. A
//! kernel-made space lives as long as its owner (the thread the kernel
//! built it for): threads bound to it by `TcbSetSpace` end first when the
//! owner ends, and the owner's end destroys it and its VSpace object; a
//! user-made one (`Retype`, bound by `TcbSetSpace`) has one or more, and
//! when the last of them ends the space is taken down (mappings
//! forgotten, TLB flushed) and its VSpace is unbound again, empty and
//! reusable. Destroying a user-made VSpace ends every thread bound to it.

use crate::address_space::AddressSpace;
use crate::cap::ObjectId;
use crate::kernel::members::{self, Use};
use crate::kernel::{Kernel, KERNEL_ROOT_VSPACE_SLOT, VSPACE_DESTROYED_STATUS};
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use arch::object_memory::kind;

impl Kernel {
    /// The space `thread` runs in.
    pub fn thread_space(&self, thread: ThreadId) -> Option<&AddressSpace> {
        let id = self.objects.thread(thread)?.space?;
        self.objects.get::<kind::VSpace>(id)?.space.as_ref()
    }

    /// Makes `space` the address space of VSpace `vspace` (which has
    /// none). If `vspace` is no VSpace (unreachable: the callers just made
    /// or checked it), its frames go back to the pool and `false` says so.
    pub(in crate::kernel) fn install_space<M: crate::platform::PhysMemory>(
        &mut self,
        platform: &M,
        vspace: ObjectId,
        space: AddressSpace,
    ) -> bool {
        match self.objects.get_mut::<kind::VSpace>(vspace) {
            Some(body) if body.space.is_none() => {
                body.space = Some(space);
                true
            }
            _ => {
                space.release(platform, &mut self.frames);
                false
            }
        }
    }

    /// Binds `thread` to the space of VSpace `vspace` (its caches
    /// included).
    pub(in crate::kernel) fn bind_space(&mut self, thread: ThreadId, vspace: ObjectId) {
        let (ttbr0, generation) = self
            .objects
            .get::<kind::VSpace>(vspace)
            .and_then(|v| v.space.as_ref())
            .map_or((0, 0), |space| (space.ttbr0(), space.asid().generation()));
        let t = &mut self.objects[thread];
        t.space = Some(vspace);
        t.ttbr0 = ttbr0;
        t.asid_generation = generation;
        members::join(&mut self.objects, vspace, thread, Use::Space);
    }

    /// Rewrites the TTBR0 and generation copies of every thread bound to
    /// VSpace `vspace` (after its ASID changed).
    pub(in crate::kernel) fn sync_space_caches(&mut self, vspace: ObjectId) {
        let Some(space) = self
            .objects
            .get::<kind::VSpace>(vspace)
            .and_then(|v| v.space.as_ref())
        else {
            return;
        };
        let (ttbr0, generation) = (space.ttbr0(), space.asid().generation());
        let mut next = members::first(&self.objects, vspace, Use::Space);
        while let Some(thread) = next {
            let t = &mut self.objects[thread];
            t.ttbr0 = ttbr0;
            t.asid_generation = generation;
            next = members::next(&self.objects, thread, Use::Space);
        }
    }

    /// The VSpace `vspace`, if threads are bound to it (so it has a space).
    pub(in crate::kernel) fn vspace_space(&self, vspace: ObjectId) -> Option<ObjectId> {
        self.objects
            .get::<kind::VSpace>(vspace)
            .filter(|v| v.space.is_some())
            .map(|_| vspace)
    }

    /// Another thread than `except` bound to VSpace `vspace`.
    fn other_space_user(&self, vspace: ObjectId, except: ThreadId) -> Option<ThreadId> {
        let mut next = members::first(&self.objects, vspace, Use::Space);
        while let Some(thread) = next {
            if thread != except {
                return Some(thread);
            }
            next = members::next(&self.objects, thread, Use::Space);
        }
        None
    }

    /// Does `thread` own a kernel-made space: is it the root task, bound
    /// to the VSpace the kernel made for it?
    fn owns_kernel_space(&self, thread: ThreadId) -> bool {
        let Some(vspace) = self.objects[thread].space else {
            return false;
        };
        if self.root != Some(thread) {
            return false;
        }
        self.kernel_slot(KERNEL_ROOT_VSPACE_SLOT)
            .ok()
            .and_then(|slot| self.objects.slot_content(slot))
            .is_some_and(|cap| !cap.is_null() && cap.object() == vspace)
    }

    /// `owner` is ending: if it owns a kernel-made space that other
    /// threads share (bound by `TcbSetSpace`), they end first, as threads
    /// bound to a destroyed VSpace do (`VSPACE_DESTROYED_STATUS`): the
    /// space and its VSpace object live exactly as long as their owner.
    /// Those guests are threads made from user space, never the root,
    /// and own no kernel-made space, so this goes one level deep.
    pub(in crate::kernel) fn end_space_guests<P: Platform>(
        &mut self,
        platform: &mut P,
        owner: ThreadId,
    ) {
        let Some(vspace) = self.objects[owner].space else {
            return;
        };
        if !self.owns_kernel_space(owner) {
            return;
        }
        while let Some(guest) = self.other_space_user(vspace, owner) {
            self.end_thread(
                platform,
                guest,
                ThreadState::Exited(VSPACE_DESTROYED_STATUS),
            );
            // Kept ended (now or before): it stays, without a space.
            self.leave_space(platform, guest);
        }
    }

    /// `thread` (ending) leaves its space. The last thread to leave takes
    /// the space down: its frames go back to the pool, the frames mapped
    /// into it are no longer mapped (their capabilities live on: the
    /// VSpace's new generation makes their mappings stale), and the TLB is
    /// flushed so no stale translation reaches reused memory. A space
    /// others still run in stays as it is, mappings included; if `thread`
    /// ran last, one of them stands for the live ASID instead.
    pub(in crate::kernel) fn leave_space<P: Platform>(
        &mut self,
        platform: &mut P,
        thread: ThreadId,
    ) {
        let Some(vspace) = self.objects[thread].space.take() else {
            return;
        };
        members::leave(&mut self.objects, vspace, thread, Use::Space);
        let t = &mut self.objects[thread];
        t.ttbr0 = 0;
        t.asid_generation = 0;
        if let Some(other) = self.other_space_user(vspace, thread) {
            self.hand_live_space(thread, other);
            return;
        }
        let space = self.objects.get_mut::<kind::VSpace>(vspace).and_then(|v| {
            v.generation += 1;
            v.space.take()
        });
        if let Some(space) = space {
            space.release(platform, &mut self.frames);
            platform.flush_tlb_all();
        }
    }

    /// Every thread's space is a live VSpace with a space, its caches
    /// match it and it is listed there; every VSpace with a space lists
    /// only its own threads, at least one.
    pub(in crate::kernel) fn check_spaces(&self) -> Result<(), &'static str> {
        for thread in self.all_threads() {
            let t = &self.objects[thread];
            let Some(vspace) = t.space else {
                if t.ttbr0 != 0 {
                    return Err("a thread without a space caches a TTBR0 value");
                }
                continue;
            };
            let space = self
                .objects
                .get::<kind::VSpace>(vspace)
                .and_then(|v| v.space.as_ref())
                .ok_or("a thread names an address space that is gone")?;
            if t.ttbr0 != space.ttbr0() || t.asid_generation != space.asid().generation() {
                return Err("a thread's cached TTBR0 or ASID generation is not its space's");
            }
            if !members::contains(&self.objects, vspace, thread, Use::Space) {
                return Err("a thread is not on its VSpace's list");
            }
        }
        for vspace in self.objects.iter() {
            let Some(body) = self.objects.get::<kind::VSpace>(vspace) else {
                continue;
            };
            let mut count = 0;
            let mut next = body.users;
            while let Some(user) = next {
                count += 1;
                let t = self
                    .objects
                    .thread(user)
                    .ok_or("a VSpace lists something that is no thread")?;
                if t.space != Some(vspace) {
                    return Err("a VSpace lists a thread of another space");
                }
                next = t.space_links.next();
                if count > self.objects.count() {
                    return Err("a VSpace's list of threads loops");
                }
            }
            if body.space.is_some() && count == 0 {
                return Err("a live address space has no thread");
            }
            if body.space.is_none() && count != 0 {
                return Err("threads are bound to a VSpace with no space");
            }
        }
        Ok(())
    }
}
