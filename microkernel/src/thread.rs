//! Threads: saved registers, state, and what the kernel counts about them.

use crate::endpoint_queue::{QueueLinks, Queued};
use crate::fault::FaultReport;
use crate::filter::{RegisterProgram, VerdictCache};
pub use crate::ids::ThreadId;
use crate::ids::{CNodeId, FilterUser, ObjectId, ObjectRef, Priority, SlotId};
use crate::judged_memory::JudgedMemory;
use crate::member_links::MemberLinks;
use crate::scheduler::{RunLinks, RunQueued};
use crate::stopped_call::{CallSlot, StoppedCall};
use arch::context::{FpState, UserContext};
use entry::WorkFlags;

/// `Thread::cspace_slots` of a thread without a CSpace: no slot.
pub const NO_CSPACE_SLOTS: (SlotId, u32) = (SlotId(0), 0);

/// `Thread::cspace_slots` of a CNode with `first` slot and `radix`, as
/// `Objects::cnode_slots` gives them (a radix too large to count in a
/// `u32`, which no CNode has, counts as no slot: the slow path decides).
pub fn cached_cspace_slots((first, radix): (SlotId, u8)) -> (SlotId, u32) {
    match 1u32.checked_shl(u32::from(radix)) {
        Some(slots) => (first, slots),
        None => NO_CSPACE_SLOTS,
    }
}

/// A table of threads by id: object memory in the kernel, a plain vector
/// in the IPC engine's unit tests.
///
/// Indexing checks the id each time; code that works on one or two
/// threads for a while takes their references once (`pair_mut`), which
/// is what keeps the IPC paths short.
pub trait Threads: core::ops::IndexMut<ThreadId, Output = Thread> {
    /// Two different threads, both for changing. Panics (a kernel bug)
    /// if either is not a thread or both are the same.
    fn pair_mut(&mut self, a: ThreadId, b: ThreadId) -> (&mut Thread, &mut Thread);
}

/// The status recorded for a thread made from user space whose TCB object
/// was destroyed (its last capability deleted, or its Untyped revoked).
pub const TCB_DESTROYED_STATUS: i64 = -3;
/// The status recorded for a thread whose address space was a VSpace made
/// from user space, destroyed while bound to it (its last capability
/// deleted, or its Untyped revoked).
pub const VSPACE_DESTROYED_STATUS: i64 = abi::fault::SPACE_DESTROYED_STATUS;
/// The status recorded for a thread confined by a Filter whose memory
/// was taken back (its Untyped revoked): a restriction is never lifted,
/// so the threads it confines end with it. (Deleting the Filter's last
/// capability only pins it: its rules stay in force until the last
/// thread it confines has ended.)
pub const FILTER_DESTROYED_STATUS: i64 = abi::fault::FILTER_DESTROYED_STATUS;

pub use offsets::{kernel_message_tag, state_tag};

/// Where a thread is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ThreadState {
    /// The slot is unused.
    Free = 0,
    /// Waiting in the run queue.
    Ready = state_tag::READY,
    /// On the CPU (or about to return to it).
    Running = state_tag::RUNNING,
    /// Ended through the exit syscall with this status.
    Exited(i64) = 3,
    /// Stopped by a fault it caused.
    Faulted(FaultReport) = 4,
    /// Waiting in an endpoint's queue to send (`Send` or `Call`).
    BlockedOnSend {
        /// The endpoint.
        endpoint: ObjectId,
        /// The badge of the capability it sends through.
        badge: u64,
        /// A `Call`: after the transfer it waits for the reply.
        call: bool,
        /// Its kernel message (`Thread::kernel_message`), not its
        /// registers, is sent; then it waits for the answer
        /// (`BlockedOnAnswer`).
        kernel_message: bool,
    } = 5,
    /// Waiting in an endpoint's queue to receive.
    BlockedOnReceive {
        /// The endpoint.
        endpoint: ObjectId,
    } = state_tag::BLOCKED_ON_RECEIVE,
    /// Sent a `Call` and waits for the receiver's reply.
    BlockedOnReply = state_tag::BLOCKED_ON_REPLY,
    /// Its kernel message (`Thread::kernel_message`: a fault, a policy
    /// request or a trace stop) was received; the receiver owes the
    /// answer that resumes it (or, for a fault, may stop it).
    BlockedOnAnswer = state_tag::BLOCKED_ON_ANSWER,
    /// Stopped by `TcbSuspend` until `TcbResume`: in no queue.
    Suspended = 9,
    /// Made from user space (`Retype` of a TCB) and not started yet: in no
    /// queue, with no CSpace until `TcbConfigure` and no address space
    /// until `TcbSetSpace` give them, and runnable only after
    /// `TcbResume`.
    Inactive = 10,
    /// Audited losslessly and its ring is full: its `svc` runs again once
    /// the audit server has made room (the tick checks the kernel's list
    /// of such threads).
    BlockedOnAudit = 11,
    /// Waiting for a notification's word to become non-zero.
    BlockedOnNotification {
        /// The notification.
        notification: ObjectId,
    } = state_tag::BLOCKED_ON_NOTIFICATION,
    /// Ended (a thread made from user space; how is `Thread::end`): in no
    /// queue, never scheduled, its TCB kept until it is restarted
    /// (`TcbRestart`) or destroyed. Its end message, if any, was taken.
    Ended = 13,
    /// Ended as `Ended`, and its end message waits for a receiver: it is
    /// queued as a sender on its fault endpoint (no reply is owed; a
    /// receiver that takes the message leaves it `Ended`).
    EndPending {
        /// The fault endpoint.
        endpoint: ObjectId,
        /// The badge of the fault endpoint capability.
        badge: u64,
    } = 14,
}

impl ThreadState {
    /// Has the thread ended (exit, kill or fault), or is it ending now
    /// (the exit and fault states name how, until the kernel ends it)?
    pub fn has_ended(self) -> bool {
        matches!(
            self,
            ThreadState::Exited(_)
                | ThreadState::Faulted(_)
                | ThreadState::Ended
                | ThreadState::EndPending { .. }
        )
    }

    /// Is the thread an ended one whose TCB the kernel keeps (`Ended`, or
    /// `EndPending` while its end message waits)?
    pub fn is_kept_end(self) -> bool {
        matches!(self, ThreadState::Ended | ThreadState::EndPending { .. })
    }
}

/// What the kernel counts per thread: in a test image (`test-calls`)
/// only, where tests read it with `DebugThreadStats`. Other images count
/// nothing, so the counting costs their paths nothing (a bench image
/// measures the paths the default image has).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    #[cfg(feature = "test-calls")]
    counts: StatCounts,
}

/// The counters of [`ThreadStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatCounts {
    /// Syscalls made that reached the generic path (the inline `Null`,
    /// the vector's constant refusals and the IPC fast path do not
    /// count, to stay short).
    pub syscalls: u64,
    /// Interrupts taken while the thread ran at EL0.
    pub irqs_from_el0: u64,
    /// Times the timer took the CPU away from it for another thread.
    pub preemptions: u64,
    /// Yield syscalls.
    pub yields: u64,
}

impl ThreadStats {
    /// Nothing counted yet.
    pub const ZERO: ThreadStats = ThreadStats {
        #[cfg(feature = "test-calls")]
        counts: StatCounts {
            syscalls: 0,
            irqs_from_el0: 0,
            preemptions: 0,
            yields: 0,
        },
    };

    /// The counters, in an image that keeps them.
    pub fn counts(&self) -> Option<StatCounts> {
        #[cfg(feature = "test-calls")]
        return Some(self.counts);
        #[cfg(not(feature = "test-calls"))]
        None
    }

    /// One more syscall on the generic path.
    #[inline(always)]
    pub fn count_syscall(&mut self) {
        #[cfg(feature = "test-calls")]
        {
            self.counts.syscalls += 1;
        }
    }

    /// One more interrupt taken at EL0.
    #[inline(always)]
    pub fn count_interrupt(&mut self) {
        #[cfg(feature = "test-calls")]
        {
            self.counts.irqs_from_el0 += 1;
        }
    }

    /// One more preemption by the timer.
    #[inline(always)]
    pub fn count_preemption(&mut self) {
        #[cfg(feature = "test-calls")]
        {
            self.counts.preemptions += 1;
        }
    }

    /// One more yield.
    #[inline(always)]
    pub fn count_yield(&mut self) {
        #[cfg(feature = "test-calls")]
        {
            self.counts.yields += 1;
        }
    }
}

/// A thread control block: the body of a TCB object's record.
///
/// `repr(C)` with the saved registers first and the work word right after
/// them: the inline fast path in `arch/src/cpu/vectors.s` finds the work
/// word at `SP_EL1 + WORK_FLAGS_OFFSET` (checked in `offsets.rs`; SP_EL1
/// points at the saved registers). The fields the syscall and IPC paths use come
/// next, before the large ones (FP state, filters), so they stay within
/// the reach of an immediate load offset.
#[repr(C)]
pub struct Thread {
    /// Registers saved on entry from EL0 (SP_EL1 points here while the
    /// thread runs, so the vectors save straight into it).
    pub(crate) context: UserContext,
    /// Entry and exit work (see the `entry` crate); the fast path reads
    /// this one word.
    pub(crate) work: WorkFlags,
    /// Bit n: syscall n needs no entry work even though `work` holds
    /// syscall work (its policy verdict is a constant `Allow`, and nothing
    /// else is asked of it). Right after `work`: the inline fast path reads
    /// it at `WORK_FLAGS_OFFSET + 8` (checked in `offsets.rs`).
    pub(crate) no_entry_work: u64,
    /// Bit n: syscall n is refused with `refusal_codes[n]` in `x0` and
    /// nothing else (its policy verdict is a constant `Errno`, and
    /// nothing else is asked of it): the vector answers it
    /// (`el0_refused_or_slow`) at `WORK_FLAGS_OFFSET + 16` (checked in
    /// `offsets.rs`). Kept with `no_entry_work` by `recompute_no_entry_work`.
    pub(crate) refused: u64,
    /// The TTBR0_EL1 value of that space (root and ASID), kept here so
    /// that a switch loads one word (near the start: the IPC fast path
    /// loads it and the generation as one pair); 0 without a space. Rewritten for
    /// every thread of the space whenever it binds or its ASID changes.
    pub(crate) ttbr0: u64,
    /// The generation of that space's ASID (0 without a space), kept here
    /// for the same reason: a switch compares it with the allocator's.
    pub(crate) asid_generation: u64,
    /// The codes of `refused`'s syscalls, by number (the vector reads
    /// one at `REFUSAL_CODES_OFFSET + 2 × number`).
    pub(crate) refusal_codes: [u16; 64],
    /// Bit n: the lean entry judges syscall n: policy is the thread's
    /// only syscall work, and the verdict reads and writes nothing of the
    /// frame beyond `x0..x8` (`VerdictCache::judged_by_lean_entry`). The
    /// vector reads it at `LEAN_JUDGED_OFFSET` (checked in `offsets.rs`) to
    /// send only those numbers there; the lean entry asks the cache again.
    /// Kept with `no_entry_work` by `recompute_no_entry_work`.
    pub(crate) lean_judged: u64,
    /// Bit n: the vector judges syscall n itself, walking
    /// `register_program` (`policy_fast_path.s`; read at
    /// `REGISTER_JUDGED_OFFSET`). Its compiled mask while policy is the
    /// only syscall work, else 0 (`recompute_no_entry_work`).
    pub(crate) register_judged: u64,
    /// Bit n: the vector sends syscall n to the policy request fast path
    /// (`policy_request_fast_path.s`; read at `ASKED_OFFSET`): its
    /// verdict is the one filter's constant `Notify`, and its request
    /// carries no memory (`VerdictCache::asked_mask`). That mask
    /// while policy is the only syscall work, else 0
    /// (`recompute_no_entry_work`).
    pub(crate) asked: u64,
    /// The verdicts compiled to comparisons of `x0..x7`, recomputed with
    /// `verdicts` (near the start: reached with immediate offsets).
    pub(crate) register_program: RegisterProgram,
    /// Life-cycle state.
    state: ThreadState,
    /// Scheduling priority (written through `set_priority`).
    pub(crate) priority: Priority,
    /// The CPU it runs on (`TcbSetAffinity`; see `kernel/cores.rs`): it
    /// waits in that CPU's run queue and only that CPU runs it (written
    /// through `set_affinity`).
    pub(crate) affinity: u8,
    /// `affinity << 9 | priority`, kept by `set_priority` and
    /// `set_affinity`: the IPC fast path's one test that the partner has
    /// the caller's CPU and is at least as urgent (see
    /// `Thread::fast_partner_of`).
    fast_key: u16,
    /// `scheduler::bitmap_word(affinity, priority)`, kept with `fast_key`:
    /// where the yield fast path finds its priority's bit in its CPU's
    /// run queue.
    run_queue_word: u32,
    /// Neighbours in the queue the thread waits in (an endpoint's, a
    /// notification's, or the kernel's list of audit waiters).
    queue_links: QueueLinks,
    /// Neighbours in its priority's run queue, while it is ready.
    run_links: RunLinks,
    /// The caller this thread owes a reply (set when it received a `Call`).
    pub(crate) reply_to: Option<ThreadId>,
    /// While it waits for a reply: the thread that owes it (whose
    /// `reply_to` names it back).
    pub(crate) reply_from: Option<ThreadId>,
    /// The notification bound to it: signals end its `Recv`.
    pub(crate) bound_notification: Option<ObjectId>,
    /// The thread's CSpace: one CNode, capability pointers index it.
    pub(crate) cspace: Option<CNodeId>,
    /// The CSpace's first slot and its number of slots, kept here for the
    /// fast path; no slots while `cspace` is `None` (so the fast path's
    /// range test also rules out a thread without a CSpace).
    pub(crate) cspace_slots: (SlotId, u32),
    /// Physical address of the thread's IPC buffer page (message words
    /// beyond the registers), if it has one.
    pub(crate) ipc_buffer: Option<u64>,
    /// Where the thread's faults go: an endpoint and the badge the fault
    /// messages carry. `None` (or an endpoint destroyed since): a fault
    /// stops the thread.
    pub(crate) fault_endpoint: Option<(ObjectRef, u64)>,
    /// The message the kernel sends for it, while it waits for the
    /// message to be received and answered (`BlockedOnSend` with
    /// `kernel_message`, then `BlockedOnAnswer`).
    kernel_message: Option<KernelMessage>,
    /// The syscall it stopped in (see `stopped_call`): waiting for an
    /// answer, or answered and about to go on.
    pub(crate) call: CallSlot,
    /// Where its audit records go (`None`: not audited).
    pub(crate) audit: Option<AuditSink>,
    /// Records it lost (lossy mode) since its last written one.
    pub(crate) audit_dropped: u64,
    /// The record of the syscall in progress, from its audit entry until
    /// it is written (after dispatch, or when the thread ends first).
    pub(crate) audit_pending: Option<PendingRecord>,
    /// Counters.
    pub(crate) stats: ThreadStats,
    /// A short name for console lines (`[name#N]`): its program's for a
    /// thread the kernel starts, "task" for one made from user space
    /// until `TcbSetName` names it.
    pub(crate) name: ThreadName,
    /// The number threads are told apart by in console lines, policy
    /// requests, trace stops and audit records (given out in order of
    /// creation).
    pub(crate) number: u32,
    /// The VSpace whose address space it runs in (other threads may run
    /// there too).
    pub(crate) space: Option<ObjectId>,
    /// Neighbours among the threads of that VSpace.
    pub(crate) space_links: MemberLinks,
    /// Neighbours among the threads of its CSpace's CNode.
    pub(crate) cspace_links: MemberLinks,
    /// FP/SIMD registers, saved only when another thread takes the CPU.
    pub(crate) fp: FpState,
    /// Maximum controlled priority: the highest priority (or MCP) this
    /// thread may give any thread, itself included.
    pub(crate) mcp: Priority,
    /// Filters attached to the thread, oldest first, each with the
    /// policy server named when it was attached (it cannot remove them;
    /// they go when it ends).
    pub(crate) filters: FilterStack,
    /// The verdicts of `filters` that depend on the syscall number alone.
    pub(crate) verdicts: VerdictCache,
    /// Where its trace stops go (`TcbAttachTracer`): an endpoint and the
    /// badge of the capability it was given through (an endpoint
    /// destroyed since: it runs on untraced).
    pub(crate) tracer: Option<(ObjectRef, u64)>,
    /// Where the thread is in its traced syscall.
    pub(crate) trace: TraceProgress,
    /// Its syscall user dispatch (`SetUserDispatch`), if on.
    pub(crate) user_dispatch: Option<UserDispatchConfig>,
    /// Made from user space (`Retype` of a TCB): its TCB object lives in
    /// user capabilities, and destroying it ends the thread.
    pub(crate) created_by_user: bool,
    /// While it waits for a reply that its server saved (`ReplySave`):
    /// the Reply object that answers it. The Reply's `caller` links back;
    /// both are cleared together when the wait ends any other way.
    pub(crate) saved_reply: Option<ObjectId>,
    /// The Frame object that is the IPC buffer, when `TcbSetSpace` named
    /// one (destroying it takes the buffer away); `None` for a buffer the
    /// kernel's loader made.
    /// (Last: rarely used, kept out of the hot fields' reach.)
    pub(crate) ipc_buffer_frame: Option<ObjectId>,
    /// Neighbours among the threads whose IPC buffer that Frame is.
    pub(crate) buffer_links: MemberLinks,
    /// How it ended, while its TCB is kept ended (`ThreadState::Ended`,
    /// `EndPending`): what its end message says.
    pub(crate) end: Option<abi::fault::ThreadEnd>,
    /// A filter that confined it was taken away while it was ended (its
    /// memory taken back): it may not be restarted (a restriction is never
    /// lifted).
    pub(crate) lost_filter: bool,
    /// Its part as a policy server (`kernel/object/filter_server.rs`).
    pub(crate) served: ServedFilters,
    /// The memory its current syscall carries, copied once to judge it
    /// (`crate::judged_memory`): what the call uses if it runs. (Last: 512
    /// bytes, read only by judged calls; before the hot fields it moved
    /// them and cost the slow IPC path 16 instructions.)
    pub(crate) judged: JudgedMemory,
    /// Its restartable sequences (`SetRseq`), if registered; and where its
    /// time-slice extension is (`thread/rseq.rs`). (After the hot fields:
    /// only threads with rseq work read them.)
    pub(crate) rseq: Option<entry::rseq::Registration>,
    pub(crate) slice: SliceExtension,
    /// Neighbours among the threads auditing into its audit's ring Frame
    /// (last, as the next: read only when an audit is set or cleared).
    pub(crate) audit_ring_links: MemberLinks,
    /// Neighbours among the threads whose audit signals its notification.
    pub(crate) audit_signal_links: MemberLinks,
}

/// A thread's syscall user dispatch (`abi::user_dispatch`), as decoded
/// and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserDispatchConfig {
    /// The allowed PC range's first address.
    pub start: u64,
    /// One past its last address.
    pub end: u64,
    /// Where a redirected syscall goes.
    pub handler: u64,
    /// Where the interrupted context is saved (a `Frame`).
    pub buffer: u64,
    /// The selector byte's address.
    pub selector: u64,
}

impl UserDispatchConfig {
    /// Is the `svc` at `address` inside the allowed range?
    pub fn allows(&self, address: u64) -> bool {
        (self.start..self.end).contains(&address)
    }
}

/// A traced thread's progress through one syscall: which stops it is
/// still owed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceProgress {
    /// The number the syscall in progress was dispatched with (word 0 of
    /// its exit stop).
    pub number: u64,
    /// Stops owed before the thread returns to EL0: `OWE_EXIT`, `OWE_STEP`.
    pub owed: u8,
    /// The syscall blocked: its exit stages 6 to 8 run when it returns
    /// (how its entry ended: `entry::SyscallExit::after_record`).
    pub exit_deferred: Option<entry::SyscallEntry>,
}

impl TraceProgress {
    /// An exit stop is owed.
    pub const OWE_EXIT: u8 = 1 << 0;
    /// A single-step stop is owed (after the exit stop).
    pub const OWE_STEP: u8 = 1 << 1;
    /// Nothing answered, nothing owed.
    pub const NONE: TraceProgress = TraceProgress {
        number: 0,
        owed: 0,
        exit_deferred: None,
    };
}

/// A thread's name, kept in its TCB (no heap): printable ASCII, at most
/// [`ThreadName::CAPACITY`] bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ThreadName {
    bytes: [u8; ThreadName::CAPACITY],
    len: u8,
}

impl ThreadName {
    /// The longest name a TCB holds: the longest program name of a thread
    /// the kernel starts (user space may set at most
    /// `abi::tcb::MAX_NAME_BYTES`).
    pub const CAPACITY: usize = 24;
    /// No name (an unused slot).
    pub const EMPTY: ThreadName = ThreadName {
        bytes: [0; ThreadName::CAPACITY],
        len: 0,
    };
    /// The name of a thread made from user space until it is named.
    pub const TASK: ThreadName = ThreadName::from_static("task");

    /// `name`, cut to [`ThreadName::CAPACITY`] bytes (a kernel-made
    /// thread's program name; every one fits, see the tests).
    pub const fn from_static(name: &'static str) -> ThreadName {
        let mut out = ThreadName::EMPTY;
        let bytes = name.as_bytes();
        while (out.len as usize) < bytes.len() && (out.len as usize) < ThreadName::CAPACITY {
            out.bytes[out.len as usize] = bytes[out.len as usize];
            out.len += 1;
        }
        out
    }

    /// `name` if `TcbSetName` takes it (`abi::tcb::is_valid_name`).
    pub fn from_user(name: &[u8]) -> Option<ThreadName> {
        if !abi::tcb::is_valid_name(name) {
            return None;
        }
        let mut out = ThreadName::EMPTY;
        out.bytes[..name.len()].copy_from_slice(name);
        out.len = name.len() as u8;
        Some(out)
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (a program name or a checked user
        // name); a broken one would print as nothing, never panic.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl core::fmt::Display for ThreadName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::fmt::Debug for ThreadName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Thread {
    /// Gives the thread priority `priority`.
    #[inline(always)]
    pub(crate) fn set_priority(&mut self, priority: Priority) {
        self.priority = priority;
        self.fast_key = Self::key(self.affinity, priority);
        self.run_queue_word = crate::scheduler::bitmap_word(self.affinity, priority);
    }

    /// Gives the thread affinity with CPU `cpu`.
    pub(crate) fn set_affinity(&mut self, cpu: u8) {
        if cpu != self.affinity {
            // Moved: its CPU ids change, a section it was in restarts.
            self.note_rseq_event();
        }
        self.affinity = cpu;
        self.fast_key = Self::key(cpu, self.priority);
        self.run_queue_word = crate::scheduler::bitmap_word(cpu, self.priority);
    }

    const fn key(affinity: u8, priority: Priority) -> u16 {
        (affinity as u16) << 9 | priority as u16
    }

    /// Whether `self` runs on `caller`'s CPU and is at least as urgent:
    /// one subtraction of the keys. With the same affinity the difference
    /// is the priorities' (below 256 only if `self`'s is not lower); a
    /// higher affinity adds at least 512 − 255 (bit 8 is always clear, so
    /// a lower priority cannot borrow the difference below 256), a lower
    /// one wraps to a huge number.
    /// (The IPC fast path's assembly makes this compare; the host tests
    /// check it here.)
    #[cfg(test)]
    pub(crate) fn fast_partner_of(&self, caller: &Thread) -> bool {
        u64::from(self.fast_key).wrapping_sub(u64::from(caller.fast_key)) < 256
    }

    /// Whether the cached key matches priority and affinity (the
    /// invariant check).
    pub(crate) fn key_is_consistent(&self) -> bool {
        self.fast_key == Self::key(self.affinity, self.priority)
            && self.run_queue_word == crate::scheduler::bitmap_word(self.affinity, self.priority)
    }

    /// An unused slot.
    pub const EMPTY: Thread = Thread {
        context: UserContext::zeroed(),
        work: WorkFlags::empty(),
        no_entry_work: 0,
        refused: 0,
        refusal_codes: [0; 64],
        lean_judged: 0,
        register_judged: 0,
        asked: 0,
        register_program: RegisterProgram::empty(),
        fp: FpState::zeroed(),
        state: ThreadState::Free,
        name: ThreadName::EMPTY,
        number: 0,
        mcp: 0,
        filters: heapless::Vec::new(),
        verdicts: VerdictCache::unfiltered(),
        judged: JudgedMemory::new(),
        space: None,
        space_links: MemberLinks::NONE,
        cspace_links: MemberLinks::NONE,
        ttbr0: 0,
        asid_generation: 0,
        priority: 0,
        affinity: 0,
        fast_key: 0,
        run_queue_word: 0,
        stats: ThreadStats::ZERO,
        queue_links: QueueLinks::UNLINKED,
        run_links: RunLinks::UNLINKED,
        reply_to: None,
        reply_from: None,
        bound_notification: None,
        ipc_buffer: None,
        ipc_buffer_frame: None,
        cspace: None,
        cspace_slots: NO_CSPACE_SLOTS,
        fault_endpoint: None,
        kernel_message: None,
        call: CallSlot::Empty,
        audit: None,
        audit_dropped: 0,
        audit_pending: None,
        tracer: None,
        trace: TraceProgress::NONE,
        user_dispatch: None,
        rseq: None,
        slice: SliceExtension::Unused,
        created_by_user: false,
        saved_reply: None,
        buffer_links: MemberLinks::NONE,
        audit_ring_links: MemberLinks::NONE,
        audit_signal_links: MemberLinks::NONE,
        end: None,
        lost_filter: false,
        served: ServedFilters::NONE,
    };
}

/// Where an audited thread's records go (`abi::audit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditSink {
    /// The Frame object holding the ring. While this is a thread's own
    /// audit, the thread is on the Frame's and the notification's lists
    /// of audit users, and destroying either turns its audit off
    /// (`Kernel::audit_sink_destroyed`): a thread's own sink always lives.
    pub frame: ObjectRef,
    /// Its physical address.
    pub ring: u64,
    /// The notification and the bits a signal sets.
    pub notification: (ObjectRef, u64),
    /// What a full ring does.
    pub mode: abi::audit::AuditMode,
    /// The badge every record of this thread carries.
    pub badge: u64,
}

/// A filter on a thread's stack, and where its `Notify` verdicts go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttachedFilter {
    /// The Filter object (its rules are frozen while attached; destroying
    /// it ends the thread).
    pub filter: ObjectId,
    /// Its policy server (`None`: none named, or its thread is gone:
    /// `Kernel::lose_policy_server`). `None`, or an endpoint destroyed
    /// since: its `Notify` verdicts are `Denied`.
    pub server: Option<FilterServer>,
    /// The next and previous threads the filter is attached to (the
    /// Filter's `attached` list).
    pub next: Option<FilterUser>,
    /// See `next`.
    pub previous: Option<FilterUser>,
}

/// The audit record of a syscall in progress: where it goes and what it
/// says, fixed at the syscall's audit entry (so a syscall that changes or
/// ends its own audit, or its own thread, is still recorded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingRecord {
    /// The ring and notification when the syscall was judged, if the
    /// thread's audit has changed since (`Kernel::attach_audit` keeps the
    /// old one here before it changes it); `None`: the thread's audit,
    /// unchanged. (Copied only on a change: a copy at every audit entry
    /// was a `memcpy` call on every audited syscall.)
    pub moved_sink: Option<AuditSink>,
    /// `x0..x8` as judged.
    pub call: [u64; 9],
    /// The verdict.
    pub verdict: abi::audit::AuditVerdict,
    /// A policy server decided it.
    pub forwarded: bool,
}

/// A syscall a `Notify` verdict sent to a policy server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyRequest {
    /// The position, in the thread's stack, of the filter whose server
    /// was asked (its `Notify` is the one an "allow" waives).
    pub filter: u8,
    /// The `CapType` number of the capability `x0` names (0: none).
    pub object_type: u64,
    /// That capability's badge.
    pub badge: u64,
    /// Unique per request.
    pub cookie: u64,
    // The number and `x0..x7` are the stopped call's (`Thread::call`),
    // which the thread keeps for as long as it asks (a cancelled call
    // takes the request with it): a copy here cost every request some 25
    // instructions.
}

pub use crate::ids::MAX_STACKED_FILTERS;

/// A thread's filter stack, in attach order (the policy request fast
/// path finds its length and its first filter's server in it: the binary
/// checks where at build time, on this type).
pub type FilterStack = heapless::Vec<AttachedFilter, MAX_STACKED_FILTERS>;

/// A plain table of threads for the unit tests of code that is generic
/// over [`Threads`] (the IPC engine, the queues): thread `i` is entry `i`.
#[cfg(test)]
pub(crate) mod test_threads {
    use super::{Thread, ThreadId};

    /// `n` empty threads.
    pub(crate) struct ThreadVec(pub(crate) Vec<Thread>);

    impl ThreadVec {
        pub(crate) fn new(n: usize) -> ThreadVec {
            ThreadVec((0..n).map(|_| Thread::EMPTY).collect())
        }
    }

    impl core::ops::Index<ThreadId> for ThreadVec {
        type Output = Thread;
        fn index(&self, id: ThreadId) -> &Thread {
            &self.0[id.index()]
        }
    }

    impl core::ops::IndexMut<ThreadId> for ThreadVec {
        fn index_mut(&mut self, id: ThreadId) -> &mut Thread {
            &mut self.0[id.index()]
        }
    }

    impl super::Threads for ThreadVec {
        fn pair_mut(&mut self, a: ThreadId, b: ThreadId) -> (&mut Thread, &mut Thread) {
            let (a, b) = (a.index(), b.index());
            assert_ne!(a, b, "a pair of threads is two threads");
            if a < b {
                let (low, high) = self.0.split_at_mut(b);
                (&mut low[a], &mut high[0])
            } else {
                let (low, high) = self.0.split_at_mut(a);
                (&mut high[0], &mut low[b])
            }
        }
    }

    impl core::ops::Index<usize> for ThreadVec {
        type Output = Thread;
        fn index(&self, i: usize) -> &Thread {
            &self.0[i]
        }
    }

    impl core::ops::IndexMut<usize> for ThreadVec {
        fn index_mut(&mut self, i: usize) -> &mut Thread {
            &mut self.0[i]
        }
    }
}

mod access;
mod entry_masks;
mod kernel_message;
mod offsets;
mod rseq;
mod served;
mod state;
pub(crate) use rseq::SliceExtension;

pub use kernel_message::{KernelMessage, TraceStop};
pub use served::{FilterServer, ServedFilters};

#[cfg(test)]
mod name_tests;
