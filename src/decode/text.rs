//! `--format text`: the log's own lines as they are, and each event as one
//! strace-like line where its frame was.
//!
//! | event | line |
//! | --- | --- |
//! | a call | `T [name#N] debug_print(0x1, 0x2) = 0` at its exit stop; `= ? (no exit stop)` at the thread's next entry stop; `= ? (the log ends first)` at the end |
//! | an exit with no entry | `T [name#N] <... debug_print resumed> = 0` |
//! | `Audit` | `T audit [name#N] seq S debug_print(0x1, 0x2) = 0 verdict allowed` |
//! | `AuditDropped` | `T audit: N records dropped` |
//! | `Clock` | `T clock: F Hz` |
//! | `Thread` | `thread #N: name` |
//! | a frame that does not decode | `frame at byte N: malformed` |
//! | a frame the log ends inside | `frame at byte N: cut off (the log ends inside it)` |
//!
//! `T` is the time in seconds (six decimals) from the first `Clock` frame's
//! time, when the export began (negative for an audit record made before),
//! else `@` and the counter's ticks. A call's time is its
//! entry stop's. Arguments are written up to the last non-zero one; a
//! result is `0`, an error code's number and name (`8 (denied)`), or hex,
//! and a non-zero `x8` follows as `(x8 0x..)`. A verdict is `allowed`,
//! `refused(CODE)`, `killed`, `trapped`, `logged`, `emulated` or
//! `cancelled`; `by the policy server` and `N earlier records dropped`
//! follow when the record says so.

use std::fmt::Write as _;

use abi::audit::AuditRecord;
use abi::export::Event;

use super::calls::{Call, CallEnd, Completed, Pairing};
use super::capture::{arguments_text, result_text, syscall_name, verdict_text, Capture};
use super::split::LogItem;

/// The log as text, one line each.
pub fn render(capture: &Capture) -> String {
    let mut out = String::new();
    let mut pairing = Pairing::default();
    for item in &capture.items {
        let line = match item {
            LogItem::Text(line) => Some(line.clone()),
            LogItem::Event { event, .. } => match pairing.take(event) {
                Some(completed) => Some(completed_line(capture, &completed)),
                None => event_line(capture, event),
            },
            LogItem::Malformed { offset, .. } => Some(format!("frame at byte {offset}: malformed")),
            LogItem::CutOff { offset } => Some(format!(
                "frame at byte {offset}: cut off (the log ends inside it)"
            )),
        };
        if let Some(line) = line {
            out.push_str(&line);
            out.push('\n');
        }
    }
    for call in pairing.finish() {
        out.push_str(&call_line(capture, &call));
        out.push('\n');
    }
    out
}

/// The time stamp that starts an event's line.
fn stamp(capture: &Capture, ticks: u64) -> String {
    match capture.seconds(ticks) {
        Some(seconds) => format!("{seconds:.6} "),
        None => format!("@{ticks} "),
    }
}

/// The line of an event that is not a syscall stop (those complete calls),
/// if it has one.
fn event_line(capture: &Capture, event: &Event) -> Option<String> {
    match event {
        Event::Clock { frequency, time } => {
            Some(format!("{}clock: {frequency} Hz", stamp(capture, *time)))
        }
        Event::Thread { thread, name } => Some(format!("thread #{thread}: {name}")),
        Event::Audit(record) => Some(audit_line(capture, record)),
        Event::AuditDropped { time, count } => Some(format!(
            "{}audit: {count} records dropped",
            stamp(capture, *time)
        )),
        Event::SyscallEntry { .. } | Event::SyscallExit { .. } => None,
    }
}

fn completed_line(capture: &Capture, completed: &Completed) -> String {
    match completed {
        Completed::Call(call) => call_line(capture, call),
        Completed::Unpaired {
            time,
            thread,
            number,
            result,
            second,
        } => format!(
            "{}[{}] <... {} resumed> = {}",
            stamp(capture, *time),
            capture.thread_label(*thread),
            syscall_name(*number),
            returned(*result, *second)
        ),
    }
}

fn call_line(capture: &Capture, call: &Call) -> String {
    let ending = match call.end {
        CallEnd::Returned { result, second, .. } => returned(result, second),
        CallEnd::NoExit { .. } => "? (no exit stop)".to_string(),
        CallEnd::Open => "? (the log ends first)".to_string(),
    };
    format!(
        "{}[{}] {}({}) = {ending}",
        stamp(capture, call.start),
        capture.thread_label(call.thread),
        syscall_name(call.number),
        arguments_text(&call.args)
    )
}

fn returned(result: u64, second: u64) -> String {
    let mut text = result_text(result);
    if second != 0 {
        let _ = write!(text, " (x8 {second:#x})");
    }
    text
}

fn audit_line(capture: &Capture, record: &AuditRecord) -> String {
    let mut line = format!(
        "{}audit [{}] seq {} {}({}) = {} verdict {}",
        stamp(capture, record.time),
        capture.thread_label(record.thread),
        record.sequence,
        syscall_name(record.syscall),
        arguments_text(&record.args),
        record.result.map_or_else(|| "?".to_string(), result_text),
        verdict_text(record.verdict)
    );
    if record.forwarded {
        line.push_str(" by the policy server");
    }
    if record.dropped > 0 {
        let _ = write!(line, ", {} earlier records dropped", record.dropped);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::audit::AuditVerdict;
    use abi::export::{encode_frame, MAX_FRAME_BYTES};

    /// A piece of a log to build.
    enum Part<'a> {
        Text(&'a str),
        Frame(Event),
    }
    use Part::{Frame, Text};

    fn log(parts: &[Part]) -> Vec<u8> {
        let mut log = Vec::new();
        for part in parts {
            match part {
                Text(text) => log.extend_from_slice(text.as_bytes()),
                Frame(event) => {
                    let mut out = [0u8; MAX_FRAME_BYTES];
                    log.push(0);
                    log.extend_from_slice(encode_frame(event, &mut out).expect("fits"));
                    log.push(0);
                }
            }
        }
        log
    }

    fn text_of(parts: &[Part]) -> Vec<String> {
        render(&Capture::read(&log(parts)))
            .lines()
            .map(String::from)
            .collect()
    }

    #[test]
    fn calls_read_like_strace_with_names_and_seconds() {
        let lines = text_of(&[
            Text("boot\r\n"),
            Frame(Event::Clock {
                frequency: 1000,
                time: 500,
            }),
            Frame(Event::Thread {
                thread: 3,
                name: "shell".try_into().expect("short"),
            }),
            Frame(Event::AuditDropped {
                time: 400,
                count: 1,
            }),
            Frame(Event::SyscallEntry {
                time: 1500,
                thread: 3,
                number: 3,
                args: [1, 2, 0, 0, 0, 0],
            }),
            Text("[shell#3] hi\n"),
            Frame(Event::SyscallExit {
                time: 1501,
                thread: 3,
                number: 3,
                result: 0,
                second: 0,
            }),
            Frame(Event::SyscallExit {
                time: 1600,
                thread: 4,
                number: 7,
                result: 2,
                second: 0x10,
            }),
            Frame(Event::SyscallEntry {
                time: 2000,
                thread: 4,
                number: 9999,
                args: [0; 6],
            }),
        ]);
        assert_eq!(
            lines,
            [
                "boot",
                "0.000000 clock: 1000 Hz",
                "thread #3: shell",
                "-0.100000 audit: 1 records dropped",
                "[shell#3] hi",
                "1.000000 [shell#3] debug_print(0x1, 0x2) = 0",
                "1.100000 [#4] <... recv resumed> = 2 (invalid_capability) (x8 0x10)",
                "1.500000 [#4] syscall_9999() = ? (the log ends first)",
            ]
        );
    }

    #[test]
    fn audit_records_drops_and_bad_frames() {
        let record = AuditRecord {
            sequence: 12,
            time: 77,
            thread_badge: 1,
            thread: 2,
            syscall: 3,
            object_type: 0,
            args: [5, 0, 0, 0, 0, 0, 0, 0],
            result: Some(8),
            verdict: AuditVerdict::Refused(8),
            forwarded: true,
            dropped: 2,
        };
        let mut bytes = log(&[
            Frame(Event::Audit(record)),
            Frame(Event::AuditDropped { time: 80, count: 4 }),
        ]);
        bytes.extend_from_slice(&[0, 2, 9, 0, 0, 5]);
        let lines: Vec<String> = render(&Capture::read(&bytes))
            .lines()
            .map(String::from)
            .collect();
        let bad_at = bytes.len() - 6;
        assert_eq!(
            lines,
            [
                "@77 audit [#2] seq 12 debug_print(0x5) = 8 (denied) verdict refused(8) by the policy server, 2 earlier records dropped".to_string(),
                "@80 audit: 4 records dropped".to_string(),
                format!("frame at byte {bad_at}: malformed"),
                format!("frame at byte {}: cut off (the log ends inside it)", bad_at + 4),
            ]
        );
    }

    #[test]
    fn an_entry_followed_by_another_had_no_exit() {
        let entry = |time| {
            Frame(Event::SyscallEntry {
                time,
                thread: 1,
                number: 2,
                args: [0; 6],
            })
        };
        assert_eq!(
            text_of(&[entry(1), entry(2)]),
            [
                "@1 [#1] exit() = ? (no exit stop)",
                "@2 [#1] exit() = ? (the log ends first)"
            ]
        );
    }
}
