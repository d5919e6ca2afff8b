//! A syscall that stopped before it finished, kept by the kernel.
//!
//! A syscall stops in its entry work when a stage needs an answer from
//! user space (the tracer's entry stop, a policy server's verdict, room in
//! a lossless audit ring), and in dispatch when a long operation is
//! preempted. The kernel then keeps the call as it was judged so far, its
//! registers `x0..x8`, here, and once the answer has come it goes on from
//! the stop with these registers: it never executes the `svc` again and
//! never reads the call from the thread's registers again. So nothing done
//! to the thread meanwhile (a sibling writing its registers, a tick, a
//! change of its memory layout) changes what runs; a change to the call's
//! registers or a suspension cancels the call instead
//! (`Kernel::cancel_call`), and so does a change of the capability its
//! `x0` names, once a policy has judged it.

use abi::ErrorCode;

/// Where a stopped syscall goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallStop {
    /// In the entry work, at this stage.
    Entry(entry::EntryStop),
    /// In dispatch: a preempted operation, `progress` of it done (what
    /// that counts is the operation's: pages zeroed, for `Retype`).
    Dispatch {
        /// How far the operation got.
        progress: u64,
        /// Where that progress was made (for `Retype`, the first address
        /// of the memory being zeroed): if it has changed when the call
        /// goes on, the progress is worth nothing and starts again.
        at: u64,
    },
}

/// How far a preempted operation got (`CallStop::Dispatch`), as dispatch
/// takes it: `Progress::NONE` for a call that starts now. (Two words, so
/// that it is passed in registers: a larger argument made the compiler
/// keep the whole decoded call in memory on the syscall path.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// How much is done (what that counts is the operation's).
    pub done: u64,
    /// Where it was done (for `Retype`, the Untyped's epoch; epoch 0 is
    /// never given out).
    pub at: u64,
}

impl Progress {
    /// Nothing done yet.
    pub const NONE: Progress = Progress { done: 0, at: 0 };
}

/// The answer a stopped syscall goes on with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAnswer {
    /// The tracer answered the entry stop: run the syscall (its changes
    /// are in [`StoppedCall::regs`]).
    TraceContinue,
    /// The tracer skipped the syscall; its result is in `regs` `x0`/`x8`.
    TraceSkip,
    /// A policy server answered.
    Policy(PolicyAnswer),
    /// The audit ring has room (or the thread is no longer audited).
    AuditRoom,
    /// A preempted operation goes on.
    Restart,
}

/// A policy server's answer to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyAnswer {
    /// Judge the call again, as it was judged; the asking filter's
    /// `Notify` is waived.
    Allow,
    /// Judge the call again with the server's new `x2..x7` (in `regs`
    /// already); the asking filter's `Notify` is waived.
    AllowWith,
    /// Do not run it; return this code.
    Refuse(ErrorCode),
    /// Do not run it; return `x0` and `x8` as if it had.
    Emulate {
        /// The result.
        x0: u64,
        /// The second result.
        x8: u64,
    },
    /// End the thread.
    Kill,
}

/// The kernel's copy of a stopped syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoppedCall {
    /// `x0..x8` as judged so far (`x8` the number), with the changes the
    /// answers made: what the kernel dispatches.
    pub regs: [u64; 9],
    /// Where it goes on.
    pub at: CallStop,
    /// The answer, once it has come.
    pub answer: Option<StopAnswer>,
    /// Filters (bit n: the n-th of the thread's stack) whose `Notify` a
    /// policy server has answered "allow" for these registers.
    pub waived: u8,
    /// A policy server has decided on this call (audit records say so).
    pub forwarded: bool,
    /// What the entry work decided, for a call stopped after it (at its
    /// audit entry, or in dispatch).
    pub outcome: EntryOutcome,
    /// The ESR of the `svc` (a `Trap` report carries it).
    pub esr: u64,
    /// What the slot `x0` names held when the call was judged, for a call
    /// stopped after its policy stage looked at it: if the slot holds
    /// something else when the call goes on (a sibling moved another
    /// capability in, or took it away, or destroyed the object and made a
    /// new one in its memory), what was judged is not what would run, and
    /// the call is cancelled. `None` for a call stopped at its trace entry
    /// stop, which is judged after, and for a syscall that names no
    /// capability (`Kernel::stop_call`): nothing of the slot was judged,
    /// and nothing of it runs.
    pub capability: Option<JudgedCapability>,
}

/// What a slot held when a call was judged: the capability, and how many
/// serial numbers had been given out then. The capability alone does not
/// tell two objects apart that were made one after the other in the same
/// memory (deleting the last capability to an endpoint and retyping a new
/// one from the same Untyped gives the new one the old one's object id,
/// and the same type and rights); its serial number does, and an object
/// made after the call was judged has a larger one than `newest_serial`.
/// (Kept as that count, not as the object's own serial, so that taking it
/// reads no header, and checking it reads one only if objects were made
/// meanwhile: `Kernel::still_judged`. Never 0, since the calling thread's
/// own TCB has a serial number: `Option<JudgedCapability>` takes no more
/// room than the capability and the count, and the kept call is copied
/// on every stop and resume.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JudgedCapability {
    /// The capability (`Capability::NULL` for an empty slot).
    pub capability: crate::cap::Capability,
    /// `Objects::newest_serial` when the call was judged.
    pub newest_serial: core::num::NonZeroU64,
}

/// What going on with a stopped call reads of the kernel's copy: all of
/// it but the registers (back in the thread's context by then) and the
/// judged capability (checked before). Taken field by field
/// (`StoppedCall::resumed`): moving the whole call out of the thread was
/// a 168-byte `memcpy` on every resumed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resumed {
    /// Where it goes on.
    pub at: CallStop,
    /// The answer.
    pub answer: Option<StopAnswer>,
    /// As [`StoppedCall::waived`].
    pub waived: u8,
    /// As [`StoppedCall::forwarded`].
    pub forwarded: bool,
    /// As [`StoppedCall::outcome`].
    pub outcome: EntryOutcome,
}

impl StoppedCall {
    /// What going on with it reads (see [`Resumed`]).
    #[inline(always)]
    pub fn resumed(&self) -> Resumed {
        Resumed {
            at: self.at,
            answer: self.answer,
            waived: self.waived,
            forwarded: self.forwarded,
            outcome: self.outcome,
        }
    }

    /// A call stopped at `at` with these registers, nothing answered.
    pub const fn new(regs: [u64; 9], at: CallStop) -> StoppedCall {
        StoppedCall {
            esr: 0,
            capability: None,
            regs,
            at,
            answer: None,
            waived: 0,
            forwarded: false,
            outcome: EntryOutcome::Run,
        }
    }

    /// Has its answer come (so it can go on when its thread next runs)?
    pub fn is_answered(&self) -> bool {
        self.answer.is_some()
    }

    /// Has the tracer seen this call's entry (so it is owed an exit stop
    /// when the call ends)? Only a call still waiting at its entry stop
    /// has not been seen.
    pub fn passed_entry_stop(&self) -> bool {
        !(self.at == CallStop::Entry(entry::EntryStop::TraceEntry) && self.answer.is_none())
    }
}

/// What the policy stage (and stage 1) decided for a syscall, for the
/// kernel to act on once the entry code returns, and for its audit record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryOutcome {
    /// No verdict was needed, or it let the syscall run.
    Run,
    /// A `Log` rule let it run (its audit record says so).
    Logged,
    /// Do not run it; the error code is in `x0`.
    Refused,
    /// A policy server gave the result in the syscall's place (`x0`, `x8`).
    Emulated,
    /// `Trap`: report it to the thread's fault endpoint.
    Trap,
    /// `Notify`: ask the policy server of the filter at this position of
    /// the thread's stack.
    Ask {
        /// The filter's position.
        filter: u8,
    },
    /// `Kill`.
    Kill,
    /// User dispatch (stage 1) redirects the syscall to the thread's
    /// handler; `flags` is the frame's flags word.
    Redirect {
        /// `abi::user_dispatch::FLAG_*`.
        flags: u64,
    },
}

#[cfg(test)]
mod tests;

/// A thread's stopped syscall, if it has one: an `Option<StoppedCall>`
/// whose layout the language fixes (`repr(u8)`: the tag is the first
/// byte, 0 for none), so that the yield fast path's assembly can tell
/// with one load whether the thread it would switch to has a call to go
/// on with first (`Thread::CALL_OFFSET`). Its methods are `Option`'s.
#[repr(u8)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CallSlot {
    /// No stopped syscall.
    #[default]
    Empty = 0,
    /// This one.
    Stopped(StoppedCall) = 1,
}

impl CallSlot {
    /// A call stopped at its trace entry stop, its registers and ESR
    /// still to be written: what the trace fast path
    /// (`trace_fast_path.s`) copies into a thread's slot before it writes
    /// those, as `Kernel::stop_call` makes it for such a stop.
    pub const TRACE_ENTRY: CallSlot = CallSlot::Stopped(StoppedCall::new(
        [0; 9],
        CallStop::Entry(entry::EntryStop::TraceEntry),
    ));

    /// A call stopped at its policy stage to ask the server of the
    /// stack's first filter, judged on no capability and no memory, its
    /// registers and ESR still to be written: what the policy request
    /// fast path (`policy_request_fast_path.s`) copies into a thread's
    /// slot before it writes those, as `Kernel::stop_call` makes it for
    /// such a stop.
    pub const POLICY_ASK: CallSlot = {
        let mut call = StoppedCall::new([0; 9], CallStop::Entry(entry::EntryStop::Policy));
        call.outcome = EntryOutcome::Ask { filter: 0 };
        CallSlot::Stopped(call)
    };

    /// The call, if any.
    #[inline(always)]
    pub fn as_ref(&self) -> Option<&StoppedCall> {
        match self {
            CallSlot::Empty => None,
            CallSlot::Stopped(call) => Some(call),
        }
    }

    /// The call, if any, to change.
    #[inline(always)]
    pub fn as_mut(&mut self) -> Option<&mut StoppedCall> {
        match self {
            CallSlot::Empty => None,
            CallSlot::Stopped(call) => Some(call),
        }
    }

    /// A copy of the call, if any.
    #[inline(always)]
    pub fn get(&self) -> Option<StoppedCall> {
        self.as_ref().copied()
    }

    /// Is there a call?
    #[inline(always)]
    pub fn is_some(&self) -> bool {
        matches!(self, CallSlot::Stopped(_))
    }

    /// Takes the call out, leaving none.
    #[inline(always)]
    pub fn take(&mut self) -> Option<StoppedCall> {
        match core::mem::take(self) {
            CallSlot::Empty => None,
            CallSlot::Stopped(call) => Some(call),
        }
    }

    /// Keeps `call` (replacing any) and returns it, to change in place.
    #[inline(always)]
    pub fn insert(&mut self, call: StoppedCall) -> &mut StoppedCall {
        *self = CallSlot::Stopped(call);
        match self {
            CallSlot::Stopped(call) => call,
            CallSlot::Empty => unreachable!("just stored"),
        }
    }

    /// Drops the call, if any.
    #[inline(always)]
    pub fn clear(&mut self) {
        *self = CallSlot::Empty;
    }
}
