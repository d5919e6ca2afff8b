//! Everything the benchmark suite reported in one run, and what is wrong
//! with it.

use std::collections::BTreeSet;
use std::fmt;

use super::line::{BenchLine, MalformedLine};
use super::result::{BenchResult, Unit};

/// What the guest said, in bench protocol terms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BenchReport {
    /// Every valid `BENCH` line, in order.
    pub results: Vec<BenchResult>,
    /// Every `BENCH-ERROR` line: (name, reason).
    pub errors: Vec<(String, String)>,
    /// Every `BENCH-SKIP` line: (name, reason): rows this run cannot have
    /// (too few CPUs), which count as run in the closing line.
    pub skipped: Vec<(String, String)>,
    /// Every line that looked like ours but was not valid.
    pub malformed: Vec<MalformedLine>,
    /// The count from `# portcullis-bench: C results` (the last one seen).
    pub summary: Option<usize>,
}

/// One reason a benchmark run cannot be trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BenchProblem {
    /// A protocol line that does not parse.
    Malformed(MalformedLine),
    /// A benchmark that the guest says could not run.
    CouldNotRun {
        /// The benchmark.
        name: String,
        /// The guest's reason.
        reason: String,
    },
    /// No closing `# portcullis-bench: C results`: the suite did not finish.
    MissingSummary,
    /// The closing line counts differently from the result and skip
    /// lines.
    CountMismatch {
        /// C from the closing line.
        claimed: usize,
        /// Valid result and skip lines seen.
        parsed: usize,
    },
    /// Two results with one name.
    Duplicate(String),
    /// A result in another unit than the run's counter counts.
    WrongUnit {
        /// The benchmark.
        name: String,
        /// The unit the run's counter counts.
        expected: Unit,
        /// The unit the line says.
        found: Unit,
    },
    /// The run produced no result at all.
    NoResults,
}

impl fmt::Display for BenchProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchProblem::Malformed(line) => line.fmt(f),
            BenchProblem::CouldNotRun { name, reason } => {
                write!(f, "benchmark {name} could not run: {reason}")
            }
            BenchProblem::MissingSummary => f.write_str(
                "no closing line (`# portcullis-bench: C results`): the suite did not finish",
            ),
            BenchProblem::CountMismatch { claimed, parsed } => write!(
                f,
                "the closing line says {claimed} results but {parsed} valid result and skip lines were printed"
            ),
            BenchProblem::Duplicate(name) => write!(f, "benchmark {name} was reported twice"),
            BenchProblem::WrongUnit {
                name,
                expected,
                found,
            } => write!(
                f,
                "benchmark {name} is in {found}, but this run's counter counts {expected}"
            ),
            BenchProblem::NoResults => f.write_str("no benchmark result at all"),
        }
    }
}

impl BenchReport {
    /// Reads the guest's UART output.
    pub fn parse(output: &str) -> BenchReport {
        let mut report = BenchReport::default();
        for line in output.lines() {
            match BenchLine::classify(line) {
                None => {}
                Some(Ok(BenchLine::Result(result))) => report.results.push(result),
                Some(Ok(BenchLine::Error { name, reason })) => report.errors.push((name, reason)),
                Some(Ok(BenchLine::Skip { name, reason })) => report.skipped.push((name, reason)),
                Some(Ok(BenchLine::Summary(count))) => report.summary = Some(count),
                Some(Err(malformed)) => report.malformed.push(malformed),
            }
        }
        report
    }

    /// Everything wrong with this report for a run whose counter counts
    /// `unit`; empty if it can be trusted.
    pub fn problems(&self, unit: Unit) -> Vec<BenchProblem> {
        let mut problems: Vec<BenchProblem> = self
            .malformed
            .iter()
            .cloned()
            .map(BenchProblem::Malformed)
            .collect();
        problems.extend(
            self.errors
                .iter()
                .map(|(name, reason)| BenchProblem::CouldNotRun {
                    name: name.clone(),
                    reason: reason.clone(),
                }),
        );
        match self.summary {
            None => problems.push(BenchProblem::MissingSummary),
            Some(claimed) if claimed != self.results.len() + self.skipped.len() => {
                problems.push(BenchProblem::CountMismatch {
                    claimed,
                    parsed: self.results.len() + self.skipped.len(),
                })
            }
            Some(_) => {}
        }
        let mut seen = BTreeSet::new();
        for result in &self.results {
            if !seen.insert(result.name.as_str()) {
                problems.push(BenchProblem::Duplicate(result.name.clone()));
            }
            if result.unit != unit {
                problems.push(BenchProblem::WrongUnit {
                    name: result.name.clone(),
                    expected: unit,
                    found: result.unit,
                });
            }
        }
        if self.results.is_empty() {
            problems.push(BenchProblem::NoResults);
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "\
Portcullis 0.1.0 on virt: entered at EL1\r
[kernel] starting the benchmarks\r
BENCH name=floor_svc_eret unit=instructions iterations=100 min=4 median=4 mean=4.0 max=4 overhead=1\r
[bench#1] null_syscall\r
BENCH name=null_syscall unit=instructions iterations=100 min=31 median=31 mean=31.2 max=40 overhead=1\r
# portcullis-bench: 2 results\r
";

    #[test]
    fn a_complete_run_has_no_problems() {
        let report = BenchReport::parse(RUN);
        assert_eq!(report.results.len(), 2);
        assert_eq!(report.results[1].name, "null_syscall");
        assert_eq!(report.summary, Some(2));
        assert_eq!(report.problems(Unit::Instructions), vec![]);
    }

    #[test]
    fn a_missing_summary_means_the_suite_did_not_finish() {
        let cut = RUN.replace("# portcullis-bench: 2 results\r\n", "");
        let problems = BenchReport::parse(&cut).problems(Unit::Instructions);
        assert_eq!(problems, vec![BenchProblem::MissingSummary]);
    }

    #[test]
    fn a_count_that_disagrees_with_the_lines_is_a_problem() {
        let wrong = RUN.replace("2 results", "3 results");
        assert_eq!(
            BenchReport::parse(&wrong).problems(Unit::Instructions),
            vec![BenchProblem::CountMismatch {
                claimed: 3,
                parsed: 2
            }]
        );
    }

    #[test]
    fn a_skipped_row_counts_as_run_and_is_no_problem() {
        let with_skip = RUN.replace(
            "# portcullis-bench: 2 results",
            "BENCH-SKIP name=ipc_throughput_4_pairs reason=needs 4 CPUs, 1 runs\r\n# portcullis-bench: 3 results",
        );
        let report = BenchReport::parse(&with_skip);
        assert_eq!(report.results.len(), 2);
        assert_eq!(
            report.skipped,
            [(
                "ipc_throughput_4_pairs".to_string(),
                "needs 4 CPUs, 1 runs".to_string()
            )]
        );
        assert_eq!(report.problems(Unit::Instructions), vec![]);
    }

    #[test]
    fn a_malformed_line_is_reported_and_does_not_count() {
        let broken = RUN.replace("mean=31.2", "mean=lots");
        let problems = BenchReport::parse(&broken).problems(Unit::Instructions);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            matches!(&problems[0], BenchProblem::Malformed(line) if line.line.contains("mean=lots"))
        );
        assert_eq!(
            problems[1],
            BenchProblem::CountMismatch {
                claimed: 2,
                parsed: 1
            }
        );
    }

    #[test]
    fn errors_duplicates_and_units_are_problems() {
        let output = format!(
            "{RUN}BENCH-ERROR name=ipc_call_one_way_same_as reason=no memory\n{}",
            "BENCH name=null_syscall unit=cycles iterations=1 min=1 median=1 mean=1.0 max=1 overhead=0\n"
        );
        let problems = BenchReport::parse(&output).problems(Unit::Instructions);
        assert!(problems.contains(&BenchProblem::CouldNotRun {
            name: "ipc_call_one_way_same_as".into(),
            reason: "no memory".into()
        }));
        assert!(problems.contains(&BenchProblem::Duplicate("null_syscall".into())));
        assert!(problems.contains(&BenchProblem::WrongUnit {
            name: "null_syscall".into(),
            expected: Unit::Instructions,
            found: Unit::Cycles
        }));
    }

    #[test]
    fn no_output_at_all_is_two_problems() {
        assert_eq!(
            BenchReport::parse("").problems(Unit::Cycles),
            vec![BenchProblem::MissingSummary, BenchProblem::NoResults]
        );
    }
}
