//! The kernel core's response to events from EL0, on the host: a fake
//! platform stands in for the hardware, and a small hand-made ELF for init.
//!
//! These check the guarantees of docs/architecture.md at the level of kernel
//! state: a syscall's result lands in x0, a fault stops only its thread,
//! user pointers are checked, the timer preempts round robin, and the run
//! ends with the root task's status.
//!
//! The kernel starts one thread, the root task (`docs/abi.md`, "The root
//! task's start"); the harness plays it. Tests that need more threads have
//! the root make them from its Untyped as user space does (`Retype`,
//! `TcbConfigure`, `TcbSetSpace`, `TcbResume`: `Harness::scene`).

use abi::bootinfo::SYSTEM_IMAGE_ADDRESS;
use abi::bootinfo::{BootInfo, BOOT_INFO_WORDS, ROOT_ARGUMENT, ROOT_CONSOLE_SLOT};
use abi::bootinfo::{ROOT_FIRST_FREE_SLOT, ROOT_IRQ_SLOT, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::{CapType, Rights};
use abi::elf::writer::{elf_filled, load, PF_R, PF_W, PF_X};
use abi::tcb::{NO_CAP, NO_PROGRAM};
use abi::{ErrorCode, Syscall};
use arch::boards::PhysRange;
use arch::context::{FpState, UserContext};
use arch::mmu::AsidBits;
use microkernel::address_space::USER_STACK_TOP;
use microkernel::kernel::{Interrupt, Kernel, LeanSyscall, Resume, EXIT_FAILURE, EXIT_SUCCESS};
use microkernel::platform::{MemoryMaintenance, PhysMemory, Platform};
use microkernel::thread::{ThreadId, ThreadState};
use std::collections::HashMap;

mod console_and_inspection;
mod maintenance;
mod policy_servers;
mod rseq;

const RAM: PhysRange = PhysRange {
    start: 0x1000_0000,
    size: 32 << 20,
};
const SVC: u64 = 0x15 << 26;
/// What a saved register slot the lean entry did not save holds while
/// its kernel half runs (`Harness::svc`).
const LEAN_SCRIBBLE: u64 = 0xdead_1ea0_dead_1ea0;
/// Data abort from EL0, translation fault level 0, write.
const NULL_WRITE_ESR: u64 = (0x24 << 26) | (1 << 6) | 0b000100;
const CODE: u64 = 0x40_0000;
const DATA: u64 = 0x40_1000;
const GREETING: &[u8] = b"hello from the fake EL0\n";
const CONSOLE: u64 = abi::task::CONSOLE_SLOT;
/// A copy of the root's console without the read right
/// (`Harness::write_only_console`).
const WRITE_ONLY_CONSOLE: u64 = ROOT_FIRST_FREE_SLOT + 199;
/// The EL1 physical timer's interrupt, whose IrqHandler the root holds.
const TIMER_INTID: u32 = 30;
/// Where the tests' system image lies in RAM (16 MiB in).
const SYSTEM_IMAGE: u64 = 0x1100_0000;

#[derive(Default)]
struct FakeMachine {
    frames: HashMap<u64, Vec<u8>>,
    console: String,
    tlb_flushes: usize,
    fp_switches: usize,
    /// Every `flush_tlb_page`: (ASID, address).
    page_flushes: Vec<(u16, u64)>,
    /// MDSCR_EL1.SS as the kernel last set it.
    single_step: bool,
    /// The EL1 physical timer as the kernel last set it.
    physical_timer: Option<u64>,
    /// Interrupts waiting to be taken at a preemption point.
    pending_interrupts: Vec<Interrupt>,
    /// Stores and cache/TLB maintenance, checked at every return to EL0.
    maintenance: maintenance::Recorder,
    /// Every `arm_slice_end`: its ticks from now.
    slice_ends: Vec<u64>,
    /// Everything the console was sent, text and raw bytes, in order.
    console_bytes: Vec<u8>,
    /// Input waiting in the console UART.
    console_input: std::collections::VecDeque<u8>,
    /// The UART's receive interrupt is on.
    console_input_started: bool,
    /// Interrupt lines as the kernel last set them.
    enabled_interrupts: std::collections::BTreeSet<u32>,
}

impl FakeMachine {
    fn frame(&mut self, pa: u64) -> &mut Vec<u8> {
        let base = pa & !0xfff;
        assert!(
            (RAM.start..RAM.end()).contains(&base),
            "access outside RAM: {pa:#x}"
        );
        self.frames.entry(base).or_insert_with(|| vec![0; 4096])
    }
}

impl FakeMachine {
    /// Puts `bytes` in RAM from `pa` (page-aligned), as a loader would.
    fn load(&mut self, pa: u64, bytes: &[u8]) {
        for (index, page) in bytes.chunks(4096).enumerate() {
            self.write_phys(pa + 4096 * index as u64, page);
        }
    }
}

impl PhysMemory for FakeMachine {
    fn read_phys(&self, pa: u64, out: &mut [u8]) {
        let base = pa & !0xfff;
        let offset = (pa & 0xfff) as usize;
        match self.frames.get(&base) {
            Some(frame) => out.copy_from_slice(&frame[offset..offset + out.len()]),
            None => out.fill(0),
        }
    }

    fn write_phys(&mut self, pa: u64, data: &[u8]) {
        let offset = (pa & 0xfff) as usize;
        self.frame(pa)[offset..offset + data.len()].copy_from_slice(data);
        self.maintenance.stored(pa, data.len() as u64);
    }

    fn read_phys_u64(&self, pa: u64) -> u64 {
        let mut bytes = [0; 8];
        self.read_phys(pa, &mut bytes);
        u64::from_le_bytes(bytes)
    }

    fn write_phys_u64(&mut self, pa: u64, value: u64) {
        self.write_phys(pa, &value.to_le_bytes());
        self.maintenance.stored_word(pa);
    }

    fn zero_frame(&mut self, pa: u64) {
        self.frame(pa).fill(0);
        self.maintenance.stored(pa, 4096);
    }
}

impl MemoryMaintenance for FakeMachine {
    fn sync_instruction_cache(&mut self, pa: u64) {
        self.maintenance.synced(pa);
    }

    fn publish_table_writes(&mut self) {
        self.maintenance.published();
    }

    fn flush_tlb_page(&mut self, asid: u16, va: u64) {
        self.tlb_flushes += 1;
        self.page_flushes.push((asid, va));
        self.maintenance.published();
    }

    fn flush_tlb_all(&mut self) {
        self.tlb_flushes += 1;
        self.maintenance.published();
    }
}

impl Platform for FakeMachine {
    fn console_write(&mut self, text: &str) {
        self.console.push_str(text);
        self.console_bytes.extend_from_slice(text.as_bytes());
    }

    fn console_write_bytes(&mut self, bytes: &[u8]) {
        self.console_bytes.extend_from_slice(bytes);
    }

    fn console_take_input(&mut self, out: &mut [u8]) -> usize {
        let taken = out.len().min(self.console_input.len());
        for (slot, byte) in out.iter_mut().zip(self.console_input.drain(..taken)) {
            *slot = byte;
        }
        taken
    }

    fn console_start_input(&mut self) {
        self.console_input_started = true;
    }

    fn set_fp_access(&mut self, _enabled: bool) {}
    fn fp_access(&self) -> bool {
        false
    }

    fn move_fp_state(&mut self, _outgoing: Option<&mut FpState>, _incoming: &FpState) {
        self.fp_switches += 1;
    }

    #[cfg(feature = "bench-calls")]
    fn set_syscall_floor(&mut self, _on: bool) {}

    fn set_single_step(&mut self, on: bool) {
        self.single_step = on;
    }

    fn set_interrupt_enabled(&mut self, id: u32, enabled: bool) {
        if enabled {
            self.enabled_interrupts.insert(id);
        } else {
            self.enabled_interrupts.remove(&id);
        }
    }

    fn interrupt_lines(&self) -> u32 {
        // QEMU virt's GICv2: 32 private and 256 shared interrupts.
        288
    }

    fn console_intid(&self) -> u32 {
        33
    }

    fn set_physical_timer(&mut self, ticks: Option<u64>) {
        self.physical_timer = ticks;
    }

    fn interrupt_is_pending(&self) -> bool {
        !self.pending_interrupts.is_empty()
    }

    fn take_pending_interrupt(&mut self) -> Option<Interrupt> {
        (!self.pending_interrupts.is_empty()).then(|| self.pending_interrupts.remove(0))
    }

    fn counter(&self) -> u64 {
        0
    }

    fn counter_frequency(&self) -> u64 {
        62_500_000
    }

    fn arm_slice_end(&mut self, ticks: u64) -> bool {
        self.slice_ends.push(ticks);
        true
    }
}

/// A minimal AArch64 executable: one RX page of code, one RW page holding
/// the greeting; every other byte 0.
fn init_elf() -> &'static [u8] {
    let mut file = elf_filled(
        CODE,
        &[
            load(PF_R | PF_X, 0x1000, CODE, 0x1000, 0x1000),
            load(PF_R | PF_W, 0x2000, DATA, 0x1000, 0x1000),
        ],
        0x3000,
        |_| 0,
    );
    file[0x2000..0x2000 + GREETING.len()].copy_from_slice(GREETING);
    Box::leak(file.into_boxed_slice())
}

struct Harness {
    kernel: Box<Kernel>,
    machine: FakeMachine,
    resume: Resume,
    /// Executable pages the returns to EL0 so far found fetchable.
    executable_pages_checked: usize,
    /// The root's next free slot (for the objects `make` retypes).
    next_slot: u64,
    /// SVCs take the lean entry where the vector would send them (the
    /// default); `false`: every SVC the generic entry, for comparison.
    lean: bool,
}

impl Harness {
    /// The kernel started, the root task on the CPU.
    fn start() -> Harness {
        Harness::start_with_image(None)
    }

    /// The kernel started with `image` in RAM at `SYSTEM_IMAGE` (kept
    /// from the pool as the kernel binary keeps it, if `kept`).
    fn start_with_image(image: Option<(&[u8], bool)>) -> Harness {
        let mut kernel = Box::new(Kernel::new());
        let mut machine = FakeMachine::default();
        // As the kernel binary does: no page of the pool where granule 0
        // of object memory is (it holds no record).
        let first_page = PhysRange {
            start: RAM.start,
            size: 4096,
        };
        let image_ram = image.map(|(bytes, _)| {
            machine.load(SYSTEM_IMAGE, bytes);
            PhysRange {
                start: SYSTEM_IMAGE,
                size: bytes.len() as u64,
            }
        });
        let mut reserved = vec![first_page];
        if let (Some(range), Some((_, true))) = (image_ram, image) {
            reserved.push(range);
        }
        kernel.frames_mut().add_ram(RAM, &reserved);
        let memory = microkernel::cap::Memory::on_heap(RAM.start, RAM.size as usize);
        assert!(kernel.install_object_memory(memory));
        let resume = kernel.start(&mut machine, AsidBits::Eight, init_elf(), image_ram);
        let mut harness = Harness {
            kernel,
            machine,
            resume: Resume::Idle,
            executable_pages_checked: 0,
            next_slot: ROOT_FIRST_FREE_SLOT + 200,
            lean: true,
        };
        harness.resumed(resume);
        harness
    }

    /// Where the kernel sent the CPU. A return to EL0 must find the
    /// space's tables published and its code fetchable (`maintenance`).
    fn resumed(&mut self, resume: Resume) {
        self.resume = resume;
        if let Resume::User { ttbr0, .. } = self.resume {
            let root = ttbr0 & 0x0000_ffff_ffff_f000;
            let frames = &self.machine;
            match self
                .machine
                .maintenance
                .check_space(|pa| frames.read_phys_u64(pa), root)
            {
                Ok(pages) => self.executable_pages_checked += pages,
                Err(broken) => panic!("returning to EL0: {broken}"),
            }
        }
    }

    /// The registers of the thread the kernel resumed.
    fn context(&mut self) -> &mut UserContext {
        match self.resume {
            // SAFETY (test): the pointer is into the boxed kernel, which
            // lives as long as the harness, and no other reference is live.
            Resume::User { context, .. } => unsafe { &mut *context },
            ref other => panic!(
                "expected a return to user, got {other:?}\n{}",
                self.machine.console
            ),
        }
    }

    fn syscall(&mut self, number: u64, args: [u64; 4]) -> u64 {
        let ctx = self.context();
        ctx.x[8] = number;
        ctx.x[0] = args[0];
        ctx.x[2] = args[1];
        ctx.x[3] = args[2];
        ctx.x[4] = args[3];
        let before = ctx as *mut UserContext;
        let resume = self.svc(before);
        self.resumed(resume);
        match self.resume {
            Resume::User { context, .. } if context == before => self.context().x[0],
            _ => u64::MAX,
        }
    }

    /// The SVC of the thread whose registers are at `context`, as the
    /// vector takes it: by the lean entry when the thread has no work or
    /// policy alone (`el0_svc_generic`), or audit alone (`el0_svc_audited`,
    /// its own kernel half), which save only x0..x18 and x30. The rest
    /// stays in the CPU: here its slots are scribbled over while the
    /// kernel's half runs, so a syscall that read them would see garbage,
    /// and put back before the thread returns or the frame is saved whole
    /// (so a write the lean entry's kernel side made to them is lost, as
    /// on the board).
    fn svc(&mut self, context: *mut UserContext) -> Resume {
        // SAFETY (test): the pointer is into the boxed kernel (a live
        // thread's context); no other reference to it is in use here.
        let ctx = unsafe { &mut *context };
        // An audit-only or policy-only thread's number of 64 or more takes
        // the full save (the vector's refusal test reads a 64-bit mask
        // first); the kernel's half decides the rest.
        let work = self
            .kernel
            .current()
            .map(|thread| self.kernel.thread(thread).work());
        let lean = work.is_some_and(|work| {
            let lean_work = work == entry::WorkFlags::AUDIT || work == entry::WorkFlags::POLICY;
            work.is_empty() || lean_work && ctx.x[8] < 64
        });
        if !(lean && self.lean) {
            return self.kernel.handle_el0_sync(&mut self.machine, SVC, 0);
        }
        let kept = *ctx;
        ctx.x[19..30].fill(LEAN_SCRIBBLE);
        (ctx.sp, ctx.pc, ctx.spsr, ctx.tpidr) =
            (LEAN_SCRIBBLE, LEAN_SCRIBBLE, LEAN_SCRIBBLE, LEAN_SCRIBBLE);
        let lean = if work == Some(entry::WorkFlags::AUDIT) {
            self.kernel.lean_audited_syscall(&mut self.machine, SVC)
        } else {
            self.kernel.lean_syscall(&mut self.machine, SVC)
        };
        // SAFETY (test): as above; the kernel's borrow has ended.
        let ctx = unsafe { &mut *context };
        ctx.x[19..30].copy_from_slice(&kept.x[19..30]);
        (ctx.sp, ctx.pc, ctx.spsr, ctx.tpidr) = (kept.sp, kept.pc, kept.spsr, kept.tpidr);
        match lean {
            LeanSyscall::Returns { ttbr0 } => {
                // The stub reads 0 and 1 as the other two answers.
                assert!(ttbr0 >> 48 != 0, "a space's TTBR0 has a nonzero ASID");
                Resume::User { context, ttbr0 }
            }
            LeanSyscall::NotLean => self.kernel.handle_el0_sync(&mut self.machine, SVC, 0),
            LeanSyscall::Finish => self.kernel.finish_lean_syscall(&mut self.machine),
        }
    }

    /// A syscall that must succeed in the thread that makes it.
    fn ok(&mut self, number: u64, args: [u64; 4]) {
        let result = self.syscall(number, args);
        assert_eq!(
            result,
            ErrorCode::Ok.raw(),
            "syscall {number} {args:x?}\n{}",
            self.machine.console
        );
    }

    fn exit(&mut self, status: i64) {
        self.syscall(Syscall::Exit.number(), [0, status as u64, 0, 0]);
    }

    fn fault(&mut self, esr: u64, far: u64) {
        let resume = self.kernel.handle_el0_sync(&mut self.machine, esr, far);
        self.resumed(resume);
        assert_eq!(self.kernel.check_invariants(), Ok(()));
    }

    fn tick(&mut self) {
        let resume = self
            .kernel
            .handle_el0_interrupt(&mut self.machine, Some(Interrupt::Timer));
        self.resumed(resume);
    }

    /// The root's `BootInfo` (read from its IPC buffer while it runs).
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

    /// The root's slot of its largest Untyped.
    fn largest_untyped(&self) -> u64 {
        let info = self.boot_info();
        let (index, _) = info
            .untypeds
            .iter()
            .enumerate()
            .max_by_key(|(_, u)| u.bytes())
            .expect("the root has Untypeds");
        BootInfo::untyped_slot(index)
    }

    /// The object the current thread's capability in `slot` names.
    fn object_of(&self, slot: u64) -> microkernel::cap::ObjectId {
        let current = self.kernel.current().expect("a thread runs");
        let cnode = self.kernel.thread(current).cspace().expect("a CSpace");
        let objects = self.kernel.objects();
        objects
            .lookup(objects.slot(cnode, slot).unwrap())
            .unwrap()
            .object()
    }

    /// The root (on the CPU) retypes one object of `object` (size
    /// parameter `size`) from its largest Untyped into a free slot of its
    /// own: that slot.
    fn make(&mut self, object: CapType, size: u64) -> u64 {
        let untyped = self.largest_untyped();
        let slot = self.next_slot;
        self.next_slot += 1;
        self.context().x[5] = 1;
        self.ok(
            Syscall::Retype.number(),
            [untyped, u64::from(object.raw()), size, slot],
        );
        slot
    }

    /// `CapMintInto`: the current thread's capability in `source`, with
    /// `rights` and `badge` (0: none), into slot `target` of the CNode its
    /// capability in `cnode` names.
    fn mint_into(&mut self, cnode: u64, source: u64, target: u64, rights: Rights, badge: u64) {
        let ctx = self.context();
        ctx.x[5] = badge;
        ctx.x[6] = u64::from(badge != 0);
        self.ok(
            Syscall::CapMintInto.number(),
            [cnode, source, target, u64::from(rights.raw())],
        );
    }

    /// The root (on the CPU) makes the threads and objects of `scene`
    /// from its Untyped, as a supervisor in user space does, starts them
    /// in order and waits for good on an endpoint of its own, so that
    /// only the scene's threads run (the most urgent first). Returns the
    /// threads.
    fn scene(&mut self, scene: &Scene) -> Vec<ThreadId> {
        let endpoints: Vec<u64> = (0..scene.endpoints)
            .map(|_| self.make(CapType::Endpoint, 0))
            .collect();
        let notifications: Vec<u64> = (0..scene.notifications)
            .map(|_| self.make(CapType::Notification, 0))
            .collect();
        let untyped = (scene.untyped_pages > 0).then(|| {
            let bits = (scene.untyped_pages * 4096)
                .next_power_of_two()
                .trailing_zeros();
            self.make(CapType::Untyped, u64::from(bits))
        });
        let mut made = vec![];
        for (index, thread) in scene.threads.iter().enumerate() {
            let cnode = self.make(CapType::CNode, u64::from(scene.radix));
            let tcb = self.make(CapType::Tcb, 0);
            let vspace = if thread.own_space {
                self.make(CapType::VSpace, 8)
            } else {
                ROOT_VSPACE_SLOT
            };
            self.mint_into(cnode, cnode, 0, Rights::READ_WRITE, 0);
            self.mint_into(cnode, ROOT_CONSOLE_SLOT, 1, Rights::WRITE, 0);
            let fault = scene
                .fault_endpoints
                .iter()
                .find(|(t, _)| usize::from(*t) == index)
                .map_or(NO_CAP, |(_, e)| endpoints[usize::from(*e)]);
            self.ok(
                Syscall::TcbConfigure.number(),
                [tcb, cnode, u64::from(thread.priority), NO_PROGRAM],
            );
            let ctx = self.context();
            ctx.x[1] = 0;
            ctx.x[5] = CODE;
            ctx.x[6] = USER_STACK_TOP;
            ctx.x[7] = thread.x0;
            self.ok(Syscall::TcbSetSpace.number(), [tcb, vspace, NO_CAP, fault]);
            let id = ThreadId::of(self.object_of(tcb));
            made.push((id, cnode, tcb, vspace));
        }
        let largest = self.largest_untyped();
        let source = |grant: &Grant| match grant.object {
            Object::Endpoint(i) => endpoints[usize::from(i)],
            Object::Notification(i) => notifications[usize::from(i)],
            Object::Untyped => untyped.expect("the scene has an Untyped"),
            Object::Irq => ROOT_IRQ_SLOT,
            Object::Tcb(i) => made[usize::from(i)].2,
            Object::VSpace(i) => made[usize::from(i)].3,
            Object::CNode(i) => made[usize::from(i)].1,
            Object::LargestUntyped => largest,
        };
        for grant in scene.grants.iter().filter(|g| !g.original) {
            let (_, cnode, ..) = made[usize::from(grant.thread)];
            self.mint_into(cnode, source(grant), grant.slot, grant.rights, grant.badge);
        }
        // Every thread queued in order before any runs, then the root
        // waits where nothing will ever come.
        self.ok(
            Syscall::TcbSetPriority.number(),
            [ROOT_TCB_SLOT, abi::tcb::MAX_PRIORITY, 0, 0],
        );
        for &(_, _, tcb, _) in &made {
            self.ok(Syscall::TcbResume.number(), [tcb, 0, 0, 0]);
        }
        // Originals handed over: the thread's delete or revoke destroys
        // the object.
        for grant in scene.grants.iter().filter(|g| g.original) {
            let (_, cnode, ..) = made[usize::from(grant.thread)];
            self.ok(
                Syscall::CapMoveInto.number(),
                [cnode, source(grant), grant.slot, 0],
            );
        }
        let park = self.make(CapType::Endpoint, 0);
        assert_eq!(
            self.syscall(Syscall::Recv.number(), [park, 0, 0, 0]),
            u64::MAX
        );
        made.into_iter().map(|(id, ..)| id).collect()
    }

    /// The root (on the CPU) mints a copy of its console with only the
    /// write right into `WRITE_ONLY_CONSOLE`, for threads sharing its
    /// CSpace to print tagged lines through: a print through a console
    /// capability with the read right is its holder's, the terminal's
    /// owner, and goes out untagged.
    fn write_only_console(&mut self) {
        self.context().x[6] = 0;
        self.ok(
            Syscall::CapMint.number(),
            [
                0,
                CONSOLE,
                WRITE_ONLY_CONSOLE,
                u64::from(Rights::WRITE.raw()),
            ],
        );
    }

    /// The root (on the CPU) makes one thread of priority `priority` in
    /// its own CSpace and address space, starting at `CODE` with `x0`,
    /// and resumes it: its TCB's slot and the thread.
    fn child(&mut self, priority: u8, x0: u64, fault_endpoint: u64) -> (u64, ThreadId) {
        let tcb = self.make(CapType::Tcb, 0);
        self.ok(
            Syscall::TcbConfigure.number(),
            [tcb, 0, u64::from(priority), NO_PROGRAM],
        );
        let ctx = self.context();
        ctx.x[1] = 0;
        ctx.x[5] = CODE;
        ctx.x[6] = USER_STACK_TOP;
        ctx.x[7] = x0;
        self.ok(
            Syscall::TcbSetSpace.number(),
            [tcb, ROOT_VSPACE_SLOT, NO_CAP, fault_endpoint],
        );
        let id = ThreadId::of(self.object_of(tcb));
        self.ok(Syscall::TcbResume.number(), [tcb, 0, 0, 0]);
        (tcb, id)
    }
}

/// Threads and objects a test's root makes (`Harness::scene`): each
/// thread gets a CNode of its own (slot 0 itself, 1 the console) and the
/// capabilities `grants` lists, as the test driver in init gives a case's.
struct Scene {
    threads: &'static [SceneThread],
    endpoints: u8,
    notifications: u8,
    untyped_pages: u64,
    grants: &'static [Grant],
    /// `(thread, endpoint)`: that thread's fault endpoint (unbadged).
    fault_endpoints: &'static [(u8, u8)],
    /// Radix of every thread's CNode.
    radix: u8,
}

struct SceneThread {
    priority: u8,
    x0: u64,
    /// A VSpace of its own (empty, 8 table pages), else the root's.
    own_space: bool,
}

const fn thread(priority: u8) -> SceneThread {
    SceneThread {
        priority,
        x0: 0,
        own_space: false,
    }
}

#[derive(Clone, Copy)]
enum Object {
    Endpoint(u8),
    Notification(u8),
    Untyped,
    Irq,
    Tcb(u8),
    VSpace(u8),
    CNode(u8),
    /// The root's largest Untyped itself.
    LargestUntyped,
}

struct Grant {
    thread: u8,
    slot: u64,
    object: Object,
    rights: Rights,
    badge: u64,
    /// The original is moved (the thread holds the only capability).
    original: bool,
}

const fn grant(thread: u8, slot: u64, object: Object, rights: Rights, badge: u64) -> Grant {
    Grant {
        thread,
        slot,
        object,
        rights,
        badge,
        original: false,
    }
}

const RECEIVE: Rights = Rights::READ;
const SEND: Rights = Rights::WRITE;
/// The slots of a scene thread's first and second granted capability.
const ENDPOINT_SLOT: u64 = 2;
const SECOND_ENDPOINT_SLOT: u64 = 3;

#[test]
fn the_root_starts_at_the_entry_with_its_argument_and_stack() {
    let mut h = Harness::start();
    let root = h.kernel.current().expect("the root runs");
    assert_eq!(h.kernel.thread(root).name().as_str(), "root");
    assert_eq!(h.kernel.thread(root).priority(), 100);
    assert_eq!(h.kernel.thread(root).mcp(), abi::tcb::MAX_PRIORITY as u8);
    let ctx = *h.context();
    assert_eq!(ctx.pc, CODE);
    assert_eq!(ctx.sp, USER_STACK_TOP);
    assert_eq!(ctx.x[0], ROOT_ARGUMENT);
    assert!(ctx.is_el0_aarch64());
    assert_eq!(
        h.machine.console, "",
        "the kernel prints nothing of its own"
    );
    match h.resume {
        Resume::User { ttbr0, .. } => {
            assert_ne!(ttbr0 >> 48, 0, "user space runs with a non-zero ASID")
        }
        _ => unreachable!(),
    }
}

#[test]
fn syscall_results_land_in_x0_and_only_the_console_owners_lines_are_untagged() {
    let mut h = Harness::start();
    assert_eq!(
        h.syscall(Syscall::Null.number(), [0; 4]),
        ErrorCode::Ok.raw()
    );
    assert_eq!(h.syscall(999, [0; 4]), ErrorCode::InvalidSyscall.raw());
    assert_eq!(
        h.syscall(
            Syscall::DebugPrint.number(),
            [CONSOLE, DATA, GREETING.len() as u64, 0]
        ),
        0
    );
    assert_eq!(h.machine.console, "hello from the fake EL0\n");
    // A thread the root makes prints under its name and number, through
    // a console capability without the read right.
    h.write_only_console();
    let (_, child) = h.child(100, 0, NO_CAP);
    assert_eq!(h.syscall(Syscall::Yield.number(), [0; 4]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(child));
    let number = h.kernel.thread(child).number();
    assert_eq!(
        h.syscall(
            Syscall::DebugPrint.number(),
            [WRITE_ONLY_CONSOLE, DATA, GREETING.len() as u64, 0]
        ),
        0
    );
    assert!(
        h.machine
            .console
            .ends_with(&format!("[task#{number}] hello from the fake EL0\n")),
        "{}",
        h.machine.console
    );
    // Through the console with the read right: untagged, and a backspace
    // goes out as it is; tagged, it is shown as `?` (a line cannot erase
    // its own tag).
    h.poke(DATA + 0x800, b"ab\x08c\n");
    for console in [CONSOLE, WRITE_ONLY_CONSOLE] {
        h.ok(Syscall::DebugPrint.number(), [console, DATA + 0x800, 5, 0]);
    }
    assert!(
        h.machine
            .console
            .ends_with(&format!("\nab\x08c\n[task#{number}] ab?c\n")),
        "{:?}",
        h.machine.console
    );
}

#[test]
fn user_pointers_are_checked_not_dereferenced() {
    let mut h = Harness::start();
    let print = Syscall::DebugPrint.number();
    // Unmapped user page, the page after the data page, a kernel address,
    // and a range running off the top of the stack.
    assert_eq!(
        h.syscall(print, [CONSOLE, 0x1000, 8, 0]),
        ErrorCode::InvalidAddress.raw()
    );
    assert_eq!(
        h.syscall(print, [CONSOLE, DATA + 0xffc, 8, 0]),
        ErrorCode::InvalidAddress.raw()
    );
    assert_eq!(
        h.syscall(print, [CONSOLE, 0xffff_0000_0000_0000, 8, 0]),
        ErrorCode::InvalidAddress.raw()
    );
    assert_eq!(
        h.syscall(print, [CONSOLE, USER_STACK_TOP - 4, 8, 0]),
        ErrorCode::InvalidAddress.raw()
    );
    assert_eq!(
        h.syscall(print, [CONSOLE, DATA, 257, 0]),
        ErrorCode::InvalidArgument.raw()
    );
    // The console capability gates printing.
    assert_eq!(
        h.syscall(print, [9, CODE, 4, 0]),
        ErrorCode::InvalidCapability.raw()
    );
    assert_eq!(
        h.syscall(print, [0, CODE, 4, 0]),
        ErrorCode::WrongCapabilityType.raw()
    );
    // The code page is readable from EL0, so printing from it is fine.
    assert_eq!(h.syscall(print, [CONSOLE, CODE, 4, 0]), ErrorCode::Ok.raw());
}

#[test]
fn a_fault_stops_only_the_faulting_thread_and_the_root_goes_on() {
    let mut h = Harness::start();
    let root = h.kernel.current().unwrap();
    let (_, child) = h.child(100, 0, NO_CAP);
    assert_eq!(h.syscall(Syscall::Yield.number(), [0; 4]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(child));
    h.fault(NULL_WRITE_ESR, 0);
    let number = h.kernel.thread(child).number();
    assert!(
        h.machine.console.contains(&format!(
            "[kernel] thread task#{number} stopped: data abort (EL0), translation fault at level 0, write, address 0x0"
        )),
        "{}",
        h.machine.console
    );
    assert_eq!(h.kernel.thread(child).state(), ThreadState::Ended);
    // The root runs on.
    assert_eq!(h.kernel.current(), Some(root));
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), 0);
}

#[test]
fn the_run_ends_with_the_roots_status_and_says_how_it_ended_unless_it_exited_0() {
    // An exit with 0: success, and no line.
    let mut h = Harness::start();
    h.exit(0);
    assert_eq!(
        h.resume,
        Resume::Shutdown {
            status: EXIT_SUCCESS
        }
    );
    assert_eq!(h.machine.console, "");
    // Any other status: failure, said once.
    let mut h = Harness::start();
    h.exit(3);
    assert_eq!(
        h.resume,
        Resume::Shutdown {
            status: EXIT_FAILURE
        }
    );
    assert_eq!(
        h.machine.console,
        "[kernel] the root task ended: it exited with status 3\n"
    );
    // A fault (the root has no fault endpoint): failure, with the report.
    let mut h = Harness::start();
    let resume = h.kernel.handle_el0_sync(&mut h.machine, NULL_WRITE_ESR, 0);
    h.resumed(resume);
    assert_eq!(
        h.resume,
        Resume::Shutdown {
            status: EXIT_FAILURE
        }
    );
    assert!(
        h.machine
            .console
            .contains("[kernel] the root task ended: it faulted (data abort (EL0)"),
        "{}",
        h.machine.console
    );
    // The threads it made stop with it: the run is over however many are
    // ready.
    let mut h = Harness::start();
    h.child(100, 0, NO_CAP);
    h.exit(0);
    assert_eq!(
        h.resume,
        Resume::Shutdown {
            status: EXIT_SUCCESS
        }
    );
}

#[test]
fn the_timer_preempts_round_robin_and_yield_hands_over() {
    let mut h = Harness::start();
    h.child(100, 0, NO_CAP);
    let first = h.context() as *mut UserContext;
    h.tick();
    let second = h.context() as *mut UserContext;
    assert_ne!(first, second, "a tick with another ready thread switches");
    h.tick();
    assert_eq!(
        h.context() as *mut UserContext,
        first,
        "and switches back (round robin)"
    );
    // FP state moves lazily: only when a thread traps on its first FP use.
    let fp_access_trap = 0x07 << 26;
    h.fault(fp_access_trap, 0);
    assert_eq!(
        h.context() as *mut UserContext,
        first,
        "the trap resumes the same thread"
    );
    assert_eq!(h.machine.fp_switches, 1);
    // Yield hands over too.
    assert_eq!(
        h.syscall(Syscall::Yield.number(), [0; 4]),
        u64::MAX,
        "yield resumes the other thread"
    );
    assert_eq!(h.context() as *mut UserContext, second);
}

#[test]
fn a_single_thread_is_not_preempted_by_its_own_tick() {
    let mut h = Harness::start();
    let before = h.context() as *mut UserContext;
    h.tick();
    h.tick();
    assert_eq!(h.context() as *mut UserContext, before);
    assert_eq!(h.kernel.ticks(), 2);
}

#[test]
fn every_frame_of_the_roots_space_is_returned_when_it_ends() {
    let mut h = Harness::start();
    let info = h.boot_info();
    // What the pool still holds: the pages the root's tables may need.
    assert_eq!(h.kernel.frames().available(), info.kernel_kept_pages);
    let in_use = h.kernel.frames().allocated();
    assert!(in_use > h.kernel.own_pages());
    let flushes = h.machine.tlb_flushes;
    h.exit(0);
    assert!(matches!(h.resume, Resume::Shutdown { .. }));
    assert_eq!(h.kernel.frames().lost(), 0);
    assert_eq!(
        h.kernel.frames().allocated(),
        h.kernel.own_pages() + info.untyped_bytes() / 4096,
        "no frame leaks: only the kernel's own CNode and console and the \
         Untypeds' blocks stay (the root's CNode, TCB and space went back \
         to the pool)"
    );
    assert_eq!(
        h.kernel.frames().available() + h.kernel.frames().allocated(),
        info.kernel_kept_pages + in_use
    );
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    assert!(
        h.machine.tlb_flushes > flushes,
        "freed frames are flushed from the TLB before reuse"
    );
}

/// A valid system image of `body_bytes` bytes after its header.
fn system_image(body_bytes: usize) -> Vec<u8> {
    use abi::system::image::{checksum, ImageHeader, HEADER_BYTES};
    let body: Vec<u8> = (0..body_bytes).map(|i| (i * 7) as u8).collect();
    let header = ImageHeader {
        total_bytes: (HEADER_BYTES + body_bytes) as u64,
        plan_offset: HEADER_BYTES as u64,
        plan_bytes: body_bytes as u64,
        checksum: checksum(&body),
    };
    let mut image = header.encode().to_vec();
    image.extend_from_slice(&body);
    image
}

#[test]
fn the_root_reads_the_system_image_read_only_at_its_address() {
    // Three pages and a part: the last page is mapped whole.
    let image = system_image(3 * 4096 + 100);
    let mut h = Harness::start_with_image(Some((&image, true)));
    let info = h.boot_info();
    assert_eq!(info.system_image_bytes, image.len() as u64);
    let root = h.kernel.current().expect("the root runs");
    let space = h.kernel.thread_space(root).expect("its space");
    let mut seen = vec![0u8; image.len()];
    space
        .copy_from_user(&h.machine, SYSTEM_IMAGE_ADDRESS, &mut seen)
        .expect("the whole image is readable");
    assert_eq!(seen, image);
    // The very pages it was loaded into, read-only, never executable.
    for page in 0..4 {
        let (pa, permissions) = space
            .translate_user(&h.machine, SYSTEM_IMAGE_ADDRESS + page * 4096)
            .expect("mapped");
        assert_eq!(pa, SYSTEM_IMAGE + page * 4096);
        assert_eq!(permissions.access(), arch::mmu::Access::ReadOnly);
        assert!(!permissions.is_executable());
    }
    assert_eq!(
        space.translate_user(&h.machine, SYSTEM_IMAGE_ADDRESS + 4 * 4096),
        None
    );
    // No Untyped holds any of its pages.
    let pages = SYSTEM_IMAGE..SYSTEM_IMAGE + 4 * 4096;
    for untyped in &info.untypeds {
        let block = untyped.base..untyped.base + untyped.bytes();
        assert!(
            block.end <= pages.start || pages.end <= block.start,
            "{untyped:?} holds part of the image"
        );
    }
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    // Nor does the pool when the root has ended: the pages were never
    // the space's, so they are not freed with it.
    h.exit(0);
    assert!(matches!(h.resume, Resume::Shutdown { .. }));
    let image_ram = PhysRange {
        start: SYSTEM_IMAGE,
        size: image.len() as u64,
    };
    assert!(!h.kernel.frames().holds_any(image_ram));
    assert_eq!(
        h.machine.read_phys_u64(SYSTEM_IMAGE + 8),
        image.len() as u64
    );
}

#[test]
fn without_a_system_image_the_root_is_told_zero_and_nothing_is_mapped() {
    let h = Harness::start();
    assert_eq!(h.boot_info().system_image_bytes, 0);
    let root = h.kernel.current().expect("the root runs");
    let space = h.kernel.thread_space(root).expect("its space");
    assert_eq!(space.translate_user(&h.machine, SYSTEM_IMAGE_ADDRESS), None);
}

#[test]
fn a_system_image_left_in_the_free_pool_stops_the_boot() {
    // Mapped in place, the image's pages must be nobody else's: a caller
    // that forgot to keep them from the pool gets no root at all.
    let image = system_image(100);
    let mut kernel = Box::new(Kernel::new());
    let mut machine = FakeMachine::default();
    machine.load(SYSTEM_IMAGE, &image);
    kernel.frames_mut().add_ram(
        RAM,
        &[PhysRange {
            start: RAM.start,
            size: 4096,
        }],
    );
    let memory = microkernel::cap::Memory::on_heap(RAM.start, RAM.size as usize);
    assert!(kernel.install_object_memory(memory));
    let image_ram = PhysRange {
        start: SYSTEM_IMAGE,
        size: image.len() as u64,
    };
    let resume = kernel.start(&mut machine, AsidBits::Eight, init_elf(), Some(image_ram));
    assert_eq!(
        resume,
        Resume::Shutdown {
            status: EXIT_FAILURE
        }
    );
    assert!(
        machine
            .console
            .contains("cannot start the root task: its system image"),
        "{}",
        machine.console
    );
}

/// The IPC case of the old suite: an echo server (thread 0) receiving on
/// its endpoint, a client (thread 1) sending with badge 0x42.
const IPC_SCENE: Scene = Scene {
    threads: &[thread(100), thread(100)],
    endpoints: 1,
    notifications: 0,
    untyped_pages: 0,
    grants: &[
        grant(0, ENDPOINT_SLOT, Object::Endpoint(0), RECEIVE, 0),
        grant(1, ENDPOINT_SLOT, Object::Endpoint(0), SEND, 0x42),
    ],
    fault_endpoints: &[],
    radix: 4,
};

#[test]
fn ipc_moves_data_and_nothing_runnable_is_idle_not_an_end() {
    let mut h = Harness::start();
    let threads = h.scene(&IPC_SCENE);
    // The echo server receives on its endpoint.
    assert_eq!(h.kernel.current(), Some(threads[0]));
    let server = h.context() as *mut UserContext;
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]),
        u64::MAX,
        "the receive waits"
    );
    // The client calls with two words; the kernel switches to the server.
    let client = h.context() as *mut UserContext;
    assert_ne!(client, server);
    h.context().x[1] = abi::MessageInfo::with(7, 2).into();
    let _ = h.syscall(Syscall::Call.number(), [2, 11, 22, 0]);
    assert_eq!(
        h.context() as *mut UserContext,
        server,
        "a call to a waiting receiver switches to it"
    );
    let got = *h.context();
    assert_eq!(
        (got.x[0], got.x[2], got.x[3], got.x[8]),
        (0, 11, 22, 0x42),
        "words and badge arrive"
    );
    // The server receives again instead of replying: nothing can run, and
    // the kernel idles (only an interrupt could wake anyone); it ends no
    // thread and says nothing.
    let console = h.machine.console.clone();
    let _ = h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]);
    assert_eq!(h.resume, Resume::Idle);
    assert_eq!(h.machine.console, console);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    for thread in threads {
        assert!(!h.kernel.thread(thread).state().is_kept_end());
    }
    // An interrupt with nothing to wake leaves it idle.
    let resume = h
        .kernel
        .handle_idle_interrupt(&mut h.machine, Interrupt::Timer);
    h.resumed(resume);
    assert_eq!(h.resume, Resume::Idle);
}

/// The fault case: a handler (thread 0, more urgent: it waits first)
/// receiving on endpoint 0, which is the fault endpoint of the faulter
/// (thread 1).
const FAULT_SCENE: Scene = Scene {
    threads: &[thread(101), thread(100)],
    endpoints: 1,
    notifications: 0,
    untyped_pages: 0,
    grants: &[grant(0, ENDPOINT_SLOT, Object::Endpoint(0), RECEIVE, 0)],
    fault_endpoints: &[(1, 0)],
    radix: 4,
};

/// In the fault scene: the handler waits on its fault endpoint, the other
/// thread faults, and the handler holds the fault message. Returns
/// (handler, faulter).
fn handler_holds_a_fault(h: &mut Harness) -> (ThreadId, ThreadId) {
    let threads = h.scene(&FAULT_SCENE);
    let handler = h.kernel.current().expect("the handler runs");
    assert_eq!(handler, threads[0]);
    let endpoint = ENDPOINT_SLOT;
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [endpoint, 0, 0, 0]),
        u64::MAX
    );
    let faulter = h.kernel.current().expect("the faulter runs");
    assert_eq!(faulter, threads[1]);
    h.fault(NULL_WRITE_ESR, 0);
    assert_eq!(
        h.kernel.current(),
        Some(handler),
        "the handler got the fault"
    );
    (handler, faulter)
}

#[test]
fn a_stop_reply_ends_the_faulter_whether_sent_by_reply_or_reply_recv() {
    let endpoint = ENDPOINT_SLOT;
    let stop = abi::MessageInfo::with(abi::fault::FAULT_REPLY_STOP, 0).into();
    // Reply: the handler carries on and the faulter has ended.
    let mut h = Harness::start();
    let (handler, faulter) = handler_holds_a_fault(&mut h);
    let pc = h.kernel.thread(faulter).context().pc;
    h.context().x[1] = stop;
    assert_eq!(h.syscall(Syscall::Reply.number(), [endpoint, 0, 0, 0]), 0);
    assert_eq!(h.kernel.current(), Some(handler));
    assert!(
        h.kernel.thread(faulter).state().is_kept_end(),
        "the faulter has ended (its TCB kept for its supervisor)"
    );
    assert!(matches!(
        h.kernel.thread(faulter).end(),
        Some(abi::fault::ThreadEnd::Faulted { class: 0x24, .. })
    ));
    assert_eq!(h.kernel.thread(faulter).context().pc, pc);
    // ReplyRecv: the faulter must not resume at the faulting instruction.
    // It ends, and its end message is what the handler's receive gets.
    let mut h = Harness::start();
    let (handler, faulter) = handler_holds_a_fault(&mut h);
    h.context().x[1] = stop;
    let _ = h.syscall(Syscall::ReplyRecv.number(), [endpoint, 0, 0, 0]);
    assert_eq!(h.kernel.current(), Some(handler));
    assert!(h.kernel.thread(faulter).state().is_kept_end());
    let x = h.context().x;
    assert_eq!(
        abi::MessageInfo::from(x[1]).label(),
        abi::fault::END_LABEL,
        "{}",
        h.machine.console
    );
    assert!(matches!(
        abi::fault::ThreadEnd::decode(&x[2..8]),
        Some(abi::fault::ThreadEnd::Faulted { class: 0x24, .. })
    ));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

/// The priority case: server (102) receives, middle (101) waits on
/// notification 0, caller (100) calls.
const PRIORITY_SCENE: Scene = Scene {
    threads: &[thread(102), thread(101), thread(100)],
    endpoints: 1,
    notifications: 1,
    untyped_pages: 0,
    grants: &[
        grant(0, ENDPOINT_SLOT, Object::Endpoint(0), RECEIVE, 0),
        grant(0, SECOND_ENDPOINT_SLOT, Object::Notification(0), SEND, 1),
        grant(1, ENDPOINT_SLOT, Object::Notification(0), RECEIVE, 0),
        grant(2, ENDPOINT_SLOT, Object::Endpoint(0), SEND, 0),
    ],
    fault_endpoints: &[],
    radix: 4,
};

#[test]
fn a_reply_recv_does_not_switch_past_a_more_urgent_ready_thread() {
    let mut h = Harness::start();
    h.scene(&PRIORITY_SCENE);
    let endpoint = ENDPOINT_SLOT;
    let second = SECOND_ENDPOINT_SLOT;
    // Server (102) receives, middle (101) waits, caller (100) calls.
    let server = h.kernel.current().expect("the server runs");
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [endpoint, 0, 0, 0]),
        u64::MAX
    );
    let middle = h.kernel.current().expect("the middle thread runs");
    assert_eq!(
        h.syscall(Syscall::Wait.number(), [endpoint, 0, 0, 0]),
        u64::MAX
    );
    let caller = h.kernel.current().expect("the caller runs");
    h.context().x[1] = abi::MessageInfo::with(1, 0).into();
    let _ = h.syscall(Syscall::Call.number(), [endpoint, 0, 0, 0]);
    assert_eq!(
        h.kernel.current(),
        Some(server),
        "the call switches to the server"
    );
    // The server wakes the middle thread (less urgent: it only queues)...
    assert_eq!(h.syscall(Syscall::Signal.number(), [second, 0, 0, 0]), 0);
    assert_eq!(h.kernel.current(), Some(server));
    // ...and its ReplyRecv waits: the middle thread, not the caller, runs.
    h.context().x[1] = abi::MessageInfo::with(0, 0).into();
    let _ = h.syscall(Syscall::ReplyRecv.number(), [endpoint, 0, 0, 0]);
    assert_eq!(
        h.kernel.current(),
        Some(middle),
        "the reply must not jump the more urgent ready thread"
    );
    assert_eq!(h.kernel.thread(caller).state(), ThreadState::Ready);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_thread_that_blocks_is_not_left_a_stale_reschedule() {
    let mut h = Harness::start();
    // The faulter (100) blocks sending its fault, which wakes the more
    // urgent handler (101): only a running thread is asked to yield.
    let (_, faulter) = handler_holds_a_fault(&mut h);
    assert!(
        !h.kernel
            .thread(faulter)
            .work()
            .contains(entry::WorkFlags::NEED_RESCHED),
        "a blocked thread was asked to reschedule"
    );
}

/// The address-space case: a fault handler (thread 0, more urgent, in a
/// space of its own) with the endpoint in slot 2 and the mapper's TCB in
/// slot 4; the mapper (thread 1, in the root's space) with an Untyped in
/// slot 2, its own VSpace in slots 4 (read-write) and 5 (read-only) and
/// the handler's (the only capability to it) in 6.
const VSPACE_SCENE: Scene = Scene {
    threads: &[
        SceneThread {
            priority: 101,
            x0: 0,
            own_space: true,
        },
        thread(100),
    ],
    endpoints: 1,
    notifications: 0,
    untyped_pages: 8,
    grants: &[
        grant(0, ENDPOINT_SLOT, Object::Endpoint(0), RECEIVE, 0),
        grant(0, 4, Object::Tcb(1), Rights::READ_WRITE, 0),
        grant(1, 2, Object::Untyped, Rights::ALL, 0),
        grant(1, 4, Object::VSpace(1), Rights::READ_WRITE, 0),
        grant(1, 5, Object::VSpace(1), Rights::READ, 0),
        Grant {
            thread: 1,
            slot: 6,
            object: Object::VSpace(0),
            rights: Rights::ALL,
            badge: 0,
            original: true,
        },
    ],
    fault_endpoints: &[(1, 0)],
    radix: 4,
};

/// The address-space scene; returns with its fault handler (thread 0) on
/// the CPU.
fn at_the_vspace_case() -> Harness {
    let mut h = Harness::start();
    let threads = h.scene(&VSPACE_SCENE);
    assert_eq!(h.kernel.current(), Some(threads[0]));
    h
}

impl Harness {
    fn map(&mut self, frame: u64, vspace: u64, va: u64, rights: u64) -> u64 {
        self.syscall(Syscall::FrameMap.number(), [frame, vspace, va, rights])
    }

    fn retype_frames(&mut self, target: u64, count: u64) -> u64 {
        self.context().x[5] = count;
        self.syscall(
            Syscall::Retype.number(),
            [2, u64::from(abi::cap::CapType::Frame.raw()), 0, target],
        )
    }

    fn readable(&mut self, va: u64) -> bool {
        self.syscall(Syscall::DebugPrint.number(), [CONSOLE, va, 8, 0]) == ErrorCode::Ok.raw()
    }

    fn asid(&self) -> u16 {
        match self.resume {
            Resume::User { ttbr0, .. } => (ttbr0 >> 48) as u16,
            _ => panic!("no thread runs"),
        }
    }
}

#[test]
fn frames_map_unmap_and_delete_with_a_tlb_flush_by_asid_and_address() {
    use abi::vspace::FRAME_MAP_START as VA;
    let mut h = at_the_vspace_case();
    // The handler waits for faults; the mapper runs.
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    assert_eq!(h.retype_frames(8, 2), ErrorCode::Ok.raw());
    let asid = h.asid();
    assert!(!h.readable(VA));
    assert_eq!(h.map(8, 4, VA, 3), ErrorCode::Ok.raw());
    assert!(h.readable(VA), "the frame is mapped for EL0");
    assert_eq!(h.map(9, 4, VA, 1), ErrorCode::AlreadyMapped.raw());
    assert_eq!(h.map(8, 4, VA + 0x1000, 1), ErrorCode::AlreadyMapped.raw());
    assert_eq!(h.map(9, 4, VA, 7), ErrorCode::InvalidArgument.raw());
    assert_eq!(h.kernel.check_invariants(), Ok(()));

    h.machine.page_flushes.clear();
    assert_eq!(
        h.syscall(Syscall::FrameUnmap.number(), [8, 0, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert_eq!(h.machine.page_flushes, [(asid, VA)]);
    assert!(!h.readable(VA));
    assert_eq!(
        h.syscall(Syscall::FrameUnmap.number(), [8, 0, 0, 0]),
        ErrorCode::Ok.raw(),
        "unmapping an unmapped frame changes nothing"
    );
    assert_eq!(h.machine.page_flushes.len(), 1, "and flushes nothing");

    // Deleting the last capability to a mapped frame unmaps it first.
    assert_eq!(h.map(8, 4, VA, 5), ErrorCode::Ok.raw());
    assert!(h.readable(VA));
    assert_eq!(
        h.syscall(Syscall::CapDelete.number(), [0, 8, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert_eq!(h.machine.page_flushes, [(asid, VA), (asid, VA)]);
    assert!(!h.readable(VA));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_frame_mapped_into_a_space_that_ends_is_forgotten_not_unmapped_later() {
    use abi::vspace::FRAME_MAP_START as VA;
    let mut h = at_the_vspace_case();
    let handler = h.kernel.current().unwrap();
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    // The mapper maps a frame into the handler's address space (slot 6).
    assert_eq!(h.retype_frames(8, 1), ErrorCode::Ok.raw());
    assert_eq!(h.map(8, 6, VA, 1), ErrorCode::Ok.raw());
    assert!(!h.readable(VA), "not into its own");
    // A fault wakes the handler, which resumes the mapper and ends.
    let mapper = h.context() as *mut UserContext;
    let pc = h.context().pc;
    h.fault(NULL_WRITE_ESR, 0);
    assert_ne!(h.context() as *mut UserContext, mapper);
    h.context().x[1] = abi::MessageInfo::with(abi::fault::FAULT_REPLY_SET_PC, 1).into();
    assert_eq!(
        h.syscall(Syscall::Reply.number(), [0, pc + 4, 0, 0]),
        ErrorCode::Ok.raw()
    );
    h.exit(0);
    assert_eq!(
        h.context() as *mut UserContext,
        mapper,
        "the mapper runs on"
    );
    assert_eq!(h.context().pc, pc + 4, "resumed past the fault");
    // The handler's space goes with its VSpace's last capability, the
    // mapper's.
    assert!(h.kernel.thread_space(handler).is_some());
    assert_eq!(
        h.syscall(Syscall::CapDelete.number(), [0, 6, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert!(
        h.kernel.thread_space(handler).is_none(),
        "the space is freed"
    );
    // The record went with the space: nothing points into freed tables.
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    h.machine.page_flushes.clear();
    assert_eq!(
        h.syscall(Syscall::FrameUnmap.number(), [8, 0, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert!(h.machine.page_flushes.is_empty());
    // The VSpace capability went with the space too.
    assert_eq!(h.map(8, 6, VA, 1), ErrorCode::InvalidCapability.raw());
    // The frame is free to be mapped again, and deleting it is harmless.
    assert_eq!(h.map(8, 4, VA, 1), ErrorCode::Ok.raw());
    assert!(h.readable(VA));
    assert_eq!(
        h.syscall(Syscall::CapDelete.number(), [0, 8, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert!(!h.readable(VA));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn page_tables_for_mappings_are_limited_per_address_space() {
    use abi::vspace::{FRAME_MAP_START as VA, MAX_TABLE_PAGES};
    // 512 GiB apart: each address needs its own L1, L2 and L3 table.
    const APART: u64 = 1 << 39;
    let mut h = at_the_vspace_case();
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    assert_eq!(h.retype_frames(8, 1), ErrorCode::Ok.raw());
    let unmap = Syscall::FrameUnmap.number();
    let fits = MAX_TABLE_PAGES as u64 / 3;
    for i in 0..fits {
        assert_eq!(h.map(8, 4, VA + i * APART, 1), ErrorCode::Ok.raw(), "{i}");
        assert_eq!(h.syscall(unmap, [8, 0, 0, 0]), ErrorCode::Ok.raw());
    }
    let allocated = h.kernel.frames().allocated();
    assert_eq!(
        h.map(8, 4, VA + fits * APART, 1),
        ErrorCode::OutOfResources.raw()
    );
    assert!(
        h.kernel.frames().allocated() - allocated < 3,
        "no more than the allowance is taken"
    );
    assert!(!h.readable(VA + fits * APART));
    // Tables already there still serve.
    assert_eq!(h.map(8, 4, VA, 1), ErrorCode::Ok.raw());
    assert!(h.readable(VA));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

/// A TCB capability that may attach a tracer and filters.
const TCB_WITH_TRACE: Rights =
    Rights::from_bytes([Rights::READ_WRITE.raw() | Rights::TRACE.raw() | Rights::POLICY.raw()]);

/// The badge of the tracer's capability to its own endpoint, which every
/// stop carries.
const TRACEE_BADGE: u64 = 0x7ace;

/// The tracing case: a tracer (thread 0, more urgent) with its endpoint
/// (2, receive; 4, send with `TRACEE_BADGE`; 6, the original), the
/// tracee's TCB (3, with the trace right; 5) and an Untyped (7); the
/// tracee (thread 1) with a notification in slot 5.
const TRACE_SCENE: Scene = Scene {
    threads: &[thread(110), thread(100)],
    endpoints: 1,
    notifications: 1,
    untyped_pages: 8,
    grants: &[
        grant(0, ENDPOINT_SLOT, Object::Endpoint(0), RECEIVE, 0),
        grant(0, 3, Object::Tcb(1), TCB_WITH_TRACE, 0),
        grant(0, 4, Object::Endpoint(0), SEND, TRACEE_BADGE),
        grant(0, 5, Object::Tcb(1), Rights::READ_WRITE, 0),
        grant(0, 7, Object::Untyped, Rights::ALL, 0),
        grant(1, 5, Object::Notification(0), Rights::READ_WRITE, 0),
        Grant {
            thread: 0,
            slot: 6,
            object: Object::Endpoint(0),
            rights: Rights::ALL,
            badge: 0,
            original: true,
        },
    ],
    fault_endpoints: &[],
    radix: 4,
};

/// In the tracing scene: the tracer (on the CPU) has attached to the
/// tracee and given it its own priority. Returns (tracer, tracee).
fn tracer_attached(h: &mut Harness) -> (ThreadId, ThreadId) {
    h.scene(&TRACE_SCENE);
    let tracer = h.kernel.current().expect("the tracer runs");
    let priority = u64::from(h.kernel.thread(tracer).priority());
    assert_eq!(
        h.syscall(Syscall::TcbAttachTracer.number(), [3, 4, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert_eq!(
        h.syscall(Syscall::TcbSetPriority.number(), [3, priority, 0, 0]),
        ErrorCode::Ok.raw()
    );
    // Round robin: the tracee runs.
    assert_eq!(h.syscall(Syscall::Yield.number(), [0; 4]), u64::MAX);
    let tracee = h.kernel.current().expect("the tracee runs");
    assert_ne!(tracee, tracer);
    (tracer, tracee)
}

/// The label of the message the current thread just received.
fn received_label(h: &mut Harness) -> u64 {
    abi::MessageInfo::from(h.context().x[1]).label()
}

impl Harness {
    /// `Reply` (label 0: continue) from the current thread.
    fn reply_continue(&mut self) -> u64 {
        self.context().x[1] = 0;
        self.syscall(Syscall::Reply.number(), [0; 4])
    }

    /// The current thread replies `label` with `words` (a tracer; at
    /// most three, in `x2..x4`).
    fn reply_with(&mut self, label: u64, words: &[u64]) -> u64 {
        self.context().x[1] = u64::from(abi::MessageInfo::with(label, words.len() as u8));
        let mut args = [0u64; 4];
        args[1..=words.len()].copy_from_slice(words);
        self.syscall(Syscall::Reply.number(), args)
    }
}

#[test]
fn a_traced_syscall_that_blocks_gets_its_exit_stop_when_it_returns() {
    use abi::trace::{TRACE_ENTRY, TRACE_EXIT};
    let mut h = Harness::start();
    let (tracer, tracee) = tracer_attached(&mut h);
    let notification = 5;
    // The tracee waits on its empty notification: first its entry stop,
    // queued on the tracer's endpoint.
    assert_eq!(
        h.syscall(Syscall::Wait.number(), [notification, 0, 0, 0]),
        u64::MAX
    );
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert_eq!(received_label(&mut h), TRACE_ENTRY);
    assert_eq!(h.context().x[2], Syscall::Wait.number());
    assert_eq!(
        h.context().x[8],
        0x7ace,
        "the badge of the attach capability"
    );
    let pc = h.kernel.thread(tracee).context().pc;
    assert_eq!(h.reply_continue(), ErrorCode::Ok.raw());
    // When the tracee next runs, its Wait goes on from the stop (the
    // kernel's copy of the call: the svc is not executed again) and
    // blocks, so the tracer's Yield comes back to the tracer.
    assert_eq!(
        h.syscall(Syscall::Yield.number(), [0; 4]),
        ErrorCode::Ok.raw()
    );
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(h.kernel.thread(tracee).context().pc, pc, "never rewound");
    assert!(matches!(
        h.kernel.thread(tracee).state(),
        ThreadState::BlockedOnNotification { .. }
    ));
    // Suspended and resumed, its Wait returns Interrupted: the exit
    // stop comes when it does, carrying that result.
    assert_eq!(h.syscall(Syscall::TcbSuspend.number(), [3, 0, 0, 0]), 0);
    assert_eq!(h.syscall(Syscall::TcbResume.number(), [3, 0, 0, 0]), 0);
    // The tracer's Recv waits, the tracee's way back to EL0 sends the
    // stop, and the tracer's Recv returns with it.
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]),
        ErrorCode::Ok.raw()
    );
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(received_label(&mut h), TRACE_EXIT);
    assert_eq!(h.context().x[2], Syscall::Wait.number());
    assert_eq!(h.context().x[3], ErrorCode::Interrupted.raw());
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_stop_queued_on_a_destroyed_endpoint_lets_the_thread_run_untraced() {
    use entry::WorkFlags;
    let mut h = Harness::start();
    let (tracer, tracee) = tracer_attached(&mut h);
    // Nobody receives: the entry stop waits in the endpoint's queue.
    assert_eq!(h.syscall(Syscall::Poll.number(), [5, 0, 0, 0]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracer));
    let pc = h.kernel.thread(tracee).context().pc;
    // The tracer revokes its endpoint's original and deletes it.
    assert_eq!(h.syscall(Syscall::CapRevoke.number(), [0, 6, 0, 0]), 0);
    assert_eq!(h.syscall(Syscall::CapDelete.number(), [0, 6, 0, 0]), 0);
    let thread = h.kernel.thread(tracee);
    assert_eq!(thread.state(), ThreadState::Ready, "it runs on");
    assert_eq!(thread.tracer(), None);
    assert!(!thread
        .work()
        .intersects(WorkFlags::TRACE | WorkFlags::SINGLESTEP));
    assert_eq!(thread.trace_stop(), None);
    assert_eq!(thread.context().pc, pc, "its svc is not executed again");
    assert!(thread.call().is_some_and(|call| call.is_answered()));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    // Untraced, the poll goes on as made when the tracee runs.
    assert_eq!(h.syscall(Syscall::Yield.number(), [0; 4]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracee));
    assert_eq!(h.context().x[0], ErrorCode::Ok.raw());
    assert_eq!(h.kernel.thread(tracee).call(), None);
}

/// A tracee the tracer stops stepping ("continue" at a step stop) owes
/// nothing and goes back as it is, with the step hardware still on: its
/// first instruction takes one software-step exception, which switches
/// the hardware off and reports nothing; its next syscall stops at its
/// entry as before.
#[test]
fn a_tracee_no_longer_stepped_switches_the_step_hardware_off_with_one_exception_and_no_stop() {
    use abi::trace::{TRACE_ENTRY, TRACE_EXIT, TRACE_REPLY_STEP, TRACE_STEP};
    const STEP_ESR: u64 = 0x32 << 26;
    let mut h = Harness::start();
    let (tracer, tracee) = tracer_attached(&mut h);
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), u64::MAX);
    // Stepped from its entry stop on: entry, exit, then the step report.
    let mut stops = vec![];
    loop {
        assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), 0);
        let label = received_label(&mut h);
        stops.push(label);
        if label == TRACE_STEP {
            break;
        }
        assert_eq!(h.reply_with(TRACE_REPLY_STEP, &[]), 0);
    }
    assert_eq!(stops, [TRACE_ENTRY, TRACE_EXIT, TRACE_STEP]);
    // One more step: the tracee runs one instruction with the hardware
    // on, and its step stop comes.
    assert_eq!(h.reply_with(TRACE_REPLY_STEP, &[]), 0);
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracee));
    assert!(h.machine.single_step);
    h.context().pc += 4;
    h.fault(STEP_ESR, 0);
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(received_label(&mut h), TRACE_STEP);
    // "Continue", no step: the tracee runs with the hardware left on.
    assert_eq!(h.reply_continue(), 0);
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracee));
    assert!(h.machine.single_step, "switched off lazily");
    assert_eq!(h.context().spsr & (1 << 21), 0, "SPSR.SS clear");
    let pc = h.context().pc;
    h.fault(STEP_ESR, 0);
    assert_eq!(h.kernel.current(), Some(tracee), "no step stop");
    assert!(!h.machine.single_step);
    assert_eq!(h.context().pc, pc, "no instruction lost");
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), u64::MAX);
    assert_eq!(h.kernel.current(), Some(tracer));
    assert_eq!(received_label(&mut h), TRACE_ENTRY);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

impl Harness {
    /// `SetUserDispatch` with `x2..x6` as given (and `x0`).
    fn set_user_dispatch(&mut self, x0: u64, args: [u64; 5]) -> u64 {
        let ctx = self.context();
        ctx.x[5] = args[3];
        ctx.x[6] = args[4];
        self.syscall(
            Syscall::SetUserDispatch.number(),
            [x0, args[0], args[1], args[2]],
        )
    }

    /// Writes user memory of the current thread (as its own code would).
    fn poke(&mut self, va: u64, bytes: &[u8]) {
        let id = self.kernel.current().expect("a thread runs");
        let space = self.kernel.thread_space(id).expect("a space");
        space
            .copy_to_user(&mut self.machine, va, bytes)
            .expect("writable user memory");
    }

    fn peek_frame(&mut self, va: u64) -> abi::user_dispatch::Frame {
        let id = self.kernel.current().expect("a thread runs");
        let space = self.kernel.thread_space(id).expect("a space");
        let mut bytes = [0u8; abi::user_dispatch::FRAME_BYTES as usize];
        space
            .copy_from_user(&self.machine, va, &mut bytes)
            .expect("readable user memory");
        abi::user_dispatch::Frame::from_bytes(&bytes)
    }
}

#[test]
fn user_dispatch_redirects_outside_the_range_and_returns_with_the_emulated_result() {
    use abi::user_dispatch::{SELECTOR_ALLOW, SELECTOR_BLOCK};
    use entry::WorkFlags;
    let mut h = Harness::start();
    let (start, end, handler) = (CODE + 0x100, CODE + 0x200, CODE + 0x400);
    let buffer = USER_STACK_TOP - 0x400;
    let selector = DATA + 0x800;
    let config = [start, end, handler, buffer, selector];
    let invalid_address = ErrorCode::InvalidAddress.raw();
    // Checked against the tables: a read-execute buffer, a buffer that
    // runs into an unmapped page, an unmapped selector.
    let bad = |index: usize, value: u64| {
        let mut args = config;
        args[index] = value;
        args
    };
    assert_eq!(h.set_user_dispatch(0, bad(3, CODE)), invalid_address);
    assert_eq!(
        h.set_user_dispatch(0, bad(3, USER_STACK_TOP - 8)),
        invalid_address
    );
    assert_eq!(h.set_user_dispatch(0, bad(4, 0x1000)), invalid_address);
    assert_eq!(
        h.set_user_dispatch(7, config),
        ErrorCode::InvalidArgument.raw(),
        "x0 is reserved"
    );
    let id = h.kernel.current().unwrap();
    assert!(!h
        .kernel
        .thread(id)
        .work()
        .contains(WorkFlags::USER_DISPATCH));

    assert_eq!(h.set_user_dispatch(0, config), ErrorCode::Ok.raw());
    let thread = h.kernel.thread(id);
    assert!(thread.work().contains(WorkFlags::USER_DISPATCH));
    assert_eq!(thread.no_entry_work(), 0, "no syscall skips stage 1");

    // Selector 0: every syscall runs, from anywhere.
    h.context().pc = CODE + 0x10;
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), 0);
    assert_eq!(h.context().pc, CODE + 0x10);

    // Selector 1 (set without a syscall): an `exit` from outside the range
    // does not run; the handler gets the context.
    h.poke(selector, &[SELECTOR_BLOCK]);
    {
        let ctx = h.context();
        ctx.pc = CODE + 0x10;
        ctx.sp = USER_STACK_TOP - 0x40;
        ctx.x[1] = 0x11;
        ctx.x[7] = 0x77;
        ctx.x[30] = 0x3030;
        ctx.spsr = 0x6000_0000;
    }
    let syscalls = h
        .kernel
        .thread(id)
        .stats()
        .counts()
        .expect("test-support keeps statistics")
        .syscalls;
    let x0 = h.syscall(Syscall::Exit.number(), [0xabc, 5, 0, 0]);
    assert_eq!(x0, buffer, "still the same thread, now in its handler");
    assert_eq!(
        h.kernel
            .thread(id)
            .stats()
            .counts()
            .expect("test-support keeps statistics")
            .syscalls,
        syscalls + 1
    );
    let ctx = *h.context();
    assert_eq!(
        (ctx.pc, ctx.x[1], ctx.x[30]),
        (handler, Syscall::Exit.number(), 0)
    );
    assert_eq!(ctx.sp, USER_STACK_TOP - 0x40);
    let mut frame = h.peek_frame(buffer);
    assert_eq!(frame.x[0], 0xabc);
    assert_eq!((frame.x[1], frame.x[2], frame.x[7]), (0x11, 5, 0x77));
    assert_eq!((frame.x[8], frame.number), (2, 2));
    assert_eq!(frame.x[30], 0x3030);
    assert_eq!((frame.pc, frame.sp), (CODE + 0x10, USER_STACK_TOP - 0x40));
    assert_eq!((frame.nzcv, frame.flags), (0x6000_0000, 0));

    // The handler emulates a result and returns; `UserDispatchReturn` is
    // never redirected (it is made from outside the range, selector 1).
    frame.x[0] = 0x5eed;
    h.poke(buffer + 0x200, &frame.to_bytes());
    h.context().spsr = 0;
    h.context().pc = handler + 0x20;
    let returned = h.syscall(
        Syscall::UserDispatchReturn.number(),
        [buffer + 0x200, 0, 0, 0],
    );
    assert_eq!(returned, 0x5eed, "the restored x0, not a result code");
    let ctx = *h.context();
    assert_eq!(
        (ctx.pc, ctx.x[30], ctx.x[7], ctx.x[8]),
        (CODE + 0x10, 0x3030, 0x77, 2)
    );
    assert_eq!(ctx.spsr & 0xf000_0000, 0x6000_0000);
    assert!(ctx.is_el0_aarch64());

    // A bad frame changes nothing but x0.
    let mut bad_frame = frame;
    bad_frame.pc = 0xffff_0000_0000_0000;
    h.poke(buffer + 0x200, &bad_frame.to_bytes());
    let return_number = Syscall::UserDispatchReturn.number();
    assert_eq!(
        h.syscall(return_number, [buffer + 0x200, 0, 0, 0]),
        invalid_address
    );
    bad_frame.pc = CODE;
    bad_frame.nzcv = 1 << 21;
    h.poke(buffer + 0x200, &bad_frame.to_bytes());
    assert_eq!(
        h.syscall(return_number, [buffer + 0x200, 0, 0, 0]),
        ErrorCode::InvalidArgument.raw()
    );
    assert_eq!(h.syscall(return_number, [0x1000, 0, 0, 0]), invalid_address);
    assert_eq!(h.context().pc, CODE + 0x10);

    // From inside the range a syscall runs whatever the selector says.
    h.context().pc = start + 4;
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), 0);
    h.context().pc = end;
    assert_eq!(
        h.syscall(Syscall::Null.number(), [0; 4]),
        0,
        "svc at end - 4"
    );
    h.context().pc = end + 4;
    assert_eq!(
        h.syscall(Syscall::Null.number(), [0; 4]),
        buffer,
        "svc at end"
    );

    // Any selector value but 0 blocks; 0 lets the same call through.
    h.poke(selector, &[0x80]);
    h.context().pc = CODE + 0x10;
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), buffer);
    h.poke(selector, &[SELECTOR_ALLOW]);
    h.context().pc = CODE + 0x10;
    assert_eq!(h.syscall(Syscall::Null.number(), [0; 4]), 0);

    // Off: the work bit goes; the fast-path mask may come back.
    assert_eq!(h.set_user_dispatch(0, [0; 5]), ErrorCode::Ok.raw());
    assert!(!h
        .kernel
        .thread(id)
        .work()
        .contains(WorkFlags::USER_DISPATCH));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

/// The reply-capability case: the server (thread 0, most urgent) with
/// its endpoint (2, receive and send), the first client's TCB (3) and an
/// Untyped (4); two clients (threads 1 and 2) calling the endpoint with
/// badges 1 and 2.
const REPLY_SCENE: Scene = Scene {
    threads: &[thread(110), thread(105), thread(100)],
    endpoints: 1,
    notifications: 0,
    untyped_pages: 16,
    grants: &[
        grant(0, ENDPOINT_SLOT, Object::Endpoint(0), Rights::READ_WRITE, 0),
        grant(0, SECOND_ENDPOINT_SLOT, Object::Tcb(1), Rights::WRITE, 0),
        grant(0, 4, Object::Untyped, Rights::ALL, 0),
        grant(1, ENDPOINT_SLOT, Object::Endpoint(0), SEND, 1),
        grant(2, ENDPOINT_SLOT, Object::Endpoint(0), SEND, 2),
        // The server's supervisor, for one test: the second client.
        Grant {
            thread: 2,
            slot: 4,
            object: Object::Tcb(0),
            rights: Rights::ALL,
            badge: 0,
            original: true,
        },
        Grant {
            thread: 2,
            slot: 5,
            object: Object::CNode(0),
            rights: Rights::ALL,
            badge: 0,
            original: true,
        },
    ],
    fault_endpoints: &[],
    radix: 5,
};

/// In the reply-capability scene: the server retypes a Reply object into
/// slot 5 (from its Untyped in slot 4), receives the first client's call
/// and saves its reply there. Returns (server, first client).
fn server_saved_the_first_reply(h: &mut Harness) -> (ThreadId, ThreadId) {
    h.scene(&REPLY_SCENE);
    let endpoint = ENDPOINT_SLOT;
    let server = h.kernel.current().expect("the server runs first");
    h.context().x[5] = 1;
    let reply = u64::from(abi::cap::CapType::Reply.raw());
    assert_eq!(h.syscall(Syscall::Retype.number(), [4, reply, 0, 5]), 0);
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, 5, 0, 0]),
        ErrorCode::NoReplyTarget.raw(),
        "nothing owed yet"
    );
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [endpoint, 0, 0, 0]),
        u64::MAX
    );
    let first = h.kernel.current().expect("the first client runs");
    h.context().x[1] = abi::MessageInfo::with(0xa1, 1).into();
    let _ = h.syscall(Syscall::Call.number(), [endpoint, 3, 0, 0]);
    assert_eq!(h.kernel.current(), Some(server));
    assert_eq!(
        h.syscall(Syscall::ReplySave.number(), [0, 1, 0, 0]),
        ErrorCode::WrongCapabilityType.raw(),
        "the console is no Reply object"
    );
    assert_eq!(h.syscall(Syscall::ReplySave.number(), [0, 5, 0, 0]), 0);
    assert_eq!(h.kernel.thread(first).state(), ThreadState::BlockedOnReply);
    assert!(h.kernel.thread(first).saved_reply().is_some());
    assert_eq!(h.kernel.thread(server).reply_to(), None, "it owes nothing");
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    (server, first)
}

#[test]
fn a_saved_reply_answers_its_caller_after_another_caller_once() {
    let mut h = Harness::start();
    let (server, first) = server_saved_the_first_reply(&mut h);
    let endpoint = ENDPOINT_SLOT;
    assert_eq!(
        h.syscall(Syscall::Reply.number(), [0, 0, 0, 0]),
        ErrorCode::NoReplyTarget.raw()
    );
    for copy in [Syscall::CapCopy, Syscall::CapMint] {
        let ctx = h.context();
        ctx.x[5] = 0;
        ctx.x[6] = 0;
        assert_eq!(
            h.syscall(
                copy.number(),
                [0, 5, 6, u64::from(abi::cap::Rights::WRITE.raw())]
            ),
            ErrorCode::InvalidArgument.raw()
        );
    }
    // The second client calls and is answered first.
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [endpoint, 0, 0, 0]),
        u64::MAX
    );
    let second = h.kernel.current().expect("the second client runs");
    h.context().x[1] = abi::MessageInfo::with(0xb1, 0).into();
    let _ = h.syscall(Syscall::Call.number(), [endpoint, 0, 0, 0]);
    assert_eq!(h.kernel.current(), Some(server));
    h.context().x[1] = abi::MessageInfo::with(0x20, 0).into();
    assert_eq!(h.syscall(Syscall::Reply.number(), [0, 0, 0, 0]), 0);
    assert_eq!(h.kernel.thread(second).state(), ThreadState::Ready);
    assert_eq!(h.kernel.thread(first).state(), ThreadState::BlockedOnReply);
    // Then the first, through the saved reply; the Reply object is
    // empty after it.
    h.context().x[1] = abi::MessageInfo::with(0x10, 1).into();
    assert_eq!(h.syscall(Syscall::Send.number(), [5, 77, 0, 0]), 0);
    let answered = h.kernel.thread(first);
    assert_eq!(answered.state(), ThreadState::Ready);
    assert_eq!(answered.saved_reply(), None);
    assert_eq!((answered.context().x[0], answered.context().x[2]), (0, 77));
    assert_eq!(
        abi::MessageInfo::from(answered.context().x[1]).label(),
        0x10
    );
    assert_eq!(
        h.syscall(Syscall::Send.number(), [5, 0, 0, 0]),
        ErrorCode::NoReplyTarget.raw(),
        "answered once"
    );
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_saved_reply_goes_stale_when_its_caller_is_suspended() {
    let mut h = Harness::start();
    let (_, first) = server_saved_the_first_reply(&mut h);
    let first_tcb = SECOND_ENDPOINT_SLOT;
    assert_eq!(
        h.syscall(Syscall::TcbSuspend.number(), [first_tcb, 0, 0, 0]),
        0
    );
    assert_eq!(h.kernel.thread(first).saved_reply(), None);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    h.context().x[1] = abi::MessageInfo::with(0x10, 0).into();
    assert_eq!(
        h.syscall(Syscall::NBSend.number(), [5, 0, 0, 0]),
        ErrorCode::NoReplyTarget.raw()
    );
    assert_eq!(
        h.syscall(Syscall::CapDelete.number(), [0, 5, 0, 0]),
        0,
        "the emptied Reply object stays until deleted"
    );
    assert_eq!(h.kernel.thread(first).state(), ThreadState::Suspended);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn deleting_a_saved_reply_or_its_cnode_wakes_the_caller_with_object_deleted() {
    // The capability deleted by hand.
    let mut h = Harness::start();
    let (_, first) = server_saved_the_first_reply(&mut h);
    assert_eq!(h.syscall(Syscall::CapDelete.number(), [0, 5, 0, 0]), 0);
    let woken = h.kernel.thread(first);
    assert_eq!(woken.state(), ThreadState::Ready);
    assert_eq!(woken.context().x[0], ErrorCode::ObjectDeleted.raw());
    assert_eq!(
        woken.context().x[1..9],
        [0; 8],
        "a wait that ends in an error leaves x1..x8 zero, on either path"
    );
    assert_eq!(woken.saved_reply(), None);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
    // The server ends and its supervisor deletes its TCB and CNode: the
    // saved reply in it goes.
    let mut h = Harness::start();
    let (server, first) = server_saved_the_first_reply(&mut h);
    h.exit(0);
    assert!(h.kernel.thread(server).state().is_kept_end());
    assert_eq!(
        h.kernel.thread(first).state(),
        ThreadState::BlockedOnReply,
        "an ended server's CNode, and the reply saved in it, are kept"
    );
    // The second client holds them (the only capabilities).
    let second = h.kernel.current().expect("the second client runs");
    assert_ne!(second, server);
    assert_eq!(h.syscall(Syscall::CapDelete.number(), [0, 4, 0, 0]), 0);
    assert!(h.kernel.try_thread(server).is_none(), "the server is gone");
    assert_eq!(h.kernel.thread(first).state(), ThreadState::BlockedOnReply);
    // Revoking the CNode's original takes its copy in the CNode itself;
    // deleting it then destroys the CNode: the caller wakes (more urgent:
    // it runs).
    assert_eq!(h.syscall(Syscall::CapRevoke.number(), [0, 5, 0, 0]), 0);
    assert_eq!(h.kernel.thread(first).state(), ThreadState::BlockedOnReply);
    assert_eq!(
        h.syscall(Syscall::CapDelete.number(), [0, 5, 0, 0]),
        u64::MAX
    );
    assert_eq!(h.kernel.current(), Some(first));
    let woken = h.kernel.thread(first);
    assert_eq!(woken.context().x[0], ErrorCode::ObjectDeleted.raw());
    assert!(matches!(
        woken.state(),
        ThreadState::Ready | ThreadState::Running
    ));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_saved_reply_stays_consistent_when_every_thread_waits() {
    let mut h = Harness::start();
    server_saved_the_first_reply(&mut h);
    // The server receives again; the second client calls and is owed a
    // reply the ordinary way; the server receives once more: every thread
    // waits, and the kernel idles.
    let endpoint = ENDPOINT_SLOT;
    let _ = h.syscall(Syscall::Recv.number(), [endpoint, 0, 0, 0]);
    let _ = h.syscall(Syscall::Call.number(), [endpoint, 0, 0, 0]);
    let _ = h.syscall(Syscall::Recv.number(), [endpoint, 0, 0, 0]);
    assert_eq!(h.resume, Resume::Idle);
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

/// Address spaces built from user space (`Retype` of a VSpace,
/// `TcbSetSpace`). The harness plays a supervisor the root task made, in
/// the root's address space, with a CNode of 64 slots: slot 2 its
/// Untyped (32 pages), 3 the VSpace it runs in (the root's, kernel-made),
/// 16 its own TCB.
mod user_space {
    use super::*;

    const SUPERVISOR_SCENE: Scene = Scene {
        threads: &[thread(100)],
        endpoints: 0,
        notifications: 0,
        untyped_pages: 32,
        grants: &[
            grant(0, 2, Object::Untyped, Rights::ALL, 0),
            grant(0, 3, Object::VSpace(0), Rights::READ_WRITE, 0),
            grant(0, 16, Object::Tcb(0), Rights::READ_WRITE, 0),
        ],
        fault_endpoints: &[],
        radix: 6,
    };

    const UNTYPED: u64 = 2;
    const OWN_SPACE: u64 = 3;
    const SIGNALS: u64 = 4;
    const FAULTS: u64 = 5;
    const CHANNEL: u64 = 6;
    const CHILD_CNODE: u64 = 7;
    const CHILD: u64 = 8;
    const SPACE: u64 = 9;
    const CODE: u64 = 10;
    const STACK: u64 = 11;
    const BUFFER: u64 = 12;
    const SPARE: u64 = 13;
    const FAULTS_BADGED: u64 = 14;
    const FAULT_BADGE: u64 = 0x77;
    const SECOND: u64 = 17;
    const CODE_VA: u64 = 0x40_0000;
    const STACK_VA: u64 = 0x41_0000;
    const OK: u64 = 0;

    impl Harness {
        fn retype(&mut self, object: CapType, size: u64, target: u64, count: u64) -> u64 {
            self.context().x[5] = count;
            self.syscall(
                Syscall::Retype.number(),
                [UNTYPED, u64::from(object.raw()), size, target],
            )
        }

        fn configure_without_program(&mut self, tcb: u64) -> u64 {
            self.syscall(
                Syscall::TcbConfigure.number(),
                [tcb, CHILD_CNODE, 100, NO_PROGRAM],
            )
        }

        fn set_space(&mut self, tcb: u64, vspace: u64, caps: [u64; 2], pc_sp: [u64; 2]) -> u64 {
            let context = self.context();
            // Where the buffer is mapped (none: 0).
            context.x[1] = if caps[0] == NO_CAP { 0 } else { 0x7fff_0000 };
            context.x[5] = pc_sp[0];
            context.x[6] = pc_sp[1];
            context.x[7] = 0x5eed;
            self.syscall(
                Syscall::TcbSetSpace.number(),
                [tcb, vspace, caps[0], caps[1]],
            )
        }

        fn mint(&mut self, source: u64, target: u64, badge: u64) -> u64 {
            let context = self.context();
            context.x[5] = badge;
            context.x[6] = 1;
            let rights = u64::from(abi::cap::Rights::WRITE.raw());
            self.syscall(Syscall::CapMint.number(), [0, source, target, rights])
        }

        fn delete(&mut self, slot: u64) -> u64 {
            self.syscall(Syscall::CapDelete.number(), [0, slot, 0, 0])
        }
    }

    const START: [u64; 2] = [CODE_VA, STACK_VA + 0x1000];

    fn at_the_case() -> Harness {
        let mut h = Harness::start();
        h.scene(&SUPERVISOR_SCENE);
        h
    }

    /// The root has made a notification, two endpoints, the child's CNode
    /// and TCB, a VSpace of 8 table pages and four frames, configured the
    /// child without a program and bound the VSpace to it, with `BUFFER`
    /// as its IPC buffer and `FAULTS` (badged `FAULT_BADGE`) as its fault
    /// endpoint.
    fn child_bound() -> Harness {
        let mut h = at_the_case();
        assert_eq!(h.retype(CapType::Notification, 0, SIGNALS, 1), OK);
        assert_eq!(h.retype(CapType::Endpoint, 0, FAULTS, 2), OK);
        assert_eq!(h.retype(CapType::CNode, 2, CHILD_CNODE, 1), OK);
        assert_eq!(h.retype(CapType::Tcb, 0, CHILD, 1), OK);
        assert_eq!(h.retype(CapType::VSpace, 8, SPACE, 1), OK);
        assert_eq!(h.retype(CapType::Frame, 0, CODE, 4), OK);
        assert_eq!(h.configure_without_program(CHILD), OK);
        assert_eq!(h.mint(FAULTS, FAULTS_BADGED, FAULT_BADGE), OK);
        assert_eq!(
            h.set_space(CHILD, SPACE, [BUFFER, FAULTS_BADGED], START),
            OK,
            "{}",
            h.machine.console
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        h
    }

    /// Maps the child's code (RX) and stack, starts it, and yields to it.
    fn child_running(h: &mut Harness) -> ThreadId {
        let root = h.kernel.current().expect("the root runs");
        assert_eq!(h.map(CODE, SPACE, CODE_VA, 5), OK);
        assert_eq!(h.map(STACK, SPACE, STACK_VA, 3), OK);
        assert_eq!(h.syscall(Syscall::TcbResume.number(), [CHILD, 0, 0, 0]), OK);
        h.syscall(Syscall::Yield.number(), [0; 4]);
        let child = h.kernel.current().expect("the child runs");
        assert_ne!(child, root);
        assert_eq!(h.context().pc, CODE_VA);
        assert_eq!(h.context().sp, STACK_VA + 0x1000);
        assert_eq!(h.context().x[0], 0x5eed);
        child
    }

    #[test]
    fn a_vspace_takes_its_root_and_table_pages_from_the_untyped() {
        let mut h = at_the_case();
        let bad = ErrorCode::InvalidArgument.raw();
        assert_eq!(h.retype(CapType::VSpace, 0, SPACE, 1), bad);
        assert_eq!(h.retype(CapType::VSpace, 65, SPACE, 1), bad);
        // 65 pages do not fit in 32, nor do 32 and the VSpace's record;
        // 31 (root and 30 tables) and the record do, and then no page is
        // left for a Frame.
        assert_eq!(
            h.retype(CapType::VSpace, 64, SPACE, 1),
            ErrorCode::NotEnoughMemory.raw()
        );
        assert_eq!(
            h.retype(CapType::VSpace, 31, SPACE, 1),
            ErrorCode::NotEnoughMemory.raw()
        );
        assert_eq!(h.retype(CapType::VSpace, 30, SPACE, 1), OK);
        assert_eq!(
            h.retype(CapType::Frame, 0, FAULTS, 1),
            ErrorCode::NotEnoughMemory.raw(),
            "the Untyped's pages are used up"
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // Its memory comes back with it.
        assert_eq!(h.delete(SPACE), OK);
        assert_eq!(h.retype(CapType::Endpoint, 0, FAULTS, 1), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn mapping_into_it_takes_no_kernel_memory_and_stops_at_its_table_budget() {
        let mut h = child_bound();
        let allocated = h.kernel.frames().allocated();
        // The whole user half but page 0, once bound.
        assert_eq!(h.map(CODE, SPACE, CODE_VA, 5), OK);
        assert_eq!(h.map(STACK, SPACE, abi::IPC_BUFFER_ADDRESS, 3), OK);
        assert_eq!(h.map(SPARE, SPACE, 0, 1), ErrorCode::InvalidAddress.raw());
        assert_eq!(h.map(SPARE, SPACE, 0x1000, 1), OK);
        assert_eq!(h.map(BUFFER, SPACE, 0x1000, 7), bad_rights());
        // Seven tables so far; the eighth cannot make a new path.
        assert_eq!(
            h.map(BUFFER, SPACE, 1 << 39, 3),
            ErrorCode::OutOfResources.raw()
        );
        assert_eq!(h.kernel.frames().allocated(), allocated, "no kernel frame");
        assert_eq!(
            h.map(BUFFER, SPACE, 0x2000, 3),
            OK,
            "old tables still serve"
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn a_map_refused_for_want_of_tables_takes_none_of_them() {
        let mut h = child_bound();
        // Three tables each: two paths from the root, six of eight used.
        assert_eq!(h.map(CODE, SPACE, CODE_VA, 5), OK);
        assert_eq!(h.map(STACK, SPACE, abi::IPC_BUFFER_ADDRESS, 3), OK);
        // A third path needs three; two are left: refused...
        assert_eq!(
            h.map(BUFFER, SPACE, 1 << 39, 3),
            ErrorCode::OutOfResources.raw()
        );
        // ...and nothing changed: the two are still there for a mapping
        // in another GiB under the first path (a level-2 and a level-3
        // table).
        assert_eq!(
            h.map(SPARE, SPACE, 1 << 30, 3),
            OK,
            "a refused FrameMap used up tables"
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    fn bad_rights() -> u64 {
        ErrorCode::InvalidArgument.raw()
    }

    #[test]
    fn tcb_set_space_refuses_bad_arguments_and_changes_nothing() {
        let mut h = at_the_case();
        assert_eq!(h.retype(CapType::Endpoint, 0, FAULTS, 1), OK);
        assert_eq!(h.retype(CapType::CNode, 2, CHILD_CNODE, 1), OK);
        assert_eq!(h.retype(CapType::Tcb, 0, CHILD, 1), OK);
        assert_eq!(h.retype(CapType::VSpace, 1, SPACE, 1), OK);
        assert_eq!(h.retype(CapType::Frame, 0, CODE, 1), OK);
        let none = [NO_CAP, NO_CAP];
        let wrong = ErrorCode::WrongCapabilityType.raw();
        let argument = ErrorCode::InvalidArgument.raw();
        // An unbound VSpace has no tables to map into.
        assert_eq!(h.map(CODE, SPACE, CODE_VA, 1), argument);
        assert_eq!(h.set_space(SPACE, SPACE, none, START), wrong);
        assert_eq!(h.set_space(CHILD, CODE, none, START), wrong);
        assert_eq!(h.set_space(CHILD, SPACE, [FAULTS, NO_CAP], START), wrong);
        assert_eq!(h.set_space(CHILD, SPACE, [NO_CAP, CODE], START), wrong);
        assert_eq!(
            h.set_space(CHILD, SPACE, [40, NO_CAP], START),
            ErrorCode::InvalidCapability.raw()
        );
        assert_eq!(h.set_space(16, SPACE, none, START), argument, "running");
        assert_eq!(
            h.set_space(CHILD, SPACE, none, [CODE_VA + 1, START[1]]),
            argument
        );
        assert_eq!(
            h.set_space(CHILD, SPACE, none, [CODE_VA, START[1] + 4]),
            argument
        );
        assert_eq!(
            h.set_space(CHILD, SPACE, none, [1 << 48, START[1]]),
            ErrorCode::InvalidAddress.raw()
        );
        // Nothing changed: the thread is still new, without a space.
        assert_eq!(
            h.syscall(Syscall::TcbResume.number(), [CHILD, 0, 0, 0]),
            argument
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // Unconfigured is fine (CSpace and priority may come later)...
        assert_eq!(h.set_space(CHILD, SPACE, none, START), OK);
        // ...but not twice (a bound VSpace may take more threads: see
        // `two_threads_share_one_space`).
        assert_eq!(h.set_space(CHILD, SPACE, none, START), argument);
        // No program selector is taken (the kernel loads no program for
        // user space, not even one written for child threads), and the
        // refusal changes nothing; CSpace and priority can still come.
        for x4 in [0x4d, 0] {
            assert_eq!(
                h.syscall(
                    Syscall::TcbConfigure.number(),
                    [CHILD, CHILD_CNODE, 100, x4]
                ),
                argument
            );
        }
        assert_eq!(h.configure_without_program(CHILD), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn the_child_runs_in_its_space_and_its_faults_carry_the_endpoints_badge() {
        let mut h = child_bound();
        let root = h.kernel.current().unwrap();
        let child = child_running(&mut h);
        let asid = h.asid();
        // The root receives on its fault endpoint; the child faults.
        h.syscall(Syscall::Yield.number(), [0; 4]);
        assert_eq!(h.kernel.current(), Some(root));
        assert_eq!(
            h.syscall(Syscall::Recv.number(), [FAULTS, 0, 0, 0]),
            u64::MAX
        );
        assert_eq!(h.kernel.current(), Some(child));
        assert_ne!(asid, 0);
        h.fault(NULL_WRITE_ESR, 0x1234);
        assert_eq!(h.kernel.current(), Some(root), "the fault went to the root");
        let info = abi::MessageInfo::from(h.context().x[1]);
        assert_eq!(info.label(), abi::fault::FAULT_LABEL);
        assert_eq!(h.context().x[3], 0x1234, "the fault address");
        assert_eq!(h.context().x[5], CODE_VA, "the faulting PC");
        assert_eq!(h.context().x[8], FAULT_BADGE, "the endpoint capability's");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn without_its_ipc_buffer_or_fault_endpoint_a_thread_gets_errors_and_stops() {
        let mut h = child_bound();
        // The child gets an endpoint to send on.
        let rights = u64::from(abi::cap::Rights::WRITE.raw());
        h.context().x[6] = 0;
        assert_eq!(
            h.syscall(
                Syscall::CapMintInto.number(),
                [CHILD_CNODE, CHANNEL, 2, rights]
            ),
            OK
        );
        assert_eq!(h.delete(BUFFER), OK);
        assert_eq!(h.delete(FAULTS), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        let child = child_running(&mut h);
        let number = h.kernel.thread(child).number();
        // A message longer than the registers needs the IPC buffer.
        h.context().x[1] = abi::MessageInfo::with(1, 10).into();
        assert_eq!(
            h.syscall(Syscall::NBSend.number(), [2, 0, 0, 0]),
            ErrorCode::InvalidAddress.raw()
        );
        h.context().x[1] = abi::MessageInfo::with(1, 2).into();
        assert_eq!(
            h.syscall(Syscall::NBSend.number(), [2, 0, 0, 0]),
            ErrorCode::WouldBlock.raw(),
            "a short one does not"
        );
        // With no fault endpoint, a fault stops it.
        h.fault(NULL_WRITE_ESR, 0);
        assert!(
            h.machine
                .console
                .contains(&format!("task#{number} stopped: data abort")),
            "{}",
            h.machine.console
        );
        // Ended, its TCB kept for its supervisor (there is none to tell:
        // its fault endpoint is gone); a resume does not start it.
        assert_eq!(h.kernel.thread(child).state(), ThreadState::Ended);
        assert!(matches!(
            h.kernel.thread(child).end(),
            Some(abi::fault::ThreadEnd::Faulted { class: 0x24, .. })
        ));
        assert_eq!(
            h.syscall(Syscall::TcbResume.number(), [CHILD, 0, 0, 0]),
            ErrorCode::InvalidArgument.raw(),
            "ended: only a restart runs it"
        );
        assert_eq!(h.kernel.thread(child).state(), ThreadState::Ended);
        assert_eq!(h.delete(CHILD), OK);
        assert_eq!(
            h.syscall(Syscall::TcbResume.number(), [CHILD, 0, 0, 0]),
            ErrorCode::InvalidCapability.raw()
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    /// The root's registers hold an end message from `FAULTS_BADGED`.
    fn end_received(h: &mut Harness) -> abi::fault::ThreadEnd {
        let x = h.context().x;
        assert_eq!(x[0], OK);
        let info = abi::MessageInfo::from(x[1]);
        assert_eq!(info.label(), abi::fault::END_LABEL);
        assert_eq!(info.length() as usize, abi::fault::END_WORDS);
        assert_eq!(x[8], FAULT_BADGE, "the fault endpoint capability's badge");
        abi::fault::ThreadEnd::decode(&x[2..8]).expect("an end message")
    }

    #[test]
    fn an_exit_reaches_the_supervisor_waiting_on_the_fault_endpoint() {
        let mut h = child_bound();
        let root = h.kernel.current().unwrap();
        let child = child_running(&mut h);
        h.syscall(Syscall::Yield.number(), [0; 4]);
        assert_eq!(h.kernel.current(), Some(root));
        h.syscall(Syscall::Recv.number(), [FAULTS, 0, 0, 0]);
        assert_eq!(h.kernel.current(), Some(child));
        h.exit(7);
        assert_eq!(h.kernel.current(), Some(root), "the end woke the root");
        assert_eq!(
            end_received(&mut h),
            abi::fault::ThreadEnd::Exited { status: 7 }
        );
        let thread = h.kernel.thread(child);
        assert_eq!(thread.state(), ThreadState::Ended, "kept, no message left");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // Its state stays readable through the TCB.
        assert_eq!(
            h.syscall(Syscall::TcbReadRegister.number(), [CHILD, 32, 0, 0]),
            OK
        );
    }

    #[test]
    fn an_end_message_waits_for_a_receiver_and_a_restart_runs_the_thread_again() {
        let mut h = child_bound();
        let root = h.kernel.current().unwrap();
        let child = child_running(&mut h);
        h.exit(3);
        assert!(matches!(
            h.kernel.thread(child).state(),
            ThreadState::EndPending { .. }
        ));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        assert_eq!(h.syscall(Syscall::NBRecv.number(), [FAULTS, 0, 0, 0]), OK);
        assert_eq!(
            end_received(&mut h),
            abi::fault::ThreadEnd::Exited { status: 3 }
        );
        assert_eq!(
            h.syscall(Syscall::NBRecv.number(), [FAULTS, 0, 0, 0]),
            ErrorCode::WouldBlock.raw(),
            "one message per end"
        );
        // Misaligned, outside the user half, a live thread (the root's own
        // TCB), a non-TCB: clear errors, nothing changed.
        let restart = |h: &mut Harness, tcb: u64, pc: u64, sp: u64| {
            h.context().x[5] = 0x7fff_0000;
            h.syscall(Syscall::TcbRestart.number(), [tcb, pc, sp, 0xabc])
        };
        let argument = ErrorCode::InvalidArgument.raw();
        assert_eq!(restart(&mut h, CHILD, CODE_VA + 2, STACK_VA), argument);
        assert_eq!(restart(&mut h, CHILD, CODE_VA, STACK_VA + 8), argument);
        assert_eq!(
            restart(&mut h, CHILD, 1 << 48, STACK_VA),
            ErrorCode::InvalidAddress.raw()
        );
        assert_eq!(
            restart(&mut h, SPACE, CODE_VA, STACK_VA),
            ErrorCode::WrongCapabilityType.raw()
        );
        assert_eq!(h.kernel.thread(child).state(), ThreadState::Ended);
        assert_eq!(restart(&mut h, CHILD, CODE_VA + 8, STACK_VA + 0x800), OK);
        assert_eq!(
            restart(&mut h, CHILD, CODE_VA, STACK_VA),
            argument,
            "twice: it is live again"
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        h.syscall(Syscall::Yield.number(), [0; 4]);
        assert_eq!(h.kernel.current(), Some(child), "it runs again");
        assert_eq!(h.context().pc, CODE_VA + 8);
        assert_eq!(h.context().sp, STACK_VA + 0x800);
        assert_eq!(h.context().x[0], 0xabc);
        assert_eq!(h.context().tpidr, 0x7fff_0000);
        // And it ends again, with a fault this time, which no handler
        // takes (nobody receives): a fault message first...
        h.fault(NULL_WRITE_ESR, 0x10);
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        assert_eq!(h.syscall(Syscall::Recv.number(), [FAULTS, 0, 0, 0]), OK);
        let info = abi::MessageInfo::from(h.context().x[1]);
        assert_eq!(info.label(), abi::fault::FAULT_LABEL);
        // ...and a "stop" reply ends it: its end message follows.
        h.context().x[1] = abi::MessageInfo::with(abi::fault::FAULT_REPLY_STOP, 0).into();
        assert_eq!(h.syscall(Syscall::Reply.number(), [0; 4]), OK);
        assert_eq!(h.syscall(Syscall::NBRecv.number(), [FAULTS, 0, 0, 0]), OK);
        assert!(matches!(
            end_received(&mut h),
            abi::fault::ThreadEnd::Faulted {
                class: 0x24,
                far: 0x10,
                ..
            }
        ));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn a_thread_made_from_user_space_is_task_until_named() {
        let mut h = child_bound();
        let root = h.kernel.current().unwrap();
        h.poke(DATA + 0x100, b"worker");
        let child = child_running(&mut h);
        let number = h.kernel.thread(child).number();
        assert_eq!(h.kernel.thread(child).name().as_str(), "task");
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        assert_eq!(
            h.syscall(Syscall::TcbSetName.number(), [CHILD, DATA + 0x100, 6, 0]),
            OK
        );
        assert_eq!(h.kernel.thread(child).name().as_str(), "worker");
        assert_eq!(h.kernel.thread(child).number(), number);
        // Its fault's console line names it.
        while h.kernel.current() != Some(child) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        h.fault(NULL_WRITE_ESR, 0x10);
        let line = format!("[kernel] thread worker#{number} faulted: ");
        assert!(
            h.machine.console.contains(&line),
            "no {line:?} in:\n{}",
            h.machine.console
        );
    }

    #[test]
    fn deleting_an_ended_tcb_withdraws_its_message_and_frees_its_memory() {
        let mut h = child_bound();
        let root = h.kernel.current().unwrap();
        child_running(&mut h);
        h.exit(0);
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        assert_eq!(h.delete(CHILD), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(
            h.syscall(Syscall::NBRecv.number(), [FAULTS, 0, 0, 0]),
            ErrorCode::WouldBlock.raw(),
            "the message went with the TCB"
        );
        assert_eq!(
            h.syscall(Syscall::TcbResume.number(), [CHILD, 0, 0, 0]),
            ErrorCode::InvalidCapability.raw()
        );
        // The space had no other thread: it is unbound, reusable.
        assert_eq!(
            h.map(SPARE, SPACE, 0x1000, 1),
            ErrorCode::InvalidArgument.raw()
        );
        // Deleting the endpoint while a message waits leaves the thread
        // ended, the message gone.
        assert_eq!(
            h.retype(CapType::Tcb, 0, CHILD, 1),
            OK,
            "the memory is back"
        );
        assert_eq!(h.configure_without_program(CHILD), OK);
        assert_eq!(
            h.set_space(CHILD, SPACE, [BUFFER, FAULTS_BADGED], START),
            OK
        );
        let child = child_running(&mut h);
        h.exit(1);
        assert_eq!(h.kernel.current(), Some(root));
        assert_eq!(h.delete(FAULTS_BADGED), OK);
        assert_eq!(h.delete(FAULTS), OK);
        assert_eq!(h.kernel.thread(child).state(), ThreadState::Ended);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn deleting_a_bound_vspace_ends_its_thread_and_takes_its_mappings_down() {
        let mut h = child_bound();
        let child = child_running(&mut h);
        h.syscall(Syscall::Yield.number(), [0; 4]);
        let flushes = h.machine.tlb_flushes;
        assert_eq!(h.delete(SPACE), OK);
        assert!(h.machine.tlb_flushes > flushes, "the TLB was flushed");
        let thread = h.kernel.thread(child);
        assert!(thread.state().is_kept_end(), "the thread ended");
        assert_eq!(
            thread.end(),
            Some(abi::fault::ThreadEnd::Killed(
                abi::fault::KillReason::SpaceDestroyed
            ))
        );
        assert!(thread.space().is_none(), "its TCB is kept, without a space");
        assert_eq!(
            h.syscall(Syscall::TcbRestart.number(), [CHILD, CODE_VA, STACK_VA, 0]),
            ErrorCode::InvalidArgument.raw(),
            "no space to restart in"
        );
        // Its frames are mapped nowhere: they map again.
        let va = abi::vspace::FRAME_MAP_START;
        assert_eq!(h.map(CODE, OWN_SPACE, va, 1), OK);
        assert!(h.readable(va));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn a_thread_that_ends_leaves_its_vspace_unbound_empty_and_reusable() {
        let mut h = child_bound();
        let child = child_running(&mut h);
        h.exit(0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // Its TCB is kept, ended, in its space (a restart could run it
        // there again), until the TCB goes.
        assert!(h.kernel.thread_space(child).is_some());
        assert_eq!(h.map(SPARE, SPACE, 0x1000, 1), OK);
        assert_eq!(h.delete(CHILD), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // Unbound: no tables to map into.
        assert_eq!(
            h.map(SPARE, SPACE, 0x1000, 1),
            ErrorCode::InvalidArgument.raw()
        );
        assert_eq!(h.retype(CapType::Tcb, 0, SECOND, 1), OK);
        assert_eq!(h.set_space(SECOND, SPACE, [NO_CAP, NO_CAP], START), OK);
        // Empty: the old mappings are gone, the budget is whole again.
        assert_eq!(h.map(CODE, SPACE, CODE_VA, 5), OK);
        assert_eq!(h.map(SPARE, SPACE, abi::IPC_BUFFER_ADDRESS, 1), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    /// The object the root's capability in `slot` names.
    fn object_in(h: &Harness, slot: u64) -> microkernel::cap::ObjectId {
        let root = h.kernel.current().expect("the root runs");
        let cnode = h
            .kernel
            .thread(root)
            .cspace()
            .expect("the root has a CSpace");
        let objects = h.kernel.objects();
        objects
            .lookup(objects.slot(cnode, slot).unwrap())
            .unwrap()
            .object()
    }

    /// A frame's mapping names its VSpace object, not only the object's
    /// place: a VSpace destroyed and a new one made in its memory (same
    /// object, same pages, generation 0 again) does not hold the frames
    /// mapped into the old one.
    #[test]
    fn a_frame_mapped_into_a_destroyed_vspace_is_not_in_the_next_one_made_there() {
        const SCRATCH: u64 = 21;
        const THREAD: u64 = 22;
        const REUSED: u64 = 23;
        const VA: u64 = 0x50_0000;
        let mut h = child_bound();
        // A scratch Untyped whose only child is the VSpace.
        assert_eq!(h.retype(CapType::Untyped, 15, SCRATCH, 1), OK);
        let vspace_from_scratch = |h: &mut Harness| {
            h.context().x[5] = 1;
            let vspace = u64::from(CapType::VSpace.raw());
            h.syscall(Syscall::Retype.number(), [SCRATCH, vspace, 3, REUSED])
        };
        assert_eq!(vspace_from_scratch(&mut h), OK);
        let old = object_in(&h, REUSED);
        assert_eq!(h.retype(CapType::Tcb, 0, THREAD, 1), OK);
        assert_eq!(h.set_space(THREAD, REUSED, [NO_CAP, NO_CAP], START), OK);
        assert_eq!(h.map(SPARE, REUSED, VA, 1), OK);
        // Deleting the VSpace ends the thread bound to it and takes its
        // space down; the scratch Untyped is empty again.
        assert_eq!(h.delete(REUSED), OK);
        assert_eq!(vspace_from_scratch(&mut h), OK);
        assert_eq!(object_in(&h, REUSED), old, "the memory is reused");
        assert_eq!(h.retype(CapType::Tcb, 0, SECOND, 1), OK);
        assert_eq!(h.set_space(SECOND, REUSED, [NO_CAP, NO_CAP], START), OK);
        let child = h
            .kernel
            .threads()
            .find(|&t| h.kernel.thread(t).space() == Some(old))
            .expect("the child is bound to the new VSpace");
        assert_eq!(h.map(STACK, REUSED, VA, 1), OK);
        assert!(maps(&h, child, VA));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // The frame mapped into the old space is mapped nowhere: unmapping
        // it leaves the new space's page alone, and it maps again.
        assert_eq!(
            h.syscall(Syscall::FrameUnmap.number(), [SPARE, 0, 0, 0]),
            OK
        );
        assert!(maps(&h, child, VA), "another frame's page was unmapped");
        assert_eq!(h.map(SPARE, OWN_SPACE, abi::vspace::FRAME_MAP_START, 1), OK);
        assert!(h.readable(abi::vspace::FRAME_MAP_START));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    /// `child_bound`, and a second new thread (`SECOND`, same CSpace)
    /// bound to the child's VSpace with its own stack top; the child's code
    /// and stack are mapped once, and both are resumed.
    fn two_bound() -> Harness {
        let mut h = child_bound();
        assert_eq!(h.retype(CapType::Tcb, 0, SECOND, 1), OK);
        assert_eq!(h.configure_without_program(SECOND), OK);
        let second_start = [CODE_VA + 8, STACK_VA + 0x800];
        assert_eq!(
            h.set_space(SECOND, SPACE, [NO_CAP, NO_CAP], second_start),
            OK
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(h.map(CODE, SPACE, CODE_VA, 5), OK);
        assert_eq!(h.map(STACK, SPACE, STACK_VA, 3), OK);
        assert_eq!(h.syscall(Syscall::TcbResume.number(), [CHILD, 0, 0, 0]), OK);
        assert_eq!(
            h.syscall(Syscall::TcbResume.number(), [SECOND, 0, 0, 0]),
            OK
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        h
    }

    /// Does `va` translate, readable from EL0, in `thread`'s space?
    fn maps(h: &Harness, thread: ThreadId, va: u64) -> bool {
        h.kernel
            .thread_space(thread)
            .is_some_and(|space| space.copy_from_user(&h.machine, va, &mut [0u8]).is_ok())
    }

    /// Yields until a thread other than `except` runs; returns it.
    fn run_other(h: &mut Harness, except: &[ThreadId]) -> ThreadId {
        for _ in 0..4 {
            h.syscall(Syscall::Yield.number(), [0; 4]);
            let now = h.kernel.current().expect("a thread runs");
            if !except.contains(&now) {
                return now;
            }
        }
        panic!("no other thread ran");
    }

    #[test]
    fn two_threads_share_one_space() {
        let mut h = two_bound();
        let root = h.kernel.current().unwrap();
        let first = run_other(&mut h, &[root]);
        let first_pc = h.context().pc;
        let first_asid = h.asid();
        let second = run_other(&mut h, &[root, first]);
        let second_pc = h.context().pc;
        // Both run, each from its own entry, with one ASID and one root.
        let mut pcs = [first_pc, second_pc];
        pcs.sort();
        assert_eq!(pcs, [CODE_VA, CODE_VA + 8]);
        assert_eq!(h.asid(), first_asid);
        assert_eq!(
            h.kernel.thread(first).ttbr0(),
            h.kernel.thread(second).ttbr0()
        );
        assert_eq!(
            h.kernel.thread(first).space(),
            h.kernel.thread(second).space()
        );
        // The frame mapped once is there for both.
        assert!(maps(&h, first, CODE_VA) && maps(&h, second, CODE_VA));
        assert!(maps(&h, first, STACK_VA) && maps(&h, second, STACK_VA));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // One ends: the other runs on, the mappings stay, the VSpace
        // stays bound (it still takes mappings).
        h.exit(0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        let survivor = run_other(&mut h, &[root, second]);
        assert_eq!(survivor, first);
        assert_eq!(h.asid(), first_asid);
        assert!(maps(&h, first, CODE_VA) && maps(&h, first, STACK_VA));
        h.syscall(Syscall::Yield.number(), [0; 4]);
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        assert_eq!(h.map(SPARE, SPACE, 0x1000, 1), OK);
        assert!(maps(&h, first, 0x1000));
        // A frame mapped into the shared space cannot be mapped again.
        assert_eq!(
            h.map(CODE, SPACE, 0x2000, 1),
            ErrorCode::AlreadyMapped.raw()
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // The last one ends: both TCBs are kept ended, in the space; once
        // they are deleted the space goes, the VSpace is unbound.
        let _ = run_other(&mut h, &[root]);
        h.exit(0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        let flushes = h.machine.tlb_flushes;
        assert_eq!(h.delete(CHILD), OK);
        assert_eq!(h.delete(SECOND), OK);
        assert!(h.machine.tlb_flushes > flushes, "the TLB was flushed");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(
            h.map(BUFFER, SPACE, 0x3000, 1),
            ErrorCode::InvalidArgument.raw(),
            "unbound again"
        );
        assert_eq!(h.map(CODE, OWN_SPACE, abi::vspace::FRAME_MAP_START, 1), OK);
    }

    #[test]
    fn an_asid_rollover_gives_the_shared_space_one_new_asid_for_both_threads() {
        const SCRATCH: u64 = 21;
        const SCRATCH_TCB: u64 = 22;
        const OTHER_SPACE: u64 = 23;
        let mut h = two_bound();
        let root = h.kernel.current().unwrap();
        let first = run_other(&mut h, &[root]);
        let before = h.asid();
        let generation = h.kernel.thread(first).asid_generation();
        let second = run_other(&mut h, &[root, first]);
        assert_eq!(h.asid(), before);
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        // Every binding of an unbound VSpace takes a new ASID: bind one
        // to a short-lived thread (from a scratch Untyped, revoked each
        // time) until the 8-bit numbers roll over.
        assert_eq!(h.retype(CapType::Untyped, 12, SCRATCH, 1), OK);
        assert_eq!(h.retype(CapType::VSpace, 1, OTHER_SPACE, 1), OK);
        for _ in 0..300 {
            h.context().x[5] = 1;
            let tcb = u64::from(CapType::Tcb.raw());
            assert_eq!(
                h.syscall(Syscall::Retype.number(), [SCRATCH, tcb, 0, SCRATCH_TCB]),
                OK
            );
            assert_eq!(
                h.set_space(SCRATCH_TCB, OTHER_SPACE, [NO_CAP, NO_CAP], START),
                OK
            );
            assert_eq!(
                h.syscall(Syscall::CapRevoke.number(), [0, SCRATCH, 0, 0]),
                OK
            );
        }
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // The first switch into the space renews its ASID for both.
        let again = run_other(&mut h, &[root]);
        let renewed = h.asid();
        assert_ne!(renewed, 0);
        assert!(
            h.kernel.thread(again).asid_generation() > generation,
            "rolled over"
        );
        let other = if again == first { second } else { first };
        assert_eq!(
            h.kernel.thread(again).ttbr0(),
            h.kernel.thread(other).ttbr0()
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(run_other(&mut h, &[root, again]), other);
        assert_eq!(h.asid(), renewed, "the other thread found it current");
        assert!(maps(&h, other, CODE_VA));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    /// A new thread bound to the root's own, kernel-made VSpace, resumed
    /// and running; the root runs again.
    fn guest_of_the_root(h: &mut Harness) -> (ThreadId, ThreadId) {
        let root = h.kernel.current().unwrap();
        assert_eq!(h.retype(CapType::CNode, 2, CHILD_CNODE, 1), OK);
        assert_eq!(h.retype(CapType::Tcb, 0, CHILD, 1), OK);
        assert_eq!(h.configure_without_program(CHILD), OK);
        let va = abi::vspace::FRAME_MAP_START;
        assert_eq!(
            h.set_space(CHILD, OWN_SPACE, [NO_CAP, NO_CAP], [va, va + 0x2000]),
            OK
        );
        assert_eq!(h.syscall(Syscall::TcbResume.number(), [CHILD, 0, 0, 0]), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        let root_asid = h.asid();
        let guest = run_other(h, &[root]);
        assert_eq!(h.context().pc, va);
        assert_eq!(h.asid(), root_asid, "one space, one ASID");
        assert_eq!(
            h.kernel.thread(guest).ttbr0(),
            h.kernel.thread(root).ttbr0()
        );
        // What the kernel mapped for the root is the guest's too.
        assert!(maps(h, guest, abi::IPC_BUFFER_ADDRESS));
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        (root, guest)
    }

    #[test]
    fn a_thread_runs_in_its_creators_kernel_made_space() {
        let mut h = at_the_case();
        let (root, guest) = guest_of_the_root(&mut h);
        // A frame the root maps into its space is seen by the guest.
        let va = abi::vspace::FRAME_MAP_START + 0x4000;
        assert_eq!(h.retype(CapType::Frame, 0, CODE, 1), OK);
        assert_eq!(h.map(CODE, OWN_SPACE, va, 1), OK);
        assert!(maps(&h, guest, va));
        // The guest ends: the root's space and mapping stay.
        let _ = run_other(&mut h, &[root]);
        h.exit(0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        assert!(h.readable(va));
        assert!(maps(&h, root, abi::IPC_BUFFER_ADDRESS));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn the_owner_of_a_kernel_made_space_ends_cleanly_with_a_guest_in_it() {
        // The root owns the only kernel-made space; a thread it binds to
        // it ends with it.
        let mut h = Harness::start();
        let (_, guest) = h.child(100, 0, NO_CAP);
        h.exit(0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(
            h.resume,
            Resume::Shutdown {
                status: EXIT_SUCCESS
            }
        );
        // It ended with the space, and its TCB (whose only capability
        // was in the root's CNode) went with that CNode.
        assert!(h.kernel.try_thread(guest).is_none());
    }

    #[test]
    fn deleting_a_shared_vspace_ends_every_thread_in_it() {
        let mut h = two_bound();
        let root = h.kernel.current().unwrap();
        let first = run_other(&mut h, &[root]);
        let second = run_other(&mut h, &[root, first]);
        while h.kernel.current() != Some(root) {
            h.syscall(Syscall::Yield.number(), [0; 4]);
        }
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        let flushes = h.machine.tlb_flushes;
        assert_eq!(h.delete(SPACE), OK);
        assert!(h.machine.tlb_flushes > flushes, "the TLB was flushed");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        for thread in [first, second] {
            assert!(
                h.kernel.thread(thread).state().is_kept_end(),
                "both threads ended"
            );
        }
        assert!(h.kernel.thread_space(first).is_none());
        assert!(h.kernel.thread_space(second).is_none());
        // Their frames are mapped nowhere: they map again.
        let va = abi::vspace::FRAME_MAP_START;
        assert_eq!(h.map(CODE, OWN_SPACE, va, 1), OK);
        assert_eq!(h.map(STACK, OWN_SPACE, va + 0x1000, 3), OK);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn revoking_the_untyped_ends_the_thread_and_reclaims_every_page() {
        let mut h = child_bound();
        child_running(&mut h);
        h.syscall(Syscall::Yield.number(), [0; 4]);
        assert_eq!(
            h.syscall(Syscall::CapRevoke.number(), [0, UNTYPED, 0, 0]),
            OK
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(
            h.map(CODE, SPACE, CODE_VA, 5),
            ErrorCode::InvalidCapability.raw()
        );
        // As much as fitted at first fits again (see
        // `a_vspace_takes_its_root_and_table_pages_from_the_untyped`).
        assert_eq!(h.retype(CapType::VSpace, 30, 20, 1), OK, "every page");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }
}

/// The root task: what it is handed, and what goes when it ends.
mod root_task {
    use super::*;
    use abi::bootinfo::{ROOT_CNODE_SLOT, ROOT_IPC_BUFFER_SLOT};

    fn boot_info(h: &Harness) -> BootInfo {
        h.boot_info()
    }

    #[test]
    fn the_root_gets_every_free_page_as_aligned_untypeds() {
        let mut h = Harness::start();
        let info = boot_info(&h);
        assert!(!info.untypeds.is_empty());
        for (i, a) in info.untypeds.iter().enumerate() {
            assert_eq!(a.base % a.bytes(), 0, "{a:?} is naturally aligned");
            assert!(a.base >= RAM.start && a.base + a.bytes() <= RAM.end());
            for b in &info.untypeds[i + 1..] {
                assert!(a.base + a.bytes() <= b.base || b.base + b.bytes() <= a.base);
            }
        }
        // Only the kept pages are left in the kernel's pool.
        assert_eq!(h.kernel.frames().available(), info.kernel_kept_pages);
        assert!(
            info.kernel_kept_pages >= abi::vspace::MAX_TABLE_PAGES as u64,
            "the smallest blocks that make up the root's own table pages stay"
        );
        let handed_over = info.untyped_bytes() / 4096 + info.kernel_kept_pages;
        // Each slot holds what the table says; the first free slot is empty.
        let retype = |h: &mut Harness, untyped: u64, target: u64| {
            h.context().x[5] = 1;
            h.syscall(
                Syscall::Retype.number(),
                [untyped, u64::from(CapType::Frame.raw()), 0, target],
            )
        };
        for index in 0..info.untypeds.len() {
            let target = ROOT_FIRST_FREE_SLOT + index as u64;
            assert_eq!(retype(&mut h, BootInfo::untyped_slot(index), target), 0);
        }
        assert_eq!(
            retype(&mut h, BootInfo::untyped_slot(info.untypeds.len()), 500),
            ErrorCode::InvalidCapability.raw()
        );
        assert_eq!(
            h.syscall(Syscall::TcbSetPriority.number(), [ROOT_TCB_SLOT, 100, 0, 0]),
            0
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // The root gives a copy of its IPC buffer's Frame away (to its own
        // CNode here) and deletes an Untyped; then it ends.
        h.context().x[5] = 0;
        h.context().x[6] = 0;
        assert_eq!(
            h.syscall(
                Syscall::CapMint.number(),
                [ROOT_CNODE_SLOT, ROOT_IPC_BUFFER_SLOT, 499, 3]
            ),
            0
        );
        assert_eq!(
            h.syscall(
                Syscall::CapDelete.number(),
                [ROOT_CNODE_SLOT, BootInfo::untyped_slot(0), 0, 0]
            ),
            0
        );
        let in_use = h.kernel.frames().allocated();
        assert_eq!(
            h.kernel.frames().available() + in_use,
            RAM.size / 4096 - 1,
            "every page but the first is in the pool or in use"
        );
        assert!(handed_over < RAM.size / 4096);
        h.exit(0);
        assert_eq!(
            h.resume,
            Resume::Shutdown {
                status: EXIT_SUCCESS
            }
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // The root's own objects and space came back to the pool; the
        // Untypeds' blocks stay with the objects made in them.
        let frames = h.kernel.frames();
        assert_eq!(frames.lost(), 0);
        assert_eq!(
            frames.allocated(),
            h.kernel.own_pages() + info.untyped_bytes() / 4096
        );
        assert_eq!(
            frames.available() + frames.allocated(),
            RAM.size / 4096 - 1,
            "every page (but the first, never the pool's) is in the pool, the kernel's own \
             or an Untyped's"
        );
    }

    /// `IrqControlGet` through the root's IrqControl: every refusal
    /// leaves nothing behind, one handler per interrupt, and deleting it
    /// frees the interrupt for another.
    #[test]
    fn irq_control_makes_one_handler_per_interrupt_the_kernel_does_not_keep() {
        use abi::bootinfo::{ROOT_IRQ_CONTROL_SLOT, ROOT_IRQ_SLOT};
        let mut h = Harness::start();
        let get = |h: &mut Harness, control: u64, intid: u64, slot: u64| {
            h.syscall(Syscall::IrqControlGet.number(), [control, intid, slot, 0])
        };
        let c = ROOT_IRQ_CONTROL_SLOT;
        let free = ROOT_FIRST_FREE_SLOT;
        let code = |e: ErrorCode| e.raw();
        // The capability first.
        assert_eq!(
            get(&mut h, free, 40, free + 1),
            code(ErrorCode::InvalidCapability)
        );
        assert_eq!(
            get(&mut h, 1 << 20, 40, free + 1),
            code(ErrorCode::InvalidCapability)
        );
        assert_eq!(
            get(&mut h, ROOT_TCB_SLOT, 40, free + 1),
            code(ErrorCode::WrongCapabilityType)
        );
        h.context().x[5] = 0;
        h.context().x[6] = 0;
        let read_only = abi::cap::Rights::READ.into_bytes()[0] as u64;
        assert_eq!(
            h.syscall(
                Syscall::CapMint.number(),
                [ROOT_CNODE_SLOT, c, free, read_only]
            ),
            0
        );
        assert_eq!(
            get(&mut h, free, 40, free + 1),
            code(ErrorCode::MissingRights)
        );
        // Then the interrupt: past the GIC's lines, then the kernel's own.
        for intid in [288, 1023, 1 << 32, u64::MAX] {
            assert_eq!(
                get(&mut h, c, intid, free + 1),
                code(ErrorCode::InvalidArgument),
                "{intid}"
            );
        }
        for intid in [0, 1, 15, 27, 33] {
            assert_eq!(
                get(&mut h, c, intid, free + 1),
                code(ErrorCode::Denied),
                "{intid}"
            );
        }
        // Then the slot.
        assert_eq!(
            get(&mut h, c, 40, 1 << 12),
            code(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            get(&mut h, c, 40, u64::MAX),
            code(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            get(&mut h, c, 40, ROOT_TCB_SLOT),
            code(ErrorCode::SlotOccupied)
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // One handler per interrupt: the physical timer's is the root's.
        assert_eq!(get(&mut h, c, 30, free + 1), code(ErrorCode::IrqInUse));
        assert_eq!(get(&mut h, c, 40, free + 1), 0);
        assert_eq!(get(&mut h, c, 40, free + 2), code(ErrorCode::IrqInUse));
        assert_eq!(get(&mut h, c, 287, free + 2), 0, "the last line");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // The new handler works: unbound, IrqAck is refused; bound to a
        // notification, its interrupt signals it.
        let handler = free + 1;
        assert_eq!(
            h.syscall(Syscall::IrqAck.number(), [handler, 0, 0, 0]),
            code(ErrorCode::InvalidArgument)
        );
        h.context().x[5] = 1;
        let notification = free + 3;
        assert_eq!(
            h.syscall(
                Syscall::Retype.number(),
                [
                    BootInfo::untyped_slot(0),
                    u64::from(CapType::Notification.raw()),
                    0,
                    notification
                ]
            ),
            0
        );
        assert_eq!(
            h.syscall(
                Syscall::IrqSetNotification.number(),
                [handler, notification, 0, 0]
            ),
            0
        );
        assert_eq!(
            h.syscall(Syscall::IrqSetTimer.number(), [handler, 100, 0, 0]),
            code(ErrorCode::InvalidArgument),
            "only the physical timer's handler programs it"
        );
        let resume = h
            .kernel
            .handle_el0_interrupt(&mut h.machine, Some(Interrupt::Other(40)));
        h.resumed(resume);
        assert_eq!(
            h.syscall(Syscall::Poll.number(), [notification, 0, 0, 0]),
            0
        );
        assert_eq!(h.context().x[8], 1, "the interrupt signalled bit 0");
        assert_eq!(h.syscall(Syscall::IrqAck.number(), [handler, 0, 0, 0]), 0);
        // A copy keeps the interrupt taken; deleting the handler (its copy
        // with it) frees it, even with its interrupt pending.
        assert_eq!(
            h.syscall(
                Syscall::CapCopy.number(),
                [ROOT_CNODE_SLOT, handler, free + 4, 0]
            ),
            0
        );
        h.machine.pending_interrupts.push(Interrupt::Other(40));
        assert_eq!(
            h.syscall(
                Syscall::CapDelete.number(),
                [ROOT_CNODE_SLOT, handler, 0, 0]
            ),
            0
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(
            h.syscall(Syscall::IrqAck.number(), [free + 4, 0, 0, 0]),
            code(ErrorCode::InvalidCapability),
            "the copy went with it"
        );
        let resume = h
            .kernel
            .handle_el0_interrupt(&mut h.machine, Some(Interrupt::Other(40)));
        h.resumed(resume);
        assert!(h
            .machine
            .console
            .contains("interrupt 40 has no handler; masked"));
        assert_eq!(
            get(&mut h, c, 40, free + 1),
            0,
            "the interrupt is free again"
        );
        // The physical timer's too, once the root's handler is deleted;
        // the new one programs the timer.
        assert_eq!(
            h.syscall(
                Syscall::CapDelete.number(),
                [ROOT_CNODE_SLOT, ROOT_IRQ_SLOT, 0, 0]
            ),
            0
        );
        assert_eq!(get(&mut h, c, 30, ROOT_IRQ_SLOT), 0);
        assert_eq!(
            h.syscall(Syscall::IrqSetTimer.number(), [ROOT_IRQ_SLOT, 100, 0, 0]),
            0
        );
        assert_eq!(h.machine.physical_timer, Some(100));
        // Revoking the IrqControl takes back every handler it issued.
        assert_eq!(
            h.syscall(Syscall::CapRevoke.number(), [ROOT_CNODE_SLOT, c, 0, 0]),
            0
        );
        assert_eq!(
            h.machine.physical_timer, None,
            "the timer's handler went: disarmed"
        );
        for slot in [free + 1, free + 2, ROOT_IRQ_SLOT] {
            assert_eq!(
                h.syscall(Syscall::IrqAck.number(), [slot, 0, 0, 0]),
                code(ErrorCode::InvalidCapability)
            );
        }
        assert_eq!(get(&mut h, c, 40, free + 1), 0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // The root ends, and the run with it.
        h.exit(0);
        assert_eq!(
            h.resume,
            Resume::Shutdown {
                status: EXIT_SUCCESS
            }
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        assert_eq!(h.kernel.frames().lost(), 0);
    }
}

/// `TcbSetName` on the fake platform: a name from user space replaces
/// the thread's in its console lines, its number stays; every refusal
/// changes nothing.
mod thread_names {
    use super::*;
    use abi::bootinfo::ROOT_CNODE_SLOT;

    /// The TCB of the thread the root makes (the first slot `make` takes).
    const TCB: u64 = ROOT_FIRST_FREE_SLOT + 200;

    const OK: u64 = 0;
    /// Where the root keeps the text it passes (its data page).
    const TEXT: u64 = DATA + 0x100;

    impl Harness {
        /// `TcbSetName` of `tcb` to `name`, written into the caller's data
        /// page first.
        fn set_name(&mut self, tcb: u64, name: &[u8]) -> u64 {
            self.poke(TEXT, name);
            self.set_name_at(tcb, TEXT, name.len() as u64)
        }

        fn set_name_at(&mut self, tcb: u64, address: u64, len: u64) -> u64 {
            self.syscall(Syscall::TcbSetName.number(), [tcb, address, len, 0])
        }

        fn print(&mut self, text: &[u8]) -> u64 {
            self.poke(TEXT + 0x100, text);
            self.syscall(
                Syscall::DebugPrint.number(),
                [WRITE_ONLY_CONSOLE, TEXT + 0x100, text.len() as u64, 0],
            )
        }
    }

    /// A thread the root task made in its own CSpace (so it holds its own
    /// TCB, in `TCB`, and the console) and address space, on the CPU.
    fn root() -> (Harness, ThreadId) {
        let mut h = Harness::start();
        h.write_only_console();
        let (tcb, child) = h.child(100, 0, NO_CAP);
        assert_eq!(tcb, TCB);
        assert_eq!(h.syscall(Syscall::Yield.number(), [0; 4]), u64::MAX);
        assert_eq!(h.kernel.current(), Some(child));
        assert_eq!(h.kernel.thread(child).name().as_str(), "task");
        (h, child)
    }

    #[test]
    fn a_named_thread_prints_under_its_new_name_with_its_number() {
        let (mut h, root) = root();
        let number = h.kernel.thread(root).number();
        assert_eq!(h.print(b"before\n"), OK);
        assert_eq!(h.set_name(TCB, b"supervisor-1"), OK);
        assert_eq!(h.kernel.thread(root).name().as_str(), "supervisor-1");
        assert_eq!(h.kernel.thread(root).number(), number, "the number stays");
        assert_eq!(h.print(b"after\n"), OK);
        // A line left open ends before the name changes.
        assert_eq!(h.print(b"half"), OK);
        assert_eq!(h.set_name(TCB, b"sv"), OK);
        assert_eq!(h.print(b"other half\n"), OK);
        let console = &h.machine.console;
        for line in [
            format!("[task#{number}] before\n"),
            format!("[supervisor-1#{number}] after\n"),
            format!("[supervisor-1#{number}] half\n[sv#{number}] other half\n"),
        ] {
            assert!(console.contains(&line), "no {line:?} in:\n{console}");
        }
        // Sixteen bytes, every printable class the rule allows.
        assert_eq!(h.set_name(TCB, b"a-Z_0.9:!~(x)/@$"), OK);
        assert_eq!(h.kernel.thread(root).name().as_str(), "a-Z_0.9:!~(x)/@$");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn every_bad_name_is_refused_and_changes_nothing() {
        let (mut h, root) = root();
        let invalid = ErrorCode::InvalidArgument.raw();
        let bad_address = ErrorCode::InvalidAddress.raw();
        // Length: none, or more than 24 bytes.
        assert_eq!(h.set_name_at(TCB, TEXT, 0), invalid);
        assert_eq!(h.set_name(TCB, b"0123456789abcdefghijklmno"), invalid);
        assert_eq!(h.set_name_at(TCB, TEXT, u64::MAX), invalid);
        // Bytes: space, the prefix's own characters, control and non-ASCII.
        for bad in [
            &b"two words"[..],
            b"a#1",
            b"[a",
            b"a]",
            b"tab\t",
            b"line\n",
            b"nul\0",
            b"\x7f",
            b"caf\xc3\xa9",
        ] {
            assert_eq!(h.set_name(TCB, bad), invalid, "{bad:?}");
        }
        // Memory: outside the user half, unmapped, running off the data
        // page.
        assert_eq!(h.set_name_at(TCB, 0xffff_0000_0000_0000, 4), bad_address);
        assert_eq!(h.set_name_at(TCB, 0x1000, 4), bad_address);
        assert_eq!(h.set_name_at(TCB, DATA + 0xffc, 8), bad_address);
        // The capability: empty, another type, a TCB without the write
        // right.
        let read_only = ROOT_FIRST_FREE_SLOT + 40;
        h.context().x[5] = 0;
        h.context().x[6] = 0;
        assert_eq!(
            h.syscall(
                Syscall::CapMint.number(),
                [
                    ROOT_CNODE_SLOT,
                    TCB,
                    read_only,
                    u64::from(Rights::READ.raw())
                ]
            ),
            OK
        );
        assert_eq!(
            h.set_name(read_only + 1, b"x"),
            ErrorCode::InvalidCapability.raw()
        );
        assert_eq!(
            h.set_name(ROOT_CONSOLE_SLOT, b"x"),
            ErrorCode::WrongCapabilityType.raw()
        );
        assert_eq!(h.set_name(read_only, b"x"), ErrorCode::MissingRights.raw());
        assert_eq!(h.kernel.thread(root).name().as_str(), "task");
        assert_eq!(h.print(b"still\n"), OK);
        let number = h.kernel.thread(root).number();
        assert!(h
            .machine
            .console
            .contains(&format!("[task#{number}] still\n")));
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }
}

#[test]
fn every_return_to_el0_finds_its_tables_published_and_its_code_fetchable() {
    // The harness checks at each return (`Harness::resumed`): the root's
    // space, which the kernel loaded, and the spaces of threads it makes.
    let mut h = Harness::start();
    assert!(
        h.machine.maintenance.syncs >= 1,
        "init's executable page synced"
    );
    let mut returns = 1;
    h.scene(&VSPACE_SCENE);
    returns += 1;
    for _ in 0..4 {
        h.syscall(Syscall::Yield.number(), [0; 4]);
        returns += 1;
    }
    // Every return to EL0 to a space with code in it checked that code
    // (the handler's own space has none mapped).
    assert!(h.executable_pages_checked >= returns - 1);
}

#[test]
fn a_frame_mapped_executable_is_synced_once_and_only_then() {
    use abi::vspace::FRAME_MAP_START as VA;
    let mut h = at_the_vspace_case();
    assert_eq!(h.syscall(Syscall::Recv.number(), [2, 0, 0, 0]), u64::MAX);
    assert_eq!(h.retype_frames(8, 1), ErrorCode::Ok.raw());
    let syncs = h.machine.maintenance.syncs;
    // Read-write, then read-only: nothing to fetch, nothing synced.
    for rights in [3, 1] {
        assert_eq!(h.map(8, 4, VA, rights), ErrorCode::Ok.raw());
        assert_eq!(h.machine.maintenance.syncs, syncs);
        assert_eq!(
            h.syscall(Syscall::FrameUnmap.number(), [8, 0, 0, 0]),
            ErrorCode::Ok.raw()
        );
    }
    // Executable: synced, and the return to the mapper (whose space it
    // is) found the page fetchable.
    let checked = h.executable_pages_checked;
    assert_eq!(h.map(8, 4, VA, 5), ErrorCode::Ok.raw());
    assert_eq!(h.machine.maintenance.syncs, syncs + 1);
    assert!(h.executable_pages_checked > checked);
    assert!(h.readable(VA));
}

/// Stopped calls on the fake platform: a trace entry stop cancelled by a
/// register write does not run.
mod stopped_calls {
    use super::*;

    #[test]
    fn a_register_write_cancels_a_syscall_waiting_at_its_entry_stop() {
        let mut h = Harness::start();
        let (tracer, tracee) = tracer_attached(&mut h);
        // The tracee polls: its entry stop waits in the tracer's queue.
        assert_eq!(h.syscall(Syscall::Poll.number(), [5, 0, 0, 0]), u64::MAX);
        assert_eq!(h.kernel.current(), Some(tracer));
        assert!(h.kernel.thread(tracee).call().is_some());
        // The tracer's TCB capability to the tracee (slot 3, write) sets
        // its x8 to another syscall: the kept call is cancelled instead.
        assert_eq!(
            h.syscall(Syscall::TcbWriteRegister.number(), [3, 8, 12_345, 0]),
            ErrorCode::Ok.raw()
        );
        assert_eq!(
            h.context().x[8],
            1,
            "the writer learns a call was cancelled"
        );
        let thread = h.kernel.thread(tracee);
        assert_eq!(thread.call(), None);
        assert_eq!(thread.trace_stop(), None, "the stop was withdrawn");
        assert_eq!(thread.state(), ThreadState::Ready);
        assert_eq!(thread.context().x[0], ErrorCode::Interrupted.raw());
        assert_eq!(thread.context().x[8], 12_345, "the write took effect after");
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // Nothing else is in the tracer's queue: its receive would wait.
        assert_eq!(
            h.syscall(Syscall::NBRecv.number(), [2, 0, 0, 0]),
            ErrorCode::WouldBlock.raw()
        );
    }

    #[test]
    fn a_pc_write_cancels_a_stopped_syscall_and_an_sp_write_does_not() {
        let mut h = Harness::start();
        let (tracer, tracee) = tracer_attached(&mut h);
        assert_eq!(h.syscall(Syscall::Poll.number(), [5, 0, 0, 0]), u64::MAX);
        assert_eq!(h.kernel.current(), Some(tracer));
        let write = Syscall::TcbWriteRegister.number();
        // The stack pointer is no input of a verdict: the call stays.
        assert_eq!(h.syscall(write, [3, abi::tcb::Register::SP, 0x7000, 0]), 0);
        assert_eq!(h.context().x[8], 0, "nothing was cancelled");
        assert!(h.kernel.thread(tracee).call().is_some());
        // The PC is (a rule may judge it): the kept call would go on as
        // judged at another PC, so it is cancelled, then the write lands.
        assert_eq!(h.syscall(write, [3, abi::tcb::Register::PC, 0x2000, 0]), 0);
        assert_eq!(
            h.context().x[8],
            1,
            "the writer learns a call was cancelled"
        );
        let thread = h.kernel.thread(tracee);
        assert_eq!(thread.call(), None);
        assert_eq!(thread.state(), ThreadState::Ready);
        assert_eq!(thread.context().x[0], ErrorCode::Interrupted.raw());
        assert_eq!(thread.context().pc, 0x2000);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }
}

/// A long `Retype` is preemptible (issue 13, point 7), in the case
/// "a long Retype is preemptible": thread 0 (the retyper) holds 16 MiB of
/// Untyped in slot 2; thread 1 (the preemptor, more urgent) the physical
/// timer's IrqHandler (2), a notification (3), an endpoint (4), the
/// retyper's TCB (7) and its own (8). The fake machine's pending
/// interrupts are what the preemption points see.
mod preemptible_retype {
    use super::*;
    use abi::cap::CapType;
    use abi::message::NOTIFICATION_LABEL;
    use abi::MessageInfo;
    use microkernel::stopped_call::CallStop;

    /// The case: the retyper (thread 0) with the root's largest Untyped
    /// in slot 2; the preemptor (thread 1, more urgent) with the timer's
    /// IrqHandler (2), a notification (3), an endpoint (4: receive; 5, 6:
    /// send), the retyper's TCB (7) and its own (8). 128-slot CNodes.
    const RETYPE_SCENE: Scene = Scene {
        threads: &[thread(100), thread(110)],
        endpoints: 1,
        notifications: 1,
        untyped_pages: 0,
        grants: &[
            grant(0, 2, Object::LargestUntyped, Rights::ALL, 0),
            grant(1, 2, Object::Irq, Rights::READ_WRITE, 0),
            grant(1, 3, Object::Notification(0), Rights::READ_WRITE, 0),
            grant(1, 4, Object::Endpoint(0), RECEIVE, 0),
            grant(1, 5, Object::Endpoint(0), SEND, TRACEE_BADGE),
            grant(1, 6, Object::Endpoint(0), SEND, 0x5e),
            grant(1, 7, Object::Tcb(0), TCB_WITH_TRACE, 0),
            grant(1, 8, Object::Tcb(1), Rights::READ_WRITE, 0),
        ],
        fault_endpoints: &[],
        radix: 7,
    };
    /// The retyper's slots: its Untyped, the first of the 62 VSpaces, where
    /// copies go.
    const UNTYPED: u64 = 2;
    const TARGET: u64 = 64;
    const SPARE: u64 = 127;
    /// Pages a preemption point comes after (`ZERO_PAGES_PER_CHECK`).
    const PAGES_PER_CHECK: u64 = 16;

    /// The preemptor waits in `Recv` with the timer's notification bound
    /// to it; the retyper is on the CPU. Returns (retyper, preemptor).
    fn preemptor_waits() -> (Harness, ThreadId, ThreadId) {
        let mut h = Harness::start();
        h.scene(&RETYPE_SCENE);
        let preemptor = h.kernel.current().expect("the preemptor runs first");
        let bind = Syscall::TcbBindNotification.number();
        assert_eq!(h.syscall(bind, [8, 3, 1, 0]), 0);
        let irq = Syscall::IrqSetNotification.number();
        assert_eq!(h.syscall(irq, [2, 3, 0, 0]), 0);
        // Marks in message words 2..5: the notification's message, which
        // has no words, must not leave them there.
        h.context().x[4..8].copy_from_slice(&[0x44; 4]);
        assert_eq!(h.syscall(Syscall::Recv.number(), [4, 0, 0, 0]), u64::MAX);
        let retyper = h.kernel.current().expect("the retyper runs");
        assert_ne!(retyper, preemptor);
        (h, retyper, preemptor)
    }

    /// The retyper's `Retype` of `count` VSpaces of 64 table pages into
    /// `target..`: its `x0`, or `u64::MAX` if another thread runs after.
    fn retype_spaces(h: &mut Harness, target: u64, count: u64) -> u64 {
        h.context().x[5] = count;
        let vspace = u64::from(CapType::VSpace.raw());
        h.syscall(Syscall::Retype.number(), [UNTYPED, vspace, 64, target])
    }

    /// How far the retyper's stopped call got, if it is stopped in dispatch.
    fn progress(h: &Harness, retyper: ThreadId) -> Option<u64> {
        match h.kernel.thread(retyper).call()?.at {
            CallStop::Dispatch { progress, .. } => Some(progress),
            CallStop::Entry(_) => None,
        }
    }

    /// The preemptor's receive ended because its notification was
    /// signalled (the timer's interrupt).
    fn woken_by_the_timer(h: &mut Harness, preemptor: ThreadId) -> bool {
        h.kernel.current() == Some(preemptor)
            && MessageInfo::from(h.context().x[1]).label() == NOTIFICATION_LABEL
    }

    #[test]
    fn a_pending_interrupt_stops_a_long_retype_and_the_call_goes_on_from_there() {
        let (mut h, retyper, preemptor) = preemptor_waits();
        // Pending from the start: the first preemption point stops it, and
        // the woken, more urgent preemptor runs in the middle of the call.
        h.machine
            .pending_interrupts
            .push(Interrupt::Other(TIMER_INTID));
        assert_eq!(retype_spaces(&mut h, TARGET, 62), u64::MAX);
        assert!(h.machine.pending_interrupts.is_empty(), "taken at the stop");
        assert!(woken_by_the_timer(&mut h, preemptor));
        assert_eq!(
            h.context().x[2..8],
            [0; 6],
            "a bound notification's message has no words"
        );
        assert_eq!(progress(&h, retyper), Some(PAGES_PER_CHECK));
        assert_eq!(h.kernel.thread(retyper).state(), ThreadState::Ready);
        assert_eq!(
            h.kernel.thread(retyper).context().x[0],
            UNTYPED,
            "no result yet"
        );
        assert_eq!(h.kernel.check_invariants(), Ok(()));
        // Again while it goes on: it stops 16 pages further, not 16 pages
        // from the start (the zeroing done is kept). The preemptor's
        // receive ends in the same kernel entry, so it returns Ok.
        h.machine
            .pending_interrupts
            .push(Interrupt::Other(TIMER_INTID));
        assert_eq!(h.syscall(Syscall::Recv.number(), [4, 0, 0, 0]), 0);
        assert!(woken_by_the_timer(&mut h, preemptor));
        assert_eq!(progress(&h, retyper), Some(2 * PAGES_PER_CHECK));
        // A tick at a preemption point, nothing more urgent ready: the call
        // goes on at once, to its end.
        h.machine.pending_interrupts.push(Interrupt::Timer);
        let ticks = h.kernel.ticks();
        assert_eq!(h.syscall(Syscall::Recv.number(), [4, 0, 0, 0]), u64::MAX);
        assert_eq!(h.kernel.current(), Some(retyper));
        assert_eq!(h.kernel.ticks(), ticks + 1, "the tick was taken");
        assert_eq!(h.kernel.thread(retyper).call(), None);
        assert_eq!(h.context().x[0], ErrorCode::Ok.raw());
        // All 62 were made.
        let copy = Syscall::CapCopy.number();
        assert_eq!(h.syscall(copy, [0, TARGET, SPARE, 0]), 0);
        assert_eq!(h.syscall(copy, [0, TARGET + 61, SPARE - 1, 0]), 0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }

    #[test]
    fn a_register_write_cancels_a_stopped_retype_and_nothing_is_made() {
        let (mut h, retyper, preemptor) = preemptor_waits();
        h.machine
            .pending_interrupts
            .push(Interrupt::Other(TIMER_INTID));
        assert_eq!(retype_spaces(&mut h, TARGET, 62), u64::MAX);
        assert!(woken_by_the_timer(&mut h, preemptor));
        // The preemptor writes the retyper's count: the call is cancelled.
        let write = Syscall::TcbWriteRegister.number();
        assert_eq!(h.syscall(write, [7, 5, 1, 0]), 0);
        assert_eq!(h.context().x[8], 1, "the writer is told");
        assert_eq!(h.kernel.thread(retyper).call(), None);
        assert_eq!(h.syscall(Syscall::Recv.number(), [4, 0, 0, 0]), u64::MAX);
        assert_eq!(h.kernel.current(), Some(retyper));
        assert_eq!(h.context().x[0], ErrorCode::Interrupted.raw());
        let copy = Syscall::CapCopy.number();
        assert_eq!(
            h.syscall(copy, [0, TARGET, SPARE, 0]),
            ErrorCode::InvalidCapability.raw(),
            "nothing was made"
        );
        // The whole Untyped is still free: all 62 fit again.
        assert_eq!(retype_spaces(&mut h, TARGET, 62), 0);
        assert_eq!(h.kernel.check_invariants(), Ok(()));
    }
}

/// The lean entry's class, checked against the generic entry: every
/// syscall number (and some past the last), each with a few argument
/// patterns naming the root's own objects, made by the root in two fresh
/// kernels, one taking it as the vector would (the lean entry, with the
/// slots it leaves unsaved scribbled over while its kernel half runs), one
/// through the generic entry. Both must leave the same registers, the
/// same console, the same place to go and sound invariants: a syscall
/// placed on the lean side that read those slots, or wrote them, would
/// differ here. Each is made twice more by a root whose only work is
/// policy, with a filter that must be evaluated for every number (a rule
/// on `x7` that never holds here): the lean entry's policy-only lane
/// (`Kernel::lean_judged`) against the generic entry's.
#[test]
fn every_syscall_leaves_the_same_state_by_the_lean_entry_as_by_the_generic_one() {
    let untyped = Harness::start().largest_untyped();
    let patterns: [[u64; 4]; 6] = [
        [0, 0, 0, 0],
        [ROOT_TCB_SLOT, 1, 2, 3],
        [ROOT_TCB_SLOT, 32, 0x1234, 0],
        [ROOT_VSPACE_SLOT, 0x40_0000, 0x10_0000, 1],
        [
            untyped,
            u64::from(CapType::Notification.raw()),
            0,
            ROOT_FIRST_FREE_SLOT + 300,
        ],
        [ROOT_CONSOLE_SLOT, 0x40_0000, 8, 0],
    ];
    for (number, filtered) in
        (0..=(Syscall::ALL.len() as u64 + 2)).flat_map(|n| [(n, false), (n, true)])
    {
        for args in patterns {
            let outcome = |lean: bool| {
                let mut h = Harness::start();
                h.lean = lean;
                if filtered {
                    confine_with_a_rule_evaluated_for_every_syscall(&mut h);
                }
                let ctx = h.context();
                // Values a syscall must not depend on, nor lose.
                for (i, x) in ctx.x.iter_mut().enumerate().skip(9) {
                    *x = 0x6b65_0000 + i as u64;
                }
                ctx.tpidr = 0x7e57;
                ctx.spsr |= 0x6000_0000;
                let result = h.syscall(number, args);
                let context = match h.resume {
                    Resume::User { .. } => Some(*h.context()),
                    _ => None,
                };
                assert_eq!(
                    h.kernel.check_invariants(),
                    Ok(()),
                    "syscall {number} {args:x?}"
                );
                let resume = match h.resume {
                    Resume::User { ttbr0, .. } => format!("user {ttbr0:#x}"),
                    ref other => format!("{other:?}"),
                };
                // The rseq counters are the process's, not the kernel's
                // (`DebugRseqCounters` prints them): every kernel of this
                // test run adds to them.
                let console: Vec<&str> = h
                    .machine
                    .console
                    .lines()
                    .filter(|line| !line.starts_with("[kernel] rseq counters"))
                    .collect();
                (result, context, resume, console.join("\n"))
            };
            assert_eq!(
                outcome(true),
                outcome(false),
                "syscall {number} with {args:x?} (filtered: {filtered}): the lean entry and the generic one differ"
            );
        }
    }
}

/// The root attaches to itself a filter with one rule for every syscall,
/// refusing it when `x7` is `0x5eed_5eed`: every verdict is evaluated
/// (nothing is cached), and judged by the lean entry.
fn confine_with_a_rule_evaluated_for_every_syscall(h: &mut Harness) {
    use abi::policy::{encode, Action, ArgMatch, ArgOp, FilterDescription, Rule};
    const FILTER: u64 = ROOT_FIRST_FREE_SLOT + 400;
    let untyped = h.largest_untyped();
    h.context().x[5] = 1;
    h.ok(
        Syscall::Retype.number(),
        [untyped, u64::from(CapType::Filter.raw()), 0, FILTER],
    );
    let mut rule = Rule::new(Action::errno(ErrorCode::InvalidArgument));
    rule.args
        .push(ArgMatch::register(7, u64::MAX, ArgOp::Eq, 0x5eed_5eed))
        .unwrap();
    let mut description = FilterDescription::new(Action::Allow);
    description.push(rule).unwrap();
    let mut buffer = vec![0u8; abi::policy::MAX_DESCRIPTION_BYTES];
    let bytes = encode(&description, &mut buffer).unwrap().to_vec();
    h.poke(DATA, &bytes);
    h.ok(
        Syscall::FilterLoad.number(),
        [FILTER, DATA, bytes.len() as u64, 0],
    );
    h.context().x[5] = 0;
    h.ok(
        Syscall::TcbAttachFilter.number(),
        [ROOT_TCB_SLOT, FILTER, 0, 0],
    );
    let root = h.kernel.current().expect("the root runs");
    assert_eq!(h.kernel.thread(root).work(), entry::WorkFlags::POLICY);
}
