//! The IPC fast path: `Call` and `ReplyRecv` in their common case.
//!
//! Like seL4's fastpath: a list of cheap checks, each of which sends the
//! syscall to the ordinary path when it fails, then a point of no return
//! after which the transfer and the switch happen directly. The transfer
//! makes exactly the state changes of the slow path's `ipc::send` (Call)
//! and `ipc::reply_receive` (ReplyRecv) for a register-only message, done
//! directly; the in-guest suite runs each IPC case on both paths and
//! compares. What the fast path skips is everything around it: the
//! software-PAN round trip, the generic entry, decoding, the run queue and
//! the exit work (both threads have none).
//!
//! Conditions (all must hold):
//! * an SVC whose caller has no work at all (its work word is zero), or
//!   no exit work and only syscall work that its no-entry-work mask
//!   excuses for this syscall (a filter whose verdict for it is a constant
//!   `Allow`): tested in the vector (`arch/src/cpu/vectors.s`), which
//!   calls `portcullis_el0_call` or `portcullis_el0_reply_recv` (and so
//!   this) only then;
//! * `Call` or `ReplyRecv`: the vector tests the exact number and has an
//!   entry for each (it sends no other syscall here), so the number is not
//!   read again; a register-only message (≤ 6 words), no capability
//!   transfer (tested in the vector too, before the kernel lock);
//! * the capability is an endpoint with the right (`Call`: write,
//!   `ReplyRecv`: read);
//! * `Call`: a receiver already waits, at least as urgent as the caller,
//!   owing no reply and with no work but policy work (entry work only);
//! * `ReplyRecv`: the thread owes a reply to a caller still waiting for
//!   it, at least as urgent, with no work but policy work, and no sender
//!   waits on the endpoint (the receive will block); the thread has no
//!   bound notification (whose bits would end the receive);
//! * the partner has affinity with this CPU, which is the caller's (a
//!   running thread's affinity is its CPU's, but for one that moves
//!   itself, which has a reschedule pending and so no fast path); a
//!   partner of another CPU is made ready there by the slow path, which
//!   interrupts that CPU.
//!
//! The slow path switches directly only to a partner at least as urgent as
//! every ready thread (seL4's possibleSwitchTo). The fast path gets that
//! for free: the caller has no exit work, so no pending reschedule, and
//! a running thread without one is at least as urgent as every ready
//! thread (`Kernel::check_invariants` checks it); a partner at least as
//! urgent as the caller is then at least as urgent as them too.

use crate::cap::SlotId;
use crate::endpoint_queue::{Queued, Waiting};
use crate::ipc::message::{fits_in_registers, sent_info};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::CapType;
use abi::ErrorCode;
#[cfg(debug_assertions)]
use abi::Syscall;
use arch::context::UserContext;
use arch::object_memory::kind;
use core::ptr::NonNull;

/// The way back to EL0 the fast path takes: the saved registers of the
/// thread it switched to (inside its TCB's record) and its TTBR0 value.
/// Always a thread, never `Resume::Idle` or `Shutdown`: two words, which
/// come back in two registers (an `Option<Resume>` went through the
/// stack).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserResume {
    /// The thread's saved registers.
    pub context: NonNull<UserContext>,
    /// Its address space root and ASID.
    pub ttbr0: u64,
}

impl Kernel {
    /// Handles the current thread's `Call` if the fast path applies;
    /// `None` sends it down the ordinary path, with nothing changed.
    ///
    /// Only for a `Call` (its `x8`) the vector found may skip entry work
    /// (`Thread::skips_entry_work`, tested there on the work word and the
    /// mask): neither test is repeated here. The vector has an entry of
    /// its own for each of the two syscalls, so it knows which it has.
    #[inline(always)]
    pub fn ipc_fast_call<P: Platform>(&mut self, platform: &mut P) -> Option<UserResume> {
        self.fast_ipc::<P, true>(platform)
    }

    /// `ipc_fast_call` for the current thread's `ReplyRecv`.
    #[inline(always)]
    pub fn ipc_fast_reply_recv<P: Platform>(&mut self, platform: &mut P) -> Option<UserResume> {
        self.fast_ipc::<P, false>(platform)
    }

    /// The fast path of `Call` (`IS_CALL`) or `ReplyRecv` for the current
    /// thread. One copy per operation: each is then straight-line code,
    /// not one that tests which it is at every step.
    #[inline(always)]
    fn fast_ipc<P: Platform, const IS_CALL: bool>(
        &mut self,
        platform: &mut P,
    ) -> Option<UserResume> {
        let is_call = IS_CALL;
        let current = self.current?;
        // The checks read object memory only: one shared borrow, so its
        // base and kind bytes stay in registers.
        let memory = self.objects.memory();
        let caller = memory.get::<kind::Tcb>(current.granule())?;
        #[cfg(debug_assertions)]
        {
            let expected = if is_call {
                Syscall::Call
            } else {
                Syscall::ReplyRecv
            };
            debug_assert_eq!(caller.context.syscall_number(), expected.number());
        }
        debug_assert!(caller.skips_entry_work(caller.context.syscall_number()));
        // The vector sent only a message that fits here (vectors.s,
        // `el0_call_x9_x10_saved`): a longer one takes the generic entry
        // without this try, under one hold of the kernel lock.
        debug_assert!(fits_in_registers(sent_info(caller)));
        // The CSpace lookup, from the slots cached in the TCB (none for a
        // thread without a CSpace).
        let (first, slots) = caller.cspace_slots;
        let cptr = caller.context.capability_pointer();
        if cptr >= u64::from(slots) {
            return None;
        }
        // An endpoint capability is not an empty slot: the type test is
        // `lookup`'s emptiness test too.
        let slot = SlotId(first.0.wrapping_add(cptr as u32));
        let cap = memory.element::<kind::CNode>(slot.index())?.cap;
        if !cap.has_type(CapType::Endpoint) {
            return None;
        }
        let endpoint_id = cap.object();
        // Read in place: a copy of the whole queue moved its padding
        // byte by byte, there and back.
        let queue = memory.get::<kind::Endpoint>(endpoint_id.granule())?;
        let partner = if is_call {
            if !cap.rights().write() || queue.waiting() != Waiting::Receivers {
                return None;
            }
            queue.head()?
        } else {
            if !cap.rights().read() || queue.waiting() == Waiting::Senders {
                return None;
            }
            // A bound notification could end the receive: slow path.
            if caller.bound_notification.is_some() {
                return None;
            }
            caller.reply_to?
        };
        let waiting = memory.get::<kind::Tcb>(partner.granule())?;
        let ready = if is_call {
            waiting.reply_to.is_none()
        } else {
            waiting.state() == ThreadState::BlockedOnReply
        };
        // Can the partner take the CPU directly: at least as urgent, in an
        // address space, with no work on its way out (policy work is entry
        // work only: a filtered partner may)?
        if !ready
            || partner == current
            || !waiting.fast_partner_of(caller)
            || !waiting.has_no_exit_side_work()
            || waiting.space.is_none()
        {
            return None;
        }
        // Call: the receiver leaves the queue head; the next waiter, if
        // any, becomes the head.
        let next = if is_call {
            waiting.queue_links().next()
        } else {
            None
        };
        let tail = queue.tail();
        let head = queue.head();

        // Point of no return: the same state changes as the slow path's
        // `ipc::send` (Call) and `ipc::reply_receive` (ReplyRecv) for a
        // register-only message, made directly.
        let (caller, partner_thread, endpoint) = self
            .objects
            .memory_mut()
            .triple_mut::<kind::Tcb, kind::Tcb, kind::Endpoint>(
                current.granule(),
                partner.granule(),
                endpoint_id.granule(),
            )?;
        if is_call {
            caller.block_on_reply();
            caller.reply_from = Some(partner);
            partner_thread.reply_to = Some(current);
            partner_thread.queue_links_mut().leave_as_head();
            copy_registers(
                &caller.context.x,
                &mut partner_thread.context.x,
                cap.badge(),
            );
            endpoint.pop_head_to(next);
        } else {
            caller.reply_to = None;
            partner_thread.reply_from = None;
            copy_registers(&caller.context.x, &mut partner_thread.context.x, 0);
            caller.context.set_result(ErrorCode::Ok);
            caller.block_on_receive(endpoint_id);
            caller.queue_links_mut().join_behind(tail);
            endpoint.append_receiver(current, head);
        }
        // Running now (`switch_to_inline`'s first steps, on the reference
        // in hand).
        partner_thread.run();
        let generation = partner_thread.asid_generation;
        let ttbr0 = partner_thread.ttbr0;
        let context = NonNull::from(&mut partner_thread.context);
        // The neighbour in the queue, if any (a queue of one has none).
        let neighbour = if is_call { next } else { tail };
        if let Some(neighbour) = neighbour {
            if let Some(t) = self.objects.thread_mut(neighbour) {
                if is_call {
                    t.queue_links_mut().become_head();
                } else {
                    t.queue_links_mut().followed_by(current);
                }
            }
        }
        self.current = Some(partner);
        // An ASID to renew: rare, and out of line, so that no value has to
        // live across a call here (each would take a callee-saved
        // register, saved and never restored).
        if generation != self.asids.generation() {
            return Some(self.fast_switch_rare(platform, partner));
        }
        self.last_ran = Some(partner);
        let owns_fp = self.fp_owner == Some(partner);
        let access = self.fp_access;
        if access != owns_fp {
            // The flip of the access there is (`owns_fp` itself: the
            // compiler computed that compare a second time).
            self.change_fp_access(platform, !access);
        }
        #[cfg(feature = "rseq-counters")]
        super::rseq::counters::count_exit(&self.objects[partner]);
        Some(UserResume { context, ttbr0 })
    }

    /// The rest of the fast path's switch to `partner` when its ASID has
    /// to change: the slow path's own switch
    /// (`switch_to_inline`), whose first steps the fast path made already
    /// (the thread current and running), then the way back to EL0 read
    /// afresh (a new ASID changes the TTBR0 value).
    #[cold]
    #[inline(never)]
    fn fast_switch_rare<P: Platform>(&mut self, platform: &mut P, partner: ThreadId) -> UserResume {
        let _ = self.switch_to_inline(platform, partner);
        let thread = &mut self.objects[partner];
        #[cfg(feature = "rseq-counters")]
        super::rseq::counters::count_exit(thread);
        UserResume {
            ttbr0: thread.ttbr0,
            context: NonNull::from(&mut thread.context),
        }
    }
}

/// A register-only message from registers `from` to registers `to`: `Ok`
/// in x0, the message info (≤ 6 words, no capabilities: checked) and
/// x2..x7 as sent, the badge in x8. Word by word: a slice copy became a
/// `memcpy` call on the kernel target (strict alignment).
#[inline(always)]
fn copy_registers(from: &[u64; 31], to: &mut [u64; 31], badge: u64) {
    let words = [
        from[1], from[2], from[3], from[4], from[5], from[6], from[7],
    ];
    to[0] = ErrorCode::Ok.raw();
    for (to, word) in to[1..8].iter_mut().zip(words) {
        *to = word;
    }
    to[8] = badge;
}

#[cfg(test)]
mod tests;
