//! Threads: saved registers, state, and what the kernel counts about them.

use crate::address_space::AddressSpace;
use crate::cap::{CNodeId, ObjectId, SlotId};
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
    /// Waiting in an endpoint's queue to send (`Send` or `Call`).
    BlockedOnSend {
        /// The endpoint's index.
        endpoint: u32,
        /// The badge of the capability it sends through.
        badge: u64,
        /// A `Call`: after the transfer it waits for the reply.
        call: bool,
        /// A fault message (built from `pending_fault`), not the thread's
        /// registers, is sent; the reply resumes or stops the thread.
        fault: bool,
    },
    /// Waiting in an endpoint's queue to receive.
    BlockedOnReceive {
        /// The endpoint's index.
        endpoint: u32,
    },
    /// Sent a `Call` and waits for the receiver's reply.
    BlockedOnReply,
    /// Faulted; its fault handler received the fault message and owes
    /// the reply that resumes (or stops) it.
    BlockedOnFaultReply,
    /// Stopped by `TcbSuspend` until `TcbResume`: in no queue.
    Suspended,
    /// Waiting for a notification's word to become non-zero.
    BlockedOnNotification {
        /// The notification's index.
        notification: u32,
    },
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
/// word at `SP_EL1 + WORK_FLAGS_OFFSET` (checked below). The fields the
/// syscall and IPC paths use come next, before the large ones (FP state,
/// address space), so they stay within the 4 KiB reach of an immediate
/// load offset.
#[repr(C)]
pub struct Thread {
    /// Registers saved on entry from EL0 (SP_EL1 points here while the
    /// thread runs, so the vectors save straight into it).
    pub context: UserContext,
    /// Entry and exit work (see the `entry` crate); the fast path reads
    /// this one word.
    pub work: WorkFlags,
    /// Life-cycle state.
    pub state: ThreadState,
    /// Scheduling priority.
    pub priority: Priority,
    /// Neighbours in the endpoint queue the thread waits in.
    pub queue_links: QueueLinks,
    /// The caller this thread owes a reply (set when it received a `Call`).
    pub reply_to: Option<ThreadId>,
    /// The thread's CSpace: one CNode, capability pointers index it.
    pub cspace: Option<CNodeId>,
    /// The CSpace's first slot and radix, kept here for the fast path
    /// (valid while `cspace` is `Some`).
    pub cspace_slots: (SlotId, u8),
    /// The thread runs with the benchmark syscall floor on.
    pub syscall_floor: bool,
    /// Physical address of the thread's IPC buffer page (message words
    /// beyond the registers), if it has one.
    pub ipc_buffer: Option<u64>,
    /// Where the thread's faults go: an endpoint's index and the badge
    /// the fault messages carry. `None`: a fault stops the thread.
    pub fault_endpoint: Option<(u32, u64)>,
    /// The fault being handled (while blocked on a fault endpoint).
    pub pending_fault: Option<FaultReport>,
    /// Counters.
    pub stats: ThreadStats,
    /// A short name for reports.
    pub name: &'static str,
    /// FP/SIMD registers, saved only when another thread takes the CPU.
    pub fp: FpState,
    /// Its address space.
    pub space: Option<AddressSpace>,
    /// Maximum controlled priority: the highest priority (or MCP) this
    /// thread may give any thread, itself included.
    pub mcp: Priority,
    /// The TCB object that stands for this thread (while it lives).
    pub tcb: Option<ObjectId>,
    /// The VSpace object that stands for its address space (while it
    /// lives).
    pub vspace: Option<ObjectId>,
}

/// A thread's place in an endpoint queue (intrusive, as in seL4: O(1)
/// enqueue, dequeue and removal of any thread, no per-endpoint storage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueLinks {
    /// The thread queued before this one.
    pub previous: Option<ThreadId>,
    /// The thread queued after this one.
    pub next: Option<ThreadId>,
}

impl Thread {
    /// An unused slot.
    pub const EMPTY: Thread = Thread {
        context: UserContext::zeroed(),
        work: WorkFlags::empty(),
        fp: FpState::zeroed(),
        state: ThreadState::Free,
        name: "",
        mcp: 0,
        tcb: None,
        vspace: None,
        space: None,
        priority: 0,
        stats: ThreadStats {
            syscalls: 0,
            irqs_from_el0: 0,
            preemptions: 0,
            yields: 0,
        },
        syscall_floor: false,
        queue_links: QueueLinks {
            previous: None,
            next: None,
        },
        reply_to: None,
        ipc_buffer: None,
        cspace: None,
        cspace_slots: (SlotId(0), 0),
        fault_endpoint: None,
        pending_fault: None,
    };
}

// The fast path's view of the TCB (see the struct's docs).
const _: () = assert!(core::mem::offset_of!(Thread, work) == arch::context::WORK_FLAGS_OFFSET);
const _: () = assert!(core::mem::offset_of!(Thread, context) == 0);
