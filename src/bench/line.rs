//! One line of benchmark output, classified by the bench protocol.
//!
//! | line | meaning |
//! | --- | --- |
//! | `BENCH name=N unit=U iterations=I min=A median=M mean=X.Y max=B overhead=O` | one result |
//! | `BENCH-ERROR name=N reason=TEXT` | a benchmark that could not run |
//! | `BENCH-SKIP name=N reason=TEXT` | a benchmark this run cannot have (e.g. too few CPUs), skipped on purpose |
//! | `# portcullis-bench: C results` | end of the suite: C rows ran (result lines and skip lines) |
//!
//! Every other line (banner, `[kernel] ...`, `[bench#N] ...`) is not ours.
//! A line that starts like ours but does not parse is *malformed*: it is
//! reported with its text, never skipped and never a panic. So is a
//! protocol word in the middle of a line, which means two writers'
//! output got interleaved.

use std::fmt;

use super::result::{is_benchmark_name, BenchResult, Tenths};

/// The start of a result line.
pub const RESULT_PREFIX: &str = "BENCH ";
/// The start of a line that reports a benchmark that could not run.
pub const ERROR_PREFIX: &str = "BENCH-ERROR ";
/// The start of a line that reports a benchmark skipped on purpose.
pub const SKIP_PREFIX: &str = "BENCH-SKIP ";
/// The start of the closing line.
pub const SUMMARY_PREFIX: &str = "# portcullis-bench: ";

/// The keys of a result line, in the order the guest prints them.
const RESULT_KEYS: [&str; 8] = [
    "name",
    "unit",
    "iterations",
    "min",
    "median",
    "mean",
    "max",
    "overhead",
];

/// A benchmark protocol line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BenchLine {
    /// `BENCH ...`: one result.
    Result(BenchResult),
    /// `BENCH-ERROR name=N reason=TEXT`.
    Error {
        /// The benchmark that could not run.
        name: String,
        /// Why, as the guest said it.
        reason: String,
    },
    /// `BENCH-SKIP name=N reason=TEXT`: a row this run cannot have (it
    /// needs more CPUs than run), skipped on purpose.
    Skip {
        /// The benchmark skipped.
        name: String,
        /// Why, as the guest said it.
        reason: String,
    },
    /// `# portcullis-bench: C results`: the number of rows that ran
    /// (results printed and rows skipped).
    Summary(usize),
}

/// A line that looks like a protocol line but is not a valid one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedLine {
    /// The line as printed (without its line terminator).
    pub line: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for MalformedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed line ({}): {:?}", self.reason, self.line)
    }
}

impl BenchLine {
    /// Classifies one line: `None` if it is not a protocol line at all.
    pub fn classify(raw: &str) -> Option<Result<BenchLine, MalformedLine>> {
        // A benchmark thread's lines carry the kernel's `[name#N] ` tag.
        let line = strip_thread_tag(raw.trim_end());
        let malformed = |reason: String| {
            Some(Err(MalformedLine {
                line: line.to_string(),
                reason,
            }))
        };
        let parsed = if let Some(rest) = line.strip_prefix(ERROR_PREFIX) {
            parse_error(rest)
        } else if let Some(rest) = line.strip_prefix(SKIP_PREFIX) {
            parse_error(rest).map(|line| match line {
                BenchLine::Error { name, reason } => BenchLine::Skip { name, reason },
                other => other,
            })
        } else if let Some(rest) = line.strip_prefix(RESULT_PREFIX) {
            parse_result(rest).map(BenchLine::Result)
        } else if let Some(rest) = line.strip_prefix(SUMMARY_PREFIX) {
            parse_summary(rest)
        } else if let Some(position) = embedded_protocol_word(line) {
            return malformed(format!(
                "a protocol line starts at column {position}, not at the start: output was interleaved"
            ));
        } else {
            return None;
        };
        match parsed {
            Ok(line) => Some(Ok(line)),
            Err(reason) => malformed(reason),
        }
    }
}

/// `line` without the `[name#N] ` the kernel puts before each line of a
/// thread (the benchmark threads'; the root's summary has none).
pub fn strip_thread_tag(line: &str) -> &str {
    let Some(rest) = line.strip_prefix('[') else {
        return line;
    };
    let Some((tag, text)) = rest.split_once("] ") else {
        return line;
    };
    match tag.rsplit_once('#') {
        Some((name, number))
            if !name.is_empty()
                && !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit()) =>
        {
            text
        }
        _ => line,
    }
}

/// Where `BENCH name=`, `BENCH-ERROR ` or the summary prefix starts inside
/// a line that does not begin with it.
fn embedded_protocol_word(line: &str) -> Option<usize> {
    ["BENCH name=", ERROR_PREFIX, SKIP_PREFIX, SUMMARY_PREFIX]
        .iter()
        .filter_map(|word| line.find(word))
        .min()
}

fn parse_result(rest: &str) -> Result<BenchResult, String> {
    let mut values: [Option<&str>; RESULT_KEYS.len()] = [None; RESULT_KEYS.len()];
    for word in rest.split_whitespace() {
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| format!("`{word}` is not key=value"))?;
        let slot = RESULT_KEYS
            .iter()
            .position(|known| *known == key)
            .ok_or_else(|| format!("unknown key `{key}`"))?;
        if values[slot].replace(value).is_some() {
            return Err(format!("`{key}` given twice"));
        }
    }
    let get = |key: &str| -> Result<&str, String> {
        let slot = RESULT_KEYS
            .iter()
            .position(|known| *known == key)
            .unwrap_or_default();
        values[slot].ok_or_else(|| format!("`{key}` is missing"))
    };
    let number = |key: &str| -> Result<u64, String> {
        let text = get(key)?;
        if !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{key}={text} is not a whole number"));
        }
        text.parse()
            .map_err(|_| format!("{key}={text} is not a whole number that fits 64 bits"))
    };
    let name = get("name")?;
    if !is_benchmark_name(name) {
        return Err(format!("name={name} is not a snake_case identifier"));
    }
    let result = BenchResult {
        name: name.to_string(),
        unit: get("unit")?.parse()?,
        iterations: number("iterations")?,
        min: number("min")?,
        median: number("median")?,
        mean: get("mean")?
            .parse::<Tenths>()
            .map_err(|reason| format!("mean: {reason}"))?,
        max: number("max")?,
        overhead: number("overhead")?,
    };
    match result.inconsistency() {
        Some(reason) => Err(reason),
        None => Ok(result),
    }
}

fn parse_error(rest: &str) -> Result<BenchLine, String> {
    let rest = rest
        .strip_prefix("name=")
        .ok_or("`name=` must come first")?;
    let (name, reason) = rest.split_once(" reason=").ok_or("`reason=` is missing")?;
    if !is_benchmark_name(name) {
        return Err(format!("name={name} is not a snake_case identifier"));
    }
    Ok(BenchLine::Error {
        name: name.to_string(),
        reason: reason.trim().to_string(),
    })
}

fn parse_summary(rest: &str) -> Result<BenchLine, String> {
    let count = rest
        .strip_suffix(" results")
        .or_else(|| rest.strip_suffix(" result"))
        .ok_or("expected `<count> results`")?;
    count
        .parse()
        .map(BenchLine::Summary)
        .map_err(|_| format!("`{count}` is not a count"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::Unit;

    const GOOD: &str = "BENCH name=null_syscall unit=instructions iterations=10000 min=31 median=31 mean=31.4 max=58 overhead=2\r";

    fn malformed(line: &str) -> MalformedLine {
        match BenchLine::classify(line) {
            Some(Err(malformed)) => malformed,
            other => panic!("{line:?} classified as {other:?}"),
        }
    }

    #[test]
    fn reads_a_result_line() {
        assert_eq!(
            BenchLine::classify(GOOD),
            Some(Ok(BenchLine::Result(BenchResult {
                name: "null_syscall".into(),
                unit: Unit::Instructions,
                iterations: 10_000,
                min: 31,
                median: 31,
                mean: Tenths(314),
                max: 58,
                overhead: 2,
            })))
        );
    }

    #[test]
    fn a_thread_s_tag_is_not_part_of_the_line() {
        let tagged = format!("[bench#7] {GOOD}");
        assert_eq!(BenchLine::classify(&tagged), BenchLine::classify(GOOD));
        assert_eq!(strip_thread_tag("[bench#7] x"), "x");
        // Only a `[name#number] ` tag.
        for kept in [
            "[bench] x",
            "[#7] x",
            "[bench#] x",
            "[bench#7x] x",
            "[bench#7]x",
        ] {
            assert_eq!(strip_thread_tag(kept), kept);
        }
        assert!(matches!(
            BenchLine::classify(&format!("[bench#7] junk {GOOD}")),
            Some(Err(_))
        ));
    }

    #[test]
    fn key_order_does_not_matter() {
        let shuffled = "BENCH unit=cycles name=floor_svc_eret overhead=0 max=9 mean=6.0 median=6 min=6 iterations=1";
        assert!(matches!(
            BenchLine::classify(shuffled),
            Some(Ok(BenchLine::Result(BenchResult {
                unit: Unit::Cycles,
                ..
            })))
        ));
    }

    #[test]
    fn reads_error_and_summary_lines() {
        assert_eq!(
            BenchLine::classify(
                "BENCH-ERROR name=ipc_call_one_way_same_as reason=no endpoint: out of memory"
            ),
            Some(Ok(BenchLine::Error {
                name: "ipc_call_one_way_same_as".into(),
                reason: "no endpoint: out of memory".into()
            }))
        );
        assert_eq!(
            BenchLine::classify(
                "[bench-smp#9] BENCH-SKIP name=ipc_throughput_4_pairs reason=needs 4 CPUs, 1 run"
            ),
            Some(Ok(BenchLine::Skip {
                name: "ipc_throughput_4_pairs".into(),
                reason: "needs 4 CPUs, 1 run".into()
            }))
        );
        assert_eq!(
            BenchLine::classify("# portcullis-bench: 5 results\r"),
            Some(Ok(BenchLine::Summary(5)))
        );
    }

    #[test]
    fn other_lines_are_not_ours() {
        for line in [
            "Portcullis 0.1.0 on virt",
            "[kernel] init started",
            "[bench#3] warming up",
            "# portcullis: 3 passed, 0 failed",
            "BENCHMARKS follow",
            "",
        ] {
            assert_eq!(BenchLine::classify(line), None, "{line:?}");
        }
    }

    #[test]
    fn malformed_result_lines_are_reported_with_the_line() {
        let cases = [
            ("BENCH name=x unit=instructions", "is missing"),
            ("BENCH name=null_syscall unit=instructions iterations=10 min=1 median=1 mean=1.0 max=1 overhead=0 extra=1", "unknown key `extra`"),
            ("BENCH name=a unit=instructions unit=cycles", "given twice"),
            ("BENCH name=Null unit=instructions iterations=1 min=1 median=1 mean=1.0 max=1 overhead=0", "snake_case"),
            ("BENCH name=a unit=ns iterations=1 min=1 median=1 mean=1.0 max=1 overhead=0", "unknown unit"),
            ("BENCH name=a unit=cycles iterations=1 min=-1 median=1 mean=1.0 max=1 overhead=0", "min=-1"),
            ("BENCH name=a unit=cycles iterations=1 min=1 median=1 mean=1.25 max=1 overhead=0", "mean"),
            ("BENCH name=a unit=cycles iterations=1 min=1 median=1 mean=1.0 max=1 overhead=99999999999999999999", "64 bits"),
            ("BENCH name=a unit=cycles iterations=1 min=5 median=1 mean=1.0 max=1 overhead=0", "not between"),
            ("BENCH name=a unit=cycles iterations=1 min=1 median 1", "not key=value"),
        ];
        for (line, reason) in cases {
            let found = malformed(line);
            assert_eq!(found.line, line);
            assert!(
                found.reason.contains(reason),
                "{line:?}: {:?} does not say {reason:?}",
                found.reason
            );
            assert!(found.to_string().contains(line));
        }
    }

    #[test]
    fn malformed_error_and_summary_lines_are_reported() {
        assert!(malformed("BENCH-ERROR reason=x name=a")
            .reason
            .contains("first"));
        assert!(malformed("BENCH-ERROR name=a").reason.contains("reason"));
        assert!(malformed("# portcullis-bench: many results")
            .reason
            .contains("not a count"));
        assert!(malformed("# portcullis-bench: 5")
            .reason
            .contains("results"));
    }

    #[test]
    fn a_protocol_line_inside_another_line_is_interleaving() {
        let found = malformed("[kernel] tickBENCH name=null_syscall unit=cycles");
        assert!(found.reason.contains("column 13"), "{found}");
    }
}
