//! Threads made from user space (`Retype` of a TCB, `TcbConfigure`,
//! `TcbSetSpace`, `TcbResume`): a root thread builds two children, each
//! with only the capabilities it needs, as threads of its own program and
//! address space (`sdk::thread`: stacks and IPC buffers from its
//! Untyped), named "caller" and "server" (`TcbSetName`, through
//! `OwnThread::name`: their console lines say so), and they talk over an
//! endpoint. Each program returns its
//! exit status: 0 when every check passed, else the number of the first
//! failed check.

use crate::programs::{BootProgram, CONSOLE_SLOT};
use abi::cap::{CapType, Rights};
use abi::vspace::FRAME_MAP_START;
use abi::ErrorCode;
use sdk::ipc::{self, Cptr, Message};
use sdk::syscall::{cnode, retype};
use sdk::tcb::Tcb;
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::VSpace;

/// The root's own CNode (radix 6: 64 slots).
const ROOT_CNODE: u64 = 0;
/// The root's Untyped (28 pages).
const UNTYPED: u64 = 2;
/// The endpoint the children talk over.
const CHANNEL: u64 = 3;
/// The endpoint the children report on.
const REPORTS: u64 = 4;
/// The children's CNodes (radix 3: 8 slots each).
const CNODE_A: u64 = 5;
const CNODE_B: u64 = 6;
/// The children's TCBs, and a third one that is never configured.
const TCB_A: Tcb = Tcb(Cptr(7));
const TCB_B: Tcb = Tcb(Cptr(8));
const TCB_SPARE: Tcb = Tcb(Cptr(9));
/// The root's own TCB (granted by the case), to lower its priority.
const SELF: Tcb = Tcb(Cptr(10));
/// The root's own VSpace (granted by the case): the children's too.
const OWN_SPACE: VSpace = VSpace(Cptr(11));
/// Each child's stack and IPC buffer frames: `CHILD_STACK_PAGES + 1`
/// slots from these, mapped from these addresses of the frame window.
const FRAMES_A: u64 = 16;
const FRAMES_B: u64 = 21;
const CHILD_STACK_PAGES: u64 = 4;
const AREA_A: u64 = FRAME_MAP_START;
const AREA_B: u64 = FRAME_MAP_START + 0x10_0000;
/// Where the root retypes TCBs until its Untyped is used up.
const FILL_FIRST: u64 = 26;
const FILL_END: u64 = 64;

/// Radix of each child's CNode.
const CHILD_RADIX: u64 = 3;
/// The children's priority (the root's MCP); the root runs below it once
/// they start, so each child runs until it waits or exits.
const CHILD_PRIORITY: u64 = 100;

/// In a child's CNode: the channel endpoint (caller: send only; server:
/// receive only) and the report endpoint (send only, badged).
const CHILD_CHANNEL: Cptr = Cptr(2);
const CHILD_REPORTS: Cptr = Cptr(3);
const BADGE_A: u64 = 0xa;
const BADGE_B: u64 = 0xb;

/// Label of a report: the child's status.
fn report(status: u64) -> Message {
    Message::new(status, &[])
}

/// Builds both children, checks every refusal, starts them and collects
/// their reports; then retypes TCBs until its Untyped is used up, and
/// checks that deleting a TCB ends its thread.
pub fn root() -> i32 {
    expect!(1, retype(UNTYPED, CapType::Endpoint, 0, CHANNEL, 2), Ok(()));
    expect!(
        2,
        retype(UNTYPED, CapType::CNode, CHILD_RADIX, CNODE_A, 2),
        Ok(())
    );
    expect!(3, retype(UNTYPED, CapType::Tcb, 0, TCB_A.0 .0, 3), Ok(()));
    // Each child gets the console, its end of the channel and a badged
    // report capability: nothing else (no CNode of its own, no Untyped).
    let give = |target: u64, source: u64, slot: u64, rights: Rights, badge: Option<u64>| {
        cnode::mint_into(target, source, slot, rights, badge)
    };
    expect!(
        4,
        give(CNODE_A, 1, CONSOLE_SLOT, Rights::WRITE, None),
        Ok(())
    );
    expect!(5, give(CNODE_A, CHANNEL, 2, Rights::WRITE, None), Ok(()));
    expect!(
        6,
        give(CNODE_A, REPORTS, 3, Rights::WRITE, Some(BADGE_A)),
        Ok(())
    );
    expect!(
        7,
        give(CNODE_B, 1, CONSOLE_SLOT, Rights::WRITE, None),
        Ok(())
    );
    expect!(8, give(CNODE_B, CHANNEL, 2, Rights::READ, None), Ok(()));
    expect!(
        9,
        give(CNODE_B, REPORTS, 3, Rights::WRITE, Some(BADGE_B)),
        Ok(())
    );
    // Cross-CNode mint: the target slot must be empty and inside the CNode;
    // the source must exist in the caller's CSpace.
    expect!(
        10,
        give(CNODE_A, 1, CONSOLE_SLOT, Rights::WRITE, None),
        Err(ErrorCode::SlotOccupied)
    );
    expect!(
        11,
        give(CNODE_A, 1, 8, Rights::WRITE, None),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        12,
        give(CNODE_A, 40, 4, Rights::WRITE, None),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        13,
        give(CHANNEL, 1, 4, Rights::WRITE, None),
        Err(ErrorCode::WrongCapabilityType)
    );

    let caller = BootProgram::ThreadsCaller.selector(0);
    let server = BootProgram::ThreadsServer.selector(0);
    // Refusals, each changing nothing.
    expect!(14, TCB_SPARE.resume(), Err(ErrorCode::InvalidArgument));
    expect!(
        15,
        TCB_A.configure(Cptr(CNODE_A), CHILD_PRIORITY + 1),
        Err(ErrorCode::Denied)
    );
    // The kernel loads no program: x4 is `NO_PROGRAM` or refused, even
    // the selector of a program written to run as a child.
    for x4 in [caller, BootProgram::Fuzzer.selector(0), 0] {
        expect!(
            16,
            TCB_A.configure_with_x4(Cptr(CNODE_A), CHILD_PRIORITY, x4),
            Err(ErrorCode::InvalidArgument)
        );
    }
    expect!(
        17,
        TCB_A.configure(Cptr(CNODE_A), 256),
        Err(ErrorCode::InvalidArgument)
    );
    // A name the console lines could not show as one is refused, as is
    // a capability that names no thread.
    expect!(
        45,
        TCB_A.set_name("two words"),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        46,
        Tcb(Cptr(CHANNEL)).set_name("caller"),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        18,
        TCB_A.configure(Cptr(CHANNEL), CHILD_PRIORITY),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        19,
        Tcb(Cptr(CHANNEL)).configure(Cptr(CNODE_A), CHILD_PRIORITY),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        20,
        Tcb(Cptr(12)).configure(Cptr(CNODE_A), CHILD_PRIORITY),
        Err(ErrorCode::InvalidCapability)
    );
    // A running thread (the root itself) is no new thread.
    expect!(
        21,
        SELF.configure(Cptr(CNODE_A), CHILD_PRIORITY),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(22, TCB_A.configure(Cptr(CNODE_A), CHILD_PRIORITY), Ok(()));
    // Each child runs its program as a thread of the root's own.
    let child = |tcb: Tcb, first_slot: u64, area: u64, selector: u64, name| {
        let thread = OwnThread {
            tcb,
            vspace: OWN_SPACE,
            untyped: Cptr(UNTYPED),
            first_slot,
            stack_pages: CHILD_STACK_PAGES,
            area,
            fault_endpoint: None,
            name: Some(name),
        };
        bind_to_own_space(&thread, selector).map(|_| ())
    };
    expect!(41, child(TCB_A, FRAMES_A, AREA_A, caller, "caller"), Ok(()));
    // A new thread with its space may be configured again (the same
    // CSpace and priority), still with no program.
    expect!(
        23,
        TCB_A.configure_with_x4(Cptr(CNODE_A), CHILD_PRIORITY, caller),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(42, TCB_A.configure(Cptr(CNODE_A), CHILD_PRIORITY), Ok(()));
    expect!(24, TCB_B.configure(Cptr(CNODE_B), CHILD_PRIORITY), Ok(()));
    expect!(43, child(TCB_B, FRAMES_B, AREA_B, server, "server"), Ok(()));
    // Below the children from now on (the MCP stays 100): each runs until
    // it waits or exits before the root goes on.
    expect!(25, SELF.set_priority(CHILD_PRIORITY - 50), Ok(()));
    expect!(26, TCB_B.resume(), Ok(()));
    expect!(27, TCB_A.resume(), Ok(()));
    let mut badges = 0;
    for check in [28, 30] {
        let Ok(received) = ipc::recv(Cptr(REPORTS)) else {
            return check;
        };
        expect!(check + 1, received.message.info.label(), 0);
        badges |= 1 << received.badge;
    }
    expect!(32, badges, (1 << BADGE_A) | (1 << BADGE_B));
    // The caller has exited: its TCB is kept, naming the ended thread,
    // which a resume does not run (only a restart would).
    expect!(33, TCB_A.resume(), Err(ErrorCode::InvalidArgument));
    // The server waits in Recv again: it is no new thread.
    expect!(
        44,
        TCB_B.configure(Cptr(CNODE_B), CHILD_PRIORITY),
        Err(ErrorCode::InvalidArgument)
    );
    // TCBs until the Untyped is used up:
    // memory, not a table of threads, is what runs out.
    let mut made = 0;
    let mut last = Ok(());
    for slot in FILL_FIRST..FILL_END {
        last = retype(UNTYPED, CapType::Tcb, 0, slot, 1);
        if last.is_err() {
            break;
        }
        made += 1;
    }
    expect!(34, last, Err(ErrorCode::NotEnoughMemory));
    expect!(35, made > 0, true);
    // Deleting the server's only TCB capability ends it: nobody receives
    // on the channel any more.
    expect!(36, cnode::delete(ROOT_CNODE, TCB_B.0 .0), Ok(()));
    expect!(
        37,
        ipc::nb_send(Cptr(CHANNEL), &Message::new(0, &[])),
        Err(ErrorCode::WouldBlock)
    );
    // Its memory comes back only with the rest of the Untyped's.
    let slot = FILL_FIRST + made;
    expect!(
        38,
        retype(UNTYPED, CapType::Tcb, 0, slot, 1),
        Err(ErrorCode::NotEnoughMemory)
    );
    // Deleting an inactive one's TCB capability leaves nothing behind.
    expect!(39, cnode::delete(ROOT_CNODE, FILL_FIRST), Ok(()));
    expect!(
        40,
        cnode::copy(ROOT_CNODE, FILL_FIRST, slot),
        Err(ErrorCode::InvalidCapability)
    );
    // The rest end with the case's Untyped when the root exits.
    0
}

/// Child A: calls the server over the channel (send-only capability) and
/// reports its status.
pub fn caller() -> i32 {
    let status = caller_checks();
    let _ = ipc::send(CHILD_REPORTS, &report(status as u64));
    status
}

fn caller_checks() -> i32 {
    let reply = ipc::call(CHILD_CHANNEL, &Message::new(0x11, &[7, 35]));
    let Ok(reply) = reply else {
        return 1;
    };
    expect!(2, reply.words[0], 42);
    sdk::println!("called the server: 7 + 35 = 42");
    // Its end of the channel cannot receive.
    expect!(
        3,
        ipc::nb_recv(CHILD_CHANNEL).map(|_| ()),
        Err(ErrorCode::MissingRights)
    );
    // It was given no CNode capability.
    expect!(
        4,
        cnode::copy(0, CONSOLE_SLOT, 4),
        Err(ErrorCode::InvalidCapability)
    );
    0
}

/// Child B: answers one call (receive-only capability), checks the slots
/// it was not given are empty, reports, then waits in `Recv` until its
/// TCB is deleted.
pub fn server() -> i32 {
    let status = server_checks();
    let _ = ipc::send(CHILD_REPORTS, &report(status as u64));
    let _ = ipc::recv(CHILD_CHANNEL);
    // Never reached while the root deletes this thread's TCB first.
    100
}

fn server_checks() -> i32 {
    let Ok(request) = ipc::recv(CHILD_CHANNEL) else {
        return 1;
    };
    expect!(2, request.message.info.label(), 0x11);
    expect!(3, request.badge, 0);
    let sum = request.message.words[0] + request.message.words[1];
    expect!(4, ipc::reply(&Message::new(0, &[sum])), Ok(()));
    sdk::println!("answered the caller's call");
    // Its end of the channel cannot send.
    expect!(
        5,
        ipc::nb_send(CHILD_CHANNEL, &Message::new(0, &[])),
        Err(ErrorCode::MissingRights)
    );
    // Slots it was not given are empty: no CNode of its own (slot 0), and
    // nothing past what the root put there.
    expect!(
        6,
        cnode::copy(0, CONSOLE_SLOT, 4),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        7,
        ipc::nb_send(Cptr(4), &Message::new(0, &[])),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        8,
        ipc::nb_send(Cptr(2 + 8), &Message::new(0, &[])),
        Err(ErrorCode::InvalidCapability)
    );
    0
}
