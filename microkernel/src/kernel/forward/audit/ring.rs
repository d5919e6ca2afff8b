//! An audit ring as the kernel writes it: its counters, and a thread's
//! pending record written into it (layout and record: `abi::audit`).

use crate::platform::{PhysMemory, Platform};
use crate::thread::AuditSink;
use abi::audit::{
    AuditRecord, CONSUMED_OFFSET, DROPPED_OFFSET, NEXT_SEQUENCE_OFFSET, RING_SLOTS, SLOTS_OFFSET,
    SLOT_BYTES, WRITTEN_OFFSET,
};
use abi::cap::CapType;
use core::sync::atomic::{fence, Ordering};

/// The ring's counters as the kernel may rely on them.
pub(super) struct RingState {
    written: u64,
    consumed: u64,
}

impl RingState {
    pub(super) fn read<M: PhysMemory>(phys: &M, ring: u64) -> RingState {
        let mut counts = [0; 2];
        phys.read_phys_words(ring + WRITTEN_OFFSET, &mut counts);
        Self::from_counts(counts)
    }

    /// From the ring's `written` and `consumed` words, as read.
    fn from_counts([written, consumed]: [u64; 2]) -> RingState {
        // The server, on another CPU, released the slots it counts as
        // consumed (a barrier before its store): no write into a slot
        // this finds free may be seen before the server's reads of it.
        fence(Ordering::Acquire);
        // The server's field: never past what was written.
        RingState {
            written,
            consumed: consumed.min(written),
        }
    }

    pub(super) fn is_full(&self) -> bool {
        self.written - self.consumed >= RING_SLOTS
    }
}

/// The header words `write_record` reads at once: `next_sequence`,
/// `written`, `consumed`, `dropped`, in that order.
const HEADER_WORDS: usize = 4;
const _: () = assert!(
    NEXT_SEQUENCE_OFFSET == 0
        && WRITTEN_OFFSET == 8
        && CONSUMED_OFFSET == 16
        && DROPPED_OFFSET == 24
);

/// What became of a pending record (`write_pending_record`).
#[derive(Clone, Copy)]
pub(super) enum RecordWritten {
    /// Written, dropped into a full ring, or there was none: nothing more
    /// to do.
    Quietly,
    /// Written into an empty ring: the server hears of it once, not per
    /// record, through this notification and these bits.
    First {
        signal: crate::cap::ObjectId,
        bits: u64,
    },
}

/// Writes `audited`'s pending record, and forgets it, into the ring it
/// began with, and signals the notification if the ring was empty.
/// Lossy or lossless, a full ring drops the record and counts it.
///
/// The thread's own sink lives (the kernel turns an audit off when its
/// ring or notification goes, `Kernel::audit_sink_destroyed`), so it is
/// written without a look at either. A record that began with an audit
/// changed since (`PendingRecord::moved_sink`: the syscall changed its
/// own audit, or destroyed its ring or notification) is written out of
/// line, by `write_moved_record`, which looks. The record is read where
/// it is kept, never copied whole (each bulk copy was a `memcpy` call).
/// One body for the two callers, `Kernel::write_record` and the
/// audit-only lane (`Kernel::syscall_audited`), which has the thread in
/// hand: as a call it cost the lane its own look-ups of the thread and
/// the ring.
#[inline(always)]
pub(super) fn write_pending_record(
    platform: &mut impl Platform,
    audited: &mut crate::thread::Thread,
    others: &crate::cap::OtherObjects<'_>,
    result: Option<u64>,
) -> RecordWritten {
    let Some(pending) = &audited.audit_pending else {
        return RecordWritten::Quietly;
    };
    if let Some(began_with) = pending.moved_sink {
        return write_moved_record(platform, audited, others, began_with, result);
    }
    // Begun with the thread's audit, unchanged since. (None: its TCB is
    // being destroyed, `Kernel::leave_audit`.)
    let Some(sink) = &audited.audit else {
        audited.audit_pending = None;
        return RecordWritten::Quietly;
    };
    let ((signal, bits), ring, badge) = (sink.notification, sink.ring, sink.badge);
    match write_into_ring(platform, audited, others, ring, badge, true, result) {
        true => RecordWritten::First {
            signal: signal.id,
            bits,
        },
        false => RecordWritten::Quietly,
    }
}

/// `write_pending_record` for a record whose audit changed during its
/// syscall (`PendingRecord::moved_sink`, here `sink`): into a ring that is gone
/// nothing is written (the server lost the ring with it), and a
/// notification that is gone is not signalled (the record still tells
/// the server what the syscall did). Drops are counted for the thread
/// only if it is audited into that ring again (set again to the same
/// one).
#[cold]
#[inline(never)]
fn write_moved_record(
    platform: &mut impl Platform,
    audited: &mut crate::thread::Thread,
    others: &crate::cap::OtherObjects<'_>,
    sink: AuditSink,
    result: Option<u64>,
) -> RecordWritten {
    let same_sink = Some(sink) == audited.audit;
    if !others.resolves(sink.frame, CapType::Frame) {
        audited.audit_pending = None;
        return RecordWritten::Quietly;
    }
    let (signal, bits) = sink.notification;
    let first = write_into_ring(
        platform, audited, others, sink.ring, sink.badge, same_sink, result,
    );
    if !first || !others.resolves(signal, CapType::Notification) {
        return RecordWritten::Quietly;
    }
    RecordWritten::First {
        signal: signal.id,
        bits,
    }
}

/// Writes `audited`'s pending record, and forgets it, into the ring at
/// `ring` (a live one) with the badge `badge`, or drops it into a full
/// ring and counts the drop (for the thread too, if `same_sink`: it is
/// still audited into that ring). `true`: the ring was empty before the
/// record, so the server hears of it (once, not per record).
#[inline(always)]
fn write_into_ring(
    platform: &mut impl Platform,
    audited: &mut crate::thread::Thread,
    others: &crate::cap::OtherObjects<'_>,
    ring: u64,
    badge: u64,
    same_sink: bool,
    result: Option<u64>,
) -> bool {
    let Some(pending) = &audited.audit_pending else {
        return false;
    };
    // The header's four words in one read (one translation, not one
    // a word).
    let mut header = [0; HEADER_WORDS];
    platform.read_phys_words(ring, &mut header);
    let [sequence, written, consumed, dropped] = header;
    let state = RingState::from_counts([written, consumed]);
    if state.is_full() {
        platform.write_phys_u64(ring + NEXT_SEQUENCE_OFFSET, sequence.wrapping_add(1));
        platform.write_phys_u64(ring + DROPPED_OFFSET, dropped.wrapping_add(1));
        audited.audit_pending = None;
        if same_sink {
            audited.audit_dropped += 1;
        }
        return false;
    }
    let call = &pending.call;
    // The capability `x0` named, through the thread's CSpace range (the
    // invariant checks keep it the CNode's).
    let (first, slots) = audited.cspace_slots;
    let object_type =
        if abi::Syscall::number_names_capability(call[8]) && call[0] < u64::from(slots) {
            others
                .slot_content(crate::cap::SlotId(first.0 + call[0] as u32))
                .filter(|cap| !cap.is_null())
                .map_or(0, |cap| cap.cap_type().raw())
        } else {
            0
        };
    let record = AuditRecord {
        sequence,
        time: platform.counter(),
        thread_badge: badge,
        thread: audited.number,
        syscall: call[8],
        object_type,
        args: [
            call[0], call[1], call[2], call[3], call[4], call[5], call[6], call[7],
        ],
        result,
        verdict: pending.verdict,
        forwarded: pending.forwarded,
        dropped: if same_sink { audited.audit_dropped } else { 0 },
    };
    // Fixed-width: the record's words go straight into its slot.
    let slot = ring + SLOTS_OFFSET + (state.written % RING_SLOTS) * SLOT_BYTES;
    platform.write_phys_words(slot, &record.words());
    // The record before the count that shows it: a server on another
    // CPU that sees `written` move must see the slot's words (it reads
    // `written` with a barrier after it, `abi::audit`).
    fence(Ordering::Release);
    // `written` is in the shared page (the server can write it too):
    // at u64::MAX it wraps, as every other value moves on by one.
    // (With the next sequence number, the word before it: one write.)
    platform.write_phys_words(
        ring + NEXT_SEQUENCE_OFFSET,
        &[sequence.wrapping_add(1), state.written.wrapping_add(1)],
    );
    audited.audit_pending = None;
    if same_sink {
        audited.audit_dropped = 0;
    }
    // Empty to non-empty.
    state.written == state.consumed
}
