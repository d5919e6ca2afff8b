//! Fault injection: an Untyped revoked while the objects made from it are
//! in use. The owner makes an endpoint and a frame from its Untyped, gives
//! the endpoint to a waiter (which blocks receiving on it) and maps the
//! frame; then revokes the Untyped. The waiter wakes with
//! `ObjectDeleted`, its copy of the capability is gone, the mapping is
//! gone, and the memory comes back zeroed for the next retype. Each
//! program returns the number of its first failed check.

use crate::programs::{CNODE_SLOT, ENDPOINT_SLOT};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, MessageInfo, IPC_BUFFER_RECEIVE_SLOT_WORD, IPC_BUFFER_SEND_CAPS_WORD};
use sdk::ipc::{self, Cptr, Message};
use sdk::vspace::{Frame, VSpace};

const CASE_ENDPOINT: Cptr = Cptr(ENDPOINT_SLOT);
const UNTYPED: u64 = 4;
const OWN_VSPACE: VSpace = VSpace(Cptr(6));
/// Where the owner makes the endpoint, and where the waiter receives it.
const MADE_ENDPOINT: u64 = 8;
const MADE_FRAME: Frame = Frame(Cptr(9));

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

/// Fault injection: the receiver of an in-progress `Call` is ended under
/// its caller (a supervisor attaches a `Kill`-everything filter to it
/// while it holds the call). `KillServer` receives the call and waits on
/// its notification; `KillSupervisor` confines it and wakes it; its next
/// syscall kills it; `KillClient`'s call ends with `ObjectDeleted`.
pub fn kill_supervisor() -> i32 {
    use sdk::policy::{Action, FilterBuilder};
    use sdk::tcb::{FilterCap, Tcb};
    let server = Tcb(Cptr(3));
    let filter = FilterCap(Cptr(8));
    let mut buffer = [0u8; 64];
    // No rules: every syscall gets the default.
    let Ok(rules) = FilterBuilder::new(Action::Kill).encode(&mut buffer) else {
        return 1;
    };
    expect!(
        2,
        sdk::syscall::retype(UNTYPED, CapType::Filter, 0, filter.0 .0, 1),
        Ok(())
    );
    expect!(3, filter.load(rules), Ok(()));
    expect!(4, server.attach_filter(filter, None), Ok(()));
    // Wake the server: its next syscall ends it, with the call in hand.
    expect!(5, ipc::signal(Cptr(5)), Ok(()));
    // It has ended (more urgent, it ran into its filter at once), killed
    // at its reply. Its TCB is kept, ended, while a capability names it:
    // a resume is refused (only `TcbRestart` runs it again; a live or
    // suspended thread would take it), its registers show the killed
    // call. Deleting this capability leaves the slot empty (the driver's
    // original keeps the TCB until the case is taken back).
    expect!(6, server.resume(), Err(ErrorCode::InvalidArgument));
    expect!(
        7,
        server.read_register(abi::tcb::Register::X(8)),
        Ok(abi::Syscall::Reply.number())
    );
    expect!(
        8,
        sdk::syscall::cnode::delete(CNODE_SLOT, server.0 .0),
        Ok(())
    );
    expect!(9, server.suspend(), Err(ErrorCode::InvalidCapability));
    0
}

/// Receives the client's call, then waits (the call in progress).
pub fn kill_server() -> i32 {
    if ipc::recv(CASE_ENDPOINT).is_err() {
        return 1;
    }
    let _ = ipc::wait(Cptr(5));
    // Killed by its filter here; reaching the reply would be a failure.
    let _ = ipc::reply(&Message::new(0, &[]));
    2
}

/// Calls the server and learns its receiver is gone.
pub fn kill_client() -> i32 {
    expect!(
        1,
        ipc::call(CASE_ENDPOINT, &Message::new(1, &[])).map(|_| ()),
        Err(ErrorCode::ObjectDeleted)
    );
    0
}
