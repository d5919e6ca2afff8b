//! The kernel's state and its response to each event from EL0.
//!
//! The kernel is event driven and never blocks on its stack: every entry
//! (syscall, fault, interrupt) updates the state here and returns a
//! `Resume` saying where the CPU goes next. The arch glue then returns to
//! that thread, idles, or ends the run.

use crate::address_space::{AddressSpace, SpaceError, USER_STACK_TOP};
use crate::boot_suite::{evaluate, Case, CaseObject, Ended, Mode, DEFAULT_PRIORITY};
use crate::cap::{CNodeId, CapError, Capability, Memory, ObjectId, Objects, SlotId};
use crate::fault::FaultReport;
use crate::frames::FrameAllocator;
use crate::ipc::message;
use crate::ipc::notification;
use crate::ipc::queue::EndpointQueue;
use crate::ipc::{self, Effects, IpcError, Next, SendKind};
use crate::platform::{Console, Platform};
use crate::scheduler::{Priority, RunQueue};
use crate::syscall::{self, Call, SyscallResult};
use crate::syscall::{CapOperation, IpcOperation, NotificationOperation};
use crate::thread::{Thread, ThreadId, ThreadName, ThreadState};
use abi::boot_program::{BootProgram, FuzzParameter, FUZZ_DONE, PARAMETER_SHIFT};
use abi::boot_program::{CNODE_SLOT, CONSOLE_SLOT};
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

/// Exit status of a run whose every test passed.
pub const EXIT_SUCCESS: u32 = 0;
/// Exit status of a run with a failed test.
pub const EXIT_TEST_FAILED: u32 = 1;
/// The status recorded for threads stopped because their case deadlocked.
pub const DEADLOCK_STATUS: i64 = -2;
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

/// Threads the kernel itself has made (boot-suite threads) that can be
/// alive at once: each has a block of slots in the kernel CNode for the
/// originals of its CNode, TCB and VSpace. Threads made from user space
/// have none and are limited only by memory.
pub const MAX_KERNEL_THREADS: usize = 32;
/// IrqHandler objects that can exist at once: one per case that asks for
/// an interrupt, the root's, and those `IrqControlGet` makes (each has its
/// record on a page of the kernel's pool). Past it, `OutOfResources`.
const MAX_IRQ_HANDLERS: usize = 64;
/// Radix of each boot-suite thread's CNode (16 slots) unless its case
/// asks for more (`Case::cnode_radix`).
const THREAD_CNODE_RADIX: u8 = 4;
/// Radix of the kernel's own CNode, which holds every object's original
/// capability: slot 0 the console, 1.. one per kernel thread's CNode,
/// then the current case's endpoints.
const KERNEL_CNODE_RADIX: u8 = 8;
const KERNEL_CONSOLE_SLOT: u64 = 0;
const KERNEL_THREAD_CNODE_SLOTS: u64 = 1;
const KERNEL_ENDPOINT_SLOTS: u64 = KERNEL_THREAD_CNODE_SLOTS + MAX_KERNEL_THREADS as u64;
/// Most endpoints (and, separately, notifications) one case may ask for.
const MAX_CASE_ENDPOINTS: u64 = 8;
const KERNEL_NOTIFICATION_SLOTS: u64 = KERNEL_ENDPOINT_SLOTS + MAX_CASE_ENDPOINTS;
const KERNEL_UNTYPED_SLOT: u64 = KERNEL_NOTIFICATION_SLOTS + MAX_CASE_ENDPOINTS;
const KERNEL_IRQ_SLOT: u64 = KERNEL_UNTYPED_SLOT + 1;
/// One TCB object's original capability per kernel thread.
const KERNEL_TCB_SLOTS: u64 = KERNEL_IRQ_SLOT + 1;
/// One VSpace object's original capability per kernel thread.
const KERNEL_VSPACE_SLOTS: u64 = KERNEL_TCB_SLOTS + MAX_KERNEL_THREADS as u64;
/// The originals of the Untypeds a root task is given
/// (`abi::bootinfo`), one per block of free RAM.
const KERNEL_ROOT_UNTYPED_SLOTS: u64 = KERNEL_VSPACE_SLOTS + MAX_KERNEL_THREADS as u64;
/// The original of the Frame capability to a root task's IPC buffer.
const KERNEL_ROOT_IPC_FRAME_SLOT: u64 = KERNEL_ROOT_UNTYPED_SLOTS + MAX_BOOT_UNTYPEDS as u64;
/// The original of a root task's IrqControl capability (made for each
/// root, deleted with everything it issued when the root's case ends).
const KERNEL_ROOT_IRQ_CONTROL_SLOT: u64 = KERNEL_ROOT_IPC_FRAME_SLOT + 1;
/// The originals of a root task's device Untypeds, one per block of the
/// device memory the kernel does not use.
const KERNEL_ROOT_DEVICE_UNTYPED_SLOTS: u64 = KERNEL_ROOT_IRQ_CONTROL_SLOT + 1;
const _: () = assert!(
    KERNEL_ROOT_DEVICE_UNTYPED_SLOTS + abi::bootinfo::MAX_BOOT_DEVICE_UNTYPEDS as u64
        <= 1 << KERNEL_CNODE_RADIX
);
/// Most threads one boot-suite case starts.
const MAX_CASE_THREADS: usize = 4;
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
    /// Everything has run: end the run with this status.
    Shutdown {
        /// 0 when every case passed.
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

/// Progress through the boot suite.
struct Session {
    mode: Mode,
    cases: &'static [Case],
    next_case: usize,
    live: heapless::Vec<ThreadId, MAX_CASE_THREADS>,
    ended: heapless::Vec<Ended, MAX_CASE_THREADS>,
    passed: u32,
    failed: u32,
    finished: bool,
    /// Bench mode: the run's `abi::bench::BenchParameter`, encoded.
    bench_parameter: u64,
    /// Bench mode: `BENCH` lines the programs printed.
    bench_results: u32,
    /// The running case's Untyped memory: first frame and page count.
    untyped: Option<(u64, u64)>,
    /// Every thread the kernel started for the running case has ended:
    /// the case is judged at the end of this kernel entry.
    case_over: bool,
    /// A root-task case: the blocks of free RAM its root was given, and
    /// whether its IPC buffer has a Frame capability to release.
    root: root_task::RootGrant,
    /// Cases started so far (the TAP number of the running one).
    started: usize,
    /// Fuzz mode: the run's seed, syscalls per thread per round, rounds
    /// still to start, and syscalls counted so far.
    fuzz: FuzzPlan,
}

/// How a fuzz run is divided into rounds.
#[derive(Clone, Copy, Debug, Default)]
pub struct FuzzPlan {
    seed: u32,
    calls_per_thread: u32,
    rounds: u32,
    rounds_started: u32,
    /// Syscalls counted so far: a lower bound of those issued (see
    /// `Kernel::finish_case`).
    syscalls: u64,
    /// The part of `syscalls` that is the kernel's own count for threads
    /// stopped early: their slow-path syscalls only.
    slow_path_only: u64,
    /// Invariant checks run at timer ticks while a round's threads run
    /// (the live-thread invariants: ready and queued, blocked and queued
    /// once, a reply owed by one), and the first one broken in this round.
    mid_round_checks: u64,
}

impl FuzzPlan {
    /// Most syscalls one fuzzer thread makes in one round: rounds are what
    /// the invariants are checked between.
    pub const CALLS_PER_THREAD: u32 = 5_000;
    /// Fuzzer threads per round.
    pub const THREADS: u32 = 3;

    /// `calls` syscalls in all from `seed`.
    pub fn new(seed: u32, calls: u64) -> FuzzPlan {
        let per_round = u64::from(Self::CALLS_PER_THREAD * Self::THREADS);
        FuzzPlan {
            seed,
            calls_per_thread: Self::CALLS_PER_THREAD
                .min(calls.div_ceil(u64::from(Self::THREADS)).max(1) as u32),
            rounds: calls.div_ceil(per_round).clamp(1, u64::from(u32::MAX)) as u32,
            rounds_started: 0,
            syscalls: 0,
            slow_path_only: 0,
            mid_round_checks: 0,
        }
    }

    /// The seed of round `round` (derived, so every round differs).
    fn round_seed(&self, round: u32) -> u32 {
        self.seed
            .wrapping_mul(0x9e37_79b9)
            .wrapping_add(round.wrapping_mul(0x85eb_ca6b))
            ^ self.seed
    }
}

/// The whole kernel state.
///
/// `repr(C)`, small and hot fields first: the kernel lives in one static,
/// and fields past the reach of an immediate offset cost an extra
/// instruction on every access (the IPC and syscall paths read `current`,
/// the FP/TPIDR owners and the session on every entry).
#[repr(C)]
pub struct Kernel {
    current: Option<ThreadId>,
    /// The thread that ran last: its space's ASID may be live in TTBR0.
    last_ran: Option<ThreadId>,
    /// The thread whose FP/SIMD registers are in the CPU.
    fp_owner: Option<ThreadId>,
    /// EL0 may use FP/SIMD without trapping (the current thread owns it).
    fp_access: bool,
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
    init_elf: &'static [u8],
    /// The kernel's command line, passed on to the root task.
    command_line: heapless::Vec<u8, { abi::bootinfo::MAX_COMMAND_LINE }>,
    /// The device memory the kernel does not use, handed to the root task
    /// as device Untypeds.
    device_memory: heapless::Vec<arch::boards::PhysRange, { arch::boards::MAX_DEVICE_RANGES }>,
    session: Session,
    run_queue: RunQueue,
    /// Every capability and kernel object (threads included), in the
    /// memory that paid for it.
    objects: Objects,
    /// Lossless audited threads waiting for room in their ring (linked
    /// through `Thread::queue_links`): what the tick looks at.
    audit_waiters: EndpointQueue,
    /// The IrqHandler objects there are (only the kernel makes them: for
    /// a case, or through `IrqControlGet`), at most one per interrupt, for
    /// an interrupt to find its handler.
    irq_handlers: heapless::Vec<ObjectId, MAX_IRQ_HANDLERS>,
    /// Which of the `MAX_KERNEL_THREADS` blocks of kernel CNode slots a
    /// kernel-made thread holds (bit `i`: block `i`).
    kernel_thread_blocks: u32,
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
            kernel_thread_blocks: 0,
            current: None,
            last_ran: None,
            fp_owner: None,
            fp_access: true,
            frames: FrameAllocator::new(),
            asids: AsidAllocator::new(AsidBits::Eight),
            init_elf: &[],
            command_line: heapless::Vec::new(),
            device_memory: heapless::Vec::new(),
            session: Session {
                mode: Mode::Demo,
                cases: &[],
                next_case: 0,
                live: heapless::Vec::new(),
                ended: heapless::Vec::new(),
                passed: 0,
                failed: 0,
                finished: false,
                bench_parameter: 0,
                bench_results: 0,
                untyped: None,
                case_over: false,
                root: root_task::RootGrant::NONE,
                started: 0,
                fuzz: FuzzPlan {
                    seed: 0,
                    calls_per_thread: 0,
                    rounds: 0,
                    rounds_started: 0,
                    syscalls: 0,
                    slow_path_only: 0,
                    mid_round_checks: 0,
                },
            },
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

    /// Fuzz mode: how many syscalls from which seed. Call before `start`.
    pub fn set_fuzz_plan(&mut self, plan: FuzzPlan) {
        self.session.fuzz = plan;
    }

    /// Bench mode: the parameter handed to the benchmark programs (see
    /// `abi::bench::BenchParameter::encode`). Call before `start`.
    pub fn set_bench_parameter(&mut self, encoded: u64) {
        self.session.bench_parameter = encoded;
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

    /// Takes over RAM and the init program, and starts the boot suite.
    ///
    /// RAM is given beforehand through `frames_mut` (the allocator is too
    /// large to build on the kernel stack and move in).
    pub fn start<P: Platform>(
        &mut self,
        platform: &mut P,
        asid_bits: AsidBits,
        init_elf: &'static [u8],
        mode: Mode,
    ) -> Resume {
        self.asids = AsidAllocator::new(asid_bits);
        self.init_elf = init_elf;
        if let Err(error) = self.create_kernel_objects() {
            let _ = writeln!(
                Console(platform),
                "[kernel] cannot create the kernel's objects: {error:?}"
            );
            self.session.finished = true;
            self.session.failed += 1;
            return Resume::Shutdown {
                status: EXIT_TEST_FAILED,
            };
        }
        self.session.mode = mode;
        self.session.cases = mode.cases();
        let plan = match mode {
            Mode::Test => Some(self.session.cases.len()),
            Mode::Fuzz => Some(self.session.fuzz.rounds as usize),
            _ => None,
        };
        if let Some(plan) = plan {
            let _ = write!(Console(platform), "TAP version 13\n1..{plan}\n");
        }
        if mode == Mode::Fuzz {
            // The live-thread invariants, at every tick while threads run.
            #[cfg(feature = "test-calls")]
            {
                self.tick_checks.on = true;
            }
            let fuzz = self.session.fuzz;
            let _ = writeln!(
                Console(platform),
                "# fuzz: seed {:#x}, {} rounds of {} threads x {} syscalls",
                fuzz.seed,
                fuzz.rounds,
                FuzzPlan::THREADS,
                fuzz.calls_per_thread
            );
        }
        self.start_next_case(platform);
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
    /// CNode and the console): all that stays allocated once every case
    /// is over.
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
    /// (as a TAP diagnostic in test mode, so it can never read as a result).
    /// Lines of different threads never share a console line.
    #[inline(never)]
    fn print_user_text<P: Platform>(&mut self, platform: &mut P, id: ThreadId, text: &[u8]) {
        let test_mode = matches!(self.session.mode, Mode::Test | Mode::Fuzz);
        if self.open_line.is_some_and(|writer| writer != id) {
            self.end_user_lines(platform);
        }
        let continuing = self.open_line == Some(id);
        if self.session.mode == Mode::Bench {
            // The benchmark programs speak the runner's line protocol
            // themselves: no prefix, and the kernel counts their results.
            if !continuing && text.starts_with(b"BENCH ") {
                self.session.bench_results += 1;
            }
            self.open_line = (text.last() != Some(&b'\n')).then_some(id);
            if let Ok(text) = core::str::from_utf8(text) {
                platform.console_write(text);
            }
            return;
        }
        // The root task's lines are the system's own (its driver's TAP or
        // demo steps): as they are.
        let tagged = self.session.mode != Mode::Root || self.session.live.first() != Some(&id);
        let thread = &self.objects[id];
        let mut console = Console(platform);
        let mut line_open = continuing;
        for &byte in text {
            if !line_open && !tagged {
                line_open = true;
            }
            if !line_open {
                if test_mode {
                    let _ = console.write_str("# ");
                }
                let _ = write!(console, "[{}#{}] ", thread.name.as_str(), thread.number);
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
        let prefix = if matches!(self.session.mode, Mode::Test | Mode::Fuzz) {
            "# "
        } else {
            ""
        };
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
                "{prefix}[kernel] thread {name}#{number} {reason} (in {syscall})"
            );
        } else {
            let _ = writeln!(console, "{prefix}[kernel] thread {name}#{number} {reason}");
        }
    }

    /// A fault of thread `id`: its report goes to its fault endpoint (the
    /// thread waits for the handler's reply), or the thread stops.
    fn report_fault<P: Platform>(&mut self, platform: &mut P, id: ThreadId, report: FaultReport) {
        let test_mode = matches!(self.session.mode, Mode::Test | Mode::Fuzz);
        self.end_user_lines(platform);
        let handler = self.objects[id]
            .fault_endpoint
            .and_then(|(e, badge)| Some((self.objects.resolve(e, CapType::Endpoint)?, badge)));
        let thread = &mut self.objects[id];
        let mut console = Console(platform);
        let prefix = if test_mode { "# " } else { "" };
        if let Some((endpoint, badge)) = handler {
            let _ = writeln!(
                console,
                "{prefix}[kernel] thread {}#{} faulted: {report}; sent to its fault handler",
                thread.name, thread.number
            );
            thread.pending_fault = Some(report);
            self.send_on_behalf(platform, id, endpoint, badge);
            return;
        }
        let _ = writeln!(
            console,
            "{prefix}[kernel] thread {}#{} stopped: {report}",
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
    /// sent, an audit waiter woken, a deadlock broken. Each of those uses
    /// something up (a stopped call, an owed stop, a blocked thread), so
    /// the loop ends; `MAX_RESUME_ROUNDS` makes sure of it: past it the CPU
    /// idles until the next interrupt and the kernel looks again.
    fn resume<P: Platform>(&mut self, platform: &mut P) -> Resume {
        // Most kernel entries end with the thread that made them, or the
        // one an IPC switched to, going back as it is: no exit work, no
        // answered call, nothing to free or judge. One look at it then.
        if let Some(current) = self.current {
            if !self.session.case_over && !self.objects.has_retired() {
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
        let quick = if self.current.is_none() && !self.session.case_over {
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
            // A case whose threads have all ended is judged and followed
            // by the next one here, where the kernel holds no id of what
            // the case made.
            if self.session.case_over {
                self.next_case(platform);
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
                    None if self.session.finished => {
                        return Resume::Shutdown {
                            status: self.session.exit_status(),
                        }
                    }
                    // Nothing ready, but an audit ring may have room by now
                    // (the server drained it and went to sleep).
                    None if self.wake_audit_waiters(platform) => continue,
                    // Under the root task, waiting for an interrupt that may
                    // never come is the root's to time out.
                    None if self.session.mode != Mode::Root && self.case_is_deadlocked() => {
                        self.break_deadlock(platform);
                        continue;
                    }
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

    /// Nothing can run and every thread of the running case waits in IPC
    /// for something no thread and no interrupt can bring: nothing will
    /// ever wake them.
    #[cold]
    #[inline(never)]
    fn case_is_deadlocked(&self) -> bool {
        !self.session.live.is_empty()
            && self
                .session
                .live
                .iter()
                .all(|id| match self.objects[*id].state {
                    // A receive also ends when the thread's bound
                    // notification is signalled (a timed receive: the
                    // timer's IrqHandler feeds it).
                    ThreadState::BlockedOnReceive { .. } => self.objects[*id]
                        .bound_notification
                        .is_none_or(|n| !self.fed_by_interrupt(n)),
                    ThreadState::BlockedOnSend { .. }
                    | ThreadState::BlockedOnReply
                    | ThreadState::BlockedOnFaultReply
                    | ThreadState::Suspended
                    // Only a running thread can make room in the ring.
                    | ThreadState::BlockedOnAudit => true,
                    ThreadState::BlockedOnNotification { notification } => {
                        !self.fed_by_interrupt(notification)
                    }
                    _ => false,
                })
    }

    /// Can an interrupt still signal `notification` (an IrqHandler is
    /// bound to it)?
    fn fed_by_interrupt(&self, notification: ObjectId) -> bool {
        self.irq_handlers.iter().any(|&h| {
            self.objects
                .get::<kind::IrqHandler>(h)
                .and_then(|h| h.notification)
                .is_some_and(|(n, _)| n.id == notification)
        })
    }

    /// Ends every thread of a deadlocked case (status `DEADLOCK_STATUS`),
    /// which fails the case instead of hanging the run.
    #[cold]
    #[inline(never)]
    fn break_deadlock<P: Platform>(&mut self, platform: &mut P) {
        let prefix = if matches!(self.session.mode, Mode::Test | Mode::Fuzz) {
            "# "
        } else {
            ""
        };
        let _ = writeln!(
            Console(platform),
            "{prefix}[kernel] deadlock: every thread of the case waits in IPC; stopping them"
        );
        // Ending one thread can end others (a caller owed a reply): skip
        // threads already gone.
        let live = self.session.live.clone();
        for id in live {
            if self.session.live.contains(&id) {
                self.end_thread(platform, id, ThreadState::Exited(DEADLOCK_STATUS));
            }
        }
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

    /// Ends a thread: frees its memory, takes it off the CPU and the run
    /// queue, and tells the boot suite.
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
        self.end_root(platform, id);
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
        let ended = Ended {
            state,
            stats: thread.stats.counts(),
            name: thread.name,
            number: thread.number,
        };
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
        let blocks = self.objects[id].kernel_slots;
        if keeps {
            self.keep_ended(platform, id, end);
        } else {
            self.objects[id] = Thread::EMPTY;
        }
        // A thread the kernel made takes its CNode, TCB and VSpace with
        // it (its record is freed when this kernel entry ends).
        if let Some(block) = blocks {
            self.delete_kernel_slot(platform, KERNEL_THREAD_CNODE_SLOTS + u64::from(block));
            self.delete_kernel_slot(platform, KERNEL_TCB_SLOTS + u64::from(block));
            self.delete_kernel_slot(platform, KERNEL_VSPACE_SLOTS + u64::from(block));
            self.kernel_thread_blocks &= !(1 << block);
        }
        if let Some(position) = self.session.live.iter().position(|&t| t == id) {
            self.session.live.swap_remove(position);
            let _ = self.session.ended.push(ended);
            if self.session.live.is_empty() {
                // Judged, released and followed by the next case once this
                // kernel entry is over (`Kernel::resume`): code up the
                // stack may still hold ids of what the case made.
                self.session.case_over = true;
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

    /// The running case is over: its records are freed, it is judged and
    /// released, and the next case starts.
    #[cold]
    #[inline(never)]
    fn next_case<P: Platform>(&mut self, platform: &mut P) {
        self.session.case_over = false;
        self.reap();
        self.finish_case(platform);
        self.start_next_case(platform);
    }

    fn finish_case<P: Platform>(&mut self, platform: &mut P) {
        let number = self.session.started;
        let Some(case) = self
            .session
            .cases
            .get(self.session.next_case.wrapping_sub(1))
        else {
            return;
        };
        let mut verdict = evaluate(case.expect, &self.session.ended);
        // A fuzzer that finishes exits with the number of syscalls it made
        // (exact). For one stopped early (Exit, deadlock) only the kernel's
        // count is known, and it sees the slow path only: the inline `Null`
        // path and the IPC fast path do not count, to stay short. So the
        // total is a lower bound, and is printed as one.
        let (mut exact, mut slow_path_only) = (0u64, 0u64);
        for ended in &self.session.ended {
            match ended.state {
                ThreadState::Exited(status) if status & !0xffff_ffff == FUZZ_DONE => {
                    exact += (status & 0xffff_ffff) as u64
                }
                _ => slow_path_only += ended.stats.map_or(0, |s| s.syscalls),
            }
        }
        let syscalls = exact + slow_path_only;
        if verdict.is_err() {
            // How each thread ended, to tell which check failed.
            self.end_user_lines(platform);
            for ended in &self.session.ended {
                let _ = writeln!(
                    Console(platform),
                    "# {}#{} ended: {:?}",
                    ended.name,
                    ended.number,
                    ended.state
                );
            }
        }
        self.session.ended.clear();
        self.release_case_objects(platform, case);
        // Threads made from user space came from the case's Untyped: its
        // release ended them. None may be left for the next case.
        if verdict.is_ok() {
            verdict = self.check_no_threads_left();
        }
        if self.session.mode == Mode::Fuzz {
            self.session.fuzz.syscalls += syscalls;
            self.session.fuzz.slow_path_only += slow_path_only;
            if verdict.is_ok() {
                verdict = self.check_invariants();
            }
            // The checks made at timer ticks while its threads ran.
            #[cfg(feature = "test-calls")]
            {
                let ticks = core::mem::take(&mut self.tick_checks);
                self.tick_checks.on = ticks.on;
                self.session.fuzz.mid_round_checks += ticks.made;
                if let Some(broken) = ticks.broken {
                    if verdict.is_ok() {
                        verdict = Err(broken);
                    }
                }
            }
            let bound = if slow_path_only > 0 { "at least " } else { "" };
            let mut name: heapless::String<96> = heapless::String::new();
            let _ = write!(
                name,
                "fuzz round {} (seed {:#x}): {bound}{syscalls} syscalls, invariants hold",
                self.session.fuzz.rounds_started,
                self.session
                    .fuzz
                    .round_seed(self.session.fuzz.rounds_started.saturating_sub(1))
            );
            self.report(platform, number, &name, verdict);
            return;
        }
        self.report(platform, number, case.name, verdict);
    }

    /// Deletes the kernel objects `case` was given (endpoints,
    /// notifications, its Untyped and IrqHandler) and frees the Untyped's
    /// RAM, so the next case starts with none of them.
    fn release_case_objects<P: Platform>(&mut self, platform: &mut P, case: &Case) {
        for endpoint in 0..u64::from(case.endpoints) {
            self.delete_kernel_slot(platform, KERNEL_ENDPOINT_SLOTS + endpoint);
        }
        for notification in 0..u64::from(case.notifications) {
            self.delete_kernel_slot(platform, KERNEL_NOTIFICATION_SLOTS + notification);
        }
        self.delete_kernel_slot(platform, KERNEL_UNTYPED_SLOT);
        self.delete_kernel_slot(platform, KERNEL_IRQ_SLOT);
        self.release_root_grant(platform);
        // The records in the case's Untyped go before its RAM does.
        self.reap();
        if let Some((base, pages)) = self.session.untyped.take() {
            self.frames.give_back(arch::boards::PhysRange {
                start: base,
                size: pages * arch::layout::PAGE_SIZE,
            });
        }
    }

    fn report<P: Platform>(
        &mut self,
        platform: &mut P,
        number: usize,
        name: &str,
        verdict: Result<(), &str>,
    ) {
        self.end_user_lines(platform);
        let mode = self.session.mode;
        let mut console = Console(platform);
        match (verdict, mode) {
            (Ok(()), Mode::Test | Mode::Fuzz) => {
                let _ = writeln!(console, "ok {number} - {name}");
            }
            (Err(reason), Mode::Test | Mode::Fuzz) => {
                let _ = writeln!(console, "not ok {number} - {name}\n# {reason}");
            }
            (Ok(()), Mode::Demo | Mode::Bench) => {
                let _ = writeln!(console, "[kernel] done: {name}");
            }
            (Err(reason), Mode::Demo | Mode::Bench) => {
                let _ = writeln!(console, "[kernel] unexpected: {name}: {reason}");
            }
            // The root task reports on what it ran itself.
            (Ok(()), Mode::Root) => {}
            (Err(reason), Mode::Root) => {
                let _ = writeln!(console, "[kernel] the root task ended: {reason}");
            }
        }
        match verdict {
            Ok(()) => self.session.passed += 1,
            Err(_) => self.session.failed += 1,
        }
    }

    /// Ends any line a thread left open, so the kernel's next line starts
    /// at the beginning (TAP results must).
    fn end_user_lines<P: Platform>(&mut self, platform: &mut P) {
        if self.open_line.take().is_some() {
            platform.console_write("\n");
        }
    }

    /// Starts the next case that can be started; marks the session
    /// finished (and prints the summary) when none is left.
    fn start_next_case<P: Platform>(&mut self, platform: &mut P) {
        loop {
            // Fuzz mode runs its one case once per round.
            let fuzz = &mut self.session.fuzz;
            if self.session.mode == Mode::Fuzz
                && self.session.next_case >= self.session.cases.len()
                && fuzz.rounds_started < fuzz.rounds
            {
                self.session.next_case = 0;
            }
            let Some(case) = self.session.cases.get(self.session.next_case).copied() else {
                break;
            };
            self.session.next_case += 1;
            self.session.started += 1;
            if matches!(self.session.mode, Mode::Demo | Mode::Bench) {
                let _ = writeln!(Console(platform), "[kernel] next: {}", case.name);
            }
            let parameter = match self.session.mode {
                Mode::Bench => self.session.bench_parameter << PARAMETER_SHIFT,
                Mode::Fuzz => {
                    let fuzz = &mut self.session.fuzz;
                    let round = fuzz.rounds_started;
                    fuzz.rounds_started += 1;
                    let parameter = FuzzParameter {
                        index: 0,
                        seed: fuzz.round_seed(round),
                        calls: fuzz.calls_per_thread,
                    };
                    parameter.encode() << PARAMETER_SHIFT
                }
                _ => 0,
            };
            let mut failure = self.create_case_endpoints(&case).err();
            for (index, &selector) in case.threads.iter().enumerate() {
                let selector = selector | parameter;
                let priority = case
                    .priorities
                    .get(index)
                    .copied()
                    .unwrap_or(DEFAULT_PRIORITY);
                let radix = case.cnode_radix.unwrap_or(THREAD_CNODE_RADIX);
                // A root task also gets a copy of its ELF file.
                let with_image = case.root_task && index == 0;
                match self.spawn(platform, selector, priority, radix, with_image) {
                    Ok(id) => {
                        let _ = self.session.live.push(id);
                    }
                    Err(reason) => failure = Some(reason),
                }
            }
            if failure.is_none() {
                failure = self.install_grants(&case).err();
            }
            if failure.is_none() {
                failure = self.set_fault_endpoints(&case).err();
            }
            if failure.is_none() {
                failure = self.hand_over_endpoint(&case).err();
            }
            if failure.is_none() && case.root_task {
                failure = self.hand_over_to_root(platform, &case).err();
            }
            match failure {
                None => return,
                Some(reason) => {
                    // Stop what did start; the case has failed.
                    let started: heapless::Vec<ThreadId, MAX_CASE_THREADS> =
                        self.session.live.clone();
                    self.session.live.clear();
                    for id in started {
                        self.end_thread(platform, id, ThreadState::Exited(-1));
                    }
                    self.session.ended.clear();
                    // And what the kernel made for it, as `finish_case`
                    // does, or the next case finds its slots taken.
                    self.release_case_objects(platform, &case);
                    let number = self.session.started;
                    self.report(platform, number, case.name, Err(reason));
                }
            }
        }
        self.session.finished = true;
        self.end_user_lines(platform);
        let (passed, failed) = (self.session.passed, self.session.failed);
        let mut console = Console(platform);
        match self.session.mode {
            Mode::Test => {
                let _ = writeln!(console, "# portcullis: {passed} passed, {failed} failed");
            }
            Mode::Fuzz => {
                let fuzz = self.session.fuzz;
                let _ = writeln!(
                    console,
                    "# fuzz: seed {:#x}, {}{} syscalls issued ({} of them the kernel's slow-path count for threads stopped early), 0 kernel panics, {failed} rounds with broken invariants ({} checks while threads ran)",
                    fuzz.seed,
                    if fuzz.slow_path_only > 0 { "at least " } else { "" },
                    fuzz.syscalls,
                    fuzz.slow_path_only,
                    fuzz.mid_round_checks
                );
                let _ = writeln!(console, "# portcullis: {passed} passed, {failed} failed");
            }
            Mode::Demo => {
                let _ = writeln!(
                    console,
                    "[kernel] demo finished: {passed} of {} steps behaved as expected",
                    passed + failed
                );
            }
            Mode::Bench => {
                let _ = writeln!(
                    console,
                    "# portcullis-bench: {} results",
                    self.session.bench_results
                );
            }
            Mode::Root => {}
        }
    }

    fn create_case_endpoints(&mut self, case: &Case) -> Result<(), &'static str> {
        if u64::from(case.endpoints) > MAX_CASE_ENDPOINTS
            || u64::from(case.notifications) > MAX_CASE_ENDPOINTS
        {
            return Err("the case asks for too many objects");
        }
        if let Some(intid) = case.irq {
            if self.irq_handlers.is_full() {
                return Err("too many IrqHandlers");
            }
            if self.irq_handler_of(intid).is_some() {
                return Err("the case's interrupt has an IrqHandler already");
            }
            let object = self
                .create_original(CapType::IrqHandler, 0, 0, KERNEL_IRQ_SLOT)
                .map_err(|_| "cannot make the case's IrqHandler")?;
            if let Some(body) = self.objects.get_mut::<kind::IrqHandler>(object) {
                body.intid = Some(intid);
            }
            let _ = self.irq_handlers.push(object);
        }
        if case.untyped_pages > 0 {
            let pages = u64::from(case.untyped_pages);
            let base = self
                .frames
                .allocate_contiguous(pages)
                .ok_or("no contiguous RAM for the case's Untyped")?;
            self.session.untyped = Some((base, pages));
            let bytes = pages * arch::layout::PAGE_SIZE;
            self.create_original(CapType::Untyped, base, bytes, KERNEL_UNTYPED_SLOT)
                .map_err(|_| "cannot make the case's Untyped")?;
        }
        for notification in 0..u64::from(case.notifications) {
            let slot = KERNEL_NOTIFICATION_SLOTS + notification;
            self.create_original(CapType::Notification, 0, 0, slot)
                .map_err(|_| "cannot make a notification of the case")?;
        }
        for endpoint in 0..u64::from(case.endpoints) {
            let slot = KERNEL_ENDPOINT_SLOTS + endpoint;
            self.create_original(CapType::Endpoint, 0, 0, slot)
                .map_err(|_| "cannot make an endpoint of the case")?;
        }
        Ok(())
    }

    /// Mints each grant of the case from the endpoint's original.
    fn install_grants(&mut self, case: &Case) -> Result<(), &'static str> {
        for grant in case.grants {
            let thread = self
                .session
                .live
                .get(usize::from(grant.thread))
                .copied()
                .ok_or("a grant names a thread the case does not have")?;
            let cnode = self.objects[thread]
                .cspace
                .ok_or("the thread has no CSpace")?;
            let index = match grant.object {
                CaseObject::Endpoint(i) => KERNEL_ENDPOINT_SLOTS + u64::from(i),
                CaseObject::Notification(i) => KERNEL_NOTIFICATION_SLOTS + u64::from(i),
                CaseObject::Untyped => KERNEL_UNTYPED_SLOT,
                CaseObject::Irq => KERNEL_IRQ_SLOT,
                CaseObject::Tcb(i) => {
                    let owner = self
                        .session
                        .live
                        .get(usize::from(i))
                        .ok_or("a TCB grant names a thread the case does not have")?;
                    KERNEL_TCB_SLOTS + u64::from(self.kernel_block(*owner)?)
                }
                CaseObject::VSpace(i) => {
                    let owner = self
                        .session
                        .live
                        .get(usize::from(i))
                        .ok_or("a VSpace grant names a thread the case does not have")?;
                    KERNEL_VSPACE_SLOTS + u64::from(self.kernel_block(*owner)?)
                }
            };
            let source = self
                .kernel_slot(index)
                .map_err(|_| "a grant names an object the case does not have")?;
            let target = self
                .objects
                .slot(cnode, grant.slot)
                .map_err(|_| "a grant's slot is outside the CNode")?;
            let badge = (grant.badge != 0).then_some(grant.badge);
            self.objects
                .mint(source, target, grant.rights, badge)
                .map_err(|_| "minting a granted capability failed")?;
        }
        Ok(())
    }

    /// Gives the case's threads that have one their fault endpoint.
    fn set_fault_endpoints(&mut self, case: &Case) -> Result<(), &'static str> {
        for &(thread, endpoint) in case.fault_endpoints {
            let id = self
                .session
                .live
                .get(usize::from(thread))
                .copied()
                .ok_or("a fault endpoint names a thread the case does not have")?;
            let slot = self
                .kernel_slot(KERNEL_ENDPOINT_SLOTS + u64::from(endpoint))
                .map_err(|_| "a fault endpoint names an endpoint the case does not have")?;
            let cap = self
                .objects
                .lookup(slot)
                .map_err(|_| "the fault endpoint does not exist")?;
            let reference = self
                .objects
                .reference(cap.object())
                .ok_or("the fault endpoint does not exist")?;
            self.objects[id].fault_endpoint = Some((reference, 0));
        }
        Ok(())
    }

    /// Moves the case's first endpoint's original capability to the
    /// thread the case names as its owner.
    fn hand_over_endpoint(&mut self, case: &Case) -> Result<(), &'static str> {
        let Some((thread, slot)) = case.endpoint_owner else {
            return Ok(());
        };
        let owner = self
            .session
            .live
            .get(usize::from(thread))
            .copied()
            .ok_or("the endpoint owner is not a thread of the case")?;
        let cnode = self.objects[owner]
            .cspace
            .ok_or("the owner has no CSpace")?;
        let source = self
            .kernel_slot(KERNEL_ENDPOINT_SLOTS)
            .map_err(|_| "the case has no endpoint")?;
        let target = self
            .objects
            .slot(cnode, slot)
            .map_err(|_| "the owner's slot is outside its CNode")?;
        self.objects
            .move_cap(source, target)
            .map_err(|_| "moving the endpoint to its owner failed")
    }

    /// The block of kernel CNode slots of kernel-made thread `thread`.
    fn kernel_block(&self, thread: ThreadId) -> Result<u16, &'static str> {
        self.objects
            .thread(thread)
            .and_then(|t| t.kernel_slots)
            .ok_or("the thread is not one the kernel made")
    }

    /// A free block of kernel CNode slots for a thread the kernel makes.
    fn take_kernel_block(&mut self) -> Option<u16> {
        let free = !self.kernel_thread_blocks;
        let block = free.trailing_zeros();
        if block as usize >= MAX_KERNEL_THREADS {
            return None;
        }
        self.kernel_thread_blocks |= 1 << block;
        Some(block as u16)
    }

    /// A new thread number (the identifier threads are told apart by in
    /// console lines, policy requests, trace stops and audit records).
    fn next_thread_number(&mut self) -> u32 {
        let number = self.thread_numbers;
        self.thread_numbers = self.thread_numbers.wrapping_add(1);
        number
    }

    /// Gives a new thread its CSpace: a CNode of `2^radix` slots whose
    /// original capability stays in the kernel CNode (block `block`), a
    /// copy of it in slot 0, and the console in slot 1.
    fn create_cspace(&mut self, block: u16, radix: u8) -> Result<CNodeId, CapError> {
        let original = self.kernel_slot(KERNEL_THREAD_CNODE_SLOTS + u64::from(block))?;
        self.objects.check_empty(original)?;
        let cnode = self.kernel_cnode(radix)?;
        self.objects.install_original(
            original,
            Capability::new(CapType::CNode, Rights::READ_WRITE, cnode.object()),
        )?;
        self.objects
            .copy(original, self.objects.slot(cnode, CNODE_SLOT)?)?;
        let console = self.kernel_slot(KERNEL_CONSOLE_SLOT)?;
        self.objects.mint(
            console,
            self.objects.slot(cnode, CONSOLE_SLOT)?,
            Rights::WRITE,
            None,
        )?;
        Ok(cnode)
    }

    /// Makes the VSpace object that stands for a kernel-made address
    /// space (its root table at `root`); its original capability stays in
    /// kernel CNode slot `index` until its owner ends.
    fn create_vspace(&mut self, index: u64, root: u64) -> Result<ObjectId, CapError> {
        self.create_original(CapType::VSpace, root, arch::layout::PAGE_SIZE, index)
    }

    /// Loads init with `selector` into a new address space and makes it
    /// ready.
    fn spawn<P: Platform>(
        &mut self,
        platform: &mut P,
        selector: u64,
        priority: Priority,
        cnode_radix: u8,
        with_image: bool,
    ) -> Result<ThreadId, &'static str> {
        let block = self
            .take_kernel_block()
            .ok_or("too many kernel-made threads")?;
        let result = self.spawn_in(platform, block, selector, priority, cnode_radix, with_image);
        if result.is_err() {
            // Whatever was made goes (deleting an empty slot does nothing).
            for first in [
                KERNEL_THREAD_CNODE_SLOTS,
                KERNEL_TCB_SLOTS,
                KERNEL_VSPACE_SLOTS,
            ] {
                self.delete_kernel_slot(platform, first + u64::from(block));
            }
            self.kernel_thread_blocks &= !(1 << block);
        }
        result
    }

    /// `spawn`'s work, in kernel CNode block `block`.
    fn spawn_in<P: Platform>(
        &mut self,
        platform: &mut P,
        block: u16,
        selector: u64,
        priority: Priority,
        cnode_radix: u8,
        with_image: bool,
    ) -> Result<ThreadId, &'static str> {
        let cspace = self
            .create_cspace(block, cnode_radix)
            .map_err(|_| "no room for the thread's CSpace")?;
        let tcb = self
            .create_original(CapType::Tcb, 0, 0, KERNEL_TCB_SLOTS + u64::from(block))
            .map_err(|_| "no room for the thread's TCB object")?;
        let id = ThreadId::of(tcb);
        let (space, entry) = self
            .load_init_space(platform, with_image)
            .map_err(|e| match e {
                SpaceError::Elf(_) => "the init ELF is not loadable",
                SpaceError::Map(_) => "mapping the init ELF failed",
                SpaceError::OutOfMemory => "out of memory for a new address space",
            })?;
        let vspace = match self.create_vspace(KERNEL_VSPACE_SLOTS + u64::from(block), space.root())
        {
            Ok(vspace) => vspace,
            Err(_) => {
                space.release(platform, &mut self.frames);
                return Err("no room for the thread's VSpace object");
            }
        };
        let ipc_buffer = space.ipc_buffer();
        if !self.install_space(platform, vspace, space) {
            return Err("the thread's VSpace object cannot hold its space");
        }
        let name = BootProgram::decode(selector).map_or("init", |(program, _)| program.name());
        let number = self.next_thread_number();
        let thread = &mut self.objects[id];
        thread.kernel_slots = Some(block);
        thread.number = number;
        thread.mcp = priority;
        thread.context = UserContext::new_user(entry, USER_STACK_TOP, selector)
            .with_thread_pointer(abi::IPC_BUFFER_ADDRESS);
        thread.state = ThreadState::Ready;
        thread.name = ThreadName::from_static(name);
        thread.ipc_buffer = Some(ipc_buffer);
        thread.priority = priority;
        self.set_cspace(id, cspace)
            .map_err(|_| "the thread's CSpace is gone")?;
        self.bind_space(id, vspace);
        self.run_queue.enqueue(&mut self.objects, id, priority);
        Ok(id)
    }

    /// A fresh address space (a new ASID) with the embedded init ELF
    /// loaded, for a thread the kernel starts.
    fn load_init_space<P: Platform>(
        &mut self,
        platform: &mut P,
        with_image: bool,
    ) -> Result<(AddressSpace, u64), SpaceError> {
        let live = self.live_asid();
        let assignment = self.asids.assign(None, live);
        if assignment.flush_all {
            platform.flush_tlb_all();
        }
        let file_at = with_image.then_some(abi::bootinfo::ROOT_IMAGE_ADDRESS);
        AddressSpace::load_with_file(
            platform,
            &mut self.frames,
            assignment.asid,
            self.init_elf,
            file_at,
        )
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

impl Session {
    fn exit_status(&self) -> u32 {
        if self.failed == 0 {
            EXIT_SUCCESS
        } else {
            EXIT_TEST_FAILED
        }
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
