//! Reply objects (`Retype` of `CapType::Reply`, `ReplySave`, then
//! `Send` through the saved reply): a server takes calls from two clients
//! and answers them out of order, reuses a Reply object, then makes saved
//! replies go stale or deletes them. Each program returns its exit
//! status: 0 when every check passed, else the number of the first failed
//! check.

use crate::programs::{BootProgram, CONSOLE_SLOT, REPLY_CLIENT_FIRST, REPLY_CLIENT_SECOND};
use abi::cap::{CapType, Rights};
use abi::vspace::FRAME_MAP_START;
use abi::ErrorCode;
use sdk::ipc::{self, Cptr, Message};
use sdk::reply::ReplyCap;
use sdk::syscall::{cnode, retype};
use sdk::tcb::Tcb;
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::VSpace;

/// The server's CNode (radix 5: 32 slots).
const CNODE: u64 = 0;
const CNODE_SLOTS: u64 = 32;
/// The endpoint both clients call (the server may receive and send).
const ENDPOINT: Cptr = Cptr(2);
/// The first client's TCB (write right), to suspend it.
const FIRST_CLIENT: Tcb = Tcb(Cptr(3));
/// Untyped memory for the thread the server makes and kills.
const UNTYPED: u64 = 4;
/// Where the server keeps Reply objects, and where it tries to copy one
/// to.
const SAVED: u64 = 5;
const COPY_TARGET: u64 = 6;
const MOVED: u64 = 7;
const SAVED_FOR_SUSPENDED: u64 = 8;
const SAVED_FOR_KILLED: u64 = 10;
/// A copy of the server's CNode capability without the write right.
const READ_ONLY_CNODE: u64 = 11;
/// The killed thread's CNode and TCB.
const VICTIM_CNODE: u64 = 12;
const VICTIM_TCB: Tcb = Tcb(Cptr(13));
const VICTIM_BADGE: u64 = 0x71c;
/// The server's own VSpace (the victim is a thread of its program and
/// space) and where the victim's stack and IPC buffer frames go.
const OWN_SPACE: VSpace = VSpace(Cptr(14));
const VICTIM_FRAMES: u64 = 16;
const VICTIM_STACK_PAGES: u64 = 4;
/// Below both clients: it calls only once they have ended.
const VICTIM_PRIORITY: u64 = 100;

/// Labels of the first client's three calls, the second client's call,
/// and of the answers.
const FIRST_CALL: u64 = 0xa1;
const FIRST_SUSPENDED_CALL: u64 = 0xa2;
const FIRST_DELETED_CALL: u64 = 0xa3;
const SECOND_CALL: u64 = 0xb1;
const ANSWER_FIRST: u64 = 0x10;
const ANSWER_SECOND: u64 = 0x20;
/// IPC buffer word 6 of the first client's answer (a 7-word message).
const BUFFER_WORD: u64 = 0x6666;

/// Each answer says in word 0 in which order it was given and in word 1
/// the caller's word 0 times 10.
fn answer(label: u64, order: u64, asked: u64) -> Message {
    Message::new(label, &[order, asked * 10])
}

/// The server.
pub fn server() -> i32 {
    // Reply objects, paid for with the Untyped like any other object.
    expect!(1, retype(UNTYPED, CapType::Reply, 0, SAVED, 1), Ok(()));
    for (check, slot) in [(2, SAVED_FOR_SUSPENDED), (3, SAVED_FOR_KILLED)] {
        expect!(check, retype(UNTYPED, CapType::Reply, 0, slot, 1), Ok(()));
    }
    // Nothing owed yet; each refusal changes nothing.
    let save = cnode::reply_save;
    expect!(5, save(CNODE, SAVED), Err(ErrorCode::NoReplyTarget));
    expect!(
        6,
        save(CNODE, COPY_TARGET),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        7,
        save(CNODE, CONSOLE_SLOT),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        8,
        save(CNODE, CNODE_SLOTS),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        9,
        save(CONSOLE_SLOT, SAVED),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        10,
        cnode::mint(CNODE, CNODE, READ_ONLY_CNODE, Rights::READ, None),
        Ok(())
    );
    expect!(
        11,
        save(READ_ONLY_CNODE, SAVED),
        Err(ErrorCode::MissingRights)
    );

    // The first client calls; its reply is saved (and moved).
    let Ok(first) = ipc::recv(ENDPOINT) else {
        return 12;
    };
    expect!(
        13,
        (first.badge, first.message.info.label()),
        (REPLY_CLIENT_FIRST, FIRST_CALL)
    );
    let Ok(saved) = ReplyCap::save(Cptr(CNODE), SAVED) else {
        return 14;
    };
    expect!(
        15,
        ipc::reply(&Message::new(0, &[])),
        Err(ErrorCode::NoReplyTarget)
    );
    expect!(
        16,
        cnode::copy(CNODE, saved.0 .0, COPY_TARGET),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        17,
        cnode::mint(CNODE, saved.0 .0, COPY_TARGET, Rights::WRITE, None),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(18, cnode::move_cap(CNODE, saved.0 .0, MOVED), Ok(()));
    let moved = ReplyCap(Cptr(MOVED));
    // Replies carry no capabilities.
    let mut with_caps = answer(ANSWER_FIRST, 0, 0);
    with_caps.info = with_caps.info.with_caps(1);
    expect!(
        19,
        moved.answer(&with_caps),
        Err(ErrorCode::InvalidArgument)
    );

    // The second client calls: the Reply object holding the first caller
    // takes no second one. It is answered first, by `Reply`; then the
    // first one, through its Reply object, with a buffer word.
    let Ok(second) = ipc::recv(ENDPOINT) else {
        return 20;
    };
    expect!(
        21,
        (second.badge, second.message.info.label()),
        (REPLY_CLIENT_SECOND, SECOND_CALL)
    );
    expect!(22, save(CNODE, MOVED), Err(ErrorCode::InvalidArgument));
    let asked = second.message.words[0];
    expect!(23, ipc::reply(&answer(ANSWER_SECOND, 1, asked)), Ok(()));
    ipc::set_buffer_word(6, BUFFER_WORD);
    let asked = first.message.words[0];
    let long = answer(ANSWER_FIRST, 2, asked).with_length(7);
    expect!(24, moved.answer(&long), Ok(()));
    // Answered once: the object is empty again (and still there).
    expect!(
        25,
        moved.answer(&answer(ANSWER_FIRST, 3, 0)),
        Err(ErrorCode::NoReplyTarget)
    );

    // A reply saved for a caller that is then suspended is stale, even
    // once that caller waits again for another call's reply. The emptied
    // object takes that next call's reply.
    let Ok(call) = ipc::recv(ENDPOINT) else {
        return 26;
    };
    expect!(27, call.message.info.label(), FIRST_SUSPENDED_CALL);
    let Ok(stale) = ReplyCap::save(Cptr(CNODE), SAVED_FOR_SUSPENDED) else {
        return 28;
    };
    expect!(29, FIRST_CLIENT.suspend(), Ok(()));
    expect!(30, FIRST_CLIENT.resume(), Ok(()));
    let Ok(call) = ipc::recv(ENDPOINT) else {
        return 31;
    };
    expect!(32, call.message.info.label(), FIRST_DELETED_CALL);
    expect!(
        33,
        stale.answer(&answer(ANSWER_FIRST, 3, 0)),
        Err(ErrorCode::NoReplyTarget)
    );
    expect!(34, save(CNODE, SAVED_FOR_SUSPENDED), Ok(()));

    // Deleting a saved reply wakes its caller with `ObjectDeleted`.
    expect!(35, cnode::delete(CNODE, SAVED_FOR_SUSPENDED), Ok(()));
    expect!(
        36,
        stale.answer(&answer(ANSWER_FIRST, 4, 0)),
        Err(ErrorCode::InvalidCapability)
    );

    killed_caller()
}

/// A reply saved for a caller that is then killed (a thread this server
/// made, ended by deleting its TCB) is stale.
fn killed_caller() -> i32 {
    expect!(
        40,
        retype(UNTYPED, CapType::CNode, 3, VICTIM_CNODE, 1),
        Ok(())
    );
    expect!(
        41,
        retype(UNTYPED, CapType::Tcb, 0, VICTIM_TCB.0 .0, 1),
        Ok(())
    );
    expect!(
        42,
        cnode::mint_into(
            VICTIM_CNODE,
            CONSOLE_SLOT,
            CONSOLE_SLOT,
            Rights::WRITE,
            None
        ),
        Ok(())
    );
    expect!(
        43,
        cnode::mint_into(
            VICTIM_CNODE,
            ENDPOINT.0,
            2,
            Rights::WRITE,
            Some(VICTIM_BADGE)
        ),
        Ok(())
    );
    // It calls on slot 2 and waits for the answer (`thread_tests::caller`,
    // a thread of the server's own program and space).
    expect!(
        44,
        VICTIM_TCB.configure(Cptr(VICTIM_CNODE), VICTIM_PRIORITY),
        Ok(())
    );
    let victim = OwnThread {
        tcb: VICTIM_TCB,
        vspace: OWN_SPACE,
        untyped: Cptr(UNTYPED),
        first_slot: VICTIM_FRAMES,
        stack_pages: VICTIM_STACK_PAGES,
        area: FRAME_MAP_START,
        fault_endpoint: None,
        name: None,
    };
    let program = BootProgram::ThreadsCaller.selector(0);
    expect!(52, bind_to_own_space(&victim, program).map(|_| ()), Ok(()));
    expect!(45, VICTIM_TCB.resume(), Ok(()));
    let Ok(call) = ipc::recv(ENDPOINT) else {
        return 46;
    };
    expect!(47, call.badge, VICTIM_BADGE);
    let Ok(stale) = ReplyCap::save(Cptr(CNODE), SAVED_FOR_KILLED) else {
        return 48;
    };
    expect!(49, cnode::delete(CNODE, VICTIM_TCB.0 .0), Ok(()));
    expect!(
        50,
        stale.answer(&answer(0, 0, 0)),
        Err(ErrorCode::NoReplyTarget)
    );
    expect!(51, cnode::delete(CNODE, SAVED_FOR_KILLED), Ok(()));
    0
}

/// A client: `REPLY_CLIENT_FIRST` (its reply is saved and comes second,
/// then its calls meet a stale and a deleted saved reply) or
/// `REPLY_CLIENT_SECOND` (answered first).
pub fn client(which: u64) -> i32 {
    match which {
        REPLY_CLIENT_FIRST => first_client(),
        REPLY_CLIENT_SECOND => second_client(),
        _ => 99,
    }
}

fn first_client() -> i32 {
    let Ok(reply) = ipc::call(ENDPOINT, &Message::new(FIRST_CALL, &[3])) else {
        return 1;
    };
    expect!(2, reply.info.label(), ANSWER_FIRST);
    expect!(3, reply.info.length(), 7);
    expect!(4, (reply.words[0], reply.words[1]), (2, 30));
    expect!(5, ipc::buffer_word(6), BUFFER_WORD);
    expect!(
        6,
        ipc::call(ENDPOINT, &Message::new(FIRST_SUSPENDED_CALL, &[])),
        Err(ErrorCode::Interrupted)
    );
    expect!(
        7,
        ipc::call(ENDPOINT, &Message::new(FIRST_DELETED_CALL, &[])),
        Err(ErrorCode::ObjectDeleted)
    );
    0
}

fn second_client() -> i32 {
    let Ok(reply) = ipc::call(ENDPOINT, &Message::new(SECOND_CALL, &[4])) else {
        return 1;
    };
    expect!(2, reply.info.label(), ANSWER_SECOND);
    expect!(3, (reply.words[0], reply.words[1]), (1, 40));
    0
}
