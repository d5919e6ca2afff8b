//! The root task's start: what the kernel hands the first thread of a
//! root-task case (`Case::root_task`), as `abi::bootinfo` lays it out.
//!
//! Like seL4's initial thread, the root gets capabilities to its own TCB,
//! CNode, VSpace and IPC buffer, the console, an IrqHandler, the
//! IrqControl (an IrqHandler for any interrupt the kernel does not keep),
//! and every
//! free page of RAM as Untyped memory, cut into naturally aligned
//! power-of-two blocks. From then on the kernel makes nothing for it:
//! every object the root and the tasks it starts use is retyped from
//! those Untypeds, and revoking them takes everything back. The kernel
//! keeps each original capability (the root gets copies), so at the end
//! of the case it can take the memory back whatever the root did with
//! its copies.

use super::{Kernel, KERNEL_IRQ_SLOT, KERNEL_ROOT_IPC_FRAME_SLOT, KERNEL_ROOT_UNTYPED_SLOTS};
use super::{KERNEL_ROOT_DEVICE_UNTYPED_SLOTS, KERNEL_ROOT_IRQ_CONTROL_SLOT};
use super::{KERNEL_TCB_SLOTS, KERNEL_VSPACE_SLOTS};
use crate::boot_suite::Case;
use crate::cap::CNodeId;
use crate::cap::FrameMapping;
use crate::platform::Platform;
use crate::thread::ThreadId;
use abi::bootinfo::MAX_BOOT_DEVICE_UNTYPEDS;
use abi::bootinfo::ROOT_IRQ_CONTROL_SLOT;
use abi::bootinfo::{BootInfo, BootUntyped, BOOT_INFO_WORDS, MAX_BOOT_UNTYPEDS};
use abi::bootinfo::{ROOT_IPC_BUFFER_SLOT, ROOT_IRQ_SLOT, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::{CapType, Rights};
use abi::IPC_BUFFER_ADDRESS;
use arch::boards::PhysRange;
use arch::layout::PAGE_SIZE;
use arch::object_memory::kind;

/// What a root task was given that the kernel must take back.
pub(super) struct RootGrant {
    /// The blocks of RAM behind its Untypeds (originals in the kernel
    /// CNode from `KERNEL_ROOT_UNTYPED_SLOTS` on, in this order).
    blocks: heapless::Vec<PhysRange, MAX_BOOT_UNTYPEDS>,
    /// The root whose IPC buffer has a Frame object (original in
    /// `KERNEL_ROOT_IPC_FRAME_SLOT`).
    ipc_frame_of: Option<ThreadId>,
    /// How many device Untypeds it was given (originals in the kernel
    /// CNode from `KERNEL_ROOT_DEVICE_UNTYPED_SLOTS` on).
    devices: usize,
}

impl RootGrant {
    pub(super) const NONE: RootGrant = RootGrant {
        blocks: heapless::Vec::new(),
        ipc_frame_of: None,
        devices: 0,
    };
}

impl Kernel {
    /// Gives the first thread of `case` what a root task gets, and writes
    /// its `BootInfo` into its IPC buffer. On failure the caller ends the
    /// case, and `release_root_grant` takes back whatever was handed over.
    pub(super) fn hand_over_to_root<P: Platform>(
        &mut self,
        platform: &mut P,
        case: &Case,
    ) -> Result<(), &'static str> {
        let root = *self
            .session
            .live
            .first()
            .ok_or("a root-task case needs a thread")?;
        let irq = case
            .irq
            .ok_or("a root-task case needs an interrupt to hand over")?;
        // It may make threads of any priority (and runs at the case's).
        self.objects[root].mcp = abi::tcb::MAX_PRIORITY as u8;
        let thread = &self.objects[root];
        let cnode = thread.cspace.ok_or("the root has no CSpace")?;
        let ipc_buffer = thread.ipc_buffer.ok_or("the root has no IPC buffer")?;
        let thread_space = thread.space;
        let block = u64::from(
            thread
                .kernel_slots
                .ok_or("the root is not a kernel-made thread")?,
        );
        for (original, slot) in [
            (KERNEL_TCB_SLOTS + block, ROOT_TCB_SLOT),
            (KERNEL_VSPACE_SLOTS + block, ROOT_VSPACE_SLOT),
        ] {
            self.mint_from_kernel(original, cnode, slot, Rights::ALL)?;
        }
        // The IrqControl: every IrqHandler the root makes with it is a
        // child of its copy, so deleting the original at the end of the
        // case takes them all back.
        self.create_original(CapType::IrqControl, 0, 0, KERNEL_ROOT_IRQ_CONTROL_SLOT)
            .map_err(|_| "cannot make the root's IrqControl")?;
        self.mint_from_kernel(
            KERNEL_ROOT_IRQ_CONTROL_SLOT,
            cnode,
            ROOT_IRQ_CONTROL_SLOT,
            Rights::ALL,
        )?;
        // The case's interrupt: the root's handler is issued by its
        // IrqControl (the kernel keeps no original), so deleting it frees
        // the interrupt for the root's next `IrqControlGet`.
        self.delete_kernel_slot(platform, KERNEL_IRQ_SLOT);
        // Its record's page back in the pool before the pool is cut up.
        self.reap();
        let control = self
            .objects
            .slot(cnode, ROOT_IRQ_CONTROL_SLOT)
            .map_err(|_| "the root's CNode is too small")?;
        let target = self
            .objects
            .slot(cnode, ROOT_IRQ_SLOT)
            .map_err(|_| "the root's CNode is too small")?;
        self.issue_irq_handler(control, target, irq)
            .map_err(|_| "cannot make the root's IrqHandler")?;
        // The IPC buffer page belongs to the root's address space (freed
        // with it); the Frame object lets the root name it, and goes when
        // the root ends (`end_root`).
        let frame = self
            .create_original(
                CapType::Frame,
                ipc_buffer,
                PAGE_SIZE,
                KERNEL_ROOT_IPC_FRAME_SLOT,
            )
            .map_err(|_| "cannot make the Frame of the root's IPC buffer")?;
        self.session.root.ipc_frame_of = Some(root);
        let space = thread_space.ok_or("the root has no address space")?;
        let generation = self
            .objects
            .get::<kind::VSpace>(space)
            .map_or(0, |v| v.generation);
        let space = self
            .objects
            .reference(space)
            .ok_or("the root's VSpace is no live object")?;
        if let Some(body) = self.objects.get_mut::<kind::Frame>(frame) {
            body.mapping = Some(FrameMapping {
                space,
                generation,
                va: IPC_BUFFER_ADDRESS,
            });
        }
        self.mint_from_kernel(
            KERNEL_ROOT_IPC_FRAME_SLOT,
            cnode,
            ROOT_IPC_BUFFER_SLOT,
            Rights::READ_WRITE,
        )?;

        // The device memory the kernel does not use, as device Untypeds:
        // their records take pages of the pool, so before it is cut up.
        let devices = self.hand_over_device_memory(cnode)?;

        // The root's own address space is the kernel's (like every space
        // the kernel loads): the page tables its mappings need still come
        // from the kernel's pool, so that much stays behind.
        let (blocks, kernel_kept_pages) = self
            .frames
            .take_as_blocks::<MAX_BOOT_UNTYPEDS>(abi::vspace::MAX_TABLE_PAGES as u64);
        let mut info = BootInfo {
            irq,
            kernel_kept_pages,
            untypeds: heapless::Vec::new(),
            devices,
            image_bytes: self.init_elf.len() as u64,
            command_line: self.command_line.clone(),
        };
        // Recorded first, so that a failure below still gives them back.
        self.session.root.blocks = blocks.clone();
        for (index, block) in blocks.iter().enumerate() {
            let original = KERNEL_ROOT_UNTYPED_SLOTS + index as u64;
            self.untyped_original(block.start, block.size, original)
                .map_err(|_| "cannot make an Untyped for the root")?;
            self.mint_from_kernel(original, cnode, BootInfo::untyped_slot(index), Rights::ALL)?;
            // Cannot fail: `info.untypeds` has the capacity `blocks` has.
            let _ = info.untypeds.push(BootUntyped {
                base: block.start,
                size_bits: block.size.trailing_zeros() as u8,
            });
        }
        let mut words = [0u64; BOOT_INFO_WORDS];
        let used = info.encode(&mut words);
        for (index, word) in words[..used].iter().enumerate() {
            platform.write_phys_u64(ipc_buffer + 8 * index as u64, *word);
        }
        Ok(())
    }

    /// Makes a device Untyped (original in the kernel CNode) for each
    /// naturally aligned block of the device memory the kernel does not
    /// use, lowest address first, at most `MAX_BOOT_DEVICE_UNTYPEDS`, and
    /// gives the root a copy of each from `ROOT_FIRST_DEVICE_UNTYPED_SLOT`.
    fn hand_over_device_memory(
        &mut self,
        cnode: CNodeId,
    ) -> Result<heapless::Vec<BootUntyped, MAX_BOOT_DEVICE_UNTYPEDS>, &'static str> {
        let mut blocks: heapless::Vec<PhysRange, MAX_BOOT_DEVICE_UNTYPEDS> = heapless::Vec::new();
        for range in &self.device_memory {
            crate::frames::split_into_blocks(*range, |block| {
                let _ = blocks.push(block);
            });
        }
        let mut devices = heapless::Vec::new();
        for (index, block) in blocks.iter().enumerate() {
            let original = KERNEL_ROOT_DEVICE_UNTYPED_SLOTS + index as u64;
            self.device_untyped_original(block.start, block.size, original)
                .map_err(|_| "cannot make a device Untyped for the root")?;
            // Recorded at once, so that a failure below still takes it back.
            self.session.root.devices = index + 1;
            self.mint_from_kernel(
                original,
                cnode,
                BootInfo::device_untyped_slot(index),
                Rights::ALL,
            )?;
            // Cannot fail: `devices` has the capacity `blocks` has.
            let _ = devices.push(BootUntyped {
                base: block.start,
                size_bits: block.size.trailing_zeros() as u8,
            });
        }
        Ok(devices)
    }

    /// A copy of the kernel's original capability at `original`, with
    /// `rights`, into `slot` of `cnode`.
    fn mint_from_kernel(
        &mut self,
        original: u64,
        cnode: CNodeId,
        slot: u64,
        rights: Rights,
    ) -> Result<(), &'static str> {
        let source = self
            .kernel_slot(original)
            .map_err(|_| "the kernel has no such original")?;
        let target = self
            .objects
            .slot(cnode, slot)
            .map_err(|_| "the root's CNode is too small")?;
        self.objects
            .mint(source, target, rights, None)
            .map_err(|_| "copying a capability to the root failed")
    }

    /// The root `id` is ending: its IPC buffer page goes back with its
    /// address space, so the Frame that names it (and every copy the root
    /// made) goes first.
    pub(super) fn end_root<P: Platform>(&mut self, platform: &mut P, id: ThreadId) {
        if self.session.root.ipc_frame_of == Some(id) {
            self.session.root.ipc_frame_of = None;
            self.delete_kernel_slot(platform, KERNEL_ROOT_IPC_FRAME_SLOT);
        }
    }

    /// Takes back the root's Untypeds (destroying everything made from
    /// them, the tasks it started included) and returns their RAM.
    pub(super) fn release_root_grant<P: Platform>(&mut self, platform: &mut P) {
        if let Some(root) = self.session.root.ipc_frame_of {
            self.end_root(platform, root);
        }
        self.delete_kernel_slot(platform, KERNEL_ROOT_IRQ_CONTROL_SLOT);
        let blocks = core::mem::take(&mut self.session.root.blocks);
        for index in 0..blocks.len() {
            self.delete_kernel_slot(platform, KERNEL_ROOT_UNTYPED_SLOTS + index as u64);
        }
        // Their Frames went with the RAM Untypeds that paid for them.
        for index in 0..core::mem::take(&mut self.session.root.devices) {
            self.delete_kernel_slot(platform, KERNEL_ROOT_DEVICE_UNTYPED_SLOTS + index as u64);
        }
        // The records that lived in those Untypeds go before their RAM.
        self.reap();
        for block in blocks {
            self.frames.give_back(block);
        }
    }
}
