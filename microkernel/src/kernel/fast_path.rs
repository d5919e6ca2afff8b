//! The IPC fast path: `Call` and `ReplyRecv` in their common case.
//!
//! The path itself is assembly in the kernel binary
//! (`microkernel/src/ipc_fast_path.s`), which the EL0 vector branches to;
//! this module gives it every offset and value it uses ([`layout`]),
//! computed from the types they stand for, so a changed layout changes
//! the assembly with it.
//!
//! Like seL4's fastpath: a list of cheap checks, each of which sends the
//! syscall to the ordinary path when it fails, then a point of no return
//! after which the transfer and the switch happen directly. The transfer
//! makes exactly the state changes of the slow path's `ipc::send` (Call)
//! and `ipc::reply_receive` (ReplyRecv) for a register-only message; the
//! in-guest suite runs each IPC case on both paths and compares. What the
//! fast path skips is everything around it: the full register save, the
//! software-PAN round trip, the generic entry, decoding, the run queue and
//! the exit work (both threads have none).
//!
//! # What it saves
//! The caller's `x9`/`x10` (parked by the vector), `x19..x30`, `SP_EL0`,
//! `ELR_EL1`, `SPSR_EL1` and `TPIDR_EL0` go to its saved registers;
//! `x0..x8` and `x11..x18` do not (a refusal saves them before the IPC
//! entry, `kernel/ipc_entry.rs`, takes the syscall). The partner gets the message in
//! `x0..x8` and its own `x9..x30` and system registers back from its
//! saved registers. So after a `Call` or `ReplyRecv` a thread's `x9..x18`
//! hold values it had itself at some earlier entry to the kernel (or
//! zero), never another thread's or the kernel's: the ABI lets these two
//! syscalls change them (docs/abi.md). The caller's `x0..x8` are dead
//! while it waits: whatever ends the wait writes all of them, a message
//! (a bound notification's has no words: `x2..x7` are 0) or an error
//! with `x1..x8` 0 (`UserContext::end_wait_with`), the same on either
//! path; `TcbReadRegister` reads the thread's own earlier values there
//! while it waits.
//!
//! # Conditions (all must hold)
//! * an SVC whose caller has no work at all (its work word is zero), or
//!   no exit work and only syscall work that its no-entry-work mask
//!   excuses for this syscall (a filter whose verdict for it is a constant
//!   `Allow`): tested in the vector (`arch/src/cpu/vectors.s`);
//! * `Call` or `ReplyRecv` (exact numbers, tested in the vector, which
//!   has an entry for each), a register-only message (≤ 6 words) and no
//!   capability transfer;
//! * the kernel lock free at once (a contended lock takes the ordinary
//!   path, which waits for it) and the kernel's per-CPU view this CPU's;
//! * the capability is an endpoint with the right (`Call`: write,
//!   `ReplyRecv`: read);
//! * `Call`: a receiver already waits, owing no reply;
//!   `ReplyRecv`: the thread owes a reply to a caller still waiting for
//!   it, no sender waits on the endpoint (the receive will block), and
//!   the thread has no bound notification (whose bits would end the
//!   receive);
//! * the partner is at least as urgent as the caller and has affinity
//!   with this CPU, which is the caller's (one compare of the two
//!   `fast_key`s: `Thread::fast_partner_of`); it has no work but policy
//!   work (entry work only), an address space, and an ASID of the
//!   allocator's current generation (a stale one takes the ordinary path,
//!   which renews it).
//!
//! The slow path switches directly only to a partner at least as urgent as
//! every ready thread (seL4's possibleSwitchTo). The fast path gets that
//! for free: the caller has no exit work, so no pending reschedule, and
//! a running thread without one is at least as urgent as every ready
//! thread (`Kernel::check_invariants` checks it); a partner at least as
//! urgent as the caller is then at least as urgent as them too.
//!
//! # A trace exit stop answered "continue"
//! A tracer's `ReplyRecv` owes its reply to a thread waiting for an
//! answer (`BlockedOnAnswer`), not a reply. When that thread's kernel
//! message is a trace exit stop and the reply is "continue" (label 0, no
//! step bit; its words are not read), the answer changes nothing of the
//! thread but the message, which is taken, so the path answers it itself
//! if the thread then has nothing to do before it returns to EL0: its
//! work word is `TRACE` alone (no exit work, no single step), no stop is
//! owed (`trace.owed`), it has no stopped syscall, its SPSR.SS is clear
//! and MDSCR_EL1.SS is off on this CPU (`step_installed`). The tracer's
//! side is a reply's (no bound notification, the endpoint's read right,
//! no sender waiting), and the thread must be the one `Kernel::apply_ipc`
//! would switch to: of the tracer's CPU, with no more urgent thread ready
//! there (the run-queue bitmap above its priority is empty), which a
//! tracer more urgent than the thread it traces does not refuse. The
//! thread then gets all of its registers back from its context, `x0..x8`
//! too. A tracer whose endpoint was destroyed meanwhile is found at the
//! thread's next stop, as for every thread traced through it
//! (`Kernel::live_tracer`). In-guest case 83 answers the same exit stops
//! on both paths.
//!
//! The rseq counters (`rseq-counters`, test images) do not count its
//! returns to EL0, as they do not count the vector's inline `Null`.
//!
//! # A trace entry stop sent to a waiting tracer
//! The trace fast path (`microkernel/src/trace_fast_path.s`) takes a
//! syscall of a thread whose work word is `TRACE` alone and whose number
//! is below 64 (the vector's test: no exit work, no single step, no other
//! entry work), whose entry stop `Kernel::syscall_traced` would send at
//! once. It saves every register first (the thread waits at its stop, and
//! its tracer may read or change any of them), and sends the stop itself
//! when:
//! * the kernel lock is free at once and the kernel's view this CPU's;
//! * the thread has no rseq registration (a stop is an rseq event for it:
//!   `Thread::set_kernel_message`);
//! * its tracer's endpoint still lives (`Objects::resolve`, as
//!   `Kernel::resolved_tracer` asks it: the kind byte of the granule is an
//!   endpoint's, within object memory's, its header's state `Created` or
//!   `Live` and its serial the reference's);
//! * a receiver waits there (the head), owing no reply, with an IPC
//!   buffer (the stop's last seven words go there);
//! * the receiver is the thread `Kernel::apply_ipc` would switch to (of
//!   this CPU, no more urgent thread ready here: at once for one at least
//!   as urgent as the thread, which runs with no reschedule pending and
//!   so is at least as urgent as every ready thread, else by the run
//!   queue's bitmap; a thread another CPU has just made ready here, its
//!   reschedule interrupt not yet taken, is missed by the first way, as
//!   by the IPC fast path's test, and preempts the tracer as soon as the
//!   interrupt comes, at the eret), with no work but policy work and an
//!   ASID of the current generation.
//!
//! It then makes the changes of `Kernel::syscall_traced` and
//! `ipc::send_kernel_message`: the call kept as `stop_call` keeps it
//! (`CallSlot::TRACE_ENTRY` with `x0..x8` and the ESR), `trace.number`,
//! the stop as the kernel message (its number `x8`, its time CNTVCT_EL0),
//! the thread waiting for the answer the receiver now owes it, the
//! receiver out of the queue, the stop's words in its IPC buffer (through
//! the linear map) and in `x2..x7` with `x0` `Ok`, `x1` the entry stop's
//! info and `x8` the badge; and it switches as the IPC fast path does.
//! Anything else goes to the generic entry with nothing changed. Like
//! the other fast paths it does not count the syscall in the thread's
//! statistics. In-guest case 84 sends the same stops on both paths, and
//! one past a tracer that a more urgent ready thread keeps from the fast
//! path.
//!
//! # A policy request sent to a waiting server
//! The policy request fast path (`microkernel/src/policy_request_fast_path.s`)
//! takes a syscall of a thread whose work word is `POLICY` alone, whose
//! number (below 64) has its bit in the thread's `asked` mask: the
//! number's verdict is the constant `Notify` of the thread's one filter,
//! and the syscall carries no memory (`VerdictCache::asked_mask`), so its
//! request is the registers, the PC, the thread's number, a new cookie and
//! the type and badge of the capability `x0` names. It saves every
//! register first, as the trace fast path does (the thread waits for the
//! answer, and its call goes on from its context), and sends the request
//! itself when:
//! * the kernel lock is free at once and the kernel's view this CPU's;
//! * the thread has no rseq registration;
//! * its stack holds one filter, whose server's endpoint still lives
//!   (`Kernel::live_server`: the filter has a server, and the endpoint is
//!   resolved as the tracer's is);
//! * a receiver waits there that may take the request, as for the trace
//!   fast path's stop: at the head, owing no reply, with an IPC buffer,
//!   the thread `Kernel::apply_ipc` would switch to, with no work but
//!   policy work and an ASID of the current generation.
//!
//! It then makes the changes of `Kernel::syscall_judged`,
//! `Kernel::stop_call`, `Kernel::notify_policy_server` and
//! `ipc::send_kernel_message`: the call kept as `stop_call` keeps it
//! (`CallSlot::POLICY_ASK` with `x0..x8`, the ESR and, for a syscall that
//! names a capability, what the slot `x0` names holds and the serial count
//! at least 1), `trace.number`, the kernel's next cookie, the request as
//! the kernel message (filter 0, the capability's type and badge: none for
//! an empty slot, a slot past the CSpace or a syscall that names none),
//! the thread waiting for the answer, the receiver out of the queue, the
//! request's words in its IPC buffer and in `x2..x7` with `x0` `Ok`, `x1`
//! the request's info and `x8` the server's badge; and it switches as the
//! IPC fast path does. Anything else goes to the generic entry with
//! nothing changed. Like the other fast paths it does not count the
//! syscall in the thread's statistics. In-guest case 85 sends the same
//! requests on both paths.

/// Offsets (in bytes) and values the assembly uses, named as it names
/// them: the IPC fast path's, and the yield's and notification's
/// (`yield_fast_path.s`, `notification_fast_path.s`, which leave the
/// vector the same way and switch threads as this path does). Kernel offsets are from the `Kernel` value's first byte (the
/// binary adds where the kernel lies in its locked state); thread offsets
/// from a thread's first byte, which is its saved registers (`SP_EL1`
/// while it runs); endpoint offsets from the endpoint record's first
/// byte (`base + granule << GRANULE_SHIFT`).
pub mod layout {
    use crate::cap::word::{OBJECT_SHIFT, RIGHTS_SHIFT, TYPE_MASK};
    use crate::cap::{Capability, Memory, ObjectHeader, Objects, Slot};
    use crate::endpoint_queue::{EndpointQueue, QueueLinks, Waiting};
    use crate::kernel::Kernel;
    use crate::stopped_call::{CallSlot, JudgedCapability, StoppedCall};
    use crate::thread::{kernel_message_tag, state_tag, PolicyRequest, Thread, TraceStop};
    use abi::cap::{CapType, Rights};
    use arch::mmu::AsidAllocator;
    use arch::object_memory::{kind, GRANULE};
    use core::mem::{offset_of, size_of};
    use entry::WorkFlags;

    /// The token of the CPU whose view the kernel holds.
    pub const KERNEL_CORE_TOKEN: usize = offset_of!(Kernel, core_token);
    /// CPU 0's run queue's bitmap of priorities with a ready thread (four
    /// words, bit p of word p / 64); a thread's own word is its
    /// `run_queue_word` bytes further.
    pub const KERNEL_RUN_QUEUE_NONEMPTY: usize = offset_of!(Kernel, run_queues)
        + offset_of!(crate::kernel::cores::CoreQueue, ready)
        + crate::scheduler::RunQueue::NONEMPTY_OFFSET;
    /// CPU 0's run queue's first thread of each priority (optional
    /// thread ids, by priority); CPU n's lie `n × CORE_QUEUE_BYTES`
    /// further, which is its threads' `run_queue_word` with the low 12
    /// bits cleared.
    pub const KERNEL_RUN_QUEUE_HEADS: usize = KERNEL_RUN_QUEUE_NONEMPTY
        - crate::scheduler::RunQueue::NONEMPTY_OFFSET
        + crate::scheduler::RunQueue::HEADS_OFFSET;
    /// CPU 0's run queue's last thread of each priority.
    pub const KERNEL_RUN_QUEUE_TAILS: usize = KERNEL_RUN_QUEUE_NONEMPTY
        - crate::scheduler::RunQueue::NONEMPTY_OFFSET
        + crate::scheduler::RunQueue::TAILS_OFFSET;
    // `run_queue_word & !0xfff` is the CPU's queue's offset: the CPU's
    // share of it, with the word's index in the bitmap (at most 24) below.
    const _: () = assert!(crate::scheduler::CORE_QUEUE_BYTES == 4096);
    /// The thread that last ran; the current thread follows it (one pair
    /// store writes both).
    pub const KERNEL_LAST_RAN: usize = offset_of!(Kernel, last_ran);
    /// The current thread; the FP/SIMD registers' owner follows it (one
    /// pair load reads both).
    pub const KERNEL_CURRENT: usize = offset_of!(Kernel, current);
    /// The thread whose FP/SIMD registers the CPU holds.
    pub const KERNEL_FP_OWNER: usize = offset_of!(Kernel, fp_owner);
    const _: () = assert!(
        KERNEL_CURRENT == KERNEL_LAST_RAN + 4
            && KERNEL_FP_OWNER == KERNEL_CURRENT + 4
            && KERNEL_LAST_RAN.is_multiple_of(4)
    );
    /// Object memory's base (granule 0's address).
    pub const KERNEL_MEMORY_BASE: usize =
        offset_of!(Kernel, objects) + Objects::MEMORY_OFFSET + Memory::BASE_OFFSET;
    /// The ASID allocator's generation.
    pub const KERNEL_ASID_GENERATION: usize =
        offset_of!(Kernel, asids) + AsidAllocator::GENERATION_OFFSET;
    // A thread without a space has generation 0, which must be no
    // generation's: the assembly's one compare refuses it.
    const _: () = assert!(AsidAllocator::FIRST_GENERATION != 0);

    /// `granule << GRANULE_SHIFT` is a granule's offset in object memory.
    pub const GRANULE_SHIFT: u32 = GRANULE.trailing_zeros();
    const _: () = assert!(1 << GRANULE_SHIFT == GRANULE);
    /// Where a TCB record's thread starts.
    pub const TCB_BODY: usize = Memory::body_offset::<kind::Tcb>();

    /// A thread's life-cycle state: its tag byte.
    pub const THREAD_STATE: usize = Thread::STATE_OFFSET;
    /// `BlockedOnReceive`'s endpoint, in the state (`repr(u8)`: the tag,
    /// then the variant's fields as a `repr(C)` struct).
    pub const THREAD_STATE_ENDPOINT: usize = THREAD_STATE + 4;
    // The assembly writes tag and endpoint with one 8-byte store.
    const _: () = assert!(THREAD_STATE.is_multiple_of(8));
    /// `ThreadState::Ready`'s tag.
    pub const STATE_READY: u8 = state_tag::READY;
    /// `ThreadState::Running`'s tag.
    pub const STATE_RUNNING: u8 = state_tag::RUNNING;
    /// `ThreadState::BlockedOnReceive`'s tag.
    pub const STATE_BLOCKED_ON_RECEIVE: u8 = state_tag::BLOCKED_ON_RECEIVE;
    /// `ThreadState::BlockedOnReply`'s tag.
    pub const STATE_BLOCKED_ON_REPLY: u8 = state_tag::BLOCKED_ON_REPLY;
    /// `ThreadState::BlockedOnAnswer`'s tag.
    pub const STATE_BLOCKED_ON_ANSWER: u8 = state_tag::BLOCKED_ON_ANSWER;
    /// `kernel_message`'s tag byte: `KERNEL_MESSAGE_NONE` for none, else
    /// the message's (`kernel_message_tag`).
    pub const THREAD_KERNEL_MESSAGE: usize = Thread::KERNEL_MESSAGE_OFFSET;
    /// The tag byte of a thread's `kernel_message` when it has none (the
    /// value the language gives `None` of a `repr(u8)` enum whose tags are
    /// 1 to 3: `fast_paths.rs` checks it at build time).
    pub const KERNEL_MESSAGE_NONE: u8 = 0;
    /// `KernelMessage::TraceStop`'s tag.
    pub const KERNEL_MESSAGE_TRACE_STOP: u8 = kernel_message_tag::TRACE_STOP;
    /// A trace stop's kind (a `StopKind` byte), from the message's tag
    /// (`repr(u8)`: the variant's fields follow the tag as in a `repr(C)`
    /// struct, so the `TraceStop` lies at its alignment; checked at build
    /// time in `fast_paths.rs`).
    pub const TRACE_STOP_KIND: usize =
        core::mem::align_of::<TraceStop>() + offset_of!(TraceStop, kind);
    /// A trace stop's number, then its time (two words, from the
    /// message's tag; checked at build time in `fast_paths.rs`).
    pub const TRACE_STOP_NUMBER: usize =
        core::mem::align_of::<TraceStop>() + offset_of!(TraceStop, number);
    /// A trace stop's time (CNTVCT_EL0 when the thread stopped).
    pub const TRACE_STOP_TIME: usize =
        core::mem::align_of::<TraceStop>() + offset_of!(TraceStop, time);
    /// The message info of an entry stop (`abi::trace::StopMessage::info`:
    /// its label above the length's seven bits and the capability count's
    /// two; a host test checks it against the message's).
    pub const STOP_ENTRY_INFO: u64 =
        (abi::trace::TRACE_ENTRY << 9) | abi::trace::TRACE_STOP_WORDS as u64;
    /// `trace.number` (a word: the number the syscall in progress goes
    /// with, word 0 of its exit stop).
    pub const THREAD_TRACE_NUMBER: usize = Thread::TRACE_NUMBER_OFFSET;
    /// `tracer` (an `Option<(ObjectRef, u64)>`: the binary finds its tag
    /// byte and its payload's words at build time).
    pub const THREAD_TRACER: usize = Thread::TRACER_OFFSET;
    /// `ipc_buffer` (an `Option<u64>`: the binary finds its tag byte and
    /// its word at build time).
    pub const THREAD_IPC_BUFFER: usize = Thread::IPC_BUFFER_OFFSET;
    /// `number` (a `u32`: word 9 of a trace stop).
    pub const THREAD_NUMBER: usize = Thread::NUMBER_OFFSET;
    /// A stopped call's registers `x0..x8`, from the thread's first byte
    /// (`call` is a `CallSlot`, `repr(u8)`: the `StoppedCall` follows its
    /// tag at its alignment; checked at build time in `fast_paths.rs`).
    pub const THREAD_CALL_REGS: usize =
        Thread::CALL_OFFSET + core::mem::align_of::<StoppedCall>() + offset_of!(StoppedCall, regs);
    /// A stopped call's ESR.
    pub const THREAD_CALL_ESR: usize =
        Thread::CALL_OFFSET + core::mem::align_of::<StoppedCall>() + offset_of!(StoppedCall, esr);
    /// The bytes of a thread's `call` (a whole `CallSlot`, which the
    /// trace fast path copies from `CallSlot::TRACE_ENTRY` in pairs of
    /// words).
    pub const CALL_SLOT_BYTES: usize = size_of::<CallSlot>();
    const _: () =
        assert!(CALL_SLOT_BYTES.is_multiple_of(8) && Thread::CALL_OFFSET.is_multiple_of(8));
    const _: () = assert!(THREAD_CALL_REGS.is_multiple_of(8) && THREAD_CALL_ESR.is_multiple_of(8));
    /// Object memory's `kinds` (a slice: the address of granule 0's kind
    /// byte, then the number of granules).
    pub const KERNEL_KINDS: usize =
        offset_of!(Kernel, objects) + Objects::MEMORY_OFFSET + Memory::KINDS_OFFSET;
    /// The kind byte of an endpoint record's first granule.
    pub const KIND_ENDPOINT: u8 = Memory::kind_tag::<kind::Endpoint>();
    /// An object header's state (a byte), from its record's first byte
    /// (`ObjectMemory`'s records are `repr(C)`, the header first).
    pub const HEADER_STATE: usize = offset_of!(ObjectHeader, state);
    /// An object header's serial.
    pub const HEADER_SERIAL: usize = offset_of!(ObjectHeader, serial);
    // The trace fast path reads the thread's number as a `u32`, writes
    // `trace.number` and compares an object header's serial as words.
    const fn width<T, F>(_field: fn(&T) -> &F) -> usize {
        size_of::<F>()
    }
    const _: () = assert!(width(|t: &Thread| &t.number) == 4);
    const _: () = assert!(width(|t: &Thread| &t.trace.number) == 8);
    const _: () = assert!(width(|h: &ObjectHeader| &h.serial) == 8);
    /// The largest `ObjectState` byte of a live object (`Created` and
    /// `Live`, the first two: checked at build time in `fast_paths.rs`).
    pub const OBJECT_LIVE_MAX: u8 = 1;
    /// `KernelMessage::PolicyRequest`'s tag.
    pub const KERNEL_MESSAGE_POLICY_REQUEST: u8 = kernel_message_tag::POLICY_REQUEST;
    /// A policy request's filter (a byte), from the message's tag (as
    /// `TRACE_STOP_KIND`; checked at build time in `fast_paths.rs`).
    pub const POLICY_REQUEST_FILTER: usize =
        core::mem::align_of::<PolicyRequest>() + offset_of!(PolicyRequest, filter);
    /// A policy request's object type (a word).
    pub const POLICY_REQUEST_OBJECT_TYPE: usize =
        core::mem::align_of::<PolicyRequest>() + offset_of!(PolicyRequest, object_type);
    /// A policy request's badge (a word).
    pub const POLICY_REQUEST_BADGE: usize =
        core::mem::align_of::<PolicyRequest>() + offset_of!(PolicyRequest, badge);
    /// A policy request's cookie (a word).
    pub const POLICY_REQUEST_COOKIE: usize =
        core::mem::align_of::<PolicyRequest>() + offset_of!(PolicyRequest, cookie);
    /// The message info of a policy request
    /// (`abi::policy_request::PolicyRequest::info`: its label above the
    /// length's seven bits and the capability count's two; a host test
    /// checks it against the request's).
    pub const POLICY_REQUEST_INFO: u64 = (abi::policy_request::POLICY_REQUEST_LABEL << 9)
        | abi::policy_request::POLICY_REQUEST_WORDS as u64;
    /// The serial numbers given out so far (a word: `Objects::newest_serial`).
    pub const KERNEL_NEWEST_SERIAL: usize = offset_of!(Kernel, objects) + Objects::SERIALS_OFFSET;
    /// A stopped call's judged capability (an `Option<JudgedCapability>`,
    /// `None` exactly when its serial count, never 0 in a `Some`, is 0):
    /// the capability's word, its badge, and the serial count.
    pub const THREAD_CALL_CAPABILITY_WORD: usize =
        THREAD_CALL_CAPABILITY + offset_of!(JudgedCapability, capability) + Capability::WORD_OFFSET;
    /// (See `THREAD_CALL_CAPABILITY_WORD`.)
    pub const THREAD_CALL_CAPABILITY_BADGE: usize = THREAD_CALL_CAPABILITY
        + offset_of!(JudgedCapability, capability)
        + Capability::BADGE_OFFSET;
    /// (See `THREAD_CALL_CAPABILITY_WORD`.)
    pub const THREAD_CALL_CAPABILITY_SERIAL: usize =
        THREAD_CALL_CAPABILITY + offset_of!(JudgedCapability, newest_serial);
    /// A stopped call's judged capability (its first byte).
    pub const THREAD_CALL_CAPABILITY: usize = Thread::CALL_OFFSET
        + core::mem::align_of::<StoppedCall>()
        + offset_of!(StoppedCall, capability);
    const _: () = assert!(
        size_of::<Option<JudgedCapability>>() == size_of::<JudgedCapability>()
            && THREAD_CALL_CAPABILITY_WORD.is_multiple_of(8)
            && THREAD_CALL_CAPABILITY_BADGE.is_multiple_of(8)
            && THREAD_CALL_CAPABILITY_SERIAL.is_multiple_of(8)
    );
    /// The last policy request's cookie (a word; each request's is one
    /// more).
    pub const KERNEL_POLICY_COOKIE: usize = offset_of!(Kernel, policy_cookie);
    /// `filters` (a `heapless::Vec<AttachedFilter, _>`: the binary finds
    /// its length and its first filter's server at build time).
    pub const THREAD_FILTERS: usize = Thread::FILTERS_OFFSET;
    const _: () = assert!(width(|p: &PolicyRequest| &p.filter) == 1);
    const _: () = assert!(width(|k: &Kernel| &k.policy_cookie) == 8);
    /// `trace.owed` (a byte: the stops still owed).
    pub const THREAD_TRACE_OWED: usize = Thread::TRACE_OWED_OFFSET;
    /// The work word of a thread traced and nothing else.
    pub const WORK_TRACE: u64 = WorkFlags::TRACE.bits();
    /// `step_installed`: MDSCR_EL1.SS is on for this CPU (a bool).
    pub const KERNEL_STEP_INSTALLED: usize = offset_of!(Kernel, step_installed);
    /// SPSR.SS, the software-step bit of a saved SPSR.
    pub const SPSR_SS_BIT: u32 = arch::context::SPSR_SOFTWARE_STEP.trailing_zeros();
    const _: () = assert!(arch::context::SPSR_SOFTWARE_STEP.is_power_of_two());
    /// `fast_key` (a `u16`).
    pub const THREAD_FAST_KEY: usize = Thread::FAST_KEY_OFFSET;
    /// `run_queue_word` (a `u32`): the offset from CPU 0's bitmap of the
    /// word with the thread's priority's bit in its CPU's.
    pub const THREAD_RUN_QUEUE_WORD: usize = Thread::RUN_QUEUE_WORD_OFFSET;
    const _: () =
        assert!(crate::scheduler::CORE_QUEUE_BYTES == size_of::<crate::kernel::cores::CoreQueue>());
    /// `priority` (a byte).
    pub const THREAD_PRIORITY: usize = Thread::PRIORITY_OFFSET;
    /// The thread's count of yields (`test-calls` images only; 0
    /// elsewhere, where the assembly does not count).
    pub const THREAD_YIELDS: usize = Thread::YIELDS_OFFSET;
    /// The thread queued before it, and after it (one 8-byte word).
    pub const THREAD_QUEUE_PREVIOUS: usize =
        Thread::QUEUE_LINKS_OFFSET + QueueLinks::PREVIOUS_OFFSET;
    /// The thread queued after it.
    pub const THREAD_QUEUE_NEXT: usize = Thread::QUEUE_LINKS_OFFSET + QueueLinks::NEXT_OFFSET;
    const _: () = assert!(
        THREAD_QUEUE_NEXT == THREAD_QUEUE_PREVIOUS + 4 && THREAD_QUEUE_PREVIOUS.is_multiple_of(8)
    );
    /// The thread before it in its priority's run queue, then the one
    /// after it (one 8-byte word).
    pub const THREAD_RUN_PREVIOUS: usize =
        Thread::RUN_LINKS_OFFSET + crate::scheduler::RunLinks::PREVIOUS_OFFSET;
    /// The thread after it in its priority's run queue.
    pub const THREAD_RUN_NEXT: usize =
        Thread::RUN_LINKS_OFFSET + crate::scheduler::RunLinks::NEXT_OFFSET;
    const _: () = assert!(
        THREAD_RUN_NEXT == THREAD_RUN_PREVIOUS + 4 && THREAD_RUN_PREVIOUS.is_multiple_of(8)
    );
    /// `call`'s tag byte: 0 when the thread has no stopped syscall
    /// (`CallSlot::Empty`).
    pub const THREAD_CALL: usize = Thread::CALL_OFFSET;
    /// `reply_to` (0: none).
    pub const THREAD_REPLY_TO: usize = Thread::REPLY_TO_OFFSET;
    /// `reply_from` (0: none).
    pub const THREAD_REPLY_FROM: usize = Thread::REPLY_FROM_OFFSET;
    /// `bound_notification`: the binary checks the first word is 0
    /// exactly when it is `None`.
    pub const THREAD_BOUND_NOTIFICATION: usize = Thread::BOUND_NOTIFICATION_OFFSET;
    /// The CSpace's first slot, then its number of slots (one 8-byte
    /// load).
    pub const THREAD_CSPACE_FIRST: usize = Thread::CSPACE_FIRST_OFFSET;
    const _: () = assert!(
        Thread::CSPACE_SLOTS_OFFSET == THREAD_CSPACE_FIRST + 4
            && THREAD_CSPACE_FIRST.is_multiple_of(8)
    );
    /// `ttbr0`, then `asid_generation` (one pair load).
    pub const THREAD_TTBR0: usize = Thread::TTBR0_OFFSET;
    const _: () = assert!(
        Thread::ASID_GENERATION_OFFSET == THREAD_TTBR0 + 8
            && THREAD_TTBR0.is_multiple_of(8)
            && TCB_BODY + THREAD_TTBR0 <= 504
    );
    /// `user_dispatch` (an `Option<UserDispatchConfig>`): the binary
    /// finds where its payload's words lie in it (the user-dispatch fast
    /// path, `user_dispatch_fast_path.s`, reads them only for a thread
    /// whose work is `USER_DISPATCH`, which is set exactly while it is
    /// `Some`).
    pub const THREAD_USER_DISPATCH: usize = offset_of!(Thread, user_dispatch);
    /// `register_program` (`filter::RegisterProgram`): each syscall's
    /// first comparison (a byte per number), and the comparisons (the
    /// policy fast path, `policy_fast_path.s`, walks them for a number
    /// whose `register_judged` bit is set). Within an `add`'s 12-bit
    /// immediate of the thread.
    pub const THREAD_PROGRAM_START: usize =
        offset_of!(Thread, register_program) + crate::filter::RegisterProgram::START_OFFSET;
    /// (See `THREAD_PROGRAM_START`.)
    pub const THREAD_PROGRAM_COMPARISONS: usize =
        offset_of!(Thread, register_program) + crate::filter::RegisterProgram::COMPARISONS_OFFSET;
    const _: () = assert!(THREAD_PROGRAM_START < 4096 && THREAD_PROGRAM_COMPARISONS < 4096);
    /// The work bits a fast partner may have: policy work only (entry
    /// work), so this mask of the others must find none.
    pub const WORK_NOT_POLICY: u64 = !WorkFlags::POLICY.bits();

    /// `slot << SLOT_SHIFT` is a CNode slot's offset in object memory
    /// (slot ids count slots from granule 0).
    pub const SLOT_SHIFT: u32 = size_of::<Slot>().trailing_zeros();
    const _: () = assert!(1 << SLOT_SHIFT == size_of::<Slot>());
    /// A slot's capability word, then its badge (one pair load).
    pub const SLOT_CAP_WORD: usize = offset_of!(Slot, cap) + Capability::WORD_OFFSET;
    const _: () = assert!(offset_of!(Slot, cap) + Capability::BADGE_OFFSET == SLOT_CAP_WORD + 8);
    /// The type field's bits in the capability word.
    pub const CAP_TYPE_MASK: u64 = TYPE_MASK;
    /// The type field of an endpoint capability.
    pub const CAP_ENDPOINT: u64 = CapType::Endpoint.raw() as u64;
    /// The bit of the read right in the capability word.
    pub const CAP_READ_BIT: u32 = RIGHTS_SHIFT + Rights::READ.raw().trailing_zeros();
    /// The bit of the write right.
    pub const CAP_WRITE_BIT: u32 = RIGHTS_SHIFT + Rights::WRITE.raw().trailing_zeros();
    /// The object field's first bit (32 bits: the granule).
    pub const CAP_OBJECT_SHIFT: u32 = OBJECT_SHIFT;

    /// The type field of a notification capability.
    pub const CAP_NOTIFICATION: u64 = CapType::Notification.raw() as u64;
    /// The `badged` bit in the capability word.
    pub const CAP_BADGED_BIT: u32 = crate::cap::word::BADGED_BIT;

    /// A notification record's word.
    pub const NOTIFICATION_WORD: usize = Memory::body_offset::<kind::Notification>()
        + offset_of!(crate::ipc::notification::Notification, word);
    /// Its waiters' queue: head, then tail, then who waits (receivers,
    /// the only kind a notification queues).
    pub const NOTIFICATION_HEAD: usize = Memory::body_offset::<kind::Notification>()
        + offset_of!(crate::ipc::notification::Notification, waiters)
        + EndpointQueue::HEAD_OFFSET;
    /// The waiters' tail.
    pub const NOTIFICATION_TAIL: usize =
        NOTIFICATION_HEAD - EndpointQueue::HEAD_OFFSET + EndpointQueue::TAIL_OFFSET;
    /// Who waits (the low byte of a `Waiting` word, all the assembly reads
    /// and writes).
    pub const NOTIFICATION_WAITING: usize =
        NOTIFICATION_HEAD - EndpointQueue::HEAD_OFFSET + EndpointQueue::WAITING_OFFSET;
    /// The thread it is bound to (0: none).
    pub const NOTIFICATION_BOUND: usize = Memory::body_offset::<kind::Notification>()
        + offset_of!(crate::ipc::notification::Notification, bound);
    /// `ThreadState::BlockedOnNotification`'s tag (the notification
    /// follows at offset 4, as `BlockedOnReceive`'s endpoint).
    pub const STATE_BLOCKED_ON_NOTIFICATION: u8 = state_tag::BLOCKED_ON_NOTIFICATION;

    /// An endpoint record's queue head, then tail (one pair load).
    pub const ENDPOINT_HEAD: usize =
        Memory::body_offset::<kind::Endpoint>() + EndpointQueue::HEAD_OFFSET;
    /// The queue's tail.
    pub const ENDPOINT_TAIL: usize =
        Memory::body_offset::<kind::Endpoint>() + EndpointQueue::TAIL_OFFSET;
    // Head and tail are one pair for the assembly's pair stores (an
    // endpoint's queue and a notification's alike).
    const _: () = assert!(ENDPOINT_TAIL == ENDPOINT_HEAD + 4);
    const _: () = assert!(NOTIFICATION_TAIL == NOTIFICATION_HEAD + 4);
    /// Who waits (the low byte of a `Waiting` word, all the assembly reads
    /// and writes).
    pub const ENDPOINT_WAITING: usize =
        Memory::body_offset::<kind::Endpoint>() + EndpointQueue::WAITING_OFFSET;
    /// `Waiting::Nobody` (0: one `strb wzr` writes it).
    pub const WAITING_NOBODY: u8 = Waiting::Nobody as u8;
    const _: () = assert!(WAITING_NOBODY == 0);
    /// `Waiting::Senders`.
    pub const WAITING_SENDERS: u8 = Waiting::Senders as u8;
    /// `Waiting::Receivers`.
    pub const WAITING_RECEIVERS: u8 = Waiting::Receivers as u8;
    /// The bit only `Waiting::Senders` has: the assembly tests one bit
    /// of the byte (`tbnz`, `tbz`) instead of comparing it.
    pub const WAITING_SENDERS_BIT: u32 = WAITING_SENDERS.trailing_zeros();
    /// The bit only `Waiting::Receivers` has.
    pub const WAITING_RECEIVERS_BIT: u32 = WAITING_RECEIVERS.trailing_zeros();
    const _: () = assert!(
        WAITING_SENDERS == 1 << WAITING_SENDERS_BIT
            && WAITING_RECEIVERS == 1 << WAITING_RECEIVERS_BIT
            && WAITING_SENDERS_BIT != WAITING_RECEIVERS_BIT
    );
}

#[cfg(test)]
mod tests;
