//! Reply objects: a reply a server owes, saved so it can answer later.
//!
//! Without them a server owes at most one reply at a time (`reply_to`,
//! seL4's non-MCS reply slot in the TCB): taking a second `Call` before
//! answering the first fails the first caller. `ReplySave` moves the reply
//! it owes into a Reply object (retyped from an Untyped, as seL4 MCS's
//! are), so it can take other calls and answer each later, in any order.
//!
//! The pieces and how they stay consistent:
//!
//! * A Reply object (`ReplyBody`) holds at most one caller, and that
//!   caller's `Thread::saved_reply` names the object; the two are set and
//!   cleared together (the invariant checks say so). Saving into a Reply
//!   object that holds a caller is `InvalidArgument`.
//! * A `Send` or `NBSend` through a Reply capability answers the caller as
//!   `Reply` would; the object is empty again, ready for the next save.
//! * The caller ending, being suspended or otherwise leaving its wait
//!   (`Kernel::cancel_wait`) clears the link: the object is empty, a use
//!   is `NoReplyTarget`. It never names another thread.
//! * Destroying the object (its last capability deleted, or its Untyped
//!   revoked) wakes a caller still linked with `ObjectDeleted`, as when a
//!   server ends owing it a reply.
//! * A policy request is saved as a call is (a policy server may hold
//!   several and answer them in any order): the `Send` through the Reply
//!   capability is the verdict, as a `Reply` would be. Its losses fail
//!   closed: the object destroyed unused refuses the stopped call with
//!   `Denied` (a stopped call takes that error as its result), and so
//!   does its server thread's end (`filter_server.rs`).
//! * Fault messages and trace stops are answered by `Reply` only:
//!   `ReplySave` refuses them (`InvalidArgument`). Neither thread can take
//!   an error code if the object went unused: a faulted thread would have
//!   to be stopped, and a trace stop let go unobserved (open), where the
//!   thread's own handler or tracer should decide.
//! * A Reply capability is never copied or minted (`InvalidArgument`),
//!   only moved: it stands for the one answer its object may hold.

use crate::cap::ObjectId;
use crate::cap::{Capability, SlotId};
use crate::ipc::{self, message, Effects};
use crate::kernel::{Kernel, SyscallResult};
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::object_memory::kind;

impl Kernel {
    /// `ReplySave`: the reply `current` owes goes into the Reply object
    /// whose capability (write right) is in `slot`. Checked in this order,
    /// nothing changing on failure: the capability (`InvalidCapability`,
    /// `WrongCapabilityType`, `MissingRights`), a reply owed
    /// (`NoReplyTarget`), an ordinary call rather than a fault
    /// (`InvalidArgument`; a policy request is saved too), an empty Reply
    /// object (`InvalidArgument`).
    pub(in crate::kernel) fn reply_save(
        &mut self,
        current: ThreadId,
        slot: SlotId,
    ) -> Result<(), ErrorCode> {
        let cap = self
            .objects
            .lookup_typed(slot, CapType::Reply, Rights::WRITE)
            .map_err(ErrorCode::from)?;
        let caller = self.objects[current]
            .reply_to
            .ok_or(ErrorCode::NoReplyTarget)?;
        if !waits_for_saveable_answer(&self.objects[caller]) {
            return Err(ErrorCode::InvalidArgument);
        }
        let reply = cap.object();
        let body = self
            .objects
            .get_mut::<kind::Reply>(reply)
            .ok_or(ErrorCode::InvalidCapability)?;
        if body.caller.is_some() {
            return Err(ErrorCode::InvalidArgument);
        }
        body.caller = Some(caller);
        self.objects[current].reply_to = None;
        let waiting = &mut self.objects[caller];
        waiting.reply_from = None;
        waiting.saved_reply = Some(reply);
        Ok(())
    }

    /// `Send` or `NBSend` through the Reply capability `cap`: the caller
    /// gets the message as from `Reply`, and the Reply object is empty
    /// again. An empty one is `NoReplyTarget`. A message with capabilities
    /// is `InvalidArgument` (replies carry none) and changes nothing.
    #[cold]
    pub(in crate::kernel) fn reply_through_capability<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        cap: Capability,
    ) -> SyscallResult {
        if !cap.rights().write() {
            return SyscallResult::Return(ErrorCode::MissingRights);
        }
        if message::sent_info(&self.objects[current]).caps() != 0 {
            return SyscallResult::Return(ErrorCode::InvalidArgument);
        }
        let caller = self
            .objects
            .get_mut::<kind::Reply>(cap.object())
            .and_then(|body| body.caller.take());
        let Some(caller) = caller else {
            return SyscallResult::Return(ErrorCode::NoReplyTarget);
        };
        self.objects[caller].saved_reply = None;
        match ipc::answer(platform, &mut self.objects, current, caller) {
            Ok(caller) => SyscallResult::Ipc(Effects::continue_and_wake(caller)),
            Err(_) => SyscallResult::Return(ErrorCode::NoReplyTarget),
        }
    }

    /// The Reply capability at `cptr` of `current`'s CSpace, for a `Send`
    /// whose capability is no endpoint; `None` if it is no Reply either.
    pub(in crate::kernel) fn reply_capability(
        &self,
        current: ThreadId,
        cptr: u64,
    ) -> Option<Capability> {
        let cnode = self.objects[current].cspace?;
        let slot = self.objects.slot(cnode, cptr).ok()?;
        self.objects
            .lookup_typed(slot, CapType::Reply, Rights::NONE)
            .ok()
    }

    /// A waiting caller leaves its wait: a Reply capability saved for it
    /// goes stale.
    pub(in crate::kernel) fn forget_saved_reply(&mut self, caller: ThreadId) {
        if let Some(reply) = self.objects[caller].saved_reply.take() {
            if let Some(body) = self.objects.get_mut::<kind::Reply>(reply) {
                body.caller = None;
            }
        }
    }

    /// Checks the links between Reply objects and their callers.
    pub(in crate::kernel) fn check_reply_links(&self) -> Result<(), &'static str> {
        for reply in self.objects.iter() {
            let Some(caller) = self
                .objects
                .get::<kind::Reply>(reply)
                .and_then(|r| r.caller)
            else {
                continue;
            };
            let thread = self
                .objects
                .thread(caller)
                .ok_or("a saved reply names something that is no thread")?;
            if thread.saved_reply != Some(reply) || !waits_for_saveable_answer(thread) {
                return Err("a saved reply names a thread that does not wait for it");
            }
        }
        for id in self.all_threads() {
            let Some(reply) = self.objects[id].saved_reply else {
                continue;
            };
            let named = self
                .objects
                .get::<kind::Reply>(reply)
                .and_then(|r| r.caller);
            if named != Some(id) {
                return Err("a thread waits for a saved reply that does not name it");
            }
        }
        Ok(())
    }
}

impl Kernel {
    /// A Reply object is destroyed: the saved reply is gone: its caller learns no answer comes,
    /// as when a server ends owing it a reply.
    pub(in crate::kernel) fn reply_destroyed(&mut self, object: ObjectId) {
        let caller = self
            .objects
            .get_mut::<kind::Reply>(object)
            .and_then(|r| r.caller.take());
        if let Some(caller) = caller {
            self.objects[caller].saved_reply = None;
            if self.objects[caller].policy_request().is_some() {
                // No verdict will come: closed.
                ipc::fail_policy_request(&mut self.objects, caller);
            } else {
                ipc::fail_waiter(&mut self.objects, caller, ErrorCode::ObjectDeleted);
            }
            self.make_ready(caller);
        }
    }
}

/// Does `caller` wait for an answer `ReplySave` may save: an ordinary
/// call's reply, or a policy server's verdict (never a fault handler's or
/// a tracer's answer)?
fn waits_for_saveable_answer(caller: &crate::thread::Thread) -> bool {
    match caller.state() {
        ThreadState::BlockedOnReply => true,
        ThreadState::BlockedOnAnswer => caller.policy_request().is_some(),
        _ => false,
    }
}
