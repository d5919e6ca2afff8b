//! A notification bound to a thread: its signals end the thread's `Recv`.
//! Each program returns the number of its first failed check.

use crate::programs::ENDPOINT_SLOT;
use abi::message::NOTIFICATION_LABEL;
use abi::ErrorCode;
use sdk::ipc::{self, Cptr, Message};
use sdk::tcb::Tcb;

const ENDPOINT: Cptr = Cptr(ENDPOINT_SLOT);
const NOTIFICATION: Cptr = Cptr(3);
const OWN_TCB: Tcb = Tcb(Cptr(4));
/// The waiter's own capability to signal the notification (badge
/// `OWN_BITS`), to leave a signal pending once it has unbound.
const OWN_SIGNAL: Cptr = Cptr(5);
/// The waiter's badge.
pub const OWN_BITS: u64 = 0x80;
/// The signaller's badge.
pub const SIGNAL_BITS: u64 = 0x40;

fn bind(tcb: Tcb, notification: Option<Cptr>) -> Result<(), ErrorCode> {
    tcb.bind_notification(notification)
}

/// What a receive returned: its label and `x8`.
fn received(result: Result<ipc::Received, ErrorCode>) -> Result<(u64, u64), ErrorCode> {
    result.map(|r| (r.message.info.label(), r.badge))
}

/// Binds the notification, then receives: a signal, a message, a signal
/// that came while it was not receiving; unbinds.
pub fn waiter() -> i32 {
    expect!(
        1,
        bind(OWN_TCB, Some(ENDPOINT)),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(2, bind(OWN_TCB, Some(NOTIFICATION)), Ok(()));
    expect!(
        3,
        bind(OWN_TCB, Some(NOTIFICATION)),
        Err(ErrorCode::InvalidArgument)
    );
    // The signaller signals: the Recv ends with the word.
    expect!(
        4,
        received(ipc::recv(ENDPOINT)),
        Ok((NOTIFICATION_LABEL, SIGNAL_BITS))
    );
    // Then it sends: an ordinary message.
    expect!(5, received(ipc::recv(ENDPOINT)), Ok((7, 0)));
    // Below the signaller: its next signal comes while this thread is not
    // receiving; the next Recv returns it at once.
    expect!(6, OWN_TCB.set_priority(90), Ok(()));
    expect!(
        7,
        received(ipc::recv(ENDPOINT)),
        Ok((NOTIFICATION_LABEL, SIGNAL_BITS))
    );
    expect!(8, bind(OWN_TCB, None), Ok(()));
    // Unbound, a pending signal no longer ends a receive: it stays in
    // the notification (bound, the NBRecv would return it).
    expect!(9, ipc::signal(OWN_SIGNAL), Ok(()));
    expect!(
        10,
        received(ipc::nb_recv(ENDPOINT)),
        Err(ErrorCode::WouldBlock)
    );
    expect!(11, ipc::poll(NOTIFICATION), Ok(OWN_BITS));
    0
}

/// Signals, sends, signals.
pub fn signaller() -> i32 {
    expect!(1, ipc::signal(NOTIFICATION), Ok(()));
    expect!(2, ipc::send(ENDPOINT, &Message::new(7, &[])), Ok(()));
    expect!(3, ipc::signal(NOTIFICATION), Ok(()));
    0
}
