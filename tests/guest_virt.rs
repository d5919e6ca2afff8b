//! Boots the kernel on QEMU `virt` (ELF entered at EL1).

mod common;

use portcullis::qemu::ProcessEnd;
use portcullis::{GuestMode, Machine};

#[test]
fn every_in_kernel_test_passes_on_virt() {
    let outcome = common::boot_expecting_pass(&common::request(Machine::Virt, GuestMode::Test));
    common::assert_whole_suite_passed(&outcome);
    // The runner's -smp 4: the boot core started the other three through
    // PSCI, and the suite ran with them online and idle.
    assert!(
        outcome
            .guest_output
            .contains("[kernel] 4 cores running (PSCI)"),
        "not 4 cores:\n{outcome}"
    );
    // The driver saw the 4 CPUs too, so the SMP cases ran (none was
    // skipped: `assert_whole_suite_passed` refuses a `# SKIP`).
    assert!(
        outcome.guest_output.contains("# suite: 4 CPUs running"),
        "the suite did not run on 4 CPUs:\n{outcome}"
    );
    // What the policy server and the tracer let through is what printed:
    // the allowed `hi`, and of the print cut to 3 bytes only `ok` (case
    // 30); of the prints the tracer changed only the shortened `ok`, then
    // the line after the tracer left (case 37).
    let output = &outcome.guest_output;
    assert_eq!(
        printed_by(output, 30, "policy-asker"),
        ["hi", "ok"],
        "case 30 printed:\n{outcome}"
    );
    // Cases 29 and 41 end with a kill: the line printed just before the
    // killed call shows that an earlier call was not killed instead.
    const KILL_MARKER: &str = "all checks passed, now the kill";
    assert_eq!(
        printed_by(output, 29, "policy-user").last(),
        Some(&KILL_MARKER),
        "case 29 printed:\n{outcome}"
    );
    assert_eq!(
        printed_by(output, 41, "dispatch-unmapped").last(),
        Some(&KILL_MARKER),
        "case 41 printed:\n{outcome}"
    );
    // And the kernel says why each ended.
    let kernel_lines_29 = printed_by(output, 29, "kernel");
    assert!(
        kernel_lines_29
            .iter()
            .any(|line| line.starts_with("thread policy-user#")
                && line.ends_with(" killed by a Kill verdict of its filters (in signal)")),
        "case 29's kill has no console line:\n{outcome}"
    );
    let kernel_lines_41 = printed_by(output, 41, "kernel");
    assert!(
        kernel_lines_41
            .iter()
            .any(|line| line.starts_with("thread dispatch-unmapped#")
                && line.contains(" killed: user dispatch could not save")),
        "case 41's kill has no console line:\n{outcome}"
    );
    // Case 61: the kill and the fault that reach the supervisor as end
    // messages have their console lines too, and the supervisor saw all.
    let kernel_lines_61 = printed_by(output, 61, "kernel");
    for (what, wanted) in [
        (
            "kill",
            " killed by a Kill verdict of its filters (in yield)",
        ),
        ("fault", "; sent to its fault handler"),
    ] {
        assert!(
            kernel_lines_61
                .iter()
                .any(|line| line.starts_with("thread task#") && line.ends_with(wanted)),
            "case 61's {what} has no console line:\n{outcome}"
        );
    }
    assert_eq!(
        printed_by(output, 61, "supervisor").last().copied(),
        Some("supervisor: an exit (twice, restarted), a Kill rule and a stopped fault each came as an end message"),
        "{outcome}"
    );
    // Case 42: the two threads the root makes from user space print
    // under the names it gave them (`TcbSetName`), not as "task".
    assert_eq!(
        printed_by(output, 42, "caller"),
        ["called the server: 7 + 35 = 42"],
        "case 42 printed:\n{outcome}"
    );
    assert_eq!(
        printed_by(output, 42, "server"),
        ["answered the caller's call"],
        "case 42 printed:\n{outcome}"
    );
    assert_eq!(
        printed_by(output, 37, "tracee"),
        ["ok", "after the tracer"],
        "case 37 printed:\n{outcome}"
    );
    // Case 77: the kernel ends each refused rseq thread (not itself) and
    // says why, at the addresses the case used.
    let kernel_lines_77 = printed_by(output, 77, "kernel");
    for (what, wanted) in [
        ("wrong signature", "not the registered signature"),
        (
            "unmapped descriptor",
            "descriptor at 0x100010000000 cannot be read",
        ),
        ("abort inside its section", "inside its own section"),
        ("unmapped area", "area at 0x100000100020 cannot be read"),
    ] {
        assert!(
            kernel_lines_77
                .iter()
                .any(|line| line.starts_with("thread rseq-worker#") && line.contains(wanted)),
            "case 77's {what} has no console line:\n{outcome}"
        );
    }
    assert_eq!(
        kernel_lines_77
            .iter()
            .filter(|line| line.starts_with("thread rseq-worker#")
                && line.contains(" killed: its restartable-sequence area or descriptor was bad"))
            .count(),
        4,
        "case 77's four kills:\n{outcome}"
    );
}

/// The lines the thread named `name` (or the kernel, `kernel`) printed
/// during case `case` (after the previous case's result line, up to this
/// one's), without their `# [name#N] ` tag.
fn printed_by<'a>(output: &'a str, case: usize, name: &str) -> Vec<&'a str> {
    let previous = format!("ok {} - ", case - 1);
    let this = format!("ok {case} - ");
    // `[name#N] text` for a thread, `[kernel] text` for the kernel.
    let tag = format!("[{name}");
    output
        .lines()
        .skip_while(|line| !line.starts_with(&previous))
        .skip(1)
        .take_while(|line| !line.starts_with(&this))
        .filter_map(|line| line.trim_end().strip_prefix(tag.as_str()))
        .filter(|rest| rest.starts_with('#') || rest.starts_with(']'))
        .filter_map(|rest| rest.split_once("] ").map(|(_, text)| text))
        .collect()
}

#[test]
fn demo_on_virt_prints_the_banner_runs_the_root_task_and_the_policy_scene_and_exits_0() {
    let outcome = common::boot_expecting_pass(&common::request(Machine::Virt, GuestMode::Demo));
    assert_eq!(outcome.end, ProcessEnd::Exited(0), "{outcome}");
    let banner = outcome.report.banner.as_deref().unwrap_or_default();
    assert!(
        banner.contains("virt") && banner.contains("EL1"),
        "banner does not say virt and EL1: {banner:?}\n{outcome}"
    );
    // The root task: handed all free RAM, it builds both echo tasks from
    // their ELFs, they talk, the client's fault is served, all is revoked.
    // Then the policy scene: the server's decisions, what the tracer and
    // the audit ring saw, the app's verdict on its outcomes.
    let output = &outcome.guest_output;
    // Thread numbers are given out in order over the whole boot: read the
    // scene's from its lines.
    let number = |name: &str| thread_number(output, name);
    let (supervisor, app, tracer) = (number("supervisor"), number("app"), number("tracer"));
    // The echo tasks print under the names the task builder gave them.
    let (echo, client) = (number("echo"), number("echo-client"));
    assert!(
        echo > 0 && client > 0,
        "no [echo#N] or [echo-client#N] line\n{outcome}"
    );
    for line in [
        // The root builds the demo's system: its one task, the driver,
        // privileged; the driver's end ends the system.
        // The one object: the policy server's rules file, which the
        // driver maps and hands the server (read at run time).
        "system: building \"demo\": 1 task, 1 object",
        "system: started driver (priority 100, 8192 KiB, 0 capabilities, privileged)",
        "system: driver ended the system (status 0)",
        "driver: every boot capability checked",
        "driver: its own ELF is mapped read-only (",
        // The description's command line, then the kernel's.
        "bytes, entry 0x",
        "); the command line is \"portcullis.mode=demo portcullis.exit=semihosting\"",
        "driver: built echo from its",
        "driver: built echo-client from its",
        "echo-client: 38 words back: THIS MESSAGE IS TOO LONG",
        &format!("[echo#{echo}] echo: serving on slot 2"),
        &format!("[echo-client#{client}] echo-client: done"),
        &format!("[kernel] thread echo-client#{client} faulted: data abort (EL0)"),
        "driver: the client faulted at 0x60000000000",
        "echo-client: resumed after the fault",
        "driver: both tasks exited with status 0 (their end messages)",
        "driver: both tasks reported; revoking their Untyped took back every object",
        "driver: a 2 ms sleep on the timer lasted at least 2 ms by the counter; a receive with a 2 ms deadline on an endpoint nobody sends to timed out, not before it",
        "serving 5 rules and the default at line 24 from rules.txt, read at run time",
        &format!("[policy] task {app}: debug_print(x0=0x6, x2="),
        &format!("[app#{app}]   forwarded print: the server keeps 48 bytes --"),
        "poll(x0=0x5, x2=0x0, x3=0x0) -> emulate x0=0x0 x8=0x77 (rule at line 21)",
        &format!("[supervisor#{supervisor}] [audit] 9 records, none lost"),
        &format!("[app#{app}] its 6 calls each had the outcome the rules give"),
        "demo finished: 4 of 4 steps behaved as expected",
    ] {
        assert!(
            output.contains(line),
            "the demo did not print {line:?}\n{outcome}"
        );
    }
    // One tracer line and one audit line, each exactly (a whole line).
    for whole in [
        format!("[tracer#{tracer}] [task {app}] signal(ntfn=5) = denied (denied by policy)"),
        format!("[supervisor#{supervisor}] [audit] #3 [badge 0xa99] cap_copy(cnode=0x0, x2=0x1, x3=0x6) = ok"),
        // A refused call's record shows its arguments, not the error code.
        format!("[supervisor#{supervisor}] [audit] #2 [badge 0xa99] signal(notification=0x5, x2=0x0, x3=0x0) = denied, refused by a filter (8)"),
        format!("[supervisor#{supervisor}] [audit] #5 [badge 0xa99] poll(notification=0x5, x2=0x0, x3=0x0) = ok, emulated by the policy server"),
        // An emulated call still has its exit stop.
        format!("[tracer#{tracer}] [task {app}] poll(ntfn=5) = 0 (word 0x77)"),
    ] {
        assert!(
            output.lines().any(|line| line.trim_end() == whole),
            "the demo did not print the line {whole:?}\n{outcome}"
        );
    }
    // The forwarded print's decision (its text, judged, may follow `x3`).
    assert!(
        output.lines().any(|line| line
            .contains(&format!("[policy] task {app}: debug_print(x0=0x6, x2="))
            && line.contains("x3=0x51")
            && line
                .trim_end()
                .ends_with(") -> clamp x3 to 48 (rule at line 20)")),
        "the policy server did not clamp the forwarded print\n{outcome}"
    );
    // A forwarded call has one record, once the server has decided, with
    // the arguments it ran with (the length clamped to 48 bytes).
    assert!(
        output.lines().any(|line| line.starts_with(&format!(
            "[supervisor#{supervisor}] [audit] #4 [badge 0xa99] debug_print(debug_console=0x6, x2="
        )) && line
            .trim_end()
            .ends_with(", x3=0x30) = ok, allowed by the policy server")),
        "the forwarded print has no record of what ran\n{outcome}"
    );
    assert!(!output.contains("UNEXPECTED"), "{outcome}");
    assert!(
        !output.contains("drops this part"),
        "the policy server's clamp was not applied\n{outcome}"
    );
}

/// The number of the thread named `name` in `output` (its lines are
/// tagged `[name#N]`), 0 if it printed none.
fn thread_number(output: &str, name: &str) -> u32 {
    let tag = format!("[{name}#");
    output
        .find(&tag)
        .and_then(|at| {
            let digits: String = output[at + tag.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .unwrap_or(0)
}

/// `--cpus 1`: QEMU has one core, and the kernel says so.
#[test]
fn one_cpu_on_virt_is_one_core_running() {
    let request = portcullis::RunRequest {
        cpus: Some(1),
        ..common::request(Machine::Virt, GuestMode::Demo)
    };
    let outcome = common::boot_expecting_pass(&request);
    assert!(
        outcome.guest_output.contains("[kernel] 1 core running"),
        "not 1 core:\n{outcome}"
    );
}

/// `portcullis.cpus=2` with QEMU's four cores: the kernel starts one
/// other core and leaves the rest off.
#[test]
fn the_cpus_boot_option_limits_the_cores_started() {
    let request = portcullis::RunRequest {
        boot_options: vec!["portcullis.cpus=2".into()],
        ..common::request(Machine::Virt, GuestMode::Demo)
    };
    let outcome = common::boot_expecting_pass(&request);
    assert!(
        outcome
            .guest_output
            .contains("[kernel] 2 cores running (PSCI)"),
        "not 2 cores:\n{outcome}"
    );
}
