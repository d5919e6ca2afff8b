//! The privileged task: given what the kernel gave the root, in the
//! root's slot layout and with a boot-info block of its own
//! (`abi::bootinfo`), so that a program written as a root task (the
//! project's test driver) runs as a task of a described system.
//!
//! It is built after every other task and gets:
//!
//! * its own TCB, VSpace and IPC buffer Frame in the root's slots, the
//!   console in slot 1, its own CNode (`2^ROOT_CNODE_RADIX` slots) in 0;
//!   the capabilities its plan names go to slots from
//!   `ROOT_FIRST_FREE_SLOT` on (the host tool checks that);
//! * the timer's IrqHandler and the IrqControl, moved from the root (the
//!   plan's IrqHandlers are made before);
//! * RAM: every Untyped of the root's that no other task's memory came
//!   from, moved whole, then the rest of the ones that were carved, as
//!   the largest blocks the kernel still has room for. The root does not
//!   know where a block it carved lies: such an Untyped's `base` in the
//!   boot information is 0;
//! * every device Untyped the plan made no Frame from, moved whole;
//! * a read-only copy of its own ELF at `ROOT_IMAGE_ADDRESS`, and the
//!   plan's command line followed by the kernel's.
//!
//! It is trusted with all of that: with the RAM it can revoke, it could
//! end every other task. A privileged task is not restarted.

use crate::objects::{OWN_VSPACE, SCRATCH_VA};
use crate::tasks::{Failure, System, Why};
use abi::bootinfo::ROOT_INSPECTOR_SLOT;
use abi::bootinfo::{BootInfo, BootUntyped, BOOT_INFO_WORDS, MAX_BOOT_DEVICE_UNTYPEDS};
use abi::bootinfo::{MAX_BOOT_UNTYPEDS, MAX_COMMAND_LINE, ROOT_CNODE_RADIX, ROOT_CNODE_SLOT};
use abi::bootinfo::{ROOT_CONSOLE_SLOT, ROOT_IRQ_SLOT, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::bootinfo::{ROOT_IMAGE_ADDRESS, ROOT_IPC_BUFFER_SLOT, ROOT_IRQ_CONTROL_SLOT};
use abi::cap::{CapType, Rights};
use abi::system::plan::TaskPlan;
use abi::vspace::MapRights;
use abi::{ErrorCode, IPC_BUFFER_ADDRESS};
use sdk::ipc::Cptr;
use sdk::syscall::{cnode, retype};
use sdk::vspace::Frame;

/// Hands task `index` (built, not started) what the root was given.
// A frame of its own: inlined, every step's locals would share
// one frame bigger than the root's 128 KiB stack.
#[inline(never)]
pub fn hand_over(
    system: &mut System,
    index: usize,
    plan: &TaskPlan<'static>,
) -> Result<(), Failure> {
    let fail = |what, why| Failure::task(plan.name, what, why);
    if plan.cnode_radix != ROOT_CNODE_RADIX {
        return Err(fail(
            "its CNode",
            Why::Plan("a privileged task's CNode has the root's 4096 slots"),
        ));
    }
    let (cnode_cap, tcb, vspace, ipc_buffer, untyped) = match system.built(index) {
        Some(built) => (
            built.task.cnode().0,
            built.task.tcb(),
            built.task.vspace(),
            built.task.ipc_buffer(),
            built.task.untyped(),
        ),
        None => return Err(fail("handing over", Why::Plan("it was not built"))),
    };
    let code = |what| move |e: ErrorCode| Failure::task(plan.name, what, Why::Code(e));
    cnode::mint_into(
        cnode_cap,
        ROOT_CONSOLE_SLOT,
        ROOT_CONSOLE_SLOT,
        Rights::WRITE,
        None,
    )
    .map_err(code("the console"))?;
    cnode::mint_into(
        cnode_cap,
        ROOT_INSPECTOR_SLOT,
        ROOT_INSPECTOR_SLOT,
        Rights::READ,
        None,
    )
    .map_err(code("the Inspector"))?;
    cnode::mint_into(cnode_cap, tcb.0 .0, ROOT_TCB_SLOT, Rights::ALL, None)
        .map_err(code("its TCB"))?;
    cnode::mint_into(cnode_cap, vspace.0 .0, ROOT_VSPACE_SLOT, Rights::ALL, None)
        .map_err(code("its VSpace"))?;
    cnode::mint_into(
        cnode_cap,
        ipc_buffer.0 .0,
        ROOT_IPC_BUFFER_SLOT,
        Rights::READ_WRITE,
        None,
    )
    .map_err(code("its IPC buffer"))?;
    cnode::move_into(cnode_cap, ROOT_IRQ_SLOT, ROOT_IRQ_SLOT).map_err(code("the timer IRQ"))?;
    cnode::move_into(cnode_cap, ROOT_IRQ_CONTROL_SLOT, ROOT_IRQ_CONTROL_SLOT)
        .map_err(code("the IrqControl"))?;

    let elf = system
        .plan
        .file(plan.elf)
        .ok_or(fail("its ELF", Why::Plan("not in the image")))?;
    copy_elf(system, untyped, vspace, elf).map_err(|why| fail("the copy of its ELF", why))?;

    let mut info = BootInfo {
        irq: system.info.irq,
        kernel_kept_pages: system.info.kernel_kept_pages,
        untypeds: heapless::Vec::new(),
        devices: heapless::Vec::new(),
        image_bytes: elf.len() as u64,
        system_image_bytes: 0,
        command_line: heapless::Vec::new(),
    };
    give_ram(system, cnode_cap, &mut info).map_err(|why| fail("RAM", why))?;
    give_devices(system, cnode_cap, &mut info).map_err(|why| fail("device memory", why))?;
    let own_line = plan.privileged.unwrap_or("");
    let kernel_line = system.info.command_line.clone();
    for (i, part) in [own_line.as_bytes(), kernel_line.as_slice()]
        .iter()
        .filter(|part| !part.is_empty())
        .enumerate()
    {
        if i > 0 {
            let _ = info.command_line.push(b' ');
        }
        let room = MAX_COMMAND_LINE - info.command_line.len();
        let _ = info
            .command_line
            .extend_from_slice(&part[..part.len().min(room)]);
    }
    write_boot_info(vspace, ipc_buffer, &info).map_err(|why| fail("its boot information", why))
}

/// A read-only copy of `elf` at `ROOT_IMAGE_ADDRESS` in `vspace`, in
/// Frames from the task's own memory.
fn copy_elf(
    system: &mut System,
    untyped: Cptr,
    vspace: sdk::vspace::VSpace,
    elf: &[u8],
) -> Result<(), Why> {
    for (page, chunk) in elf.chunks(4096).enumerate() {
        // The Frame's capability stays in the root's slot; it is a child
        // of the task's Untyped and goes with the task.
        let slot = system.slot()?;
        retype(untyped.0, CapType::Frame, 0, slot, 1).map_err(Why::Code)?;
        let frame = Frame(Cptr(slot));
        let view = frame
            .map_view(OWN_VSPACE, SCRATCH_VA, MapRights::ReadWrite)
            .map_err(Why::Code)?;
        view.write_bytes(0, chunk).map_err(Why::Code)?;
        frame.unmap().map_err(Why::Code)?;
        frame
            .map(
                vspace,
                ROOT_IMAGE_ADDRESS + page as u64 * 4096,
                MapRights::Read,
            )
            .map_err(Why::Code)?;
    }
    Ok(())
}

/// Moves the root's RAM into the task: untouched Untypeds whole, then
/// the largest blocks left in the touched ones.
fn give_ram(system: &mut System, cnode_cap: u64, info: &mut BootInfo) -> Result<(), Why> {
    let mut next = 0usize;
    let mut give = |info: &mut BootInfo, from: u64, size_bits: u8, base: u64| {
        if next >= MAX_BOOT_UNTYPEDS {
            return Ok(false);
        }
        cnode::move_into(cnode_cap, from, BootInfo::untyped_slot(next)).map_err(Why::Code)?;
        let _ = info.untypeds.push(BootUntyped { base, size_bits });
        next += 1;
        Ok::<bool, Why>(true)
    };
    let scratch = system.slot()?;
    // Only the Untyped the system's memory came from was carved from.
    let touched: heapless::Vec<bool, MAX_BOOT_UNTYPEDS> = (0..system.info.untypeds.len())
        .map(|i| BootInfo::untyped_slot(i) == system.memory_parent.0)
        .collect();
    for (i, untyped) in system.info.untypeds.clone().iter().enumerate() {
        if !touched[i]
            && !give(
                info,
                BootInfo::untyped_slot(i),
                untyped.size_bits,
                untyped.base,
            )?
        {
            return Ok(());
        }
    }
    for (i, untyped) in system.info.untypeds.clone().iter().enumerate() {
        if !touched[i] {
            continue;
        }
        // The largest blocks first: a carve that fails leaves nothing
        // behind, so trying each size once, largest down, takes all the
        // room there is in blocks of those sizes.
        let mut bits = untyped.size_bits - 1;
        while bits >= 12 {
            match retype(
                BootInfo::untyped_slot(i),
                CapType::Untyped,
                u64::from(bits),
                scratch,
                1,
            ) {
                Ok(()) => {
                    if !give(info, scratch, bits, 0)? {
                        let _ = cnode::delete(ROOT_CNODE_SLOT, scratch);
                        return Ok(());
                    }
                }
                Err(ErrorCode::NotEnoughMemory) => bits -= 1,
                Err(code) => return Err(Why::Code(code)),
            }
        }
    }
    let _ = system.supervisor.slots.free(scratch);
    Ok(())
}

/// Moves every device Untyped the plan made no Frame from.
fn give_devices(system: &mut System, cnode_cap: u64, info: &mut BootInfo) -> Result<(), Why> {
    for (i, device) in system.info.devices.clone().iter().enumerate() {
        if system.objects.uses_device(i) || info.devices.len() >= MAX_BOOT_DEVICE_UNTYPEDS {
            continue;
        }
        let slot = BootInfo::device_untyped_slot(info.devices.len());
        cnode::move_into(cnode_cap, BootInfo::device_untyped_slot(i), slot).map_err(Why::Code)?;
        let _ = info.devices.push(*device);
    }
    Ok(())
}

/// Writes the boot-info block into the task's IPC buffer, where a root
/// task reads it first thing. A Frame is mapped in one place at a time:
/// the buffer leaves the task's space (it has not run yet) while the
/// root fills it, then goes back.
fn write_boot_info(
    vspace: sdk::vspace::VSpace,
    ipc_buffer: Frame,
    info: &BootInfo,
) -> Result<(), Why> {
    let mut words = [0u64; BOOT_INFO_WORDS];
    let used = info.encode(&mut words);
    ipc_buffer.unmap().map_err(Why::Code)?;
    let view = ipc_buffer
        .map_view(OWN_VSPACE, SCRATCH_VA, MapRights::ReadWrite)
        .map_err(Why::Code)?;
    for (index, word) in words[..used].iter().enumerate() {
        view.write_u64(index as u64 * 8, *word).map_err(Why::Code)?;
    }
    ipc_buffer.unmap().map_err(Why::Code)?;
    ipc_buffer
        .map(vspace, IPC_BUFFER_ADDRESS, MapRights::ReadWrite)
        .map_err(Why::Code)
}
