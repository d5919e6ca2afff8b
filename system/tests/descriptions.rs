//! A description becomes a plan `Plan::open` accepts, and every kind of
//! mistake is reported at its file, line, column and field.

use abi::elf::writer::three_segments;
use abi::system::plan::{
    AuditPlan, CapPlan, CapSource, FilterPlan, MappingPlan, ObjectPlan, ObjectUse, Plan, Restart,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use system::{build, load, pack, BuildOptions};

/// A fresh directory holding `system.toml` with `text`, `app.elf` (a
/// small AArch64 executable) and the other `files`.
fn write(text: &str, files: &[(&str, &[u8])]) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "system-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("system.toml"), text).unwrap();
    std::fs::write(dir.join("app.elf"), three_segments()).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    dir.join("system.toml")
}

/// Every diagnostic of `text`, as printed.
fn errors_with(text: &str, files: &[(&str, &[u8])]) -> (PathBuf, Vec<String>) {
    let path = write(text, files);
    let found = load(&path).expect_err("the description has a mistake");
    (path, found.0.iter().map(|d| d.to_string()).collect())
}

/// The `FILE:LINE:COLUMN: FIELD:` prefix of the `nth` occurrence of
/// `needle` in `text`.
fn prefix_at(path: &Path, text: &str, needle: &str, nth: usize, field: &str) -> String {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} is in the text"))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{}:{line}:{column}: {field}:", path.display())
}

/// Asserts that `text` has exactly one mistake, at `needle`, in `field`,
/// and that its message contains `says`.
fn assert_one(text: &str, needle: &str, field: &str, says: &str) {
    let (path, found) = errors_with(text, &[]);
    assert_eq!(found.len(), 1, "{found:#?}");
    let expected = prefix_at(&path, text, needle, 0, field);
    assert!(
        found[0].starts_with(&expected) && found[0].contains(says),
        "\n{}\nexpected {expected} ... {says}",
        found[0]
    );
}

const VALID: &str = r#"
[system]
name = "confined"
memory = "64 MiB"

[endpoints]
requests = {}
policy = {}
stops = {}

[notifications]
audit = {}

[memory]
ring = { size = "4 KiB" }

[files]
rules = { path = "server.rules", rules = "server" }

[tasks.app]
elf = "app.elf"
priority = 90
restart = "on-fault"
max_restarts = 2
ends_system = true
caps = [
  { slot = 1, console = true },
  { slot = 2, endpoint = "requests", rights = "wG", badge = 0xc1 },
  { slot = 3, untyped = "64 KiB" },
]
filters = [
  { rules = """
debug_print when x3 <= 64 -> allow
call -> notify
default -> errno denied
""", server = "policy", badge = 5 },
]
trace = { tracer = "tracer", endpoint = "stops", badge = 7 }
audit = { server = "auditor", ring = "ring", notification = "audit", mode = "lossless", badge = 0xa99 }

[tasks.echo]
elf = "app.elf"
caps = [ { slot = 1, endpoint = "requests", rights = "r" } ]

[tasks.policy]
elf = "app.elf"
memory = "1 MiB"
caps = [ { slot = 4, endpoint = "policy", rights = "r" }, { slot = 5, tcb = "app", rights = "rwp" } ]
maps = [ { file = "rules", address = 0x3000_0000 } ]

[tasks.tracer]
elf = "app.elf"
caps = [ { slot = 1, endpoint = "stops", rights = "r" } ]

[tasks.auditor]
elf = "app.elf"
caps = [ { slot = 1, notification = "audit", rights = "r" } ]
maps = [ { memory = "ring", address = 0x1000_0000, rights = "rw" } ]
"#;

const SERVER_RULES: &[u8] = b"debug_print when x3 > 48 -> clamp x3 48\n* -> allow\n";

fn valid() -> PathBuf {
    write(VALID, &[("server.rules", SERVER_RULES)])
}

fn no_build() -> BuildOptions {
    BuildOptions {
        target_dir: PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        workspace: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
        quiet: true,
    }
}

#[test]
fn a_valid_description_becomes_a_plan_the_root_accepts() {
    let path = valid();
    let system = load(&path).unwrap_or_else(|d| panic!("{d}"));
    let built = build(&system, &no_build()).unwrap_or_else(|d| panic!("{d}"));
    let image = pack(&system, &built).unwrap();
    let plan = Plan::open(&image).expect("the root accepts the image");
    assert_eq!(plan.head.name, "confined");
    let objects: Vec<_> = plan.objects().collect();
    assert_eq!(objects.len(), 6);
    assert_eq!(objects[0], ObjectPlan::Endpoint { name: "requests" });
    assert_eq!(objects[3], ObjectPlan::Notification { name: "audit" });
    assert_eq!(
        objects[4],
        ObjectPlan::Memory {
            name: "ring",
            pages: 1
        }
    );
    let ObjectPlan::File { name, file } = objects[5] else {
        panic!("{:?}", objects[5])
    };
    assert_eq!(name, "rules");
    assert_eq!(plan.file(file), Some(SERVER_RULES));
    assert_eq!(file.offset % 4096, 0);

    let tasks: Vec<_> = plan.tasks().collect();
    let names: Vec<_> = tasks.iter().map(|t| t.name).collect();
    assert_eq!(names, ["app", "echo", "policy", "tracer", "auditor"]);
    let app = &tasks[0];
    assert_eq!(plan.file(app.elf), Some(three_segments().as_slice()));
    assert_eq!((app.priority, app.mcp, app.stack_pages), (90, 90, 4));
    // 6 program + 4 stack + 1 IPC + 8 tables + 1 root + 1 CNode + 4
    // pages, and the 64 KiB Untyped: 164 KiB, so 256 KiB.
    assert_eq!(app.memory_bits, 18);
    assert_eq!(app.cnode_radix, 5);
    assert_eq!(app.restart, Restart::OnFault { max: 2 });
    assert!(app.ends_system);
    assert_eq!(
        app.caps.as_slice(),
        [
            CapPlan {
                slot: 1,
                source: CapSource::Console,
                rights: 0b10
            },
            CapPlan {
                slot: 2,
                source: CapSource::Object(ObjectUse {
                    object: 0,
                    badge: 0xc1
                }),
                rights: 0b1010
            },
            CapPlan {
                slot: 3,
                source: CapSource::Untyped { bits: 16 },
                rights: 0b11
            },
        ]
    );
    let FilterPlan {
        description,
        server,
    } = app.filters[0];
    assert_eq!(
        server,
        Some(ObjectUse {
            object: 1,
            badge: 5
        })
    );
    let filter = abi::policy::decode(description).unwrap();
    assert_eq!(filter.rules.len(), 2);
    assert_eq!(filter.rules[1].action, abi::policy::Action::Notify);
    assert_eq!(
        filter.default,
        abi::policy::Action::errno(abi::ErrorCode::Denied)
    );
    assert_eq!(
        app.tracer,
        Some(ObjectUse {
            object: 2,
            badge: 7
        })
    );
    assert_eq!(
        app.audit,
        Some(AuditPlan {
            ring: 4,
            notification: ObjectUse {
                object: 3,
                badge: 0
            },
            lossless: true,
            badge: 0xa99
        })
    );
    let policy = &tasks[2];
    assert_eq!(policy.memory_bits, 20, "as given");
    assert_eq!(policy.caps[1].source, CapSource::Tcb { task: 0 });
    assert_eq!(policy.caps[1].rights, 0b10_0011);
    assert_eq!(
        policy.mappings.as_slice(),
        [MappingPlan {
            object: 5,
            address: 0x3000_0000,
            writable: false
        }]
    );
    assert!(tasks[4].mappings[0].writable);
}

#[test]
fn toml_syntax_is_reported_where_it_breaks() {
    let text = "[system]\nname = \"x\"\n[tasks.app\nelf = \"app.elf\"\n";
    let (path, found) = errors_with(text, &[]);
    let expected = format!("{}:3:", path.display());
    assert!(found[0].starts_with(&expected), "{found:?}");
    assert!(found[0].contains("TOML syntax"), "{found:?}");
}

#[test]
fn an_unknown_key_is_named_with_its_path() {
    let text = VALID.replace("priority = 90", "priority = 90\nprioriti = 3");
    let (path, found) = errors_with(&text, &[("server.rules", SERVER_RULES)]);
    let expected = prefix_at(&path, &text, "prioriti", 0, "tasks.app.prioriti");
    assert!(found[0].starts_with(&expected), "{found:?} vs {expected}");
    let text = VALID.replace(
        "{ slot = 1, console = true }",
        "{ slot = 1, console = true, colour = 1 }",
    );
    let (path, found) = errors_with(&text, &[("server.rules", SERVER_RULES)]);
    let expected = prefix_at(&path, &text, "colour", 0, "tasks.app.caps[0].colour");
    assert!(found[0].starts_with(&expected), "{found:?} vs {expected}");
}

const SMALL: &str = r#"[system]
name = "small"
[endpoints]
requests = {}
stops = {}
[tasks.app]
elf = "app.elf"
caps = [ { slot = 1, console = true }, { slot = 2, endpoint = "requests", rights = "rw" }, { slot = 3, endpoint = "stops", rights = "r" } ]
"#;

#[test]
fn objects_have_one_name_space() {
    let text = SMALL.replace("stops = {}", "stops = {}\n[notifications]\nrequests = {}");
    let (path, found) = errors_with(&text, &[]);
    let expected = prefix_at(
        &path,
        &text,
        "requests = {}\n[tasks",
        0,
        "notifications.requests",
    );
    assert!(
        found.iter().any(|f| f.starts_with(&expected)
            && f.contains("\"requests\" already names an object in [endpoints]")),
        "{found:#?}"
    );
}

#[test]
fn an_audit_server_maps_its_ring_writable() {
    let text = VALID.replace(
        "maps = [ { memory = \"ring\", address = 0x1000_0000, rights = \"rw\" } ]",
        "maps = [ { memory = \"ring\", address = 0x1000_0000, rights = \"r\" } ]",
    );
    let (path, found) = errors_with(&text, &[("server.rules", SERVER_RULES)]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with(&prefix_at(
            &path,
            &text,
            "\"ring\", notification",
            0,
            "tasks.app.audit.ring"
        )) && found[0].contains("read-only"),
        "{found:#?}"
    );
}

#[test]
fn an_unknown_name_lists_the_known_ones() {
    let text = SMALL.replace("endpoint = \"requests\"", "endpoint = \"requets\"");
    let (path, found) = errors_with(&text, &[]);
    // Only that: who holds what is checked once every task resolves, so
    // one typo does not also report `requests` as held by nobody.
    assert_eq!(found.len(), 1, "{found:#?}");
    let expected = prefix_at(&path, &text, "\"requets\"", 0, "tasks.app.caps[1].endpoint");
    assert_eq!(
        found[0],
        format!("{expected} no endpoint named \"requets\" (endpoints: requests, stops)")
    );
    assert_one(
        &SMALL.replace(
            "[tasks.app]",
            "[tasks.app]\ntrace = { tracer = \"nobody\", endpoint = \"stops\" }",
        ),
        "\"nobody\"",
        "tasks.app.trace.tracer",
        "no task named \"nobody\" (tasks: app)",
    );
}

#[test]
fn programs_that_are_missing_or_wrong_are_reported() {
    assert_one(
        &SMALL.replace("elf = \"app.elf\"", "elf = \"gone.elf\""),
        "\"gone.elf\"",
        "tasks.app.elf",
        "cannot read",
    );
    assert_one(
        &SMALL.replace("elf = \"app.elf\"", "crate = \"nowhere\""),
        "\"nowhere\"",
        "tasks.app.crate",
        "no crate directory",
    );
    // A directory without Cargo.toml: the description's own.
    assert_one(
        &SMALL.replace("elf = \"app.elf\"", "crate = \".\""),
        "\".\"",
        "tasks.app.crate",
        "Cargo.toml",
    );
    let text = SMALL.replace("elf = \"app.elf\"", "elf = \"system.toml\"");
    assert_one(
        &text,
        "\"system.toml\"",
        "tasks.app.elf",
        "is not an AArch64 executable: NotElf",
    );
}

#[test]
fn objects_nobody_can_use_are_reported() {
    assert_one(
        &SMALL.replace("stops = {}", "stops = {}\nlonely = {}"),
        "lonely",
        "endpoints.lonely",
        "no task holds endpoint \"lonely\"",
    );
    assert_one(
        &SMALL.replace("rights = \"rw\"", "rights = \"w\""),
        "requests = {}",
        "endpoints.requests",
        "none with r",
    );
    assert_one(
        &SMALL.replace("console = true", "console = true, badge = 3"),
        "3 }",
        "tasks.app.caps[0].badge",
        "takes no badge",
    );
}

#[test]
fn a_console_reader_and_a_supervisor_client_are_planned_with_their_rights() {
    let text = SMALL.replace(
        "{ slot = 1, console = true }",
        "{ slot = 1, console = true, rights = \"rw\" }, { slot = 4, supervisor = true }, { slot = 5, supervisor = true, rights = \"w\" }",
    );
    let system = load(&write(&text, &[])).unwrap_or_else(|d| panic!("{d}"));
    let caps = &system.tasks[0].caps;
    let source = |slot: u32| {
        caps.iter()
            .find(|c| c.slot == slot)
            .map(|c| (c.source, c.rights))
    };
    assert_eq!(source(1), Some((CapSource::Console, 0b11)));
    // A supervisor capability: write, grant (an endpoint with `trace on`)
    // and grant-reply, unless fewer are given.
    assert_eq!(source(4), Some((CapSource::Supervisor, 0b1110)));
    assert_eq!(source(5), Some((CapSource::Supervisor, 0b10)));
    assert_one(
        &SMALL.replace("console = true", "console = true, rights = \"rwg\""),
        "\"rwg\"",
        "tasks.app.caps[0].rights",
        "right 'g'",
    );
    assert_one(
        &SMALL.replace(
            "{ slot = 1, console = true }",
            "{ slot = 1, supervisor = true, badge = 9 }",
        ),
        "9 }",
        "tasks.app.caps[0].badge",
        "a supervisor capability takes no badge",
    );
    assert_one(
        &SMALL.replace(
            "{ slot = 1, console = true }",
            "{ slot = 1, supervisor = true, rights = \"r\" }",
        ),
        "\"r\"",
        "tasks.app.caps[0].rights",
        "right 'r'",
    );
    assert_one(
        &SMALL.replace("console = true", "console = true, supervisor = true"),
        "{ slot = 1",
        "tasks.app.caps[0]",
        "give exactly one of console, supervisor,",
    );
}

#[test]
fn servers_must_hold_what_they_serve() {
    let base = VALID.replace(
        "caps = [ { slot = 1, endpoint = \"stops\", rights = \"r\" } ]",
        "caps = [ { slot = 1, endpoint = \"stops\", rights = \"r\" }, { slot = 2, endpoint = \"policy\", rights = \"w\" } ]",
    );
    let files: &[(&str, &[u8])] = &[("server.rules", SERVER_RULES)];
    let check = |text: &str, needle: &str, nth: usize, field: &str, says: &str| {
        let (path, found) = errors_with(text, files);
        let expected = prefix_at(&path, text, needle, nth, field);
        assert!(
            found.len() == 1 && found[0].starts_with(&expected) && found[0].contains(says),
            "{found:#?}\nexpected {expected} ... {says}"
        );
    };
    check(
        &base.replace(
            "server = \"policy\", badge = 5",
            "server = \"tracer\", endpoint = \"policy\"",
        ),
        "\"policy\" }",
        0,
        "tasks.app.filters[0].endpoint",
        "does not hold endpoint \"policy\" with r",
    );
    check(
        &VALID.replace("tracer = \"tracer\"", "tracer = \"echo\""),
        "\"echo\"",
        0,
        "tasks.app.trace.tracer",
        "does not hold endpoint \"stops\" with r",
    );
    check(
        &VALID.replace("notification = \"audit\", rights = \"r\"", "notification = \"audit\", rights = \"r\" }, { slot = 2, notification = \"audit\", rights = \"w\"")
            .replace("server = \"auditor\"", "server = \"echo\"")
            .replace("maps = [ { memory = \"ring\", address = 0x1000_0000, rights = \"rw\" } ]", "")
            .replace("[tasks.echo]", "[tasks.echo]\nmaps = [ { memory = \"ring\", address = 0x1000_0000 } ]"),
        "\"echo\", ring",
        0,
        "tasks.app.audit.server",
        "does not hold notification \"audit\" with r",
    );
    check(
        &VALID.replace(
            "maps = [ { memory = \"ring\", address = 0x1000_0000, rights = \"rw\" } ]",
            "",
        ),
        "\"ring\", notification",
        0,
        "tasks.app.audit.ring",
        "does not map \"ring\"",
    );
    check(
        &VALID.replace("server = \"policy\", badge = 5", "server = \"app\""),
        "\"app\"",
        0,
        "tasks.app.filters[0].server",
        "its own policy server",
    );
    check(
        &VALID.replace("tracer = \"tracer\"", "tracer = \"app\""),
        "\"app\"",
        0,
        "tasks.app.trace.tracer",
        "its own tracer",
    );
}

#[test]
fn a_rule_error_points_into_the_toml_or_the_rules_file() {
    let text = VALID.replace("call -> notify", "call ->   notifi");
    let (path, found) = errors_with(&text, &[("server.rules", SERVER_RULES)]);
    let expected = prefix_at(&path, &text, "notifi\n", 0, "tasks.app.filters[0].rules");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with(&expected) && found[0].contains("unknown decision"),
        "{} vs {expected}",
        found[0]
    );
    // A rules file's mistake names that file.
    let (path, found) = errors_with(VALID, &[("server.rules", b"* -> allow\npoll -> notify\n")]);
    let rules = path.with_file_name("server.rules");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with(&format!("{}:2:9: files.rules.rules: ", rules.display())),
        "{found:#?}"
    );
    // `notify` needs a server, and a server needs `notify`.
    let (_, found) = errors_with(
        &VALID.replace(", server = \"policy\", badge = 5", ""),
        &[("server.rules", SERVER_RULES)],
    );
    assert!(
        found
            .iter()
            .any(|f| f.contains("filters[0].server: a rule or the default says `notify`")),
        "{found:#?}"
    );
}

#[test]
fn a_filter_without_its_default_is_reported_where_its_rules_start() {
    const MISSING: &str = "a filter says what a syscall no rule matches gets: add a line \
                           `default -> DECISION` (`default -> allow`, `default -> errno denied`, ...)";
    // Inline rules: the first line of the string, in the TOML file.
    let text = VALID.replace("default -> errno denied\n", "");
    let (path, found) = errors_with(&text, &[("server.rules", SERVER_RULES)]);
    let expected = prefix_at(
        &path,
        &text,
        "debug_print when x3 <= 64",
        0,
        "tasks.app.filters[0].rules",
    );
    assert_eq!(found, [format!("{expected} {MISSING}")]);
    // A rules file: its line 1, column 1.
    let inline = &VALID
        [VALID.find("{ rules = \"\"\"").unwrap()..VALID.find(", server = \"policy\"").unwrap()];
    let text = VALID.replace(inline, "{ rules_file = \"app.filter\"");
    let (path, found) = errors_with(
        &text,
        &[
            ("server.rules", SERVER_RULES),
            ("app.filter", b"# the app's filter\ncall -> notify\n"),
        ],
    );
    let file = path.with_file_name("app.filter");
    assert_eq!(
        found,
        [format!(
            "{}:1:1: tasks.app.filters[0].rules_file: {MISSING}",
            file.display()
        )]
    );
    // With it, the filter compiles; a server's file may leave it out
    // (`SERVER_RULES` has none).
    let (path, found) = errors_with(
        &text,
        &[
            ("server.rules", b"default -> allow\ndefault -> kill\n"),
            ("app.filter", b"call -> notify\ndefault -> allow\n"),
        ],
    );
    let rules = path.with_file_name("server.rules");
    assert_eq!(
        found,
        [format!(
            "{}:2:1: files.rules.rules: `default` twice in one file",
            rules.display()
        )]
    );
}

#[test]
fn the_budget_counts_tasks_and_shared_memory() {
    let text = VALID.replace("memory = \"64 MiB\"", "memory = \"1 MiB\"");
    let (path, found) = errors_with(&text, &[("server.rules", SERVER_RULES)]);
    let expected = prefix_at(&path, &text, "\"1 MiB\"", 0, "system.memory");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with(&expected), "{}", found[0]);
    // policy's 1 MiB, app's 256 KiB three times (it may be rebuilt
    // twice), three tasks of 128 KiB, the ring and the rules file's copy.
    assert!(
        found[0].contains("the system needs 2184 KiB")
            && found[0].contains("app 768 KiB")
            && found[0].contains("policy 1 MiB")
            && found[0].contains("budget is 1 MiB"),
        "{}",
        found[0]
    );
    assert_one(
        &SMALL
            .replace(
                "[tasks.app]",
                "[tasks.app]\nmemory = \"64 KiB\"\ncaps_x = 1",
            )
            .replace("caps_x = 1\n", ""),
        "\"64 KiB\"",
        "tasks.app.memory",
        "below the task's estimate of 103808 bytes",
    );
}

#[test]
fn privilege_priority_and_restart_mistakes() {
    let two = SMALL.replace(
        "[tasks.app]",
        "[tasks.root]\nelf = \"app.elf\"\nprivileged = true\n[tasks.app]\nprivileged = true",
    );
    assert_one(
        &two.replace("slot = 1, console", "slot = 200, console")
            .replace("slot = 2, endpoint", "slot = 201, endpoint")
            .replace("slot = 3, endpoint", "slot = 202, endpoint"),
        "true\nelf",
        "tasks.app.privileged",
        "\"root\" is privileged already",
    );
    assert_one(
        &SMALL.replace("[tasks.app]", "[tasks.app]\ncommand_line = \"go\""),
        "\"go\"",
        "tasks.app.command_line",
        "only a privileged task",
    );
    assert_one(
        &SMALL.replace("[tasks.app]", "[tasks.app]\npriority = 256"),
        "256",
        "tasks.app.priority",
        "out of range (0..=254)",
    );
    // The root supervises at 255: no task is at its level.
    assert_one(
        &SMALL.replace("[tasks.app]", "[tasks.app]\npriority = 255"),
        "255",
        "tasks.app.priority",
        "out of range (0..=254)",
    );
    assert_one(
        &SMALL.replace("[tasks.app]", "[tasks.app]\nmcp = -1"),
        "-1",
        "tasks.app.mcp",
        "out of range",
    );
    assert_one(
        &SMALL.replace("[tasks.app]", "[tasks.app]\nmax_restarts = 2"),
        "2\n",
        "tasks.app.max_restarts",
        "needs `restart",
    );
}

#[test]
fn sizes_slots_and_addresses_are_checked() {
    assert_one(
        &SMALL.replace("[tasks.app]", "[tasks.app]\nstack = \"5 KiB\""),
        "\"5 KiB\"",
        "tasks.app.stack",
        "not a multiple of 4 KiB",
    );
    assert_one(
        &SMALL.replace("[tasks.app]", "[tasks.app]\nmemory = \"3 MiB\""),
        "\"3 MiB\"",
        "tasks.app.memory",
        "not a power of two",
    );
    assert_one(
        &SMALL.replace("slot = 3", "slot = 2"),
        "2, endpoint = \"stops\"",
        "tasks.app.caps[2].slot",
        "already given by caps[1]",
    );
    assert_one(
        &SMALL.replace("slot = 3", "slot = 32"),
        "32",
        "tasks.app.caps[2].slot",
        "outside the CNode",
    );
    assert_one(
        &SMALL.replace("slot = 1,", "slot = 0,"),
        "0,",
        "tasks.app.caps[0].slot",
        "own CNode",
    );
    let mapped = SMALL
        .replace("stops = {}", "stops = {}\n[memory]\na = { size = \"8 KiB\" }\nb = { size = \"8 KiB\" }\nc = { size = \"8 KiB\" }\nd = { size = \"8 KiB\" }")
        .replace(
            "[tasks.app]",
            "[tasks.app]\nmaps = [ { memory = \"a\", address = 0x1000_0000 }, { memory = \"b\", address = 0x1000_1000 }, { memory = \"c\", address = 0x1000_0800 }, { memory = \"d\", address = 0x40_2000 } ]",
        );
    let (path, found) = errors_with(&mapped, &[]);
    // The program's segments are looked at once the rest is right.
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with(&prefix_at(
        &path,
        &mapped,
        "0x1000_1000",
        0,
        "tasks.app.maps[1].address"
    )));
    assert!(found[0].contains("overlaps maps[0]"));
    assert!(found[1].starts_with(&prefix_at(
        &path,
        &mapped,
        "0x1000_0800",
        0,
        "tasks.app.maps[2].address"
    )));
    assert!(found[1].contains("not page-aligned"));
    let over_program = mapped.replace(
        "{ memory = \"b\", address = 0x1000_1000 }, { memory = \"c\", address = 0x1000_0800 }, ",
        "",
    );
    // A region is mapped by one task, once.
    let twice = mapped.replace(
        "{ memory = \"b\", address = 0x1000_1000 }, { memory = \"c\", address = 0x1000_0800 }, { memory = \"d\", address = 0x40_2000 }",
        "{ memory = \"a\", address = 0x2000_0000 }",
    );
    assert_one(
        &twice,
        "\"a\", address = 0x2000_0000",
        "tasks.app.maps[1].memory",
        "is mapped by tasks.app.maps[0].memory already; the kernel maps a Frame in one place at a time",
    );
    assert_one(
        &over_program,
        "0x40_2000",
        "tasks.app.maps[1].address",
        "0x402000..0x404000 overlaps the program's segment at 0x402000..0x403000",
    );
}

#[test]
fn independent_mistakes_are_all_reported() {
    let text = SMALL
        .replace(
            "[tasks.app]",
            "[tasks.app]\npriority = 999\nstack = \"5 KiB\"",
        )
        .replace("rights = \"rw\"", "rights = \"rwx\"");
    let (_, found) = errors_with(&text, &[]);
    let fields: Vec<_> = found
        .iter()
        .map(|f| f.split(": ").nth(1).unwrap().to_string())
        .collect();
    assert_eq!(
        fields,
        [
            "tasks.app.priority",
            "tasks.app.stack",
            "tasks.app.caps[1].rights"
        ],
        "{found:#?}"
    );
}

/// What `Plan::open` refuses, or the root would do other than the
/// description says, is refused on the host at the value it is about —
/// and sums of sizes neither panic nor wrap under the budget.
#[test]
fn what_the_root_cannot_do_is_refused_at_its_value() {
    let task = |extra: &str| SMALL.replace("[tasks.app]", &format!("[tasks.app]\n{extra}"));
    let untyped = |size: &str| {
        SMALL.replace(
            "{ slot = 3, endpoint",
            &format!("{{ slot = 4, untyped = \"{size}\" }}, {{ slot = 5, untyped = \"{size}\" }}, {{ slot = 3, endpoint"),
        )
    };
    // 2^63 twice: the sum of Untypeds overflowed (a panic).
    let text = untyped("8589934592 GiB");
    let (path, found) = errors_with(&text, &[]);
    assert_eq!(found.len(), 2, "{found:#?}");
    let expected = prefix_at(
        &path,
        &text,
        "\"8589934592 GiB\"",
        0,
        "tasks.app.caps[2].untyped",
    );
    assert!(found[0].starts_with(&expected), "{found:#?} vs {expected}");
    // 4 GiB restarted 2^32 - 1 times: 2^64 wrapped to 0 in a release
    // build (under any budget) and panicked in a debug one.
    assert_one(
        &task("memory = \"4 GiB\"\nrestart = \"on-fault\"\nmax_restarts = 4294967295"),
        "[system]",
        "system.memory",
        "the system needs",
    );
    assert_one(
        &task("memory = \"8589934592 GiB\""),
        "\"8589934592 GiB\"",
        "tasks.app.memory",
        "a task has at most",
    );
    // The root never restarts a privileged task, and never hears of the
    // end of a task with a fault handler of its own.
    let privileged = SMALL
        .replace("slot = 1,", "slot = 130,")
        .replace("slot = 2,", "slot = 131,")
        .replace("slot = 3,", "slot = 132,")
        .replace(
            "[tasks.app]",
            "[tasks.app]\nprivileged = true\nrestart = \"always\"",
        );
    assert_one(
        &privileged,
        "\"always\"",
        "tasks.app.restart",
        "a privileged task is not restarted",
    );
    assert_one(
        &task("fault_handler = { endpoint = \"stops\" }\nrestart = \"on-fault\""),
        "\"on-fault\"",
        "tasks.app.restart",
        "cannot restart it",
    );
    assert_one(
        &task("fault_handler = { endpoint = \"stops\" }\nends_system = true"),
        "{ endpoint = \"stops\" }",
        "tasks.app.fault_handler",
        "never sees it end the system",
    );
    assert!(load(&write(
        &task("fault_handler = { endpoint = \"stops\" }\nrestart = \"on-fault\"\nmax_restarts = 0"),
        &[]
    ))
    .is_ok());
    // The console UART's line of either board.
    for intid in ["33", "153"] {
        let text = SMALL
            .replace("[endpoints]", "[notifications]\nn = {}\n[endpoints]")
            .replace(
                "{ slot = 3, endpoint",
                &format!("{{ slot = 4, irq = {intid}, notification = \"n\" }}, {{ slot = 5, notification = \"n\", rights = \"r\" }}, {{ slot = 3, endpoint"),
            );
        assert_one(
            &text,
            &format!("= {intid},")[2..],
            "tasks.app.caps[2].irq",
            "console UART",
        );
    }
    // A filter's endpoint and badge are its server's: without one they
    // were dropped without a word.
    assert_one(
        &task("filters = [ { rules = \"default -> allow\", endpoint = \"requests\" } ]"),
        "\"requests\" }",
        "tasks.app.filters[0].endpoint",
        "no `server`",
    );
    assert_one(
        &task("filters = [ { rules = \"default -> allow\", badge = 3 } ]"),
        "3 }",
        "tasks.app.filters[0].badge",
        "no `server`",
    );
    // Devices: by address, not overlapping, not wrapping (the root makes
    // them bottom up and refused these only at boot).
    let devices = |d1: &str, d2: &str| {
        SMALL.replace(
            "[tasks.app]",
            &format!("[devices]\nd1 = {{ address = {d1}, size = \"8 KiB\" }}\nd2 = {{ address = {d2}, size = \"4 KiB\" }}\n[tasks.app]"),
        )
    };
    assert_one(
        &devices("0x9000000", "0x9001000"),
        "0x9001000",
        "devices.d2.address",
        "list devices by address",
    );
    assert_one(
        &devices("0x9002000", "0x9000000"),
        "0x9000000,",
        "devices.d2.address",
        "list devices by address",
    );
    assert_one(
        &devices("0xfffffffffffff000", "0x1000"),
        "0xfffffffffffff000",
        "devices.d1.address",
        "past the end",
    );
    assert!(load(&write(&devices("0x9000000", "0x9002000"), &[])).is_ok());
}
