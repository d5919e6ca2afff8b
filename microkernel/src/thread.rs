//! Threads: saved registers, state, and what the kernel counts about them.

use crate::address_space::AddressSpace;
use crate::fault::FaultReport;
use crate::scheduler::Priority;
use arch::context::{FpState, UserContext};
use entry::WorkFlags;

/// Most threads alive at once.
pub const MAX_THREADS: usize = 32;

/// A thread's index in the thread table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub u16);

impl ThreadId {
    /// The table index.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// Where a thread is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// The slot is unused.
    Free,
    /// Waiting in the run queue.
    Ready,
    /// On the CPU (or about to return to it).
    Running,
    /// Ended through the exit syscall with this status.
    Exited(i64),
    /// Stopped by a fault it caused.
    Faulted(FaultReport),
}

impl ThreadState {
    /// Has the thread ended (exit or fault)?
    pub fn has_ended(self) -> bool {
        matches!(self, ThreadState::Exited(_) | ThreadState::Faulted(_))
    }
}

/// What the kernel counts per thread (for tests and the demo).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    /// Syscalls made.
    pub syscalls: u64,
    /// Interrupts taken while the thread ran at EL0.
    pub irqs_from_el0: u64,
    /// Times the timer took the CPU away from it for another thread.
    pub preemptions: u64,
    /// Yield syscalls.
    pub yields: u64,
}

/// A thread control block.
///
/// `repr(C)` with the saved registers first and the work word right after
/// them: the inline fast path in `arch/src/cpu/vectors.s` finds the work
/// word at `SP_EL1 + WORK_FLAGS_OFFSET` (checked below).
#[repr(C)]
pub struct Thread {
    /// Registers saved on entry from EL0 (SP_EL1 points here while the
    /// thread runs, so the vectors save straight into it).
    pub context: UserContext,
    /// Entry and exit work (see the `entry` crate); the fast path reads
    /// this one word.
    pub work: WorkFlags,
    /// FP/SIMD registers, saved only when another thread takes the CPU.
    pub fp: FpState,
    /// Life-cycle state.
    pub state: ThreadState,
    /// A short name for reports.
    pub name: &'static str,
    /// Its address space.
    pub space: Option<AddressSpace>,
    /// Scheduling priority.
    pub priority: Priority,
    /// Counters.
    pub stats: ThreadStats,
    /// The thread's console output is mid-line (no prefix needed).
    pub line_open: bool,
    /// The thread runs with the benchmark syscall floor on.
    pub syscall_floor: bool,
}

impl Thread {
    /// An unused slot.
    pub const EMPTY: Thread = Thread {
        context: UserContext::zeroed(),
        work: WorkFlags::empty(),
        fp: FpState::zeroed(),
        state: ThreadState::Free,
        name: "",
        space: None,
        priority: 0,
        stats: ThreadStats {
            syscalls: 0,
            irqs_from_el0: 0,
            preemptions: 0,
            yields: 0,
        },
        line_open: false,
        syscall_floor: false,
    };
}

// The fast path's view of the TCB (see the struct's docs).
const _: () = assert!(core::mem::offset_of!(Thread, work) == arch::context::WORK_FLAGS_OFFSET);
const _: () = assert!(core::mem::offset_of!(Thread, context) == 0);
