//! The kernel core's layout rules (docs/architecture.md, "The kernel core,
//! file by file"), checked on its sources so that they cannot erode
//! unnoticed:
//!
//! * no file of `src/` is over 800 lines, tests included;
//! * tests live in files of their own (no inline `mod tests { ... }`);
//! * `ids.rs`, the names and limits every part shares, uses nothing else
//!   of the crate;
//! * no two top-level modules use each other (the module graph has no
//!   two-module cycle), so each can be read knowing only what it uses.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn all_sources() -> Vec<(String, String)> {
    let root = src();
    let mut paths = Vec::new();
    sources(&root, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .expect("under src/")
                .to_string_lossy()
                .into_owned();
            let text = fs::read_to_string(&path).expect("a source file is text");
            (name, text)
        })
        .collect()
}

/// A file that only tests: a `tests.rs`, a file in a `tests/` folder, or
/// one named for tests.
fn is_test_file(name: &str) -> bool {
    name.ends_with("tests.rs")
        || name.contains("tests/")
        || name.ends_with("test_support.rs")
        || name.ends_with("test_kernel.rs")
}

#[test]
fn no_source_file_is_over_800_lines() {
    let long: Vec<String> = all_sources()
        .into_iter()
        .filter(|(_, text)| text.lines().count() > MAX_LINES)
        .map(|(name, text)| format!("{name}: {} lines", text.lines().count()))
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn tests_live_in_files_of_their_own() {
    let inline: Vec<String> = all_sources()
        .into_iter()
        .filter(|(_, text)| {
            let lines: Vec<&str> = text.lines().collect();
            lines.windows(2).any(|pair| {
                pair[0].trim() == "#[cfg(test)]"
                    && pair[1].trim_start().starts_with("mod ")
                    && pair[1].trim_end().ends_with('{')
            })
        })
        .map(|(name, _)| name)
        .collect();
    assert!(inline.is_empty(), "inline test modules in {inline:?}");
}

/// The crate's top-level modules `text` names (`crate::name`).
fn uses(text: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let name: String = text[at + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        if !name.is_empty() {
            used.insert(name);
        }
    }
    used
}

#[test]
fn ids_is_a_leaf() {
    let ids = fs::read_to_string(src().join("ids.rs")).expect("ids.rs");
    assert!(uses(&ids).is_empty(), "ids.rs uses {:?}", uses(&ids));
}

#[test]
fn no_two_top_level_modules_use_each_other() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, text) in all_sources() {
        if is_test_file(&name) || name == "lib.rs" || name == "main.rs" {
            continue;
        }
        let module = name
            .split(['/', '.'])
            .next()
            .expect("a path has a first part")
            .to_string();
        let mut used = uses(&text);
        used.remove(&module);
        graph.entry(module).or_default().extend(used);
    }
    let mut cycles = Vec::new();
    for (a, used) in &graph {
        for b in used {
            if a < b && graph.get(b).is_some_and(|back| back.contains(a)) {
                cycles.push(format!("{a} <-> {b}"));
            }
        }
    }
    assert!(cycles.is_empty(), "modules that use each other: {cycles:?}");
}
