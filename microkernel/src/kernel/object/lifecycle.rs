//! The kernel's side of object lifetimes: the records of the objects it
//! makes itself, what it does when an object is destroyed, and freeing
//! records once a kernel entry is over.
//!
//! * **The kernel's own objects** (its CNode, the console, the root
//!   task's CNode, TCB, VSpace and IPC buffer Frame, IrqHandlers, the
//!   IrqControl) have their
//!   records on pages of the kernel's frame pool (`kernel_record`), which
//!   come back when the record is freed. Everything user space makes is
//!   paid for by its Untypeds instead.
//! * **Letting go.** When an object's last capability goes, the
//!   capability layer lists it as destroyed; after every operation that
//!   can destroy (`destroying`) the kernel lets go of each such object in
//!   turn (`let_go`): its waiters wake with `ObjectDeleted`, the threads
//!   it alone kept going end (a TCB's own, a VSpace's, a Filter's), the
//!   threads that used it lose it (a CNode as CSpace, a Frame as IPC
//!   buffer or audit ring, a notification bound or as audit signal). What
//!   names it without keeping it (a fault endpoint, a tracer, a policy
//!   server) holds an `ObjectRef`, which resolves to nothing from now on.
//! * **Reaping.** The records are freed when the kernel entry ends
//!   (`reap`, from `resume`, and wherever RAM goes back to the pool), so
//!   no id the kernel still holds within the entry names freed memory.

use crate::cap::{
    CNodeId, CapError, Capability, FreedPages, IrqHandlerBody, ObjectId, ObjectState, Objects,
    SlotId,
};
use crate::frames::FrameAllocator;
use crate::ipc;
use crate::kernel::members::{self, Use};
use crate::kernel::{
    Kernel, FILTER_DESTROYED_STATUS, TCB_DESTROYED_STATUS, VSPACE_DESTROYED_STATUS,
};
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::boards::{PhysRange, PHYSICAL_TIMER_INTID};
use arch::layout::PAGE_SIZE;
use arch::object_memory::kind;

impl Kernel {
    /// Room on the kernel's own pages for the record of an object of
    /// `cap_type` (CNode `radix`) the kernel makes: its physical address.
    fn kernel_record(&mut self, cap_type: CapType, radix: u8) -> Result<u64, CapError> {
        let bytes = Objects::record_bytes(cap_type, radix).ok_or(CapError::InvalidArgument)?;
        let pages = bytes.div_ceil(PAGE_SIZE);
        let phys = if pages == 1 {
            self.frames.allocate()
        } else {
            self.frames.allocate_contiguous(pages)
        };
        phys.ok_or(CapError::OutOfResources)
    }

    /// Makes an object for the kernel, its record on the kernel's pages
    /// (see `Objects::create_object` for `phys` and `size_bytes`).
    pub(in crate::kernel) fn kernel_object(
        &mut self,
        cap_type: CapType,
        phys: u64,
        size_bytes: u64,
    ) -> Result<ObjectId, CapError> {
        let at = self.kernel_record(cap_type, 0)?;
        self.objects
            .create_object(cap_type, phys, size_bytes, at)
            .inspect_err(|_| self.frames.free(at))
    }

    /// Makes a CNode of `2^radix` slots for the kernel, its record on the
    /// kernel's pages.
    pub(in crate::kernel) fn kernel_cnode(&mut self, radix: u8) -> Result<CNodeId, CapError> {
        let at = self.kernel_record(CapType::CNode, radix)?;
        self.objects.create_cnode(radix, at).inspect_err(|_| {
            let pages = Objects::record_bytes(CapType::CNode, radix)
                .unwrap_or(PAGE_SIZE)
                .div_ceil(PAGE_SIZE);
            give_back_record(&mut self.frames, FreedPages { phys: at, pages });
        })
    }

    /// Makes a kernel object and installs its original capability, with
    /// every right, in slot `index` of the kernel CNode.
    pub(in crate::kernel) fn create_original(
        &mut self,
        cap_type: CapType,
        phys: u64,
        size_bytes: u64,
        index: u64,
    ) -> Result<ObjectId, CapError> {
        self.install_kernel_original(index, cap_type, |kernel| {
            kernel.kernel_object(cap_type, phys, size_bytes)
        })
    }

    /// Makes an Untyped over a block of free RAM (its record in the
    /// block's last granules) and installs its original capability in
    /// slot `index` of the kernel CNode.
    pub(in crate::kernel) fn untyped_original(
        &mut self,
        phys: u64,
        size_bytes: u64,
        index: u64,
    ) -> Result<ObjectId, CapError> {
        self.install_kernel_original(index, CapType::Untyped, |kernel| {
            kernel.objects.create_untyped_in_place(phys, size_bytes)
        })
    }

    /// Makes a device Untyped over `size_bytes` of MMIO at `phys` (its
    /// record on a page of the kernel's pool) and installs its original
    /// capability in slot `index` of the kernel CNode.
    pub(in crate::kernel) fn device_untyped_original(
        &mut self,
        phys: u64,
        size_bytes: u64,
        index: u64,
    ) -> Result<ObjectId, CapError> {
        self.install_kernel_original(index, CapType::Untyped, |kernel| {
            let at = kernel.kernel_record(CapType::Untyped, 0)?;
            kernel
                .objects
                .create_device_untyped(phys, size_bytes, at)
                .inspect_err(|_| kernel.frames.free(at))
        })
    }

    /// Makes an object of `cap_type` with `make` once slot `index` of the
    /// kernel CNode is known to be empty, and installs its original
    /// capability (every right) there.
    fn install_kernel_original(
        &mut self,
        index: u64,
        cap_type: CapType,
        make: impl FnOnce(&mut Self) -> Result<ObjectId, CapError>,
    ) -> Result<ObjectId, CapError> {
        let slot = self.kernel_slot(index)?;
        self.objects.check_empty(slot)?;
        let object = make(self)?;
        self.objects
            .install_original(slot, Capability::new(cap_type, Rights::ALL, object))?;
        Ok(object)
    }

    /// Deletes the original capability in kernel CNode slot `index` (and
    /// every capability derived from it), letting go of what that
    /// destroys.
    pub(in crate::kernel) fn delete_kernel_slot<P: Platform>(
        &mut self,
        platform: &mut P,
        index: u64,
    ) {
        if let Ok(slot) = self.kernel_slot(index) {
            if self.objects.lookup(slot).is_ok() {
                let _ = self.destroying(platform, |objects| objects.delete(slot));
            }
        }
    }

    /// Runs a capability operation that may destroy objects, then lets go
    /// of every object it destroyed.
    pub(in crate::kernel) fn destroying<P: Platform>(
        &mut self,
        platform: &mut P,
        operation: impl FnOnce(&mut Objects) -> Result<(), CapError>,
    ) -> Result<(), ErrorCode> {
        let result = operation(&mut self.objects);
        self.let_go_of_destroyed(platform);
        result.map_err(ErrorCode::from)
    }

    /// Lets go of every destroyed object, oldest first (letting go of one
    /// may destroy more: a thread that ends takes its kernel-made objects
    /// with it).
    pub(in crate::kernel) fn let_go_of_destroyed<P: Platform>(&mut self, platform: &mut P) {
        while let Some((object, cap_type)) = self.objects.take_destroyed() {
            self.let_go(platform, object, cap_type);
        }
    }

    /// What destroying `object` (of `cap_type`) means for the rest of the
    /// kernel; its body is still there to read.
    fn let_go<P: Platform>(&mut self, platform: &mut P, object: ObjectId, cap_type: CapType) {
        match cap_type {
            CapType::Endpoint => self.endpoint_destroyed(object),
            CapType::Notification => self.notification_destroyed(platform, object),
            CapType::IrqHandler => {
                let body = self
                    .objects
                    .get_mut::<kind::IrqHandler>(object)
                    .map(|b| core::mem::replace(b, IrqHandlerBody::NONE));
                if let Some(position) = self.irq_handlers.iter().position(|&h| h == object) {
                    self.irq_handlers.swap_remove(position);
                }
                if let Some(intid) = body.and_then(|b| b.intid) {
                    platform.set_interrupt_enabled(intid, false);
                    // Nobody may program the timer any more: stop it.
                    if intid == PHYSICAL_TIMER_INTID {
                        platform.set_physical_timer(None);
                    }
                }
            }
            CapType::CNode => {
                while let Some(user) = members::first(&self.objects, object, Use::CSpace) {
                    members::leave(&mut self.objects, object, user, Use::CSpace);
                    let thread = &mut self.objects[user];
                    thread.cspace = None;
                    thread.cspace_slots = crate::thread::NO_CSPACE_SLOTS;
                }
            }
            // A deleted capability never lifts a restriction: a filter
            // still attached stays (pinned, its rules in force) until the
            // last thread it confines has ended.
            CapType::Filter => {
                let attached = self
                    .objects
                    .get::<kind::Filter>(object)
                    .is_some_and(|f| f.attached.is_some());
                if attached {
                    self.objects.pin(object);
                }
            }
            // The memory of the filters it holds that are pinned is being
            // taken back: the threads they confine end (fail closed).
            CapType::Untyped => {
                let pinned = self
                    .objects
                    .get::<kind::Untyped>(object)
                    .map_or(0, |u| u.pinned);
                if pinned > 0 {
                    self.end_pinned_children(platform, object);
                }
            }
            // The saved reply is gone: its caller learns no answer comes,
            // as when a server ends owing it a reply.
            CapType::Reply => {
                let caller = self
                    .objects
                    .get_mut::<kind::Reply>(object)
                    .and_then(|r| r.caller.take());
                if let Some(caller) = caller {
                    self.objects[caller].saved_reply = None;
                    ipc::fail_waiter(&mut self.objects, caller, ErrorCode::ObjectDeleted);
                    self.make_ready(caller);
                }
            }
            // A thread made from user space ends with its TCB (a thread
            // the kernel made ends first and takes its TCB with it).
            // An ended one kept for its supervisor is released now (its
            // end message, if no one took it, withdrawn).
            CapType::Tcb => {
                let thread = ThreadId::of(object);
                let state = self.objects[thread].state;
                if !self.objects[thread].created_by_user || state == ThreadState::Free {
                } else if state.is_kept_end() {
                    self.release_ended(platform, thread);
                } else if !state.has_ended() {
                    self.end_thread(platform, thread, ThreadState::Exited(TCB_DESTROYED_STATUS));
                }
            }
            // A space built in the object's pages cannot outlive them: its
            // threads end (the last one takes the space down). A
            // kernel-made one goes only as its owner ends, after its
            // guests.
            CapType::VSpace => {
                while let Some(user) = members::first(&self.objects, object, Use::Space) {
                    self.end_thread(platform, user, ThreadState::Exited(VSPACE_DESTROYED_STATUS));
                    // An ended thread kept for its supervisor (ended now or
                    // before) stays, without a space.
                    self.leave_space(platform, user);
                }
            }
            // Unmapped before its memory can be handed out again (records
            // are freed, and the Untyped's memory with them, only once the
            // kernel entry is over).
            CapType::Frame => {
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
                self.stop_audit_waiters(|sink| sink.frame.id == object);
            }
            // What it issued are children of its capabilities, gone
            // with them.
            CapType::DebugConsole | CapType::IrqControl | CapType::Null => {}
        }
    }

    /// After a revoke of the capability in `slot`: if it is an Untyped's
    /// with the right to retype from it (write), and all that is left
    /// carved from it are filters pinned by the threads they confine (and
    /// records this kernel entry destroyed, freed when it ends), those
    /// threads end (fail closed) so that the memory comes back, as
    /// revoking an Untyped promises. (With other objects still carved from
    /// it, through another of its capabilities, its memory is not all back
    /// anyway, and the filters stay.)
    pub(in crate::kernel) fn reclaim_pinned<P: Platform>(
        &mut self,
        platform: &mut P,
        slot: SlotId,
    ) {
        let Some(untyped) = self
            .objects
            .lookup(slot)
            .ok()
            .filter(|cap| {
                cap.cap_type() == CapType::Untyped && Rights::WRITE.is_subset_of(cap.rights())
            })
            .map(|cap| cap.object())
        else {
            return;
        };
        let has_pinned = self
            .objects
            .get::<kind::Untyped>(untyped)
            .is_some_and(|u| u.pinned > 0);
        // One walk, and only when there are pinned children (rare).
        let only_pinned = has_pinned
            && self.objects.iter().all(|id| {
                self.objects.object(id).is_none_or(|h| {
                    h.parent() != Some(untyped)
                        || matches!(h.state, ObjectState::Pinned | ObjectState::Retired)
                })
            });
        if only_pinned {
            self.end_pinned_children(platform, untyped);
            self.let_go_of_destroyed(platform);
        }
    }

    /// Ends the threads confined by the pinned filters carved from
    /// `untyped` (each end detaches the filter; the last one retires it).
    fn end_pinned_children<P: Platform>(&mut self, platform: &mut P, untyped: ObjectId) {
        // One walk of every object per pinned filter, not per thread: all
        // of a filter's threads end before the next one is looked for.
        loop {
            let next = self.objects.pinned_children(untyped).next();
            let Some(filter) = next else {
                break;
            };
            while let Some(user) = self
                .objects
                .get::<kind::Filter>(filter)
                .and_then(|f| f.attached)
            {
                self.end_thread(
                    platform,
                    user.thread,
                    ThreadState::Exited(FILTER_DESTROYED_STATUS),
                );
                // Kept ended (now or before): the filter goes all the same.
                self.ended_loses_filters(user.thread);
            }
            // The last end retired it; one with no thread left is retired
            // here.
            if self
                .objects
                .object(filter)
                .is_some_and(|h| h.state == ObjectState::Pinned)
            {
                self.objects.retire_pinned(filter);
            }
        }
    }

    /// Frees the records of every object destroyed before now (see the
    /// module's docs); a record on the kernel's pages gives them back.
    pub(in crate::kernel) fn reap(&mut self) {
        if !self.objects.has_retired() {
            return;
        }
        let frames = &mut self.frames;
        self.objects.reap(|freed| give_back_record(frames, freed));
    }
}

/// Gives the pages of a freed kernel record back to the pool.
fn give_back_record(frames: &mut FrameAllocator, freed: FreedPages) {
    if freed.pages == 1 {
        frames.free(freed.phys);
    } else {
        frames.give_back(PhysRange {
            start: freed.phys,
            size: freed.pages * PAGE_SIZE,
        });
    }
}
