//! The fuzz targets' short form, on the stable toolchain: every file of
//! every seed corpus (`fuzz/corpus/<target>/`), then a fixed-seed run of
//! mutated seeds, through the same entry functions libFuzzer drives
//! (`fuzz/src`, included by path). A panic is a finding; the input is
//! written to `target/tmp/host_fuzz_corpus/` for `cargo fuzz run <target>
//! <file>` and for the corpus. `docs/fuzzing.md` describes the targets.
//!
//! Open findings — inputs that still crash code the fuzzers found a bug in
//! — live in `fuzz/findings/<target>/` until the bug is fixed. They must
//! still panic (when one stops, the bug is fixed: move the file into the
//! corpus), and the mutation run counts a panic at the same place as an
//! open finding's as that finding, not as a new one.
//!
//! `PORTCULLIS_FUZZ_SEED` and `PORTCULLIS_FUZZ_MUTATIONS` change the
//! mutation run's seed and length (per target; 2 000 by default).

#[path = "../fuzz/src/lib.rs"]
mod portcullis_fuzz;

use portcullis_fuzz::{Entry, TARGETS};
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The default seed of the mutation run.
const SEED: u64 = 0x5eed_f022_c0de_0001;
/// Mutated inputs per target by default.
const MUTATIONS: usize = 2_000;
/// Mutated inputs never grow past this (the seeds are much smaller, except
/// the ELF and device-tree files).
const MAX_INPUT: usize = 256 * 1024;

fn fuzz_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
}

/// The files of `fuzz/<kind>/<target>/` (none if there is no such
/// directory), sorted by name so that runs are reproducible.
fn files(kind: &str, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_dir(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), bytes)
        })
        .collect();
    files.sort();
    files
}

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    files("corpus", target)
}

/// A panic caught in an entry: where and what.
#[derive(Debug)]
struct Panic {
    /// Where it panicked (see `panic_site`).
    location: String,
    message: String,
}

thread_local! {
    /// Set while an entry runs: its panics are caught and reported by
    /// `run_one`, so the hook keeps quiet.
    static IN_ENTRY: Cell<bool> = const { Cell::new(false) };
    /// The location of the last panic in an entry on this thread.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once per process) a panic hook that records where entries
/// panic; other panics (the tests' own assertions) print as usual.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_ENTRY.with(Cell::get) {
                let location = info.location().map(panic_site).unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(location));
            } else {
                default(info);
            }
        }));
    });
}

/// Where a panic counts as being: `file:line` in our code; the crate
/// (`.../fdt-0.1.5/`) for a dependency from the registry, where one
/// malformed-input bug shows at many lines and is fixed once (validate
/// before calling it, or replace it).
fn panic_site(location: &panic::Location<'_>) -> String {
    let file = location.file();
    match file.find("/registry/src/") {
        Some(registry) => {
            let crate_dir = file[registry..].split('/').take(5).collect::<Vec<_>>();
            format!("{}/ (any line)", crate_dir.join("/"))
        }
        None => format!("{file}:{}", location.line()),
    }
}

/// Runs `entry` on `input`, catching a panic.
fn run_entry(entry: Entry, input: &[u8]) -> Result<(), Panic> {
    install_panic_hook();
    IN_ENTRY.with(|f| f.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| entry(input)));
    IN_ENTRY.with(|f| f.set(false));
    result.map_err(|payload| Panic {
        location: LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_default(),
        message: payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    })
}

/// Runs `entry` on `input`; a panic is reported with `what` and the input
/// saved for replay.
fn run_one(target: &str, entry: Entry, what: &str, input: &[u8]) -> Result<(), String> {
    run_entry(entry, input).map_err(|panic| {
        let saved = save_finding(target, input);
        format!(
            "{target}: {what} panicked at {}: {}\n  input saved to {saved}",
            panic.location, panic.message
        )
    })
}

fn save_finding(target: &str, input: &[u8]) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("host_fuzz_corpus");
    let path = dir.join(format!("{target}-{:016x}", fnv1a(input)));
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, input)) {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(not saved: {e})"),
    }
}

/// A content hash to name saved findings.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[test]
fn every_target_has_a_seed_corpus_and_every_directory_a_target() {
    for (target, _) in TARGETS {
        assert!(
            !seeds(target).is_empty(),
            "fuzz/corpus/{target} has no seeds"
        );
    }
    for kind in ["corpus", "findings"] {
        let Ok(dirs) = std::fs::read_dir(fuzz_dir(kind)) else {
            continue;
        };
        for dir in dirs {
            let name = dir.expect("fuzz directory entry").file_name();
            let name = name.to_string_lossy();
            assert!(
                TARGETS.iter().any(|(t, _)| *t == name),
                "fuzz/{kind}/{name} belongs to no target"
            );
        }
    }
}

#[test]
fn every_corpus_file_passes_its_target() {
    let mut findings = Vec::new();
    for (target, entry) in TARGETS {
        for (name, bytes) in seeds(target) {
            if let Err(finding) = run_one(target, entry, &name, &bytes) {
                findings.push(finding);
            }
        }
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}

/// Where each open finding of `target` panics.
fn open_finding_locations(target: &str, entry: Entry) -> Result<BTreeSet<String>, String> {
    let mut locations = BTreeSet::new();
    for (name, bytes) in files("findings", target) {
        match run_entry(entry, &bytes) {
            Err(panic) => {
                locations.insert(panic.location);
            }
            Ok(()) => {
                return Err(format!(
                    "{name} no longer panics: the bug is fixed; move it into fuzz/corpus/{target}/ \
                     and drop it from the open findings in docs/fuzzing.md"
                ))
            }
        }
    }
    Ok(locations)
}

#[test]
fn open_findings_still_reproduce() {
    let fixed: Vec<String> = TARGETS
        .into_iter()
        .filter_map(|(target, entry)| open_finding_locations(target, entry).err())
        .collect();
    assert!(fixed.is_empty(), "{}", fixed.join("\n"));
}

/// xorshift64*: small, fast, and the same on every host.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that sit on the edges of fields: zero, signs, lengths, tags.
const INTERESTING: [u8; 10] = [0, 1, 2, 3, 4, 0x7f, 0x80, 0xfe, 0xff, 9];

/// One to eight random edits of `input`, as libFuzzer's basic mutators
/// make them: flip a bit, set a byte (random or an edge value), insert or
/// remove a run, copy a run from another seed, cut the tail, write a
/// 32-bit big-endian edge value (device-tree and ELF header fields).
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, donors: &[(String, Vec<u8>)]) {
    for _ in 0..1 + rng.below(8) {
        let len = input.len();
        match rng.below(8) {
            0 if len > 0 => {
                let at = rng.below(len);
                input[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                input[at] = rng.next() as u8;
            }
            2 if len > 0 => {
                let at = rng.below(len);
                input[at] = INTERESTING[rng.below(INTERESTING.len())];
            }
            3 => {
                let at = rng.below(len + 1);
                let run: Vec<u8> = (0..1 + rng.below(16)).map(|_| rng.next() as u8).collect();
                input.splice(at..at, run);
            }
            4 if len > 0 => {
                let at = rng.below(len);
                let end = (at + 1 + rng.below(16)).min(len);
                input.drain(at..end);
            }
            5 => {
                let (_, donor) = &donors[rng.below(donors.len())];
                if !donor.is_empty() {
                    let from = rng.below(donor.len());
                    let end = (from + 1 + rng.below(64)).min(donor.len());
                    let at = rng.below(len + 1);
                    input.splice(at..at, donor[from..end].iter().copied());
                }
            }
            6 if len > 0 => input.truncate(rng.below(len)),
            7 if len >= 4 => {
                let at = rng.below(len - 3);
                let value: u32 = match rng.below(4) {
                    0 => 0,
                    1 => u32::MAX,
                    2 => len as u32,
                    _ => 1 << rng.below(32),
                };
                input[at..at + 4].copy_from_slice(&value.to_be_bytes());
            }
            _ => input.push(rng.next() as u8),
        }
    }
    input.truncate(MAX_INPUT);
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a number")),
        Err(_) => default,
    }
}

/// The mutation run over the targets `include` picks.
fn mutation_run(include: impl Fn(&str) -> bool) {
    let seed = env_or("PORTCULLIS_FUZZ_SEED", SEED);
    let mutations = env_or("PORTCULLIS_FUZZ_MUTATIONS", MUTATIONS);
    println!("mutation run: seed {seed:#x}, {mutations} inputs per target");
    let mut findings = Vec::new();
    for (number, (target, entry)) in TARGETS.into_iter().enumerate() {
        if !include(target) {
            continue;
        }
        // A fixed open finding is `open_findings_still_reproduce`'s report.
        let known = open_finding_locations(target, entry).unwrap_or_default();
        let seeds = seeds(target);
        // Each target its own stream, so adding a target changes no other.
        let mut rng = Rng(seed ^ (number as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut known_hits = 0;
        let started = std::time::Instant::now();
        for i in 0..mutations {
            let (name, base) = &seeds[rng.below(seeds.len())];
            let mut input = base.clone();
            mutate(&mut rng, &mut input, &seeds);
            match run_entry(entry, &input) {
                Ok(()) => {}
                Err(panic) if known.contains(&panic.location) => known_hits += 1,
                Err(panic) => {
                    let saved = save_finding(target, &input);
                    findings.push(format!(
                        "{target}: mutation {i} of {name} (seed {seed:#x}) panicked at {}: {}\n  \
                         input saved to {saved}",
                        panic.location, panic.message
                    ));
                    break; // one new finding per target is enough to act on
                }
            }
        }
        println!(
            "{target}: {mutations} inputs in {:.2?}, {known_hits} hit an open finding",
            started.elapsed()
        );
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}

/// The capability table is the slow target (its invariant check after
/// every step is O(slots x objects)); on its own it runs beside the rest.
const SLOW_TARGET: &str = "cap_table_ops";

#[test]
fn mutated_inputs_keep_every_property() {
    mutation_run(|target| target != SLOW_TARGET);
}

#[test]
fn mutated_capability_operations_keep_every_invariant() {
    mutation_run(|target| target == SLOW_TARGET);
}
