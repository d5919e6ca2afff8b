//! The shell (docs/shell.md) driven through a pipe as a person would type
//! at it: every command's output checked, Ctrl-C and a wrong line, on
//! virt and raspi4b; and a run exported as frames, decoded on the host
//! (docs/export.md) into each format, whose structure is checked.

mod common;

use std::time::Duration;

use portcullis::decode::{render, Capture, Format};
use portcullis::session::prepare;
use portcullis::shell_session::{description, ShellSession};
use portcullis::{GuestMode, Machine, RunRequest};

/// A session with the shell's system booted on `machine`.
fn session(machine: Machine) -> ShellSession {
    let mut request = RunRequest {
        system: Some(description()),
        ..common::request(machine, GuestMode::Demo)
    };
    if machine == Machine::Raspi4b {
        request.dtb = Some(common::require_rpi4_dtb());
    }
    let prepared = prepare(&request).unwrap_or_else(|e| panic!("cannot boot the shell: {e}"));
    ShellSession::start(&prepared).unwrap_or_else(|e| panic!("no prompt: {e}"))
}

/// Runs `line`; its output, which must contain every one of `wanted`.
fn expect(shell: &mut ShellSession, line: &str, wanted: &[&str]) -> String {
    let output = shell
        .command(line)
        .unwrap_or_else(|e| panic!("`{line}`: {e}"));
    for text in wanted {
        assert!(
            output.contains(text),
            "`{line}` printed no `{text}`:\n{output}"
        );
    }
    output
}

/// Ends the session with `exit`; the system must end with status 0.
fn exit(shell: ShellSession) -> Vec<u8> {
    let (status, bytes) = shell.exit("exit", Duration::from_secs(60));
    let text = String::from_utf8_lossy(&bytes).into_owned();
    assert_eq!(status, Some(0), "the system did not end with 0:\n{text}");
    assert!(
        text.contains("system: shell ended the system (status 0)"),
        "{text}"
    );
    bytes
}

/// The number `ps` shows for the live thread named `name`.
fn number_of(ps: &str, name: &str) -> Option<u32> {
    ps.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let number = words.next()?.parse().ok()?;
        (words.next() == Some(name) && !line.contains("ended")).then_some(number)
    })
}

#[test]
fn every_command_answers_and_mistakes_are_one_line_on_virt() {
    let _turn = common::qemu_turn();
    let mut shell = session(Machine::Virt);
    let help = expect(
        &mut shell,
        "help",
        &["ps", "caps TASK", "trace TASK on|off"],
    );
    for command in [
        "policy TASK RULES",
        "audit [stats|tail]",
        "kill TASK",
        "restart TASK",
        "export on|off",
        "exit",
    ] {
        assert!(help.contains(command), "help names no {command}:\n{help}");
    }
    let ps = expect(
        &mut shell,
        "ps",
        &["NUM NAME", "shell", "ticker", " audited"],
    );
    let ticker = number_of(&ps, "ticker").expect("ps lists the ticker");
    expect(
        &mut shell,
        "caps ticker",
        &["SLOT TYPE", "0 cnode", "1 notification", "rw----"],
    );
    // The shell's own capabilities, as the description gives them.
    expect(
        &mut shell,
        "caps shell",
        &["debug_console  rw----", "endpoint", "tcb"],
    );
    // Wrong lines: one error line each, and the prompt comes back.
    for (line, error) in [
        (
            "frobnicate",
            "shell: unknown command `frobnicate` (try `help`)",
        ),
        ("caps nobody", "shell: no such task"),
        ("trace ticker maybe", "shell: usage: trace TASK on|off"),
        ("kill shell", "shell: not allowed on that task"),
        (
            "policy ticker bogus -> allow",
            "shell: rule 1, column 1: unknown syscall name",
        ),
        (
            "policy ticker null -> notify; default -> allow",
            "no policy server",
        ),
    ] {
        let output = expect(&mut shell, line, &[error]);
        assert_eq!(output.trim_end().lines().count(), 1, "`{line}`:\n{output}");
    }
    // Backspace edits the line; Ctrl-C abandons one half typed.
    shell.send(b"pz\x7fs").unwrap();
    expect(&mut shell, "", &["NUM NAME", "ticker"]);
    shell.send(b"kill tick").unwrap();
    shell.interrupt().unwrap();
    expect(&mut shell, "ps", &["ticker"]);

    // Tracing: strace-like lines of the ticker's three calls a second,
    // until Ctrl-C; the ticker stays traced until `off`.
    let tag = format!("[ticker#{ticker}] ");
    shell
        .start_until("trace ticker on", &format!("{tag}poll("))
        .unwrap();
    let traced = String::from_utf8_lossy(&shell.interrupt().unwrap()).into_owned();
    assert!(traced.contains("^C"), "{traced}");
    expect(&mut shell, "ps", &["traced"]);
    expect(&mut shell, "trace ticker off", &[]);
    let ps = expect(&mut shell, "ps", &[]);
    assert!(!ps.contains("traced"), "still traced:\n{ps}");

    // A filter from the shell refuses the ticker's signal: the audit
    // records show it.
    expect(
        &mut shell,
        "policy ticker signal -> errno denied; default -> allow",
        &["shell: filter attached to ticker"],
    );
    expect(&mut shell, "ps", &["filters=1"]);
    expect(
        &mut shell,
        "audit stats",
        &["audit: ", " written, ", " dropped"],
    );
    shell
        .start_until("audit tail", "= denied, refused by a filter (8)")
        .unwrap();
    shell.interrupt().unwrap();

    // Kill and restart: the restarted ticker is a new thread, rebuilt
    // from the description (so without the shell's filter).
    expect(
        &mut shell,
        "kill ticker",
        &["system: ticker was killed at shell's request"],
    );
    let ps = expect(&mut shell, "ps", &[]);
    assert_eq!(number_of(&ps, "ticker"), None, "{ps}");
    expect(&mut shell, "kill ticker", &["shell: the task has ended"]);
    expect(
        &mut shell,
        "restart ticker",
        &["system: ticker restarted at shell's request"],
    );
    let ps = expect(&mut shell, "ps", &[]);
    let again = number_of(&ps, "ticker").expect("the ticker is back");
    assert!(again > ticker, "{ps}");
    assert!(!ps.contains("filters="), "{ps}");
    exit(shell);
}

#[test]
fn the_shell_takes_input_on_raspi4b() {
    let _turn = common::qemu_turn();
    let mut shell = session(Machine::Raspi4b);
    expect(&mut shell, "ps", &["shell", "ticker"]);
    shell.send(b"hepl\x7f\x7flp").unwrap();
    expect(&mut shell, "", &["caps TASK"]);
    exit(shell);
}

#[test]
fn an_exported_run_decodes_into_every_format() {
    let _turn = common::qemu_turn();
    let mut shell = session(Machine::Virt);
    expect(&mut shell, "export on", &["shell: export on"]);
    // A refused call, so the drawing has a policy decision to mark.
    expect(
        &mut shell,
        "policy ticker signal -> errno denied; default -> allow",
        &["attached"],
    );
    // Two seconds of the ticker: six calls.
    shell
        .start_until("trace ticker on", "tracing ticker")
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    shell.interrupt().unwrap();
    expect(&mut shell, "trace ticker off", &[]);
    shell
        .start_until("audit tail", "audit records as they come")
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    shell.interrupt().unwrap();
    expect(&mut shell, "export off", &["export off"]);
    let captured = exit(shell);

    let capture = Capture::read(&captured);
    let summary = capture.summary();
    assert_eq!((summary.malformed, summary.cut_off), (0, 0), "{summary:?}");
    assert!(summary.frames > 10, "{summary:?}");

    let text = render(&capture, Format::Text);
    assert!(
        text.contains("portcullis> export on"),
        "the log's own lines stay"
    );
    assert!(
        text.contains("[ticker#") && text.contains("] null() = 0"),
        "{text}"
    );
    assert!(text.contains("signal(0x1) = 8 (denied)"), "{text}");

    let jsonl = render(&capture, Format::Jsonl);
    let objects: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(objects.iter().any(|o| o.get("text").is_some()));
    assert!(objects.len() > summary.frames);

    let perfetto: serde_json::Value = serde_json::from_str(&render(&capture, Format::Perfetto))
        .expect("the Perfetto output is JSON");
    let events = perfetto["traceEvents"].as_array().expect("traceEvents");
    let of = |phase: &'static str| events.iter().filter(move |e| e["ph"] == phase);
    assert!(of("M").any(|e| e["name"] == "thread_name"
        && e["args"]["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("ticker#"))));
    let slices: Vec<_> = of("X").collect();
    assert!(slices.iter().any(|e| e["name"] == "null"), "{perfetto}");
    assert!(slices
        .iter()
        .all(|e| e["ts"].is_number() && e["dur"].is_number()));
    assert!(of("i").count() > 0, "a refused signal is a policy decision");

    let svg = render(&capture, Format::Svg);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">ticker#"), "a lane for the ticker");
    assert_eq!(svg.matches("<g").count(), svg.matches("</g>").count());
}
