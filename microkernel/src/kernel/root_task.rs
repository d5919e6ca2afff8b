//! The root task: the one thread the kernel makes, as `abi::bootinfo`
//! lays out what it is given, and whose end ends the run.
//!
//! Like seL4's initial thread, the root gets capabilities to its own TCB,
//! CNode, VSpace and IPC buffer, the console, an IrqHandler for the
//! physical timer, the IrqControl (an IrqHandler for any interrupt the
//! kernel does not keep), and every free page of RAM as Untyped memory,
//! cut into naturally aligned power-of-two blocks. From then on the
//! kernel makes nothing for it: every object the root and the tasks it
//! starts use is retyped from those Untypeds. The kernel keeps each
//! original capability (the root gets copies). When the root ends —
//! exit, kill, fault — the kernel prints how (unless it exited with 0)
//! and the run ends with its status (`Resume::Shutdown`).

use crate::address_space::{AddressSpace, SpaceError, USER_STACK_TOP};
use crate::cap::{CNodeId, Capability, FrameMapping};
use crate::kernel::{Kernel, EXIT_FAILURE, EXIT_SUCCESS, KERNEL_CONSOLE_SLOT};
use crate::kernel::{
    KERNEL_INSPECTOR_SLOT, KERNEL_ROOT_CNODE_SLOT, KERNEL_ROOT_IPC_FRAME_SLOT,
    KERNEL_ROOT_IRQ_CONTROL_SLOT,
};
use crate::kernel::{KERNEL_ROOT_DEVICE_UNTYPED_SLOTS, KERNEL_ROOT_TCB_SLOT};
use crate::kernel::{KERNEL_ROOT_UNTYPED_SLOTS, KERNEL_ROOT_VSPACE_SLOT};
use crate::platform::{Console, Platform};
use crate::thread::{ThreadId, ThreadName, ThreadState};
use abi::bootinfo::MAX_BOOT_DEVICE_UNTYPEDS;
use abi::bootinfo::ROOT_INSPECTOR_SLOT;
use abi::bootinfo::{BootInfo, BootUntyped, BOOT_INFO_WORDS, MAX_BOOT_UNTYPEDS};
use abi::bootinfo::{ROOT_ARGUMENT, ROOT_CNODE_RADIX, ROOT_CNODE_SLOT, ROOT_CONSOLE_SLOT};
use abi::bootinfo::{ROOT_IMAGE_ADDRESS, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT, SYSTEM_IMAGE_ADDRESS};
use abi::bootinfo::{ROOT_IPC_BUFFER_SLOT, ROOT_IRQ_CONTROL_SLOT, ROOT_IRQ_SLOT};
use abi::cap::{CapType, Rights};
use abi::system::image::MAX_IMAGE_BYTES;
use abi::IPC_BUFFER_ADDRESS;
use arch::boards::PHYSICAL_TIMER_INTID;
use arch::context::UserContext;
use arch::layout::PAGE_SIZE;
use arch::object_memory::kind;
use core::fmt::Write;

/// The root task's priority (its MCP is `abi::tcb::MAX_PRIORITY`: it may
/// make threads of any priority).
pub const ROOT_PRIORITY: u8 = 100;

impl Kernel {
    /// Makes the root task from the embedded root task ELF, hands it what it
    /// gets (`hand_over_to_root`) and makes it ready. On failure the run
    /// ends (the caller says why).
    pub(in crate::kernel) fn start_root<P: Platform>(
        &mut self,
        platform: &mut P,
    ) -> Result<(), &'static str> {
        let cnode = self
            .kernel_cnode(ROOT_CNODE_RADIX)
            .map_err(|_| "no room for its CNode")?;
        let original = self
            .kernel_slot(KERNEL_ROOT_CNODE_SLOT)
            .map_err(|_| "the kernel has no CNode")?;
        self.objects
            .install_original(
                original,
                Capability::new(CapType::CNode, Rights::READ_WRITE, cnode.object()),
            )
            .map_err(|_| "cannot install its CNode")?;
        self.mint_from_kernel(
            KERNEL_ROOT_CNODE_SLOT,
            cnode,
            ROOT_CNODE_SLOT,
            Rights::READ_WRITE,
        )?;
        self.mint_from_kernel(
            KERNEL_CONSOLE_SLOT,
            cnode,
            ROOT_CONSOLE_SLOT,
            Rights::READ_WRITE,
        )?;
        self.mint_from_kernel(
            KERNEL_INSPECTOR_SLOT,
            cnode,
            ROOT_INSPECTOR_SLOT,
            Rights::READ,
        )?;
        let tcb = self
            .create_original(CapType::Tcb, 0, 0, KERNEL_ROOT_TCB_SLOT)
            .map_err(|_| "no room for its TCB")?;
        let id = ThreadId::of(tcb);
        let (space, entry) = self.load_root_space(platform)?;
        let vspace = match self.create_original(
            CapType::VSpace,
            space.root(),
            PAGE_SIZE,
            KERNEL_ROOT_VSPACE_SLOT,
        ) {
            Ok(vspace) => vspace,
            Err(_) => {
                space.release(platform, &mut self.frames);
                return Err("no room for its VSpace");
            }
        };
        let ipc_buffer = space.ipc_buffer();
        if !self.install_space(platform, vspace, space) {
            return Err("its VSpace cannot hold its space");
        }
        let number = self.next_thread_number();
        let thread = &mut self.objects[id];
        thread.number = number;
        thread.set_priority(ROOT_PRIORITY);
        thread.mcp = abi::tcb::MAX_PRIORITY as u8;
        thread.context = UserContext::new_user(entry, USER_STACK_TOP, ROOT_ARGUMENT)
            .with_thread_pointer(IPC_BUFFER_ADDRESS);
        thread.make_ready();
        thread.name = ThreadName::from_static("root");
        thread.ipc_buffer = Some(ipc_buffer);
        self.set_cspace(id, cnode)
            .map_err(|_| "its CSpace is gone")?;
        self.bind_space(id, vspace);
        self.root = Some(id);
        self.hand_over_to_root(platform, id, cnode, ipc_buffer)?;
        self.run_queues[0]
            .ready
            .enqueue(&mut self.objects, id, ROOT_PRIORITY);
        Ok(())
    }

    /// A fresh address space (a new ASID) with the embedded root task ELF
    /// loaded, a copy of the whole file at `ROOT_IMAGE_ADDRESS`, and the
    /// system image's own pages, if there is one, read-only at
    /// `SYSTEM_IMAGE_ADDRESS`.
    fn load_root_space<P: Platform>(
        &mut self,
        platform: &mut P,
    ) -> Result<(AddressSpace, u64), &'static str> {
        // Mapped in place, so it must be pages nothing else gets.
        if let Some(image) = self.system_image {
            if !image.start.is_multiple_of(PAGE_SIZE)
                || image.size > MAX_IMAGE_BYTES
                || self.frames.holds_any(image)
            {
                return Err("its system image is unaligned, too long, or free RAM");
            }
        }
        let live = self.live_asids();
        let assignment = self.asids.assign(None, live);
        if assignment.flush_all {
            platform.flush_tlb_all();
        }
        let (mut space, entry) = AddressSpace::load_with_file(
            platform,
            &mut self.frames,
            assignment.asid,
            self.root_elf,
            Some(ROOT_IMAGE_ADDRESS),
        )
        .map_err(|e| match e {
            SpaceError::Elf(_) => "the root task's ELF is not loadable",
            SpaceError::Map(_) => "mapping the root task's ELF failed",
            SpaceError::OutOfMemory => "out of memory for its address space",
        })?;
        if let Some(image) = self.system_image {
            let pages = image.size.div_ceil(PAGE_SIZE);
            let mapped = space.map_in_place(
                platform,
                &mut self.frames,
                image.start,
                pages,
                SYSTEM_IMAGE_ADDRESS,
            );
            if mapped.is_err() {
                space.release(platform, &mut self.frames);
                return Err("mapping the system image failed");
            }
        }
        Ok((space, entry))
    }

    /// Gives the root `root` (its CNode `cnode`, its IPC buffer page at
    /// `ipc_buffer`) its TCB, VSpace, IPC buffer Frame, IrqControl, the
    /// timer's IrqHandler and all free RAM as Untypeds, and writes its
    /// `BootInfo` into its IPC buffer.
    fn hand_over_to_root<P: Platform>(
        &mut self,
        platform: &mut P,
        root: ThreadId,
        cnode: CNodeId,
        ipc_buffer: u64,
    ) -> Result<(), &'static str> {
        for (original, slot) in [
            (KERNEL_ROOT_TCB_SLOT, ROOT_TCB_SLOT),
            (KERNEL_ROOT_VSPACE_SLOT, ROOT_VSPACE_SLOT),
        ] {
            self.mint_from_kernel(original, cnode, slot, Rights::ALL)?;
        }
        // The IrqControl: every IrqHandler the root makes is a child of
        // its copy.
        self.create_original(CapType::IrqControl, 0, 0, KERNEL_ROOT_IRQ_CONTROL_SLOT)
            .map_err(|_| "cannot make its IrqControl")?;
        self.mint_from_kernel(
            KERNEL_ROOT_IRQ_CONTROL_SLOT,
            cnode,
            ROOT_IRQ_CONTROL_SLOT,
            Rights::ALL,
        )?;
        // The timer's IrqHandler is issued by the root's IrqControl (the
        // kernel keeps no original), so deleting it frees the interrupt
        // for the root's next `IrqControlGet`.
        let irq = PHYSICAL_TIMER_INTID;
        let control = self
            .objects
            .slot(cnode, ROOT_IRQ_CONTROL_SLOT)
            .map_err(|_| "its CNode is too small")?;
        let target = self
            .objects
            .slot(cnode, ROOT_IRQ_SLOT)
            .map_err(|_| "its CNode is too small")?;
        self.issue_irq_handler(control, target, irq)
            .map_err(|_| "cannot make its IrqHandler")?;
        // The IPC buffer page belongs to the root's address space; the
        // Frame object lets the root name it, and goes when the root ends
        // (`end_root`), before the page does.
        let frame = self
            .create_original(
                CapType::Frame,
                ipc_buffer,
                PAGE_SIZE,
                KERNEL_ROOT_IPC_FRAME_SLOT,
            )
            .map_err(|_| "cannot make the Frame of its IPC buffer")?;
        let space = self.objects[root].space.ok_or("it has no address space")?;
        let generation = self
            .objects
            .get::<kind::VSpace>(space)
            .map_or(0, |v| v.generation);
        let space = self
            .objects
            .reference(space)
            .ok_or("its VSpace is no live object")?;
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
            image_bytes: self.root_elf.len() as u64,
            system_image_bytes: self.system_image.map_or(0, |image| image.size),
            command_line: self.command_line.clone(),
        };
        for (index, block) in blocks.iter().enumerate() {
            let original = KERNEL_ROOT_UNTYPED_SLOTS + index as u64;
            self.untyped_original(block.start, block.size, original)
                .map_err(|_| "cannot make an Untyped for it")?;
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
        let mut blocks: heapless::Vec<arch::boards::PhysRange, MAX_BOOT_DEVICE_UNTYPEDS> =
            heapless::Vec::new();
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
            .map_err(|_| "its CNode is too small")?;
        self.objects
            .mint(source, target, rights, None)
            .map_err(|_| "copying a capability to it failed")
    }

    /// The root is ending with `state`: the Frame naming its IPC buffer
    /// (and every copy) goes before the page goes back with its address
    /// space, its IrqControl with every IrqHandler issued from it, the
    /// console says how it ended unless it exited with 0, and
    /// the run ends with its status at the end of this kernel entry.
    pub(in crate::kernel) fn end_root<P: Platform>(
        &mut self,
        platform: &mut P,
        state: ThreadState,
    ) {
        self.delete_kernel_slot(platform, KERNEL_ROOT_IPC_FRAME_SLOT);
        // And the interrupts it holds (every IrqHandler issued from it).
        self.delete_kernel_slot(platform, KERNEL_ROOT_IRQ_CONTROL_SLOT);
        let status = if state == ThreadState::Exited(0) {
            EXIT_SUCCESS
        } else {
            self.end_user_lines(platform);
            let mut console = Console(platform);
            let _ = match state {
                state if crate::kernel::object::tcb::end::kill_reason(state).is_some() => writeln!(
                    console,
                    "[kernel] the root task ended: it was {}",
                    crate::kernel::object::tcb::end::kill_reason(state).unwrap_or("killed")
                ),
                ThreadState::Exited(status) => writeln!(
                    console,
                    "[kernel] the root task ended: it exited with status {status}"
                ),
                ThreadState::Faulted(report) => writeln!(
                    console,
                    "[kernel] the root task ended: it faulted ({report})"
                ),
                other => writeln!(console, "[kernel] the root task ended: {other:?}"),
            };
            EXIT_FAILURE
        };
        self.shutdown = Some(status);
        self.attention = true;
    }
}
