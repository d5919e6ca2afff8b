//! `--format jsonl`: one JSON object per line, one line per text line and
//! per frame, in the log's order.
//!
//! A text line is `{"text": "..."}`. Every other line has `"event"`, one
//! of the words below, and always the fields listed for it (`null` where
//! there is no value). Registers (arguments, results, badges, labels) are
//! hex strings, so no reader loses the top bits of a 64-bit word; times,
//! thread numbers, syscall numbers, counts and offsets are JSON numbers.
//! `time` is the counter in ticks, `seconds` the seconds from the first
//! `Clock` frame's time to it (else `null`; negative for an audit record
//! made before the export began), `thread_name`
//! the name from the thread's `Thread` frame (else `null`), `syscall` the
//! syscall's name (`syscall_N` for an unknown number).
//!
//! | `event` | fields |
//! | --- | --- |
//! | `clock` | `frequency`, `time`, `seconds` |
//! | `thread` | `thread`, `name` |
//! | `syscall_entry` | `time`, `seconds`, `thread`, `thread_name`, `number`, `syscall`, `args` (6) |
//! | `syscall_exit` | `time`, `seconds`, `thread`, `thread_name`, `number`, `syscall`, `result`, `second` |
//! | `audit` | `time`, `seconds`, `thread`, `thread_name`, `thread_badge`, `sequence`, `number`, `syscall`, `object_type`, `label`, `args` (8), `result` (`null`: none), `verdict` (`allowed`, `refused`, `killed`, `trapped`, `logged`, `emulated`, `cancelled`), `code` (a refusal's error code, else `null`), `forwarded`, `dropped` |
//! | `audit_dropped` | `time`, `seconds`, `count` |
//! | `malformed` | `offset` (of the frame's opening `0x00`) |
//! | `cut_off` | `offset` |
//!
//! Entries and exits are not paired here: each stop is its own line.

use abi::audit::{AuditRecord, AuditVerdict};
use abi::export::Event;
use serde_json::{json, Value};

use super::capture::{syscall_name, Capture};
use super::split::LogItem;

/// The log as JSON lines.
pub fn render(capture: &Capture) -> String {
    let mut out = String::new();
    for item in &capture.items {
        out.push_str(&item_json(capture, item).to_string());
        out.push('\n');
    }
    out
}

/// One item as its JSON object.
pub fn item_json(capture: &Capture, item: &LogItem) -> Value {
    match item {
        LogItem::Text(line) => json!({ "text": line }),
        LogItem::Event { event, .. } => event_json(capture, event),
        LogItem::Malformed { offset, .. } => json!({ "event": "malformed", "offset": offset }),
        LogItem::CutOff { offset } => json!({ "event": "cut_off", "offset": offset }),
    }
}

fn hex(word: u64) -> String {
    format!("{word:#x}")
}

fn event_json(capture: &Capture, event: &Event) -> Value {
    let seconds = |ticks: u64| capture.seconds(ticks);
    let name = |thread: u32| capture.name(thread);
    match event {
        Event::Clock { frequency, time } => json!({
            "event": "clock",
            "frequency": frequency,
            "time": time,
            "seconds": seconds(*time),
        }),
        Event::Thread { thread, name } => json!({
            "event": "thread",
            "thread": thread,
            "name": name.as_str(),
        }),
        Event::SyscallEntry {
            time,
            thread,
            number,
            args,
        } => json!({
            "event": "syscall_entry",
            "time": time,
            "seconds": seconds(*time),
            "thread": thread,
            "thread_name": name(*thread),
            "number": number,
            "syscall": syscall_name(*number),
            "args": args.iter().map(|&x| hex(x)).collect::<Vec<_>>(),
        }),
        Event::SyscallExit {
            time,
            thread,
            number,
            result,
            second,
        } => json!({
            "event": "syscall_exit",
            "time": time,
            "seconds": seconds(*time),
            "thread": thread,
            "thread_name": name(*thread),
            "number": number,
            "syscall": syscall_name(*number),
            "result": hex(*result),
            "second": hex(*second),
        }),
        Event::Audit(record) => audit_json(capture, record),
        Event::AuditDropped { time, count } => json!({
            "event": "audit_dropped",
            "time": time,
            "seconds": seconds(*time),
            "count": count,
        }),
    }
}

fn audit_json(capture: &Capture, record: &AuditRecord) -> Value {
    let (verdict, code) = match record.verdict {
        AuditVerdict::Allowed => ("allowed", None),
        AuditVerdict::Refused(code) => ("refused", Some(code)),
        AuditVerdict::Killed => ("killed", None),
        AuditVerdict::Trapped => ("trapped", None),
        AuditVerdict::Logged => ("logged", None),
        AuditVerdict::Emulated => ("emulated", None),
        AuditVerdict::Cancelled => ("cancelled", None),
    };
    json!({
        "event": "audit",
        "time": record.time,
        "seconds": capture.seconds(record.time),
        "thread": record.thread,
        "thread_name": capture.name(record.thread),
        "thread_badge": hex(record.thread_badge),
        "sequence": record.sequence,
        "number": record.syscall,
        "syscall": syscall_name(record.syscall),
        "object_type": record.object_type,
        "label": hex(record.label()),
        "args": record.args.iter().map(|&x| hex(x)).collect::<Vec<_>>(),
        "result": record.result.map(hex),
        "verdict": verdict,
        "code": code,
        "forwarded": record.forwarded,
        "dropped": record.dropped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::framed::log;

    fn framed(event: &Event) -> Vec<u8> {
        log(std::slice::from_ref(event))
    }

    #[test]
    fn every_line_is_one_object_with_stable_fields() {
        let log = [
            b"a \"quoted\" line\n".as_slice(),
            &framed(&Event::Clock {
                frequency: 100,
                time: 50,
            }),
            &framed(&Event::SyscallEntry {
                time: 200,
                thread: 1,
                number: 3,
                args: [u64::MAX, 0, 0, 0, 0, 0],
            }),
            &[0, 7, 0],
        ]
        .concat();
        let text = render(&Capture::read(&log));
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).expect("JSON"))
            .collect();
        assert_eq!(lines[0], json!({ "text": "a \"quoted\" line" }));
        assert_eq!(lines[1]["seconds"], json!(0.0));
        assert_eq!(lines[2]["event"], "syscall_entry");
        assert_eq!(lines[2]["syscall"], "debug_print");
        assert_eq!(lines[2]["thread_name"], Value::Null);
        assert_eq!(lines[2]["args"][0], "0xffffffffffffffff");
        assert_eq!(lines[2]["seconds"], json!(1.5));
        assert_eq!(lines[3]["event"], "malformed");
        assert_eq!(lines.len(), 4);
    }
}
