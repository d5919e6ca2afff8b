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
//!   turn (`let_go`, which calls the object's own `*_destroyed` in
//!   its module beside its syscalls): its waiters wake with `ObjectDeleted`, the threads
//!   it alone kept going end (a TCB's own, a VSpace's, a Filter's), the
//!   threads that used it lose it (a CNode as CSpace, a Frame as IPC
//!   buffer or audit ring, a notification bound or as audit signal). What
//!   names it without keeping it (a fault endpoint, a tracer, a policy
//!   server) holds an `ObjectRef`, which resolves to nothing from now on.
//! * **Reaping.** The records are freed when the kernel entry ends
//!   (`reap`, from `resume`, and wherever RAM goes back to the pool), so
//!   no id the kernel still holds within the entry names freed memory.

use crate::cap::{CNodeId, CapError, Capability, FreedPages, ObjectId, Objects};
use crate::frames::FrameAllocator;
use crate::kernel::Kernel;
use crate::platform::Platform;
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::boards::PhysRange;
use arch::layout::PAGE_SIZE;

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
            CapType::IrqHandler => self.irq_handler_destroyed(platform, object),
            CapType::CNode => self.cnode_destroyed(object),
            CapType::Filter => self.filter_destroyed(object),
            CapType::Untyped => self.untyped_destroyed(platform, object),
            CapType::Reply => self.reply_destroyed(object),
            CapType::Tcb => self.tcb_destroyed(platform, object),
            CapType::VSpace => self.vspace_destroyed(platform, object),
            CapType::Frame => self.frame_destroyed(platform, object),
            CapType::DebugConsole | CapType::IrqControl | CapType::Inspector | CapType::Null => {}
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
