//! Systems from descriptions, as a user boots them: the examples on virt
//! and raspi4b, a description with mistakes, and the starting point
//! `portcullis new` writes, outside the repository, booted unchanged.

mod common;

use std::path::{Path, PathBuf};

use portcullis::session::{prepare, RunError};
use portcullis::{GuestMode, Machine, RunOutcome, RunRequest};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
        .join("system.toml")
}

/// Builds and boots the description at `path` on `machine`, expecting the
/// system to end with status 0.
fn boot(path: &Path, machine: Machine) -> RunOutcome {
    let mut request = RunRequest {
        system: Some(path.to_path_buf()),
        ..common::request(machine, GuestMode::Demo)
    };
    if machine == Machine::Raspi4b {
        request.dtb = Some(common::require_rpi4_dtb());
    }
    common::boot_expecting_pass(&request)
}

/// The guest's lines, trimmed.
fn lines(outcome: &RunOutcome) -> Vec<&str> {
    outcome.guest_output.lines().map(str::trim_end).collect()
}

fn assert_has(outcome: &RunOutcome, wanted: &str) {
    assert!(
        lines(outcome).contains(&wanted),
        "no line `{wanted}`:\n{outcome}"
    );
}

/// The lines of task `tag` (`[tag#N] `), without the tag.
fn lines_of<'a>(outcome: &'a RunOutcome, tag: &str) -> Vec<&'a str> {
    let prefix = format!("[{tag}#");
    outcome
        .guest_output
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .filter_map(|rest| rest.split_once("] ").map(|(_, text)| text.trim_end()))
        .collect()
}

#[test]
fn hello_boots_on_virt() {
    let outcome = boot(&example("hello"), Machine::Virt);
    assert_eq!(
        lines_of(&outcome, "hello"),
        ["hello from a task of my own (argument 0x2a)"],
        "{outcome}"
    );
    assert_has(&outcome, "system: hello ended the system (status 0)");
}

/// What the confined example must show, whatever the machine: the
/// constant Allow never reaches the server, the long print is clamped to
/// 48 bytes, the signal is refused, a print is refused on its bytes, and
/// the third poll kills the app.
fn check_confined(outcome: &RunOutcome) {
    let app = lines_of(outcome, "app");
    assert!(
        app.contains(&"app: 100 yields went through; none of them reached the policy server"),
        "{outcome}"
    );
    let clamped = "app: a long line through the loud console, which";
    assert_eq!(clamped.len(), 48);
    assert!(app.contains(&clamped), "{outcome}");
    assert!(app.contains(&"app: signal -> Err(Denied)"), "{outcome}");
    // A rule on the print's bytes: the line naming the secret never
    // printed.
    assert!(
        app.contains(&"app: a print that gives it away -> Err(Denied)"),
        "{outcome}"
    );
    assert!(
        !outcome.guest_output.contains("the secret is 42"),
        "{outcome}"
    );
    assert!(app.contains(&"app: poll #2 -> Ok(0)"), "{outcome}");
    assert!(
        app.contains(&"app: poll #3") && !app.iter().any(|l| l.starts_with("app: poll #3 ->")),
        "the third poll returned:\n{outcome}"
    );
    let policy = lines_of(outcome, "policy");
    assert_eq!(
        policy.iter().filter(|l| l.contains(": yield ->")).count(),
        0,
        "{outcome}"
    );
    assert!(
        policy.contains(
            &"policy: 5 requests answered, none of them a yield; the app was killed at poll 3"
        ),
        "{outcome}"
    );
    assert_has(
        outcome,
        "system: app was killed by its policy server (filter 0, rule 3, at poll)",
    );
    assert_has(outcome, "system: policy ended the system (status 0)");
}

#[test]
fn confined_boots_on_virt() {
    check_confined(&boot(&example("confined"), Machine::Virt));
}

#[test]
fn confined_boots_on_raspi4b() {
    check_confined(&boot(&example("confined"), Machine::Raspi4b));
}

#[test]
fn traced_boots_on_virt() {
    let outcome = boot(&example("traced"), Machine::Virt);
    let tracer = lines_of(&outcome, "tracer");
    for call in ["null() = 0", "signal(bell=2) = 0", "exit(0) = ?"] {
        assert!(
            tracer.iter().any(|line| line.ends_with(call)),
            "the tracer did not show `{call}`:\n{outcome}"
        );
    }
    let audit = lines_of(&outcome, "auditor");
    assert!(
        audit
            .iter()
            .any(|l| l.starts_with("audit: #2 [badge 0xa99] signal(")),
        "{outcome}"
    );
    assert!(
        audit.contains(&"audit: 6 records, 0 lost (0 dropped by the kernel)"),
        "{outcome}"
    );
    assert_has(&outcome, "system: every task has ended");
}

#[test]
fn supervised_is_rebuilt_after_each_fault_until_it_exits() {
    let outcome = boot(&example("supervised"), Machine::Virt);
    assert_eq!(
        lines_of(&outcome, "worker")
            .iter()
            .filter(|l| l.starts_with("worker: run "))
            .copied()
            .collect::<Vec<_>>(),
        ["worker: run 1", "worker: run 2", "worker: run 3"],
        "{outcome}"
    );
    for restart in ["1 of 2", "2 of 2"] {
        assert!(
            lines(&outcome)
                .iter()
                .any(|l| l.starts_with("system: worker faulted")
                    && l.ends_with(&format!("; restarting it ({restart})"))),
            "no restart {restart}:\n{outcome}"
        );
    }
    assert_has(&outcome, "system: worker ended the system (status 0)");
}

#[test]
fn a_restarted_policy_server_is_handed_its_filter() {
    let outcome = boot(&example("restarted"), Machine::Virt);
    assert_eq!(
        lines_of(&outcome, "app"),
        [
            "app: a null the server allows -> Ok(())",
            "app: a null the server crashes on -> Err(Denied)",
            "app: a null after the restart -> Ok(())",
            "app: allowed, refused when its server crashed, allowed again by the restarted server",
        ],
        "{outcome}"
    );
    // The crash failed the request it held, closed; the root restarted
    // the server and handed it the filter it had lost.
    assert!(
        lines(&outcome).iter().any(|l| l.starts_with("[kernel] policy server policy#")
            && l.ends_with(" faulted: 1 waiting request refused; 1 filter attachment without a server until a handover")),
        "{outcome}"
    );
    assert_has(
        &outcome,
        "system: filter 0 of app handed to the restarted policy (1 thread)",
    );
    assert_has(&outcome, "system: app ended the system (status 0)");
}

#[test]
fn devices_map_registers_take_an_interrupt_and_faults_go_to_a_handler() {
    let outcome = boot(&example("devices"), Machine::Virt);
    assert_eq!(
        lines_of(&outcome, "driver"),
        [
            "driver: virtio-mmio magic 0x74726976, version 1",
            "driver: its interrupt's handler acknowledges -> Ok(())"
        ],
        "{outcome}"
    );
    let handler = lines_of(&outcome, "handler");
    assert!(
        handler.first().is_some_and(
            |l| l.starts_with("handler: badge 0x7: a fault (class 0x24) at address 0x0")
        ),
        "{outcome}"
    );
    assert!(
        handler
            .get(1)
            .is_some_and(|l| l.starts_with("handler: badge 0x7: it ended: Some(Faulted")),
        "{outcome}"
    );
    // The root is not told of a task that has a fault handler of its own.
    assert!(
        !lines(&outcome)
            .iter()
            .any(|l| l.starts_with("system: faulty")),
        "{outcome}"
    );
    assert_has(&outcome, "system: handler ended the system (status 0)");
}

#[test]
fn a_policy_server_reads_its_rules_file_at_run_time() {
    let outcome = boot(&example("rules"), Machine::Virt);
    let policy = lines_of(&outcome, "policy");
    assert_eq!(
        policy.first(),
        Some(&"policy: serving 3 rules and a default from policy.rules"),
        "{outcome}"
    );
    for decision in [
        "-> clamp x3 to 48 (rule at line 5)",
        "-> emulate x0=0x0 x8=0x77 (rule at line 6)",
        "-> errno denied (no rule matches: the default at line 7)",
    ] {
        assert!(
            policy.iter().any(|l| l.ends_with(decision)),
            "no decision `{decision}`:\n{outcome}"
        );
    }
    let app = lines_of(&outcome, "app");
    assert!(
        app.contains(&"app: this line is longer than the 48 bytes the r"),
        "{outcome}"
    );
    assert!(app.contains(&"app: poll -> Ok(119)"), "{outcome}");
    assert!(app.contains(&"app: signal -> Err(Denied)"), "{outcome}");
}

/// A copy of the confined example's description, changed by `change`,
/// in the tests' scratch directory (its crates named by absolute path).
fn broken_copy(name: &str, change: impl Fn(String) -> String) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/confined");
    let text = std::fs::read_to_string(dir.join("system.toml")).expect("the example");
    let text = text
        .replace(
            "crate = \"policy\"",
            &format!("crate = \"{}/policy\"", dir.display()),
        )
        .replace(
            "crate = \"app\"",
            &format!("crate = \"{}/app\"", dir.display()),
        );
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.toml"));
    std::fs::write(&path, change(text)).expect("write the copy");
    path
}

#[test]
fn a_description_with_mistakes_boots_nothing_and_names_each() {
    let path = broken_copy("mistakes", |text| {
        text.replace(
            "{ slot = 2, endpoint = \"requests\", rights = \"r\" }",
            "{ slot = 2, endpoint = \"requets\", rights = \"r\" }",
        )
        .replace("signal                    -> notify", "signal -> notifi")
    });
    let request = RunRequest {
        system: Some(path.clone()),
        ..common::request(Machine::Virt, GuestMode::Demo)
    };
    let result = prepare(&request);
    std::fs::remove_file(&path).expect("remove the copy");
    let Err(RunError::System(errors)) = result else {
        panic!("the broken description was accepted");
    };
    let file = path.display().to_string();
    let text = errors.lines().collect::<Vec<_>>();
    assert!(
        text.iter().any(|l| l.starts_with(&format!("{file}:20:"))
            && l.contains("tasks.policy.caps[1].endpoint")
            && l.contains("requets")),
        "no error for the unknown endpoint:\n{errors}"
    );
    assert!(
        text.iter()
            .any(|l| l.starts_with(&format!("{file}:35:11: tasks.app.filters[0].rules"))),
        "no error for the malformed rule:\n{errors}"
    );
}

#[test]
fn new_writes_a_system_that_boots_unchanged_outside_the_repository() {
    let base = std::env::temp_dir().join(format!("portcullis-new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("a scratch directory");
    let directory = base.join("mine");
    portcullis::new::create(&directory, &portcullis::artifacts::workspace_root())
        .expect("new writes its files");
    let outcome = boot(&directory.join("system.toml"), Machine::Virt);
    assert_eq!(
        lines_of(&outcome, "app"),
        [
            "mine: hello from my own app",
            "mine: each of these lines was judged by my policy server"
        ],
        "{outcome}"
    );
    assert_eq!(
        lines_of(&outcome, "policy")
            .iter()
            .filter(|l| l.contains("debug_print") && l.ends_with("-> Allow"))
            .count(),
        2,
        "{outcome}"
    );
    assert_has(&outcome, "system: app ended the system (status 0)");
    std::fs::remove_dir_all(&base).expect("remove the scratch directory");
}
