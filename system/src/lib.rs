//! The host tool behind Portcullis systems: it checks a system
//! description (one TOML file, `docs/systems.md`), builds the tasks'
//! crates, lays out the plan (`abi::system::plan`) and writes the system
//! image (`abi::system::image`) the root task executes at boot.
//!
//! Principles, in the order the code keeps them:
//!
//! 1. **Every mistake is found here, not at boot**, and named by file,
//!    line, column and field ([`Diagnostic`]); independent mistakes are
//!    all reported in one run. The root only executes a checked plan.
//! 2. **Three steps**: [`load`] (parse and check all that needs no
//!    build), [`build`] (compile, strip, check what needs the programs:
//!    memory estimates, overlaps, the budget), [`pack`] (write the
//!    image). [`build_image`] runs all three.
//! 3. **The plan is the ABI's**: objects and tasks keep the file's
//!    order; indices, rights and sizes are the `abi` types, and the
//!    image is re-opened with `Plan::open` in the tests.
//! 4. **Rule text is compiled in one place** ([`compile_rules`]) so the
//!    shared grammar can replace the local parser there alone.
#![forbid(unsafe_code)]

mod check;
mod description;
mod diagnostic;
mod model;
mod pack;
mod program;
mod rules;

pub use check::{
    DEFAULT_BUDGET, DEFAULT_CNODE_SLOTS, DEFAULT_MAX_RESTARTS, DEFAULT_PRIORITY,
    DEFAULT_PRIVILEGED_CNODE_SLOTS, DEFAULT_STACK, MAP_END, MAX_STACK, RING_BYTES,
};
pub use diagnostic::{Diagnostic, Diagnostics};
pub use model::{show, Object, ObjectKind, Program, System, Task, MIN_TASK_MEMORY};
pub use pack::pack;
pub use program::{
    build, parse_elf, scrub_host_build_variables, user_rustflags, BuildOptions, Built, BuiltTask,
    USER_TARGET, WORKSPACE_PROFILE,
};
pub use rules::{compile_rules, RuleError, RuleUse};

use diagnostic::Source;
use std::fmt;
use std::path::Path;

/// Reads, parses and checks the description at `path`: everything that
/// needs no build (names, references, slots, rights, sizes, rules, files,
/// prebuilt ELFs, and the budget from the sizes known so far).
pub fn load(path: &Path) -> Result<System, Diagnostics> {
    let text = std::fs::read_to_string(path).map_err(|e| Diagnostic {
        file: path.to_path_buf(),
        line: 1,
        column: 1,
        field: String::new(),
        message: format!("cannot read the description: {e}"),
    })?;
    let source = Source::new(path, text);
    let description = parse(&source)?;
    check::check(&source, description)
}

/// TOML syntax and shape: unknown keys, wrong types, missing fields.
/// Serde stops at the first such mistake, so this reports one.
fn parse(source: &Source) -> Result<description::Description, Diagnostics> {
    let tree = toml::de::DeTable::parse(&source.text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        source.at(offset, "", format!("TOML syntax: {}", e.message()))
    })?;
    let deserializer = toml::de::Deserializer::from(tree.clone());
    serde::Deserialize::deserialize(deserializer).map_err(|e: toml::de::Error| {
        let span = e.span().unwrap_or(0..0);
        let field = field_at(tree.get_ref(), span.start).join(".");
        source
            .at(span.start, &field.replace(".[", "["), e.message().trim())
            .into()
    })
}

/// The path of keys (and `[index]`es) down to the deepest value or key
/// at byte `offset`.
fn field_at(table: &toml::de::DeTable<'_>, offset: usize) -> Vec<String> {
    for (key, value) in table {
        let in_key = key.span().contains(&offset);
        if in_key || value.span().contains(&offset) {
            let mut path = vec![key.get_ref().to_string()];
            if !in_key {
                path.extend(value_field_at(value.get_ref(), offset));
            }
            return path;
        }
    }
    // Headers (`[tasks.app]`) own no span around their body: find the
    // nearest table whose contents come before `offset`.
    let mut best: Option<(usize, Vec<String>)> = None;
    for (key, value) in table {
        if let toml::de::DeValue::Table(inner) = value.get_ref() {
            let mut path = vec![key.get_ref().to_string()];
            let inner_path = field_at(inner, offset);
            let start = key.span().start;
            if start <= offset && best.as_ref().is_none_or(|(s, _)| start >= *s) {
                path.extend(inner_path);
                best = Some((start, path));
            }
        }
    }
    best.map(|(_, p)| p).unwrap_or_default()
}

fn value_field_at(value: &toml::de::DeValue<'_>, offset: usize) -> Vec<String> {
    match value {
        toml::de::DeValue::Table(table) => field_at(table, offset),
        toml::de::DeValue::Array(array) => array
            .iter()
            .enumerate()
            .find(|(_, v)| v.span().contains(&offset))
            .map(|(i, v)| {
                let mut path = vec![format!("[{i}]")];
                path.extend(value_field_at(v.get_ref(), offset));
                path
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// One line per task, for the runner to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The system's name.
    pub name: String,
    /// The image's size in bytes.
    pub image_bytes: usize,
    /// The budget.
    pub budget: u64,
    /// Each task: name, memory, estimate.
    pub tasks: Vec<TaskSummary>,
}

/// One task of a [`Summary`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSummary {
    /// Its name.
    pub name: String,
    /// Its memory.
    pub memory: u64,
    /// What it needs of it.
    pub estimate: u64,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total: u64 = self.tasks.iter().map(|t| t.memory).sum();
        write!(
            f,
            "system {}: {} task{}, {} of task memory (budget {}), image {} bytes",
            self.name,
            self.tasks.len(),
            if self.tasks.len() == 1 { "" } else { "s" },
            show(total),
            show(self.budget),
            self.image_bytes
        )?;
        for task in &self.tasks {
            write!(
                f,
                "\n  {:<16} memory {:>8}  (needs {})",
                task.name,
                show(task.memory),
                show(task.estimate)
            )?;
        }
        Ok(())
    }
}

/// [`load`], [`build`] and [`pack`]: the image of the description at
/// `path`, and a summary to print.
pub fn build_image(path: &Path, options: &BuildOptions) -> Result<(Vec<u8>, Summary), Diagnostics> {
    let system = load(path)?;
    let built = build(&system, options)?;
    let image = pack(&system, &built)?;
    let summary = Summary {
        name: system.name.clone(),
        image_bytes: image.len(),
        budget: system.budget,
        tasks: system
            .tasks
            .iter()
            .zip(&built.tasks)
            .map(|(task, program)| TaskSummary {
                name: task.name.clone(),
                memory: program.memory,
                estimate: program.estimate,
            })
            .collect(),
    };
    Ok((image, summary))
}
