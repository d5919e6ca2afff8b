//! The kernel's state and its response to each event from EL0.
//!
//! The kernel is event driven and never blocks on its stack: every entry
//! (syscall, fault, interrupt) updates the state here and returns a
//! `Resume` saying where the CPU goes next. The arch glue then returns to
//! that thread, idles, or ends the run.

use crate::address_space::AddressSpace;
use crate::cap::{CNodeId, CapError, Capability, Memory, ObjectId, Objects, SlotId};
use crate::fault::FaultReport;
use crate::frames::FrameAllocator;
use crate::ipc::message;
use crate::ipc::notification;
use crate::ipc::queue::EndpointQueue;
use crate::ipc::{self, Effects, IpcError, Next, SendKind};
use crate::platform::{Console, Platform};
use crate::scheduler::RunQueue;
use crate::syscall::{self, Call, SyscallResult};
use crate::syscall::{CapOperation, IpcOperation, NotificationOperation};
use crate::thread::{Thread, ThreadId, ThreadState};
use abi::bootinfo::MAX_BOOT_UNTYPEDS;
use abi::cap::{CapType, Rights};
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::{ErrorCode, DEBUG_PRINT_MAX, IPC_BUFFER_RECEIVE_SLOT_WORD, IPC_BUFFER_SEND_CAPS_WORD};
use arch::boards::PHYSICAL_TIMER_INTID;
use arch::context::UserContext;
use arch::exception::ExceptionClass;
use arch::mmu::{AsidAllocator, AsidBits};
use arch::object_memory::kind;
use core::fmt::Write;

mod audit;
mod binding;
#[cfg(test)]
mod binding_invariant_tests;
#[cfg(feature = "test-calls")]
mod debug_calls;
mod fast_path;
mod invariants;
mod irq_control;
#[cfg(test)]
mod judged_capability_tests;
mod members;
mod objects;
mod policy;
#[cfg(test)]
mod queue_invariant_tests;
mod reply;
mod root_task;
mod set_space;
mod spaces;
mod supervision;
mod tcb;
#[cfg(test)]
mod test_kernel;
mod trace;
mod user_dispatch;
mod vspace;
use crate::stopped_call::{CallStop, JudgedCapability, Progress, Resumed, StopAnswer, StoppedCall};
pub use abi::policy_request::KILLED_BY_POLICY;
use entry::{EntryHooks, PolicyDecision, PolicyVerdict, SyscallEntry, WorkFlags};
pub use fast_path::UserResume;
use policy::Entered;
pub use supervision::RestartArguments;

/// How far a `Retype` got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Retyped {
    /// Every object was made.
    Done,
    /// Stopped at a preemption point: `progress` pages zeroed, valid while
    /// the Untyped's epoch is `at`.
    Preempted {
        /// Pages zeroed.
        progress: u64,
        /// The Untyped's epoch.
        at: u64,
    },
}

/// Pages a preemptible operation zeroes between two looks for a pending
/// interrupt (64 KiB: well under a millisecond on a Cortex-A72).
const ZERO_PAGES_PER_CHECK: u64 = 16;

/// What became of a thread whose syscall was dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dispatched {
    /// It returns from the syscall.
    Returns,
    /// It waits (blocked in IPC, or its call preempted).
    Waits,
    /// It ended.
    Ended,
}

/// Exit status of a system whose root task exited with 0.
pub const EXIT_SUCCESS: u32 = 0;
/// Exit status of a system whose root task ended any other way (an exit
/// with another status, a kill, a fault), or could not be started.
pub const EXIT_FAILURE: u32 = 1;
/// The status recorded for a thread made from user space whose TCB object
/// was destroyed (its last capability deleted, or its Untyped revoked).
pub const TCB_DESTROYED_STATUS: i64 = -3;
/// The status recorded for a thread whose address space was a VSpace made
/// from user space, destroyed while bound to it (its last capability
/// deleted, or its Untyped revoked).
pub const VSPACE_DESTROYED_STATUS: i64 = abi::fault::SPACE_DESTROYED_STATUS;
/// What the console says of a thread the kernel ends with `state` for a
/// reason of its own (a policy or user-dispatch kill, its filter's memory
/// or its address space taken back); `None` for an exit, a fault (which
/// has its own line) and a TCB destroyed by its holder.
fn kill_reason(state: ThreadState) -> Option<&'static str> {
    match state {
        ThreadState::Exited(KILLED_BY_POLICY) => Some("killed by a Kill verdict of its filters"),
        ThreadState::Exited(abi::user_dispatch::KILLED_BY_USER_DISPATCH) => {
            Some("killed: user dispatch could not save a redirected syscall's context")
        }
        ThreadState::Exited(FILTER_DESTROYED_STATUS) => {
            Some("ended: the memory of a filter confining it was taken back")
        }
        ThreadState::Exited(VSPACE_DESTROYED_STATUS) => {
            Some("ended: its address space was destroyed")
        }
        _ => None,
    }
}

/// The status recorded for a thread confined by a Filter whose memory
/// was taken back (its Untyped revoked): a restriction is never lifted,
/// so the threads it confines end with it. (Deleting the Filter's last
/// capability only pins it: its rules stay in force until the last
/// thread it confines has ended.)
pub const FILTER_DESTROYED_STATUS: i64 = abi::fault::FILTER_DESTROYED_STATUS;

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
const _: () = assert!(
    KERNEL_ROOT_DEVICE_UNTYPED_SLOTS + abi::bootinfo::MAX_BOOT_DEVICE_UNTYPEDS as u64
        <= 1 << KERNEL_CNODE_RADIX
);
/// Bound on reschedules in one return to user (each round handles one
/// reschedule request).
const MAX_SCHEDULING_ROUNDS: usize = 8;
/// Bound on the rounds of one return to user (see `Kernel::resume`): the
/// reschedules, and a few stops and continuations of the threads the
/// rounds pick (each round uses one up; past the bound the CPU idles and
/// the kernel looks again at the next interrupt).
const MAX_RESUME_ROUNDS: usize = MAX_SCHEDULING_ROUNDS + 256;
/// Work that keeps `resume` from sending the current thread straight
/// back: exit work, and trace stops or single-stepping to arrange.
const RESUME_WORK: WorkFlags = WorkFlags::EXIT_WORK
    .union(WorkFlags::TRACE)
    .union(WorkFlags::SINGLESTEP);

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

/// An interrupt, as the arch glue classified it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// The kernel's tick (already re-armed).
    Timer,
    /// Any other interrupt ID (no user driver can own one yet).
    Other(u32),
}

/// The whole kernel state.
///
/// `repr(C)`, small and hot fields first: the kernel lives in one static,
/// and fields past the reach of an immediate offset cost an extra
/// instruction on every access (the IPC and syscall paths read `current`,
/// the FP/TPIDR owners and `shutdown` on every entry).
#[repr(C)]
pub struct Kernel {
    current: Option<ThreadId>,
    /// The thread that ran last: its space's ASID may be live in TTBR0.
    last_ran: Option<ThreadId>,
    /// The thread whose FP/SIMD registers are in the CPU.
    fp_owner: Option<ThreadId>,
    /// EL0 may use FP/SIMD without trapping (the current thread owns it).
    fp_access: bool,
    /// The root task has ended: the run ends with this status at the end
    /// of this kernel entry.
    shutdown: Option<u32>,
    /// The thread whose benchmark floor an interrupt ended (its
    /// `BenchFloor(0)` says so: the samples taken under it are spoiled).
    #[cfg(feature = "bench-calls")]
    floor_interrupted: Option<ThreadId>,
    /// The invariant checks at timer ticks (test image).
    #[cfg(feature = "test-calls")]
    tick_checks: debug_calls::TickChecks,
    /// MDSCR_EL1.SS is on (the current thread single-steps).
    step_installed: bool,
    /// The thread whose console line is unfinished (no newline yet).
    open_line: Option<ThreadId>,
    /// The kernel's CNode (original capabilities), made at `start`.
    kernel_cnode: Option<CNodeId>,
    ticks: u64,
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
    run_queue: RunQueue,
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
    asids: AsidAllocator,
    frames: FrameAllocator,
    /// The cookie of the last policy request.
    policy_cookie: u64,
    /// Where `FilterLoad` copies a description from user memory (within
    /// one syscall).
    policy_scratch: [u8; MAX_DESCRIPTION_BYTES],
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
            run_queue: RunQueue::new(),
            objects: Objects::new(),
            audit_waiters: EndpointQueue::EMPTY,
            irq_handlers: heapless::Vec::new(),
            current: None,
            last_ran: None,
            fp_owner: None,
            fp_access: true,
            shutdown: None,
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
            kernel_cnode: None,
            open_line: None,
            policy_cookie: 0,
            policy_scratch: [0; MAX_DESCRIPTION_BYTES],
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

    /// The kernel CNode and the console object with its original
    /// capability.
    fn create_kernel_objects(&mut self) -> Result<(), CapError> {
        let before = self.frames.allocated();
        let cnode = self.kernel_cnode(KERNEL_CNODE_RADIX)?;
        self.kernel_cnode = Some(cnode);
        self.create_original(CapType::DebugConsole, 0, 0, KERNEL_CONSOLE_SLOT)?;
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
            // The vectors only route EL0 exceptions here, and a thread was
            // running at EL0: no current thread is a kernel bug.
            panic!("exception from EL0 with no current thread");
        };
        match ExceptionClass::from_esr(esr) {
            ExceptionClass::Svc64 => self.syscall(platform, current, esr),
            ExceptionClass::FpAccess => self.take_fp(platform, current),
            ExceptionClass::SoftwareStep => self.software_step(platform, current),
            _ => {
                let pc = self.objects[current].context.pc;
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
                let pc = self.objects[current].context.pc;
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
                self.ticks += 1;
                #[cfg(feature = "test-calls")]
                self.check_at_tick(platform);
                self.wake_audit_waiters(platform);
                if let Some(current) = self.current {
                    let thread = &mut self.objects[current];
                    if self.run_queue.has_ready_at_or_above(thread.priority) {
                        thread.work.insert(WorkFlags::NEED_RESCHED);
                        thread.stats.count_preemption();
                    }
                }
            }
            Interrupt::Other(id) => self.deliver_interrupt(platform, id),
        }
    }

    /// An interrupt some IrqHandler stands for: masked until acknowledged,
    /// and its notification signalled. One nobody handles is masked.
    #[inline(never)]
    fn deliver_interrupt<P: Platform>(&mut self, platform: &mut P, id: u32) {
        platform.set_interrupt_enabled(id, false);
        let binding = self
            .irq_handlers
            .iter()
            .filter_map(|h| self.objects.get::<kind::IrqHandler>(*h))
            .find(|h| h.intid == Some(id))
            .and_then(|h| h.notification)
            .and_then(|(n, bits)| Some((self.objects.resolve(n, CapType::Notification)?, bits)));
        let Some((notification, bits)) = binding else {
            let _ = writeln!(
                Console(platform),
                "[kernel] interrupt {id} has no handler; masked"
            );
            return;
        };
        let effects = self.signal_notification(notification, bits);
        for thread in effects.woken() {
            self.make_ready(thread);
        }
    }

    /// `IrqSetNotification` and `IrqAck`.
    #[inline(never)]
    fn irq_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        handler: u64,
        notification: Option<u64>,
    ) -> Result<(), ErrorCode> {
        let handler = self.thread_cap(current, handler, CapType::IrqHandler, Rights::WRITE)?;
        let state = *self
            .objects
            .get::<kind::IrqHandler>(handler.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let intid = state.intid.ok_or(ErrorCode::InvalidCapability)?;
        match notification {
            Some(cptr) => {
                let target =
                    self.thread_cap(current, cptr, CapType::Notification, Rights::WRITE)?;
                let bits = notification::signal_bits(target.badge(), target.is_badged());
                let reference = self
                    .objects
                    .reference(target.object())
                    .ok_or(ErrorCode::InvalidCapability)?;
                if let Some(body) = self.objects.get_mut::<kind::IrqHandler>(handler.object()) {
                    body.notification = Some((reference, bits));
                }
                platform.set_interrupt_enabled(intid, true);
            }
            None => {
                let bound = state
                    .notification
                    .and_then(|(n, _)| self.objects.resolve(n, CapType::Notification));
                if bound.is_none() {
                    return Err(ErrorCode::InvalidArgument);
                }
                platform.set_interrupt_enabled(intid, true);
            }
        }
        Ok(())
    }

    /// `IrqSetTimer`: programs the EL1 physical timer for the holder of
    /// its IrqHandler (EL0 cannot reach the timer's registers).
    #[inline(never)]
    fn irq_set_timer<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        handler: u64,
        ticks: u64,
    ) -> SyscallResult {
        let handler = match self.thread_cap(current, handler, CapType::IrqHandler, Rights::WRITE) {
            Ok(handler) => handler,
            Err(code) => return SyscallResult::Return(code),
        };
        let intid = self
            .objects
            .get::<kind::IrqHandler>(handler.object())
            .and_then(|h| h.intid);
        if intid != Some(PHYSICAL_TIMER_INTID) {
            return SyscallResult::Return(ErrorCode::InvalidArgument);
        }
        platform.set_physical_timer((ticks != 0).then_some(ticks));
        SyscallResult::Return(ErrorCode::Ok)
    }

    fn syscall<P: Platform>(&mut self, platform: &mut P, current: ThreadId, esr: u64) -> Resume {
        let thread = &mut self.objects[current];
        thread.stats.count_syscall();
        let slow = thread.work.intersects(WorkFlags::SYSCALL_WORK)
            && !thread.skips_entry_work(thread.context.x[8]);
        if slow {
            self.syscall_with_work(platform, current, esr, None);
            return self.resume(platform);
        }
        let decoded = syscall::decode_copy::<{ syscall::HOT_PATH_COPY }>(&thread.context);
        let result = match decoded {
            Ok(call) => self.dispatch::<P, { syscall::HOT_PATH_COPY }>(
                platform,
                current,
                call,
                Progress::NONE,
            ),
            Err(code) => SyscallResult::Return(code),
        };
        // The thread is looked up again only by the results that write to
        // it (an IPC operation has written its registers already).
        match result {
            SyscallResult::Return(code) => self.objects[current].context.x[0] = code.raw(),
            SyscallResult::Yield => {
                let thread = &mut self.objects[current];
                thread.context.x[0] = ErrorCode::Ok.raw();
                thread.stats.count_yield();
                // The round robin at once, on the thread in hand (what a
                // NEED_RESCHED would ask on the way out): to the back of
                // its priority's queue; `resume` picks.
                thread.state = ThreadState::Ready;
                let priority = thread.priority;
                let links = self.run_queue.append(current, priority);
                thread.run_links = links;
                self.current = None;
                self.run_queue
                    .link_behind(&mut self.objects, current, links);
            }
            SyscallResult::Restored => {}
            SyscallResult::Exited(status) => {
                self.end_thread(platform, current, ThreadState::Exited(status));
            }
            SyscallResult::Ipc(effects) => self.apply_ipc(platform, effects),
            SyscallResult::Preempted { progress, at } => {
                let entered = Entered::dispatch_without_work();
                self.preempt_call(platform, current, esr, &entered, progress, at);
            }
        }
        self.resume(platform)
    }

    /// Writes a dispatched syscall's result to its thread and applies what
    /// it asked of the scheduler: what became of the thread (the generic
    /// entry's write-back; `syscall` has its own copy, which the compiler
    /// folds into the dispatch). A preempted call is kept to go on
    /// (`preempt_call`).
    fn write_back<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: &Entered,
        result: SyscallResult,
    ) -> Dispatched {
        let thread = &mut self.objects[current];
        match result {
            SyscallResult::Return(code) => thread.context.x[0] = code.raw(),
            SyscallResult::Yield => {
                thread.context.x[0] = ErrorCode::Ok.raw();
                thread.stats.count_yield();
                thread.work.insert(WorkFlags::NEED_RESCHED);
            }
            SyscallResult::Restored => {}
            SyscallResult::Exited(status) => {
                self.end_thread(platform, current, ThreadState::Exited(status));
                return Dispatched::Ended;
            }
            SyscallResult::Ipc(effects) => {
                self.apply_ipc(platform, effects);
                if self.current != Some(current) {
                    return Dispatched::Waits;
                }
            }
            SyscallResult::Preempted { progress, at } => {
                self.preempt_call(platform, current, esr, entered, progress, at);
                return Dispatched::Waits;
            }
        }
        Dispatched::Returns
    }

    /// A long operation of `current`'s syscall stopped at a preemption
    /// point (`progress` of it done, at `at`): the kernel keeps the call,
    /// answered, to go on from there when the thread next runs, and takes
    /// the interrupt that is waiting now. If it made a more urgent thread
    /// ready, that one runs first; the call is neither judged, traced nor
    /// audited again.
    #[cold]
    #[inline(never)]
    fn preempt_call<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: &Entered,
        progress: u64,
        at: u64,
    ) {
        let capability = Some(self.judged_capability(current));
        let thread = &mut self.objects[current];
        let mut regs = [0u64; 9];
        regs.copy_from_slice(&thread.context.x[..9]);
        thread.call = Some(StoppedCall {
            esr,
            capability,
            waived: entered.waived,
            forwarded: entered.forwarded,
            outcome: entered.outcome,
            answer: Some(StopAnswer::Restart),
            ..StoppedCall::new(regs, CallStop::Dispatch { progress, at })
        });
        if let Some(interrupt) = platform.take_pending_interrupt() {
            self.interrupt(platform, interrupt);
        }
    }

    /// A syscall through the generic entry: a new one (`resumed` is
    /// `None`), or a stopped one whose answer has come. It runs to its end,
    /// or stops again (the thread then waits for the next answer).
    #[cold]
    #[inline(never)]
    fn syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        resumed: Option<&Resumed>,
    ) {
        let Some((entered, progress)) =
            self.enter_syscall_with_work(platform, current, esr, resumed)
        else {
            return;
        };
        let context = &self.objects[current].context;
        let result = match syscall::decode_copy::<{ syscall::ENTRY_WORK_COPY }>(context) {
            Ok(call) => {
                self.dispatch::<P, { syscall::ENTRY_WORK_COPY }>(platform, current, call, progress)
            }
            Err(code) => SyscallResult::Return(code),
        };
        self.finish_syscall_with_work(platform, current, esr, &entered, result);
    }

    /// The entry work of `syscall_with_work`:
    /// `Some` when the syscall is to be dispatched now (what the entry work decided,
    /// and how far a preempted call got); otherwise it is over, or stopped
    /// again (the thread then waits for the next answer), and `None`.
    fn enter_syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        resumed: Option<&Resumed>,
    ) -> Option<(Entered, Progress)> {
        if let Some(call) = resumed {
            if let CallStop::Dispatch { progress, at } = call.at {
                let entered = Entered {
                    entry: SyscallEntry::Dispatch,
                    outcome: call.outcome,
                    waived: call.waived,
                    forwarded: call.forwarded,
                };
                return Some((entered, Progress { done: progress, at }));
            }
        }
        let entered = self.enter_with_work(platform, current, resumed);
        let entry = entered.entry;
        match entry {
            SyscallEntry::Dispatch => return Some((entered, Progress::NONE)),
            SyscallEntry::Stopped(stop) => {
                self.stop_call(platform, current, esr, stop, &entered);
                return None;
            }
            SyscallEntry::Skipped(_) => {
                // The common case (an `Errno`, no audit record to write):
                // its exit stages on the thread in hand, one look at it.
                // Otherwise `audit_complete`, from the same look.
                let thread = &mut self.objects[current];
                let x0 = thread.context.x[0];
                let pending = thread.audit_pending.take();
                if pending.is_none()
                    && !matches!(
                        entered.outcome,
                        policy::EntryOutcome::Trap | policy::EntryOutcome::Redirect { .. }
                    )
                {
                    if Self::exit_work_on(thread, entry) {
                        self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
                    }
                    return None;
                }
                if let Some(pending) = pending {
                    self.write_record(platform, current, &pending, Some(x0));
                }
                // A trapped call is denied like an Errno (docs/entry.md:
                // stages 5-7 run), but its thread then waits for its fault
                // handler: its exit stages run now, and the stops they owe
                // are sent when it returns to EL0 after the handler's
                // answer (`Kernel::resume`).
                if entered.outcome == policy::EntryOutcome::Trap {
                    self.exit_with_work(platform, current, entry);
                }
                if !self.policy_skipped(platform, current, esr, entered.outcome) {
                    return None;
                }
            }
            SyscallEntry::Killed => {
                self.audit_complete(platform, current, None);
                self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
                return None;
            }
        }
        self.exit_with_work(platform, current, entry);
        None
    }

    /// After the dispatch of a syscall with entry work: its audit record,
    /// its result, its exit work (or, preempted, the kernel keeps it).
    fn finish_syscall_with_work<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
        entered: &Entered,
        result: SyscallResult,
    ) {
        // The common cases, a result or restored registers: the record
        // (`audit_dispatched`: its result is the `x0` the thread returns
        // with), the result (`write_back`) and the exit stages from one
        // look at the thread.
        if let SyscallResult::Return(_) | SyscallResult::Restored = result {
            let thread = &mut self.objects[current];
            if let SyscallResult::Return(code) = result {
                thread.context.x[0] = code.raw();
            }
            let x0 = thread.context.x[0];
            match thread.audit_pending.take() {
                Some(pending) => {
                    self.write_record(platform, current, &pending, Some(x0));
                    self.exit_with_work(platform, current, entered.entry);
                }
                None => {
                    if Self::exit_work_on(thread, entered.entry) {
                        self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_POLICY));
                    }
                }
            }
            return;
        }
        if !matches!(result, SyscallResult::Preempted { .. }) {
            self.audit_dispatched(platform, current, result);
        }
        match self.write_back(platform, current, esr, entered, result) {
            Dispatched::Returns => self.exit_with_work(platform, current, entered.entry),
            // The caller waits; whoever runs next goes through the exit
            // work in `resume`, and its own exit stages run when it
            // returns.
            Dispatched::Waits => self.defer_exit_work(current, entered.entry),
            Dispatched::Ended => {}
        }
    }

    /// Goes on with `current`'s stopped syscall, whose answer has come:
    /// from the registers the kernel kept, not the thread's.
    #[cold]
    #[inline(never)]
    fn continue_call<P: Platform>(&mut self, platform: &mut P, current: ThreadId) {
        let Some(judged) = self.objects[current]
            .call
            .as_ref()
            .map(|call| call.capability)
        else {
            return;
        };
        // The capability the call was judged on must still be the one it
        // names, to the same object (not one made since in its memory);
        // otherwise it is cancelled, as for a register write.
        if judged.is_some_and(|judged| !self.still_judged(current, judged)) {
            self.cancel_call(platform, current);
            return;
        }
        let thread = &mut self.objects[current];
        let Some(call) = thread.call.as_ref() else {
            return;
        };
        // Word by word, and only what goes on is read: taking the whole
        // call out and copying its registers as a slice were two calls
        // to `memcpy` (168 and 72 bytes). (In two statements, and `esr`
        // apart from `resumed`: as one nine-word array, or as a tuple
        // with `resumed`, the optimiser made a `memcpy` of them again.)
        let (r, x) = (&call.regs, &mut thread.context.x);
        [x[0], x[1], x[2], x[3], x[4]] = [r[0], r[1], r[2], r[3], r[4]];
        [x[5], x[6], x[7], x[8]] = [r[5], r[6], r[7], r[8]];
        let esr = call.esr;
        let resumed = call.resumed();
        thread.call = None;
        self.syscall_with_work(platform, current, esr, Some(&resumed));
    }

    /// Runs a decoded syscall. `progress` is how far a preempted one got
    /// (see `StoppedCall`), `None` for a call that starts now. One copy per
    /// `COPY`, for the reason `syscall::decode_copy` gives.
    fn dispatch<P: Platform, const COPY: syscall::Copy>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        call: Call,
        progress: Progress,
    ) -> SyscallResult {
        match call {
            Call::Null => SyscallResult::Return(ErrorCode::Ok),
            Call::Yield => SyscallResult::Yield,
            Call::Exit { status } => SyscallResult::Exited(status),
            Call::Ipc {
                operation,
                capability,
            } => self.ipc_syscall(platform, current, operation, capability),
            Call::Notification {
                operation,
                capability,
            } => self.notification_syscall(current, operation, capability),
            Call::IrqSetNotification {
                handler,
                notification,
            } => SyscallResult::Return(
                match self.irq_syscall(platform, current, handler, Some(notification)) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                },
            ),
            Call::IrqAck { handler } => {
                SyscallResult::Return(match self.irq_syscall(platform, current, handler, None) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                })
            }
            Call::IrqSetTimer { handler, ticks } => {
                self.irq_set_timer(platform, current, handler, ticks)
            }
            Call::IrqControlGet {
                control,
                intid,
                slot,
            } => SyscallResult::Return(
                match self.irq_control_get(platform, current, control, intid, slot) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                },
            ),
            Call::Retype {
                untyped,
                object_type,
                size,
                target,
                count,
                payer,
            } => self.retype_syscall(
                platform,
                current,
                untyped,
                object_type,
                size,
                (target, count, payer),
                progress,
            ),
            Call::Cap {
                operation,
                cnode,
                source,
                target,
            } => {
                let code =
                    match self.cap_syscall(platform, current, operation, cnode, source, target) {
                        Ok(()) => ErrorCode::Ok,
                        Err(code) => code,
                    };
                if self.current != Some(current) {
                    // Deleting a TCB it made ended the caller itself (its
                    // slot may even hold a new thread): nothing to return.
                    return SyscallResult::Ipc(ipc::Effects::new(Next::Continue));
                }
                SyscallResult::Return(code)
            }
            #[cfg(feature = "bench-calls")]
            Call::BenchFloor { on } => self.bench_floor(platform, current, on),
            #[cfg(feature = "test-calls")]
            Call::DebugThreadStats { tcb } => self.debug_thread_stats(current, tcb),
            #[cfg(feature = "test-calls")]
            Call::DebugCheckInvariants { at_ticks } => {
                self.debug_check_invariants(platform, current, at_ticks)
            }
            Call::Tcb { operation, tcb } => self.tcb_syscall(platform, current, operation, tcb),
            Call::TcbConfigure {
                tcb,
                cnode,
                priority,
            } => SyscallResult::Return(match self.tcb_configure(current, tcb, cnode, priority) {
                Ok(()) => ErrorCode::Ok,
                Err(code) => code,
            }),
            Call::TcbSetSpace => {
                SyscallResult::Return(match self.tcb_set_space(platform, current) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                })
            }
            Call::TcbRestart => SyscallResult::Return(match self.tcb_restart(current) {
                Ok(()) => ErrorCode::Ok,
                Err(code) => code,
            }),
            Call::TcbSetName => SyscallResult::Return(match self.tcb_set_name(platform, current) {
                Ok(()) => ErrorCode::Ok,
                Err(code) => code,
            }),
            Call::BindNotification { tcb, notification } => {
                SyscallResult::Return(match self.bind_notification(current, tcb, notification) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                })
            }
            Call::SetAudit {
                tcb,
                frame,
                notification,
                mode,
                badge,
            } => SyscallResult::Return(
                match self.set_audit(current, tcb, frame, notification, mode, badge) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                },
            ),
            Call::FilterLoad {
                filter,
                address,
                len,
            } => SyscallResult::Return(
                match self.filter_load(platform, current, filter, address, len) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                },
            ),
            Call::FrameMap {
                frame,
                vspace,
                va,
                rights,
            } => SyscallResult::Return(
                match self.frame_map_syscall(platform, current, frame, vspace, va, rights) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                },
            ),
            Call::AttachFilter {
                tcb,
                filter,
                server,
            } => SyscallResult::Return(match self.attach_filter(current, tcb, filter, server) {
                Ok(()) => ErrorCode::Ok,
                Err(code) => code,
            }),
            Call::FrameUnmap { frame } => {
                SyscallResult::Return(match self.frame_unmap_syscall(platform, current, frame) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                })
            }
            Call::SetUserDispatch => {
                SyscallResult::Return(match self.set_user_dispatch(platform, current) {
                    Ok(()) => ErrorCode::Ok,
                    Err(code) => code,
                })
            }
            Call::UserDispatchReturn { frame } => {
                match self.user_dispatch_return(platform, current, frame) {
                    Ok(()) => SyscallResult::Restored,
                    Err(code) => SyscallResult::Return(code),
                }
            }
            Call::DebugPrint {
                console,
                address,
                len,
            } => {
                if let Err(code) =
                    self.thread_cap(current, console, CapType::DebugConsole, Rights::WRITE)
                {
                    return SyscallResult::Return(code);
                }
                let mut text = [0u8; DEBUG_PRINT_MAX];
                let Some(space) = self.thread_space(current) else {
                    return SyscallResult::Return(ErrorCode::InvalidAddress);
                };
                if space
                    .copy_from_user(platform, address, &mut text[..len])
                    .is_err()
                {
                    return SyscallResult::Return(ErrorCode::InvalidAddress);
                }
                self.print_user_text(platform, current, &text[..len]);
                SyscallResult::Return(ErrorCode::Ok)
            }
        }
    }

    /// An IPC syscall: checks the endpoint capability, runs the operation
    /// and reports what the scheduler must do.
    #[inline(never)]
    fn ipc_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: IpcOperation,
        cptr: u64,
    ) -> SyscallResult {
        // A message longer than the registers, or carrying capabilities,
        // is read from the sender's IPC buffer: a thread given none by
        // `TcbSetSpace` (or whose buffer Frame was destroyed) cannot send
        // one.
        let thread = &self.objects[current];
        let sent = message::sent_info(thread);
        if operation.sends() && thread.ipc_buffer.is_none() && !message::fits_in_registers(sent) {
            return SyscallResult::Return(ErrorCode::InvalidAddress);
        }
        // Read now, in the same look at the thread (the capability look-up
        // below changes neither): each later look costs a bounds and kind
        // check.
        let has_bound = thread.bound_notification.is_some();
        if operation == IpcOperation::Reply {
            return match ipc::reply(platform, &mut self.objects, current) {
                Ok(caller) => SyscallResult::Ipc(Effects::continue_and_wake(caller)),
                Err(error) => SyscallResult::Return(ipc_error(error)),
            };
        }
        let needed = if operation.sends() && operation != IpcOperation::ReplyRecv {
            Rights::WRITE
        } else {
            Rights::READ
        };
        let cap = match self.thread_cap(current, cptr, CapType::Endpoint, needed) {
            Ok(cap) => cap,
            // `Send` and `NBSend` also answer a saved reply.
            Err(ErrorCode::WrongCapabilityType)
                if matches!(operation, IpcOperation::Send | IpcOperation::NBSend) =>
            {
                return match self.reply_capability(current, cptr) {
                    Some(reply) => self.reply_through_capability(platform, current, reply),
                    None => SyscallResult::Return(ErrorCode::WrongCapabilityType),
                }
            }
            Err(code) => return SyscallResult::Return(code),
        };
        // Capabilities travel only through an endpoint capability with the
        // grant right; asking without it changes nothing.
        let carries_caps = operation.sends() && sent.caps() != 0;
        if carries_caps && !cap.rights().grant() {
            return SyscallResult::Return(ErrorCode::MissingRights);
        }
        // A bound notification with bits pending ends a receive at once.
        let receives = !operation.sends() || operation == IpcOperation::ReplyRecv;
        if receives && has_bound {
            if let Some(result) = self.receive_bound(platform, current, operation) {
                return result;
            }
        }
        let endpoint_id = cap.object();
        let Some(mut endpoint) = self.objects.get::<kind::Endpoint>(endpoint_id).copied() else {
            return SyscallResult::Return(ErrorCode::InvalidCapability);
        };
        let threads = &mut self.objects;
        let send = |blocking, call| SendKind { blocking, call };
        let result = match operation {
            IpcOperation::Send => ipc::send(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                cap.badge(),
                send(true, false),
            ),
            IpcOperation::NBSend => ipc::send(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                cap.badge(),
                send(false, false),
            ),
            IpcOperation::Call => ipc::send(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                cap.badge(),
                send(true, true),
            ),
            IpcOperation::Recv => {
                ipc::receive(platform, threads, &mut endpoint, endpoint_id, current, true)
            }
            IpcOperation::NBRecv => ipc::receive(
                platform,
                threads,
                &mut endpoint,
                endpoint_id,
                current,
                false,
            ),
            IpcOperation::ReplyRecv => {
                ipc::reply_receive(platform, threads, &mut endpoint, endpoint_id, current)
            }
            IpcOperation::Reply => unreachable!("handled above"),
        };
        if let Some(queue) = self.objects.get_mut::<kind::Endpoint>(endpoint_id) {
            *queue = endpoint;
        }
        match result {
            Ok(effects) => {
                if let Some((from, to)) = effects.delivered() {
                    if message::sent_info(&self.objects[from]).caps() != 0 {
                        self.transfer_caps(platform, from, to);
                    }
                }
                SyscallResult::Ipc(effects)
            }
            Err(error) => SyscallResult::Return(ipc_error(error)),
        }
    }

    /// Moves the capabilities a delivered message carries: the sender
    /// lists them in its IPC buffer (words `IPC_BUFFER_SEND_CAPS_WORD..`),
    /// the receiver names where they go (word
    /// `IPC_BUFFER_RECEIVE_SLOT_WORD`). Each arrives as a copy (a child of
    /// the sender's); the first that cannot (bad pointer, occupied or
    /// missing slot) stops the transfer, and the receiver's message info
    /// says how many arrived.
    #[inline(never)]
    fn transfer_caps<P: Platform>(&mut self, platform: &mut P, from: ThreadId, to: ThreadId) {
        let wanted = message::sent_info(&self.objects[from]).caps();
        if wanted == 0 {
            return;
        }
        let (sender, receiver) = (&self.objects[from], &self.objects[to]);
        let (sender, receiver) = (
            (sender.ipc_buffer, sender.cspace),
            (receiver.ipc_buffer, receiver.cspace),
        );
        let mut moved = 0u8;
        if let (
            (Some(send_buffer), Some(source_cnode)),
            (Some(receive_buffer), Some(target_cnode)),
        ) = (sender, receiver)
        {
            let first_target =
                platform.read_phys_u64(receive_buffer + 8 * IPC_BUFFER_RECEIVE_SLOT_WORD as u64);
            for i in 0..u64::from(wanted) {
                let cptr = platform
                    .read_phys_u64(send_buffer + 8 * (IPC_BUFFER_SEND_CAPS_WORD as u64 + i));
                let slots = self.objects.slot(source_cnode, cptr).and_then(|source| {
                    Ok((
                        source,
                        self.objects
                            .slot(target_cnode, first_target.wrapping_add(i))?,
                    ))
                });
                match slots.and_then(|(source, target)| self.objects.copy(source, target)) {
                    Ok(()) => moved += 1,
                    Err(_) => break,
                }
            }
        }
        let context = &mut self.objects[to].context;
        context.x[1] = abi::MessageInfo::from(context.x[1]).with_caps(moved).into();
    }

    /// `Signal`, `Wait` or `Poll` through the notification capability at
    /// `cptr` (signal: write right; wait and poll: read right).
    #[inline(never)]
    fn notification_syscall(
        &mut self,
        current: ThreadId,
        operation: NotificationOperation,
        cptr: u64,
    ) -> SyscallResult {
        let needed = match operation {
            NotificationOperation::Signal => Rights::WRITE,
            NotificationOperation::Wait | NotificationOperation::Poll => Rights::READ,
        };
        let cap = match self.thread_cap(current, cptr, CapType::Notification, needed) {
            Ok(cap) => cap,
            Err(code) => return SyscallResult::Return(code),
        };
        let object = cap.object();
        if operation == NotificationOperation::Signal {
            self.objects[current].context.x[0] = ErrorCode::Ok.raw();
            let bits = notification::signal_bits(cap.badge(), cap.is_badged());
            return SyscallResult::Ipc(self.signal_notification(object, bits));
        }
        let Some(body) = self.objects.get_mut::<kind::Notification>(object) else {
            return SyscallResult::Return(ErrorCode::InvalidCapability);
        };
        let blocking = operation == NotificationOperation::Wait;
        if body.word != 0 || !blocking {
            // `notification::wait`'s answer at once, taken in place: a
            // copy of the body out and back cost a second look-up.
            let word = core::mem::take(&mut body.word);
            let context = &mut self.objects[current].context;
            context.x[0] = ErrorCode::Ok.raw();
            context.x[8] = word;
            return SyscallResult::Ipc(Effects::new(ipc::Next::Continue));
        }
        let mut state = *body;
        let effects = notification::wait(&mut self.objects, &mut state, object, current, blocking);
        if let Some(body) = self.objects.get_mut::<kind::Notification>(object) {
            *body = state;
        }
        SyscallResult::Ipc(effects)
    }

    /// `Retype`: objects from the caller's Untyped capability into its own
    /// CNode: endpoints, notifications, Reply objects, CNodes, smaller
    /// Untypeds, Frames and VSpaces (zeroed before any capability to them
    /// exists; a VSpace is unbound until `TcbSetSpace`), filters and TCBs
    /// (each a new, inactive thread in its own record), `count` of them
    /// into slots from `target` on.
    ///
    /// Zeroing is the long part (64 VSpaces of 65 pages are 16.6 MiB), so
    /// it is preemptible: every `ZERO_PAGES_PER_CHECK` pages the kernel
    /// looks for a pending interrupt, and if there is one the call stops
    /// there (`Retyped::Preempted`, `progress` pages zeroed of the memory
    /// that starts the plan's range) and goes on later from the same
    /// registers. Nothing is made until all of it is zeroed, so a call
    /// that is preempted, cancelled or fails in the end changes nothing;
    /// on going on, the call is checked afresh, and the zeroing done so far
    /// counts only if the Untyped's memory is as it was (its epoch).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn retype_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        untyped_cptr: u64,
        object_type: CapType,
        size: u64,
        destination: (u64, u64, u64),
        progress: Progress,
    ) -> SyscallResult {
        match self.retype(
            platform,
            current,
            untyped_cptr,
            object_type,
            size,
            destination,
            progress,
        ) {
            Ok(Retyped::Done) => SyscallResult::Return(ErrorCode::Ok),
            Ok(Retyped::Preempted { progress, at }) => SyscallResult::Preempted { progress, at },
            Err(code) => SyscallResult::Return(code),
        }
    }

    /// `retype_syscall`'s work.
    #[allow(clippy::too_many_arguments)]
    fn retype<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        untyped_cptr: u64,
        object_type: CapType,
        size: u64,
        (target, count, payer): (u64, u64, u64),
        progress: Progress,
    ) -> Result<Retyped, ErrorCode> {
        if !matches!(
            object_type,
            CapType::Endpoint
                | CapType::Notification
                | CapType::Reply
                | CapType::CNode
                | CapType::Untyped
                | CapType::Filter
                | CapType::Frame
                | CapType::VSpace
                | CapType::Tcb
        ) {
            return Err(ErrorCode::InvalidArgument);
        }
        // Records destroyed earlier in this kernel entry give their memory
        // back first.
        self.reap();
        let cnode = self.objects[current]
            .cspace
            .ok_or(ErrorCode::InvalidCapability)?;
        let untyped_slot = self
            .objects
            .slot(cnode, untyped_cptr)
            .map_err(ErrorCode::from)?;
        // A device Untyped's Frames have their records paid by the RAM
        // Untyped in `x6` (`cap/device.rs`); their pages are never zeroed.
        let device = self
            .objects
            .lookup_typed(untyped_slot, CapType::Untyped, Rights::WRITE)
            .is_ok_and(|cap| self.objects.is_device_untyped(cap.object()));
        let plan = if device {
            let payer_slot = self.objects.slot(cnode, payer).map_err(ErrorCode::from)?;
            self.objects.plan_device_retype(
                untyped_slot,
                payer_slot,
                object_type,
                size,
                cnode,
                target,
                count,
            )
        } else {
            self.objects
                .plan_retype(untyped_slot, object_type, size, cnode, target, count)
        }
        .map_err(ErrorCode::from)?;
        if !plan.is_device() && matches!(object_type, CapType::Frame | CapType::VSpace) {
            let page_size = arch::layout::PAGE_SIZE;
            let pages = (plan.end - plan.start) / page_size;
            let mut zeroed = if progress.at == plan.epoch {
                progress.done.min(pages)
            } else {
                0
            };
            while zeroed < pages {
                platform.zero_frame(plan.start + zeroed * page_size);
                zeroed += 1;
                if zeroed < pages
                    && zeroed % ZERO_PAGES_PER_CHECK == 0
                    && platform.interrupt_is_pending()
                {
                    return Ok(Retyped::Preempted {
                        progress: zeroed,
                        at: plan.epoch,
                    });
                }
            }
        }
        let made = self.objects.commit_retype(&plan).map_err(ErrorCode::from)?;
        if object_type == CapType::Tcb {
            for object in made {
                self.tcb_created(current, ThreadId::of(object));
            }
        }
        Ok(Retyped::Done)
    }

    /// A CNode operation through the caller's CNode capability `cnode_cptr`
    /// (write right). Objects destroyed by a delete or revoke wake their
    /// waiters with `ObjectDeleted`.
    // Inlined into `dispatch`, for the reason `tcb_syscall` is.
    #[inline(always)]
    fn cap_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: CapOperation,
        cnode_cptr: u64,
        source: u64,
        target: u64,
    ) -> Result<(), ErrorCode> {
        let cnode_cap = self.thread_cap(current, cnode_cptr, CapType::CNode, Rights::WRITE)?;
        let cnode = CNodeId(cnode_cap.object());
        // `MintInto` and `MoveInto` take their source from the caller's
        // own CSpace.
        let source_cnode = match operation {
            CapOperation::MintInto { .. } | CapOperation::MoveInto => self.objects[current]
                .cspace
                .ok_or(ErrorCode::InvalidCapability)?,
            _ => cnode,
        };
        let source = self
            .objects
            .slot(source_cnode, source)
            .map_err(ErrorCode::from)?;
        let target = || self.objects.slot(cnode, target).map_err(ErrorCode::from);
        match operation {
            CapOperation::Copy => {
                let target = target()?;
                self.objects.copy(source, target)
            }
            CapOperation::Mint { rights, badge } | CapOperation::MintInto { rights, badge } => {
                let target = target()?;
                self.objects.mint(source, target, rights, badge)
            }
            CapOperation::Move | CapOperation::MoveInto => {
                let target = target()?;
                self.objects.move_cap(source, target)
            }
            CapOperation::Delete => {
                return self.destroying(platform, |objects| objects.delete(source))
            }
            CapOperation::Revoke => {
                let result = self.destroying(platform, |objects| objects.revoke(source));
                self.reclaim_pinned(platform, source);
                return result;
            }
            CapOperation::ReplySave => return self.reply_save(current, source),
        }
        .map_err(ErrorCode::from)
    }

    /// Applies what an IPC operation asked of the scheduler.
    fn apply_ipc<P: Platform>(&mut self, platform: &mut P, effects: Effects) {
        // A caller that waits leaves the CPU before anyone wakes, so that
        // waking a more urgent thread does not ask it, blocked, to yield
        // (a stale NEED_RESCHED would also keep it off the fast path).
        if effects.next != Next::Continue {
            self.current = None;
        }
        for thread in effects.woken() {
            match self.objects[thread].state {
                // A fault handler replied "stop": the thread ends here.
                ThreadState::Faulted(report) => {
                    self.end_thread(platform, thread, ThreadState::Faulted(report))
                }
                // Its policy server answered "kill".
                ThreadState::Exited(status) => {
                    self.end_thread(platform, thread, ThreadState::Exited(status))
                }
                _ => self.make_ready(thread),
            }
        }
        if let Next::SwitchTo(thread) = effects.next {
            // A fault reply "stop" sent with ReplyRecv: the faulter ends
            // instead of resuming at the faulting instruction.
            if let state @ (ThreadState::Faulted(_) | ThreadState::Exited(_)) =
                self.objects[thread].state
            {
                self.end_thread(platform, thread, state);
            } else if self
                .run_queue
                .highest_priority()
                .is_some_and(|ready| ready > self.objects[thread].priority)
            {
                // seL4's possibleSwitchTo: the direct switch may not jump
                // a more urgent ready thread; the partner queues and the
                // scheduler picks.
                self.make_ready(thread);
            } else {
                self.switch_to(platform, thread);
            }
        }
    }

    /// Puts a thread that stopped waiting into the run queue; asks the
    /// current thread to yield if the woken one is more urgent.
    fn make_ready(&mut self, thread: ThreadId) {
        let ready = &mut self.objects[thread];
        ready.state = ThreadState::Ready;
        let priority = ready.priority;
        let links = self.run_queue.append(thread, priority);
        ready.run_links = links;
        self.run_queue.link_behind(&mut self.objects, thread, links);
        if let Some(current) = self.current {
            if priority > self.objects[current].priority {
                self.objects[current].work.insert(WorkFlags::NEED_RESCHED);
            }
        }
    }

    /// Prints a thread's text, each line prefixed with the thread's name
    /// and number, except the root task's: its lines are the system's own
    /// (its driver's TAP, the demo's steps) and go out as they are. Lines
    /// of different threads never share a console line.
    #[inline(never)]
    fn print_user_text<P: Platform>(&mut self, platform: &mut P, id: ThreadId, text: &[u8]) {
        if self.open_line.is_some_and(|writer| writer != id) {
            self.end_user_lines(platform);
        }
        let tagged = self.root != Some(id);
        let thread = &self.objects[id];
        let mut console = Console(platform);
        let mut line_open = self.open_line == Some(id);
        for &byte in text {
            if !line_open {
                if tagged {
                    let _ = write!(console, "[{}#{}] ", thread.name.as_str(), thread.number);
                }
                line_open = true;
            }
            let shown = match byte {
                b'\n' | b'\t' | 0x20..=0x7e => byte as char,
                _ => '?',
            };
            let _ = console.write_char(shown);
            if byte == b'\n' {
                line_open = false;
            }
        }
        self.open_line = line_open.then_some(id);
    }

    fn fault<P: Platform>(
        &mut self,
        platform: &mut P,
        id: ThreadId,
        report: FaultReport,
    ) -> Resume {
        self.report_fault(platform, id, report);
        self.resume(platform)
    }

    /// The console line for thread `id`, ended by the kernel for `reason`
    /// (`kill_reason`); a policy kill names the syscall it was in.
    #[cold]
    #[inline(never)]
    fn report_kill<P: Platform>(&mut self, platform: &mut P, id: ThreadId, reason: &str) {
        self.end_user_lines(platform);
        let thread = &self.objects[id];
        let (name, number) = (thread.name, thread.number);
        // The number as judged (a kept call's), else the live register.
        let number_register = thread
            .call
            .as_ref()
            .map_or(thread.context.x[8], |c| c.regs[8]);
        let syscall = abi::Syscall::from_number(number_register).map_or("?", |s| s.name());
        let mut console = Console(platform);
        if thread.state == ThreadState::Running || thread.call.is_some() {
            let _ = writeln!(
                console,
                "[kernel] thread {name}#{number} {reason} (in {syscall})"
            );
        } else {
            let _ = writeln!(console, "[kernel] thread {name}#{number} {reason}");
        }
    }

    /// A fault of thread `id`: its report goes to its fault endpoint (the
    /// thread waits for the handler's reply), or the thread stops.
    fn report_fault<P: Platform>(&mut self, platform: &mut P, id: ThreadId, report: FaultReport) {
        self.end_user_lines(platform);
        let handler = self.objects[id]
            .fault_endpoint
            .and_then(|(e, badge)| Some((self.objects.resolve(e, CapType::Endpoint)?, badge)));
        let thread = &mut self.objects[id];
        let mut console = Console(platform);
        if let Some((endpoint, badge)) = handler {
            let _ = writeln!(
                console,
                "[kernel] thread {}#{} faulted: {report}; sent to its fault handler",
                thread.name, thread.number
            );
            thread.pending_fault = Some(report);
            self.send_on_behalf(platform, id, endpoint, badge);
            return;
        }
        let _ = writeln!(
            console,
            "[kernel] thread {}#{} stopped: {report}",
            thread.name, thread.number
        );
        self.end_thread(platform, id, ThreadState::Faulted(report));
    }

    /// Sends the kernel message `thread` has pending (a fault report, a
    /// policy request or a trace stop) to endpoint `endpoint` as if the
    /// thread had called it, with `badge`; the thread waits for the reply.
    fn send_on_behalf<P: Platform>(
        &mut self,
        platform: &mut P,
        thread: ThreadId,
        endpoint: ObjectId,
        badge: u64,
    ) {
        let Some(mut queue) = self.objects.get::<kind::Endpoint>(endpoint).copied() else {
            return;
        };
        let effects = ipc::send_fault(
            platform,
            &mut self.objects,
            &mut queue,
            endpoint,
            thread,
            badge,
        );
        if let Some(body) = self.objects.get_mut::<kind::Endpoint>(endpoint) {
            *body = queue;
        }
        self.apply_ipc(platform, effects);
    }

    /// Picks the thread to return to and runs its exit-to-user work.
    ///
    /// Each round picks a thread and either returns to it or does one
    /// thing that changes what is next: a reschedule (only in the first
    /// `MAX_SCHEDULING_ROUNDS` rounds; after that the thread runs and the
    /// next tick asks again), a stopped syscall that goes on, a trace stop
    /// sent, an audit waiter woken. Each of those uses
    /// something up (a stopped call, an owed stop, a blocked thread), so
    /// the loop ends; `MAX_RESUME_ROUNDS` makes sure of it: past it the CPU
    /// idles until the next interrupt and the kernel looks again.
    fn resume<P: Platform>(&mut self, platform: &mut P) -> Resume {
        // Most kernel entries end with the thread that made them, or the
        // one an IPC switched to, going back as it is: no exit work, no
        // answered call, nothing to free, no end of the run. One look at
        // it then.
        if let Some(current) = self.current {
            if self.shutdown.is_none() && !self.objects.has_retired() {
                let thread = &mut self.objects[current];
                let answered = thread.call.as_ref().is_some_and(StoppedCall::is_answered);
                if !answered && !thread.work.intersects(RESUME_WORK) {
                    return Resume::User {
                        ttbr0: thread.ttbr0,
                        context: &mut thread.context,
                    };
                }
            }
        }
        self.resume_with_work(platform)
    }

    /// `resume` when there is something to do first.
    #[inline(never)]
    fn resume_with_work<P: Platform>(&mut self, platform: &mut P) -> Resume {
        // The thread that ran waits or yielded, and the next ready one has
        // nothing to do first: the common case, kept out of the loop of
        // `pick_resume` (whose set-up costs more than this whole path).
        let quick = if self.current.is_none() && self.shutdown.is_none() {
            match self.run_queue.dequeue(&mut self.objects) {
                Some((next, _)) => self.switch_to_ready(platform, next),
                None => None,
            }
        } else {
            None
        };
        // (Not quick: `pick_resume` goes on with the thread just switched
        // to, if any, as its current thread.)
        let resume = match quick {
            Some(resume) => resume,
            None => self.pick_resume(platform),
        };
        // The kernel entry is over: records destroyed in it are freed.
        if self.objects.has_retired() {
            self.reap();
        }
        resume
    }

    /// `resume`'s choice.
    #[inline(never)]
    fn pick_resume<P: Platform>(&mut self, platform: &mut P) -> Resume {
        for round in 0..MAX_RESUME_ROUNDS {
            // The root task has ended: so does the run.
            if let Some(status) = self.shutdown {
                return Resume::Shutdown { status };
            }
            let current = match self.current {
                Some(current) => current,
                None => match self.run_queue.dequeue(&mut self.objects) {
                    Some((next, _)) => {
                        if let Some(resume) = self.switch_to_ready(platform, next) {
                            return resume;
                        }
                        next
                    }
                    // Nothing ready, but an audit ring may have room by now
                    // (the server drained it and went to sleep).
                    None if self.wake_audit_waiters(platform) => continue,
                    // Nothing can run: idle until an interrupt (waiting
                    // for one that never comes is the root's to time out).
                    None => return Resume::Idle,
                },
            };
            let thread = &mut self.objects[current];
            let work = thread.work;
            let mut hooks = ExitWork {
                work: &mut thread.work,
                reschedule: false,
            };
            let _pending = entry::exit_to_user_mode(&mut hooks, work);
            if !hooks.reschedule || round >= MAX_SCHEDULING_ROUNDS {
                // A stopped syscall whose answer has come goes on before
                // the thread returns to EL0 (it may stop or block again).
                if thread.call.as_ref().is_some_and(StoppedCall::is_answered) {
                    self.continue_call(platform, current);
                    continue;
                }
                // Trace stops owed, or the single-step hardware to switch
                // on (a stale one is switched off lazily: see
                // `Kernel::software_step`).
                if work.intersects(WorkFlags::TRACE | WorkFlags::SINGLESTEP)
                    && self.trace_before_user(platform, current)
                {
                    continue;
                }
                return self.user_resume(current);
            }
            // Round robin: back of its priority's queue, then pick again.
            thread.state = ThreadState::Ready;
            let priority = thread.priority;
            thread.run_links = self.run_queue.append(current, priority);
            let links = thread.run_links;
            self.current = None;
            self.run_queue
                .link_behind(&mut self.objects, current, links);
        }
        Resume::Idle
    }

    fn user_resume(&mut self, id: ThreadId) -> Resume {
        let thread = &mut self.objects[id];
        Resume::User {
            ttbr0: thread.ttbr0,
            context: &mut thread.context,
        }
    }

    /// Makes `next` the running thread: its ASID is current, its FP/SIMD
    /// state and TPIDR_EL0 are in the CPU.
    /// Out of line: inlined into `resume` it weighed on the paths that do
    /// not switch (their register saves), which are most syscalls.
    #[inline(never)]
    fn switch_to<P: Platform>(&mut self, platform: &mut P, next: ThreadId) {
        let _ = self.switch_to_inline(platform, next);
    }

    /// `switch_to`, and the way back to EL0 if `next` has nothing to do
    /// first (no exit work, trace stop or answered call: `resume`'s own
    /// test), read while the thread is in hand.
    #[inline(never)]
    fn switch_to_ready<P: Platform>(&mut self, platform: &mut P, next: ThreadId) -> Option<Resume> {
        let (resume, ready) = self.switch_to_inline(platform, next);
        ready.then_some(resume)
    }

    /// `switch_to`, inlined into its caller: the IPC fast path's copy
    /// saves the call and its register saves.
    ///
    /// Returns the way back to EL0 for `next` and whether it may take it
    /// at once (`switch_to_ready`).
    #[inline(always)]
    fn switch_to_inline<P: Platform>(
        &mut self,
        platform: &mut P,
        next: ThreadId,
    ) -> (Resume, bool) {
        self.current = Some(next);
        let thread = &mut self.objects[next];
        thread.state = ThreadState::Running;
        // Same generation: the ASID is still this space's (one CPU, so no
        // other CPU can be running with it). Otherwise take a new one. The
        // thread's own copy of the generation spares a look at its space.
        let asid_stale = thread.asid_generation != self.asids.generation();
        let answered = thread.call.as_ref().is_some_and(StoppedCall::is_answered);
        let ready = !answered && !thread.work.intersects(RESUME_WORK);
        let mut resume = Resume::User {
            ttbr0: thread.ttbr0,
            context: &mut thread.context,
        };
        if asid_stale {
            self.refresh_asid(platform, next);
            resume = self.user_resume(next);
        }
        // TPIDR_EL0 needs nothing here: the vectors save it on entry and
        // restore_user_context loads the thread's own.
        self.last_ran = Some(next);
        // FP/SIMD moves lazily: a thread that does not own the registers
        // traps on its first FP instruction (see `take_fp`).
        let owns_fp = self.fp_owner == Some(next);
        if self.fp_access != owns_fp {
            self.change_fp_access(platform, owns_fp);
        }
        (resume, ready)
    }

    /// A new ASID for `thread`'s space after a generation rollover (kept
    /// out of line: `switch_to` is on the IPC fast path). The space keeps
    /// it, so the other threads in the space find it current; their
    /// cached TTBR0 values change with it.
    #[cold]
    #[inline(never)]
    fn refresh_asid<P: Platform>(&mut self, platform: &mut P, thread: ThreadId) {
        let live = self.live_asid();
        let Some(id) = self.objects[thread].space else {
            // Nothing to refresh: stop asking until the next rollover.
            self.objects[thread].asid_generation = self.asids.generation();
            return;
        };
        let space = self
            .objects
            .get_mut::<kind::VSpace>(id)
            .and_then(|v| v.space.as_mut());
        if let Some(space) = space {
            let assignment = self.asids.assign(Some(space.asid()), live);
            if assignment.flush_all {
                platform.flush_tlb_all();
            }
            space.set_asid(assignment.asid);
        }
        self.sync_space_caches(id);
    }

    /// The ASID that may be in TTBR0 now: the space of the thread that ran
    /// last (the IPC fast path switches threads before TTBR0 is blocked).
    /// Naming a space that is not live only costs a number.
    fn live_asid(&self) -> Option<arch::mmu::AsidWithGeneration> {
        let owner = self.last_ran?;
        self.thread_space(owner).map(AddressSpace::asid)
    }

    /// Inlined: it is a handful of instructions (the CPACR write and its
    /// ISB), and a call cost as much again in argument moves whenever an
    /// IPC partner owns the FP registers (every switch then changes it).
    #[inline(always)]
    fn change_fp_access<P: Platform>(&mut self, platform: &mut P, enabled: bool) {
        platform.set_fp_access(enabled);
        self.fp_access = enabled;
    }

    /// The current thread used FP/SIMD without owning the registers: move
    /// the owner's state out and the thread's in, then retry.
    fn take_fp<P: Platform>(&mut self, platform: &mut P, current: ThreadId) -> Resume {
        if self.fp_owner != Some(current) {
            match self.fp_owner {
                Some(owner) => {
                    let Some((outgoing, incoming)) = self.objects.thread_pair_mut(owner, current)
                    else {
                        unreachable!("owner and current differ and are threads");
                    };
                    platform.move_fp_state(Some(&mut outgoing.fp), &incoming.fp);
                }
                None => platform.move_fp_state(None, &self.objects[current].fp),
            }
            self.fp_owner = Some(current);
        }
        platform.set_fp_access(true);
        self.fp_access = true;
        self.resume(platform)
    }

    /// `BenchFloor`: `on` installs the floor for the caller's return to
    /// EL0, which is straight back to it (the caller has no work: a
    /// thread with entry or exit work could be switched away from on the
    /// way out, leaving the floor to another thread). The next kernel
    /// entry from EL0 ends it (`end_floor`). Off: whether an interrupt
    /// ended it first (`Interrupted`: the samples taken under it are
    /// spoiled).
    #[cfg(feature = "bench-calls")]
    #[cold]
    #[inline(never)]
    fn bench_floor<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        on: bool,
    ) -> SyscallResult {
        let interrupted = self.floor_interrupted.take() == Some(current);
        if !on {
            return SyscallResult::Return(if interrupted {
                ErrorCode::Interrupted
            } else {
                ErrorCode::Ok
            });
        }
        if !self.objects[current].work.is_empty() {
            return SyscallResult::Return(ErrorCode::InvalidArgument);
        }
        platform.set_syscall_floor(true);
        SyscallResult::Return(ErrorCode::Ok)
    }

    /// A kernel entry from EL0 under the benchmark floor: the normal
    /// vectors again, before anything else runs.
    #[cfg(feature = "bench-calls")]
    #[inline(never)]
    pub fn end_floor<P: Platform>(&mut self, platform: &mut P, interrupted: bool) {
        platform.set_syscall_floor(false);
        if interrupted {
            self.floor_interrupted = self.current;
        }
    }

    /// The capability in the slot `current`'s `x0` names
    /// (`Capability::NULL` for none), read through the thread's cached
    /// CSpace range as the fast path reads it (no CSpace: no slots).
    fn capability_named(&self, current: ThreadId) -> Capability {
        let thread = &self.objects[current];
        let (first, slots) = thread.cspace_slots;
        let index = thread.context.x[0];
        if index >= u64::from(slots) {
            return Capability::NULL;
        }
        self.objects
            .slot_content(SlotId(first.0 + index as u32))
            .unwrap_or(Capability::NULL)
    }

    /// What a call of `current`'s stopping now is judged on: the
    /// capability its `x0` names, and the serial numbers given out so far.
    fn judged_capability(&self, current: ThreadId) -> JudgedCapability {
        JudgedCapability {
            capability: self.capability_named(current),
            // At least the caller's own TCB has been made (and had it
            // not, 1 would only make the check stricter).
            newest_serial: core::num::NonZeroU64::new(self.objects.newest_serial())
                .unwrap_or(core::num::NonZeroU64::MIN),
        }
    }

    /// Does the slot `current`'s `x0` names still hold what its call was
    /// judged on: an equal capability, to an object made before the call
    /// was judged (not a new one in the judged one's memory, which would
    /// have its id)? Only if objects were made since is a header read.
    fn still_judged(&self, current: ThreadId, judged: JudgedCapability) -> bool {
        let capability = self.capability_named(current);
        if capability != judged.capability {
            return false;
        }
        capability.is_null()
            || self.objects.newest_serial() == judged.newest_serial.get()
            || self
                .objects
                .object(capability.object())
                .is_some_and(|header| header.serial <= judged.newest_serial.get())
    }

    /// Cancels `target`'s stopped syscall, if it has one (waiting for its
    /// tracer, a policy server or audit room, or answered and about to go
    /// on): it leaves what it waits in, does not run, and returns
    /// `Interrupted`; its audit record says "cancelled", and a tracer that
    /// saw its entry gets its exit stop. The caller decides the thread's
    /// state (suspended, or ready). `false` if it had none.
    fn cancel_call<P: Platform>(&mut self, platform: &mut P, target: ThreadId) -> bool {
        let Some(call) = self.objects[target].call else {
            return false;
        };
        if matches!(
            self.objects[target].state,
            ThreadState::BlockedOnSend { fault: true, .. }
                | ThreadState::BlockedOnFaultReply
                | ThreadState::BlockedOnAudit
        ) {
            self.cancel_wait(target);
        }
        let thread = &mut self.objects[target];
        thread.call = None;
        thread.pending_policy = None;
        if thread
            .pending_trace
            .is_some_and(|stop| stop.kind == abi::trace::StopKind::Entry)
        {
            thread.pending_trace = None;
        }
        thread.context.x[0] = ErrorCode::Interrupted.raw();
        if thread.tracer.is_some()
            && thread.work.contains(WorkFlags::TRACE)
            && call.passed_entry_stop()
        {
            thread.trace.number = call.regs[8];
            thread.trace.owed |= crate::thread::TraceProgress::OWE_EXIT;
        }
        self.audit_cancelled(platform, target, &call, Some(ErrorCode::Interrupted.raw()));
        true
    }

    /// Ends a thread: frees its memory (or keeps its TCB ended, for a
    /// thread made from user space) and takes it off the CPU and the run
    /// queue. The root task's end ends the run (`end_root`).
    fn end_thread<P: Platform>(&mut self, platform: &mut P, id: ThreadId, state: ThreadState) {
        // Ended already (a kept TCB): nothing more ends. (Callers that take
        // something from an ended thread, its space or a filter, do that
        // themselves.)
        if self.objects[id].state.is_kept_end() || self.objects[id].state == ThreadState::Free {
            return;
        }
        // A thread the kernel ends for a reason of its own says so, as a
        // fault does: nothing else would tell a killed thread from one
        // that exited.
        if let Some(reason) = kill_reason(state) {
            self.report_kill(platform, id, reason);
        }
        // How it ended, while it is whole (the end message says it).
        let end = self.end_of(id, state);
        // The record of the syscall it was in, while it is whole.
        self.audit_thread_ends(platform, id);
        // First, while it is whole: threads sharing a kernel-made space
        // it owns go with it (its VSpace object goes below).
        self.end_space_guests(platform, id);
        self.leave_ipc(platform, id);
        let is_root = self.root == Some(id);
        if is_root {
            self.end_root(platform, state);
        }
        // A thread made from user space keeps its TCB, ended, with what a
        // restart in the same space needs (`supervision.rs`); any other
        // leaves everything now.
        let keeps = self.keeps_end(id, state);
        if !keeps {
            // The last thread in a space takes it down (see `leave_space`).
            self.leave_space(platform, id);
            self.leave_cspace(id);
            self.leave_buffer(id);
        }
        let thread = &mut self.objects[id];
        let priority = thread.priority;
        let was_ready = thread.state == ThreadState::Ready;
        thread.state = state;
        if was_ready {
            self.run_queue.remove(&mut self.objects, id, priority);
        }
        if self.fp_owner == Some(id) {
            self.fp_owner = None;
        }
        if self.last_ran == Some(id) {
            self.last_ran = None;
        }
        if self.current == Some(id) {
            self.current = None;
        }
        if !keeps {
            self.detach_filters(id);
        }
        self.unbind(id);
        if keeps {
            self.keep_ended(platform, id, end);
        } else {
            self.objects[id] = Thread::EMPTY;
        }
        // The root takes its CNode, TCB and VSpace with it (its record is
        // freed when this kernel entry ends).
        if is_root {
            self.root = None;
            for original in [
                KERNEL_ROOT_CNODE_SLOT,
                KERNEL_ROOT_TCB_SLOT,
                KERNEL_ROOT_VSPACE_SLOT,
            ] {
                self.delete_kernel_slot(platform, original);
            }
        }
    }

    /// Takes a waiting thread out of what it waits in (endpoint or
    /// notification queue; a server owing it a reply forgets it). Its state
    /// is left for the caller to set.
    fn cancel_wait(&mut self, id: ThreadId) {
        match self.objects[id].state {
            ThreadState::BlockedOnSend { endpoint, .. }
            | ThreadState::BlockedOnReceive { endpoint }
            | ThreadState::EndPending { endpoint, .. } => {
                if let Some(mut queue) = self.objects.get::<kind::Endpoint>(endpoint).copied() {
                    queue.remove(&mut self.objects, id);
                    if let Some(body) = self.objects.get_mut::<kind::Endpoint>(endpoint) {
                        *body = queue;
                    }
                }
            }
            ThreadState::BlockedOnNotification { notification } => {
                if let Some(mut state) = self
                    .objects
                    .get::<kind::Notification>(notification)
                    .copied()
                {
                    state.waiters.remove(&mut self.objects, id);
                    if let Some(body) = self.objects.get_mut::<kind::Notification>(notification) {
                        *body = state;
                    }
                }
            }
            ThreadState::BlockedOnAudit => {
                let mut queue = self.audit_waiters;
                queue.remove(&mut self.objects, id);
                self.audit_waiters = queue;
            }
            ThreadState::BlockedOnReply | ThreadState::BlockedOnFaultReply => {
                if let Some(server) = self.objects[id].reply_from.take() {
                    if self.objects[server].reply_to == Some(id) {
                        self.objects[server].reply_to = None;
                    }
                }
                self.forget_saved_reply(id);
            }
            _ => {}
        }
    }

    /// Takes a thread out of every IPC relationship: its endpoint queue,
    /// the server owing it a reply, the caller it owes one (which learns
    /// no reply will come).
    fn leave_ipc<P: Platform>(&mut self, platform: &mut P, id: ThreadId) {
        self.cancel_wait(id);
        if let Some(caller) = self.objects[id].reply_to.take() {
            self.objects[caller].reply_from = None;
            match self.objects[caller].state {
                ThreadState::BlockedOnReply => {
                    ipc::fail_waiter(&mut self.objects, caller, ErrorCode::ObjectDeleted);
                    self.make_ready(caller);
                }
                // Its policy server died before answering: closed.
                ThreadState::BlockedOnFaultReply
                    if self.objects[caller].pending_policy.is_some() =>
                {
                    ipc::fail_policy_request(&mut self.objects, caller);
                    self.make_ready(caller);
                }
                // Its tracer died holding a stop: it runs on (open).
                ThreadState::BlockedOnFaultReply
                    if self.objects[caller].pending_trace.is_some() =>
                {
                    if let Some(stop) = self.objects[caller].pending_trace.take() {
                        self.objects[caller].abandon_trace_stop(stop);
                    }
                    self.make_ready(caller);
                }
                // Its fault handler died: nobody can resume it sensibly.
                ThreadState::BlockedOnFaultReply => {
                    if let Some(report) = self.objects[caller].pending_fault {
                        self.end_thread(platform, caller, ThreadState::Faulted(report));
                    }
                }
                _ => {}
            }
        }
    }

    /// Ends any line a thread left open, so the kernel's next line starts
    /// at the beginning.
    fn end_user_lines<P: Platform>(&mut self, platform: &mut P) {
        if self.open_line.take().is_some() {
            platform.console_write("\n");
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

/// Exit-to-user work of the thread about to return to EL0.
struct ExitWork<'a> {
    work: &'a mut WorkFlags,
    reschedule: bool,
}

impl EntryHooks for ExitWork<'_> {
    type Regs = UserContext;

    fn policy(&mut self, _regs: &mut UserContext) -> PolicyDecision {
        PolicyDecision::Verdict(PolicyVerdict::Allow)
    }

    fn current_work(&mut self) -> WorkFlags {
        let mut work = *self.work;
        // Once a reschedule is decided, it is handled by the caller.
        if self.reschedule {
            work.remove(WorkFlags::NEED_RESCHED);
        }
        work
    }

    fn handle_need_resched(&mut self) {
        self.work.remove(WorkFlags::NEED_RESCHED);
        self.reschedule = true;
    }

    fn handle_notify_resume(&mut self) {
        self.work.remove(WorkFlags::NOTIFY_RESUME);
    }
}

/// The error code user space sees for an IPC failure.
fn ipc_error(error: IpcError) -> ErrorCode {
    match error {
        IpcError::WouldBlock => ErrorCode::WouldBlock,
        IpcError::NoReplyTarget => ErrorCode::NoReplyTarget,
    }
}
