//! Audit records and the ring the kernel writes them into.
//!
//! `TcbSetAudit` points a thread's audit at a Frame (the ring) and a
//! notification. The kernel writes one record per syscall of that thread
//! into the ring and signals the notification when the ring goes from
//! empty to non-empty (not per record); the audit server maps the same
//! Frame, reads records and advances `consumed`.
//!
//! # The ring (one 4 KiB Frame)
//!
//! | offset | field | written by |
//! |---|---|---|
//! | 0 | `next_sequence`: the sequence number the next record will get (dropped records use theirs up too) | kernel |
//! | 8 | `written`: records written so far | kernel |
//! | 16 | `consumed`: records the server has read | server |
//! | 24 | `dropped`: records dropped so far, all threads | kernel |
//! | 64 + 192·i | slot i: a length byte, then that many bytes of a postcard [`AuditRecord`] | kernel |
//!
//! Record `n` (counting written ones) is in slot `n % RING_SLOTS`. The ring
//! is full when `written - consumed == RING_SLOTS`. Then a thread in
//! *lossy* mode loses the record (the drop is counted, and its next record
//! that fits says how many it lost); a thread in *lossless* mode waits,
//! before its syscall runs, until there is room. Sequence numbers are given
//! to dropped records too, so the server can see every gap.

use serde::{Deserialize, Serialize};

/// Byte offset of `next_sequence` in the ring.
pub const NEXT_SEQUENCE_OFFSET: u64 = 0;
/// Byte offset of `written`.
pub const WRITTEN_OFFSET: u64 = 8;
/// Byte offset of `consumed`.
pub const CONSUMED_OFFSET: u64 = 16;
/// Byte offset of `dropped`.
pub const DROPPED_OFFSET: u64 = 24;
/// Byte offset of slot 0.
pub const SLOTS_OFFSET: u64 = 64;
/// Bytes per slot (a length byte and the record).
pub const SLOT_BYTES: u64 = 192;
/// Slots in the ring.
pub const RING_SLOTS: u64 = (4096 - SLOTS_OFFSET) / SLOT_BYTES;
// The ring fits its page and holds a useful number of records.
const _: () = assert!(RING_SLOTS >= 16 && SLOTS_OFFSET + RING_SLOTS * SLOT_BYTES <= 4096);

/// The largest encoded record (every field at its widest).
pub const MAX_RECORD_BYTES: usize = SLOT_BYTES as usize - 1;

/// How a thread's audit behaves when the ring is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuditMode {
    /// Lose the record, count it, and say so in the next one.
    Lossy,
    /// Wait (before the syscall runs) until the ring has room.
    Lossless,
}

impl AuditMode {
    /// The `x4` of `TcbSetAudit`: 0 off, 1 lossy, 2 lossless.
    pub const fn from_raw(raw: u64) -> Option<Option<AuditMode>> {
        match raw {
            0 => Some(None),
            1 => Some(Some(AuditMode::Lossy)),
            2 => Some(Some(AuditMode::Lossless)),
            _ => None,
        }
    }
}

/// What the policy stage decided about the syscall (with
/// [`AuditRecord::forwarded`]: whether a policy server decided it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AuditVerdict {
    /// It ran (no filter, or the filters, or a policy server, allowed it).
    Allowed,
    /// A filter, or a policy server, refused it with this error code.
    Refused(u16),
    /// A filter, or a policy server, killed the thread.
    Killed,
    /// It was reported to the fault endpoint (`Trap`).
    Trapped,
    /// A filter's `Log` rule let it run and asked for this record.
    Logged,
    /// A policy server returned a result in its place; it did not run.
    Emulated,
    /// It stopped (for its tracer, a policy server or audit room) and was
    /// cancelled before it ran: the thread was suspended, or one of the
    /// call's registers was written. It returned `Interrupted`.
    Cancelled,
}

/// One syscall, as the audit server reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Unique and increasing per ring; a jump means dropped records.
    pub sequence: u64,
    /// CNTVCT_EL0 when the record was made.
    pub time: u64,
    /// The badge given with `TcbSetAudit`: who made the syscall (a thread
    /// created by an audited thread inherits its badge).
    pub thread_badge: u64,
    /// The thread's identifier (as trace stops and policy requests give
    /// it): tells apart threads that share a badge.
    pub thread: u32,
    /// The syscall number.
    pub syscall: u64,
    /// The `CapType` number of the capability `x0` named (0: none).
    pub object_type: u8,
    /// The message label (`MessageInfo::label` of `x1`).
    pub label: u64,
    /// `x0..x7` as the syscall was judged (after any tracer's or policy
    /// server's changes): what ran.
    pub args: [u64; 8],
    /// `x0` when the syscall returned; `None` if it blocked, or ended its
    /// own thread.
    pub result: Option<u64>,
    /// The policy stage's verdict.
    pub verdict: AuditVerdict,
    /// A policy server decided it (a filter's `Notify`).
    pub forwarded: bool,
    /// Records of this thread lost since its last written one.
    pub dropped: u64,
}

impl AuditRecord {
    /// Encodes into `buffer` (at least [`MAX_RECORD_BYTES`]); the bytes
    /// (`None` if they do not fit). The same bytes as
    /// `postcard::to_slice` (the tests compare them), written by hand:
    /// the kernel encodes a record per audited syscall, and postcard's
    /// generic serializer copied each field's bytes in with a `memcpy`
    /// call, several hundred instructions a record.
    pub fn encode<'b>(&self, buffer: &'b mut [u8]) -> Option<&'b [u8]> {
        let mut out = Writer { buffer, at: 0 };
        out.varint(self.sequence)?;
        out.varint(self.time)?;
        out.varint(self.thread_badge)?;
        out.varint(u64::from(self.thread))?;
        out.varint(self.syscall)?;
        out.byte(self.object_type)?;
        out.varint(self.label)?;
        for arg in self.args {
            out.varint(arg)?;
        }
        match self.result {
            None => out.byte(0)?,
            Some(result) => {
                out.byte(1)?;
                out.varint(result)?;
            }
        }
        // An enum is its variant's index (a varint), then its payload.
        match self.verdict {
            AuditVerdict::Allowed => out.byte(0)?,
            AuditVerdict::Refused(code) => {
                out.byte(1)?;
                out.varint(u64::from(code))?;
            }
            AuditVerdict::Killed => out.byte(2)?,
            AuditVerdict::Trapped => out.byte(3)?,
            AuditVerdict::Logged => out.byte(4)?,
            AuditVerdict::Emulated => out.byte(5)?,
            AuditVerdict::Cancelled => out.byte(6)?,
        }
        out.byte(u8::from(self.forwarded))?;
        out.varint(self.dropped)?;
        let Writer { buffer, at } = out;
        Some(&buffer[..at])
    }

    /// Decodes one record; `None` for anything malformed or with bytes
    /// left over.
    pub fn decode(bytes: &[u8]) -> Option<AuditRecord> {
        match postcard::take_from_bytes::<AuditRecord>(bytes) {
            Ok((record, [])) => Some(record),
            _ => None,
        }
    }
}

/// Postcard's wire format for the types of a record: bytes as they are,
/// unsigned integers as LEB128 varints.
struct Writer<'b> {
    buffer: &'b mut [u8],
    at: usize,
}

impl Writer<'_> {
    #[inline(always)]
    fn byte(&mut self, byte: u8) -> Option<()> {
        *self.buffer.get_mut(self.at)? = byte;
        self.at += 1;
        Some(())
    }

    /// Seven bits a byte, low first; the top bit says another follows.
    #[inline(always)]
    fn varint(&mut self, mut value: u64) -> Option<()> {
        while value >= 0x80 {
            self.byte(value as u8 | 0x80)?;
            value >>= 7;
        }
        self.byte(value as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest() -> AuditRecord {
        AuditRecord {
            sequence: u64::MAX,
            time: u64::MAX,
            thread_badge: u64::MAX,
            thread: u32::MAX,
            syscall: u64::MAX,
            object_type: u8::MAX,
            label: u64::MAX,
            args: [u64::MAX; 8],
            result: Some(u64::MAX),
            verdict: AuditVerdict::Refused(u16::MAX),
            forwarded: true,
            dropped: u64::MAX,
        }
    }

    #[test]
    fn the_widest_record_fits_a_slot_and_round_trips() {
        let mut buffer = [0u8; MAX_RECORD_BYTES];
        let bytes = widest().encode(&mut buffer).expect("fits");
        assert!(bytes.len() <= MAX_RECORD_BYTES);
        assert_eq!(AuditRecord::decode(bytes), Some(widest()));
    }

    /// Records with every field drawn from values around the varint
    /// byte boundaries.
    fn records(seed: u64) -> impl Iterator<Item = AuditRecord> {
        let edges = [
            0u64,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            0xffff,
            1 << 35,
            u64::MAX >> 1,
            u64::MAX,
        ];
        let verdicts = [
            AuditVerdict::Allowed,
            AuditVerdict::Refused(0),
            AuditVerdict::Refused(0x80),
            AuditVerdict::Refused(u16::MAX),
            AuditVerdict::Killed,
            AuditVerdict::Trapped,
            AuditVerdict::Logged,
            AuditVerdict::Emulated,
            AuditVerdict::Cancelled,
        ];
        let mut state = seed | 1;
        (0..3_000).map(move |_| {
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let edge = edges[(state % edges.len() as u64) as usize];
                if state & 0x100 != 0 {
                    edge
                } else {
                    edge.wrapping_add(state >> 40)
                }
            };
            let mut args = [0u64; 8];
            for arg in &mut args {
                *arg = next();
            }
            AuditRecord {
                sequence: next(),
                time: next(),
                thread_badge: next(),
                thread: next() as u32,
                syscall: next(),
                object_type: next() as u8,
                label: next(),
                args,
                result: (next() & 1 != 0).then(&mut next),
                verdict: verdicts[(next() % verdicts.len() as u64) as usize],
                forwarded: next() & 1 != 0,
                dropped: next(),
            }
        })
    }

    #[test]
    fn encoding_is_postcards() {
        let mut ours = [0u8; MAX_RECORD_BYTES];
        let mut theirs = [0u8; MAX_RECORD_BYTES];
        for record in records(0x1234_5678).chain([widest()]) {
            let expected = postcard::to_slice(&record, &mut theirs).expect("fits");
            assert_eq!(record.encode(&mut ours), Some(&*expected), "{record:?}");
            // Too small a buffer: `None`, as postcard's `Err`; just big
            // enough: the same bytes.
            let len = expected.len();
            assert_eq!(record.encode(&mut ours[..len - 1]), None);
            let mut exact = [0u8; MAX_RECORD_BYTES];
            assert_eq!(record.encode(&mut exact[..len]), Some(&*expected));
        }
    }

    #[test]
    fn malformed_records_are_refused() {
        let mut buffer = [0u8; MAX_RECORD_BYTES];
        let bytes = widest().encode(&mut buffer).expect("fits").to_vec();
        for cut in 0..bytes.len() {
            assert_eq!(AuditRecord::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(AuditRecord::decode(&longer), None, "trailing byte");
        let mut bad_verdict = AuditRecord {
            verdict: AuditVerdict::Allowed,
            result: None,
            ..widest()
        }
        .encode(&mut buffer)
        .expect("fits")
        .to_vec();
        // The verdict, then `forwarded` (1 byte) and `dropped` (10 bytes).
        let verdict_at = bad_verdict.len() - 12;
        bad_verdict[verdict_at] = 9;
        assert_eq!(AuditRecord::decode(&bad_verdict), None, "no such verdict");
        for seed in 0..2_000u64 {
            let noise: Vec<u8> = (0..(seed % 200))
                .map(|i| (seed.wrapping_mul(0x9e37_79b9).wrapping_add(i * 31) >> 3) as u8)
                .collect();
            let _ = AuditRecord::decode(&noise);
        }
    }

    #[test]
    fn modes_decode_from_the_register() {
        assert_eq!(AuditMode::from_raw(0), Some(None));
        assert_eq!(AuditMode::from_raw(1), Some(Some(AuditMode::Lossy)));
        assert_eq!(AuditMode::from_raw(2), Some(Some(AuditMode::Lossless)));
        assert_eq!(AuditMode::from_raw(3), None);
    }
}
