//! Device memory on the host: the root task's device Untypeds, Frames
//! retyped from them with their records paid by a RAM Untyped (`x6`),
//! mapped as Device-nGnRE memory and never executable, every refusal
//! (docs/abi.md, "Device memory"), and both revoke orders
//! (docs/capabilities.md, "Device memory").
//!
//! The fake machine has RAM only: any kernel access to device memory (a
//! zeroing, a write, a read through a user pointer) outside RAM panics the
//! test, so "the kernel never touches device memory" is checked by every
//! test here.

use abi::bootinfo::{BootInfo, BOOT_INFO_WORDS, ROOT_CNODE_SLOT, ROOT_FIRST_FREE_SLOT};
use abi::bootinfo::{ROOT_IPC_BUFFER_SLOT, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::CapType;
use abi::elf::writer::{elf_filled, load, PF_R, PF_W, PF_X};
use abi::{ErrorCode, Syscall};
use arch::boards::PhysRange;
use arch::context::{FpState, UserContext};
use arch::mmu::{Access, AsidBits, MemoryKind};
use microkernel::kernel::{Interrupt, Kernel, Resume};
use microkernel::platform::{MemoryMaintenance, PhysMemory, Platform};
use std::collections::HashMap;

const RAM: PhysRange = PhysRange {
    start: 0x1000_0000,
    size: 32 << 20,
};
/// One page of device memory (its Untyped holds one Frame).
const ONE_PAGE_DEVICE: PhysRange = PhysRange {
    start: 0x0900_1000,
    size: 0x1000,
};
/// Where QEMU virt's virtio-mmio transports are: a 32 MiB block.
const VIRTIO: PhysRange = PhysRange {
    start: 0x0a00_0000,
    size: 32 << 20,
};
const SVC: u64 = 0x15 << 26;
const CODE: u64 = 0x40_0000;
/// A page of the frame window of the root's (kernel-made) space.
const VA: u64 = abi::vspace::FRAME_MAP_START;
const OK: u64 = 0;
const R: u64 = 1;
const RW: u64 = 3;
const RX: u64 = 5;

/// The RAM Untyped the tests pay with (a child of the root's first).
const PAYER: u64 = ROOT_FIRST_FREE_SLOT;
/// A one-page RAM Untyped: room for 31 Frame records, not 64.
const SMALL_PAYER: u64 = ROOT_FIRST_FREE_SLOT + 1;
/// Where new objects go.
const TARGET: u64 = ROOT_FIRST_FREE_SLOT + 2;

#[derive(Default)]
struct FakeMachine {
    frames: HashMap<u64, Vec<u8>>,
    console: String,
}

impl FakeMachine {
    fn frame(&mut self, pa: u64) -> &mut Vec<u8> {
        let base = pa & !0xfff;
        assert!(
            (RAM.start..RAM.end()).contains(&base),
            "the kernel wrote outside RAM: {pa:#x}"
        );
        self.frames.entry(base).or_insert_with(|| vec![0; 4096])
    }
}

impl PhysMemory for FakeMachine {
    fn read_phys(&self, pa: u64, out: &mut [u8]) {
        assert!(
            (RAM.start..RAM.end()).contains(&pa),
            "the kernel read outside RAM: {pa:#x}"
        );
        let offset = (pa & 0xfff) as usize;
        match self.frames.get(&(pa & !0xfff)) {
            Some(frame) => out.copy_from_slice(&frame[offset..offset + out.len()]),
            None => out.fill(0),
        }
    }

    fn write_phys(&mut self, pa: u64, data: &[u8]) {
        let offset = (pa & 0xfff) as usize;
        self.frame(pa)[offset..offset + data.len()].copy_from_slice(data);
    }

    fn read_phys_u64(&self, pa: u64) -> u64 {
        let mut bytes = [0; 8];
        self.read_phys(pa, &mut bytes);
        u64::from_le_bytes(bytes)
    }

    fn write_phys_u64(&mut self, pa: u64, value: u64) {
        self.write_phys(pa, &value.to_le_bytes());
    }

    fn zero_frame(&mut self, pa: u64) {
        self.frame(pa).fill(0);
    }
}

impl MemoryMaintenance for FakeMachine {
    fn sync_instruction_cache(&mut self, pa: u64) {
        assert!((RAM.start..RAM.end()).contains(&pa), "synced {pa:#x}");
    }
    fn publish_table_writes(&mut self) {}
    fn flush_tlb_page(&mut self, _asid: u16, _va: u64) {}
    fn flush_tlb_all(&mut self) {}
}

impl Platform for FakeMachine {
    fn console_write(&mut self, text: &str) {
        self.console.push_str(text);
    }
    fn set_fp_access(&mut self, _enabled: bool) {}
    fn fp_access(&self) -> bool {
        false
    }
    fn move_fp_state(&mut self, _outgoing: Option<&mut FpState>, _incoming: &FpState) {}
    #[cfg(feature = "bench-calls")]
    fn set_syscall_floor(&mut self, _on: bool) {}
    fn set_single_step(&mut self, _on: bool) {}
    fn set_interrupt_enabled(&mut self, _id: u32, _enabled: bool) {}
    fn interrupt_lines(&self) -> u32 {
        288
    }
    fn console_intid(&self) -> u32 {
        33
    }
    fn set_physical_timer(&mut self, _ticks: Option<u64>) {}
    fn interrupt_is_pending(&self) -> bool {
        false
    }
    fn take_pending_interrupt(&mut self) -> Option<Interrupt> {
        None
    }
    fn counter(&self) -> u64 {
        0
    }
    fn counter_frequency(&self) -> u64 {
        62_500_000
    }
}

/// A minimal AArch64 executable: one RX page and one RW page of zeros.
fn init_elf() -> &'static [u8] {
    let file = elf_filled(
        CODE,
        &[
            load(PF_R | PF_X, 0x1000, CODE, 0x1000, 0x1000),
            load(PF_R | PF_W, 0x2000, CODE + 0x1000, 0x1000, 0x1000),
        ],
        0x3000,
        |_| 0,
    );
    Box::leak(file.into_boxed_slice())
}

/// The root task (the demo's first step) on the fake machine, driven one
/// syscall at a time.
struct Harness {
    kernel: Box<Kernel>,
    machine: FakeMachine,
    resume: Resume,
}

impl Harness {
    fn root() -> Harness {
        let mut kernel = Box::new(Kernel::new());
        let mut machine = FakeMachine::default();
        let first_page = PhysRange {
            start: RAM.start,
            size: 4096,
        };
        kernel.frames_mut().add_ram(RAM, &[first_page]);
        let memory = microkernel::cap::Memory::on_heap(RAM.start, RAM.size as usize);
        assert!(kernel.install_object_memory(memory));
        kernel.set_device_memory(&[ONE_PAGE_DEVICE, VIRTIO]);
        let resume = kernel.start(&mut machine, AsidBits::Eight, init_elf(), None);
        let mut h = Harness {
            kernel,
            machine,
            resume,
        };
        // The tests' payers: a 64 KiB and a one-page RAM Untyped, from
        // the largest the root has.
        let info = h.boot_info();
        let largest = (0..info.untypeds.len())
            .max_by_key(|i| info.untypeds[*i].size_bits)
            .expect("RAM Untypeds");
        let ram = BootInfo::untyped_slot(largest);
        assert_eq!(h.retype(ram, CapType::Untyped, 16, PAYER, 1, 0), OK);
        assert_eq!(h.retype(ram, CapType::Untyped, 12, SMALL_PAYER, 1, 0), OK);
        h.check();
        h
    }

    fn context(&mut self) -> &mut UserContext {
        match self.resume {
            // SAFETY (test): the pointer is into the boxed kernel, which
            // lives as long as the harness, and no other reference is live.
            Resume::User { context, .. } => unsafe { &mut *context },
            ref other => panic!("expected a return to user, got {other:?}"),
        }
    }

    fn syscall(&mut self, number: Syscall, args: [u64; 7]) -> u64 {
        let ctx = self.context();
        ctx.x[8] = number.number();
        ctx.x[..7].copy_from_slice(&args);
        let before = ctx as *mut UserContext;
        self.resume = self.kernel.handle_el0_sync(&mut self.machine, SVC, 0);
        match self.resume {
            Resume::User { context, .. } if context == before => self.context().x[0],
            _ => u64::MAX,
        }
    }

    /// `Retype` from the Untyped in `untyped`, `x6` = `payer`.
    fn retype(
        &mut self,
        untyped: u64,
        object: CapType,
        size: u64,
        target: u64,
        count: u64,
        payer: u64,
    ) -> u64 {
        let object = u64::from(object.raw());
        self.syscall(
            Syscall::Retype,
            [untyped, 0, object, size, target, count, payer],
        )
    }

    /// Device Frames from the `device`th device Untyped, paid by `payer`.
    fn device_frames(&mut self, device: usize, target: u64, count: u64, payer: u64) -> u64 {
        let slot = BootInfo::device_untyped_slot(device);
        self.retype(slot, CapType::Frame, 0, target, count, payer)
    }

    fn map(&mut self, frame: u64, va: u64, rights: u64) -> u64 {
        self.syscall(
            Syscall::FrameMap,
            [frame, 0, ROOT_VSPACE_SLOT, va, rights, 0, 0],
        )
    }

    fn cap(&mut self, call: Syscall, slot: u64) -> u64 {
        self.syscall(call, [ROOT_CNODE_SLOT, 0, slot, 0, 0, 0, 0])
    }

    fn boot_info(&self) -> BootInfo {
        let root = self.kernel.current().expect("the root runs");
        let buffer = self
            .kernel
            .thread(root)
            .ipc_buffer()
            .expect("an IPC buffer");
        let words: Vec<u64> = (0..BOOT_INFO_WORDS as u64)
            .map(|i| self.machine.read_phys_u64(buffer + 8 * i))
            .collect();
        BootInfo::decode(&words).expect("a well-formed BootInfo")
    }

    /// Where `va` leads in the root's space.
    fn translation(&self, va: u64) -> Option<(u64, arch::mmu::Permissions)> {
        let root = self.kernel.current().expect("the root runs");
        self.kernel
            .thread_space(root)
            .and_then(|space| space.translate_user(&self.machine, va))
    }

    fn check(&self) {
        assert_eq!(self.kernel.check_invariants(), Ok(()));
    }
}

fn err(code: ErrorCode) -> u64 {
    code.raw()
}

#[test]
fn the_root_gets_the_device_memory_as_device_untypeds_listed_in_boot_info() {
    let mut h = Harness::root();
    let info = h.boot_info();
    let bases: Vec<(u64, u8)> = info.devices.iter().map(|d| (d.base, d.size_bits)).collect();
    assert_eq!(bases, [(0x0900_1000, 12), (0x0a00_0000, 25)]);
    assert_eq!(info.device_covering(0x0a00_0000), Some(1));
    // The slot after the last device Untyped is empty.
    assert_eq!(
        h.device_frames(2, TARGET, 1, PAYER),
        err(ErrorCode::InvalidCapability)
    );
    h.check();
}

#[test]
fn a_device_frame_is_paid_by_a_ram_untyped_and_mapped_as_device_memory() {
    let mut h = Harness::root();
    assert_eq!(h.device_frames(1, TARGET, 2, PAYER), OK);
    h.check();
    assert_eq!(h.map(TARGET, VA, R), OK);
    let (pa, permissions) = h.translation(VA).expect("mapped");
    assert_eq!(pa, VIRTIO.start, "the first page of the block");
    assert_eq!(permissions.memory(), MemoryKind::Device);
    assert_eq!(permissions.access(), Access::ReadOnly);
    assert!(!permissions.is_executable());
    assert_eq!(h.map(TARGET + 1, VA + 0x1000, RW), OK);
    let (pa, permissions) = h.translation(VA + 0x1000).expect("mapped");
    assert_eq!(pa, VIRTIO.start + 0x1000);
    assert_eq!(permissions.memory(), MemoryKind::Device);
    assert_eq!(permissions.access(), Access::ReadWrite);
    h.check();
    // The kernel never reads or writes device memory for user space: a
    // pointer into it is no user memory to a syscall.
    assert_eq!(
        h.syscall(Syscall::DebugPrint, [1, 0, VA, 8, 0, 0, 0]),
        err(ErrorCode::InvalidAddress)
    );
    // Nor is a device Frame an IPC buffer.
    assert_eq!(h.retype(PAYER, CapType::Tcb, 0, TARGET + 2, 1, 0), OK);
    let set_space = [
        TARGET + 2,
        VA + 0x2000,
        ROOT_VSPACE_SLOT,
        TARGET + 1,
        u64::MAX,
        CODE,
        0,
    ];
    assert_eq!(h.frame_unmap(TARGET + 1), OK);
    assert_eq!(
        h.syscall(Syscall::TcbSetSpace, set_space),
        err(ErrorCode::InvalidArgument)
    );
    h.check();
}

impl Harness {
    fn frame_unmap(&mut self, frame: u64) -> u64 {
        self.syscall(Syscall::FrameUnmap, [frame, 0, 0, 0, 0, 0, 0])
    }
}

#[test]
fn a_device_frame_is_never_executable() {
    let mut h = Harness::root();
    assert_eq!(h.device_frames(1, TARGET, 1, PAYER), OK);
    assert_eq!(h.map(TARGET, VA, RX), err(ErrorCode::InvalidArgument));
    assert_eq!(h.translation(VA), None, "nothing was mapped");
    assert_eq!(h.map(TARGET, VA, R), OK, "the frame was left unmapped");
    h.check();
}

#[test]
fn device_memory_makes_only_frames_and_every_refusal_changes_nothing() {
    let mut h = Harness::root();
    let device = BootInfo::device_untyped_slot(1);
    for (object, size) in [
        (CapType::Tcb, 0),
        (CapType::CNode, 4),
        (CapType::Endpoint, 0),
        (CapType::Untyped, 12),
        (CapType::VSpace, 1),
        (CapType::Notification, 0),
    ] {
        assert_eq!(
            h.retype(device, object, size, TARGET, 1, PAYER),
            err(ErrorCode::InvalidArgument),
            "{object:?} from a device Untyped"
        );
    }
    assert_eq!(
        h.retype(device, CapType::Frame, 1, TARGET, 1, PAYER),
        err(ErrorCode::InvalidArgument),
        "a Frame's size parameter is 0"
    );
    // The payer: missing, of the wrong type, without `write`, a device
    // Untyped, too small.
    assert_eq!(
        h.device_frames(1, TARGET, 1, 4000),
        err(ErrorCode::InvalidCapability)
    );
    assert_eq!(
        h.device_frames(1, TARGET, 1, 1 << 20),
        err(ErrorCode::InvalidCapability)
    );
    assert_eq!(
        h.device_frames(1, TARGET, 1, ROOT_TCB_SLOT),
        err(ErrorCode::WrongCapabilityType)
    );
    let read_only = TARGET + 100;
    assert_eq!(
        h.syscall(
            Syscall::CapMint,
            [ROOT_CNODE_SLOT, 0, PAYER, read_only, 1, 0, 0]
        ),
        OK
    );
    assert_eq!(
        h.device_frames(1, TARGET, 1, read_only),
        err(ErrorCode::MissingRights)
    );
    assert_eq!(
        h.device_frames(1, TARGET, 1, BootInfo::device_untyped_slot(0)),
        err(ErrorCode::InvalidArgument),
        "device memory holds no record"
    );
    assert_eq!(
        h.device_frames(1, TARGET, 64, SMALL_PAYER),
        err(ErrorCode::NotEnoughMemory),
        "64 records of 128 bytes do not fit in a page"
    );
    // The device: one page holds one Frame.
    assert_eq!(
        h.device_frames(0, TARGET, 2, PAYER),
        err(ErrorCode::NotEnoughMemory)
    );
    // A RAM Untyped ignores x6; a Frame from a device needs write on it.
    assert_eq!(
        h.device_frames(1, TARGET, 65, PAYER),
        err(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        h.device_frames(1, ROOT_IPC_BUFFER_SLOT, 1, PAYER),
        err(ErrorCode::SlotOccupied)
    );
    h.check();
    // Nothing was taken: the first Frame is the block's first page, and
    // the small payer holds 31 records.
    assert_eq!(h.device_frames(1, TARGET, 31, SMALL_PAYER), OK);
    assert_eq!(h.map(TARGET, VA, RW), OK);
    assert_eq!(h.translation(VA).map(|t| t.0), Some(VIRTIO.start));
    assert_eq!(h.device_frames(0, TARGET + 40, 1, PAYER), OK);
    assert_eq!(
        h.device_frames(0, TARGET + 41, 1, PAYER),
        err(ErrorCode::NotEnoughMemory)
    );
    h.check();
}

/// Maps two device Frames (paid by `PAYER`) and a RAM Frame next to them.
fn mapped() -> Harness {
    let mut h = Harness::root();
    assert_eq!(h.device_frames(1, TARGET, 2, PAYER), OK);
    assert_eq!(h.map(TARGET, VA, R), OK);
    // A copy of the second, which goes with it.
    assert_eq!(
        h.syscall(
            Syscall::CapCopy,
            [ROOT_CNODE_SLOT, 0, TARGET + 1, TARGET + 5, 0, 0, 0]
        ),
        OK
    );
    assert_eq!(h.map(TARGET + 5, VA + 0x1000, RW), OK);
    assert_eq!(h.retype(PAYER, CapType::Frame, 0, TARGET + 2, 1, 0), OK);
    assert_eq!(h.map(TARGET + 2, VA + 0x2000, RW), OK);
    h.check();
    h
}

/// The device Frames are gone and unmapped; the RAM Frame is not.
fn device_frames_gone(h: &mut Harness) {
    h.check();
    for slot in [TARGET, TARGET + 1, TARGET + 5] {
        assert_eq!(
            h.frame_unmap(slot),
            err(ErrorCode::InvalidCapability),
            "slot {slot}"
        );
    }
    assert_eq!(h.translation(VA), None);
    assert_eq!(h.translation(VA + 0x1000), None);
}

#[test]
fn revoking_the_device_untyped_destroys_its_frames_and_frees_their_records() {
    let mut h = mapped();
    assert_eq!(
        h.cap(Syscall::CapRevoke, BootInfo::device_untyped_slot(1)),
        OK
    );
    device_frames_gone(&mut h);
    assert!(h.translation(VA + 0x2000).is_some(), "the RAM Frame stays");
    // The device's pages are free again, from its first.
    assert_eq!(h.device_frames(1, TARGET, 1, PAYER), OK);
    assert_eq!(h.map(TARGET, VA, R), OK);
    assert_eq!(h.translation(VA).map(|t| t.0), Some(VIRTIO.start));
    h.check();
}

#[test]
fn revoking_the_ram_untyped_that_paid_destroys_the_device_frames() {
    let mut h = mapped();
    assert_eq!(h.cap(Syscall::CapRevoke, PAYER), OK);
    device_frames_gone(&mut h);
    assert_eq!(h.translation(VA + 0x2000), None, "the RAM Frame went too");
    // The payer has all of its memory back (64 KiB: 15 frames and their
    // records), and the device its pages.
    assert_eq!(h.retype(PAYER, CapType::Frame, 0, TARGET, 15, 0), OK);
    assert_eq!(h.device_frames(1, TARGET + 20, 1, SMALL_PAYER), OK);
    assert_eq!(h.map(TARGET + 20, VA, R), OK);
    assert_eq!(h.translation(VA).map(|t| t.0), Some(VIRTIO.start));
    h.check();
}

#[test]
fn deleting_the_payer_destroys_the_device_frames_deleting_a_device_copy_does_not() {
    let mut h = mapped();
    // The kernel keeps the device Untyped's original: deleting the root's
    // copy destroys nothing.
    assert_eq!(
        h.cap(Syscall::CapDelete, BootInfo::device_untyped_slot(1)),
        OK
    );
    h.check();
    assert!(h.translation(VA).is_some());
    assert_eq!(h.frame_unmap(TARGET), OK);
    // The payer's last capability: its objects go, device Frames included.
    assert_eq!(h.cap(Syscall::CapDelete, PAYER), OK);
    device_frames_gone(&mut h);
}

#[test]
fn the_root_ends_with_device_frames_mapped_and_the_run_ends_cleanly() {
    let mut h = mapped();
    h.syscall(Syscall::Exit, [0; 7]);
    // The root's end is the run's: its status, and no line for an exit 0.
    assert_eq!(h.resume, Resume::Shutdown { status: 0 });
    assert!(
        !h.machine.console.contains("the root task ended"),
        "{}",
        h.machine.console
    );
    // What the root made went with its CNode, the device Frames (children
    // of its RAM payer's capability) included, and nothing of the kernel
    // broke (the fake machine panics on any access to device memory).
    h.check();
    assert_eq!(h.kernel.frames().lost(), 0);
}
