//! `portcullis bench`: boot the suite, print the table and JSON lines,
//! compare with an earlier run, write the JSON file and the docs.
//!
//! stdout carries only results (the table, the JSON lines, the
//! comparison), so it can be piped; the guest's live output, the QEMU
//! command and the verdict go to stderr.

use std::fs;
use std::path::PathBuf;

use super::compare::{compare, comparison_table};
use super::docs_markdown::DocSetup;
use super::json_lines::{parse_json_lines, to_json_lines};
use super::outputs::{default_json_path, docs_dir, previous_json_path, write_docs, write_json};
use super::result::BenchResult;
use super::results_table::results_table;
use super::run::{portable_command, BenchOutcome, BenchSettings};
use crate::qemu::Echo;
use crate::session;

/// Everything `portcullis bench` was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchOptions {
    /// How to run the suite.
    pub settings: BenchSettings,
    /// An earlier JSON-lines file to compare medians with.
    pub compare: Option<PathBuf>,
    /// Where to write the JSON lines (`None`: target/bench/latest.json,
    /// whose previous contents move to target/bench/previous.json).
    pub json: Option<PathBuf>,
    /// Regenerate docs/bench/results.md and results.svg.
    pub update_docs: bool,
}

/// Exit status when QEMU or the kernel image cannot be found or started.
pub const STATUS_CANNOT_RUN: u8 = 125;
/// Exit status when a file cannot be read or written (EX_IOERR).
pub const STATUS_IO_ERROR: u8 = 74;

/// What stdout shows for one run: the table, a blank line, the JSON lines.
pub fn results_text(results: &[BenchResult]) -> String {
    format!("{}\n{}", results_table(results), to_json_lines(results))
}

/// Runs the command; returns the process exit status.
pub fn run_bench_command(options: &BenchOptions) -> u8 {
    // Read the comparison first: a bad file should not cost a whole run.
    let earlier = match &options.compare {
        None => None,
        Some(path) => match fs::read_to_string(path)
            .map_err(|error| error.to_string())
            .and_then(|text| parse_json_lines(&text).map_err(|error| error.to_string()))
        {
            Ok(results) => Some(results),
            Err(error) => {
                eprintln!("portcullis: cannot read {}: {error}", path.display());
                return STATUS_IO_ERROR;
            }
        },
    };

    let request = options.settings.run_request(Echo::LiveOnStderr);
    let prepared = match session::prepare(&request) {
        Ok(prepared) => prepared,
        Err(error) => {
            eprintln!("portcullis: {error}");
            return STATUS_CANNOT_RUN;
        }
    };
    for warning in &prepared.warnings {
        eprintln!("portcullis: warning: {warning}");
    }
    eprintln!(
        "portcullis: QEMU {} on {}: {}",
        prepared.qemu.version,
        request.machine,
        prepared.command_line()
    );
    let outcome = match prepared.run() {
        Ok(run) => BenchOutcome::judge(run, options.settings.unit()),
        Err(error) => {
            eprintln!("portcullis: {error}");
            return STATUS_CANNOT_RUN;
        }
    };
    if !outcome.run.guest_output.ends_with('\n') && !outcome.run.guest_output.is_empty() {
        eprintln!();
    }

    let results = &outcome.report.results;
    print!("{}", results_text(results));
    if let Some(earlier) = &earlier {
        println!();
        print!("{}", comparison_table(&compare(earlier, results)));
    }

    let mut status = u8::try_from(outcome.exit_code()).unwrap_or(1);
    if outcome.passed() {
        if let Err(error) = write_files(options, results, &portable_command(&prepared)) {
            eprintln!("portcullis: {error}");
            status = STATUS_IO_ERROR;
        }
    } else {
        eprintln!("portcullis: the run failed, so no result file or doc was written");
    }
    eprintln!("portcullis: {}", outcome.verdict_line());
    status
}

fn write_files(
    options: &BenchOptions,
    results: &[BenchResult],
    qemu_command: &str,
) -> Result<(), String> {
    let (json, previous) = match &options.json {
        Some(path) => (path.clone(), None),
        None => (default_json_path(), Some(previous_json_path())),
    };
    write_json(&json, results, previous.as_deref())
        .map_err(|error| format!("cannot write {}: {error}", json.display()))?;
    eprintln!("portcullis: wrote {}", json.display());
    if options.update_docs {
        let setup = DocSetup {
            unit: options.settings.unit(),
            qemu_command: qemu_command.to_string(),
        };
        let dir = docs_dir();
        let written = write_docs(&dir, results, &setup)
            .map_err(|error| format!("cannot write the docs in {}: {error}", dir.display()))?;
        for path in written {
            eprintln!("portcullis: wrote {}", path.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{Tenths, Unit};

    #[test]
    fn stdout_is_the_table_then_one_json_object_per_line() {
        let result = BenchResult {
            name: "null_syscall".into(),
            unit: Unit::Instructions,
            iterations: 10,
            min: 31,
            median: 31,
            mean: Tenths(310),
            max: 31,
            overhead: 1,
        };
        let text = results_text(&[
            result.clone(),
            BenchResult {
                name: "floor_svc_eret".into(),
                ..result
            },
        ]);
        let json: Vec<&str> = text.lines().filter(|line| line.starts_with('{')).collect();
        assert_eq!(json.len(), 2);
        assert!(json.iter().all(|line| line.ends_with('}')));
        assert!(text.starts_with("name "));
        assert!(text.contains("\n\n{\"name\":\"null_syscall\""));
    }
}
