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
//! | 64 + 120·i | slot i (i below 32): one [`AuditRecord`], 120 bytes of fixed-width postcard (below) | kernel |
//!
//! Record `n` (counting written ones) is in slot `n % RING_SLOTS`. The ring
//! is full when `written - consumed == RING_SLOTS`. Then a thread in
//! *lossy* mode loses the record (the drop is counted, and its next record
//! that fits says how many it lost); a thread in *lossless* mode waits,
//! before its syscall runs, until there is room. Sequence numbers are given
//! to dropped records too, so the server can see every gap.
//!
//! The server may read on another CPU while the kernel writes, so the
//! two counters order the slots (as `smp_store_release` and
//! `smp_load_acquire` order Linux's perf ring): the kernel writes a
//! record's slot, then a barrier, then `written`; a reader reads
//! `written`, then a barrier, then the slot. A reader done with a slot
//! puts a barrier before it advances `consumed`, and the kernel reads
//! `consumed` with a barrier after it before it writes into a slot that
//! count frees. (`audit_server::Reader::next` does the reader's part.)
//!
//! # A record's bytes
//!
//! Postcard with every integer fixed-width little-endian
//! (`postcard::fixint::le`), so a record is always [`RECORD_BYTES`] long
//! and each 64-bit field is an aligned word the kernel stores directly
//! (it reads the arguments from the thread's saved registers into the
//! words it stores: no encoding buffer, no byte copies):
//!
//! | bytes | field |
//! |---|---|
//! | 0, 8, 16 | `sequence`, `time`, `thread_badge` |
//! | 24 | `syscall` |
//! | 32 + 8·i | `args[i]`, i in 0..8 |
//! | 96 | `result` (0 when there is none) |
//! | 104 | `dropped` |
//! | 112 | `thread` (4 bytes) |
//! | 116 | the code of a `Refused` verdict (2 bytes; 0 for any other) |
//! | 118 | `object_type` (1 byte) |
//! | 119 | flags: bit 0 a result, bit 1 `forwarded`, bits 4..7 the verdict (0 `Allowed`, 1 `Refused`, 2 `Killed`, 3 `Trapped`, 4 `Logged`, 5 `Emulated`, 6 `Cancelled`); the other bits 0 |
//!
//! A decoder refuses any other length, an unknown verdict, a flag bit
//! that must be 0, a code without `Refused` and a result without its
//! flag: every record has exactly one encoding.

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
/// Bytes of one record (the fixed-width encoding above).
pub const RECORD_BYTES: usize = 120;
/// The record as the words the kernel stores.
pub const RECORD_WORDS: usize = RECORD_BYTES / 8;
/// Bytes per slot: one record.
pub const SLOT_BYTES: u64 = RECORD_BYTES as u64;
/// Slots in the ring: a power of two, so the slot of record `n` is its
/// low bits (the kernel writes one record per audited syscall; a modulo
/// by 31, the count of 128-byte slots the page held, was a multiply-high
/// sequence of 10 instructions, where the mask and the slot's offset take
/// 3).
pub const RING_SLOTS: u64 = 32;
// The ring fits its page and holds a useful number of records.
const _: () = assert!(
    RING_SLOTS.is_power_of_two()
        && RING_SLOTS >= 16
        && SLOTS_OFFSET + RING_SLOTS * SLOT_BYTES <= 4096
);

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

/// One 64-bit field, fixed-width on the wire.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Word(#[serde(with = "postcard::fixint::le")] u64);

/// A record as it lies in a slot (see the module docs): what postcard
/// reads, and the layout [`AuditRecord::words`] stores.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct WireRecord {
    #[serde(with = "postcard::fixint::le")]
    sequence: u64,
    #[serde(with = "postcard::fixint::le")]
    time: u64,
    #[serde(with = "postcard::fixint::le")]
    thread_badge: u64,
    #[serde(with = "postcard::fixint::le")]
    syscall: u64,
    args: [Word; 8],
    #[serde(with = "postcard::fixint::le")]
    result: u64,
    #[serde(with = "postcard::fixint::le")]
    dropped: u64,
    #[serde(with = "postcard::fixint::le")]
    thread: u32,
    #[serde(with = "postcard::fixint::le")]
    refused_code: u16,
    object_type: u8,
    flags: u8,
}

/// Flag bit: the record has a result.
const HAS_RESULT: u8 = 1 << 0;
/// Flag bit: a policy server decided the syscall.
const FORWARDED: u8 = 1 << 1;
/// The verdict's place in the flags byte.
const VERDICT_SHIFT: u32 = 4;

impl AuditVerdict {
    /// Its number in the flags byte, and a `Refused` verdict's code.
    const fn wire(self) -> (u8, u16) {
        match self {
            AuditVerdict::Allowed => (0, 0),
            AuditVerdict::Refused(code) => (1, code),
            AuditVerdict::Killed => (2, 0),
            AuditVerdict::Trapped => (3, 0),
            AuditVerdict::Logged => (4, 0),
            AuditVerdict::Emulated => (5, 0),
            AuditVerdict::Cancelled => (6, 0),
        }
    }

    /// The verdict of number `kind` (with `code` for `Refused`; any other
    /// must have 0).
    const fn from_wire(kind: u8, code: u16) -> Option<AuditVerdict> {
        let verdict = match kind {
            0 => AuditVerdict::Allowed,
            1 => return Some(AuditVerdict::Refused(code)),
            2 => AuditVerdict::Killed,
            3 => AuditVerdict::Trapped,
            4 => AuditVerdict::Logged,
            5 => AuditVerdict::Emulated,
            6 => AuditVerdict::Cancelled,
            _ => return None,
        };
        if code != 0 {
            return None;
        }
        Some(verdict)
    }
}

impl AuditRecord {
    /// The message label (`MessageInfo::label` of `x1`, `args[1]`): not
    /// stored, as `args[1]` holds it.
    pub fn label(&self) -> u64 {
        crate::MessageInfo::from(self.args[1]).label()
    }

    /// The record as the [`RECORD_WORDS`] little-endian words of its slot:
    /// what the kernel stores, word by word (the same bytes as postcard
    /// writes: the tests compare them).
    #[inline(always)]
    pub fn words(&self) -> [u64; RECORD_WORDS] {
        let (flags, code) = self.flags_and_code();
        let a = self.args;
        [
            self.sequence,
            self.time,
            self.thread_badge,
            self.syscall,
            a[0],
            a[1],
            a[2],
            a[3],
            a[4],
            a[5],
            a[6],
            a[7],
            self.result.unwrap_or(0),
            self.dropped,
            u64::from(self.thread)
                | u64::from(code) << 32
                | u64::from(self.object_type) << 48
                | u64::from(flags) << 56,
        ]
    }

    /// The flags byte (result, forwarded, verdict) and a refusal's code.
    #[inline(always)]
    fn flags_and_code(&self) -> (u8, u16) {
        let (kind, code) = self.verdict.wire();
        let flags = u8::from(self.result.is_some())
            | if self.forwarded { FORWARDED } else { 0 }
            | kind << VERDICT_SHIFT;
        (flags, code)
    }

    /// The record's [`RECORD_BYTES`] bytes.
    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut bytes = [0u8; RECORD_BYTES];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(self.words()) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// Decodes one record; `None` for anything malformed (see the module
    /// docs) or of another length.
    pub fn decode(bytes: &[u8]) -> Option<AuditRecord> {
        let wire = match postcard::take_from_bytes::<WireRecord>(bytes) {
            Ok((wire, [])) => wire,
            _ => return None,
        };
        let known = HAS_RESULT | FORWARDED | 0xf << VERDICT_SHIFT;
        if wire.flags & !known != 0 {
            return None;
        }
        let verdict = AuditVerdict::from_wire(wire.flags >> VERDICT_SHIFT, wire.refused_code)?;
        let result = if wire.flags & HAS_RESULT != 0 {
            Some(wire.result)
        } else if wire.result == 0 {
            None
        } else {
            return None;
        };
        Some(AuditRecord {
            sequence: wire.sequence,
            time: wire.time,
            thread_badge: wire.thread_badge,
            thread: wire.thread,
            syscall: wire.syscall,
            object_type: wire.object_type,
            args: wire.args.map(|Word(word)| word),
            result,
            verdict,
            forwarded: wire.flags & FORWARDED != 0,
            dropped: wire.dropped,
        })
    }

    /// The wire form, for the tests' comparison with postcard's bytes.
    #[cfg(test)]
    fn wire(&self) -> WireRecord {
        let (flags, code) = self.flags_and_code();
        WireRecord {
            sequence: self.sequence,
            time: self.time,
            thread_badge: self.thread_badge,
            syscall: self.syscall,
            args: self.args.map(Word),
            result: self.result.unwrap_or(0),
            dropped: self.dropped,
            thread: self.thread,
            refused_code: code,
            object_type: self.object_type,
            flags,
        }
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
            args: [u64::MAX; 8],
            result: Some(u64::MAX),
            verdict: AuditVerdict::Refused(u16::MAX),
            forwarded: true,
            dropped: u64::MAX,
        }
    }

    #[test]
    fn the_widest_record_fills_its_slot_and_round_trips() {
        let bytes = widest().encode();
        assert_eq!(bytes.len() as u64, SLOT_BYTES);
        assert_eq!(AuditRecord::decode(&bytes), Some(widest()));
    }

    /// Records with every field drawn from values around byte
    /// boundaries.
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
                args,
                result: (next() & 1 != 0).then(&mut next),
                verdict: verdicts[(next() % verdicts.len() as u64) as usize],
                forwarded: next() & 1 != 0,
                dropped: next(),
            }
        })
    }

    #[test]
    fn encoding_is_postcards_and_round_trips() {
        let mut theirs = [0u8; RECORD_BYTES + 8];
        for record in records(0x1234_5678).chain([widest()]) {
            let expected = postcard::to_slice(&record.wire(), &mut theirs).expect("fits");
            assert_eq!(&record.encode()[..], &*expected, "{record:?}");
            assert_eq!(AuditRecord::decode(&record.encode()), Some(record));
        }
    }

    #[test]
    fn fields_lie_where_the_table_says() {
        let record = widest();
        let words = AuditRecord {
            thread: 0x1122_3344,
            object_type: 0x55,
            verdict: AuditVerdict::Refused(0x6677),
            forwarded: false,
            result: None,
            ..record
        }
        .words();
        assert_eq!(
            words[14], 0x1055_6677_1122_3344,
            "thread, code, type, flags"
        );
        assert_eq!(words[12], 0, "no result: 0");
    }

    #[test]
    fn malformed_records_are_refused() {
        let bytes = widest().encode();
        for cut in 0..bytes.len() {
            assert_eq!(AuditRecord::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert_eq!(AuditRecord::decode(&longer), None, "trailing byte");
        let flags = RECORD_BYTES - 1;
        let code = RECORD_BYTES - 4;
        // (The table's offset of `result`.)
        let result = 96;
        let mut bad = AuditRecord {
            verdict: AuditVerdict::Allowed,
            result: None,
            ..widest()
        }
        .encode();
        bad[flags] = 7 << VERDICT_SHIFT;
        assert_eq!(AuditRecord::decode(&bad), None, "no such verdict");
        bad[flags] = 1 << 2;
        assert_eq!(AuditRecord::decode(&bad), None, "a flag bit that must be 0");
        bad[flags] = 0;
        bad[code] = 1;
        assert_eq!(AuditRecord::decode(&bad), None, "a code without Refused");
        bad[code] = 0;
        bad[result] = 1;
        assert_eq!(AuditRecord::decode(&bad), None, "a result without its flag");
        bad[result] = 0;
        assert!(AuditRecord::decode(&bad).is_some(), "the mended record");
        for seed in 0..2_000u64 {
            let noise: Vec<u8> = (0..(seed % 200))
                .map(|i| (seed.wrapping_mul(0x9e37_79b9).wrapping_add(i * 31) >> 3) as u8)
                .collect();
            let _ = AuditRecord::decode(&noise);
        }
    }

    #[test]
    fn the_label_is_x1s() {
        let info = crate::MessageInfo::with(0x1234, 3);
        let mut record = widest();
        record.args[1] = info.into();
        assert_eq!(record.label(), 0x1234);
        let decoded = AuditRecord::decode(&record.encode()).expect("well formed");
        assert_eq!(decoded.label(), 0x1234);
    }

    #[test]
    fn modes_decode_from_the_register() {
        assert_eq!(AuditMode::from_raw(0), Some(None));
        assert_eq!(AuditMode::from_raw(1), Some(Some(AuditMode::Lossy)));
        assert_eq!(AuditMode::from_raw(2), Some(Some(AuditMode::Lossless)));
        assert_eq!(AuditMode::from_raw(3), None);
    }
}
