//! The root task's checks of its device memory (docs/abi.md, "Device
//! memory"): a Frame retyped from a device Untyped, its record paid by a
//! RAM Untyped, mapped read-only as Device memory, reads a register the
//! board's QEMU models; a device Untyped makes nothing but Frames and pays
//! for no record; a device Frame is never executable; revoking the device
//! Untyped takes the Frame back (unmapped, its capability gone) and gives
//! its pages back.
//!
//! Returns 0, or the number of the first failed check (120..).

use abi::bootinfo::{BootInfo, ROOT_CNODE_SLOT, ROOT_FIRST_FREE_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::ErrorCode;
use sdk::ipc::Cptr;
use sdk::println;
use sdk::syscall::{cnode, retype_device_frames, retype_paid_by};
use sdk::vspace::{Frame, VSpace};

const OWN_VSPACE: VSpace = VSpace(Cptr(ROOT_VSPACE_SLOT));
/// The Frames' first slot (every slot the checks use is empty again at
/// the end).
const FRAMES: u64 = ROOT_FIRST_FREE_SLOT + 20;
/// Where the register's page is mapped: next to the page the other root
/// checks use, so no new page table is needed.
const VA: u64 = FRAME_MAP_START + 0x1000;

/// QEMU virt's first virtio-mmio transport, and its MagicValue ("virt").
const VIRTIO_MMIO: u64 = 0x0a00_0000;
const VIRTIO_MAGIC: u32 = 0x7472_6976;
/// The Pi 4's system timer: CLO at +4, a free-running 1 MHz counter.
const PI4_SYSTEM_TIMER: u64 = 0xFE00_3000;
const PI4_TIMER_CLO: u64 = 0x04;

/// The register a board's check reads.
#[derive(Clone, Copy)]
enum Register {
    /// virtio-mmio MagicValue: always `VIRTIO_MAGIC`.
    VirtioMagic,
    /// The system timer's low word: advances.
    Pi4Counter,
}

pub fn check(info: &BootInfo) -> i32 {
    let (address, register) = if info.device_covering(VIRTIO_MMIO).is_some() {
        (VIRTIO_MMIO, Register::VirtioMagic)
    } else if info.device_covering(PI4_SYSTEM_TIMER).is_some() {
        (PI4_SYSTEM_TIMER, Register::Pi4Counter)
    } else {
        println!("driver: no device Untyped covers a register this check knows; skipped");
        expect!(120, info.devices.is_empty(), false);
        return 0;
    };
    let index = info.device_covering(address).unwrap_or(0);
    let device = BootInfo::device_untyped_slot(index);
    let block = info.devices[index];
    // A RAM Untyped pays: any will do (a Frame's record is 128 bytes).
    let payer = BootInfo::untyped_slot(0);
    // Frames come from the block's bottom: the one before the register's
    // page first (at most 63 of them).
    let skip = (address - block.base) / 4096;
    expect!(121, skip < 64, true);
    let count = skip + 1;
    // Device memory makes only Frames, and holds no record.
    expect!(
        122,
        retype_paid_by(device, CapType::Tcb, 0, FRAMES, 1, payer),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        123,
        retype_paid_by(device, CapType::CNode, 4, FRAMES, 1, payer),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        124,
        retype_device_frames(device, device, FRAMES, 1),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        125,
        retype_device_frames(device, ROOT_FIRST_FREE_SLOT + 100, FRAMES, 1),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        126,
        retype_device_frames(device, payer, FRAMES, count),
        Ok(())
    );
    let frame = Frame(Cptr(FRAMES + skip));
    expect!(
        127,
        frame.map(OWN_VSPACE, VA, MapRights::ReadExecute),
        Err(ErrorCode::InvalidArgument)
    );
    let view = match frame.map_view(OWN_VSPACE, VA, MapRights::Read) {
        Ok(view) => view,
        Err(error) => {
            println!("check 128 failed: mapping the device Frame: {error:?}");
            return 128;
        }
    };
    match register {
        Register::VirtioMagic => {
            let magic = view.read_u32(0);
            expect!(129, magic, VIRTIO_MAGIC);
            println!(
                "driver: device memory: virtio-mmio at {address:#x} mapped read-only, MagicValue {magic:#x}"
            );
        }
        Register::Pi4Counter => {
            let first = view.read_u32(PI4_TIMER_CLO);
            let mut later = first;
            for _ in 0..1_000_000 {
                later = view.read_u32(PI4_TIMER_CLO);
                if later != first {
                    break;
                }
            }
            expect!(130, later != first, true);
            println!(
                "driver: device memory: the system timer at {address:#x} mapped read-only, CLO {first} then {later}"
            );
        }
    }
    // Revoking the device Untyped takes its Frames back: unmapped (the
    // page is not read again: it would fault), capabilities gone.
    expect!(131, cnode::revoke(ROOT_CNODE_SLOT, device), Ok(()));
    expect!(132, frame.unmap(), Err(ErrorCode::InvalidCapability));
    expect!(
        133,
        frame.map(OWN_VSPACE, VA, MapRights::Read),
        Err(ErrorCode::InvalidCapability)
    );
    // Its pages are free again: the same number of Frames fits, from the
    // block's first page, and mapping the register's page works again.
    expect!(
        134,
        retype_device_frames(device, payer, FRAMES, count),
        Ok(())
    );
    expect!(135, frame.map(OWN_VSPACE, VA, MapRights::Read), Ok(()));
    expect!(136, cnode::revoke(ROOT_CNODE_SLOT, device), Ok(()));
    expect!(
        137,
        frame.map(OWN_VSPACE, VA, MapRights::Read),
        Err(ErrorCode::InvalidCapability)
    );
    println!(
        "driver: device memory: {} device Untypeds; TCB and CNode from one refused, executable refused, revoke unmaps",
        info.devices.len()
    );
    0
}
