//! The reference audit server's logic: reading records out of the audit
//! ring (`abi::audit`) and turning them into lines for people.
//!
//! The ring is reached through [`RingMemory`], so the reading and the
//! gap/drop accounting unit-test on the host with a plain array; the
//! program around it (in `init`) maps the ring's Frame and waits on the
//! audit notification.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]

use abi::audit::{
    AuditRecord, AuditVerdict, CONSUMED_OFFSET, RECORD_BYTES, RING_SLOTS, SLOTS_OFFSET, SLOT_BYTES,
    WRITTEN_OFFSET,
};
use abi::cap::CapType;
use abi::{ErrorCode, Syscall};
use core::fmt;
use core::sync::atomic::{fence, Ordering};

/// The ring's 4 KiB, however the server reaches them.
pub trait RingMemory {
    /// The 64-bit word at byte `offset`.
    fn read_u64(&self, offset: u64) -> u64;
    /// Stores the 64-bit word at byte `offset`.
    fn write_u64(&mut self, offset: u64, value: u64);
}

/// A ring Frame this thread mapped writable (`sdk::vspace::Frame::map_view`).
impl RingMemory for sdk::vspace::MappedFrame {
    fn read_u64(&self, offset: u64) -> u64 {
        sdk::vspace::MappedFrame::read_u64(self, offset)
    }
    fn write_u64(&mut self, offset: u64, value: u64) {
        // A read-only view cannot advance `consumed`: the reader then sees
        // the same record again, never memory it should not touch.
        let _ = sdk::vspace::MappedFrame::write_u64(self, offset, value);
    }
}

/// One thing the server reads out of the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A record, and how many sequence numbers were skipped before it.
    Record {
        /// The record.
        record: AuditRecord,
        /// Sequence numbers missing between the previous record and this
        /// one (records the kernel had to drop).
        gap: u64,
    },
    /// A slot that did not decode (a kernel bug or a corrupted ring).
    Garbled {
        /// The slot's record number.
        index: u64,
    },
}

/// Reads a ring, remembering what it has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reader {
    /// The sequence number expected next.
    next_sequence: u64,
    /// Records read.
    pub records: u64,
    /// Sequence numbers that never arrived (dropped records).
    pub missing: u64,
}

impl Reader {
    /// A reader at the start of a fresh ring.
    pub const fn new() -> Reader {
        Reader {
            next_sequence: 0,
            records: 0,
            missing: 0,
        }
    }

    /// Takes the next record out of the ring (advancing `consumed`), or
    /// `None` when it is empty.
    pub fn next(&mut self, ring: &mut impl RingMemory) -> Option<Entry> {
        let written = ring.read_u64(WRITTEN_OFFSET);
        let consumed = ring.read_u64(CONSUMED_OFFSET);
        if consumed >= written {
            return None;
        }
        // The kernel, perhaps on another CPU, wrote the slot before the
        // count: read the slot only after the count (`abi::audit`).
        fence(Ordering::Acquire);
        let slot = SLOTS_OFFSET + (consumed % RING_SLOTS) * SLOT_BYTES;
        let mut bytes = [0u8; RECORD_BYTES];
        for (i, chunk) in bytes.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&ring.read_u64(slot + 8 * i as u64).to_le_bytes());
        }
        // Every read of the slot before it is handed back for a new record.
        fence(Ordering::Release);
        ring.write_u64(CONSUMED_OFFSET, consumed + 1);
        let Some(record) = AuditRecord::decode(&bytes) else {
            return Some(Entry::Garbled { index: consumed });
        };
        let gap = record.sequence.saturating_sub(self.next_sequence);
        self.next_sequence = record.sequence.wrapping_add(1);
        self.records += 1;
        self.missing += gap;
        Some(Entry::Record { record, gap })
    }
}

/// A record as one line: `#12 [badge 0x7] poll(notification=0x5, x2=0x0,
/// x3=0x0) = ok`, then the verdict if it was not a plain allow
/// (`, refused by a filter (8)`, `, emulated by the policy server`).
pub struct Line<'a>(pub &'a AuditRecord);

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        write!(f, "#{} [badge {:#x}] ", r.sequence, r.thread_badge)?;
        match Syscall::from_number(r.syscall) {
            Some(s) => write!(f, "{}", s.name())?,
            None => write!(f, "syscall_{}", r.syscall)?,
        }
        write!(f, "(")?;
        match CapType::from_raw(u64::from(r.object_type)) {
            Some(CapType::Null) | None => write!(f, "x0={:#x}", r.args[0])?,
            Some(t) => write!(f, "{}={:#x}", t.name(), r.args[0])?,
        }
        write!(f, ", x2={:#x}, x3={:#x})", r.args[2], r.args[3])?;
        match r.result {
            Some(x0) => match ErrorCode::from_raw(x0) {
                Some(code) => write!(f, " = {}", code.name())?,
                None => write!(f, " = {x0:#x}")?,
            },
            None => write!(f, " (no result: it blocked or ended its thread)")?,
        }
        let by = if r.forwarded {
            "the policy server"
        } else {
            "a filter"
        };
        match r.verdict {
            AuditVerdict::Allowed if r.forwarded => write!(f, ", allowed by {by}")?,
            AuditVerdict::Allowed => {}
            AuditVerdict::Refused(code) => write!(f, ", refused by {by} ({code})")?,
            AuditVerdict::Killed => write!(f, ", killed by {by}")?,
            AuditVerdict::Trapped => write!(f, ", trapped by a filter")?,
            AuditVerdict::Logged if r.forwarded => {
                write!(f, ", allowed by the policy server, logged by a filter")?
            }
            AuditVerdict::Logged => write!(f, ", logged by a filter")?,
            AuditVerdict::Emulated => write!(f, ", emulated by the policy server")?,
            AuditVerdict::Cancelled => write!(f, ", cancelled while it waited (did not run)")?,
        }
        if r.dropped > 0 {
            write!(f, " [{} earlier records of this thread dropped]", r.dropped)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::audit::NEXT_SEQUENCE_OFFSET;

    struct Ring([u8; 4096]);

    impl RingMemory for Ring {
        fn read_u64(&self, offset: u64) -> u64 {
            let o = offset as usize;
            u64::from_le_bytes(self.0[o..o + 8].try_into().unwrap())
        }
        fn write_u64(&mut self, offset: u64, value: u64) {
            let o = offset as usize;
            self.0[o..o + 8].copy_from_slice(&value.to_le_bytes());
        }
    }

    fn record(sequence: u64, dropped: u64) -> AuditRecord {
        AuditRecord {
            sequence,
            time: 1000 + sequence,
            thread_badge: 7,
            thread: 3,
            syscall: Syscall::Poll.number(),
            object_type: CapType::Notification.raw(),
            args: [5, 0, 0, 0, 0, 0, 0, 0],
            result: Some(0),
            verdict: AuditVerdict::Allowed,
            forwarded: false,
            dropped,
        }
    }

    /// What the kernel does for one record (see `kernel/forward/audit/ring.rs`).
    fn kernel_writes(ring: &mut Ring, record: &AuditRecord) -> bool {
        let sequence = ring.read_u64(NEXT_SEQUENCE_OFFSET);
        ring.write_u64(NEXT_SEQUENCE_OFFSET, sequence + 1);
        let written = ring.read_u64(WRITTEN_OFFSET);
        if written - ring.read_u64(CONSUMED_OFFSET) >= RING_SLOTS {
            return false;
        }
        let bytes = AuditRecord {
            sequence,
            ..*record
        }
        .encode();
        let slot = (SLOTS_OFFSET + (written % RING_SLOTS) * SLOT_BYTES) as usize;
        ring.0[slot..slot + bytes.len()].copy_from_slice(&bytes);
        ring.write_u64(WRITTEN_OFFSET, written + 1);
        true
    }

    #[test]
    fn records_come_out_in_order_and_drops_show_as_gaps() {
        let mut ring = Ring([0; 4096]);
        let total = RING_SLOTS + 5;
        let written = (0..total)
            .filter(|_| kernel_writes(&mut ring, &record(0, 0)))
            .count();
        assert_eq!(written as u64, RING_SLOTS, "a full ring takes no more");
        let mut reader = Reader::new();
        for expected in 0..RING_SLOTS {
            match reader.next(&mut ring) {
                Some(Entry::Record { record, gap: 0 }) => assert_eq!(record.sequence, expected),
                other => panic!("record {expected}: {other:?}"),
            }
        }
        assert_eq!(reader.next(&mut ring), None);
        // Room again: the next record carries the drop count, and its
        // sequence number shows the gap.
        assert!(kernel_writes(&mut ring, &record(0, 5)));
        match reader.next(&mut ring) {
            Some(Entry::Record { record, gap }) => {
                assert_eq!((record.sequence, gap, record.dropped), (total, 5, 5));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!((reader.records, reader.missing), (RING_SLOTS + 1, 5));
    }

    #[test]
    fn a_garbled_slot_is_reported_not_trusted() {
        let mut ring = Ring([0; 4096]);
        ring.write_u64(WRITTEN_OFFSET, 1);
        // The flags byte (the slot's last) with a bit that must be 0.
        ring.0[SLOTS_OFFSET as usize + RECORD_BYTES - 1] = 0x0c;
        assert_eq!(
            Reader::new().next(&mut ring),
            Some(Entry::Garbled { index: 0 })
        );
        assert_eq!(ring.read_u64(CONSUMED_OFFSET), 1, "skipped, not stuck");
    }

    #[test]
    fn lines_read_well() {
        let mut r = record(12, 3);
        r.result = Some(0x77);
        assert_eq!(
            Line(&r).to_string(),
            "#12 [badge 0x7] poll(notification=0x5, x2=0x0, x3=0x0) = 0x77 [3 earlier records of this thread dropped]"
        );
        r.result = Some(ErrorCode::Denied.raw());
        r.verdict = AuditVerdict::Refused(8);
        r.dropped = 0;
        assert!(Line(&r)
            .to_string()
            .ends_with("= denied, refused by a filter (8)"));
        r.forwarded = true;
        assert!(Line(&r)
            .to_string()
            .ends_with("= denied, refused by the policy server (8)"));
        r.verdict = AuditVerdict::Emulated;
        r.result = Some(0x77);
        assert!(Line(&r)
            .to_string()
            .ends_with("= 0x77, emulated by the policy server"));
        r.verdict = AuditVerdict::Cancelled;
        r.result = None;
        assert!(Line(&r).to_string().ends_with(
            "(no result: it blocked or ended its thread), cancelled while it waited (did not run)"
        ));
    }
}
