//! The same-address-space IPC rows (`*_same_as`): the server makes its
//! client a second thread of its own address space and CSpace, with a
//! stack and an IPC buffer of its own retyped from the case's Untyped,
//! and the two run the loops of the rows between two address spaces
//! (`run_ipc_server`, `ipc_client`). Before the timed calls the client
//! sends one message longer than the registers, through its own buffer,
//! and checks the answer that comes back through it: two threads of one
//! space each message through their own buffer.

use super::{ipc_client, run_ipc_server, IpcPhase, FAST_LENGTH};
use crate::programs::{BootProgram, CNODE_SLOT, ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT};
use abi::bench::{BenchParameter, IPC_SAME_AS_LABEL};
use abi::cap::CapType;
use abi::vspace::FRAME_MAP_START;
use sdk::ipc::{self, buffer_word, set_buffer_word, Cptr, Message};
use sdk::println;
use sdk::syscall::retype;
use sdk::tcb::Tcb;
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::VSpace;

/// The case's Untyped and the server's own (kernel-made) VSpace.
const UNTYPED: u64 = SECOND_ENDPOINT_SLOT;
const OWN_SPACE: VSpace = VSpace(Cptr(4));
/// The client: its TCB, and its stack and IPC buffer frames (slots from
/// 6), mapped from the start of the frame window (`sdk::thread`'s
/// layout: a guard page, the stack, a guard page, the buffer, apart from
/// the server's at `abi::IPC_BUFFER_ADDRESS`).
const CLIENT_THREAD: OwnThread = OwnThread {
    tcb: Tcb(Cptr(5)),
    vspace: OWN_SPACE,
    untyped: Cptr(UNTYPED),
    first_slot: 6,
    stack_pages: 4,
    area: FRAME_MAP_START,
    fault_endpoint: None,
    name: None,
};
const CLIENT: Tcb = CLIENT_THREAD.tcb;
const BUFFER_ADDRESS: u64 = FRAME_MAP_START + (CLIENT_THREAD.area_pages() - 1) * 0x1000;
/// The case's priority for both threads (the server's MCP).
const PRIORITY: u64 = 100;

/// The label of the check message, and its length (one word past the
/// registers).
const CHECK_LABEL: u64 = 0x5a5a;
const CHECK_LENGTH: u8 = 8;

const SAME_AS_PHASE: [IpcPhase; 1] = [IpcPhase {
    label: IPC_SAME_AS_LABEL,
    length: FAST_LENGTH,
    call_row: "ipc_call_one_way_same_as",
    reply_row: "ipc_reply_recv_one_way_same_as",
    round_row: "ipc_round_trip_same_as",
}];

/// The server: starts its client, answers its check message, then serves
/// the timed calls.
pub fn run_server(parameter: BenchParameter) -> i32 {
    if let Err(step) = start_client(parameter) {
        println!("BENCH-ERROR name=ipc_call_one_way_same_as reason=starting the client failed at step {step}");
        return 1;
    }
    // The check: words 6 and 7 came through the client's buffer into the
    // server's; the answer goes back the same way, each word plus one.
    let endpoint = Cptr(ENDPOINT_SLOT);
    let Ok(check) = ipc::recv(endpoint) else {
        return 1;
    };
    let length = check.message.info.length();
    if check.message.info.label() != CHECK_LABEL || length != CHECK_LENGTH {
        println!("BENCH-ERROR name=ipc_call_one_way_same_as reason=the check message arrived as label {:#x}, length {length}", check.message.info.label());
        return 1;
    }
    if buffer_word(6) != 600 || buffer_word(7) != 700 {
        println!("BENCH-ERROR name=ipc_call_one_way_same_as reason=the check message's words 6 and 7 did not reach the server's own buffer");
        return 1;
    }
    for i in 6..usize::from(length) {
        set_buffer_word(i, buffer_word(i).wrapping_add(1));
    }
    if ipc::reply(&Message::new(CHECK_LABEL, &[]).with_length(length)).is_err() {
        return 1;
    }
    run_ipc_server(parameter)
}

/// The client's TCB, configured with the server's CSpace, and its stack
/// and buffer mapped into the server's space; it starts at the program's
/// entry with `BenchSameAsClient`'s selector. `Err(step)` names the step
/// that failed.
fn start_client(parameter: BenchParameter) -> Result<(), u32> {
    retype(UNTYPED, CapType::Tcb, 0, CLIENT.0 .0, 1).map_err(|_| 1u32)?;
    CLIENT
        .configure(Cptr(CNODE_SLOT), PRIORITY)
        .map_err(|_| 2u32)?;
    let x0 = BootProgram::BenchSameAsClient.selector(parameter.encode());
    let layout = bind_to_own_space(&CLIENT_THREAD, x0).map_err(|_| 3u32)?;
    if layout.buffer.address != BUFFER_ADDRESS {
        return Err(4);
    }
    CLIENT.resume().map_err(|_| 5u32)
}

/// The client (a thread of the server's program and space): the check
/// message, then the timed calls.
pub fn run_client(parameter: BenchParameter) -> i32 {
    if ipc::buffer_address() != BUFFER_ADDRESS {
        println!(
            "BENCH-ERROR name=ipc_call_one_way_same_as reason=the client's buffer is at {:#x}",
            ipc::buffer_address()
        );
        return 1;
    }
    set_buffer_word(6, 600);
    set_buffer_word(7, 700);
    let check = Message::new(CHECK_LABEL, &[]).with_length(CHECK_LENGTH);
    match ipc::call(Cptr(ENDPOINT_SLOT), &check) {
        Ok(answer)
            if answer.info.length() == CHECK_LENGTH
                && buffer_word(6) == 601
                && buffer_word(7) == 701 => {}
        _ => {
            println!("BENCH-ERROR name=ipc_call_one_way_same_as reason=the check message's answer did not come back through the client's own buffer");
            return 1;
        }
    }
    ipc_client(parameter, &SAME_AS_PHASE)
}
