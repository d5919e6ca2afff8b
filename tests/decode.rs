//! `portcullis decode` on a captured run: a serial log of text lines and
//! export frames (made with `abi::export::encode_frame`, as the kernel
//! writes them: `0x00 frame 0x00`), with a frame that does not decode and
//! a call whose exit stop never came. Each format's structure is checked
//! (docs/export.md describes them), and the command itself is run once.

use std::collections::BTreeSet;
use std::process::Command;

use abi::audit::{AuditRecord, AuditVerdict};
use abi::export::{encode_frame, Event, MAX_FRAME_BYTES};
use portcullis::decode::{render, Capture, Format};
use serde_json::Value;

/// Counter ticks per second in the captured run (a whole number of
/// ticks per microsecond keeps the expected times exact).
const HZ: u64 = 100_000_000;
/// A microsecond in ticks.
const US: u64 = HZ / 1_000_000;

fn frame(event: &Event) -> Vec<u8> {
    let mut out = [0u8; MAX_FRAME_BYTES];
    let bytes = encode_frame(event, &mut out).expect("every event fits");
    [&[0][..], bytes, &[0]].concat()
}

fn thread(number: u32, name: &str) -> Event {
    Event::Thread {
        thread: number,
        name: name.try_into().expect("a short name"),
    }
}

fn entry(time: u64, thread: u32, number: u64, args: [u64; 6]) -> Event {
    Event::SyscallEntry {
        time,
        thread,
        number,
        args,
    }
}

fn exit(time: u64, thread: u32, number: u64, result: u64) -> Event {
    Event::SyscallExit {
        time,
        thread,
        number,
        result,
        second: 0,
    }
}

fn record(sequence: u64, time: u64, thread: u32, verdict: AuditVerdict) -> AuditRecord {
    AuditRecord {
        sequence,
        time,
        thread_badge: 0x10,
        thread,
        syscall: 9,
        object_type: 2,
        args: [1, 0, 0, 0, 0, 0, 0, 0],
        result: Some(8),
        verdict,
        forwarded: true,
        dropped: 0,
    }
}

/// Where the malformed frame starts.
struct Captured {
    log: Vec<u8>,
    malformed_at: usize,
}

/// A run as QEMU's serial output would hold it: the banner, the export's
/// frames between the threads' own lines, a corrupted frame, and at the
/// end an entry stop whose exit never came.
fn captured_run() -> Captured {
    let base = 2 * HZ;
    let mut log = b"Portcullis 0.1.0 on virt\r\n[shell#3] export on\r\n".to_vec();
    for event in [
        Event::Clock {
            frequency: HZ,
            time: base,
        },
        thread(3, "shell"),
        thread(4, "a <tricky> & \"name\""),
        entry(base + 10 * US, 3, 3, [1, 2, 0, 0, 0, 0]),
    ] {
        log.extend(frame(&event));
    }
    log.extend_from_slice(b"[shell#3] hello\r\n");
    for event in [
        exit(base + 25 * US, 3, 3, 0),
        entry(base + 30 * US, 4, 9, [1, 0x41, 0, 0, 0, 0]),
        Event::Audit(record(7, base + 31 * US, 4, AuditVerdict::Refused(8))),
        Event::Audit(record(8, base + 32 * US, 3, AuditVerdict::Allowed)),
        exit(base + 33 * US, 4, 9, 8),
        Event::AuditDropped {
            time: base + 40 * US,
            count: 5,
        },
    ] {
        log.extend(frame(&event));
    }
    // A frame with a damaged byte: its tag (after the opening zero and
    // the COBS code) names no variant.
    let malformed_at = log.len();
    let mut damaged = frame(&exit(base + 41 * US, 3, 1, 0));
    damaged[2] = 9;
    log.extend(damaged);
    log.extend_from_slice(b"[shell#3] still here\r\n");
    log.extend(frame(&entry(base + 50 * US, 3, 7, [5, 0, 0, 0, 0, 0])));
    log.extend(frame(&Event::AuditDropped {
        time: base + 60 * US,
        count: 1,
    }));
    Captured { log, malformed_at }
}

#[test]
fn the_capture_holds_every_frame_but_the_damaged_one() {
    let summary = Capture::read(&captured_run().log).summary();
    assert_eq!(summary.frames, 12);
    assert_eq!(summary.malformed, 1);
    assert_eq!(summary.cut_off, 0);
    assert_eq!(summary.lines, 4);
}

#[test]
fn text_reads_like_strace_between_the_logs_own_lines() {
    let run = captured_run();
    let text = render(&Capture::read(&run.log), Format::Text);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Portcullis 0.1.0 on virt");
    assert_eq!(lines[1], "[shell#3] export on");
    assert!(lines.contains(&"0.000010 [shell#3] debug_print(0x1, 0x2) = 0"));
    assert!(lines.contains(&"[shell#3] hello"));
    assert!(
        lines.contains(
            &"0.000031 audit [a <tricky> & \"name\"#4] seq 7 call(0x1) = 8 (denied) verdict refused(8) by the policy server"
        ),
        "{text}"
    );
    assert!(lines.contains(&"0.000040 audit: 5 records dropped"));
    let malformed = format!("frame at byte {}: malformed", run.malformed_at);
    assert!(lines.contains(&malformed.as_str()), "{text}");
    assert_eq!(
        lines.last(),
        Some(&"0.000050 [shell#3] recv(0x5) = ? (the log ends first)")
    );
}

#[test]
fn jsonl_is_one_object_per_line_with_its_kind() {
    let text = render(&Capture::read(&captured_run().log), Format::Jsonl);
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    let kinds: Vec<&str> = lines
        .iter()
        .map(|line| match (&line["event"], &line["text"]) {
            (Value::String(kind), Value::Null) => kind.as_str(),
            (Value::Null, Value::String(_)) => "text",
            _ => panic!("neither an event nor a text line: {line}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "text",
            "text",
            "clock",
            "thread",
            "thread",
            "syscall_entry",
            "text",
            "syscall_exit",
            "syscall_entry",
            "audit",
            "audit",
            "syscall_exit",
            "audit_dropped",
            "malformed",
            "text",
            "syscall_entry",
            "audit_dropped",
        ]
    );
    assert_eq!(lines[0]["text"], "Portcullis 0.1.0 on virt");
    assert_eq!(lines[5]["syscall"], "debug_print");
    assert_eq!(lines[5]["thread_name"], "shell");
    assert_eq!(lines[5]["seconds"], Value::from(0.00001));
    let audit = &lines[9];
    assert_eq!(audit["verdict"], "refused");
    assert_eq!(audit["code"], 8);
    assert_eq!(audit["result"], "0x8");
    assert_eq!(audit["thread_name"], "a <tricky> & \"name\"");
    assert_eq!(audit["args"].as_array().map(Vec::len), Some(8));
    assert_eq!(lines[10]["code"], Value::Null);
}

/// The trace's events of phase `ph`.
fn phase<'a>(events: &'a [Value], ph: &str) -> Vec<&'a Value> {
    events.iter().filter(|event| event["ph"] == ph).collect()
}

#[test]
fn perfetto_has_named_threads_calls_as_slices_and_decisions_as_instants() {
    let text = render(&Capture::read(&captured_run().log), Format::Perfetto);
    let document: Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(document["displayTimeUnit"], "ns");
    let events = document["traceEvents"].as_array().expect("traceEvents");
    for event in events {
        assert_eq!(event["pid"], 1, "{event}");
    }

    let names: BTreeSet<(u64, String)> = phase(events, "M")
        .into_iter()
        .filter(|event| event["name"] == "thread_name")
        .map(|event| {
            (
                event["tid"].as_u64().expect("tid"),
                event["args"]["name"].as_str().expect("name").to_string(),
            )
        })
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([
            (3, "shell#3".to_string()),
            (4, "a <tricky> & \"name\"#4".to_string())
        ])
    );

    let slices = phase(events, "X");
    assert_eq!(slices.len(), 3);
    for slice in &slices {
        assert!(
            slice["ts"].as_f64().is_some() && slice["dur"].as_f64().is_some(),
            "{slice}"
        );
        assert_eq!(slice["cat"], "syscall");
    }
    let print = slices
        .iter()
        .find(|s| s["name"] == "debug_print")
        .expect("debug_print");
    assert_eq!(print["tid"], 3);
    assert_eq!(print["ts"], Value::from(2_000_010.0));
    assert_eq!(print["dur"], Value::from(15.0));
    assert_eq!(print["args"]["x1"], "0x2");
    assert_eq!(print["args"]["result"], "0x0");
    // The call whose exit never came lasts to the end of the log.
    let open = slices.iter().find(|s| s["name"] == "recv").expect("recv");
    assert_eq!(open["dur"], Value::from(10.0));
    assert_eq!(open["args"]["result"], "none");

    let instants = phase(events, "i");
    let decisions: Vec<_> = instants.iter().filter(|i| i["s"] == "t").collect();
    assert_eq!(decisions.len(), 1, "the allowed record is no decision");
    assert_eq!(decisions[0]["name"], "refused(8) call");
    assert_eq!(decisions[0]["tid"], 4);
    let drops: Vec<_> = instants.iter().filter(|i| i["s"] == "g").collect();
    assert_eq!(drops.len(), 2);
    assert_eq!(drops[0]["args"]["count"], 5);
}

/// Checks that every tag is closed in order, and returns the open tags'
/// names in document order.
fn balanced_tags(svg: &str) -> Vec<String> {
    let mut open: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let text = &rest[..start];
        assert!(!text.contains('>'), "a stray > in {text:?}");
        let end = rest[start..].find('>').expect("every < has its >") + start;
        let tag = &rest[start + 1..end];
        assert!(!tag.contains('<'), "< inside a tag: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop().as_deref(), Some(name), "closing {name}");
        } else {
            let name: String = tag
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '/')
                .collect();
            seen.push(name.clone());
            if !tag.ends_with('/') {
                open.push(name);
            }
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "left open: {open:?}");
    assert!(rest.trim().is_empty());
    for entity in svg.split('&').skip(1) {
        assert!(
            ["amp;", "lt;", "gt;", "quot;", "apos;"]
                .iter()
                .any(|e| entity.starts_with(e)),
            "a bare & before {entity:.10}"
        );
    }
    seen
}

#[test]
fn svg_is_well_formed_with_one_lane_per_thread() {
    let svg = render(&Capture::read(&captured_run().log), Format::Svg);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    let tags = balanced_tags(&svg);
    assert_eq!(tags.first().map(String::as_str), Some("svg"));
    assert_eq!(svg.matches("<g class=\"lane\"").count(), 2);
    assert!(svg.contains(">shell#3</text>"));
    assert!(svg.contains(">a &lt;tricky&gt; &amp; &quot;name&quot;#4</text>"));
    assert_eq!(svg.matches("class=\"call\"").count(), 3);
    assert_eq!(svg.matches("class=\"decision\"").count(), 1);
    assert_eq!(svg.matches("class=\"drop\"").count(), 2);
    // The axis has labelled ticks.
    assert!(svg.contains("class=\"axis\""));
    assert!(svg.matches("text-anchor=\"middle\"").count() >= 3);
}

#[test]
fn the_command_writes_each_format_to_its_file() {
    let directory = std::env::temp_dir().join(format!("portcullis-decode-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("a temporary directory");
    let log = directory.join("run.log");
    std::fs::write(&log, captured_run().log).expect("the log");
    for format in Format::ALL {
        let out = directory.join(format!("out.{format}"));
        let status = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .arg("decode")
            .arg(&log)
            .args(["--format", format.name(), "--out"])
            .arg(&out)
            .output()
            .expect("portcullis runs");
        assert!(status.status.success(), "{format}: {status:?}");
        let stderr = String::from_utf8_lossy(&status.stderr);
        assert!(
            stderr.contains("12 frames, 1 malformed, 0 cut off"),
            "{stderr}"
        );
        let written = std::fs::read_to_string(&out).expect("the output");
        assert_eq!(written, render(&Capture::read(&captured_run().log), format));
    }
    let missing = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["decode", "/nonexistent/run.log"])
        .output()
        .expect("portcullis runs");
    assert_eq!(missing.status.code(), Some(66));
    let _ = std::fs::remove_dir_all(&directory);
}
