//! The root task: the kernel starts it with what `abi::bootinfo` lists
//! and makes nothing more for it. It reads its boot information, checks
//! every capability it was given does what it should, and then builds the
//! system's other tasks itself from its Untyped memory.
//!
//! Returns its exit status: 0 when every check passed, else the number of
//! the first failed check.

use abi::bootinfo::{BootInfo, BOOT_INFO_WORDS, ROOT_CNODE_SLOT, ROOT_FIRST_FREE_SLOT};
use abi::bootinfo::{ROOT_IPC_BUFFER_SLOT, ROOT_IRQ_SLOT, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::ErrorCode;
use sdk::ipc::Cptr;
use sdk::println;
use sdk::syscall::{cnode, irq_set_notification, retype};
use sdk::tcb::Tcb;
use sdk::vspace::{Frame, VSpace};

/// The root's own VSpace and TCB, as the kernel placed them.
const OWN_VSPACE: VSpace = VSpace(Cptr(ROOT_VSPACE_SLOT));
const OWN_TCB: Tcb = Tcb(Cptr(ROOT_TCB_SLOT));
/// Free slots the checks use (everything from `ROOT_FIRST_FREE_SLOT` on
/// is empty at start).
const SCRATCH: u64 = ROOT_FIRST_FREE_SLOT;
const NOTIFICATION: u64 = ROOT_FIRST_FREE_SLOT + 1;
/// The boot-suite priority the kernel starts the root with.
const ROOT_PRIORITY: u64 = 100;

/// The root task's program.
pub fn root_task() -> i32 {
    // The boot information is in the IPC buffer, which the first long
    // message would overwrite: read it before anything else.
    let words: [u64; BOOT_INFO_WORDS] = core::array::from_fn(sdk::ipc::buffer_word);
    let info = match BootInfo::decode(&words) {
        Ok(info) => info,
        Err(error) => {
            println!("root: the boot information is unreadable: {error:?}");
            return 1;
        }
    };
    let largest = info.untypeds.iter().map(|u| u.size_bits).max().unwrap_or(0);
    println!(
        "root: given {} Untypeds, {} KiB of free RAM (largest block 2^{largest} bytes); the kernel kept {} pages",
        info.untypeds.len(),
        info.untyped_bytes() / 1024,
        info.kernel_kept_pages
    );
    match check_boot_capabilities(&info) {
        0 => {}
        failed => return failed,
    }
    println!("root: every boot capability checked");
    0
}

/// Each capability of the boot information is there with the type and
/// rights it should have, and does what it names.
fn check_boot_capabilities(info: &BootInfo) -> i32 {
    // Both boards have far more than 64 MiB free when the root starts.
    expect!(2, info.untyped_bytes() >= 64 << 20, true);
    // Every Untyped slot holds an Untyped (a page is carved from each and
    // given back), and the slot after the last is empty.
    for index in 0..info.untypeds.len() {
        let slot = BootInfo::untyped_slot(index);
        expect!(3, retype(slot, CapType::Frame, 0, SCRATCH, 1), Ok(()));
        expect!(4, cnode::delete(ROOT_CNODE_SLOT, SCRATCH), Ok(()));
    }
    let past_last = BootInfo::untyped_slot(info.untypeds.len());
    expect!(
        5,
        retype(past_last, CapType::Frame, 0, SCRATCH, 1),
        Err(ErrorCode::InvalidCapability)
    );
    // Its own TCB: it may set its own priority (to what it is: its MCP).
    expect!(6, OWN_TCB.set_priority(ROOT_PRIORITY), Ok(()));
    // Its own VSpace: a frame from the largest Untyped, mapped, written,
    // read back, unmapped.
    let Some(largest) = (0..info.untypeds.len()).max_by_key(|&i| info.untypeds[i].size_bits) else {
        return 7;
    };
    let frame = Frame(Cptr(SCRATCH));
    expect!(
        8,
        retype(
            BootInfo::untyped_slot(largest),
            CapType::Frame,
            0,
            SCRATCH,
            1
        ),
        Ok(())
    );
    let view = match frame.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite) {
        Ok(view) => view,
        Err(error) => {
            println!("root: mapping a frame into its own VSpace failed: {error:?}");
            return 9;
        }
    };
    expect!(10, view.write_u64(8, 0x600d_f00d), Ok(()));
    expect!(11, view.read_u64(8), 0x600d_f00d);
    expect!(12, frame.unmap(), Ok(()));
    expect!(13, cnode::delete(ROOT_CNODE_SLOT, SCRATCH), Ok(()));
    // Its IPC buffer's Frame: mapped already (at the IPC buffer address).
    expect!(
        14,
        Frame(Cptr(ROOT_IPC_BUFFER_SLOT)).map(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite),
        Err(ErrorCode::AlreadyMapped)
    );
    // The IrqHandler: its interrupt can be routed to a notification
    // retyped from its own memory.
    expect!(
        15,
        retype(
            BootInfo::untyped_slot(largest),
            CapType::Notification,
            0,
            NOTIFICATION,
            1
        ),
        Ok(())
    );
    expect!(
        16,
        irq_set_notification(ROOT_IRQ_SLOT, NOTIFICATION),
        Ok(())
    );
    expect!(17, cnode::delete(ROOT_CNODE_SLOT, NOTIFICATION), Ok(()));
    0
}
