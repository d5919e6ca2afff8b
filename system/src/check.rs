//! Checks a parsed description and resolves it into a [`System`]. Every
//! independent mistake is recorded (the checks go on after one), each at
//! the value it is about.

use crate::description::{self as d, Description, Name, Size};
use crate::diagnostic::{Diagnostic, Report, Source};
use crate::model::{show, Object, ObjectKind, Program, System, Task, PAGE};
use crate::rules::{compile_rules, RuleError, RuleUse};
use abi::cap::Rights;
use abi::system::plan::{
    AuditPlan, CapPlan, CapSource, MappingPlan, ObjectUse, Restart, MAX_IRQS, MAX_OBJECTS,
    MAX_TASKS, MAX_TASK_CAPS, MAX_TASK_FILTERS, MAX_TASK_MAPPINGS,
};
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The default memory budget.
pub const DEFAULT_BUDGET: u64 = 256 << 20;
/// The default stack.
pub const DEFAULT_STACK: u64 = 16 << 10;
/// The largest stack.
pub const MAX_STACK: u64 = 1 << 20;
/// The default priority (and MCP).
pub const DEFAULT_PRIORITY: u8 = 100;
/// The default CNode size.
pub const DEFAULT_CNODE_SLOTS: u64 = 32;
/// The privileged task's CNode size: the root's
/// (`2^abi::bootinfo::ROOT_CNODE_RADIX`), which holds the boot
/// capabilities below `abi::bootinfo::ROOT_FIRST_FREE_SLOT`.
pub const DEFAULT_PRIVILEGED_CNODE_SLOTS: u64 = 1 << abi::bootinfo::ROOT_CNODE_RADIX;
/// The default `max_restarts`.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;
/// One past the highest address a mapping may reach (where `FrameMap`'s
/// window ends; the stack and IPC buffer lie above).
pub const MAP_END: u64 = abi::vspace::FRAME_MAP_END;
/// The audit ring's size: the kernel's ring is one page.
pub const RING_BYTES: u64 = 4096;
/// The largest memory (log2) a task, an Untyped or the whole system may
/// have: `Plan::open`'s bound.
pub const MAX_MEMORY_BITS: u8 = abi::system::plan::MAX_MEMORY_BITS;
/// The interrupts of the console UART on each board the kernel runs on
/// (`arch::boards::{virt,rpi4}::UART_INTID`): the kernel keeps the line
/// of the board it runs on, and a description may boot on either.
pub const CONSOLE_INTIDS: [(u32, &str); 2] =
    [(32 + 1, "QEMU virt"), (32 + 121, "the Raspberry Pi 4")];

/// The kinds of named objects, in plan order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Endpoint,
    Notification,
    Memory,
    Device,
    File,
}

impl Kind {
    fn singular(self) -> &'static str {
        match self {
            Kind::Endpoint => "endpoint",
            Kind::Notification => "notification",
            Kind::Memory => "memory region",
            Kind::Device => "device",
            Kind::File => "file",
        }
    }

    fn table(self) -> &'static str {
        match self {
            Kind::Endpoint => "endpoints",
            Kind::Notification => "notifications",
            Kind::Memory => "memory",
            Kind::Device => "devices",
            Kind::File => "files",
        }
    }
}

/// What the checks share.
struct Checker<'a> {
    source: &'a Source,
    dir: PathBuf,
    report: Report,
    /// Object names per kind, to object index.
    names: BTreeMap<Kind, IndexMap<String, u16>>,
    objects: Vec<Object>,
    /// Task names to index.
    tasks: IndexMap<String, u16>,
}

/// Checks `description` (read from `source`).
pub fn check(source: &Source, description: Description) -> Result<System, crate::Diagnostics> {
    let dir = source
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut c = Checker {
        source,
        dir,
        report: Report::default(),
        names: BTreeMap::new(),
        objects: Vec::new(),
        tasks: IndexMap::new(),
    };
    let system = description.system.get_ref();
    let name = system.name.get_ref().clone();
    if !is_object_name(&name) {
        c.error(
            system.name.span().start,
            "system.name",
            format!("{name:?} is not a system name (1 to 32 letters, digits, '-' or '_')"),
        );
    }
    let (budget, budget_at) = match &system.memory {
        Some(size) => (
            c.size(size, "system.memory").unwrap_or(DEFAULT_BUDGET),
            size.span().start,
        ),
        None => (DEFAULT_BUDGET, description.system.span().start),
    };
    c.objects_of(Kind::Endpoint, &description.endpoints, |_, _, _| {
        Some(ObjectKind::Endpoint)
    });
    c.objects_of(Kind::Notification, &description.notifications, |_, _, _| {
        Some(ObjectKind::Notification)
    });
    c.objects_of(Kind::Memory, &description.memory, |c, field, region| {
        let pages = c.pages(&region.size, &format!("{field}.size"))?;
        Some(ObjectKind::Memory { pages })
    });
    let mut devices: Vec<(String, u64)> = Vec::new();
    c.objects_of(Kind::Device, &description.devices, |c, field, device| {
        let pages = c.pages(&device.size, &format!("{field}.size"));
        let physical = *device.address.get_ref();
        if !physical.is_multiple_of(PAGE) {
            c.error(
                device.address.span().start,
                &format!("{field}.address"),
                format!("{physical:#x} is not page-aligned (a multiple of 0x1000)"),
            );
            return None;
        }
        let pages = pages?;
        let Some(end) = physical.checked_add(u64::from(pages) * PAGE) else {
            c.error(
                device.address.span().start,
                &format!("{field}.address"),
                format!("{physical:#x} plus {} runs past the end of the address space", show(u64::from(pages) * PAGE)),
            );
            return None;
        };
        // The root makes a device's Frames from the bottom of the
        // kernel's device block up: devices are listed by address and do
        // not overlap.
        if let Some((before, before_end)) = devices.last() {
            if physical < *before_end {
                c.error(
                    device.address.span().start,
                    &format!("{field}.address"),
                    format!(
                        "{physical:#x}..{end:#x} overlaps, or lies below, devices.{before} (list devices by address)"
                    ),
                );
                return None;
            }
        }
        devices.push((field.trim_start_matches("devices.").to_string(), end));
        Some(ObjectKind::Device { physical, pages })
    });
    c.objects_of(Kind::File, &description.files, |c, field, file| {
        let bytes = c.file(&file.path, &format!("{field}.path"))?;
        if let Some(rules) = &file.rules {
            let usage = match rules.get_ref().as_str() {
                "server" => Some(RuleUse::Server),
                "filter" => Some(RuleUse::Filter),
                other => {
                    c.error(
                        rules.span().start,
                        &format!("{field}.rules"),
                        format!("{other:?} is not a rule language (\"server\" or \"filter\")"),
                    );
                    None
                }
            };
            if let Some(usage) = usage {
                c.rules_file(&file.path, &bytes, usage, &format!("{field}.rules"));
            }
        }
        Some(ObjectKind::File { bytes })
    });
    if c.objects.len() > MAX_OBJECTS {
        c.error(
            0,
            "",
            format!(
                "{} objects; a system has at most {MAX_OBJECTS}",
                c.objects.len()
            ),
        );
    }
    for (index, (name, _)) in description.tasks.iter().enumerate() {
        if !abi::tcb::is_valid_name(name.get_ref().as_bytes()) {
            c.error(
                name.span().start,
                &format!("tasks.{}", name.get_ref()),
                format!(
                    "{:?} is not a task name (1 to {} printable ASCII characters, no space, '#', '[' or ']')",
                    name.get_ref(),
                    abi::tcb::MAX_NAME_BYTES
                ),
            );
        }
        c.tasks.insert(name.get_ref().clone(), index as u16);
    }
    if description.tasks.len() > MAX_TASKS {
        c.error(
            0,
            "tasks",
            format!(
                "{} tasks; a system has at most {MAX_TASKS}",
                description.tasks.len()
            ),
        );
    }
    if description.tasks.is_empty() {
        c.error(
            description.system.span().start,
            "tasks",
            "the system has no task",
        );
    }
    let mut tasks = Vec::new();
    for (name, task) in &description.tasks {
        if let Some(task) = c.task(name.get_ref(), task.get_ref()) {
            tasks.push(task);
        }
    }
    // What depends on every task's capabilities: who holds what.
    if tasks.len() == description.tasks.len() {
        for (t, i, object) in c.cross_checks(&description, &tasks) {
            if let Some(server) = &mut tasks[t].filters[i].1 {
                server.object = object;
            }
        }
    }
    let mut system = System {
        source: source.clone(),
        name,
        budget,
        budget_at,
        objects: c.objects,
        tasks,
    };
    let mut report = c.report;
    if report.0.is_empty() {
        for index in 0..system.tasks.len() {
            if let Program::Elf { bytes, .. } = &system.tasks[index].program {
                let bytes = bytes.clone();
                match crate::program::check_program(&system, index, &bytes) {
                    Ok(memory) => {
                        if system.tasks[index].memory.is_none() {
                            system.tasks[index].memory = Some((memory, 0));
                        }
                    }
                    Err(found) => report.0.extend(found),
                }
            }
        }
        if let Err(d) = crate::program::check_budget(&system, &|task| {
            task.memory.map(|(bytes, _)| bytes).unwrap_or(0)
        }) {
            report.push(d);
        }
        // The estimate filled in for prebuilt programs is `build`'s to
        // redo; only what the user wrote stays.
        for (task, written) in system.tasks.iter_mut().zip(&description.tasks) {
            if written.1.get_ref().memory.is_none() {
                task.memory = None;
            }
        }
    }
    report.finish(system)
}

/// Letters, digits, '-' and '_', 1 to 32 of them (the rule
/// `Plan::open` checks again).
fn is_object_name(name: &str) -> bool {
    abi::system::plan::is_object_name(name)
}

/// `kind` with its plural for lists of known names.
fn known(names: &[&str], plural: &str) -> String {
    if names.is_empty() {
        format!("no {plural} are declared")
    } else {
        format!("{plural}: {}", names.join(", "))
    }
}

impl Checker<'_> {
    fn error(&mut self, offset: usize, field: &str, message: impl Into<String>) {
        let diagnostic = self.source.at(offset, field, message);
        self.report.push(diagnostic);
    }

    /// Declares the objects of one table, in order.
    fn objects_of<T>(
        &mut self,
        kind: Kind,
        table: &IndexMap<Name, Spanned<T>>,
        mut make: impl FnMut(&mut Self, &str, &T) -> Option<ObjectKind>,
    ) {
        for (name, value) in table {
            let field = format!("{}.{}", kind.table(), name.get_ref());
            if !is_object_name(name.get_ref()) {
                self.error(
                    name.span().start,
                    &field,
                    format!(
                        "{:?} is not a name (1 to 32 letters, digits, '-' or '_')",
                        name.get_ref()
                    ),
                );
            }
            // One name space for every kind: console lines and messages
            // name an object by its name alone.
            if let Some(other) = self
                .names
                .iter()
                .find(|(_, table)| table.contains_key(name.get_ref()))
                .map(|(kind, _)| kind.table())
            {
                self.error(
                    name.span().start,
                    &field,
                    format!(
                        "{:?} already names an object in [{other}]; objects have one name space",
                        name.get_ref()
                    ),
                );
            }
            let made = make(self, &field, value.get_ref());
            let index = self.objects.len() as u16;
            self.names
                .entry(kind)
                .or_default()
                .insert(name.get_ref().clone(), index);
            // A broken object still takes its index, so later references
            // to it are not reported as unknown too.
            self.objects.push(Object {
                name: name.get_ref().clone(),
                kind: made.unwrap_or(ObjectKind::Endpoint),
            });
        }
    }

    /// The index of the `kind` object `name`, or an error listing the
    /// known ones.
    fn object(&mut self, kind: Kind, name: &Name, field: &str) -> Option<u16> {
        let table = self.names.get(&kind);
        if let Some(&index) = table.and_then(|t| t.get(name.get_ref())) {
            return Some(index);
        }
        let names: Vec<&str> = table
            .map(|t| t.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let message = format!(
            "no {} named {:?} ({})",
            kind.singular(),
            name.get_ref(),
            known(&names, kind.table())
        );
        self.error(name.span().start, field, message);
        None
    }

    /// The index of task `name`, or an error listing the tasks.
    fn task_index(&mut self, name: &Name, field: &str) -> Option<u16> {
        if let Some(&index) = self.tasks.get(name.get_ref()) {
            return Some(index);
        }
        let names: Vec<&str> = self.tasks.keys().map(String::as_str).collect();
        let message = format!(
            "no task named {:?} ({})",
            name.get_ref(),
            known(&names, "tasks")
        );
        self.error(name.span().start, field, message);
        None
    }

    /// An error at the first entry of `list` past `max` (`"{says} {max} {what}"`).
    fn at_most<T>(&mut self, list: &[Spanned<T>], max: usize, field: &str, says: &str, what: &str) {
        if let Some(first_over) = list.get(max) {
            self.error(
                first_over.span().start,
                field,
                format!("{says} {max} {what}"),
            );
        }
    }

    /// The index of the task `server` names, which serves task `name` as
    /// its `role` (tracer, audit or policy server): never `name` itself.
    fn serving_task(&mut self, name: &str, server: &Name, field: &str, role: &str) -> Option<u16> {
        if server.get_ref() == name {
            self.error(
                server.span().start,
                field,
                format!("a task cannot be its own {role}"),
            );
        }
        self.task_index(server, field)
    }

    fn size(&mut self, size: &Spanned<Size>, field: &str) -> Option<u64> {
        match size.get_ref().bytes() {
            Ok(bytes) => Some(bytes),
            Err(message) => {
                self.error(size.span().start, field, message);
                None
            }
        }
    }

    /// A size in whole pages (at least one).
    fn pages(&mut self, size: &Spanned<Size>, field: &str) -> Option<u32> {
        let bytes = self.size(size, field)?;
        if bytes == 0 || !bytes.is_multiple_of(PAGE) || bytes / PAGE > u64::from(u32::MAX) {
            self.error(
                size.span().start,
                field,
                format!("{} is not a positive multiple of 4 KiB", show(bytes)),
            );
            return None;
        }
        Some((bytes / PAGE) as u32)
    }

    /// A power-of-two size of at least `least` bytes, as its log2.
    fn power_of_two(&mut self, size: &Spanned<Size>, field: &str, least: u64) -> Option<u8> {
        let bytes = self.size(size, field)?;
        if !bytes.is_power_of_two() || bytes < least {
            self.error(
                size.span().start,
                field,
                format!(
                    "{} is not a power of two of at least {}",
                    show(bytes),
                    show(least)
                ),
            );
            return None;
        }
        Some(bytes.trailing_zeros() as u8)
    }

    fn in_range(&mut self, value: &Spanned<i64>, field: &str, range: (i64, i64)) -> Option<i64> {
        let v = *value.get_ref();
        if (range.0..=range.1).contains(&v) {
            Some(v)
        } else {
            self.error(
                value.span().start,
                field,
                format!("{v} is out of range ({}..={})", range.0, range.1),
            );
            None
        }
    }

    /// A file relative to the description's directory (absolute, so
    /// that cargo, run from elsewhere, finds it too).
    fn path(&self, written: &str) -> PathBuf {
        let joined = self.dir.join(written);
        std::path::absolute(&joined).unwrap_or(joined)
    }

    fn file(&mut self, path: &Spanned<String>, field: &str) -> Option<Vec<u8>> {
        let full = self.path(path.get_ref());
        match std::fs::read(&full) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                self.error(
                    path.span().start,
                    field,
                    format!("cannot read {}: {e}", full.display()),
                );
                None
            }
        }
    }

    /// Checks a rules file's text; its errors name that file.
    fn rules_file(
        &mut self,
        path: &Spanned<String>,
        bytes: &[u8],
        usage: RuleUse,
        field: &str,
    ) -> Option<Vec<u8>> {
        let full = self.path(path.get_ref());
        let Ok(text) = std::str::from_utf8(bytes) else {
            self.error(
                path.span().start,
                field,
                format!("{} is not UTF-8 text", full.display()),
            );
            return None;
        };
        match compile_rules(text, usage) {
            Ok(description) => description.map(|d| encode(&d)),
            Err(RuleError {
                line,
                column,
                message,
            }) => {
                self.report.push(Diagnostic {
                    file: full,
                    line,
                    column,
                    field: field.to_string(),
                    message,
                });
                None
            }
        }
    }

    /// Compiles inline rule text; an error points at its real line and
    /// column in the description.
    fn inline_rules(&mut self, rules: &Spanned<String>, field: &str) -> Option<Vec<u8>> {
        match compile_rules(rules.get_ref(), RuleUse::Filter) {
            Ok(description) => description.map(|d| encode(&d)),
            Err(RuleError {
                line,
                column,
                message,
            }) => {
                let offset = string_offset(&self.source.text, rules.span(), line, column);
                self.error(offset, field, message);
                None
            }
        }
    }

    /// Rights letters allowed for a kind of capability.
    fn rights(&mut self, written: &Spanned<String>, allowed: &str, field: &str) -> Option<u8> {
        let mut rights = Rights::NONE;
        for letter in written.get_ref().chars() {
            let right = match letter {
                'r' => Rights::READ,
                'w' => Rights::WRITE,
                'g' => Rights::GRANT,
                'G' => Rights::GRANT_REPLY,
                't' => Rights::TRACE,
                'p' => Rights::POLICY,
                _ => Rights::NONE,
            };
            if !allowed.contains(letter) || right == Rights::NONE {
                self.error(
                    written.span().start,
                    field,
                    format!(
                        "right {letter:?} is not one this capability takes (letters: {allowed})"
                    ),
                );
                return None;
            }
            rights = rights.union(right);
        }
        Some(rights.into_bytes()[0])
    }

    /// One task; `None` if it had mistakes (all recorded).
    fn task(&mut self, name: &str, t: &d::Task) -> Option<Task> {
        let errors_before = self.report.0.len();
        let at = |field: &str| format!("tasks.{name}.{field}");
        let program = self.program(name, t);
        let program_at = t
            .krate
            .as_ref()
            .or(t.elf.as_ref())
            .map_or(0, |s| s.span().start);
        let priority = t
            .priority
            .as_ref()
            // The root supervises at 255, above every task.
            .and_then(|p| self.in_range(p, &at("priority"), (0, 254)))
            .map_or(DEFAULT_PRIORITY, |p| p as u8);
        let mcp = t
            .mcp
            .as_ref()
            .and_then(|p| self.in_range(p, &at("mcp"), (0, 255)))
            .map_or(priority, |p| p as u8);
        let stack = match &t.stack {
            Some(size) => self.size(size, &at("stack")).and_then(|bytes| {
                if bytes == 0 || !bytes.is_multiple_of(PAGE) || bytes > MAX_STACK {
                    self.error(
                        size.span().start,
                        &at("stack"),
                        format!(
                            "{} is not a multiple of 4 KiB between 4 KiB and 1 MiB",
                            show(bytes)
                        ),
                    );
                    None
                } else {
                    Some(bytes)
                }
            }),
            None => Some(DEFAULT_STACK),
        }
        .unwrap_or(DEFAULT_STACK);
        let memory = t.memory.as_ref().and_then(|size| {
            self.power_of_two(size, &at("memory"), PAGE)
                .filter(|&bits| {
                    let fits = bits <= MAX_MEMORY_BITS;
                    if !fits {
                        self.error(
                            size.span().start,
                            &at("memory"),
                            format!(
                                "a task has at most {} of memory",
                                show(1 << MAX_MEMORY_BITS)
                            ),
                        );
                    }
                    fits
                })
                .map(|bits| (1u64 << bits, size.span().start))
        });
        let privileged = t.privileged.as_ref().is_some_and(|p| *p.get_ref());
        let slots = match &t.cnode_slots {
            Some(slots) => {
                let n = *slots.get_ref();
                if !(8..=4096).contains(&n) || !(n as u64).is_power_of_two() {
                    self.error(
                        slots.span().start,
                        &at("cnode_slots"),
                        format!("{n} is not a power of two from 8 to 4096"),
                    );
                    DEFAULT_CNODE_SLOTS
                } else if privileged && n as u64 != DEFAULT_PRIVILEGED_CNODE_SLOTS {
                    self.error(
                        slots.span().start,
                        &at("cnode_slots"),
                        format!(
                            "a privileged task has the root's {DEFAULT_PRIVILEGED_CNODE_SLOTS} slots"
                        ),
                    );
                    DEFAULT_PRIVILEGED_CNODE_SLOTS
                } else {
                    n as u64
                }
            }
            None if privileged => DEFAULT_PRIVILEGED_CNODE_SLOTS,
            None => DEFAULT_CNODE_SLOTS,
        };
        let command_line = match (&t.command_line, privileged) {
            (Some(line), true) => Some(line.get_ref().clone()),
            (Some(line), false) => {
                self.error(
                    line.span().start,
                    &at("command_line"),
                    "only a privileged task has a command line (`privileged = true`)",
                );
                None
            }
            (None, true) => Some(String::new()),
            (None, false) => None,
        };
        let fault_handler = t.fault_handler.as_ref().and_then(|f| {
            let f = f.get_ref();
            let object = self.object(Kind::Endpoint, &f.endpoint, &at("fault_handler.endpoint"))?;
            Some(ObjectUse {
                object,
                badge: f.badge.as_ref().map_or(0, |b| *b.get_ref()),
            })
        });
        let restart = self.restart(name, t);
        // The root restarts a task, or ends the system with it, when it
        // hears of its end: never a privileged task's, and it hears only
        // of the tasks it supervises (no fault handler of their own).
        let restarts = !matches!(
            restart,
            Restart::Never | Restart::OnFault { max: 0 } | Restart::Always { max: 0 }
        );
        let restart_at = t.restart.as_ref().map_or(0, |r| r.span().start);
        if restarts && privileged {
            self.error(
                restart_at,
                &at("restart"),
                "a privileged task is not restarted (it holds what the root handed over)",
            );
        }
        if let Some(handler) = &t.fault_handler {
            if restarts {
                self.error(
                    restart_at,
                    &at("restart"),
                    "the task's end goes to its `fault_handler`, so the root cannot restart it",
                );
            }
            if t.ends_system {
                self.error(
                    handler.span().start,
                    &at("fault_handler"),
                    "with `ends_system`: the task's end goes to its fault handler, so the root never sees it end the system",
                );
            }
        }
        let (caps, untyped_bytes) = self.caps(name, t, slots, privileged);
        let mappings = self.maps(name, t, stack);
        let filters = self.filters(name, t);
        let tracer = t.trace.as_ref().and_then(|trace| {
            let trace = trace.get_ref();
            let tracer = self.serving_task(name, &trace.tracer, &at("trace.tracer"), "tracer");
            let endpoint = self.object(Kind::Endpoint, &trace.endpoint, &at("trace.endpoint"));
            tracer?;
            Some(ObjectUse {
                object: endpoint?,
                badge: trace.badge.as_ref().map_or(0, |b| *b.get_ref()),
            })
        });
        let audit = t.audit.as_ref().and_then(|audit| {
            let audit = audit.get_ref();
            let server =
                self.serving_task(name, &audit.server, &at("audit.server"), "audit server");
            let ring = self.object(Kind::Memory, &audit.ring, &at("audit.ring"));
            if let Some(ring) = ring {
                if self.objects[usize::from(ring)].ram_bytes() != RING_BYTES {
                    self.error(
                        audit.ring.span().start,
                        &at("audit.ring"),
                        format!(
                            "the audit ring must be exactly 4 KiB (one page of {} records); {:?} is {}",
                            abi::audit::RING_SLOTS,
                            audit.ring.get_ref(),
                            show(self.objects[usize::from(ring)].ram_bytes())
                        ),
                    );
                }
            }
            let notification =
                self.object(Kind::Notification, &audit.notification, &at("audit.notification"));
            let lossless = match audit.mode.as_ref().map(|m| (m, m.get_ref().as_str())) {
                None | Some((_, "lossy")) => false,
                Some((_, "lossless")) => true,
                Some((mode, other)) => {
                    self.error(
                        mode.span().start,
                        &at("audit.mode"),
                        format!("{other:?} is not a mode (\"lossy\" or \"lossless\")"),
                    );
                    false
                }
            };
            server?;
            Some(AuditPlan {
                ring: ring?,
                notification: ObjectUse {
                    object: notification?,
                    badge: 0,
                },
                lossless,
                badge: audit.badge.as_ref().map_or(0, |b| *b.get_ref()),
            })
        });
        if self.report.0.len() > errors_before {
            return None;
        }
        Some(Task {
            name: name.to_string(),
            program: program?,
            program_at,
            priority,
            mcp,
            stack_pages: (stack / PAGE) as u16,
            memory,
            cnode_radix: slots.trailing_zeros() as u8,
            argument: t.argument,
            privileged: command_line,
            fault_handler,
            restart,
            ends_system: t.ends_system,
            caps,
            untyped_bytes,
            mappings,
            filters,
            tracer,
            audit,
        })
    }

    fn program(&mut self, name: &str, t: &d::Task) -> Option<Program> {
        let at = |field: &str| format!("tasks.{name}.{field}");
        match (&t.krate, &t.elf) {
            (Some(krate), None) => {
                let dir = self.path(krate.get_ref());
                let manifest = dir.join("Cargo.toml");
                if !dir.is_dir() {
                    self.error(
                        krate.span().start,
                        &at("crate"),
                        format!("no crate directory {}", dir.display()),
                    );
                    return None;
                }
                let package = match std::fs::read_to_string(&manifest) {
                    Ok(text) => package_name(&text),
                    Err(e) => {
                        self.error(
                            krate.span().start,
                            &at("crate"),
                            format!("cannot read {}: {e}", manifest.display()),
                        );
                        return None;
                    }
                };
                let bin = match (&t.bin, package) {
                    (Some(bin), _) => bin.get_ref().clone(),
                    (None, Some(package)) => package,
                    (None, None) => {
                        self.error(
                            krate.span().start,
                            &at("crate"),
                            format!(
                                "{} names no package; give the binary with `bin`",
                                manifest.display()
                            ),
                        );
                        return None;
                    }
                };
                Some(Program::Crate {
                    dir,
                    bin,
                    features: t.features.iter().map(|f| f.get_ref().clone()).collect(),
                })
            }
            (None, Some(elf)) => {
                for (given, field) in [
                    (t.bin.as_ref().map(|b| b.span()), "bin"),
                    (t.features.first().map(|f| f.span()), "features"),
                ] {
                    if let Some(span) = given {
                        self.error(
                            span.start,
                            &at(field),
                            format!("`{field}` is for a crate; this task has a prebuilt `elf`"),
                        );
                    }
                }
                let path = self.path(elf.get_ref());
                let bytes = self.file(elf, &at("elf"))?;
                if let Err(e) = crate::program::parse_elf(&bytes) {
                    self.error(
                        elf.span().start,
                        &at("elf"),
                        format!("{} is not an AArch64 executable: {e}", path.display()),
                    );
                    return None;
                }
                Some(Program::Elf { path, bytes })
            }
            (Some(krate), Some(_)) => {
                self.error(
                    krate.span().start,
                    &at("crate"),
                    "give `crate` or `elf`, not both",
                );
                None
            }
            (None, None) => {
                self.error(
                    self.task_span(name),
                    &format!("tasks.{name}"),
                    "the task has no program: give `crate` (a directory) or `elf` (a file)",
                );
                None
            }
        }
    }

    /// Where the task's table starts (for mistakes of omission).
    fn task_span(&self, name: &str) -> usize {
        let header = format!("[tasks.{name}]");
        self.source.text.find(&header).unwrap_or(0)
    }

    fn restart(&mut self, name: &str, t: &d::Task) -> Restart {
        let at = |field: &str| format!("tasks.{name}.{field}");
        let max = t.max_restarts.as_ref().and_then(|m| {
            self.in_range(m, &at("max_restarts"), (0, i64::from(u32::MAX)))
                .map(|m| m as u32)
        });
        let kind = t.restart.as_ref().map(|r| (r, r.get_ref().as_str()));
        match kind {
            None | Some((_, "never")) => {
                if let Some(m) = &t.max_restarts {
                    self.error(
                        m.span().start,
                        &at("max_restarts"),
                        "`max_restarts` needs `restart = \"on-fault\"` or `\"always\"`",
                    );
                }
                Restart::Never
            }
            Some((_, "on-fault")) => Restart::OnFault {
                max: max.unwrap_or(DEFAULT_MAX_RESTARTS),
            },
            Some((_, "always")) => Restart::Always {
                max: max.unwrap_or(DEFAULT_MAX_RESTARTS),
            },
            Some((r, other)) => {
                self.error(
                    r.span().start,
                    &at("restart"),
                    format!(
                        "{other:?} is not a restart rule (\"never\", \"on-fault\" or \"always\")"
                    ),
                );
                Restart::Never
            }
        }
    }

    fn caps(
        &mut self,
        name: &str,
        t: &d::Task,
        slots: u64,
        privileged: bool,
    ) -> (Vec<CapPlan>, u64) {
        let mut caps = Vec::new();
        let mut untyped_bytes = 0;
        let mut used: BTreeMap<i64, usize> = BTreeMap::new();
        self.at_most(
            &t.caps,
            MAX_TASK_CAPS,
            &format!("tasks.{name}.caps"),
            "a task is given at most",
            "capabilities",
        );
        for (i, cap) in t.caps.iter().enumerate() {
            let field = format!("tasks.{name}.caps[{i}]");
            let cap_at = cap.span().start;
            let cap = cap.get_ref();
            let slot = *cap.slot.get_ref();
            let slot_field = format!("{field}.slot");
            let first_free = abi::bootinfo::ROOT_FIRST_FREE_SLOT as i64;
            if slot == 0 {
                self.error(
                    cap.slot.span().start,
                    &slot_field,
                    "slot 0 holds the task's own CNode",
                );
            } else if slot < 0 || slot as u64 >= slots {
                self.error(
                    cap.slot.span().start,
                    &slot_field,
                    format!(
                        "slot {slot} is outside the CNode (slots 1..{slots}; see `cnode_slots`)"
                    ),
                );
            } else if privileged && slot < first_free {
                self.error(
                    cap.slot.span().start,
                    &slot_field,
                    format!("slot {slot} holds a boot capability of the privileged task (its own start at {first_free})"),
                );
            } else if let Some(first) = used.insert(slot, i) {
                self.error(
                    cap.slot.span().start,
                    &slot_field,
                    format!("slot {slot} is already given by caps[{first}]"),
                );
            }
            let kinds = [
                cap.console.is_some(),
                cap.supervisor.is_some(),
                cap.endpoint.is_some(),
                cap.notification.is_some() && cap.irq.is_none(),
                cap.irq.is_some(),
                cap.tcb.is_some(),
                cap.vspace.is_some(),
                cap.untyped.is_some(),
            ];
            if kinds.iter().filter(|&&k| k).count() != 1 {
                self.error(
                    cap_at,
                    &field,
                    "give exactly one of console, supervisor, endpoint, notification, irq (with notification), tcb, vspace, untyped",
                );
                continue;
            }
            let badge = cap.badge.as_ref().map(|b| (*b.get_ref(), b.span().start));
            let no_badge = |c: &mut Self, what: &str| {
                if let Some((_, offset)) = badge {
                    c.error(
                        offset,
                        &format!("{field}.badge"),
                        format!("a {what} capability takes no badge (only endpoints, notifications and IRQs do)"),
                    );
                }
            };
            let rights = |c: &mut Self, allowed: &str, default: &str| match &cap.rights {
                Some(r) => c.rights(r, allowed, &format!("{field}.rights")),
                None => {
                    let default = Spanned::new(0..0, default.to_string());
                    c.rights(&default, allowed, "")
                }
            };
            let made = if cap.console.is_some() {
                no_badge(self, "console");
                rights(self, "rw", "w").map(|r| (CapSource::Console, r))
            } else if cap.supervisor.is_some() {
                no_badge(self, "supervisor");
                rights(self, "wgG", "wgG").map(|r| (CapSource::Supervisor, r))
            } else if let Some(endpoint) = &cap.endpoint {
                let object = self.object(Kind::Endpoint, endpoint, &format!("{field}.endpoint"));
                let r = self.required_rights(cap, "rwgG", &field, cap_at);
                object.zip(r).map(|(object, r)| {
                    let badge = badge.map_or(0, |b| b.0);
                    (CapSource::Object(ObjectUse { object, badge }), r)
                })
            } else if let Some(intid) = &cap.irq {
                let n = self
                    .in_range(intid, &format!("{field}.irq"), (32, 1019))
                    .filter(|&n| {
                        let kept = CONSOLE_INTIDS.iter().find(|(i, _)| i64::from(*i) == n);
                        if let Some((_, board)) = kept {
                            self.error(
                                intid.span().start,
                                &format!("{field}.irq"),
                                format!("interrupt {n} is the console UART's on {board}; the kernel keeps it"),
                            );
                        }
                        kept.is_none()
                    });
                let notification = cap.notification.as_ref().and_then(|n| {
                    self.object(Kind::Notification, n, &format!("{field}.notification"))
                });
                let r = rights(self, "rw", "rw");
                match (n, notification, r) {
                    (Some(n), Some(object), Some(r)) => Some((
                        CapSource::Irq {
                            intid: n as u32,
                            notification: ObjectUse {
                                object,
                                badge: badge.map_or(0, |b| b.0),
                            },
                        },
                        r,
                    )),
                    _ => None,
                }
            } else if let Some(notification) = &cap.notification {
                let object = self.object(
                    Kind::Notification,
                    notification,
                    &format!("{field}.notification"),
                );
                let r = self.required_rights(cap, "rw", &field, cap_at);
                object.zip(r).map(|(object, r)| {
                    let badge = badge.map_or(0, |b| b.0);
                    (CapSource::Object(ObjectUse { object, badge }), r)
                })
            } else if let Some(task) = &cap.tcb {
                no_badge(self, "TCB");
                let task = self.task_index(task, &format!("{field}.tcb"));
                let r = rights(self, "rwtp", "rw");
                task.zip(r).map(|(task, r)| (CapSource::Tcb { task }, r))
            } else if let Some(vspace) = &cap.vspace {
                no_badge(self, "VSpace");
                if vspace.get_ref() != "self" {
                    self.error(
                        vspace.span().start,
                        &format!("{field}.vspace"),
                        "a task can hold only its own VSpace (`vspace = \"self\"`)",
                    );
                }
                rights(self, "rw", "rw").map(|r| (CapSource::OwnVSpace, r))
            } else if let Some(size) = &cap.untyped {
                no_badge(self, "Untyped");
                let bits = self
                    .power_of_two(size, &format!("{field}.untyped"), PAGE)
                    .filter(|&bits| {
                        let fits = bits < MAX_MEMORY_BITS;
                        if !fits {
                            self.error(
                                size.span().start,
                                &format!("{field}.untyped"),
                                format!(
                                    "an Untyped is carved from the task's memory, at most {}",
                                    show(1 << MAX_MEMORY_BITS)
                                ),
                            );
                        }
                        fits
                    });
                if let Some(bits) = bits {
                    // At most 24 of at most 2^46 bytes: no overflow.
                    untyped_bytes += 1u64 << bits;
                }
                let r = rights(self, "rw", "rw");
                bits.zip(r)
                    .map(|(bits, r)| (CapSource::Untyped { bits }, r))
            } else {
                None
            };
            if let Some((source, rights)) = made {
                caps.push(CapPlan {
                    slot: slot.clamp(0, i64::from(u32::MAX)) as u32,
                    source,
                    rights,
                });
            }
        }
        (caps, untyped_bytes)
    }

    /// Rights an endpoint or notification capability must state.
    fn required_rights(
        &mut self,
        cap: &d::Cap,
        allowed: &str,
        field: &str,
        cap_at: usize,
    ) -> Option<u8> {
        match &cap.rights {
            Some(r) => self.rights(r, allowed, &format!("{field}.rights")),
            None => {
                self.error(
                    cap_at,
                    &format!("{field}.rights"),
                    format!("say what the task may do with it (`rights`, letters: {allowed})"),
                );
                None
            }
        }
    }

    fn maps(&mut self, name: &str, t: &d::Task, stack: u64) -> Vec<(MappingPlan, u64, usize)> {
        let mut mappings: Vec<(MappingPlan, u64, usize)> = Vec::new();
        self.at_most(
            &t.maps,
            MAX_TASK_MAPPINGS,
            &format!("tasks.{name}.maps"),
            "a task maps at most",
            "objects",
        );
        let reserved = [
            (
                abi::USER_STACK_TOP - stack,
                abi::USER_STACK_TOP,
                "the stack",
            ),
            (
                abi::IPC_BUFFER_ADDRESS,
                abi::IPC_BUFFER_ADDRESS + PAGE,
                "the IPC buffer",
            ),
        ];
        for (i, map) in t.maps.iter().enumerate() {
            let field = format!("tasks.{name}.maps[{i}]");
            let map_at = map.span().start;
            let map = map.get_ref();
            let target = match (&map.memory, &map.device, &map.file) {
                (Some(m), None, None) => self
                    .object(Kind::Memory, m, &format!("{field}.memory"))
                    .map(|o| (o, false)),
                (None, Some(dv), None) => self
                    .object(Kind::Device, dv, &format!("{field}.device"))
                    .map(|o| (o, false)),
                (None, None, Some(f)) => self
                    .object(Kind::File, f, &format!("{field}.file"))
                    .map(|o| (o, true)),
                _ => {
                    self.error(map_at, &field, "give exactly one of memory, device, file");
                    None
                }
            };
            let writable = match map.rights.as_ref().map(|r| (r, r.get_ref().as_str())) {
                None => target.is_some_and(|(_, file)| !file),
                Some((_, "r")) => false,
                Some((r, "rw")) if target.is_some_and(|(_, file)| file) => {
                    self.error(
                        r.span().start,
                        &format!("{field}.rights"),
                        "files are mapped read-only",
                    );
                    false
                }
                Some((_, "rw")) => true,
                Some((r, other)) => {
                    self.error(
                        r.span().start,
                        &format!("{field}.rights"),
                        format!("{other:?} is not a mapping's rights (\"r\" or \"rw\")"),
                    );
                    false
                }
            };
            let address = *map.address.get_ref();
            let address_at = map.address.span().start;
            let address_field = format!("{field}.address");
            let Some((object, _)) = target else { continue };
            let bytes = match &self.objects[usize::from(object)].kind {
                ObjectKind::Memory { pages } | ObjectKind::Device { pages, .. } => {
                    u64::from(*pages) * PAGE
                }
                ObjectKind::File { bytes } => (bytes.len() as u64 + 8).div_ceil(PAGE) * PAGE,
                _ => continue,
            };
            let end = address.saturating_add(bytes);
            if !address.is_multiple_of(PAGE) {
                self.error(
                    address_at,
                    &address_field,
                    format!("{address:#x} is not page-aligned (a multiple of 0x1000)"),
                );
                continue;
            }
            if address < abi::vspace::USER_MAP_START || end > MAP_END {
                self.error(
                    address_at,
                    &address_field,
                    format!(
                        "{address:#x}..{end:#x} is outside {:#x}..{MAP_END:#x}",
                        abi::vspace::USER_MAP_START
                    ),
                );
                continue;
            }
            let overlap = mappings
                .iter()
                .enumerate()
                .find(|(_, (m, size, _))| address < m.address + size && m.address < end);
            if let Some((j, _)) = overlap {
                self.error(
                    address_at,
                    &address_field,
                    format!("{address:#x}..{end:#x} overlaps maps[{j}]"),
                );
                continue;
            }
            if let Some((_, _, what)) = reserved
                .iter()
                .find(|(from, to, _)| address < *to && *from < end)
            {
                self.error(
                    address_at,
                    &address_field,
                    format!("{address:#x}..{end:#x} overlaps {what}"),
                );
                continue;
            }
            mappings.push((
                MappingPlan {
                    object,
                    address,
                    writable,
                },
                bytes,
                address_at,
            ));
        }
        mappings
    }

    fn filters(&mut self, name: &str, t: &d::Task) -> Vec<(Vec<u8>, Option<ObjectUse>)> {
        let mut filters = Vec::new();
        self.at_most(
            &t.filters,
            MAX_TASK_FILTERS,
            &format!("tasks.{name}.filters"),
            "a task has at most",
            "filters",
        );
        for (i, filter) in t.filters.iter().enumerate() {
            let field = format!("tasks.{name}.filters[{i}]");
            let filter_at = filter.span().start;
            let filter = filter.get_ref();
            let description = match (&filter.rules, &filter.rules_file) {
                (Some(rules), None) => self.inline_rules(rules, &format!("{field}.rules")),
                (None, Some(path)) => {
                    let file_field = format!("{field}.rules_file");
                    self.file(path, &file_field).and_then(|bytes| {
                        self.rules_file(path, &bytes, RuleUse::Filter, &file_field)
                    })
                }
                _ => {
                    self.error(filter_at, &field, "give exactly one of rules, rules_file");
                    None
                }
            };
            if filter.server.is_none() {
                for (given, what) in [
                    (filter.endpoint.as_ref().map(|e| e.span().start), "endpoint"),
                    (filter.badge.as_ref().map(|b| b.span().start), "badge"),
                ] {
                    if let Some(offset) = given {
                        self.error(
                            offset,
                            &format!("{field}.{what}"),
                            format!("`{what}` is the policy server's; this filter has no `server`"),
                        );
                    }
                }
            }
            let server = filter.server.as_ref().and_then(|server| {
                self.serving_task(name, server, &format!("{field}.server"), "policy server")
            });
            let endpoint = filter
                .endpoint
                .as_ref()
                .and_then(|e| self.object(Kind::Endpoint, e, &format!("{field}.endpoint")));
            if let Some(description) = description {
                filters.push((
                    description,
                    // Resolved in `cross_checks`, which knows who holds
                    // what; kept here as the named endpoint, if any.
                    server.map(|_| ObjectUse {
                        object: endpoint.unwrap_or(u16::MAX),
                        badge: filter.badge.as_ref().map_or(0, |b| *b.get_ref()),
                    }),
                ));
            }
        }
        filters
    }

    /// The checks that need every task: who holds what, with which rights.
    /// Returns the endpoints of filters that named a server but no
    /// endpoint: (task, filter, endpoint).
    fn cross_checks(
        &mut self,
        description: &Description,
        tasks: &[Task],
    ) -> Vec<(usize, usize, u16)> {
        let mut resolved = Vec::new();
        // held[task][object] = union of rights.
        let held: Vec<BTreeMap<u16, u8>> = tasks
            .iter()
            .map(|task| {
                let mut held = BTreeMap::new();
                for cap in &task.caps {
                    if let CapSource::Object(u) = cap.source {
                        *held.entry(u.object).or_insert(0) |= cap.rights;
                    }
                }
                held
            })
            .collect();
        let read = Rights::READ.into_bytes()[0];
        let reads =
            |task: usize, object: u16| held[task].get(&object).is_some_and(|r| r & read != 0);
        let task_of = |name: &str| tasks.iter().position(|t| t.name == name);
        for (t, (name, written)) in description.tasks.iter().enumerate() {
            let written = written.get_ref();
            let name = name.get_ref();
            for (i, filter) in written.filters.iter().enumerate() {
                let filter_at = filter.span().start;
                let filter = filter.get_ref();
                let field = format!("tasks.{name}.filters[{i}]");
                let notifies = tasks[t].filters.get(i).is_some_and(|(bytes, _)| {
                    abi::policy::decode(bytes).is_ok_and(|d| d.asks_a_server())
                });
                let Some(server) = &filter.server else {
                    if notifies {
                        self.error(
                            filter_at,
                            &format!("{field}.server"),
                            "a rule or the default says `notify`, so the filter needs a policy `server`",
                        );
                    }
                    continue;
                };
                if !notifies {
                    self.error(
                        server.span().start,
                        &format!("{field}.server"),
                        "neither a rule nor the default says `notify`: the server would never be asked",
                    );
                    continue;
                }
                let Some(s) = task_of(server.get_ref()) else {
                    continue;
                };
                let endpoints: Vec<u16> = held[s]
                    .keys()
                    .copied()
                    .filter(|&o| {
                        matches!(self.objects[usize::from(o)].kind, ObjectKind::Endpoint)
                            && reads(s, o)
                    })
                    .collect();
                match &filter.endpoint {
                    Some(endpoint) => {
                        let object = tasks[t].filters[i].1.map(|u| u.object);
                        if object.is_some_and(|o| !reads(s, o)) {
                            self.error(
                                endpoint.span().start,
                                &format!("{field}.endpoint"),
                                format!(
                                    "the server {:?} does not hold endpoint {:?} with r",
                                    server.get_ref(),
                                    endpoint.get_ref()
                                ),
                            );
                        }
                    }
                    None if endpoints.len() == 1 => resolved.push((t, i, endpoints[0])),
                    None => self.error(
                        server.span().start,
                        &format!("{field}.server"),
                        format!(
                            "the server {:?} holds {} endpoints with r; name one with `endpoint`",
                            server.get_ref(),
                            endpoints.len()
                        ),
                    ),
                }
            }
            if let Some(trace) = &written.trace {
                let trace = trace.get_ref();
                if let (Some(s), Some(u)) = (task_of(trace.tracer.get_ref()), tasks[t].tracer) {
                    if !reads(s, u.object) {
                        self.error(
                            trace.tracer.span().start,
                            &format!("tasks.{name}.trace.tracer"),
                            format!(
                                "the tracer {:?} does not hold endpoint {:?} with r",
                                trace.tracer.get_ref(),
                                trace.endpoint.get_ref()
                            ),
                        );
                    }
                }
            }
            if let Some(audit) = &written.audit {
                let audit = audit.get_ref();
                if let (Some(s), Some(plan)) = (task_of(audit.server.get_ref()), tasks[t].audit) {
                    if !reads(s, plan.notification.object) {
                        self.error(
                            audit.server.span().start,
                            &format!("tasks.{name}.audit.server"),
                            format!(
                                "the audit server {:?} does not hold notification {:?} with r",
                                audit.server.get_ref(),
                                audit.notification.get_ref()
                            ),
                        );
                    }
                    match tasks[s].mappings.iter().find(|m| m.0.object == plan.ring) {
                        None => self.error(
                            audit.ring.span().start,
                            &format!("tasks.{name}.audit.ring"),
                            format!(
                                "the audit server {:?} does not map {:?}",
                                audit.server.get_ref(),
                                audit.ring.get_ref()
                            ),
                        ),
                        // It moves the ring's consumed counter: read-only, a
                        // lossless task would wait for room for ever.
                        Some(mapping) if !mapping.0.writable => self.error(
                            audit.ring.span().start,
                            &format!("tasks.{name}.audit.ring"),
                            format!(
                                "the audit server {:?} maps {:?} read-only; it writes the ring's consumed counter (rights = \"rw\")",
                                audit.server.get_ref(),
                                audit.ring.get_ref()
                            ),
                        ),
                        Some(_) => {}
                    }
                }
            }
        }
        // Every endpoint and notification is received from by some task.
        for (kind, table) in [
            (Kind::Endpoint, &description.endpoints),
            (Kind::Notification, &description.notifications),
        ] {
            for (name, _) in table {
                let Some(&object) = self.names.get(&kind).and_then(|t| t.get(name.get_ref()))
                else {
                    continue;
                };
                let holders = (0..tasks.len()).filter(|&t| held[t].contains_key(&object));
                if holders.clone().count() == 0 {
                    self.error(
                        name.span().start,
                        &format!("{}.{}", kind.table(), name.get_ref()),
                        format!("no task holds {} {:?}", kind.singular(), name.get_ref()),
                    );
                } else if !holders.clone().any(|t| reads(t, object)) {
                    self.error(
                        name.span().start,
                        &format!("{}.{}", kind.table(), name.get_ref()),
                        format!(
                            "tasks hold {} {:?} but none with r: nobody would receive what is sent",
                            kind.singular(),
                            name.get_ref()
                        ),
                    );
                }
            }
        }
        // Interrupts are given once.
        let mut irqs: BTreeMap<u32, String> = BTreeMap::new();
        for (task, (name, written)) in tasks.iter().zip(&description.tasks) {
            for (i, cap) in task.caps.iter().enumerate() {
                if let CapSource::Irq { intid, .. } = cap.source {
                    if let Some(first) = irqs.insert(intid, task.name.clone()) {
                        let at = written.get_ref().caps[i].get_ref().irq.as_ref();
                        self.error(
                            at.map_or(0, |a| a.span().start),
                            &format!("tasks.{}.caps[{i}].irq", name.get_ref()),
                            format!("interrupt {intid} is already given to {first:?}"),
                        );
                    }
                }
            }
        }
        if irqs.len() > MAX_IRQS {
            self.error(0, "", format!("more than {MAX_IRQS} interrupts are given"));
        }
        // One privileged task at most.
        let mut first: Option<&str> = None;
        for (name, written) in &description.tasks {
            if let Some(p) = written
                .get_ref()
                .privileged
                .as_ref()
                .filter(|p| *p.get_ref())
            {
                match first {
                    Some(first) => self.error(
                        p.span().start,
                        &format!("tasks.{}.privileged", name.get_ref()),
                        format!("{first:?} is privileged already; at most one task is"),
                    ),
                    None => first = Some(name.get_ref()),
                }
            }
        }
        // The kernel maps a Frame in one place at a time: a memory
        // region, device or file is mapped by one task at most (an audit
        // ring also serves the kernel, which writes it by its address).
        let mut mapped: std::collections::HashMap<(&str, &str), String> = Default::default();
        for (name, written) in &description.tasks {
            for (i, map) in written.get_ref().maps.iter().enumerate() {
                let map = map.get_ref();
                let target = [
                    ("memory", &map.memory),
                    ("device", &map.device),
                    ("file", &map.file),
                ]
                .into_iter()
                .find_map(|(kind, object)| object.as_ref().map(|o| (kind, o)));
                let Some((kind, object)) = target else {
                    continue;
                };
                let field = format!("tasks.{}.maps[{i}].{kind}", name.get_ref());
                match mapped.get(&(kind, object.get_ref().as_str())) {
                    Some(first) => self.error(
                        object.span().start,
                        &field,
                        format!(
                            "{kind} {:?} is mapped by {first} already; the kernel maps a Frame in one place at a time",
                            object.get_ref()
                        ),
                    ),
                    None => {
                        mapped.insert((kind, object.get_ref().as_str()), field.clone());
                    }
                }
            }
        }
        resolved
    }
}

/// The package name in a Cargo.toml.
fn package_name(manifest: &str) -> Option<String> {
    let value: toml::Table = toml::from_str(manifest).ok()?;
    value
        .get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// Encodes a compiled filter (valid by construction: the rule compiler
/// only builds what `abi::policy` accepts).
fn encode(description: &abi::policy::FilterDescription) -> Vec<u8> {
    let mut buffer = vec![0u8; abi::policy::MAX_DESCRIPTION_BYTES];
    abi::policy::encode(description, &mut buffer)
        .map(<[u8]>::to_vec)
        .unwrap_or_default()
}

/// The byte offset in `text` of (1-based) `line`, `column` of the string
/// whose literal spans `span`. TOML drops a newline right after an opening
/// `"""` or `'''`; escapes are assumed not to cross the line (a rule line
/// with an escape may be off by a few columns, never by a line).
pub fn string_offset(
    text: &str,
    span: std::ops::Range<usize>,
    line: usize,
    column: usize,
) -> usize {
    let literal = &text[span.clone()];
    let mut start = span.start;
    for quote in ["\"\"\"", "'''", "\"", "'"] {
        if literal.starts_with(quote) {
            start += quote.len();
            let rest = &text[start..];
            if quote.len() == 3 {
                if rest.starts_with("\r\n") {
                    start += 2;
                } else if rest.starts_with('\n') {
                    start += 1;
                }
            }
            break;
        }
    }
    let mut offset = start;
    for _ in 1..line {
        match text[offset..span.end].find('\n') {
            Some(n) => offset += n + 1,
            None => break,
        }
    }
    text[offset..]
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(offset, |(i, _)| offset + i)
}
