//! Audit: one record per syscall of an audited thread, into a ring in a
//! Frame shared with the audit server (layout and record: `abi::audit`).
//!
//! The kernel never trusts the ring's header: it reads `consumed` (the
//! server's field) clamped to what was written, and computes slot offsets
//! modulo the slot count, so a confused or hostile server can only garble
//! its own records. A thread in lossless mode that finds the ring full
//! waits at its audit entry, *before* its syscall runs (the syscall is a
//! stopped call, `stopped_call`, that goes on once there is room), so no
//! half-done syscall ever waits for the audit server; the timer tick
//! looks for room for such threads.
//!
//! A record is fixed at the syscall's audit entry (`PendingRecord`: the
//! ring, the registers as judged, the verdict) and written once the result
//! is known: after dispatch, or when the thread ends first (a syscall that
//! ends its own thread has no result, but a record). A syscall cancelled
//! while stopped gets a record saying so.

use crate::endpoint_queue::Queued;
use crate::ipc::notification;
use crate::kernel::members::{self, Use};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::stopped_call::EntryOutcome;
use crate::syscall::SyscallResult;
use crate::thread::{AuditSink, PendingRecord, ThreadId, ThreadState};
use abi::audit::{AuditMode, AuditVerdict};
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::object_memory::kind;
use entry::WorkFlags;
use ring::{write_pending_record, RecordWritten, RingState};

mod ring;

impl crate::thread::Thread {
    /// The thread's syscall, stopped at its audit entry, may go on (there
    /// is room, or it is no longer audited): it is ready, and the stopped
    /// call answered (every way out of `BlockedOnAudit` comes here).
    pub fn audit_room(&mut self) {
        if let Some(call) = self.call.as_mut() {
            call.answer = Some(crate::stopped_call::StopAnswer::AuditRoom);
        }
        self.make_ready();
    }
}

/// Stage 4's record of `thread`'s syscall, if it is audited (see
/// `Kernel::audit_begin`): the registers as judged (`checked`: `x0` and
/// `x8` as a policy server emulated them), the verdict, whether a server
/// decided.
#[inline(always)]
fn begin_record(
    thread: &mut crate::thread::Thread,
    outcome: EntryOutcome,
    forwarded: bool,
    checked: Option<(u64, u64)>,
) {
    if thread.audit.is_none() {
        return;
    }
    let x0 = thread.context.result();
    let verdict = match outcome {
        EntryOutcome::Logged => AuditVerdict::Logged,
        EntryOutcome::Refused => AuditVerdict::Refused(x0 as u16),
        EntryOutcome::Emulated => AuditVerdict::Emulated,
        EntryOutcome::Trap => AuditVerdict::Trapped,
        EntryOutcome::Kill => AuditVerdict::Killed,
        _ => AuditVerdict::Allowed,
    };
    let mut call = thread.context.syscall_registers();
    if let Some((x0, x8)) = checked {
        call[0] = x0;
        call[8] = x8;
    }
    // The sink is the thread's (`PendingRecord::moved_sink`).
    thread.audit_pending = Some(PendingRecord {
        moved_sink: None,
        call,
        verdict,
        forwarded,
    });
}

/// What `TcbSetAudit` asks beside the TCB: the ring's Frame and the
/// notification (capability pointers), the mode (`None`: off) and the
/// badge its records carry.
pub(in crate::kernel) struct AuditSetting {
    pub frame: u64,
    pub notification: u64,
    pub mode: Option<AuditMode>,
    pub badge: u64,
}

impl Kernel {
    /// `TcbSetAudit`: points the thread's audit at a ring and a
    /// notification, or turns it off. A thread that is audited stays so:
    /// a second `TcbSetAudit` is `Denied` (it would take the records away
    /// from the first server), and turning audit off needs a capability to
    /// the ring's Frame in `x2` (whoever may read the records may stop
    /// them), else `Denied`; off on a thread not audited is `Ok`.
    #[inline(never)]
    pub(in crate::kernel) fn set_audit<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        tcb: u64,
        setting: AuditSetting,
    ) -> Result<(), ErrorCode> {
        let AuditSetting {
            frame,
            notification,
            mode,
            badge,
        } = setting;
        let tcb = self.thread_cap(current, tcb, CapType::Tcb, Rights::POLICY)?;
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let present = self.objects[target].audit;
        let sink = match mode {
            None => {
                if let Some(present) = present {
                    let ring = self.thread_cap(current, frame, CapType::Frame, Rights::NONE);
                    if !ring.is_ok_and(|cap| cap.object() == present.frame.id) {
                        return Err(ErrorCode::Denied);
                    }
                }
                None
            }
            Some(mode) => {
                let frame = self.thread_cap(current, frame, CapType::Frame, Rights::WRITE)?;
                let signal =
                    self.thread_cap(current, notification, CapType::Notification, Rights::WRITE)?;
                if present.is_some() {
                    return Err(ErrorCode::Denied);
                }
                let ring = self
                    .objects
                    .get::<kind::Frame>(frame.object())
                    .ok_or(ErrorCode::InvalidCapability)?;
                // The kernel writes the ring: never device memory.
                if ring.is_device() {
                    return Err(ErrorCode::InvalidArgument);
                }
                let ring = ring.phys;
                let (Some(frame), Some(signal_ref)) = (
                    self.objects.reference(frame.object()),
                    self.objects.reference(signal.object()),
                ) else {
                    return Err(ErrorCode::InvalidCapability);
                };
                Some(AuditSink {
                    frame,
                    ring,
                    notification: (
                        signal_ref,
                        notification::signal_bits(signal.badge(), signal.is_badged()),
                    ),
                    mode,
                    badge,
                })
            }
        };
        // Another CPU running it stops first (as for every TCB
        // operation): it must not go on with the work word and masks it
        // read before the change (the vector reads them without the
        // kernel lock).
        self.stop_elsewhere(platform, target);
        self.attach_audit(target, sink);
        Ok(())
    }

    /// Sets (or clears) a thread's audit sink, its work and its fast-path
    /// mask, and the lists of audit users it is on (the ring Frame's and
    /// the notification's); a thread waiting for room is let go when audit
    /// goes away.
    pub(in crate::kernel) fn attach_audit(&mut self, target: ThreadId, sink: Option<AuditSink>) {
        let thread = &mut self.objects[target];
        // A record in progress keeps the audit it began with.
        if let Some(pending) = &mut thread.audit_pending {
            if pending.moved_sink.is_none() {
                pending.moved_sink = thread.audit;
            }
        }
        let old = core::mem::replace(&mut thread.audit, sink);
        match sink {
            Some(_) => thread.work.insert(WorkFlags::AUDIT),
            None => {
                thread.work.remove(WorkFlags::AUDIT);
                thread.audit_dropped = 0;
            }
        }
        thread.recompute_no_entry_work();
        if let Some(old) = old {
            self.leave_audit_lists(target, &old);
        }
        if let Some(sink) = sink {
            members::join(&mut self.objects, sink.frame.id, target, Use::AuditRing);
            let signal = sink.notification.0.id;
            members::join(&mut self.objects, signal, target, Use::AuditSignal);
        }
        if sink.is_none() && self.objects[target].state() == ThreadState::BlockedOnAudit {
            self.end_audit_wait(target);
        }
    }

    /// Takes `thread` off the lists of audit users of `sink`'s ring Frame
    /// and notification.
    fn leave_audit_lists(&mut self, thread: ThreadId, sink: &AuditSink) {
        members::leave(&mut self.objects, sink.frame.id, thread, Use::AuditRing);
        let signal = sink.notification.0.id;
        members::leave(&mut self.objects, signal, thread, Use::AuditSignal);
    }

    /// `thread`'s record is emptied (its TCB is destroyed, or it ended
    /// for good): it leaves the lists of audit users it is on.
    pub(in crate::kernel) fn leave_audit(&mut self, thread: ThreadId) {
        let audited = &mut self.objects[thread];
        audited.work.remove(WorkFlags::AUDIT);
        if let Some(sink) = audited.audit.take() {
            self.leave_audit_lists(thread, &sink);
        }
    }

    /// A Frame (`Use::AuditRing`) or Notification (`Use::AuditSignal`) is
    /// destroyed: every thread whose audit uses it is audited no more
    /// (never a write into freed memory), and one waiting for room goes
    /// on. A record in progress keeps the audit it began with
    /// (`PendingRecord::moved_sink`), looked at when it is written. So
    /// the kernel keeps every thread's own sink alive, and a record is
    /// written into it without looking at the ring or the notification
    /// first.
    pub(in crate::kernel) fn audit_sink_destroyed<P: Platform>(
        &mut self,
        platform: &mut P,
        object: crate::cap::ObjectId,
        what: Use,
    ) {
        while let Some(user) = members::first(&self.objects, object, what) {
            // Another CPU running it stops first (as for `TcbSetAudit`):
            // the vector reads its work word without the kernel lock.
            self.stop_elsewhere(platform, user);
            self.attach_audit(user, None);
            debug_assert_ne!(
                members::first(&self.objects, object, what),
                Some(user),
                "a thread whose audit went off left the list"
            );
        }
    }

    /// `thread` waits for room in its ring (on the kernel's list of such
    /// threads, which the tick looks at).
    pub(in crate::kernel) fn wait_for_audit_room(&mut self, thread: ThreadId) {
        self.objects[thread].block_on_audit();
        let mut queue = self.audit_waiters;
        queue.push_back(
            &mut self.objects,
            thread,
            crate::endpoint_queue::Waiting::Receivers,
        );
        self.audit_waiters = queue;
    }

    /// `thread`'s wait for audit room is over (there is room, or it is no
    /// longer audited): it leaves the list, and its stopped call goes on.
    pub(in crate::kernel) fn end_audit_wait(&mut self, thread: ThreadId) {
        let mut queue = self.audit_waiters;
        queue.remove(&mut self.objects, thread);
        self.audit_waiters = queue;
        self.objects[thread].audit_room();
        self.make_ready(thread);
    }

    /// Would `current`'s next record have to wait: lossless audit into a
    /// full ring? (Stage 4's question, `EntryStep::AuditRoom`.)
    #[inline(always)]
    pub(in crate::kernel) fn audit_ring_is_full(
        &self,
        platform: &impl Platform,
        current: ThreadId,
    ) -> bool {
        // (The two fields read in place: a copy of the whole sink was a
        // memcpy on every audited syscall. The sink lives: the kernel
        // turns an audit off when its ring or notification goes.)
        self.objects[current].audit.as_ref().is_some_and(|sink| {
            sink.mode == AuditMode::Lossless && RingState::read(platform, sink.ring).is_full()
        })
    }

    /// A new syscall of a thread whose only syscall work is audit
    /// (`WorkFlags::AUDIT`: no dispatch, trace, policy or single-step),
    /// carried out as the entry and exit machines would for that work
    /// word, without asking them at each step: stage 4 (the record
    /// begun), the dispatch, and for a syscall that returns a result,
    /// stage 5 (the record written with it) and stage 8. A lossless wait
    /// for room, and any other result (an IPC, a yield, a preemption, an
    /// end), go on as in `syscall_with_work`. Asked step by step, the
    /// machines cost the common audited syscall some 140 instructions
    /// more. (Its decoding and dispatch are a copy of their own,
    /// `syscall::AUDITED_COPY`: as a second caller of the generic entry's
    /// copy it cost every row with entry work some 50 instructions.)
    ///
    /// Inlined into its one caller, the lean entry's half for a thread
    /// whose only work is audit (`Kernel::lean_audited_syscall`), which
    /// has the thread in hand. (When the generic entry called it too, the
    /// copy's decoding and dispatch were calls of their own, some 40
    /// instructions more.)
    ///
    /// Only a lossless audit looks at its ring before the syscall (stage
    /// 4's wait for room); a lossy one looks at it once, when the record
    /// is written. Neither asks whether the ring and the notification
    /// live: the kernel turns an audit off when either goes
    /// (`audit_sink_destroyed`), and a syscall that destroys its own
    /// keeps the sink its record began with (`write_pending_record` looks
    /// at that one).
    ///
    /// Its common end (a result returned, audit alone still) answers the
    /// thread's TTBR0 if the thread then goes back as it is, as far as
    /// the thread itself says (`Kernel::goes_back_as_it_is`, asked before
    /// the record's signal, which changes nothing of the thread; the
    /// caller asks whether it is still the CPU's, since a syscall may
    /// suspend its own thread, and `nothing_due`): the lean entry then needs no
    /// look-up of its own. `None`: it did not, or the lane went another
    /// way.
    #[inline(always)]
    pub(in crate::kernel) fn syscall_audited<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) -> Option<u64> {
        let audit_only = |thread: &crate::thread::Thread| {
            thread.work.intersection(WorkFlags::SYSCALL_WORK) == WorkFlags::AUDIT
        };
        // Looked up once for the steps before dispatch: a lossless ring
        // with no room (`audit_ring_is_full`, on the thread in hand) and
        // other work go the machine's way.
        let thread = &mut self.objects[current];
        let full = |sink: &AuditSink| {
            sink.mode == AuditMode::Lossless && RingState::read(platform, sink.ring).is_full()
        };
        if thread.audit.as_ref().is_some_and(full) || !audit_only(thread) {
            self.syscall_with_work(platform, current, esr, None);
            return None;
        }
        begin_record(thread, EntryOutcome::Run, false, None);
        // (What the entry decided, `Entered`, is built only where it is
        // read: built here, its three stores cost every audited syscall.)
        let entered = crate::kernel::entry_work::Entered::dispatch_without_work;
        thread.trace.number = thread.context.syscall_number();
        let copy = crate::syscall::decode_copy::<{ crate::syscall::AUDITED_COPY }>;
        let result = match copy(&thread.context) {
            Ok(call) => self.dispatch::<P, { crate::syscall::AUDITED_COPY }>(
                platform,
                current,
                call,
                crate::stopped_call::Progress::NONE,
            ),
            Err(code) => SyscallResult::Return(code),
        };
        // Still audit alone (the syscall may have attached a tracer or a
        // filter to its own thread, whose exit stages the machine asks
        // for, or turned its audit off).
        let Some((thread, others)) = self.objects.split_thread(current) else {
            unreachable!("the current thread is a thread");
        };
        let code = match result {
            SyscallResult::Return(code) if audit_only(thread) => code,
            _ => {
                let _ = self.finish_syscall_with_work(platform, current, esr, &entered(), result);
                return None;
            }
        };
        // What the exit machine asks for this work word: the record with
        // the result, then the exit to user mode.
        debug_assert!({
            // (`exit_work_word`, on the thread in hand: its record is
            // pending, as its audit was on at the entry and still is.)
            let mut exit = entry::SyscallExit::new(entered().entry, thread.work);
            let record = exit.next_step();
            thread.audit_pending.is_some()
                && (record, exit.next_step())
                    == (
                        entry::ExitStep::WriteAuditRecord { with_result: true },
                        entry::ExitStep::ExitToUser,
                    )
        });
        thread.judged.forget();
        Self::write_result(thread, code);
        let x0 = thread.context.result();
        // Stage 8 before the record is written, as the two do not meet:
        // the exit loop clears only `NOTIFY_RESUME` (which nothing the
        // record's signal does sets), and how the thread goes back reads
        // its work, its stopped call and its trace state, none of which
        // the record reads or writes. So what the record's write says
        // goes straight to its signal (held across the exit loop, it went
        // through the stack: 11 instructions).
        Self::exit_loop_on(thread);
        let back = Self::goes_back_as_it_is(thread).then_some(thread.ttbr0);
        let written = write_pending_record(platform, thread, &others, Some(x0));
        self.after_record(platform, written);
        back
    }

    /// Lets lossless threads whose ring has room run again (on the tick,
    /// and when nothing else is ready); `true` if it woke one. Threads
    /// still waiting after this are stuck until someone drains their ring.
    pub(in crate::kernel) fn wake_audit_waiters(&mut self, platform: &mut impl Platform) -> bool {
        if self.audit_waiters.head().is_none() {
            return false;
        }
        self.wake_audit_waiters_with_room(platform)
    }

    #[cold]
    #[inline(never)]
    fn wake_audit_waiters_with_room(&mut self, platform: &mut impl Platform) -> bool {
        let mut woke = false;
        let mut next = self.audit_waiters.head();
        while let Some(waiter) = next {
            next = self.objects[waiter].queue_links().next();
            let room = self.objects[waiter]
                .audit
                .is_none_or(|sink| !RingState::read(platform, sink.ring).is_full());
            if room && self.objects[waiter].state() == ThreadState::BlockedOnAudit {
                self.end_audit_wait(waiter);
            }
            woke |= room;
        }
        woke
    }

    /// Stage 4's record (`EntryStep::WriteAuditEntry`): fixes the record
    /// of `current`'s syscall at its audit entry, once there is room for
    /// it: the ring it goes to, the registers as judged (`x0` and `x8` as
    /// the policy saw them, `checked`, not a refusal's or an emulation's
    /// result), the verdict (from `outcome`), whether a policy server
    /// decided. Stage 5 writes it into the ring with the result
    /// (`audit_complete`). A syscall the tracer skipped or user dispatch
    /// redirected never reaches stage 4, so it gets no record.
    pub(in crate::kernel) fn audit_begin(
        &mut self,
        current: ThreadId,
        outcome: EntryOutcome,
        forwarded: bool,
        checked: Option<(u64, u64)>,
    ) {
        begin_record(&mut self.objects[current], outcome, forwarded, checked);
    }

    /// Stage 5 (`ExitStep::WriteAuditRecord`): writes the pending record
    /// of `current`'s syscall with `result` (`None`: it blocked, or ended
    /// its thread), if it has one (inlined: for most syscalls it has none).
    #[inline(always)]
    pub(in crate::kernel) fn audit_complete(
        &mut self,
        platform: &mut impl Platform,
        current: ThreadId,
        result: Option<u64>,
    ) {
        if self.objects[current].audit_pending.is_some() {
            self.write_record(platform, current, result);
        }
    }

    /// Stage 5 for a syscall that was dispatched, from its result, before
    /// the result is applied (if it has a record pending: inlined, for
    /// most syscalls it has none).
    #[inline(always)]
    pub(in crate::kernel) fn audit_dispatched(
        &mut self,
        platform: &mut impl Platform,
        current: ThreadId,
        result: SyscallResult,
    ) {
        if self.objects[current].audit_pending.is_some() {
            self.audit_dispatched_record(platform, current, result);
        }
    }

    #[cold]
    #[inline(never)]
    fn audit_dispatched_record(
        &mut self,
        platform: &mut impl Platform,
        current: ThreadId,
        result: SyscallResult,
    ) {
        let value = match result {
            SyscallResult::Return(_) | SyscallResult::Yield => result.code().map(ErrorCode::raw),
            SyscallResult::Exited(_) | SyscallResult::Preempted { .. } => None,
            // The restored context's x0.
            SyscallResult::Restored => Some(self.objects[current].context.result()),
            // The IPC code has written x0 when the caller carries on.
            SyscallResult::Ipc(effects) => (effects.next == crate::ipc::Next::Continue
                && self.current == Some(current))
            .then(|| self.objects[current].context.result()),
        };
        self.audit_complete(platform, current, value);
    }

    /// The record of a stopped syscall that was cancelled (`x0..x8` as it
    /// was judged so far): it returned `result` (`Interrupted`), or none
    /// because its thread ended.
    pub(in crate::kernel) fn audit_cancelled(
        &mut self,
        platform: &mut impl Platform,
        thread: ThreadId,
        call: &crate::stopped_call::StoppedCall,
        result: Option<u64>,
    ) {
        // A call stopped in dispatch (a preempted `Retype`) had its record
        // fixed at its audit entry: this record replaces it, or the next
        // syscall that writes no record of its own (one the tracer skips)
        // or the thread's end would write it too.
        // Written into the thread's audit, if it is still audited (its
        // ring and notification live: the kernel turns an audit off when
        // either goes).
        let audited = &mut self.objects[thread];
        audited.audit_pending = None;
        if audited.audit.is_none() {
            return;
        }
        audited.audit_pending = Some(PendingRecord {
            moved_sink: None,
            call: call.regs,
            verdict: AuditVerdict::Cancelled,
            forwarded: call.forwarded,
        });
        self.write_record(platform, thread, result);
    }

    /// A thread is ending: the record of the syscall it was in is written
    /// now, with no result (the syscall ended it, or it was stopped and
    /// never ran).
    pub(in crate::kernel) fn audit_thread_ends(
        &mut self,
        platform: &mut impl Platform,
        thread: ThreadId,
    ) {
        if let Some(call) = self.objects[thread].call.take() {
            self.audit_cancelled(platform, thread, &call, None);
        }
        self.audit_complete(platform, thread, None);
    }

    /// Writes `thread`'s pending record, and forgets it, into the ring it
    /// began with (see [`write_pending_record`]), then lets the audit
    /// server know.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn write_record(
        &mut self,
        platform: &mut impl Platform,
        thread: ThreadId,
        result: Option<u64>,
    ) {
        let Some((audited, others)) = self.objects.split_thread(thread) else {
            unreachable!("a thread's record is written");
        };
        let written = write_pending_record(platform, audited, &others, result);
        self.after_record(platform, written);
    }

    /// What follows a record's write (`RecordWritten`): the server's
    /// notification signalled, if the ring was empty.
    #[inline(always)]
    fn after_record(&mut self, platform: &mut impl Platform, written: RecordWritten) {
        match written {
            RecordWritten::Quietly => {}
            RecordWritten::First { signal, bits } => {
                // A signal only wakes (the caller carries on): with nobody
                // woken, as when the server is busy, nothing is left to
                // apply.
                let effects = self.signal_notification(signal, bits);
                debug_assert!(effects.next == crate::ipc::Next::Continue);
                if effects.woken().next().is_some() {
                    self.apply_ipc(platform, effects);
                }
            }
        }
    }
}
