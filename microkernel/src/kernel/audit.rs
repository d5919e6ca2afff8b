//! Audit: one record per syscall of an audited thread, into a ring in a
//! Frame shared with the audit server (layout and record: `abi::audit`).
//!
//! The kernel never trusts the ring's header: it reads `consumed` (the
//! server's field) clamped to what was written, and computes slot offsets
//! modulo the slot count, so a confused or hostile server can only garble
//! its own records. A thread in lossless mode that finds the ring full
//! waits *before* its syscall runs (the `svc` is re-run once there is
//! room), so no half-done syscall ever waits for the audit server; the
//! timer tick looks for room for such threads.

use super::policy::EntryOutcome;
use super::Kernel;
use crate::ipc::notification;
use crate::platform::{PhysMemory, Platform};
use crate::syscall::SyscallResult;
use crate::thread::{AuditSink, ThreadId, ThreadState};
use abi::audit::{
    AuditMode, AuditRecord, AuditVerdict, CONSUMED_OFFSET, DROPPED_OFFSET, MAX_RECORD_BYTES,
    NEXT_SEQUENCE_OFFSET, RING_SLOTS, SLOTS_OFFSET, SLOT_BYTES, WRITTEN_OFFSET,
};
use abi::cap::{CapType, Rights};
use abi::{ErrorCode, MessageInfo};
use entry::WorkFlags;

/// The ring's counters as the kernel may rely on them.
struct RingState {
    written: u64,
    consumed: u64,
}

impl RingState {
    fn read<M: PhysMemory>(phys: &M, ring: u64) -> RingState {
        let written = phys.read_phys_u64(ring + WRITTEN_OFFSET);
        // The server's field: never past what was written.
        let consumed = phys.read_phys_u64(ring + CONSUMED_OFFSET).min(written);
        RingState { written, consumed }
    }

    fn is_full(&self) -> bool {
        self.written - self.consumed >= RING_SLOTS
    }
}

/// Does syscall `number` name a capability in `x0`? (`Null`, `Yield`,
/// `Exit`, `BenchFloor` and `Reply` do not; a record of them names no
/// object.)
fn names_capability(number: u64) -> bool {
    use abi::Syscall;
    !matches!(
        Syscall::from_number(number),
        Some(Syscall::Null | Syscall::Yield | Syscall::Exit | Syscall::BenchFloor | Syscall::Reply)
    )
}

impl Kernel {
    /// `TcbSetAudit`: points the thread's audit at a ring and a
    /// notification (or turns it off).
    #[inline(never)]
    pub(super) fn set_audit(
        &mut self,
        current: ThreadId,
        tcb: u64,
        frame: u64,
        notification: u64,
        mode: Option<AuditMode>,
        badge: u64,
    ) -> Result<(), ErrorCode> {
        let tcb = self.thread_cap(current, tcb, CapType::Tcb, Rights::POLICY)?;
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let sink = match mode {
            None => None,
            Some(mode) => {
                let frame = self.thread_cap(current, frame, CapType::Frame, Rights::WRITE)?;
                let signal =
                    self.thread_cap(current, notification, CapType::Notification, Rights::WRITE)?;
                let ring = self
                    .caps
                    .object(frame.object())
                    .ok_or(ErrorCode::InvalidCapability)?
                    .phys;
                Some(AuditSink {
                    frame: frame.object(),
                    ring,
                    notification: (
                        signal.object().index() as u32,
                        notification::signal_bits(signal.badge(), signal.is_badged()),
                    ),
                    mode,
                    badge,
                })
            }
        };
        self.attach_audit(target, sink);
        Ok(())
    }

    /// Sets (or clears) a thread's audit sink, its work and its fast-path
    /// mask; a thread waiting for room is let go when audit goes away.
    pub(super) fn attach_audit(&mut self, target: ThreadId, sink: Option<AuditSink>) {
        let thread = &mut self.threads[target.index()];
        thread.audit = sink;
        match sink {
            Some(_) => thread.work.insert(WorkFlags::AUDIT),
            None => {
                thread.work.remove(WorkFlags::AUDIT);
                thread.audit_dropped = 0;
            }
        }
        thread.recompute_no_entry_work();
        if sink.is_none() && thread.state == ThreadState::BlockedOnAudit {
            self.make_ready(target);
        }
    }

    /// Before an audited syscall runs: may it, or must it wait for room
    /// (lossless mode, full ring)? `false`: it waits; the `svc` runs again
    /// when there is room.
    pub(super) fn audit_admits(&mut self, platform: &mut impl Platform, current: ThreadId) -> bool {
        let Some(sink) = self.threads[current.index()].audit else {
            return true;
        };
        if sink.mode == AuditMode::Lossy || !RingState::read(platform, sink.ring).is_full() {
            return true;
        }
        let thread = &mut self.threads[current.index()];
        thread.context.pc = thread.context.pc.wrapping_sub(4);
        thread.state = ThreadState::BlockedOnAudit;
        self.current = None;
        false
    }

    /// Lets lossless threads whose ring has room run again (on the tick,
    /// and when nothing else is ready); `true` if it woke one. Threads
    /// still waiting after this are stuck until someone drains their ring.
    pub(super) fn wake_audit_waiters(&mut self, platform: &mut impl Platform) -> bool {
        if !self
            .threads
            .iter()
            .any(|t| t.state == ThreadState::BlockedOnAudit)
        {
            return false;
        }
        self.wake_audit_waiters_with_room(platform)
    }

    #[cold]
    #[inline(never)]
    fn wake_audit_waiters_with_room(&mut self, platform: &mut impl Platform) -> bool {
        let mut woke = false;
        for index in 0..self.threads.len() {
            let thread = &self.threads[index];
            if thread.state != ThreadState::BlockedOnAudit {
                continue;
            }
            let room = thread
                .audit
                .is_none_or(|sink| !RingState::read(platform, sink.ring).is_full());
            if room {
                self.make_ready(ThreadId(index as u16));
                woke = true;
            }
        }
        woke
    }

    /// Writes the record of the current thread's syscall: `verdict` and
    /// `result` (`None`: it blocked or the thread ended). The arguments
    /// are the ones saved when the entry work was done.
    #[cold]
    #[inline(never)]
    pub(super) fn audit_record(
        &mut self,
        platform: &mut impl Platform,
        current: ThreadId,
        verdict: AuditVerdict,
        result: Option<u64>,
    ) {
        let Some(sink) = self.threads[current.index()].audit else {
            return;
        };
        let ring = sink.ring;
        let sequence = platform.read_phys_u64(ring + NEXT_SEQUENCE_OFFSET);
        platform.write_phys_u64(ring + NEXT_SEQUENCE_OFFSET, sequence.wrapping_add(1));
        let state = RingState::read(platform, ring);
        if state.is_full() {
            let dropped = platform.read_phys_u64(ring + DROPPED_OFFSET);
            platform.write_phys_u64(ring + DROPPED_OFFSET, dropped.wrapping_add(1));
            self.threads[current.index()].audit_dropped += 1;
            return;
        }
        let thread = &self.threads[current.index()];
        let call = thread.audit_call;
        let object_type = thread
            .cspace
            .filter(|_| names_capability(call[8]))
            .and_then(|cnode| {
                let slot = self.caps.slot(cnode, call[0]).ok()?;
                Some(self.caps.lookup(slot).ok()?.cap_type().raw())
            })
            .unwrap_or(0);
        let mut args = [0u64; 8];
        args.copy_from_slice(&call[..8]);
        let record = AuditRecord {
            sequence,
            time: platform.counter(),
            thread_badge: sink.badge,
            syscall: call[8],
            object_type,
            label: MessageInfo::from(call[1]).label(),
            args,
            result,
            verdict,
            dropped: thread.audit_dropped,
        };
        let mut buffer = [0u8; MAX_RECORD_BYTES];
        let Some(bytes) = record.encode(&mut buffer) else {
            return;
        };
        let slot = ring + SLOTS_OFFSET + (state.written % RING_SLOTS) * SLOT_BYTES;
        platform.write_phys(slot, &[bytes.len() as u8]);
        platform.write_phys(slot + 1, bytes);
        platform.write_phys_u64(ring + WRITTEN_OFFSET, state.written + 1);
        self.threads[current.index()].audit_dropped = 0;
        // Empty to non-empty: the server hears of it once, not per record.
        if state.written == state.consumed {
            let (index, bits) = sink.notification;
            let effects = self.signal_notification(index as usize, bits);
            self.apply_ipc(platform, effects);
        }
    }

    /// The record of a syscall that was dispatched, from its result.
    #[cold]
    #[inline(never)]
    pub(super) fn audit_dispatched(
        &mut self,
        platform: &mut impl Platform,
        current: ThreadId,
        result: SyscallResult,
        outcome: EntryOutcome,
    ) {
        let value = match result {
            SyscallResult::Return(code) => Some(code.raw()),
            SyscallResult::Yield => Some(ErrorCode::Ok.raw()),
            SyscallResult::Exited(_) => None,
            // The restored context's x0.
            SyscallResult::Restored => Some(self.threads[current.index()].context.x[0]),
            // The IPC code has written x0 when the caller carries on.
            SyscallResult::Ipc(effects) => (effects.next == crate::ipc::Next::Continue)
                .then(|| self.threads[current.index()].context.x[0]),
        };
        let verdict = if outcome == EntryOutcome::Logged {
            AuditVerdict::Logged
        } else {
            AuditVerdict::Allowed
        };
        self.audit_record(platform, current, verdict, value);
    }

    /// The record of a syscall the policy stage did not let run.
    pub(super) fn audit_refused(
        &mut self,
        platform: &mut impl Platform,
        current: ThreadId,
        outcome: EntryOutcome,
    ) {
        let x0 = self.threads[current.index()].context.x[0];
        let (verdict, result) = match outcome {
            // A trace entry stop is no verdict: the syscall runs again (and
            // is recorded then) or the tracer skips it.
            EntryOutcome::TraceStop => return,
            // A redirected syscall never reached the kernel's stages: its
            // handler emulates it in user space (and any syscall it makes
            // to do so is audited like any other).
            EntryOutcome::Redirect { .. } => return,
            EntryOutcome::Trap => (AuditVerdict::Trapped, None),
            EntryOutcome::Notify => (AuditVerdict::Forwarded, None),
            EntryOutcome::Kill => (AuditVerdict::Killed, None),
            EntryOutcome::Refused | EntryOutcome::Run | EntryOutcome::Logged => {
                (AuditVerdict::Refused(x0 as u16), Some(x0))
            }
        };
        self.audit_record(platform, current, verdict, result);
    }

    /// Saves the syscall's registers for its record, once the entry work
    /// (a tracer, the policy) is done with them.
    pub(super) fn audit_snapshot(&mut self, current: ThreadId, checked_x0: Option<u64>) {
        let thread = &mut self.threads[current.index()];
        if thread.audit.is_some() {
            let mut call = [0u64; 9];
            call.copy_from_slice(&thread.context.x[..9]);
            if let Some(x0) = checked_x0 {
                call[0] = x0;
            }
            thread.audit_call = call;
        }
    }
}
