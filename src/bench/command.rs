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
use super::outputs::{
    default_json_path, docs_dir, previous_json_path, results_dir, write_docs, write_json,
};
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
    /// Write the results page and chart to docs/bench/ (committed) instead
    /// of target/bench/.
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

/// Where the results page and chart go: docs/bench/ with `--update-docs`,
/// else target/bench/ for a run of the whole suite in instructions (the
/// page shows every row and compares instructions with the peers), else
/// nowhere.
pub fn page_dir(options: &BenchOptions) -> Option<PathBuf> {
    let settings = &options.settings;
    if options.update_docs {
        Some(docs_dir())
    } else if settings.icount && settings.filter.is_none() {
        Some(results_dir())
    } else {
        None
    }
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
    if let Some(dir) = page_dir(options) {
        let setup = DocSetup {
            unit: options.settings.unit(),
            qemu_command: qemu_command.to_string(),
        };
        let written = write_docs(&dir, results, &setup).map_err(|error| {
            format!(
                "cannot write the results page in {}: {error}",
                dir.display()
            )
        })?;
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
    use crate::machine::Machine;

    #[test]
    fn only_update_docs_writes_into_the_clone() {
        let mut options = BenchOptions {
            settings: BenchSettings::new(Machine::Virt),
            compare: None,
            json: None,
            update_docs: false,
        };
        assert_eq!(page_dir(&options), Some(results_dir()));
        options.settings.filter = Some("ipc".into());
        assert_eq!(page_dir(&options), None);
        options.settings.filter = None;
        options.settings.icount = false;
        assert_eq!(page_dir(&options), None);
        options.settings.icount = true;
        options.update_docs = true;
        assert_eq!(page_dir(&options), Some(docs_dir()));
    }

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
