//! Trace stops and audit records streamed over the serial console as
//! framed binary, between lines of text.
//!
//! # A frame on the console
//!
//! `0x00 <COBS bytes> 0x00`: one [`Event`], postcard-encoded, then COBS
//! (consistent overhead byte stuffing), so the bytes between the two
//! delimiters hold no zero. The console's text holds no zero either (the
//! kernel prints a thread's non-printable bytes as `?`), so a reader finds
//! frames by their zeros alone. The kernel owns the UART and writes a frame
//! whole, with both delimiters, in one console call: text and frames
//! never interleave mid-frame, and a frame never splits a line of another
//! writer's text in two.
//!
//! # An event's bytes
//!
//! Postcard: every integer a varint (`u64` at most 10 bytes, `u32` 5,
//! `u16` 3), the variant first as a varint tag, a string as its length then
//! its UTF-8 bytes, an array as its elements with no length. COBS adds one
//! byte per 254 (one for any event here). Largest encodings:
//!
//! | tag | variant | fields, in order | largest event | largest frame |
//! |---|---|---|---|---|
//! | 0 | [`Event::Clock`] | `frequency` u64, `time` u64 | 21 | 22 |
//! | 1 | [`Event::Thread`] | `thread` u32, `name` (at most 24 bytes) | 31 | 32 |
//! | 2 | [`Event::SyscallEntry`] | `time` u64, `thread` u32, `number` u64, `args` 6 × u64 | 86 | 87 |
//! | 3 | [`Event::SyscallExit`] | `time` u64, `thread` u32, `number` u64, `result` u64, `second` u64 | 46 | 47 |
//! | 4 | [`Event::Audit`] | one [`AuditRecord`] in its serde field order (`sequence`, `time`, `thread_badge`, `thread`, `syscall`, `object_type` u8, `args` 8 × u64, `result` option, `verdict` enum, `forwarded` bool, `dropped`) | 153 | 154 |
//! | 5 | [`Event::AuditDropped`] | `time` u64, `count` u64 | 21 | 22 |
//!
//! Times are the counter (`CNTVCT_EL0`) in ticks; [`Event::Clock`], the
//! first frame of an export, gives its frequency. Thread numbers are the
//! kernel's thread identifiers, as trace stops and audit records give
//! them.
//!
//! A frame decodes only if it is the exact encoding of the event it
//! decodes to ([`decode_frame`] encodes it again and compares): trailing
//! bytes, a varint with needless continuation bytes or a stray zero make
//! it [`FrameError::Malformed`], so every event has one encoding.

use serde::{Deserialize, Serialize};

use crate::audit::AuditRecord;

/// The byte before and after every frame on the console.
pub const FRAME_DELIMITER: u8 = 0;

/// Largest encoded frame (COBS bytes, without delimiters) any Event takes; must be <= 256.
///
/// The largest is 154 (an [`Event::Audit`]); the rest is room for the
/// record to grow without changing every buffer sized by this. A buffer of
/// this size also holds the 0 that postcard's encoder ends a frame with,
/// which [`encode_frame`] needs room for and then leaves out.
pub const MAX_FRAME_BYTES: usize = 192;

/// Most bytes a varint of each width takes.
const U64_BYTES: usize = 10;
const U32_BYTES: usize = 5;
const U16_BYTES: usize = 3;
/// A variant's tag (below 128: one byte).
const TAG_BYTES: usize = 1;
/// Longest thread name, in bytes.
pub const THREAD_NAME_BYTES: usize = 24;

/// The largest postcard encoding of each variant (the module's table).
const CLOCK_BYTES: usize = TAG_BYTES + 2 * U64_BYTES;
const THREAD_BYTES: usize = TAG_BYTES + U32_BYTES + 1 + THREAD_NAME_BYTES;
const SYSCALL_ENTRY_BYTES: usize = TAG_BYTES + U64_BYTES + U32_BYTES + U64_BYTES + 6 * U64_BYTES;
const SYSCALL_EXIT_BYTES: usize = TAG_BYTES + U64_BYTES + U32_BYTES + 3 * U64_BYTES;
/// sequence, time, badge; thread; syscall; object type; args;
/// result (option tag and word); verdict (tag and a `Refused` code);
/// forwarded; dropped.
const AUDIT_RECORD_BYTES: usize = 3 * U64_BYTES
    + U32_BYTES
    + U64_BYTES
    + 1
    + 8 * U64_BYTES
    + (1 + U64_BYTES)
    + (TAG_BYTES + U16_BYTES)
    + 1
    + U64_BYTES;
const AUDIT_BYTES: usize = TAG_BYTES + AUDIT_RECORD_BYTES;
const AUDIT_DROPPED_BYTES: usize = TAG_BYTES + 2 * U64_BYTES;

/// COBS bytes of an encoding `n` bytes long: one code byte per started
/// run of 254.
const fn cobs_bytes(n: usize) -> usize {
    n + n.div_ceil(254)
}

const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

/// The largest postcard encoding any event takes.
const LARGEST_EVENT_BYTES: usize = max(
    max(
        max(CLOCK_BYTES, THREAD_BYTES),
        max(SYSCALL_ENTRY_BYTES, SYSCALL_EXIT_BYTES),
    ),
    max(AUDIT_BYTES, AUDIT_DROPPED_BYTES),
);

// Every event's frame and postcard's closing 0 fit a MAX_FRAME_BYTES
// buffer, and a frame fits the console's largest print.
const _: () = assert!(cobs_bytes(LARGEST_EVENT_BYTES) < MAX_FRAME_BYTES);
const _: () = assert!(MAX_FRAME_BYTES <= crate::DEBUG_PRINT_MAX);

/// One thing an export tells the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// First frame of an export: the counter's frequency (Hz) and its value now, so times convert to seconds.
    Clock {
        /// Ticks per second (`CNTFRQ_EL0`).
        frequency: u64,
        /// The counter when the export began.
        time: u64,
    },
    /// A thread's name (sent before the first event naming its number).
    Thread {
        /// The thread's number.
        thread: u32,
        /// Its name, as the kernel prints it in `[name#N]`.
        name: heapless::String<THREAD_NAME_BYTES>,
    },
    /// A syscall's entry stop (the thread is stopped for its tracer before the syscall runs).
    SyscallEntry {
        /// The counter at the stop.
        time: u64,
        /// The stopped thread.
        thread: u32,
        /// The syscall number (`x8`).
        number: u64,
        /// `x0..x5`.
        args: [u64; 6],
    },
    /// Its exit stop: x0 (the result) and x8 (the second result).
    SyscallExit {
        /// The counter at the stop.
        time: u64,
        /// The stopped thread.
        thread: u32,
        /// The syscall number.
        number: u64,
        /// `x0`: the error code, 0 for success.
        result: u64,
        /// `x8`: a badge or notification word for receive-type calls.
        second: u64,
    },
    /// One audit record, as read from a ring (abi::audit::AuditRecord, which derives Serialize/Deserialize).
    Audit(AuditRecord),
    /// Audit records lost by a ring (its `dropped` counter went up by `count`).
    AuditDropped {
        /// The counter when the reader saw the loss.
        time: u64,
        /// Records lost since the last look.
        count: u64,
    },
}

/// Why a frame could not be encoded or decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Encoding: `out` is too small. Decoding: more than
    /// [`MAX_FRAME_BYTES`] bytes, which no event takes.
    TooLarge,
    /// Decoding: not the encoding of any event.
    Malformed,
}

/// Encodes `event` as COBS bytes (no delimiters) into `out`; returns the used prefix.
///
/// An `out` of [`MAX_FRAME_BYTES`] always suffices. The returned bytes
/// hold no zero.
pub fn encode_frame<'a>(event: &Event, out: &'a mut [u8]) -> Result<&'a [u8], FrameError> {
    let encoded: &'a [u8] =
        postcard::to_slice_cobs(event, out).map_err(|_| FrameError::TooLarge)?;
    // Postcard ends its COBS output with the 0 sentinel; the console
    // writer adds the delimiters itself.
    match encoded.split_last() {
        Some((&FRAME_DELIMITER, frame)) => Ok(frame),
        _ => Err(FrameError::Malformed),
    }
}

/// Decodes one frame's COBS bytes (without delimiters; `bytes` is used as scratch, postcard's from_bytes_cobs needs &mut).
///
/// After the call `bytes` holds the decoded postcard bytes (or whatever
/// COBS decoding left there); read the frame before decoding it.
pub fn decode_frame(bytes: &mut [u8]) -> Result<Event, FrameError> {
    let mut original = [0u8; MAX_FRAME_BYTES];
    let original = original
        .get_mut(..bytes.len())
        .ok_or(FrameError::TooLarge)?;
    original.copy_from_slice(bytes);
    let event: Event = postcard::from_bytes_cobs(bytes).map_err(|_| FrameError::Malformed)?;
    // Postcard ignores bytes after the value and accepts needless varint
    // continuation bytes: only the event's own encoding is its frame.
    let mut again = [0u8; MAX_FRAME_BYTES];
    match encode_frame(&event, &mut again) {
        Ok(frame) if frame == &original[..] => Ok(event),
        _ => Err(FrameError::Malformed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::AuditVerdict;
    use crate::test_rng::Rng;
    use alloc::vec::Vec;

    fn name(text: &str) -> heapless::String<THREAD_NAME_BYTES> {
        heapless::String::try_from(text).expect("short enough")
    }

    fn record(verdict: AuditVerdict, word: u64, result: Option<u64>) -> AuditRecord {
        AuditRecord {
            sequence: word,
            time: word,
            thread_badge: word,
            thread: word as u32,
            syscall: word,
            object_type: word as u8,
            args: [word; 8],
            result,
            verdict,
            forwarded: word != 0,
            dropped: word,
        }
    }

    /// Each variant with every field at its widest, and its largest
    /// encoding from the module's table.
    fn widest() -> [(Event, usize); 6] {
        let m = u64::MAX;
        [
            (
                Event::Clock {
                    frequency: m,
                    time: m,
                },
                CLOCK_BYTES,
            ),
            (
                Event::Thread {
                    thread: u32::MAX,
                    name: name("abcdefghijklmnopqrstuvwx"),
                },
                THREAD_BYTES,
            ),
            (
                Event::SyscallEntry {
                    time: m,
                    thread: u32::MAX,
                    number: m,
                    args: [m; 6],
                },
                SYSCALL_ENTRY_BYTES,
            ),
            (
                Event::SyscallExit {
                    time: m,
                    thread: u32::MAX,
                    number: m,
                    result: m,
                    second: m,
                },
                SYSCALL_EXIT_BYTES,
            ),
            (
                Event::Audit(record(AuditVerdict::Refused(u16::MAX), m, Some(m))),
                AUDIT_BYTES,
            ),
            (
                Event::AuditDropped { time: m, count: m },
                AUDIT_DROPPED_BYTES,
            ),
        ]
    }

    /// Small and zero-filled events: zeros in the postcard bytes are
    /// what COBS must take out.
    fn ordinary() -> Vec<Event> {
        let mut events = alloc::vec![
            Event::Clock {
                frequency: 62_500_000,
                time: 0,
            },
            Event::Thread {
                thread: 0,
                name: name(""),
            },
            Event::Thread {
                thread: 7,
                name: name("shell"),
            },
            Event::SyscallEntry {
                time: 1,
                thread: 3,
                number: 3,
                args: [0; 6],
            },
            Event::SyscallExit {
                time: 2,
                thread: 3,
                number: 3,
                result: 0,
                second: 0,
            },
            Event::AuditDropped { time: 0, count: 0 },
        ];
        for verdict in [
            AuditVerdict::Allowed,
            AuditVerdict::Refused(0),
            AuditVerdict::Refused(9),
            AuditVerdict::Killed,
            AuditVerdict::Trapped,
            AuditVerdict::Logged,
            AuditVerdict::Emulated,
            AuditVerdict::Cancelled,
        ] {
            events.push(Event::Audit(record(verdict, 0, None)));
            events.push(Event::Audit(record(verdict, 300, Some(0))));
        }
        events
    }

    fn round_trip(event: &Event) -> Vec<u8> {
        let mut out = [0u8; MAX_FRAME_BYTES];
        let frame = encode_frame(event, &mut out).expect("fits").to_vec();
        assert!(!frame.contains(&FRAME_DELIMITER), "{event:?}: {frame:?}");
        assert!(frame.len() <= MAX_FRAME_BYTES);
        let mut scratch = frame.clone();
        assert_eq!(decode_frame(&mut scratch).as_ref(), Ok(event));
        frame
    }

    #[test]
    fn every_variant_round_trips_with_no_zero_in_its_frame() {
        for event in ordinary().iter().chain(widest().iter().map(|(e, _)| e)) {
            round_trip(event);
        }
    }

    #[test]
    fn the_widest_event_of_each_variant_takes_the_counted_bytes_and_fits() {
        for (event, bytes) in widest() {
            let frame = round_trip(&event);
            assert_eq!(frame.len(), cobs_bytes(bytes), "{event:?}");
            assert!(frame.len() < MAX_FRAME_BYTES);
        }
        assert_eq!(cobs_bytes(LARGEST_EVENT_BYTES), 154);
    }

    #[test]
    fn a_small_buffer_is_too_small_not_a_panic() {
        let (event, _) = &widest()[4];
        for size in [0, 1, 20, 100, 154] {
            let mut out = alloc::vec![0u8; size];
            assert_eq!(encode_frame(event, &mut out), Err(FrameError::TooLarge));
        }
        // The frame and postcard's closing 0.
        let mut out = [0u8; 155];
        assert_eq!(encode_frame(event, &mut out).map(<[u8]>::len), Ok(154));
    }

    fn decoded(bytes: &[u8]) -> Result<Event, FrameError> {
        decode_frame(&mut bytes.to_vec())
    }

    #[test]
    fn malformed_frames_are_refused() {
        let event = Event::SyscallExit {
            time: 5,
            thread: 1,
            number: 3,
            result: 0,
            second: 0,
        };
        let frame = round_trip(&event);
        assert_eq!(decoded(&[]), Err(FrameError::Malformed));
        // Cut short, or with a byte more.
        assert_eq!(
            decoded(&frame[..frame.len() - 1]),
            Err(FrameError::Malformed)
        );
        let mut longer = frame.clone();
        longer.push(1);
        assert_eq!(decoded(&longer), Err(FrameError::Malformed));
        // A zero inside, or the delimiters left on.
        let mut zero = frame.clone();
        zero[2] = 0;
        assert_eq!(decoded(&zero), Err(FrameError::Malformed));
        let delimited = [&[0][..], &frame, &[0]].concat();
        assert_eq!(decoded(&delimited), Err(FrameError::Malformed));
        // No variant has tag 6 (COBS: code 2, then the one byte 6).
        assert_eq!(decoded(&[2, 6]), Err(FrameError::Malformed));
        // More than any event takes.
        assert_eq!(
            decoded(&[1; MAX_FRAME_BYTES + 1]),
            Err(FrameError::TooLarge)
        );
    }

    /// COBS-encodes `postcard` bytes that hold no zero: one code byte.
    fn cobs_of(postcard: &[u8]) -> Vec<u8> {
        assert!(postcard.len() < 254 && !postcard.contains(&0));
        [&[postcard.len() as u8 + 1][..], postcard].concat()
    }

    #[test]
    fn an_event_has_exactly_one_encoding() {
        // AuditDropped { time: 1, count: 2 } is 5, 1, 2; with `time` as
        // 0x81 0x00 (1 with a needless continuation byte) it would decode
        // to the same event.
        assert_eq!(
            decoded(&cobs_of(&[5, 1, 2])),
            Ok(Event::AuditDropped { time: 1, count: 2 })
        );
        assert_eq!(
            postcard::from_bytes::<Event>(&[5, 0x81, 0x00, 2]),
            Ok(Event::AuditDropped { time: 1, count: 2 })
        );
        // Its COBS bytes: [5, 0x81] before the zero, then [2].
        assert_eq!(decoded(&[3, 5, 0x81, 2, 2]), Err(FrameError::Malformed));
    }

    #[test]
    fn a_thread_name_longer_than_24_bytes_or_not_utf8_is_refused() {
        let mut postcard = alloc::vec![1, 7, 25];
        postcard.extend_from_slice(&[b'a'; 25]);
        assert_eq!(decoded(&cobs_of(&postcard)), Err(FrameError::Malformed));
        assert_eq!(
            decoded(&cobs_of(&[1, 7, 2, 0xc3, 0x28])),
            Err(FrameError::Malformed)
        );
        assert_eq!(
            decoded(&cobs_of(&[1, 7, 2, b'o', b'k'])),
            Ok(Event::Thread {
                thread: 7,
                name: name("ok")
            })
        );
    }

    #[test]
    fn random_bytes_decode_or_are_refused_without_a_panic() {
        let mut rng = Rng(0x0e3b_0e7f_5a1c_d00d);
        let frames: Vec<Vec<u8>> = ordinary().iter().map(round_trip).collect();
        for round in 0..20_000 {
            let mut bytes = if round % 2 == 0 {
                // A real frame with one byte changed.
                let mut frame = frames[rng.next() as usize % frames.len()].clone();
                let at = rng.next() as usize % frame.len();
                frame[at] = rng.next() as u8;
                frame
            } else {
                let len = rng.next() as usize % (MAX_FRAME_BYTES + 8);
                (0..len).map(|_| rng.next() as u8).collect()
            };
            let copy = bytes.clone();
            if let Ok(event) = decode_frame(&mut bytes) {
                // Whatever decodes is that event's one encoding.
                let mut out = [0u8; MAX_FRAME_BYTES];
                assert_eq!(encode_frame(&event, &mut out), Ok(&copy[..]));
            }
        }
    }
}
