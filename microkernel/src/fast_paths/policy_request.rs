//! The layouts the policy request fast path (`policy_request_fast_path.s`)
//! relies on, checked at build time: the kept call's tail (which
//! `keep_call`, shared with the trace fast path, writes as zeros), its
//! judged capability, the filter stack, the request message and its
//! words.

use super::{call_tag, kernel_message_bytes, l};
use core::mem::{align_of, offset_of, size_of};
use microkernel::cap::ObjectId;
use microkernel::stopped_call::CallSlot;
use microkernel::thread::KernelMessage;

/// The word of a kept call's `waived` and `forwarded` (and nothing else),
/// from the thread's first byte: `keep_call` (`trace_fast_path.s`) writes
/// it 0, as both templates have them.
pub(super) const CALL_FLAGS: usize = {
    use microkernel::stopped_call::StoppedCall;
    const CALL: usize = l::THREAD_CALL + align_of::<StoppedCall>();
    const WORD: usize = (CALL + offset_of!(StoppedCall, forwarded)) & !7;
    const WAIVED: usize = CALL + offset_of!(StoppedCall, waived);
    assert!(
        WAIVED >= WORD && WAIVED < WORD + 8 && CALL + offset_of!(StoppedCall, forwarded) < WORD + 8
    );
    WORD
};
// `keep_call` writes the registers and then the ESR with one pair store
// from the template's words before the registers, then the rest of the
// slot (the judged capability and the flags' word) as zeros: every byte
// past the ESR is theirs, and both templates have no capability, no
// filter waived and nothing forwarded.
const _: () = {
    use microkernel::stopped_call::{
        CallStop, EntryOutcome, JudgedCapability, StopAnswer, StoppedCall,
    };
    assert!(l::THREAD_CALL_ESR == l::THREAD_CALL_REGS + 8 * 9);
    assert!(l::THREAD_CALL_CAPABILITY == l::THREAD_CALL_ESR + 8);
    assert!(CALL_FLAGS == l::THREAD_CALL_ESR + 8 + size_of::<Option<JudgedCapability>>());
    assert!(CALL_FLAGS + 8 == l::THREAD_CALL + l::CALL_SLOT_BYTES);
    // Every field of a kept call, named (a new one fails to build here
    // until it is placed: the template's words before the registers, or
    // the tail `keep_call` writes).
    const fn fields(call: &StoppedCall) {
        let StoppedCall {
            regs: _,
            at: _,
            answer: _,
            waived: _,
            forwarded: _,
            outcome: _,
            esr: _,
            capability: _,
        } = call;
    }
    let _ = fields;
    // The template's fields lie before the registers (the words it
    // copies).
    const CALL: usize = l::THREAD_CALL + align_of::<StoppedCall>();
    assert!(CALL + offset_of!(StoppedCall, at) + size_of::<CallStop>() <= l::THREAD_CALL_REGS);
    assert!(
        CALL + offset_of!(StoppedCall, answer) + size_of::<Option<StopAnswer>>()
            <= l::THREAD_CALL_REGS
    );
    assert!(
        CALL + offset_of!(StoppedCall, outcome) + size_of::<EntryOutcome>() <= l::THREAD_CALL_REGS
    );
    const fn kept_bare(slot: CallSlot) -> bool {
        matches!(
            slot,
            CallSlot::Stopped(StoppedCall {
                capability: None,
                waived: 0,
                forwarded: false,
                ..
            })
        )
    }
    assert!(kept_bare(CallSlot::TRACE_ENTRY) && kept_bare(CallSlot::POLICY_ASK));
};
/// The call the policy request fast path copies into a thread's `call`
/// (its registers and ESR lie where the trace fast path's do: the same
/// `StoppedCall`, checked above).
pub(super) static POLICY_ASK_CALL: CallSlot = CallSlot::POLICY_ASK;
const _: () = assert!(call_tag(CallSlot::POLICY_ASK) != 0);
/// Bit n: syscall n names no capability (`Syscall::names_capability`):
/// the policy request fast path keeps none with its call, and its request
/// carries no type or badge. Every other number below 64 names one (as
/// `Syscall::number_names_capability` judges an unknown number).
pub(super) const NAMES_NO_CAPABILITY: u64 = {
    let mut mask = 0u64;
    let mut n = 0;
    while n < 64 {
        if !abi::Syscall::number_names_capability(n) {
            mask |= 1 << n;
        }
        n += 1;
    }
    mask
};
// A kept call's judged capability: `None` exactly when the serial count's
// word is 0 (a `Some` has at least 1), the count where the assembly writes
// it.
const _: () = {
    use microkernel::stopped_call::{CallStop, JudgedCapability, StoppedCall};
    let mut call = StoppedCall::new([0; 9], CallStop::Entry(entry::EntryStop::Policy));
    let slot = CallSlot::Stopped(call);
    let serial = l::THREAD_CALL_CAPABILITY_SERIAL - l::THREAD_CALL;
    assert!(option_word!(CallSlot, slot, serial) == 0);
    call.capability = Some(JudgedCapability {
        capability: microkernel::cap::Capability::NULL,
        newest_serial: core::num::NonZeroU64::new(0x5703).unwrap(),
    });
    let slot = CallSlot::Stopped(call);
    assert!(option_word!(CallSlot, slot, serial) == 0x5703);
    assert!(
        option_word!(
            CallSlot,
            slot,
            l::THREAD_CALL_CAPABILITY_WORD - l::THREAD_CALL
        ) == 0
    );
    assert!(
        option_word!(
            CallSlot,
            slot,
            l::THREAD_CALL_CAPABILITY_BADGE - l::THREAD_CALL
        ) == 0
    );
};
/// Where a thread's filter stack's length (a word) and its first filter's
/// server lie from the thread's first byte: the server option's tag byte
/// (0 exactly for `None`), its endpoint's granule (a `u32`, its word's low
/// half), the endpoint's serial and the badge. Found in a stack of one
/// filter with marked words: const evaluation refuses to build if a
/// layout put them anywhere else (the length first, then the filters).
pub(super) const FILTER_WORDS: [usize; 5] = {
    use microkernel::cap::ObjectRef;
    use microkernel::thread::MAX_STACKED_FILTERS;
    use microkernel::thread::{AttachedFilter, FilterServer, FilterStack as Stack};
    const SERVER: usize = 8 + offset_of!(AttachedFilter, server);
    const PAYLOAD: usize = SERVER + align_of::<FilterServer>();
    const ID: usize = PAYLOAD + offset_of!(FilterServer, endpoint) + offset_of!(ObjectRef, id);
    const SERIAL: usize =
        PAYLOAD + offset_of!(FilterServer, endpoint) + offset_of!(ObjectRef, serial);
    const BADGE: usize = PAYLOAD + offset_of!(FilterServer, badge);
    const fn stack(server: Option<FilterServer>) -> Stack {
        Stack::from_array([AttachedFilter {
            filter: ObjectId(0x5700),
            server,
            next: None,
            previous: None,
        }])
    }
    const SOME: Option<FilterServer> = Some(FilterServer {
        endpoint: ObjectRef {
            id: ObjectId(0x5701),
            serial: 0x5702,
        },
        badge: 0x5703,
        thread: ObjectRef {
            id: ObjectId(0x5704),
            serial: 0x5705,
        },
    });
    assert!(size_of::<Stack>() == 8 + MAX_STACKED_FILTERS * size_of::<AttachedFilter>());
    assert!(
        size_of::<Option<FilterServer>>() == size_of::<FilterServer>() + align_of::<FilterServer>()
    );
    assert!(option_word!(Stack, stack(SOME), 0) == 1);
    assert!(option_word!(Stack, stack(None), 0) == 1);
    assert!(option_word!(Stack, stack(SOME), SERVER, u8) == 1);
    assert!(option_word!(Stack, stack(None), SERVER, u8) == 0);
    assert!(ID.is_multiple_of(8));
    assert!(option_word!(Stack, stack(SOME), ID, u32) == 0x5701);
    assert!(option_word!(Stack, stack(SOME), SERIAL) == 0x5702);
    assert!(option_word!(Stack, stack(SOME), BADGE) == 0x5703);
    assert!(l::THREAD_FILTERS.is_multiple_of(8));
    [
        l::THREAD_FILTERS,
        l::THREAD_FILTERS + SERVER,
        l::THREAD_FILTERS + ID,
        l::THREAD_FILTERS + SERIAL,
        l::THREAD_FILTERS + BADGE,
    ]
};
// A policy request's tag, filter byte and words where the policy request
// fast path writes them (from the message's tag byte).
const _: () = {
    use microkernel::thread::PolicyRequest;
    type Message = Option<KernelMessage>;
    const REQUEST: Message = Some(KernelMessage::PolicyRequest(PolicyRequest {
        filter: 0x57,
        object_type: 0x5701,
        badge: 0x5702,
        cookie: 0x5703,
    }));
    assert!(size_of::<Message>().is_multiple_of(8));
    assert!(kernel_message_bytes(REQUEST).0 == l::KERNEL_MESSAGE_POLICY_REQUEST);
    assert!(option_word!(Message, REQUEST, l::POLICY_REQUEST_FILTER, u8) == 0x57);
    assert!(option_word!(Message, REQUEST, l::POLICY_REQUEST_OBJECT_TYPE) == 0x5701);
    assert!(option_word!(Message, REQUEST, l::POLICY_REQUEST_BADGE) == 0x5702);
    assert!(option_word!(Message, REQUEST, l::POLICY_REQUEST_COOKIE) == 0x5703);
};
// The policy request fast path delivers a request's 17 words as
// `abi::policy_request::PolicyRequest::encode` lays them out: the number,
// the object type, the badge, the thread's number, the cookie and `x0` in
// the server's `x2..x7`, then `x1..x7`, the PC, the memory's kind, its
// length and the bytes judged in its IPC buffer's words 6..16 (a call
// that carries no memory: `CarriedMemory::None`, 0, 0).
const _: () = {
    use abi::policy_request::{CarriedMemory, PolicyRequest, POLICY_REQUEST_WORDS};
    let words = PolicyRequest {
        number: 0x5700,
        object_type: 0x5701,
        badge: 0x5702,
        thread: 0x5703,
        cookie: 0x5704,
        args: [
            0x5710, 0x5711, 0x5712, 0x5713, 0x5714, 0x5715, 0x5716, 0x5717,
        ],
        pc: 0x5720,
        memory: CarriedMemory::None,
        memory_length: 0x5730,
        judged: 0x5740,
    }
    .encode();
    let expected = [
        0x5700, 0x5701, 0x5702, 0x5703, 0x5704, 0x5710, 0x5711, 0x5712, 0x5713, 0x5714, 0x5715,
        0x5716, 0x5717, 0x5720, 0, 0x5730, 0x5740,
    ];
    assert!(words.len() == expected.len() && POLICY_REQUEST_WORDS as usize == 17);
    assert!(CarriedMemory::None as u64 == 0);
    let mut i = 0;
    while i < words.len() {
        assert!(words[i] == expected[i]);
        i += 1;
    }
};
