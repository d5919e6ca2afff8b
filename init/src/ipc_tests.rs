//! IPC programs of the in-guest suite. Each returns its exit status: 0
//! when every check passed, else the number of the first failed check.

use crate::programs::{CONSOLE_SLOT, ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT, STOP_LABEL};
use abi::{ErrorCode, MessageInfo, Syscall};
use sdk::ipc::{self, buffer_word, set_buffer_word, Cptr, Message};
use sdk::println;
use sdk::probe;
use sdk::syscall::raw_syscall;

const ENDPOINT: Cptr = Cptr(ENDPOINT_SLOT);

/// The echo server's answer to `message` from `badge`: label + 1, word 0
/// the badge, words 1.. the sent words 0.. plus one, the same length
/// (buffer words too).
fn echo(message: &Message, badge: u64) -> Message {
    let length = message.info.length();
    let mut words = [0u64; 6];
    words[0] = badge;
    for (word, sent) in words[1..].iter_mut().zip(message.words) {
        *word = sent.wrapping_add(1);
    }
    for i in 6..usize::from(length) {
        set_buffer_word(i, buffer_word(i).wrapping_add(1));
    }
    Message {
        info: MessageInfo::with(message.info.label() + 1, length),
        words,
    }
}

/// The echo server's user thread pointer (TPIDR_EL0) while it waits: the
/// client sets another, and each must find its own after every switch
/// (fast path, slow path). Each puts back the one the kernel gave it (its
/// IPC buffer's address) before it touches its buffer.
const SERVER_THREAD_POINTER: u64 = 0x5e4e_0000_7e1d_0001;

/// The client's user thread pointer (see `SERVER_THREAD_POINTER`).
const CLIENT_THREAD_POINTER: u64 = 0xc11e_0000_7e1d_0002;

/// What the echo server holds in x9..x18 at each `ReplyRecv`, and the
/// client at each of its marked calls: after the IPC each must find its
/// own there (or zero), never the other's (docs/abi.md).
const SERVER_MARKS: [u64; 10] = marks(0x5e4e);
const CLIENT_MARKS: [u64; 10] = marks(0xc11e);

const fn marks(tag: u64) -> [u64; 10] {
    let mut marks = [0; 10];
    let mut i = 0;
    while i < 10 {
        marks[i] = tag << 48 | (9 + i as u64);
        i += 1;
    }
    marks
}

/// Every scratch register `x9 + i` holds `own[i]` or zero.
fn own_or_zero(scratch: &[u64; 10], own: &[u64; 10]) -> bool {
    scratch
        .iter()
        .zip(own)
        .all(|(got, mine)| got == mine || *got == 0)
}

/// Answers calls until one carries `STOP_LABEL`.
pub fn echo_server() -> i32 {
    // A thread in a kernel-made space starts with TPIDR_EL0 at its buffer.
    let buffer = ipc::buffer_address();
    if buffer != abi::IPC_BUFFER_ADDRESS {
        println!("thread pointer {buffer:#x} at start, not the IPC buffer");
        return 5;
    }
    probe::set_thread_pointer(SERVER_THREAD_POINTER);
    let Ok(mut received) = ipc::recv(ENDPOINT) else {
        return 1;
    };
    loop {
        if probe::thread_pointer() != SERVER_THREAD_POINTER {
            println!(
                "thread pointer {:#x} after a receive",
                probe::thread_pointer()
            );
            return 4;
        }
        probe::set_thread_pointer(buffer);
        let answer = echo(&received.message, received.badge);
        probe::set_thread_pointer(SERVER_THREAD_POINTER);
        if received.message.info.label() == STOP_LABEL {
            return if ipc::reply(&answer).is_ok() { 0 } else { 2 };
        }
        let mut args = [ENDPOINT.0, answer.info.into(), 0, 0, 0, 0, 0, 0];
        args[2..].copy_from_slice(&answer.words);
        let (x, scratch) =
            probe::ipc_with_marked_scratch(Syscall::ReplyRecv.number(), args, SERVER_MARKS);
        if x[0] != ErrorCode::Ok.raw() {
            return 3;
        }
        if !own_or_zero(&scratch, &SERVER_MARKS) {
            println!("x9..x18 after a ReplyRecv: {scratch:#x?}");
            return 6;
        }
        let mut words = [0; 6];
        words.copy_from_slice(&x[2..8]);
        received = ipc::Received {
            message: Message {
                info: MessageInfo::from(x[1]),
                words,
            },
            badge: x[8],
        };
    }
}

/// Calls the echo server: a register-only message (fast path) and the
/// same message one word too long for registers (slow path) must give the
/// same answer.
pub fn client(badge: u64) -> i32 {
    let buffer = ipc::buffer_address();
    if buffer != abi::IPC_BUFFER_ADDRESS {
        println!("thread pointer {buffer:#x} at start, not the IPC buffer");
        return 9;
    }
    probe::set_thread_pointer(CLIENT_THREAD_POINTER);
    let words = [10, 20, 30, 40, 50, 60];
    let short = Message::new(7, &words);
    let Ok(fast) = ipc::call(ENDPOINT, &short) else {
        return 1;
    };
    if probe::thread_pointer() != CLIENT_THREAD_POINTER {
        println!(
            "thread pointer {:#x} after the fast call",
            probe::thread_pointer()
        );
        return 7;
    }
    probe::set_thread_pointer(buffer);
    set_buffer_word(6, 700);
    probe::set_thread_pointer(CLIENT_THREAD_POINTER);
    let Ok(slow) = ipc::call(ENDPOINT, &short.with_length(7)) else {
        return 2;
    };
    if probe::thread_pointer() != CLIENT_THREAD_POINTER {
        println!(
            "thread pointer {:#x} after the slow call",
            probe::thread_pointer()
        );
        return 8;
    }
    probe::set_thread_pointer(buffer);
    let expected = [badge, 11, 21, 31, 41, 51];
    if fast.words != expected || fast.info.label() != 8 || fast.info.length() != 6 {
        println!(
            "fast path reply {:?} (label {})",
            fast.words,
            fast.info.label()
        );
        return 3;
    }
    if slow.words != fast.words || slow.info.label() != 8 || slow.info.length() != 7 {
        println!(
            "slow path reply {:?} differs from the fast path's",
            slow.words
        );
        return 4;
    }
    if buffer_word(6) != 701 {
        println!("buffer word 6 came back as {}", buffer_word(6));
        return 5;
    }
    // x9..x18 after a Call on each path: the client's own, never the
    // server's (which it holds at its ReplyRecv) or the kernel's.
    for (check, length) in [(10, 6), (11, 7)] {
        let info = MessageInfo::with(7, length).into();
        let (x, scratch) = probe::ipc_with_marked_scratch(
            Syscall::Call.number(),
            [ENDPOINT.0, info, 10, 20, 30, 40, 50, 60],
            CLIENT_MARKS,
        );
        if x[0] != ErrorCode::Ok.raw() || x[2..8] != expected {
            println!("marked call of {length} words: {x:x?}");
            return check;
        }
        if !own_or_zero(&scratch, &CLIENT_MARKS) {
            println!("x9..x18 after a Call of {length} words: {scratch:#x?}");
            return check + 2;
        }
    }
    match ipc::call(ENDPOINT, &Message::new(STOP_LABEL, &[])) {
        Ok(_) => 0,
        Err(_) => 6,
    }
}

/// Every IPC error path. Slot 2 holds a receive-only endpoint capability,
/// slot 3 a send-only one to the same endpoint; nobody else uses it.
pub fn errors() -> i32 {
    let receive_only = Cptr(ENDPOINT_SLOT);
    let send_only = Cptr(SECOND_ENDPOINT_SLOT);
    let nothing = Message::new(0, &[]);
    let too_long = Message::new(0, &[]).with_length(65);
    let checks: [(&str, Result<(), ErrorCode>, ErrorCode); 10] = [
        (
            "call through an empty slot",
            ipc::call(Cptr(9), &nothing).map(drop),
            ErrorCode::InvalidCapability,
        ),
        (
            "call through a slot past the CNode",
            ipc::call(Cptr(1 << 20), &nothing).map(drop),
            ErrorCode::InvalidCapability,
        ),
        (
            "call through the console",
            ipc::call(Cptr(CONSOLE_SLOT), &nothing).map(drop),
            ErrorCode::WrongCapabilityType,
        ),
        (
            "send through a receive-only capability",
            ipc::send(receive_only, &nothing),
            ErrorCode::MissingRights,
        ),
        (
            "receive through a send-only capability",
            ipc::recv(send_only).map(drop),
            ErrorCode::MissingRights,
        ),
        (
            "non-blocking receive with no sender",
            ipc::nb_recv(receive_only).map(drop),
            ErrorCode::WouldBlock,
        ),
        (
            "non-blocking send with no receiver",
            ipc::nb_send(send_only, &nothing),
            ErrorCode::WouldBlock,
        ),
        (
            "reply with no caller",
            ipc::reply(&nothing),
            ErrorCode::NoReplyTarget,
        ),
        (
            "a 65-word message",
            ipc::send(send_only, &too_long),
            ErrorCode::InvalidArgument,
        ),
        (
            "debug print through an endpoint",
            raw_syscall(Syscall::DebugPrint.number(), ENDPOINT_SLOT, 0x40_0000, 1).into_result(),
            ErrorCode::WrongCapabilityType,
        ),
    ];
    for (number, (what, got, want)) in checks.iter().enumerate() {
        if *got != Err(*want) {
            println!("check {} ({what}): got {got:?}, want {want:?}", number + 1);
            return number as i32 + 1;
        }
    }
    0
}

/// Sends `index` once; the receiver checks the order.
pub fn fifo_sender(index: u64) -> i32 {
    match ipc::send(ENDPOINT, &Message::new(1, &[index])) {
        Ok(()) => 0,
        Err(error) => {
            println!("sender {index}: {error:?}");
            1
        }
    }
}

/// Three senders queued in order 0, 1, 2 (badges 100, 101, 102) must be
/// received in that order.
pub fn fifo_receiver() -> i32 {
    for expected in 0..3u64 {
        match ipc::recv(ENDPOINT) {
            Ok(r) if r.message.words[0] == expected && r.badge == 100 + expected => {}
            Ok(r) => {
                println!(
                    "got word {} badge {} for sender {expected}",
                    r.message.words[0], r.badge
                );
                return expected as i32 + 1;
            }
            Err(_) => return 10,
        }
    }
    0
}

/// Owns the endpoint in slot 2 (the original capability). Checks the CNode
/// operations and their errors, then revokes and deletes the endpoint
/// while the waiter (which ran first) is blocked on it.
pub fn cap_owner() -> i32 {
    use crate::programs::CNODE_SLOT as CNODE;
    use abi::cap::Rights;
    use sdk::syscall::cnode;
    let e = ENDPOINT_SLOT;
    let checks: [crate::Check; 10] = [
        (
            "mint a receive-only copy",
            cnode::mint(CNODE, e, 4, Rights::READ, None),
            Ok(()),
        ),
        (
            "mint a badged copy",
            cnode::mint(CNODE, e, 5, Rights::READ_WRITE, Some(7)),
            Ok(()),
        ),
        (
            "badge an already badged capability",
            cnode::mint(CNODE, 5, 6, Rights::WRITE, Some(8)),
            Err(ErrorCode::InvalidArgument),
        ),
        (
            "mint more rights than the source holds",
            cnode::mint(CNODE, 4, 6, Rights::READ_WRITE, None),
            Err(ErrorCode::MissingRights),
        ),
        (
            "copy onto an occupied slot",
            cnode::copy(CNODE, e, 4),
            Err(ErrorCode::SlotOccupied),
        ),
        (
            "copy to a slot past the CNode",
            cnode::copy(CNODE, e, 99),
            Err(ErrorCode::InvalidCapability),
        ),
        ("move the badged copy", cnode::move_cap(CNODE, 5, 6), Ok(())),
        (
            "copy from the emptied slot",
            cnode::copy(CNODE, 5, 7),
            Err(ErrorCode::InvalidCapability),
        ),
        (
            "CNode operation through a non-CNode capability",
            cnode::copy(CONSOLE_SLOT, e, 7),
            Err(ErrorCode::WrongCapabilityType),
        ),
        (
            "revoke: every copy derived from the original goes",
            cnode::revoke(CNODE, e),
            Ok(()),
        ),
    ];
    for (number, (what, got, want)) in checks.iter().enumerate() {
        if got != want {
            println!("check {} ({what}): got {got:?}, want {want:?}", number + 1);
            return number as i32 + 1;
        }
    }
    // The copies (ours in 4 and 6, the waiter's) are gone; the original stays.
    if cnode::copy(CNODE, 4, 7) != Err(ErrorCode::InvalidCapability)
        || cnode::copy(CNODE, 6, 7) != Err(ErrorCode::InvalidCapability)
    {
        return 20;
    }
    // Deleting the last capability destroys the endpoint: the waiter wakes.
    if cnode::delete(CNODE, e).is_err() {
        return 21;
    }
    match ipc::call(Cptr(e), &Message::new(0, &[])) {
        Err(ErrorCode::InvalidCapability) => 0,
        other => {
            println!(
                "IPC to the deleted endpoint: {:?}",
                other.map(|m| m.info.label())
            );
            22
        }
    }
}

/// Blocks on the owner's endpoint until the owner destroys it.
pub fn cap_waiter() -> i32 {
    match ipc::recv(ENDPOINT) {
        Err(ErrorCode::ObjectDeleted) => {}
        other => {
            println!(
                "waiting on the destroyed endpoint returned {:?}",
                other.map(|r| r.badge)
            );
            return 1;
        }
    }
    // The owner's revoke removed this thread's capability too.
    match ipc::recv(ENDPOINT) {
        Err(ErrorCode::InvalidCapability) => 0,
        _ => 2,
    }
}

/// Polls (nothing yet), then signals through two capabilities whose
/// badges are 0b001 and 0b100.
pub fn notify_signaler() -> i32 {
    if ipc::poll(Cptr(ENDPOINT_SLOT)) != Ok(0) {
        return 1;
    }
    if ipc::signal(Cptr(ENDPOINT_SLOT)).is_err() || ipc::signal(Cptr(SECOND_ENDPOINT_SLOT)).is_err()
    {
        return 2;
    }
    0
}

/// One `Wait` takes both badges OR-ed; a `Poll` then finds nothing. A
/// receive-only capability cannot signal.
pub fn notify_waiter() -> i32 {
    match ipc::wait(Cptr(ENDPOINT_SLOT)) {
        Ok(0b101) => {}
        other => {
            println!("wait returned {other:?}, want Ok(5)");
            return 1;
        }
    }
    if ipc::poll(Cptr(ENDPOINT_SLOT)) != Ok(0) {
        return 2;
    }
    if ipc::signal(Cptr(ENDPOINT_SLOT)) != Err(ErrorCode::MissingRights) {
        return 3;
    }
    if ipc::wait(Cptr(CONSOLE_SLOT)) != Err(ErrorCode::WrongCapabilityType) {
        return 4;
    }
    0
}

/// Blocks on an empty notification; must wake with the waker's badge.
pub fn notify_sleeper() -> i32 {
    match ipc::wait(Cptr(ENDPOINT_SLOT)) {
        Ok(0b10) => 0,
        other => {
            println!("woke with {other:?}, want Ok(2)");
            1
        }
    }
}

/// Signals once.
pub fn notify_waker() -> i32 {
    match ipc::signal(Cptr(ENDPOINT_SLOT)) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// Answers one call from the caller, wakes the middle thread (less urgent
/// than this one: it only becomes ready) and replies with ReplyRecv. The
/// receive waits, and the caller, least urgent of the three, must not run
/// before the middle thread. Exits when the caller's final send arrives.
pub fn prio_server() -> i32 {
    if ipc::recv(ENDPOINT).is_err() {
        return 1;
    }
    if ipc::signal(Cptr(SECOND_ENDPOINT_SLOT)).is_err() {
        return 2;
    }
    match ipc::reply_recv(ENDPOINT, &Message::new(0, &[])) {
        Ok(_) => 0,
        Err(_) => 3,
    }
}

/// Waits until the server wakes it, then tells the caller it ran.
pub fn prio_middle() -> i32 {
    if ipc::wait(Cptr(ENDPOINT_SLOT)).is_err() {
        return 1;
    }
    match ipc::signal(Cptr(SECOND_ENDPOINT_SLOT)) {
        Ok(()) => 0,
        Err(_) => 2,
    }
}

/// Calls the server; when the reply is in, the more urgent middle thread
/// must have run already. Then lets the server finish.
pub fn prio_caller() -> i32 {
    if ipc::call(ENDPOINT, &Message::new(1, &[])).is_err() {
        return 1;
    }
    let status = match ipc::poll(Cptr(SECOND_ENDPOINT_SLOT)) {
        Ok(0) => {
            println!("the reply switched to the caller past a more urgent ready thread");
            2
        }
        Ok(_) => 0,
        Err(_) => 3,
    };
    if ipc::send(ENDPOINT, &Message::new(2, &[])).is_err() {
        return 4;
    }
    status
}

/// Retypes objects from the 16 KiB Untyped in slot 2, uses them, checks
/// the errors, and checks that revoking the Untyped reclaims its memory.
pub fn untyped_user() -> i32 {
    use crate::programs::CNODE_SLOT as CNODE;
    use abi::cap::CapType;
    use sdk::syscall::{cnode, retype};
    let untyped = ENDPOINT_SLOT;
    // What the Untyped holds while nothing is made from it (the driver's
    // Untyped keeps its own record in its last bytes, so not a 16 KiB
    // child: measured, not assumed), then all of it back.
    let fresh = match fill_signature(untyped, 3..16) {
        Ok(fresh) => fresh,
        Err(error) => {
            println!("filling the new Untyped: {error:?}");
            return 22;
        }
    };
    if cnode::revoke(CNODE, untyped) != Ok(()) {
        return 23;
    }
    let checks: [crate::Check; 8] = [
        (
            "two endpoints",
            retype(untyped, CapType::Endpoint, 0, 4, 2),
            Ok(()),
        ),
        (
            "a new endpoint works",
            ipc::nb_recv(Cptr(4)).map(drop),
            Err(ErrorCode::WouldBlock),
        ),
        (
            "a notification",
            retype(untyped, CapType::Notification, 0, 6, 1),
            Ok(()),
        ),
        (
            "into an occupied slot",
            retype(untyped, CapType::Endpoint, 0, 4, 1),
            Err(ErrorCode::SlotOccupied),
        ),
        (
            "zero objects",
            retype(untyped, CapType::Endpoint, 0, 8, 0),
            Err(ErrorCode::InvalidArgument),
        ),
        (
            "a type the kernel cannot make from user space yet",
            retype(untyped, CapType::VSpace, 0, 8, 1),
            Err(ErrorCode::InvalidArgument),
        ),
        (
            "through the console capability",
            retype(CONSOLE_SLOT, CapType::Endpoint, 0, 8, 1),
            Err(ErrorCode::WrongCapabilityType),
        ),
        (
            "an Untyped larger than its parent",
            retype(untyped, CapType::Untyped, 20, 8, 1),
            Err(ErrorCode::NotEnoughMemory),
        ),
    ];
    for (number, (what, got, want)) in checks.iter().enumerate() {
        if got != want {
            println!("check {} ({what}): got {got:?}, want {want:?}", number + 1);
            return number as i32 + 1;
        }
    }
    // The three objects take memory: with them alive the same fill holds
    // less (the measure sees a 64-byte record).
    match fill_signature(untyped, 7..16) {
        Ok(alive) if alive != fresh => {}
        other => {
            println!("check 9 (the fill with the objects alive): {other:?}, fresh {fresh:?}");
            return 9;
        }
    }
    if cnode::revoke(CNODE, untyped) != Ok(()) {
        return 10;
    }
    // Signal and poll before the revoke would have worked; after it the
    // capabilities are gone and all of the Untyped is free again: the
    // same fill as when it was new.
    if ipc::nb_recv(Cptr(4)) != Err(ErrorCode::InvalidCapability) {
        return 20;
    }
    match fill_signature(untyped, 3..16) {
        Ok(again) if again == fresh => 0,
        other => {
            println!("the whole Untyped after the revoke: {other:?}, new {fresh:?}");
            21
        }
    }
}

/// Kinds `fill_signature` retypes, in turn: Untypeds (memory from the
/// bottom, no record in their parent) of 2^47 down to 2^12 bytes, CNodes
/// (records only, from the top) of radix 16 down to 1, endpoints (the
/// smallest record).
const FILL_UNTYPED_BITS: core::ops::RangeInclusive<u64> = 12..=47;
const FILL_CNODE_RADIXES: core::ops::RangeInclusive<u64> = 1..=16;
/// One count per kind and size `fill_signature` tries.
pub const FILL_STEPS: usize = 36 + 16 + 1;

/// How `untyped` fills up: greedily, largest objects first, each kind
/// and size retyped into the next of `slots` until `NotEnoughMemory`,
/// ending with endpoints, so less than one endpoint's record is left.
/// The counts depend only on how much of the Untyped is free at each end
/// (a record of 64 bytes more or less changes them), so two fills of the
/// same Untyped with nothing else alive are equal exactly when all of it
/// came back. The objects stay (the caller revokes); `OutOfResources`
/// when `slots` run out first.
pub fn fill_signature(
    untyped: u64,
    slots: core::ops::Range<u64>,
) -> Result<[u64; FILL_STEPS], ErrorCode> {
    use abi::cap::CapType;
    use sdk::syscall::retype;
    let kinds = FILL_UNTYPED_BITS
        .rev()
        .map(|bits| (CapType::Untyped, bits))
        .chain(
            FILL_CNODE_RADIXES
                .rev()
                .map(|radix| (CapType::CNode, radix)),
        )
        .chain([(CapType::Endpoint, 0)]);
    let mut counts = [0; FILL_STEPS];
    let mut next = slots.start;
    for ((kind, size), count) in kinds.zip(counts.iter_mut()) {
        loop {
            if next >= slots.end {
                return Err(ErrorCode::OutOfResources);
            }
            match retype(untyped, kind, size, next, 1) {
                Ok(()) => {
                    *count += 1;
                    next += 1;
                }
                Err(ErrorCode::NotEnoughMemory) => break,
                Err(error) => return Err(error),
            }
        }
    }
    Ok(counts)
}

/// Receives the faulter's fault message, checks it, and replies so the
/// faulter resumes after the faulting load.
pub fn fault_handler() -> i32 {
    use crate::programs::UNMAPPED_PROBE_ADDRESS;
    use sdk::supervision::{self, FaultMessage, FaultReply};
    const DATA_ABORT_FROM_EL0: u64 = 0x24;
    let Ok(fault) = ipc::recv(ENDPOINT) else {
        return 1;
    };
    let Some(FaultMessage { class, far, pc, .. }) = supervision::fault_of(&fault.message) else {
        println!(
            "not a fault message: label {:#x}",
            fault.message.info.label()
        );
        return 2;
    };
    if class != DATA_ABORT_FROM_EL0 || far != UNMAPPED_PROBE_ADDRESS {
        println!(
            "fault message: label {:#x}, words {:x?}",
            fault.message.info.label(),
            fault.message.words
        );
        return 2;
    }
    // Resume after the 4-byte load that faulted.
    match ipc::reply(&supervision::fault_reply(FaultReply::SetPc(pc + 4))) {
        Ok(()) => 0,
        Err(_) => 3,
    }
}

/// Loads from an unmapped address; the handler resumes it after the load,
/// with every register as it was.
pub fn handled_faulter() -> i32 {
    let before = probe::registers_preserved_across_syscall();
    probe::read_u64(crate::programs::UNMAPPED_PROBE_ADDRESS);
    // Still here: the fault was handled. Registers still behave.
    if before != 0 || probe::registers_preserved_across_syscall() != 0 {
        return 1;
    }
    0
}

/// What a confined task holds: slot 0 its CNode (read/write), 1 the
/// console (write), 2 an endpoint (read only), 3 a notification (write
/// only, badge 4); every other slot is empty.
fn confined_slot(slot: u64) -> Option<(abi::cap::CapType, abi::cap::Rights)> {
    use abi::cap::{CapType, Rights};
    match slot {
        0 => Some((CapType::CNode, Rights::READ_WRITE)),
        1 => Some((CapType::DebugConsole, Rights::WRITE)),
        2 => Some((CapType::Endpoint, Rights::READ)),
        3 => Some((CapType::Notification, Rights::WRITE)),
        _ => None,
    }
}

/// The answer an operation needing `cap_type` with `right` must get
/// through `slot`: the error for an empty slot, a wrong type or a missing
/// right, else `allowed` (what the allowed operation returns here).
fn expected(
    slot: u64,
    cap_type: abi::cap::CapType,
    right: abi::cap::Rights,
    allowed: Result<(), ErrorCode>,
) -> Result<(), ErrorCode> {
    match confined_slot(slot) {
        None => Err(ErrorCode::InvalidCapability),
        Some((held, _)) if held != cap_type => Err(ErrorCode::WrongCapabilityType),
        Some((_, rights)) if !right.is_subset_of(rights) => Err(ErrorCode::MissingRights),
        Some(_) => allowed,
    }
}

/// Every slot 0..16 with every kind of operation: exactly what was granted
/// is allowed, and everything else gets the precise error.
pub fn confined() -> i32 {
    use crate::programs::CNODE_SLOT as CNODE;
    use abi::cap::{CapType, Rights};
    use sdk::syscall::{cnode, debug_print_raw_via, retype};
    let nothing = Message::new(0, &[]);
    for slot in 0..16u64 {
        let checks: [crate::Check; 8] = [
            (
                "print",
                debug_print_raw_via(slot, 0x40_0000, 0),
                expected(slot, CapType::DebugConsole, Rights::WRITE, Ok(())),
            ),
            (
                "nb_send",
                ipc::nb_send(Cptr(slot), &nothing),
                expected(
                    slot,
                    CapType::Endpoint,
                    Rights::WRITE,
                    Err(ErrorCode::WouldBlock),
                ),
            ),
            (
                "nb_recv",
                ipc::nb_recv(Cptr(slot)).map(drop),
                expected(
                    slot,
                    CapType::Endpoint,
                    Rights::READ,
                    Err(ErrorCode::WouldBlock),
                ),
            ),
            (
                "poll",
                ipc::poll(Cptr(slot)).map(drop),
                expected(slot, CapType::Notification, Rights::READ, Ok(())),
            ),
            // Signal last among the notification checks: it is allowed once,
            // below, and wakes the witness.
            (
                "signal (wrong slots only)",
                if slot == 3 {
                    Ok(())
                } else {
                    ipc::signal(Cptr(slot))
                },
                expected(slot, CapType::Notification, Rights::WRITE, Ok(())),
            ),
            (
                "copy into slot 15",
                cnode::copy(slot, 1, 15),
                expected(slot, CapType::CNode, Rights::WRITE, Ok(())),
            ),
            (
                "retype",
                retype(slot, CapType::Endpoint, 0, 14, 1),
                expected(slot, CapType::Untyped, Rights::WRITE, Ok(())),
            ),
            (
                "badge a copy",
                cnode::mint(CNODE, slot, 13, Rights::NONE, Some(99)),
                match confined_slot(slot) {
                    None => Err(ErrorCode::InvalidCapability),
                    // Only unbadged endpoint/notification capabilities take a badge.
                    Some((CapType::Endpoint, _)) => Ok(()),
                    Some(_) => Err(ErrorCode::InvalidArgument),
                },
            ),
        ];
        for (what, got, want) in checks {
            if got != want {
                println!("slot {slot}, {what}: got {got:?}, want {want:?}");
                return slot as i32 + 1;
            }
        }
        // Undo what succeeded, so every slot sees the same CNode.
        let _ = cnode::delete(CNODE, 15);
        let _ = cnode::delete(CNODE, 13);
    }
    // The one notification right held: signal. The witness must see the
    // badge the kernel minted (4), not one of ours.
    if ipc::signal(Cptr(SECOND_ENDPOINT_SLOT)).is_err() {
        return 30;
    }
    0
}

/// Waits for the confined task's signal; the badge must be the minted 4.
pub fn badge_witness() -> i32 {
    match ipc::wait(Cptr(ENDPOINT_SLOT)) {
        Ok(4) => 0,
        other => {
            println!("the notification arrived with {other:?}, want Ok(4)");
            1
        }
    }
}

/// Receives one call and ends without replying.
pub fn quitter() -> i32 {
    match ipc::recv(ENDPOINT) {
        Ok(_) => 0,
        Err(_) => 1,
    }
}

/// Its servers (two quitters, waiting and more urgent) end while owing
/// the reply: each call returns ObjectDeleted, with `x1..x8` zero
/// (docs/abi.md: a wait that ends in an error zeroes them), first on the
/// IPC fast path (a one-word message), then on the slow path (seven
/// words, the seventh in the IPC buffer). The fast path does not save the
/// caller's `x0..x8`, so both must come to the same registers.
pub fn abandoned_caller() -> i32 {
    set_buffer_word(6, 0x66);
    for (check, length) in [(1, 1), (3, 7)] {
        let info = u64::from(MessageInfo::with(1, length));
        let args = [ENDPOINT.0, info, 2, 0x33, 0x44, 0x55, 0x66, 0x77];
        let (x, _) = probe::ipc_with_marked_scratch(Syscall::Call.number(), args, [0; 10]);
        if x[0] != ErrorCode::ObjectDeleted.raw() {
            println!("the abandoned call of {length} words returned {:#x}", x[0]);
            return check;
        }
        if x[1..] != [0; 8] {
            println!(
                "x1..x8 after the abandoned call of {length} words: {:#x?}",
                &x[1..]
            );
            return check + 1;
        }
    }
    0
}

/// Sends the notification capability in slot 4: through the send-only
/// endpoint capability (no grant) it is refused; through the one with
/// grant it arrives; a second transfer into the now occupied slot arrives
/// without it.
pub fn cap_giver() -> i32 {
    use abi::IPC_BUFFER_SEND_CAPS_WORD;
    ipc::set_buffer_word(IPC_BUFFER_SEND_CAPS_WORD, 4);
    let with_cap = Message {
        info: abi::MessageInfo::with(1, 0).with_caps(1),
        words: [0; 6],
    };
    if ipc::send(Cptr(SECOND_ENDPOINT_SLOT), &with_cap) != Err(ErrorCode::MissingRights) {
        return 1;
    }
    if ipc::send(ENDPOINT, &with_cap).is_err() {
        return 2;
    }
    if ipc::send(ENDPOINT, &with_cap).is_err() {
        return 3;
    }
    0
}

/// Receives the capability into slot 8 and uses it: signalling through it
/// then polling returns its badge, 9, which the copy kept.
pub fn cap_taker() -> i32 {
    use abi::IPC_BUFFER_RECEIVE_SLOT_WORD;
    ipc::set_buffer_word(IPC_BUFFER_RECEIVE_SLOT_WORD, 8);
    match ipc::recv(ENDPOINT) {
        Ok(r) if r.message.info.caps() == 1 => {}
        other => {
            println!("first message: {:?}", other.map(|r| r.message.info.caps()));
            return 1;
        }
    }
    if ipc::signal(Cptr(8)).is_err() || ipc::poll(Cptr(8)) != Ok(9) {
        return 2;
    }
    // Slot 8 is taken now: the second message arrives without its capability.
    match ipc::recv(ENDPOINT) {
        Ok(r) if r.message.info.caps() == 0 => 0,
        _ => 3,
    }
}

/// Takes two interrupts of the EL1 physical timer through the IrqHandler
/// in slot 2, bound to the notification in slot 3 (badge 0x100), the timer
/// programmed by the kernel through the same capability.
pub fn irq_user() -> i32 {
    use sdk::syscall::{irq_ack, irq_set_notification, irq_set_timer};
    let (handler, notification) = (ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT);
    let (_, frequency) = probe::counter();
    let checks: [crate::Check; 4] = [
        (
            "acknowledge before binding",
            irq_ack(handler),
            Err(ErrorCode::InvalidArgument),
        ),
        (
            "bind through the console capability",
            irq_set_notification(CONSOLE_SLOT, notification),
            Err(ErrorCode::WrongCapabilityType),
        ),
        (
            "arm the timer through the console capability",
            irq_set_timer(CONSOLE_SLOT, 1),
            Err(ErrorCode::WrongCapabilityType),
        ),
        (
            "bind the handler to the notification",
            irq_set_notification(handler, notification),
            Ok(()),
        ),
    ];
    for (number, (what, got, want)) in checks.iter().enumerate() {
        if got != want {
            println!("check {} ({what}): got {got:?}, want {want:?}", number + 1);
            return number as i32 + 1;
        }
    }
    for round in 0..2 {
        if irq_set_timer(handler, frequency / 1000).is_err() {
            return 30 + round;
        }
        match ipc::wait(Cptr(notification)) {
            Ok(0x100) => {}
            other => {
                println!("interrupt {round}: the notification gave {other:?}, want Ok(256)");
                return 10 + round;
            }
        }
        // The line stays high until the timer is re-armed or stopped; the
        // kernel keeps the interrupt masked until the acknowledgement.
        if irq_set_timer(handler, 0).is_err() {
            return 40 + round;
        }
        if irq_ack(handler).is_err() {
            return 20 + round;
        }
    }
    0
}
