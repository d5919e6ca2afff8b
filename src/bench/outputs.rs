//! Where a benchmark run's results are written: the JSON-lines file and
//! the generated docs.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::docs_markdown::{results_markdown, DocSetup};
use super::docs_svg::results_svg;
use super::json_lines::to_json_lines;
use super::result::BenchResult;
use crate::artifacts::workspace_root;

/// The JSON-lines file a run writes unless `--json` says otherwise.
pub fn default_json_path() -> PathBuf {
    workspace_root().join("target/bench/latest.json")
}

/// Where the default file's previous contents are kept, so that
/// `--compare target/bench/previous.json` compares with the last run.
pub fn previous_json_path() -> PathBuf {
    workspace_root().join("target/bench/previous.json")
}

/// The folder of the committed results page and chart, which only
/// `--update-docs` writes.
pub fn docs_dir() -> PathBuf {
    workspace_root().join("docs/bench")
}

/// The folder a whole-suite run writes its results page and chart to
/// unless `--update-docs` is given, so that a benchmark run leaves the
/// clone as it was.
pub fn results_dir() -> PathBuf {
    workspace_root().join("target/bench")
}

/// Writes `results` as JSON lines to `path`, creating its folder. When
/// `keep_previous` names a file, an existing `path` is first moved there.
pub fn write_json(
    path: &Path,
    results: &[BenchResult],
    keep_previous: Option<&Path>,
) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    if let Some(previous) = keep_previous {
        if path.is_file() {
            fs::rename(path, previous)?;
        }
    }
    fs::write(path, to_json_lines(results))
}

/// Writes `results.md` and `results.svg` into `dir`; returns their paths.
pub fn write_docs(
    dir: &Path,
    results: &[BenchResult],
    setup: &DocSetup,
) -> io::Result<[PathBuf; 2]> {
    fs::create_dir_all(dir)?;
    let markdown = dir.join("results.md");
    let chart = dir.join("results.svg");
    fs::write(&markdown, results_markdown(results, setup))?;
    fs::write(&chart, results_svg(results, setup))?;
    Ok([markdown, chart])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::json_lines::parse_json_lines;
    use crate::bench::result::{Tenths, Unit};

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "portcullis-bench-outputs-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn result(median: u64) -> BenchResult {
        BenchResult {
            name: "null_syscall".into(),
            unit: Unit::Instructions,
            iterations: 10,
            min: median,
            median,
            mean: Tenths(median * 10),
            max: median,
            overhead: 1,
        }
    }

    #[test]
    fn json_is_written_and_the_previous_file_kept() -> io::Result<()> {
        let dir = scratch("json");
        let latest = dir.join("nested/latest.json");
        let previous = dir.join("nested/previous.json");
        write_json(&latest, &[result(31)], Some(&previous))?;
        assert!(!previous.exists());
        write_json(&latest, &[result(30)], Some(&previous))?;
        let read = |path: &Path| fs::read_to_string(path).map(|text| parse_json_lines(&text));
        assert_eq!(read(&previous)?, Ok(vec![result(31)]));
        assert_eq!(read(&latest)?, Ok(vec![result(30)]));
        fs::remove_dir_all(&dir)
    }

    #[test]
    fn docs_are_both_written() -> io::Result<()> {
        let dir = scratch("docs");
        let setup = DocSetup {
            unit: Unit::Instructions,
            qemu_command: "qemu-system-aarch64 -icount shift=0".into(),
        };
        let [markdown, chart] = write_docs(&dir, &[result(31)], &setup)?;
        assert!(fs::read_to_string(markdown)?.contains("**31**"));
        assert!(fs::read_to_string(chart)?.contains("</svg>"));
        fs::remove_dir_all(&dir)
    }

    #[test]
    fn default_paths_are_under_the_workspace() {
        assert!(default_json_path().ends_with("target/bench/latest.json"));
        assert!(previous_json_path().ends_with("target/bench/previous.json"));
        assert!(results_dir().ends_with("target/bench"));
        assert!(docs_dir().ends_with("docs/bench"));
        assert!(docs_dir().ends_with("docs/bench"));
    }
}
