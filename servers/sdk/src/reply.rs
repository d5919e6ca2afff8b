//! Reply capabilities: answering calls later, in any order.
//!
//! A server that received a `Call` owes that caller a reply. `ReplySave`
//! turns the obligation into a Reply capability in the server's CSpace, so
//! the server can take other calls first; a `Send` through the capability
//! answers the caller exactly as `ipc::reply` would (and uses the
//! capability up). See `docs/abi.md`.

use crate::ipc::{self, Cptr, Message};
use abi::ErrorCode;

/// A Reply capability in this thread's CSpace: one answer to one `Call`.
#[derive(Debug, PartialEq, Eq)]
pub struct ReplyCap(pub Cptr);

impl ReplyCap {
    /// Saves the reply this thread owes into the empty slot `slot` of its
    /// own CSpace, through its CNode capability `cnode` (write right).
    /// `NoReplyTarget` if it owes none; `InvalidArgument` for the answer
    /// to a fault, policy request or trace stop (only `Reply` gives those).
    pub fn save(cnode: Cptr, slot: u64) -> Result<ReplyCap, ErrorCode> {
        crate::syscall::cnode::reply_save(cnode.0, slot)?;
        Ok(ReplyCap(Cptr(slot)))
    }

    /// Answers the caller with `message` (no capabilities). The capability
    /// is gone afterwards, also when the answer failed because the caller
    /// no longer waits (`NoReplyTarget`); only a refused message
    /// (`InvalidArgument`: capabilities on it) leaves it in its slot.
    pub fn answer(self, message: &Message) -> Result<(), ErrorCode> {
        ipc::send(self.0, message)
    }
}
