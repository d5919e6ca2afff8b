//! The kernel's state and its response to each event from EL0.
//!
//! The kernel is event driven and never blocks on its stack: every entry
//! (syscall, fault, interrupt) updates the state here and returns a
//! `Resume` saying where the CPU goes next. The arch glue then returns to
//! that thread, idles, or ends the run.

use crate::cap::{CNodeId, CapError, Capability, Memory, ObjectId, Objects, SlotId};
use crate::endpoint_queue::EndpointQueue;
use crate::fault::FaultReport;
use crate::frames::FrameAllocator;
use crate::platform::{Console, Platform};
use crate::syscall::SyscallResult;
use crate::thread::{Thread, ThreadId};
use abi::bootinfo::MAX_BOOT_UNTYPEDS;
use abi::cap::{CapType, Rights};
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::ErrorCode;
use arch::context::UserContext;
use arch::exception::ExceptionClass;
use arch::layout::MAX_CPUS;
use arch::mmu::{AsidAllocator, AsidBits};
use core::fmt::Write;
use entry::WorkFlags;

#[cfg(feature = "bench-calls")]
mod bench_floor;
mod cores;
#[cfg(feature = "test-calls")]
mod debug_calls;
mod dispatch;
mod entry_work;
pub mod fast_path;
mod forward;
mod invariants;
mod ipc_entry;
mod lean_entry;
mod members;
mod object;
mod root_task;
mod rseq;
mod schedule;
#[cfg(test)]
mod tests;

pub use crate::platform::Interrupt;
pub use crate::thread::{FILTER_DESTROYED_STATUS, TCB_DESTROYED_STATUS, VSPACE_DESTROYED_STATUS};
pub use abi::policy_request::KILLED_BY_POLICY;
pub use lean_entry::LeanSyscall;

/// Exit status of a system whose root task exited with 0.
pub const EXIT_SUCCESS: u32 = 0;
/// Exit status of a system whose root task ended any other way (an exit
/// with another status, a kill, a fault), or could not be started.
pub const EXIT_FAILURE: u32 = 1;

/// IrqHandler objects that can exist at once: the root's and those
/// `IrqControlGet` makes (each has its record on a page of the kernel's
/// pool). Past it, `OutOfResources`.
const MAX_IRQ_HANDLERS: usize = 64;
/// Radix of the kernel's own CNode, which holds the original capability
/// of every object the kernel makes: the console, then the root task's
/// objects (`root_task.rs`).
const KERNEL_CNODE_RADIX: u8 = 7;
const KERNEL_CONSOLE_SLOT: u64 = 0;
/// The root's CNode.
const KERNEL_ROOT_CNODE_SLOT: u64 = 1;
/// The root's TCB.
const KERNEL_ROOT_TCB_SLOT: u64 = 2;
/// The root's VSpace (its kernel-made address space).
const KERNEL_ROOT_VSPACE_SLOT: u64 = 3;
/// The Frame of the root's IPC buffer.
const KERNEL_ROOT_IPC_FRAME_SLOT: u64 = 4;
/// The root's IrqControl.
const KERNEL_ROOT_IRQ_CONTROL_SLOT: u64 = 5;
/// The Untypeds the root is given (`abi::bootinfo`), one per block of
/// free RAM.
const KERNEL_ROOT_UNTYPED_SLOTS: u64 = 6;
const _: () =
    assert!(KERNEL_ROOT_UNTYPED_SLOTS + (MAX_BOOT_UNTYPEDS as u64) <= 1 << KERNEL_CNODE_RADIX);
/// The originals of the root's device Untypeds, one per block of the
/// device memory the kernel does not use.
const KERNEL_ROOT_DEVICE_UNTYPED_SLOTS: u64 = KERNEL_ROOT_UNTYPED_SLOTS + MAX_BOOT_UNTYPEDS as u64;
/// The Inspector (`object/inspector.rs`), made with the console.
const KERNEL_INSPECTOR_SLOT: u64 =
    KERNEL_ROOT_DEVICE_UNTYPED_SLOTS + abi::bootinfo::MAX_BOOT_DEVICE_UNTYPEDS as u64;
const _: () = assert!(KERNEL_INSPECTOR_SLOT < 1 << KERNEL_CNODE_RADIX);

/// Where the CPU goes after the kernel has handled an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Resume {
    /// Return to EL0 in this saved context, with this TTBR0 value.
    User {
        /// The thread's saved registers (inside its TCB's record).
        context: *mut UserContext,
        /// Its address space root and ASID.
        ttbr0: u64,
    },
    /// Nothing is ready: wait for an interrupt.
    Idle,
    /// The root task has ended: end the run with this status.
    Shutdown {
        /// `EXIT_SUCCESS` when the root exited with 0.
        status: u32,
    },
}

/// The whole kernel state.
///
/// `repr(C)`, small and hot fields first: the kernel lives in one static,
/// and fields past the reach of an immediate offset cost an extra
/// instruction on every access (the IPC and syscall paths read `current`,
/// the FP/TPIDR owners and `shutdown` on every entry).
#[repr(C)]
pub struct Kernel {
    /// The token of the CPU whose view the fields below hold (`cores.rs`):
    /// the one holding the kernel lock, which set it with `on_core`. 0
    /// until a CPU first takes the lock.
    core_token: u64,
    /// That CPU's index.
    cpu: usize,
    /// The thread that ran last: its space's ASID may be live in TTBR0.
    /// Before `current`, and `fp_owner` after it: the fast paths write
    /// the first two with one pair store and read the last two with one
    /// pair load (`fast_path::layout`).
    last_ran: Option<ThreadId>,
    current: Option<ThreadId>,
    /// The thread whose FP/SIMD registers are in the CPU. (Whether EL0
    /// may use them now is the CPU's CPACR_EL1: `Platform::fp_access`.)
    fp_owner: Option<ThreadId>,
    /// The root task has ended: the run ends with this status at the end
    /// of this kernel entry.
    shutdown: Option<u32>,
    /// Something besides returning to a thread is due at the end of this
    /// kernel entry: the run ends (`shutdown`), or other CPUs are to be
    /// interrupted (`wakeups`). One flag, so that `resume`'s quick way
    /// tests both with one load, as it tested `shutdown` alone on one CPU.
    attention: bool,
    /// The thread whose benchmark floor an interrupt ended (its
    /// `BenchFloor(0)` says so: the samples taken under it are spoiled).
    #[cfg(feature = "bench-calls")]
    floor_interrupted: Option<ThreadId>,
    /// The invariant checks at timer ticks (test image).
    #[cfg(feature = "test-calls")]
    tick_checks: debug_calls::TickChecks,
    /// MDSCR_EL1.SS is on (the current thread single-steps).
    step_installed: bool,
    /// Stage 1's answer for the syscall in progress, when the user-dispatch
    /// lane (`syscall_user_dispatched`) has asked already and hands the
    /// syscall on to the generic entry: that stage takes it, so the
    /// selector is read once.
    dispatch_decided: Option<Option<u64>>,
    /// The thread whose console line is unfinished (no newline yet).
    open_line: Option<ThreadId>,
    /// The kernel's CNode (original capabilities), made at `start`.
    kernel_cnode: Option<CNodeId>,
    ticks: u64,
    /// The cookie of the last policy request (near the start: the
    /// policy request fast path reaches it with an immediate offset).
    policy_cookie: u64,
    /// The next thread number (see `next_thread_number`).
    thread_numbers: u32,
    /// See `own_pages`.
    own_pages: u64,
    root_elf: &'static [u8],
    /// The system image's RAM (`crate::system_image`), mapped read-only
    /// into the root's space: kept out of the pool by the caller of
    /// `start`, never freed.
    system_image: Option<arch::boards::PhysRange>,
    /// The kernel's command line, passed on to the root task.
    command_line: heapless::Vec<u8, { abi::bootinfo::MAX_COMMAND_LINE }>,
    /// The root task, the one thread the kernel makes (`root_task.rs`).
    root: Option<ThreadId>,
    /// The device memory the kernel does not use, handed to the root task
    /// as device Untypeds.
    device_memory: heapless::Vec<arch::boards::PhysRange, { arch::boards::MAX_DEVICE_RANGES }>,
    /// The views of the CPUs other than `cpu` (`cores.rs`); the entry of
    /// `cpu` itself is stale while its view is in the fields above.
    cores: [cores::CoreView; MAX_CPUS],
    /// The CPUs the kernel runs on, one bit each (bit 0, the boot CPU,
    /// always).
    cores_online: u8,
    /// CPUs to interrupt before this kernel entry ends: a thread was made
    /// ready there that is more urgent than what it runs (see `resume`).
    wakeups: u8,
    /// Every capability and kernel object (threads included), in the
    /// memory that paid for it.
    objects: Objects,
    /// Lossless audited threads waiting for room in their ring (linked
    /// through `Thread::queue_links`): what the tick looks at.
    audit_waiters: EndpointQueue,
    /// The IrqHandler objects there are (only the kernel makes them: the
    /// root's, or through `IrqControlGet`), at most one per interrupt, for
    /// an interrupt to find its handler.
    irq_handlers: heapless::Vec<ObjectId, MAX_IRQ_HANDLERS>,
    /// Ready threads, one queue per CPU: a thread waits in the queue of
    /// the CPU it has affinity with (`Thread::affinity`). Each queue takes
    /// a 4 KiB slot (`cores::CoreQueue`), so that a CPU's is found with a
    /// shift; before the allocators, which are large but never on a hot
    /// path, and after the hot fields, so that they stay within reach of
    /// an immediate offset.
    run_queues: [cores::CoreQueue; MAX_CPUS],
    asids: AsidAllocator,
    frames: FrameAllocator,
    /// Where `FilterLoad` copies a description from user memory (within
    /// one syscall).
    policy_scratch: [u8; MAX_DESCRIPTION_BYTES],
    /// The console's input, kept until it is read.
    console_input: object::console_input::ConsoleInput,
}

impl Default for Kernel {
    fn default() -> Self {
        Self::new()
    }
}

impl Kernel {
    /// An idle kernel (a constant, so it can live in a static).
    pub const fn new() -> Self {
        Kernel {
            core_token: 0,
            cpu: 0,
            cores: [cores::CoreView::IDLE; MAX_CPUS],
            cores_online: 1,
            wakeups: 0,
            run_queues: [cores::CoreQueue::EMPTY; MAX_CPUS],
            objects: Objects::new(),
            audit_waiters: EndpointQueue::EMPTY,
            irq_handlers: heapless::Vec::new(),
            current: None,
            last_ran: None,
            fp_owner: None,
            shutdown: None,
            attention: false,
            frames: FrameAllocator::new(),
            asids: AsidAllocator::new(AsidBits::Eight),
            root_elf: &[],
            system_image: None,
            command_line: heapless::Vec::new(),
            root: None,
            device_memory: heapless::Vec::new(),
            ticks: 0,
            thread_numbers: 0,
            own_pages: 0,
            #[cfg(feature = "bench-calls")]
            floor_interrupted: None,
            #[cfg(feature = "test-calls")]
            tick_checks: debug_calls::TickChecks {
                on: false,
                ticks: 0,
                made: 0,
                broken: None,
            },
            step_installed: false,
            dispatch_decided: None,
            kernel_cnode: None,
            open_line: None,
            policy_cookie: 0,
            policy_scratch: [0; MAX_DESCRIPTION_BYTES],
            console_input: object::console_input::ConsoleInput::new(),
        }
    }

    /// The command line the root task is given (cut at
    /// `abi::bootinfo::MAX_COMMAND_LINE` bytes). Call before `start`.
    pub fn set_command_line(&mut self, line: &str) {
        let bytes = line.as_bytes();
        let kept = &bytes[..bytes.len().min(abi::bootinfo::MAX_COMMAND_LINE)];
        self.command_line.clear();
        // Cannot fail: `kept` fits.
        let _ = self.command_line.extend_from_slice(kept);
    }

    /// The device memory (MMIO, outside RAM) the kernel does not use,
    /// which the root task gets as device Untypeds (at most
    /// `arch::boards::MAX_DEVICE_RANGES` ranges; more are left out). Call
    /// before `start`.
    pub fn set_device_memory(&mut self, ranges: &[arch::boards::PhysRange]) {
        self.device_memory.clear();
        for range in ranges {
            if self.device_memory.push(*range).is_err() {
                break;
            }
        }
    }

    /// Takes over RAM and the init program, and starts the root task
    /// (`root_task.rs`): the one thread the kernel makes, whose end ends
    /// the run. `system_image` is the RAM of the system image the loader
    /// placed (`crate::system_image::locate`), which the root gets mapped
    /// read-only; it must be page-aligned and outside the frame pool, or
    /// the root does not start.
    ///
    /// RAM is given beforehand through `frames_mut` (the allocator is too
    /// large to build on the kernel stack and move in).
    pub fn start<P: Platform>(
        &mut self,
        platform: &mut P,
        asid_bits: AsidBits,
        root_elf: &'static [u8],
        system_image: Option<arch::boards::PhysRange>,
    ) -> Resume {
        self.asids = AsidAllocator::new(asid_bits);
        self.root_elf = root_elf;
        self.system_image = system_image;
        if let Err(error) = self.create_kernel_objects() {
            let _ = writeln!(
                Console(platform),
                "[kernel] cannot create the kernel's objects: {error:?}"
            );
            return Resume::Shutdown {
                status: EXIT_FAILURE,
            };
        }
        if let Err(reason) = self.start_root(platform) {
            let _ = writeln!(
                Console(platform),
                "[kernel] cannot start the root task: {reason}"
            );
            return Resume::Shutdown {
                status: EXIT_FAILURE,
            };
        }
        self.resume(platform)
    }

    /// The kernel CNode, and the console and the Inspector with their
    /// original capabilities.
    fn create_kernel_objects(&mut self) -> Result<(), CapError> {
        let before = self.frames.allocated();
        let cnode = self.kernel_cnode(KERNEL_CNODE_RADIX)?;
        self.kernel_cnode = Some(cnode);
        self.create_original(CapType::DebugConsole, 0, 0, KERNEL_CONSOLE_SLOT)?;
        self.create_original(CapType::Inspector, 0, 0, KERNEL_INSPECTOR_SLOT)?;
        self.own_pages = self.frames.allocated() - before;
        Ok(())
    }

    /// Pages the kernel's own lasting objects take from the pool (its
    /// CNode and the console).
    pub fn own_pages(&self) -> u64 {
        self.own_pages
    }

    fn kernel_slot(&self, index: u64) -> Result<SlotId, CapError> {
        let cnode = self.kernel_cnode.ok_or(CapError::InvalidCapability)?;
        self.objects.slot(cnode, index)
    }

    /// The capability at `cptr` in `thread`'s CSpace, checked for type and
    /// rights.
    fn thread_cap(
        &self,
        thread: ThreadId,
        cptr: u64,
        cap_type: CapType,
        rights: Rights,
    ) -> Result<Capability, ErrorCode> {
        // The thread's cached CSpace range, as the fast path reads it: no
        // CNode record to look at on the way.
        let (first, slots) = self.objects[thread].cspace_slots;
        if cptr >= u64::from(slots) {
            return Err(ErrorCode::InvalidCapability);
        }
        self.objects
            .lookup_typed(SlotId(first.0 + cptr as u32), cap_type, rights)
            .map_err(ErrorCode::from)
    }

    /// Free and used frames, for the boot log.
    pub fn frames(&self) -> &FrameAllocator {
        &self.frames
    }

    /// The frame allocator, to hand RAM to before `start`.
    pub fn frames_mut(&mut self) -> &mut FrameAllocator {
        &mut self.frames
    }

    /// Gives the kernel the memory its objects live in (all of RAM, see
    /// `arch::object_memory`). Call before `start`; `false` if objects
    /// exist already.
    pub fn install_object_memory(&mut self, memory: Memory) -> bool {
        self.objects.install_memory(memory)
    }

    /// Every capability and kernel object.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Timer ticks seen so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// A synchronous exception from EL0: a syscall or a fault.
    pub fn handle_el0_sync<P: Platform>(&mut self, platform: &mut P, esr: u64, far: u64) -> Resume {
        let Some(current) = self.current else {
            // The thread that took the exception was taken from this CPU
            // while it waited for the kernel lock (`cores.rs`,
            // `stop_elsewhere`): the CPU that took it made the thread
            // re-run the instruction later. Nothing to handle here.
            return self.resume(platform);
        };
        // A syscall first, with one compare: nearly every entry is one.
        // (One call site: a second would take `syscall` out of line.)
        if ExceptionClass::is_svc64(esr) {
            return self.syscall(platform, current, esr);
        }
        match ExceptionClass::from_esr(esr) {
            ExceptionClass::FpAccess => self.take_fp(platform, current),
            ExceptionClass::SoftwareStep => self.software_step(platform, current),
            _ => {
                let pc = self.objects[current].context.pc();
                self.fault(platform, current, FaultReport::new(esr, far, pc))
            }
        }
    }

    /// An exception from EL0 that no AArch64 user code can cause on
    /// purpose (FIQ, SError, anything from AArch32): stop the thread.
    pub fn handle_el0_unexpected<P: Platform>(
        &mut self,
        platform: &mut P,
        esr: u64,
        far: u64,
    ) -> Resume {
        match self.current {
            Some(current) => {
                let pc = self.objects[current].context.pc();
                self.fault(platform, current, FaultReport::new(esr, far, pc))
            }
            None => self.resume(platform),
        }
    }

    /// An interrupt taken while a thread ran at EL0 (`None`: spurious).
    pub fn handle_el0_interrupt<P: Platform>(
        &mut self,
        platform: &mut P,
        interrupt: Option<Interrupt>,
    ) -> Resume {
        if let Some(current) = self.current {
            self.objects[current].stats.count_interrupt();
        }
        if let Some(interrupt) = interrupt {
            self.interrupt(platform, interrupt);
        }
        self.resume(platform)
    }

    /// An interrupt that woke the idle loop.
    pub fn handle_idle_interrupt<P: Platform>(
        &mut self,
        platform: &mut P,
        interrupt: Interrupt,
    ) -> Resume {
        self.interrupt(platform, interrupt);
        self.resume(platform)
    }

    fn interrupt<P: Platform>(&mut self, platform: &mut P, interrupt: Interrupt) {
        match interrupt {
            Interrupt::Timer => {
                // Every CPU ticks for its own round robin; the kernel's
                // clock and its periodic work are the boot CPU's.
                if self.cpu == 0 {
                    self.ticks += 1;
                    #[cfg(feature = "test-calls")]
                    self.check_at_tick(platform);
                    self.wake_audit_waiters(platform);
                }
                if let Some(current) = self.current {
                    let priority = self.objects[current].priority;
                    if self.run_queues[self.cpu % MAX_CPUS]
                        .ready
                        .has_ready_at_or_above(priority)
                        && self.tick_preempts(platform, current)
                    {
                        let thread = &mut self.objects[current];
                        thread.work.insert(WorkFlags::NEED_RESCHED);
                        thread.stats.count_preemption();
                    }
                }
            }
            Interrupt::SliceEnd => self.slice_end(platform),
            Interrupt::Reschedule => self.reschedule_requested(),
            Interrupt::Other(id) => self.deliver_interrupt(platform, id),
        }
    }

    /// A new thread number (the identifier threads are told apart by in
    /// console lines, policy requests, trace stops and audit records).
    fn next_thread_number(&mut self) -> u32 {
        let number = self.thread_numbers;
        self.thread_numbers = self.thread_numbers.wrapping_add(1);
        number
    }

    /// The thread on the CPU, if any.
    pub fn current(&self) -> Option<ThreadId> {
        self.current
    }

    /// A thread's control block.
    pub fn thread(&self, id: ThreadId) -> &Thread {
        &self.objects[id]
    }

    /// The thread, if `id` names one (a TCB object's).
    pub fn try_thread(&self, id: ThreadId) -> Option<&Thread> {
        self.objects.thread(id)
    }

    /// Every thread (every TCB object's), newest first.
    pub fn threads(&self) -> impl Iterator<Item = ThreadId> + '_ {
        self.all_threads()
    }
}
