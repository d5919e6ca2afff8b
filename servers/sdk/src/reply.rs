//! Reply objects: answering calls later, in any order.
//!
//! A server that received a `Call` owes that caller a reply. `ReplySave`
//! moves the obligation into a Reply object (retyped from an Untyped, like
//! any object), so the server can take other calls first; a `Send` through
//! a capability to the object answers the caller exactly as `ipc::reply`
//! would, and leaves the object empty for the next save. See
//! `docs/abi.md`.

use crate::ipc::{self, Cptr, Message};
use abi::ErrorCode;

/// A Reply capability in this thread's CSpace: room for the answer to one
/// `Call` at a time.
#[derive(Debug, PartialEq, Eq)]
pub struct ReplyCap(pub Cptr);

impl ReplyCap {
    /// Saves the reply this thread owes into the Reply object whose
    /// capability (write right) is in slot `slot` of its own CSpace,
    /// through its CNode capability `cnode` (write right).
    /// `NoReplyTarget` if it owes none; `InvalidArgument` for the answer
    /// to a fault or trace stop (only `Reply` gives those), or when the
    /// object holds an answer already. A policy request's is saved: the
    /// answer is then the verdict (`sdk::policy_server::answer`).
    pub fn save(cnode: Cptr, slot: u64) -> Result<ReplyCap, ErrorCode> {
        crate::syscall::cnode::reply_save(cnode.0, slot)?;
        Ok(ReplyCap(Cptr(slot)))
    }

    /// Answers the caller with `message` (no capabilities); the object is
    /// empty afterwards. `NoReplyTarget` if it holds no answer (none was
    /// saved, the caller no longer waits, or it was answered already).
    pub fn answer(&self, message: &Message) -> Result<(), ErrorCode> {
        ipc::send(self.0, message)
    }
}
