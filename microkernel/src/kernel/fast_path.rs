//! The IPC fast path: `Call` and `ReplyRecv` in their common case.
//!
//! Like seL4's fastpath: a list of cheap checks, each of which sends the
//! syscall to the ordinary path when it fails, then a point of no return
//! after which the transfer and the switch happen directly. The transfer
//! itself is the slow path's (`ipc::send`, `ipc::reply_receive`), so both
//! paths give the same results by construction; what the fast path skips
//! is everything around it: the software-PAN round trip, the generic
//! entry, decoding, the run queue, and the exit work (both threads have
//! none).
//!
//! Conditions (all must hold):
//! * the caller has no work at all (its work word is zero);
//! * `Call` or `ReplyRecv`, a register-only message (≤ 6 words), no
//!   capability transfer;
//! * the capability is an endpoint with the right (`Call`: write,
//!   `ReplyRecv`: read);
//! * `Call`: a receiver already waits, at least as urgent as the caller,
//!   owing no reply and with no work;
//! * `ReplyRecv`: the thread owes a reply to a caller still waiting for
//!   it, at least as urgent, with no work, and no sender waits on the
//!   endpoint (the receive will block).

use super::{Kernel, Resume};
use crate::ipc::message::{fits_in_registers, sent_info};
use crate::ipc::queue::Waiting;
use crate::ipc::{self, Next, SendKind};
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::CapType;
use abi::Syscall;
use arch::exception::ExceptionClass;

impl Kernel {
    /// Handles the syscall of the current thread if the fast path applies;
    /// `None` sends it down the ordinary path, with nothing changed.
    pub fn ipc_fast_path<P: Platform>(&mut self, platform: &mut P, esr: u64) -> Option<Resume> {
        let current = self.current?;
        let caller = &self.threads[current.index()];
        if ExceptionClass::from_esr(esr) != ExceptionClass::Svc64 || !caller.work.is_empty() {
            return None;
        }
        let number = caller.context.x[8];
        let is_call = number == Syscall::Call.number();
        if !is_call && number != Syscall::ReplyRecv.number() {
            return None;
        }
        if !fits_in_registers(sent_info(caller)) {
            return None;
        }
        let slot = self.caps.slot(caller.cspace?, caller.context.x[0]).ok()?;
        let cap = self.caps.lookup(slot).ok()?;
        if cap.cap_type() != CapType::Endpoint {
            return None;
        }
        let endpoint_index = cap.object().index();
        let endpoint = &self.endpoints[endpoint_index];
        let partner = if is_call {
            if !cap.rights().write() || endpoint.waiting() != Waiting::Receivers {
                return None;
            }
            let receiver = endpoint.head()?;
            if self.threads[receiver.index()].reply_to.is_some() {
                return None;
            }
            receiver
        } else {
            if !cap.rights().read() || endpoint.waiting() == Waiting::Senders {
                return None;
            }
            let caller_waiting = caller.reply_to?;
            if self.threads[caller_waiting.index()].state != ThreadState::BlockedOnReply {
                return None;
            }
            caller_waiting
        };
        if !self.runnable_now(partner, current) {
            return None;
        }

        // Point of no return: the transfer and the direct switch.
        let threads = &mut self.threads;
        let endpoint = &mut self.endpoints[endpoint_index];
        let effects = if is_call {
            let kind = SendKind {
                blocking: true,
                call: true,
            };
            ipc::send(
                platform,
                threads,
                endpoint,
                endpoint_index as u32,
                current,
                cap.badge(),
                kind,
            )
        } else {
            ipc::reply_receive(platform, threads, endpoint, endpoint_index as u32, current)
        };
        debug_assert_eq!(effects.map(|e| e.next), Ok(Next::SwitchTo(partner)));
        self.current = None;
        self.switch_to(platform, partner);
        Some(self.user_resume(partner))
    }

    /// Can `partner` take the CPU from `current` directly: at least as
    /// urgent, in an address space, and with no work to do on its way out?
    fn runnable_now(&self, partner: ThreadId, current: ThreadId) -> bool {
        let partner = &self.threads[partner.index()];
        partner.priority >= self.threads[current.index()].priority
            && partner.work.is_empty()
            && partner.space.is_some()
    }
}
