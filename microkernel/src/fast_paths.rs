//! Assembles the fast paths that leave the vector for assembly of their
//! own, the IPC fast path (`ipc_fast_path.s`), the yield fast path
//! (`yield_fast_path.s`), the notification fast path
//! (`notification_fast_path.s`), the user-dispatch fast path
//! (`user_dispatch_fast_path.s`), the policy fast path
//! (`policy_fast_path.s`), the trace fast path (`trace_fast_path.s`) and
//! the policy request fast path (`policy_request_fast_path.s`, which
//! takes the trace fast path's steps), in one block after
//! `fast_path_common.s` (the values they use and the macros for the steps
//! they share: the save, the lock, the next thread's checks, the switch),
//! with the offsets and values `microkernel::kernel::fast_path::layout`
//! computes, and checks at build time the layouts the language leaves to
//! the compiler that the assembly relies on (the policy request fast
//! path's in `policy_request`).

use crate::STATE;
use abi::trace::StopKind;
use arch::cpu::kernel_cell::KernelCell;
use arch::cpu::registers::{CPACR_FPEN_EL0_SHIFT, CPACR_FPEN_TRAP_EL0};
use arch::cpu::vector_constants as ctx;
use core::mem::{align_of, offset_of, size_of, MaybeUninit};
use microkernel::cap::ObjectId;
use microkernel::filter::Comparison;
use microkernel::kernel::fast_path::layout as l;
use microkernel::stopped_call::CallSlot;
use microkernel::thread::{
    kernel_message_tag, state_tag, KernelMessage, Thread, ThreadId, ThreadState, TraceStop,
};

/// Where the kernel lies from the locked state's lock word.
const KERNEL: usize =
    KernelCell::<crate::KernelState>::VALUE_OFFSET + offset_of!(crate::KernelState, kernel);
// `lock_at_once` loads the lock word and the view's token as one 16-byte
// aligned pair.
const _: () = assert!(
    KERNEL + l::KERNEL_CORE_TOKEN == 8
        && align_of::<KernelCell<crate::KernelState>>().is_multiple_of(16)
);

/// The first 4-byte word of an `Option<ObjectId>` as it lies in memory.
const fn first_word(value: Option<ObjectId>) -> u32 {
    // SAFETY: an `Option<ObjectId>` is 8 bytes (checked below) and any
    // bytes are valid `MaybeUninit`s; only the first word is read as
    // initialised, which const evaluation refuses to build if it is not
    // (a layout with the tag elsewhere).
    let words: [MaybeUninit<u32>; 2] = unsafe { core::mem::transmute(value) };
    // SAFETY: see above.
    unsafe { words[0].assume_init() }
}
// `ldr w, [thread, #T_BOUND_NOTIFICATION]; cbnz`: 0 exactly for `None`.
const _: () = assert!(size_of::<Option<ObjectId>>() == 8);
const _: () = assert!(first_word(None) == 0);
const _: () = assert!(first_word(Some(ObjectId(0))) != 0 && first_word(Some(ObjectId(!0))) != 0);

/// A thread state's bytes: the tag, and `BlockedOnReceive`'s endpoint or
/// `BlockedOnNotification`'s notification.
const fn state_bytes(state: ThreadState) -> (u8, u32) {
    const SIZE: usize = size_of::<ThreadState>();
    // SAFETY: any bytes are valid `MaybeUninit`s; the tag byte is always
    // initialised (`repr(u8)`), the endpoint's only for the variant that
    // has it, and const evaluation refuses to build a read of an
    // uninitialised byte.
    let bytes: [MaybeUninit<u8>; SIZE] = unsafe { core::mem::transmute(state) };
    // SAFETY: see above.
    let tag = unsafe { bytes[0].assume_init() };
    let endpoint = match state {
        // SAFETY: see above: the variant's endpoint field is at offset 4.
        ThreadState::BlockedOnReceive { .. } | ThreadState::BlockedOnNotification { .. } => unsafe {
            u32::from_le_bytes([
                bytes[4].assume_init(),
                bytes[5].assume_init(),
                bytes[6].assume_init(),
                bytes[7].assume_init(),
            ])
        },
        _ => 0,
    };
    (tag, endpoint)
}
const _: () = assert!(state_bytes(ThreadState::Running).0 == state_tag::RUNNING);
const _: () = assert!(state_bytes(ThreadState::BlockedOnReply).0 == state_tag::BLOCKED_ON_REPLY);
const _: () = {
    let (tag, endpoint) = state_bytes(ThreadState::BlockedOnReceive {
        endpoint: ObjectId(0x1234_5678),
    });
    assert!(tag == state_tag::BLOCKED_ON_RECEIVE && endpoint == 0x1234_5678);
    assert!(l::THREAD_STATE_ENDPOINT == l::THREAD_STATE + 4);
    let (tag, notification) = state_bytes(ThreadState::BlockedOnNotification {
        notification: ObjectId(0x8765_4321),
    });
    assert!(tag == state_tag::BLOCKED_ON_NOTIFICATION && notification == 0x8765_4321);
};
// `ldrb w, [thread, #T_CALL]; cbnz`: a thread's `call` tag byte is 0
// exactly when it has no stopped syscall (`repr(u8)` fixes the tag's
// place and values; this checks the one the assembly relies on).
const fn call_tag(call: CallSlot) -> u8 {
    // SAFETY: any bytes are valid `MaybeUninit`s, and the tag byte of a
    // `repr(u8)` enum is always initialised.
    let bytes: [MaybeUninit<u8>; size_of::<CallSlot>()] = unsafe { core::mem::transmute(call) };
    // SAFETY: see above.
    unsafe { bytes[0].assume_init() }
}
const _: () = assert!(call_tag(CallSlot::Empty) == 0);
// An `Option<ThreadId>` (run-queue heads, tails and links, `current`) is
// 4 bytes and 0 exactly for none.
const _: () = assert!(size_of::<Option<ThreadId>>() == 4);
// SAFETY: 4 bytes each way (checked above); every bit pattern is a `u32`.
const _: () = assert!(unsafe { core::mem::transmute::<Option<ThreadId>, u32>(None) } == 0);

/// The bytes of a thread's `kernel_message` the IPC fast path reads and
/// writes: its tag byte, and a trace stop's kind byte (read only of a
/// trace stop).
const fn kernel_message_bytes(message: Option<KernelMessage>) -> (u8, Option<u8>) {
    const SIZE: usize = size_of::<Option<KernelMessage>>();
    // SAFETY: any bytes are valid `MaybeUninit`s; only the bytes the
    // assembly reads are read as initialised, and const evaluation
    // refuses to build a read of an uninitialised byte (a layout with
    // the tag or the kind elsewhere, or no tag byte for `None`).
    let bytes: [MaybeUninit<u8>; SIZE] = unsafe { core::mem::transmute(message) };
    // SAFETY: see above.
    let tag = unsafe { bytes[0].assume_init() };
    let kind = match message {
        // SAFETY: see above.
        Some(KernelMessage::TraceStop(_)) => {
            Some(unsafe { bytes[l::TRACE_STOP_KIND].assume_init() })
        }
        _ => None,
    };
    (tag, kind)
}
/// A trace stop of `kind`.
const fn trace_stop(kind: StopKind) -> Option<KernelMessage> {
    Some(KernelMessage::TraceStop(TraceStop {
        kind,
        number: 0x5701,
        time: 0x5702,
    }))
}
// `ldrb w, [thread, #T_KERNEL_MESSAGE]`: `KERNEL_MESSAGE_NONE` exactly
// for none, the variant's tag for each message; `strb` of
// `KERNEL_MESSAGE_NONE` there makes it none. A trace stop's kind byte
// tells an exit stop from the others.
const _: () = {
    assert!(kernel_message_bytes(None).0 == l::KERNEL_MESSAGE_NONE);
    let request = microkernel::thread::PolicyRequest {
        filter: 0,
        object_type: 0,
        badge: 0,
        cookie: 0,
    };
    let (tag, _) = kernel_message_bytes(Some(KernelMessage::PolicyRequest(request)));
    assert!(tag == kernel_message_tag::POLICY_REQUEST && tag != l::KERNEL_MESSAGE_NONE);
    let (tag, exit) = kernel_message_bytes(trace_stop(StopKind::Exit));
    assert!(tag == l::KERNEL_MESSAGE_TRACE_STOP && tag != l::KERNEL_MESSAGE_NONE);
    let (entry, step) = (
        kernel_message_bytes(trace_stop(StopKind::Entry)).1,
        kernel_message_bytes(trace_stop(StopKind::Step)).1,
    );
    match (exit, entry, step) {
        (Some(exit), Some(entry), Some(step)) => {
            assert!(exit == STOP_KIND_EXIT && entry != exit && step != exit)
        }
        _ => panic!("a trace stop has a kind byte"),
    }
};
/// An exit stop's kind byte (`StopKind::Exit`'s, which has no `repr`:
/// `kernel_message_bytes` checks the byte against the others').
const STOP_KIND_EXIT: u8 = StopKind::Exit as u8;

/// An entry stop's kind byte (`StopKind::Entry`'s: checked against the
/// others' with `kernel_message_bytes` below).
const STOP_KIND_ENTRY: u8 = StopKind::Entry as u8;
const _: () = {
    let (tag, kind) = kernel_message_bytes(trace_stop(StopKind::Entry));
    assert!(tag == l::KERNEL_MESSAGE_TRACE_STOP);
    match kind {
        Some(kind) => assert!(kind == STOP_KIND_ENTRY && kind != STOP_KIND_EXIT),
        None => panic!("a trace stop has a kind byte"),
    }
};

// The trace fast path delivers a stop's 13 words as
// `abi::trace::StopMessage::encode` lays them out: the number and
// `x0..x4` in the tracer's `x2..x7`, then `x5`, `x8`, the PC, the
// thread's number, `x6`, `x7` and the time in its IPC buffer's words
// 6..12. (`kernel::fast_path::layout` checks the widths of the fields
// it reads and writes.)
const _: () = {
    use abi::trace::StopMessage;
    let words = StopMessage {
        kind: StopKind::Entry,
        number: 0x5700,
        regs: [
            0x5710, 0x5711, 0x5712, 0x5713, 0x5714, 0x5715, 0x5716, 0x5717, 0x5718,
        ],
        pc: 0x5720,
        thread: 0x5730,
        time: 0x5740,
    }
    .encode();
    let expected = [
        0x5700, 0x5710, 0x5711, 0x5712, 0x5713, 0x5714, 0x5715, 0x5718, 0x5720, 0x5730, 0x5716,
        0x5717, 0x5740,
    ];
    assert!(words.len() == expected.len() && abi::REGISTER_MESSAGE_WORDS == 6);
    let mut i = 0;
    while i < words.len() {
        assert!(words[i] == expected[i]);
        i += 1;
    }
};

/// The first byte of an `Option` (its tag, 0 for `None` and 1 for
/// `Some`, when the option has a byte of its own for it: checked with
/// each use), and its words (`$words` of them, the payload's read only
/// at `$marked`, which must hold `$marks`), for the options whose `None`
/// the trace fast path tests with one load of their first word.
macro_rules! option_bytes {
    ($option:ty, $value:expr) => {{
        const SIZE: usize = size_of::<$option>();
        // SAFETY: any bytes are valid `MaybeUninit`s; only the first is
        // read as initialised, and const evaluation refuses to build a
        // read of an uninitialised byte.
        let bytes: [core::mem::MaybeUninit<u8>; SIZE] = unsafe { core::mem::transmute($value) };
        // SAFETY: see above.
        unsafe { bytes[0].assume_init() }
    }};
}
/// The word (a `u64`, or a `u32` with `u32`) at byte `offset` of a
/// value (the payload's, read only where const evaluation finds it
/// initialised).
macro_rules! option_word {
    ($option:ty, $value:expr, $offset:expr) => {
        option_word!($option, $value, $offset, u64)
    };
    ($option:ty, $value:expr, $offset:expr, $word:ty) => {{
        const WORDS: usize = size_of::<$option>() / size_of::<$word>();
        // SAFETY: as `option_bytes`: a word not initialised there refuses
        // to build.
        let words: [core::mem::MaybeUninit<$word>; WORDS] = unsafe { core::mem::transmute($value) };
        assert!($offset % size_of::<$word>() == 0);
        // SAFETY: see above.
        unsafe { words[$offset / size_of::<$word>()].assume_init() }
    }};
}
// A trace stop's number and time words where the trace fast path writes
// them (from the message's tag byte).
const _: () = {
    type Message = Option<KernelMessage>;
    assert!(size_of::<Message>().is_multiple_of(8));
    assert!(option_word!(Message, trace_stop(StopKind::Entry), l::TRACE_STOP_NUMBER) == 0x5701);
    assert!(option_word!(Message, trace_stop(StopKind::Entry), l::TRACE_STOP_TIME) == 0x5702);
};
/// Where the thread's tracer's words lie from the thread's first byte:
/// the endpoint's granule (a `u32`, its word's low half), its serial and
/// the badge. The option's tag byte is first, 0 exactly for `None`.
const TRACER_WORDS: [usize; 3] = {
    use microkernel::cap::ObjectRef;
    type Tracer = Option<(ObjectRef, u64)>;
    const PAYLOAD: usize = align_of::<(ObjectRef, u64)>();
    const ID: usize = PAYLOAD + offset_of!((ObjectRef, u64), 0) + offset_of!(ObjectRef, id);
    const SERIAL: usize = PAYLOAD + offset_of!((ObjectRef, u64), 0) + offset_of!(ObjectRef, serial);
    const BADGE: usize = PAYLOAD + offset_of!((ObjectRef, u64), 1);
    const fn some() -> Tracer {
        Some((
            ObjectRef {
                id: ObjectId(0x5701),
                serial: 0x5702,
            },
            0x5703,
        ))
    }
    assert!(size_of::<Tracer>() == size_of::<(ObjectRef, u64)>() + PAYLOAD);
    assert!(option_bytes!(Tracer, None::<(ObjectRef, u64)>) == 0);
    assert!(option_bytes!(Tracer, some()) == 1);
    assert!(size_of::<ObjectId>() == 4 && ID.is_multiple_of(8));
    assert!(option_word!(Tracer, some(), ID, u32) == 0x5701);
    assert!(option_word!(Tracer, some(), SERIAL) == 0x5702);
    assert!(option_word!(Tracer, some(), BADGE) == 0x5703);
    assert!(l::THREAD_TRACER.is_multiple_of(8));
    [
        l::THREAD_TRACER + ID,
        l::THREAD_TRACER + SERIAL,
        l::THREAD_TRACER + BADGE,
    ]
};
/// Where the thread's IPC buffer address lies (the option's tag byte is
/// first, 0 exactly for `None`).
const IPC_BUFFER_WORD: usize = {
    assert!(size_of::<Option<u64>>() == 16 && l::THREAD_IPC_BUFFER.is_multiple_of(8));
    assert!(option_bytes!(Option<u64>, None::<u64>) == 0);
    assert!(option_bytes!(Option<u64>, Some(0x5701u64)) == 1);
    assert!(option_word!(Option<u64>, Some(0x5701u64), 8) == 0x5701);
    l::THREAD_IPC_BUFFER + 8
};
// A thread's `rseq` (an `Option<Registration>`): its tag byte first, 0
// exactly for `None`.
const _: () = {
    use entry::rseq::Registration;
    type Rseq = Option<Registration>;
    const SOME: Rseq = Some(Registration {
        area: 0,
        signature: 0,
    });
    assert!(size_of::<Rseq>() == size_of::<Registration>() + align_of::<Registration>());
    assert!(option_bytes!(Rseq, None::<Registration>) == 0);
    assert!(option_bytes!(Rseq, SOME) == 1);
    assert!(microkernel::thread::Thread::RSEQ_OFFSET.is_multiple_of(8));
};
/// The call the trace fast path copies into a thread's `call`: its
/// registers and ESR lie where the assembly writes them.
static TRACE_ENTRY_CALL: CallSlot = CallSlot::TRACE_ENTRY;
const _: () = {
    use microkernel::stopped_call::{CallStop, StoppedCall};
    let mut call = StoppedCall::new(
        [
            0x5700, 0x5701, 0x5702, 0x5703, 0x5704, 0x5705, 0x5706, 0x5707, 0x5708,
        ],
        CallStop::Entry(entry::EntryStop::TraceEntry),
    );
    call.esr = 0x5709;
    let slot = CallSlot::Stopped(call);
    let regs = l::THREAD_CALL_REGS - l::THREAD_CALL;
    let mut i = 0;
    while i < 9 {
        assert!(option_word!(CallSlot, slot, regs + 8 * i) == 0x5700 + i as u64);
        i += 1;
    }
    assert!(option_word!(CallSlot, slot, l::THREAD_CALL_ESR - l::THREAD_CALL) == 0x5709);
    assert!(call_tag(CallSlot::TRACE_ENTRY) != 0);
};
// An object header's state byte: `Created` and `Live` are 0 and 1 (the
// assembly's "live" is `<= OBJECT_LIVE_MAX`), every other state above;
// an endpoint record's kind byte is its type's raw value.
const _: () = {
    use abi::cap::CapType;
    use microkernel::cap::ObjectState;
    const fn byte(state: ObjectState) -> u8 {
        // SAFETY: one byte each way (checked below); a fieldless enum's
        // byte is its discriminant.
        unsafe { core::mem::transmute::<ObjectState, u8>(state) }
    }
    assert!(size_of::<ObjectState>() == 1 && size_of::<CapType>() == 1);
    assert!(byte(ObjectState::Created) == 0 && byte(ObjectState::Live) == l::OBJECT_LIVE_MAX);
    assert!(byte(ObjectState::Dying) > l::OBJECT_LIVE_MAX);
    assert!(byte(ObjectState::Destroyed) > l::OBJECT_LIVE_MAX);
    assert!(byte(ObjectState::Retired) > l::OBJECT_LIVE_MAX);
    assert!(byte(ObjectState::Pinned) > l::OBJECT_LIVE_MAX);
    // SAFETY: one byte each way (checked above).
    let endpoint = unsafe { core::mem::transmute::<CapType, u8>(CapType::Endpoint) };
    assert!(endpoint as u64 == l::CAP_ENDPOINT && l::KIND_ENDPOINT == endpoint);
};
// Object memory's `kinds` slice: its address, then its length (one pair
// load).
const _: () = {
    const KINDS: &[u8] = &[0, 0, 0];
    // SAFETY: a slice reference is two words; any bytes are valid
    // `MaybeUninit`s, and the length is an integer (the address, read as
    // one, const evaluation refuses: a layout with it second).
    let words: [core::mem::MaybeUninit<usize>; 2] = unsafe { core::mem::transmute(KINDS) };
    // SAFETY: see above.
    assert!(unsafe { words[1].assume_init() } == 3);
    assert!(l::KERNEL_KINDS.is_multiple_of(8));
};

mod policy_request;

// The thread offsets reach `[sp, #offset]`'s 12-bit scaled immediates.
const _: () = assert!(size_of::<Thread>() < 4096 * 4);

/// Where the words of a thread's `user_dispatch` payload lie from the
/// thread's first byte: `start`, `end`, `handler`, `buffer`, `selector`
/// (`user_dispatch_fast_path.s` reads them of a thread whose work is
/// `USER_DISPATCH`, which the kernel sets exactly while it is `Some`).
/// Found in a `Some` of five distinct words: const evaluation refuses to
/// build if a layout put them anywhere else.
const USER_DISPATCH_WORDS: [usize; 5] = {
    use microkernel::thread::UserDispatchConfig;
    const WORDS: usize = size_of::<Option<UserDispatchConfig>>() / 8;
    const MARKS: [u64; 5] = [0x5701, 0x5702, 0x5703, 0x5704, 0x5705];
    let config = Some(UserDispatchConfig {
        start: MARKS[0],
        end: MARKS[1],
        handler: MARKS[2],
        buffer: MARKS[3],
        selector: MARKS[4],
    });
    // SAFETY: the option is `WORDS` words (checked below: its size is a
    // multiple of 8, its alignment 8) and any bytes are valid
    // `MaybeUninit`s; only the payload's words are read as initialised,
    // and const evaluation refuses a read of an uninitialised one.
    let words: [MaybeUninit<u64>; WORDS] = unsafe { core::mem::transmute(config) };
    let mut found = [0; 5];
    let mut mark = 0;
    while mark < 5 {
        // The payload is the option's last five words (its tag first).
        let word = WORDS - 5 + mark;
        // SAFETY: see above.
        assert!(unsafe { words[word].assume_init() } == MARKS[mark]);
        found[mark] = l::THREAD_USER_DISPATCH + 8 * word;
        mark += 1;
    }
    found
};
const _: () = assert!(
    size_of::<Option<microkernel::thread::UserDispatchConfig>>().is_multiple_of(8)
        && align_of::<Option<microkernel::thread::UserDispatchConfig>>() == 8
);
// The frame's words as the fast path writes and reads them: x0..x30, SP,
// PC, NZCV, number, flags; an allowing selector is 0 (`cbz`).
const _: () = {
    use abi::user_dispatch as ud;
    assert!(ud::X0_WORD == 0 && ud::SP_WORD == 31 && ud::PC_WORD == 32);
    assert!(ud::NZCV_WORD == 33 && ud::NUMBER_WORD == 34 && ud::FLAGS_WORD == 35);
    assert!(ud::FRAME_WORDS == 36 && ud::SELECTOR_ALLOW == 0);
    assert!(ud::FRAME_BYTES < arch::layout::PAGE_SIZE);
};
/// The bits no address of the user half has (`tst` takes them as an
/// immediate: a run of ones).
const USER_HALF_OUTSIDE: u64 = !(arch::layout::USER_END - 1);
const _: () = assert!(arch::layout::USER_END.is_power_of_two());
/// `ccmp`'s flags immediate with only C set.
const NZCV_C: u64 = 0b0010;
/// PAR_EL1's output address, bits 47..12 (a 48-bit physical space).
const PAR_PA_MASK: u64 = 0x0000_ffff_ffff_f000;
/// The upper half of PAR_EL1's attribute byte (bits 63..60): MAIR's
/// encoding, zero for every Device type, never for Normal memory.
const PAR_ATTR_OUTER_MASK: u64 = 0xf000_0000_0000_0000;

/// The code bits of an `Errno`'s rank.
const ERRNO_CODE_MASK: u32 = microkernel::filter::ERRNO_RANK - 1;
// A comparison as the policy fast path reads it: 24 bytes (its index
// times 3, times 8), the mask and the value as one pair, then one word:
// the verdict's rank (bits 0..31), the register (32..39), the outcomes
// (40..47), `on_hold` (48..55) and `on_fail` (56..63); the outcomes'
// bits by the number `cset`/`cinc` give (0 less, 1 equal, 2 greater);
// an `Errno`'s rank its code above a bit of its own.
const _: () = {
    use microkernel::filter as f;
    assert!(size_of::<Comparison>() == 24);
    assert!(offset_of!(Comparison, mask) == 0 && offset_of!(Comparison, value) == 8);
    assert!(offset_of!(Comparison, verdict) == 16 && offset_of!(Comparison, register) == 20);
    assert!(offset_of!(Comparison, outcomes) == 21 && offset_of!(Comparison, on_hold) == 22);
    assert!(offset_of!(Comparison, on_fail) == 23);
    assert!(f::LESS == 1 << 0 && f::EQUAL == 1 << 1 && f::GREATER == 1 << 2);
    assert!(f::ERRNO_RANK == 1 << 16 && f::END == u8::MAX);
};

/// 1 when the image counts each thread's yields (`test-calls`: the
/// thread statistics), so the yield fast path counts its own too.
#[cfg(feature = "test-calls")]
const COUNT_YIELDS: u8 = 1;
#[cfg(not(feature = "test-calls"))]
const COUNT_YIELDS: u8 = 0;

core::arch::global_asm!(
    concat!(
        include_str!("fast_path_common.s"),
        include_str!("ipc_fast_path.s"),
        include_str!("yield_fast_path.s"),
        include_str!("notification_fast_path.s"),
        include_str!("user_dispatch_fast_path.s"),
        include_str!("policy_fast_path.s"),
        include_str!("trace_fast_path.s"),
        include_str!("policy_request_fast_path.s"),
    ),
    STATE = sym STATE,
    KERNEL = const KERNEL,
    K_CORE_TOKEN = const l::KERNEL_CORE_TOKEN,
    K_RUN_QUEUE_NONEMPTY = const l::KERNEL_RUN_QUEUE_NONEMPTY,
    T_RUN_QUEUE_WORD = const l::THREAD_RUN_QUEUE_WORD,
    T_PRIORITY = const l::THREAD_PRIORITY,
    T_YIELDS = const l::THREAD_YIELDS,
    COUNT_YIELDS = const COUNT_YIELDS,
    K_RUN_QUEUE_HEADS = const l::KERNEL_RUN_QUEUE_HEADS,
    K_RUN_QUEUE_TAILS = const l::KERNEL_RUN_QUEUE_TAILS,
    K_LAST_RAN = const l::KERNEL_LAST_RAN,
    K_CURRENT = const l::KERNEL_CURRENT,
    K_FP_OWNER = const l::KERNEL_FP_OWNER,
    K_MEMORY_BASE = const l::KERNEL_MEMORY_BASE,
    K_ASID_GENERATION = const l::KERNEL_ASID_GENERATION,
    GRANULE_SHIFT = const l::GRANULE_SHIFT,
    TCB_BODY = const l::TCB_BODY,
    T_STATE = const l::THREAD_STATE,
    T_WORK = const arch::context::WORK_FLAGS_OFFSET,
    T_CALL = const l::THREAD_CALL,
    T_RUN_PREVIOUS = const l::THREAD_RUN_PREVIOUS,
    T_RUN_NEXT = const l::THREAD_RUN_NEXT,
    T_TTBR0 = const l::THREAD_TTBR0,
    WORK_NOT_POLICY = const l::WORK_NOT_POLICY,
    STATE_READY = const l::STATE_READY,
    STATE_RUNNING = const l::STATE_RUNNING,
    CPACR_FPEN_TRAP_EL0 = const CPACR_FPEN_TRAP_EL0,
    CPACR_FPEN_EL0_SHIFT = const CPACR_FPEN_EL0_SHIFT,
    CTX_SP_EL0_PAIR = const ctx::CTX_SP_EL0_PAIR,
    CTX_ELR_PAIR = const ctx::CTX_ELR_PAIR,
    CTX_TPIDR = const ctx::CTX_TPIDR,
    T_FAST_KEY = const l::THREAD_FAST_KEY,
    T_QUEUE_PREVIOUS = const l::THREAD_QUEUE_PREVIOUS,
    T_QUEUE_NEXT = const l::THREAD_QUEUE_NEXT,
    T_REPLY_TO = const l::THREAD_REPLY_TO,
    T_REPLY_FROM = const l::THREAD_REPLY_FROM,
    T_BOUND_NOTIFICATION = const l::THREAD_BOUND_NOTIFICATION,
    T_CSPACE_FIRST = const l::THREAD_CSPACE_FIRST,
    STATE_BLOCKED_ON_RECEIVE = const l::STATE_BLOCKED_ON_RECEIVE,
    STATE_BLOCKED_ON_REPLY = const l::STATE_BLOCKED_ON_REPLY,
    STATE_BLOCKED_ON_ANSWER = const l::STATE_BLOCKED_ON_ANSWER,
    T_KERNEL_MESSAGE = const l::THREAD_KERNEL_MESSAGE,
    KERNEL_MESSAGE_NONE = const l::KERNEL_MESSAGE_NONE,
    KERNEL_MESSAGE_TRACE_STOP = const l::KERNEL_MESSAGE_TRACE_STOP,
    TRACE_STOP_KIND = const l::TRACE_STOP_KIND,
    STOP_KIND_EXIT = const STOP_KIND_EXIT,
    T_TRACE_OWED = const l::THREAD_TRACE_OWED,
    WORK_TRACE = const l::WORK_TRACE,
    K_STEP_INSTALLED = const l::KERNEL_STEP_INSTALLED,
    SPSR_SS_BIT = const l::SPSR_SS_BIT,
    TRACE_REPLY_CONTINUE = const abi::trace::TRACE_REPLY_CONTINUE,
    SLOT_SHIFT = const l::SLOT_SHIFT,
    SLOT_CAP_WORD = const l::SLOT_CAP_WORD,
    CAP_TYPE_MASK = const l::CAP_TYPE_MASK,
    CAP_ENDPOINT = const l::CAP_ENDPOINT,
    CAP_READ_BIT = const l::CAP_READ_BIT,
    CAP_WRITE_BIT = const l::CAP_WRITE_BIT,
    CAP_OBJECT_SHIFT = const l::CAP_OBJECT_SHIFT,
    EP_HEAD = const l::ENDPOINT_HEAD,
    EP_TAIL = const l::ENDPOINT_TAIL,
    EP_WAITING = const l::ENDPOINT_WAITING,
    WAITING_RECEIVERS = const l::WAITING_RECEIVERS,
    WAITING_SENDERS_BIT = const l::WAITING_SENDERS_BIT,
    WAITING_RECEIVERS_BIT = const l::WAITING_RECEIVERS_BIT,
    MESSAGE_LENGTH_AND_CAPS_MASK = const abi::MESSAGE_LENGTH_AND_CAPS_MASK,
    REGISTER_MESSAGE_WORDS = const abi::REGISTER_MESSAGE_WORDS,
    STATE_BLOCKED_ON_NOTIFICATION = const l::STATE_BLOCKED_ON_NOTIFICATION,
    CAP_NOTIFICATION = const l::CAP_NOTIFICATION,
    CAP_BADGED_BIT = const l::CAP_BADGED_BIT,
    N_WORD = const l::NOTIFICATION_WORD,
    N_HEAD = const l::NOTIFICATION_HEAD,
    N_TAIL = const l::NOTIFICATION_TAIL,
    N_WAITING = const l::NOTIFICATION_WAITING,
    N_BOUND = const l::NOTIFICATION_BOUND,
    SYSCALL_USER_DISPATCH_RETURN = const abi::Syscall::UserDispatchReturn.number(),
    SYSCALL_CALL = const abi::Syscall::Call.number(),
    T_UD_START = const USER_DISPATCH_WORDS[0],
    T_UD_END = const USER_DISPATCH_WORDS[1],
    T_UD_HANDLER = const USER_DISPATCH_WORDS[2],
    T_UD_BUFFER = const USER_DISPATCH_WORDS[3],
    T_UD_SELECTOR = const USER_DISPATCH_WORDS[4],
    NZCV_MASK = const abi::tcb::NZCV_MASK,
    NZCV_C = const NZCV_C,
    USER_HALF_OUTSIDE = const USER_HALF_OUTSIDE,
    LINEAR_BASE = const arch::layout::LINEAR_BASE,
    PAGE_SIZE = const arch::layout::PAGE_SIZE,
    FRAME_BYTES = const abi::user_dispatch::FRAME_BYTES,
    PAR_PA_MASK = const PAR_PA_MASK,
    PAR_ATTR_OUTER_MASK = const PAR_ATTR_OUTER_MASK,
    T_PROGRAM_START = const l::THREAD_PROGRAM_START,
    T_PROGRAM_COMPARISONS = const l::THREAD_PROGRAM_COMPARISONS,
    PROGRAM_END = const microkernel::filter::END,
    ERRNO_CODE_MASK = const ERRNO_CODE_MASK,
    T_RSEQ = const microkernel::thread::Thread::RSEQ_OFFSET,
    T_TRACER = const l::THREAD_TRACER,
    T_TRACER_ID = const TRACER_WORDS[0],
    T_TRACER_SERIAL = const TRACER_WORDS[1],
    T_TRACER_BADGE = const TRACER_WORDS[2],
    T_IPC_BUFFER = const l::THREAD_IPC_BUFFER,
    T_IPC_BUFFER_WORD = const IPC_BUFFER_WORD,
    T_NUMBER = const l::THREAD_NUMBER,
    T_TRACE_NUMBER = const l::THREAD_TRACE_NUMBER,
    T_CALL_REGS = const l::THREAD_CALL_REGS,
    T_CALL_ESR = const l::THREAD_CALL_ESR,
    CALL_SLOT_BYTES = const l::CALL_SLOT_BYTES,
    TRACE_STOP_NUMBER = const l::TRACE_STOP_NUMBER,
    TRACE_STOP_TIME = const l::TRACE_STOP_TIME,
    STOP_KIND_ENTRY = const STOP_KIND_ENTRY,
    K_KINDS = const l::KERNEL_KINDS,
    KIND_ENDPOINT = const l::KIND_ENDPOINT,
    H_STATE = const l::HEADER_STATE,
    H_SERIAL = const l::HEADER_SERIAL,
    OBJECT_LIVE_MAX = const l::OBJECT_LIVE_MAX,
    TRACE_ENTRY_CALL = sym TRACE_ENTRY_CALL,
    STOP_ENTRY_INFO = const l::STOP_ENTRY_INFO,
    POLICY_ASK_CALL = sym policy_request::POLICY_ASK_CALL,
    T_FILTERS_LEN = const policy_request::FILTER_WORDS[0],
    T_SERVER = const policy_request::FILTER_WORDS[1],
    T_SERVER_ID = const policy_request::FILTER_WORDS[2],
    T_SERVER_SERIAL = const policy_request::FILTER_WORDS[3],
    T_SERVER_BADGE = const policy_request::FILTER_WORDS[4],
    K_POLICY_COOKIE = const l::KERNEL_POLICY_COOKIE,
    KERNEL_MESSAGE_POLICY_REQUEST = const l::KERNEL_MESSAGE_POLICY_REQUEST,
    POLICY_REQUEST_FILTER = const l::POLICY_REQUEST_FILTER,
    POLICY_REQUEST_OBJECT_TYPE = const l::POLICY_REQUEST_OBJECT_TYPE,
    POLICY_REQUEST_BADGE = const l::POLICY_REQUEST_BADGE,
    POLICY_REQUEST_COOKIE = const l::POLICY_REQUEST_COOKIE,
    POLICY_REQUEST_INFO = const l::POLICY_REQUEST_INFO,
    NAMES_NO_CAPABILITY = const policy_request::NAMES_NO_CAPABILITY,
    K_NEWEST_SERIAL = const l::KERNEL_NEWEST_SERIAL,
    T_CALL_CAPABILITY_WORD = const l::THREAD_CALL_CAPABILITY_WORD,
    T_CALL_CAPABILITY_BADGE = const l::THREAD_CALL_CAPABILITY_BADGE,
    T_CALL_CAPABILITY_SERIAL = const l::THREAD_CALL_CAPABILITY_SERIAL,
    T_CALL_FLAGS = const policy_request::CALL_FLAGS,
);
