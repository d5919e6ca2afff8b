//! `--format perfetto`: Chrome trace-event JSON, for ui.perfetto.dev.
//!
//! `{"traceEvents": [...], "displayTimeUnit": "ns"}`, one event per line:
//!
//! | `ph` | what | fields |
//! | --- | --- | --- |
//! | `M` | the process's name (`Portcullis`, noting an assumed clock) and each thread's (`name#N`) | `pid` 1, `tid` the thread's number, `args.name` |
//! | `X` | one call, entry stop to exit stop (see [`super::timeline`] for calls with no exit) | `name` the syscall's, `cat` `syscall`, `ts`, `dur`, `args`: `x0`..`x5`, `result` and `x8` (hex, or `none`), `ended` |
//! | `i`, `s` `t` | a policy decision: an audit record whose verdict is not `Allowed`, on its thread | `name` `VERDICT SYSCALL` (e.g. `refused(8) call`), `cat` `policy`, `args`: `sequence`, `verdict`, `forwarded`, `x0`..`x7` and `result` (hex, or `none`) |
//! | `i`, `s` `g` | audit records dropped, across the whole trace | `name` `audit records dropped`, `cat` `audit`, `tid` 0, `args.count` |
//!
//! `ts` is the counter's value and `dur` a call's ticks, both in
//! microseconds, converted with the first `Clock` frame's frequency; a
//! log without one is taken at 62.5 MHz, QEMU virt's counter, and the
//! process's name says so.

use abi::audit::AuditRecord;
use serde_json::{json, Map, Value};

use super::calls::CallEnd;
use super::capture::{syscall_name, verdict_text, Capture};
use super::timeline::{Span, Timeline};

/// The one process every thread is shown in.
const PID: u32 = 1;

/// The log as a Chrome trace-event JSON document.
pub fn render(capture: &Capture) -> String {
    let events = trace_events(&Timeline::of(capture));
    let lines: Vec<String> = events.iter().map(Value::to_string).collect();
    format!(
        "{{\"traceEvents\":[\n{}\n],\"displayTimeUnit\":\"ns\"}}\n",
        lines.join(",\n")
    )
}

/// The events of `timeline`, metadata first.
pub fn trace_events(timeline: &Timeline) -> Vec<Value> {
    let process = if timeline.assumed {
        "Portcullis (no Clock frame: 62.5 MHz assumed)".to_string()
    } else {
        "Portcullis".to_string()
    };
    let mut events = vec![json!({
        "ph": "M", "pid": PID, "name": "process_name", "args": { "name": process },
    })];
    for (thread, label) in &timeline.threads {
        events.push(json!({
            "ph": "M", "pid": PID, "tid": thread, "name": "thread_name",
            "args": { "name": label },
        }));
    }
    events.extend(timeline.spans.iter().map(|span| call_event(timeline, span)));
    events.extend(
        timeline
            .decisions
            .iter()
            .map(|record| decision_event(timeline, record)),
    );
    events.extend(timeline.drops.iter().map(|drop| {
        json!({
            "ph": "i", "s": "g", "pid": PID, "tid": 0, "cat": "audit",
            "name": "audit records dropped", "ts": timeline.micros(drop.time),
            "args": { "count": drop.count },
        })
    }));
    events
}

fn hex(word: u64) -> String {
    format!("{word:#x}")
}

/// `x0`, `x1`, ... as hex strings.
fn registers(words: &[u64]) -> Map<String, Value> {
    words
        .iter()
        .enumerate()
        .map(|(i, &word)| (format!("x{i}"), Value::from(hex(word))))
        .collect()
}

fn call_event(timeline: &Timeline, span: &Span) -> Value {
    let call = &span.call;
    let mut args = registers(&call.args);
    let (result, second, ended) = match call.end {
        CallEnd::Returned { result, second, .. } => (hex(result), hex(second), "exit stop"),
        CallEnd::NoExit { .. } => (
            "none".into(),
            "none".into(),
            "no exit stop: the thread's next entry",
        ),
        CallEnd::Open => (
            "none".into(),
            "none".into(),
            "no exit stop: the end of the log",
        ),
    };
    args.insert("result".into(), result.into());
    args.insert("x8".into(), second.into());
    args.insert("ended".into(), ended.into());
    json!({
        "ph": "X", "pid": PID, "tid": call.thread, "cat": "syscall",
        "name": syscall_name(call.number),
        "ts": timeline.micros(call.start),
        "dur": timeline.micros(span.end.saturating_sub(call.start)),
        "args": args,
    })
}

fn decision_event(timeline: &Timeline, record: &AuditRecord) -> Value {
    let verdict = verdict_text(record.verdict);
    let mut args = registers(&record.args);
    args.insert("sequence".into(), record.sequence.into());
    args.insert("verdict".into(), verdict.clone().into());
    args.insert("forwarded".into(), record.forwarded.into());
    args.insert(
        "result".into(),
        record.result.map_or_else(|| "none".to_string(), hex).into(),
    );
    json!({
        "ph": "i", "s": "t", "pid": PID, "tid": record.thread, "cat": "policy",
        "name": format!("{verdict} {}", syscall_name(record.syscall)),
        "ts": timeline.micros(record.time),
        "args": args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::framed::log;
    use abi::audit::AuditVerdict;
    use abi::export::Event;

    #[test]
    fn calls_are_complete_events_in_microseconds() {
        let capture = Capture::read(&log(&[
            Event::Clock {
                frequency: 1_000_000,
                time: 0,
            },
            Event::SyscallEntry {
                time: 100,
                thread: 5,
                number: 3,
                args: [1, 0, 0, 0, 0, 0],
            },
            Event::SyscallExit {
                time: 130,
                thread: 5,
                number: 3,
                result: 0,
                second: 0,
            },
            Event::Audit(AuditRecord {
                sequence: 1,
                time: 140,
                thread_badge: 0,
                thread: 5,
                syscall: 3,
                object_type: 0,
                args: [0; 8],
                result: None,
                verdict: AuditVerdict::Killed,
                forwarded: false,
                dropped: 0,
            }),
        ]));
        let document: Value = serde_json::from_str(&render(&capture)).expect("JSON");
        assert_eq!(document["displayTimeUnit"], "ns");
        let events = document["traceEvents"].as_array().expect("array");
        assert_eq!(events[0]["args"]["name"], "Portcullis");
        assert_eq!(events[1]["name"], "thread_name");
        assert_eq!(events[1]["tid"], 5);
        assert_eq!(events[2]["ph"], "X");
        assert_eq!(events[2]["name"], "debug_print");
        assert_eq!(events[2]["ts"], json!(100.0));
        assert_eq!(events[2]["dur"], json!(30.0));
        assert_eq!(events[2]["args"]["x0"], "0x1");
        assert_eq!(events[3]["ph"], "i");
        assert_eq!(events[3]["s"], "t");
        assert_eq!(events[3]["name"], "killed debug_print");
    }
}
