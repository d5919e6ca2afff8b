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
//!   calls `portcullis_el0_svc` (and so this) only then;
//! * `Call` or `ReplyRecv`, a register-only message (≤ 6 words), no
//!   capability transfer;
//! * the capability is an endpoint with the right (`Call`: write,
//!   `ReplyRecv`: read);
//! * `Call`: a receiver already waits, at least as urgent as the caller,
//!   owing no reply and with no work but policy work (entry work only);
//! * `ReplyRecv`: the thread owes a reply to a caller still waiting for
//!   it, at least as urgent, with no work but policy work, and no sender
//!   waits on the endpoint (the receive will block); the thread has no
//!   bound notification (whose bits would end the receive).
//!
//! The slow path switches directly only to a partner at least as urgent as
//! every ready thread (seL4's possibleSwitchTo). The fast path gets that
//! for free: the caller has no exit work, so no pending reschedule, and
//! a running thread without one is at least as urgent as every ready
//! thread (`Kernel::check_invariants` checks it); a partner at least as
//! urgent as the caller is then at least as urgent as them too.

use super::{Kernel, Resume, MAX_OBJECTS, MAX_SLOTS};
use crate::cap::SlotId;
use crate::ipc::message::{fits_in_registers, sent_info};
use crate::ipc::queue::Waiting;
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState, MAX_THREADS};
use abi::cap::CapType;
use abi::{ErrorCode, Syscall};

impl Kernel {
    /// Handles the syscall of the current thread if the fast path applies;
    /// `None` sends it down the ordinary path, with nothing changed.
    ///
    /// Only for an SVC the vector found may skip entry work
    /// (`Thread::skips_entry_work`, tested there on the work word and the
    /// mask): that test is not repeated here. The vector tests the mask
    /// bit of `x8` modulo 64; the exact number test below keeps that from
    /// mattering.
    pub fn ipc_fast_path<P: Platform>(&mut self, platform: &mut P) -> Option<Resume> {
        let current = in_table(self.current?);
        let caller = &self.threads[current.index()];
        let number = caller.context.x[8];
        let is_call = number == Syscall::Call.number();
        if !is_call && number != Syscall::ReplyRecv.number() {
            return None;
        }
        debug_assert!(caller.skips_entry_work(number));
        if !fits_in_registers(sent_info(caller)) {
            return None;
        }
        // The CSpace lookup, from the slots cached in the TCB (none for a
        // thread without a CSpace).
        let (first, slots) = caller.cspace_slots;
        let cptr = caller.context.x[0];
        if cptr >= u64::from(slots) {
            return None;
        }
        // An endpoint capability is not an empty slot: the type test is
        // `lookup`'s emptiness test too. A CNode's slots lie inside the
        // slot table, so the mask (MAX_SLOTS is a power of two) changes
        // nothing but the bounds check.
        const _: () = assert!(MAX_SLOTS.is_power_of_two());
        let slot = (first.0 + cptr as u32) % MAX_SLOTS as u32;
        let cap = self.caps.slot_content(SlotId(slot))?;
        if !cap.has_type(CapType::Endpoint) {
            return None;
        }
        // Every object index a capability holds is below MAX_OBJECTS (the
        // object table's size): the mask changes nothing but lets the
        // compiler drop the bounds check.
        let endpoint_index = cap.object().index() % MAX_OBJECTS;
        let endpoint = &self.endpoints[endpoint_index];
        let partner = if is_call {
            if !cap.rights().write() || endpoint.waiting() != Waiting::Receivers {
                return None;
            }
            let receiver = in_table(endpoint.head()?);
            if self.threads[receiver.index()].reply_to.is_some() {
                return None;
            }
            receiver
        } else {
            if !cap.rights().read() || endpoint.waiting() == Waiting::Senders {
                return None;
            }
            // A bound notification could end the receive: slow path.
            if caller.bound_notification.is_some() {
                return None;
            }
            let waiting_caller = in_table(caller.reply_to?);
            if self.threads[waiting_caller.index()].state != ThreadState::BlockedOnReply {
                return None;
            }
            waiting_caller
        };
        if !self.runnable_now(partner, current) {
            return None;
        }

        // Point of no return: the same state changes as the slow path's
        // `ipc::send` (Call) and `ipc::reply_receive` (ReplyRecv) for a
        // register-only message, made directly.
        if is_call {
            self.endpoints[endpoint_index].remove_head(&mut self.threads, partner);
            self.threads[current.index()].state = ThreadState::BlockedOnReply;
            self.threads[partner.index()].reply_to = Some(current);
            self.copy_registers(current, partner, cap.badge());
        } else {
            self.threads[current.index()].reply_to = None;
            self.copy_registers(current, partner, 0);
            let replier = &mut self.threads[current.index()];
            replier.context.x[0] = ErrorCode::Ok.raw();
            replier.state = ThreadState::BlockedOnReceive {
                endpoint: endpoint_index as u32,
            };
            self.endpoints[endpoint_index].push_back_inline(
                &mut self.threads,
                current,
                Waiting::Receivers,
            );
        }
        self.current = None;
        self.switch_to_inline(platform, partner);
        Some(self.user_resume(partner))
    }

    /// A register-only message from `from` to `to`: `Ok` in x0, the
    /// message info (≤ 6 words, no capabilities: checked) and x2..x7 as
    /// sent, the badge in x8.
    #[inline(always)]
    fn copy_registers(&mut self, from: ThreadId, to: ThreadId, badge: u64) {
        let words: [u64; 7] = {
            let x = &self.threads[from.index()].context.x;
            [x[1], x[2], x[3], x[4], x[5], x[6], x[7]]
        };
        let receiver = &mut self.threads[to.index()].context.x;
        receiver[0] = ErrorCode::Ok.raw();
        receiver[1..8].copy_from_slice(&words);
        receiver[8] = badge;
    }

    /// Can `partner` take the CPU from `current` directly: at least as
    /// urgent, in an address space, and with no work to do on its way out
    /// (policy work is entry work only: a filtered partner may)?
    #[inline(always)]
    fn runnable_now(&self, partner: ThreadId, current: ThreadId) -> bool {
        let partner = &self.threads[partner.index()];
        partner.priority >= self.threads[current.index()].priority
            && partner.has_no_exit_side_work()
            && partner.space.is_some()
    }
}

/// `id`, with its index masked to the thread table. Every `ThreadId` the
/// kernel keeps (current, queue heads, reply links) names a slot of the
/// table, so the mask changes nothing; it only spares the fast path a
/// bounds check per lookup (`MAX_THREADS` is a power of two).
#[inline(always)]
fn in_table(id: ThreadId) -> ThreadId {
    const _: () = assert!(MAX_THREADS.is_power_of_two() && MAX_THREADS <= 1 << 16);
    ThreadId(id.0 % MAX_THREADS as u16)
}
