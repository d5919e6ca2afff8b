//! What a call carries in memory runs as it was judged (issue 19, point
//! 2): the kernel copies the memory a filter or policy server judges once,
//! before the check, and the call uses that copy. A second thread of the
//! caller's own address space, the scribbler, rewrites the caller's IPC
//! buffer between the check and the moment the message is delivered, in
//! every round, and the receiver must still get exactly what was judged.
//!
//! Three threads: the scribbler (the case's thread 0, priority 100) makes
//! the app, a thread of its own program in its own space and CSpace
//! (priority 110), confines it and lets it run; the server (thread 1,
//! priority 105) is the app's policy server and the receiver of its calls.
//! The priorities make every round go the same way: the app writes the
//! safe pattern into its buffer words 6..=13 and calls; the call is judged
//! (by a rule on its bytes, or by the server, which checks the judged
//! bytes its request carries) and waits, queued on the endpoint or for the
//! server's answer, while the scribbler writes the evil pattern into the
//! same buffer words and wakes the server; the server receives the
//! message, which must be the safe pattern, word for word. Four phases:
//!
//! 1. a byte rule (`bytes == SAFE`) allows the call; it waits queued;
//! 2. `Notify`: the server allows; the scribbler writes before the answer
//!    and again before the receive;
//! 3. as 2, answered "allow with" new `x2..x7` (the words the server gave
//!    arrive, the buffer words as judged);
//! 4. a race: all three at one priority, taking turns (each yields after
//!    its step): the scribbler rewrites the buffer (none to all of its
//!    words evil, in turn), the app calls, the server receives when its
//!    turn comes (so calls wait queued while the scribbler rewrites): a
//!    call judged on a spoiled buffer is refused (`Denied`), and every
//!    call that got through delivers exactly the safe pattern.
//!
//! Each program returns the number of its first failed check; the app's
//! result reaches the scribbler (they share their statics), whose exit
//! status is the case's.

use crate::programs::BootProgram;
use abi::cap::CapType;
use abi::policy::BytesOp;
use abi::vspace::FRAME_MAP_START;
use abi::{ErrorCode, MessageInfo, Syscall};
use core::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering};
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, CarriedMemory, PolicyAnswer, PolicyRequest};
use sdk::syscall::retype;
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::{MappedFrame, VSpace};

/// Rounds of phases 1 to 3, and of the race.
pub const ROUNDS: u64 = 500;
/// Rounds of the race (phase 4).
pub const RACE_ROUNDS: u64 = 2000;
/// The badge of the app's endpoint capability to the server.
pub const APP_BADGE: u64 = 0xa9;
/// The badge of the server's endpoint capability named with the filter.
pub const POLICY_BADGE: u64 = 0x90;

/// The labels of the app's calls, one per phase, and of its last one.
const RULED: u64 = 1;
const ASKED: u64 = 2;
const ASKED_WITH: u64 = 3;
const RACED: u64 = 4;
const DONE: u64 = 0xd0e;

/// The buffer words the patterns fill (eight words: 64 bytes).
const FIRST_WORD: usize = 6;
const WORDS: usize = 8;
/// Message length of the app's calls.
const LENGTH: u8 = (FIRST_WORD + WORDS) as u8;
/// The safe pattern's bytes, the evil one's words.
const SAFE: &[u8; 64] = b"SAFE-judged-0123456789abcdefghijklmnopqrstuvwxyz-SAFE-judged-end";
const EVIL: u64 = 0xe51_0e51_0e51_0e51;
/// What the server's "allow with" gives `x2..x7`.
const NEW_WORDS: [u64; 6] = [0x21, 0x22, 0x23, 0x24, 0x25, 0x26];

/// The scribbler's slots (the shared CNode's: the case's grants first).
const CNODE: u64 = crate::programs::CNODE_SLOT;
const UNTYPED: u64 = 2;
const OWN_VSPACE: VSpace = VSpace(Cptr(3));
const OWN_TCB: Tcb = Tcb(Cptr(4));
/// The app's capability to the server's call endpoint.
const TO_SERVER: Cptr = Cptr(5);
/// The server's policy endpoint, named with the filter.
const POLICY_CAP: Cptr = Cptr(6);
/// The notification the scribbler wakes the server through.
const GO: Cptr = Cptr(7);
const APP: Tcb = Tcb(Cptr(8));
const FILTER: FilterCap = FilterCap(Cptr(9));
/// The app's stack and IPC buffer frames.
const APP_FRAMES: u64 = 10;
/// The server's TCB (read): the thread that answers the filter's
/// requests.
const SERVER_THREAD: Tcb = Tcb(Cptr(15));

/// The server's slots: its call endpoint and policy endpoint (receive),
/// the notification (wait).
const CALLS: Cptr = Cptr(2);
const REQUESTS: Cptr = Cptr(3);
const SERVER_GO: Cptr = Cptr(4);
const SERVER_TCB: Tcb = Tcb(Cptr(5));

const APP_PRIORITY: u64 = 110;
const SCRIBBLER_PRIORITY: u64 = 100;

/// What the scribbler does (shared by the threads of one space).
static MODE: AtomicU8 = AtomicU8::new(HAND_OVER);
const HAND_OVER: u8 = 0;
const RACE: u8 = 1;
const FINISHED: u8 = 2;
/// The app's IPC buffer address, set before it runs.
static APP_BUFFER: AtomicU64 = AtomicU64::new(0);
/// The app's result.
static APP_RESULT: AtomicI32 = AtomicI32::new(-1);

/// Buffer word `i` of the safe pattern.
fn safe_word(i: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&SAFE[8 * i..8 * i + 8]);
    u64::from_le_bytes(bytes)
}

/// Writes `value(i)` into the app's buffer words `FIRST_WORD..`, one
/// volatile store each (the words the kernel must not read again): the
/// page is mapped read-write in this address space (the scribbler mapped
/// it for the app).
fn write_app_buffer(value: impl Fn(usize) -> u64) {
    let buffer = MappedFrame::described(APP_BUFFER.load(Ordering::Relaxed), true);
    for i in 0..WORDS {
        let _ = buffer.write_u64(8 * (FIRST_WORD + i) as u64, value(i));
    }
}

/// The scribbler: makes and confines the app, then rewrites its buffer.
pub fn scribbler() -> i32 {
    if let Err(check) = make_app() {
        return check;
    }
    if APP.resume().is_err() {
        return 20;
    }
    let mut spoiled = 0;
    loop {
        match MODE.load(Ordering::Acquire) {
            HAND_OVER => {
                // Runs only while the app waits (judged) and the server
                // waits for `GO`: spoil the buffer, wake the server.
                write_app_buffer(|_| EVIL);
                if ipc::signal(GO).is_err() {
                    return 21;
                }
            }
            // The app and the server at this priority: a rewrite (the
            // first `spoiled` words evil, the rest safe), then the CPU to
            // them; each sees the buffer as the last rewrite left it.
            RACE => {
                spoiled = (spoiled + 1) % (WORDS + 1);
                write_app_buffer(|i| if i < spoiled { EVIL } else { safe_word(i) });
                let _ = sdk::syscall::yield_now();
            }
            _ => return APP_RESULT.load(Ordering::Acquire),
        }
    }
}

/// Makes the app in the shared CNode and this space, with a filter that
/// allows its calls on their bytes (phase 1) or asks the server.
fn make_app() -> Result<(), i32> {
    retype(UNTYPED, CapType::Tcb, 0, APP.0 .0, 1).map_err(|_| 1)?;
    APP.configure(Cptr(CNODE), APP_PRIORITY).map_err(|_| 2)?;
    let app = OwnThread {
        tcb: APP,
        vspace: OWN_VSPACE,
        untyped: Cptr(UNTYPED),
        first_slot: APP_FRAMES,
        stack_pages: 2,
        area: FRAME_MAP_START + 0x10_0000,
        fault_endpoint: None,
        name: Some("judged-app"),
    };
    let layout = bind_to_own_space(&app, BootProgram::JudgedApp.selector(0)).map_err(|_| 3)?;
    APP_BUFFER.store(layout.buffer.address, Ordering::Release);
    let call = |label| RuleBuilder::syscall(Syscall::Call).label(label);
    let mut buffer = [0u8; 1024];
    let rules = FilterBuilder::new(Action::Allow)
        .rule(
            call(RULED)
                .bytes(BytesOp::Equal, SAFE, 0)
                .action(Action::Allow),
        )
        .rule(call(RULED).action(Action::errno(ErrorCode::Denied)))
        .rule(
            call(RACED)
                .bytes(BytesOp::Equal, SAFE, 0)
                .action(Action::Allow),
        )
        .rule(call(RACED).action(Action::errno(ErrorCode::Denied)))
        .rule(call(ASKED).action(Action::Notify))
        .rule(call(ASKED_WITH).action(Action::Notify))
        .encode(&mut buffer)
        .map_err(|_| 4)?;
    retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1).map_err(|_| 5)?;
    FILTER.load(rules).map_err(|_| 6)?;
    let server = FilterServer {
        endpoint: POLICY_CAP,
        thread: SERVER_THREAD,
    };
    APP.attach_filter(FILTER, Some(server)).map_err(|_| 7)?;
    // Below the app and the server from now on: it runs only when both
    // wait.
    OWN_TCB.set_priority(SCRIBBLER_PRIORITY).map_err(|_| 8)?;
    Ok(())
}

/// One call of the app with the safe pattern in its buffer and `x2..x7`
/// marking the round.
fn call_with_safe_pattern(label: u64, round: u64) -> Result<Message, ErrorCode> {
    for i in 0..WORDS {
        ipc::set_buffer_word(FIRST_WORD + i, safe_word(i));
    }
    let words = [round, round + 1, round + 2, round + 3, round + 4, round + 5];
    ipc::call(TO_SERVER, &Message::new(label, &words).with_length(LENGTH))
}

/// The app: the four phases (see the module docs), then its result.
pub fn app() -> i32 {
    let result = app_phases();
    APP_RESULT.store(result, Ordering::Release);
    MODE.store(FINISHED, Ordering::Release);
    let _ = ipc::call(TO_SERVER, &Message::new(DONE, &[result as u64]));
    result
}

fn app_phases() -> i32 {
    for (phase, label) in [(1, RULED), (2, ASKED), (3, ASKED_WITH)] {
        for round in 0..ROUNDS {
            if call_with_safe_pattern(label, round).is_err() {
                return 10 * phase;
            }
        }
    }
    // A judged evil buffer is refused by the rule (the server is not
    // asked and not called).
    for i in 0..WORDS {
        ipc::set_buffer_word(FIRST_WORD + i, EVIL);
    }
    expect!(
        31,
        ipc::call(TO_SERVER, &Message::new(RULED, &[]).with_length(LENGTH)).map(|_| ()),
        Err(ErrorCode::Denied)
    );
    // The race: at the scribbler's priority, the scribbler spinning.
    MODE.store(RACE, Ordering::Release);
    let Ok(()) = APP.set_priority(SCRIBBLER_PRIORITY) else {
        return 40;
    };
    let (mut passed, mut refused) = (0u64, 0u64);
    for round in 0..RACE_ROUNDS {
        match ipc::call(
            TO_SERVER,
            &Message::new(RACED, &[round, 0, 0, 0, 0, 0]).with_length(LENGTH),
        ) {
            Ok(_) => passed += 1,
            Err(ErrorCode::Denied) => refused += 1,
            Err(_) => return 41,
        }
        let _ = sdk::syscall::yield_now();
    }
    sdk::println!("judged memory race: {passed} calls delivered as judged, {refused} refused on a spoiled buffer");
    // Both must have happened for the race to have tested anything.
    if passed == 0 {
        return 42;
    }
    if refused == 0 {
        return 43;
    }
    0
}

/// The server: receives each request and call as the phases bring them
/// and checks every message is the safe pattern.
pub fn server() -> i32 {
    match serve() {
        Ok(()) => 0,
        Err(check) => check,
    }
}

/// The buffer words of the message just received are the safe pattern.
fn received_safe_pattern() -> bool {
    (0..WORDS).all(|i| ipc::buffer_word(FIRST_WORD + i) == safe_word(i))
}

fn wait_for_scribbler() -> Result<(), i32> {
    ipc::wait(SERVER_GO).map(|_| ()).map_err(|_| 50)
}

/// Receives the app's queued call of `round` (after the scribbler spoiled
/// its buffer) and checks it: the buffer words as judged, `x2..x7` as
/// `words` says.
fn receive_call(label: u64, words: [u64; 6]) -> Result<(), i32> {
    wait_for_scribbler()?;
    let received = ipc::recv(CALLS).map_err(|_| 51)?;
    let info = received.message.info;
    if info.label() != label || info.length() != LENGTH || received.badge != APP_BADGE {
        return Err(52);
    }
    if received.message.words != words {
        return Err(53);
    }
    if !received_safe_pattern() {
        sdk::println!("judged memory: a call delivered words the scribbler wrote after the check");
        return Err(54);
    }
    ipc::reply(&Message::new(0, &[])).map_err(|_| 55)
}

/// Receives the app's request for `round`: the judged bytes it carries are
/// the safe pattern (the 64 bytes of buffer words 6..=13).
fn receive_request(label: u64) -> Result<(), i32> {
    let received = ipc::recv(REQUESTS).map_err(|_| 60)?;
    let request = PolicyRequest::decode(&received, ipc::buffer_word).ok_or(61)?;
    let info = MessageInfo::from(request.args[1]);
    if request.syscall != Some(Syscall::Call) || info.label() != label {
        return Err(62);
    }
    if request.memory != CarriedMemory::Message || request.judged_bytes() != SAFE {
        return Err(63);
    }
    if request.endpoint_badge != POLICY_BADGE {
        return Err(64);
    }
    Ok(())
}

fn serve() -> Result<(), i32> {
    let marks = |round: u64| [round, round + 1, round + 2, round + 3, round + 4, round + 5];
    for round in 0..ROUNDS {
        receive_call(RULED, marks(round))?;
    }
    for (label, answer) in [
        (ASKED, PolicyAnswer::Allow),
        (ASKED_WITH, PolicyAnswer::AllowWith(NEW_WORDS)),
    ] {
        for round in 0..ROUNDS {
            receive_request(label)?;
            // The scribbler spoils the buffer before the answer...
            wait_for_scribbler()?;
            ipc::reply(&answer.to_message()).map_err(|_| 65)?;
            // ... and again before the call is received.
            let words = match answer {
                PolicyAnswer::AllowWith(words) => words,
                _ => marks(round),
            };
            receive_call(label, words)?;
        }
    }
    // The race, at the others' priority: every call that got through is
    // the safe pattern; the refused ones never arrive.
    SERVER_TCB
        .set_priority(SCRIBBLER_PRIORITY)
        .map_err(|_| 69)?;
    for _ in 0..RACE_ROUNDS + 1 {
        let received = ipc::recv(CALLS).map_err(|_| 70)?;
        match received.message.info.label() {
            RACED if received_safe_pattern() => {
                ipc::reply(&Message::new(0, &[])).map_err(|_| 71)?;
                let _ = sdk::syscall::yield_now();
            }
            RACED => {
                sdk::println!("judged memory race: a call delivered a buffer it was not judged on");
                return Err(72);
            }
            DONE => {
                let _ = ipc::reply(&Message::new(0, &[]));
                return Ok(());
            }
            _ => return Err(73),
        }
    }
    Err(74)
}
