//! Reply capabilities: a reply a server owes, saved into its CSpace.
//!
//! Without them a server owes at most one reply at a time (`reply_to`,
//! seL4's non-MCS reply slot in the TCB): taking a second `Call` before
//! answering the first fails the first caller. `ReplySave` (seL4's
//! `CNode_SaveCaller`) moves the reply it owes into a Reply capability, so
//! it can take other calls and answer each later, in any order.
//!
//! The pieces and how they stay consistent:
//!
//! * The capability names a Reply object (`cap::reply`): one entry of the
//!   object table, no memory. `Kernel::reply_callers[object]` is the
//!   caller it answers, and that caller's `Thread::saved_reply` names the
//!   object; the two are set and cleared together (the invariant checks
//!   say so).
//! * A `Send` or `NBSend` through the capability answers the caller as
//!   `Reply` would and deletes the capability (one answer per call).
//! * The caller ending, being suspended or otherwise leaving its wait
//!   (`Kernel::cancel_wait`) clears the link: the capability is stale, a
//!   use is `NoReplyTarget` (and deletes it). It never names another
//!   thread, whatever reuses the caller's thread slot.
//! * Deleting the capability (with its CNode, too) destroys the object,
//!   and a caller still linked wakes with `ObjectDeleted`, as when a
//!   server ends owing it a reply.
//! * Fault messages, policy requests and trace stops are answered by
//!   `Reply` only: `ReplySave` refuses them (`InvalidArgument`), since the
//!   thread behind one cannot take an error code when the capability goes.

use super::{Kernel, SyscallResult};
use crate::cap::{Capability, ObjectId, SlotId};
use crate::ipc::{self, message, Effects};
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::ErrorCode;

impl Kernel {
    /// `ReplySave`: the reply `current` owes becomes a Reply capability in
    /// empty `slot`. Checked in this order, nothing changing on failure:
    /// the slot (`SlotOccupied`), a reply owed (`NoReplyTarget`), an
    /// ordinary call rather than a fault (`InvalidArgument`), room in the
    /// object table (`OutOfResources`).
    pub(super) fn reply_save(&mut self, current: ThreadId, slot: SlotId) -> Result<(), ErrorCode> {
        self.caps.check_empty(slot).map_err(ErrorCode::from)?;
        let caller = self.threads[current.index()]
            .reply_to
            .ok_or(ErrorCode::NoReplyTarget)?;
        if self.threads[caller.index()].state != ThreadState::BlockedOnReply {
            return Err(ErrorCode::InvalidArgument);
        }
        let reply = self.caps.create_reply(slot).map_err(ErrorCode::from)?;
        self.threads[current.index()].reply_to = None;
        self.threads[caller.index()].saved_reply = Some(reply);
        self.reply_callers[reply.index()] = Some(caller);
        Ok(())
    }

    /// `Send` or `NBSend` through the Reply capability `cap` in `slot`:
    /// the caller gets the message as from `Reply`, and the capability is
    /// deleted. A stale capability is deleted too, with `NoReplyTarget`.
    /// A message with capabilities is `InvalidArgument` (replies carry
    /// none) and changes nothing.
    #[cold]
    pub(super) fn reply_through_capability<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        slot: SlotId,
        cap: Capability,
    ) -> SyscallResult {
        if !cap.rights().write() {
            return SyscallResult::Return(ErrorCode::MissingRights);
        }
        if message::sent_info(&self.threads[current.index()]).caps() != 0 {
            return SyscallResult::Return(ErrorCode::InvalidArgument);
        }
        let caller = self.reply_callers[cap.object().index()].take();
        if let Some(caller) = caller {
            self.threads[caller.index()].saved_reply = None;
        }
        // The object is gone with its only capability; its caller was
        // unlinked above, so nobody wakes with `ObjectDeleted`.
        let _ = self.destroying(platform, |caps, on_destroy| caps.delete(slot, on_destroy));
        let Some(caller) = caller else {
            return SyscallResult::Return(ErrorCode::NoReplyTarget);
        };
        match ipc::answer(platform, &mut self.threads, current, caller) {
            Ok(caller) => SyscallResult::Ipc(Effects::continue_and_wake(caller)),
            Err(_) => SyscallResult::Return(ErrorCode::NoReplyTarget),
        }
    }

    /// The Reply capability at `cptr` of `current`'s CSpace, for a `Send`
    /// whose capability is no endpoint; `None` if it is no Reply either.
    pub(super) fn reply_capability(
        &self,
        current: ThreadId,
        cptr: u64,
    ) -> Option<(SlotId, Capability)> {
        let cnode = self.threads[current.index()].cspace?;
        let slot = self.caps.slot(cnode, cptr).ok()?;
        let cap = self
            .caps
            .lookup_typed(slot, CapType::Reply, Rights::NONE)
            .ok()?;
        Some((slot, cap))
    }

    /// A waiting caller leaves its wait: a Reply capability saved for it
    /// goes stale.
    pub(super) fn forget_saved_reply(&mut self, caller: ThreadId) {
        if let Some(reply) = self.threads[caller.index()].saved_reply.take() {
            self.reply_callers[reply.index()] = None;
        }
    }

    /// Checks the links between Reply objects and their callers.
    pub(super) fn check_reply_links(&self) -> Result<(), &'static str> {
        for (index, caller) in self.reply_callers.iter().enumerate() {
            let Some(caller) = caller else { continue };
            let reply = ObjectId(index as u32);
            if self.caps.object(reply).map(|h| h.cap_type) != Some(CapType::Reply) {
                return Err("a saved reply's caller is linked to an object that is no Reply");
            }
            let thread = &self.threads[caller.index()];
            if thread.saved_reply != Some(reply) || thread.state != ThreadState::BlockedOnReply {
                return Err("a saved reply names a thread that does not wait for it");
            }
        }
        for (index, thread) in self.threads.iter().enumerate() {
            let Some(reply) = thread.saved_reply else {
                continue;
            };
            if self.reply_callers.get(reply.index()).copied().flatten()
                != Some(ThreadId(index as u16))
            {
                return Err("a thread waits for a saved reply that does not name it");
            }
        }
        Ok(())
    }
}
