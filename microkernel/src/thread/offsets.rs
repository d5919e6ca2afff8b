//! Where the fast paths' assembly finds a thread's fields, and the
//! state tags it reads and writes.

use super::Thread;

/// The tags of the [`super::ThreadState`] variants the fast paths' assembly
/// reads or writes (`*_fast_path.s`): `repr(u8)` puts the tag in the
/// state's first byte and each variant's fields after it as in a
/// `repr(C)` struct (so `BlockedOnReceive`'s endpoint and
/// `BlockedOnNotification`'s notification are at offset 4).
pub mod state_tag {
    /// [`super::super::ThreadState::Ready`].
    pub const READY: u8 = 1;
    /// [`super::super::ThreadState::Running`].
    pub const RUNNING: u8 = 2;
    /// [`super::super::ThreadState::BlockedOnReceive`].
    pub const BLOCKED_ON_RECEIVE: u8 = 6;
    /// [`super::super::ThreadState::BlockedOnReply`].
    pub const BLOCKED_ON_REPLY: u8 = 7;
    /// [`super::super::ThreadState::BlockedOnAnswer`].
    pub const BLOCKED_ON_ANSWER: u8 = 8;
    /// [`super::super::ThreadState::BlockedOnNotification`].
    pub const BLOCKED_ON_NOTIFICATION: u8 = 12;
}

/// The tags of the [`super::KernelMessage`] variants (`repr(u8)`: the tag
/// is the message's first byte, each variant's fields after it as in a
/// `repr(C)` struct). The IPC fast path reads `TRACE_STOP`.
pub mod kernel_message_tag {
    /// [`super::super::KernelMessage::Fault`].
    pub const FAULT: u8 = 1;
    /// [`super::super::KernelMessage::PolicyRequest`].
    pub const POLICY_REQUEST: u8 = 2;
    /// [`super::super::KernelMessage::TraceStop`].
    pub const TRACE_STOP: u8 = 3;
}

/// Where the fast paths' assembly (`*_fast_path.s`, through
/// `kernel::fast_path`) finds the fields it reads and writes, from the
/// thread's first byte (its saved registers).
impl Thread {
    /// `state`: its tag byte (`state_tag`).
    pub const STATE_OFFSET: usize = core::mem::offset_of!(Thread, state);
    /// `priority`, a byte.
    pub const PRIORITY_OFFSET: usize = core::mem::offset_of!(Thread, priority);
    /// The statistics' count of yields (images with `test-calls`, which
    /// keep statistics; 0 without).
    #[cfg(feature = "test-calls")]
    pub const YIELDS_OFFSET: usize = core::mem::offset_of!(Thread, stats.counts.yields);
    /// (No statistics in this image.)
    #[cfg(not(feature = "test-calls"))]
    pub const YIELDS_OFFSET: usize = 0;
    /// `run_queue_word`, a `u32`.
    pub const RUN_QUEUE_WORD_OFFSET: usize = core::mem::offset_of!(Thread, run_queue_word);
    /// `fast_key`, a `u16`.
    pub const FAST_KEY_OFFSET: usize = core::mem::offset_of!(Thread, fast_key);
    /// `run_links`.
    pub const RUN_LINKS_OFFSET: usize = core::mem::offset_of!(Thread, run_links);
    /// `call`: its tag byte (`CallSlot`, `repr(u8)`: 0 for none).
    pub const CALL_OFFSET: usize = core::mem::offset_of!(Thread, call);
    /// `queue_links`.
    pub const QUEUE_LINKS_OFFSET: usize = core::mem::offset_of!(Thread, queue_links);
    /// `reply_to`, an optional thread id (0: none).
    pub const REPLY_TO_OFFSET: usize = core::mem::offset_of!(Thread, reply_to);
    /// `reply_from`, an optional thread id (0: none).
    pub const REPLY_FROM_OFFSET: usize = core::mem::offset_of!(Thread, reply_from);
    /// `bound_notification`, an `Option<ObjectId>`.
    pub const BOUND_NOTIFICATION_OFFSET: usize = core::mem::offset_of!(Thread, bound_notification);
    /// The CSpace's first slot.
    pub const CSPACE_FIRST_OFFSET: usize = core::mem::offset_of!(Thread, cspace_slots.0);
    /// The CSpace's number of slots.
    pub const CSPACE_SLOTS_OFFSET: usize = core::mem::offset_of!(Thread, cspace_slots.1);
    /// `kernel_message`, an `Option<KernelMessage>` (its tag byte first).
    pub const KERNEL_MESSAGE_OFFSET: usize = core::mem::offset_of!(Thread, kernel_message);
    /// `trace.owed`, a byte (`TraceProgress::owed`).
    pub const TRACE_OWED_OFFSET: usize = core::mem::offset_of!(Thread, trace.owed);
    /// `trace.number`, a `u64` (`TraceProgress::number`).
    pub const TRACE_NUMBER_OFFSET: usize = core::mem::offset_of!(Thread, trace.number);
    /// `rseq`, an `Option<Registration>`.
    pub const RSEQ_OFFSET: usize = core::mem::offset_of!(Thread, rseq);
    /// `tracer`, an `Option<(ObjectRef, u64)>`.
    pub const TRACER_OFFSET: usize = core::mem::offset_of!(Thread, tracer);
    /// `filters`, a `heapless::Vec<AttachedFilter, _>`.
    pub const FILTERS_OFFSET: usize = core::mem::offset_of!(Thread, filters);
    /// `ipc_buffer`, an `Option<u64>`.
    pub const IPC_BUFFER_OFFSET: usize = core::mem::offset_of!(Thread, ipc_buffer);
    /// `number`, a `u32` (the thread's number, as stops report it).
    pub const NUMBER_OFFSET: usize = core::mem::offset_of!(Thread, number);
    /// `ttbr0` (0 without an address space).
    pub const TTBR0_OFFSET: usize = core::mem::offset_of!(Thread, ttbr0);
    /// `asid_generation`.
    pub const ASID_GENERATION_OFFSET: usize = core::mem::offset_of!(Thread, asid_generation);
}

// The fast path's view of the TCB (see `Thread`'s docs).
const _: () = assert!(core::mem::offset_of!(Thread, work) == arch::context::WORK_FLAGS_OFFSET);
const _: () = assert!(core::mem::offset_of!(Thread, context) == 0);
const _: () =
    assert!(core::mem::offset_of!(Thread, no_entry_work) == arch::context::WORK_FLAGS_OFFSET + 8);
const _: () = assert!(core::mem::offset_of!(Thread, refused) == arch::context::REFUSED_OFFSET);
const _: () =
    assert!(core::mem::offset_of!(Thread, refusal_codes) == arch::context::REFUSAL_CODES_OFFSET);
const _: () =
    assert!(core::mem::offset_of!(Thread, lean_judged) == arch::context::LEAN_JUDGED_OFFSET);
const _: () = assert!(
    core::mem::offset_of!(Thread, register_judged) == arch::context::REGISTER_JUDGED_OFFSET
);
const _: () = assert!(core::mem::offset_of!(Thread, asked) == arch::context::ASKED_OFFSET);
