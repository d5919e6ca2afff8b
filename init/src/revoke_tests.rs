//! Fault injection: an Untyped revoked while the objects made from it are
//! in use. The owner makes an endpoint and a frame from its Untyped, gives
//! the endpoint to a waiter (which blocks receiving on it) and maps the
//! frame; then revokes the Untyped. The waiter wakes with
//! `ObjectDeleted`, its copy of the capability is gone, the mapping is
//! gone, and the memory comes back zeroed for the next retype. Each
//! program returns the number of its first failed check.

use abi::boot_program::{CNODE_SLOT, ENDPOINT_SLOT};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, MessageInfo, IPC_BUFFER_RECEIVE_SLOT_WORD, IPC_BUFFER_SEND_CAPS_WORD};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::vspace::{Frame, VSpace};

const CASE_ENDPOINT: Cptr = Cptr(ENDPOINT_SLOT);
const UNTYPED: u64 = 4;
const OWN_VSPACE: VSpace = VSpace(Cptr(6));
/// Where the owner makes the endpoint, and where the waiter receives it.
const MADE_ENDPOINT: u64 = 8;
const MADE_FRAME: Frame = Frame(Cptr(9));

macro_rules! expect {
    ($number:expr, $got:expr, $want:expr) => {
        let (got, want) = ($got, $want);
        if !same(&got, &want) {
            println!("check {} failed: {:?} != {:?}", $number, got, want);
            return $number;
        }
    };
}

fn same<T: PartialEq>(got: &T, want: &T) -> bool {
    got == want
}

/// Makes, hands out, uses, then revokes.
pub fn owner() -> i32 {
    expect!(
        1,
        sdk::syscall::retype(UNTYPED, CapType::Endpoint, 0, MADE_ENDPOINT, 1),
        Ok(())
    );
    expect!(
        2,
        sdk::syscall::retype(UNTYPED, CapType::Frame, 0, MADE_FRAME.0 .0, 1),
        Ok(())
    );
    let Ok(page) = MADE_FRAME.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite) else {
        return 3;
    };
    expect!(4, page.write_u64(0, 0xfeed), Ok(()));
    // Give the endpoint to the waiter (it receives it into its slot 8).
    ipc::set_buffer_word(IPC_BUFFER_SEND_CAPS_WORD, MADE_ENDPOINT);
    let with_cap = Message {
        info: MessageInfo::with(1, 0).with_caps(1),
        words: [0; 6],
    };
    expect!(5, ipc::send(CASE_ENDPOINT, &with_cap), Ok(()));
    // The waiter (more urgent) now waits on the new endpoint.
    expect!(6, sdk::syscall::cnode::revoke(CNODE_SLOT, UNTYPED), Ok(()));
    // Everything made from the Untyped is gone: capabilities and mapping.
    expect!(7, MADE_FRAME.unmap(), Err(ErrorCode::InvalidCapability));
    expect!(
        8,
        ipc::nb_send(Cptr(MADE_ENDPOINT), &Message::new(0, &[])),
        Err(ErrorCode::InvalidCapability)
    );
    // The memory came back: a new frame from it reads zero, not 0xfeed.
    expect!(
        9,
        sdk::syscall::retype(UNTYPED, CapType::Frame, 0, MADE_FRAME.0 .0, 1),
        Ok(())
    );
    let Ok(again) = MADE_FRAME.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::Read) else {
        return 10;
    };
    expect!(11, again.read_u64(0), 0);
    // The waiter reports what it saw.
    match ipc::recv(CASE_ENDPOINT) {
        Ok(report) => {
            expect!(12, report.message.words[0], 0);
        }
        Err(_) => return 13,
    }
    0
}

/// Receives the endpoint, waits on it, and sees it destroyed under it.
pub fn waiter() -> i32 {
    ipc::set_buffer_word(IPC_BUFFER_RECEIVE_SLOT_WORD, MADE_ENDPOINT);
    match ipc::recv(CASE_ENDPOINT) {
        Ok(r) if r.message.info.caps() == 1 => {}
        _ => return 1,
    }
    expect!(
        2,
        ipc::recv(Cptr(MADE_ENDPOINT)).map(|_| ()),
        Err(ErrorCode::ObjectDeleted)
    );
    expect!(
        3,
        ipc::nb_recv(Cptr(MADE_ENDPOINT)).map(|_| ()),
        Err(ErrorCode::InvalidCapability)
    );
    // Report success to the owner (word 0 = 0).
    match ipc::send(CASE_ENDPOINT, &Message::new(0, &[0])) {
        Ok(()) => 0,
        Err(_) => 4,
    }
}
