//! The regression guard: `bench/budgets.toml` maps each benchmark to the
//! most instructions its median may take.
//!
//! The file is a small subset of TOML read by hand: `name = number` lines,
//! `#` comments and blank lines. Budgets come from measured medians plus
//! [`margin`] (instruction counts under icount are deterministic, so the
//! margin only absorbs harmless code-layout shifts), and are raised only
//! with a reason in the commit message.

use std::collections::BTreeMap;
use std::fmt;

use super::result::{is_benchmark_name, BenchResult};

/// Where the budget file lives, relative to the workspace root.
pub const BUDGET_FILE: &str = "bench/budgets.toml";

/// Benchmark name → the largest median that passes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Budgets(pub BTreeMap<String, u64>);

/// A line of the budget file that is not `name = number`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetFileError {
    /// 1-based line number.
    pub line_number: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for BudgetFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{BUDGET_FILE} line {}: {}",
            self.line_number, self.reason
        )
    }
}

impl std::error::Error for BudgetFileError {}

/// One way a run breaks the budgets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BudgetViolation {
    /// The median is above the budget.
    OverBudget {
        /// The benchmark.
        name: String,
        /// Its budget.
        budget: u64,
        /// This run's median.
        median: u64,
    },
    /// A budgeted benchmark did not report a result.
    Missing {
        /// The benchmark.
        name: String,
        /// Its budget.
        budget: u64,
    },
    /// A benchmark has no budget: every row must have one.
    Unbudgeted {
        /// The benchmark.
        name: String,
        /// This run's median.
        median: u64,
    },
}

impl fmt::Display for BudgetViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetViolation::OverBudget {
                name,
                budget,
                median,
            } => write!(
                f,
                "{name}: median {median} is over its budget {budget} (+{})",
                median - budget
            ),
            BudgetViolation::Missing { name, budget } => {
                write!(f, "{name}: has a budget ({budget}) but reported no result")
            }
            BudgetViolation::Unbudgeted { name, median } => write!(
                f,
                "{name}: median {median} has no budget in {BUDGET_FILE} (add `{name} = {}`)",
                median + margin(*median)
            ),
        }
    }
}

/// The headroom a budget gets over the measured median: 2 % (rounded
/// up) or 2 instructions, whichever is larger.
pub fn margin(median: u64) -> u64 {
    median.div_ceil(50).max(2)
}

impl Budgets {
    /// Reads the budget file's text.
    pub fn parse(text: &str) -> Result<Budgets, BudgetFileError> {
        let mut budgets = BTreeMap::new();
        for (index, raw) in text.lines().enumerate() {
            let error = |reason: String| BudgetFileError {
                line_number: index + 1,
                reason,
            };
            let line = raw.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| error(format!("expected `name = number`, found {raw:?}")))?;
            let (name, value) = (name.trim(), value.trim());
            if !is_benchmark_name(name) {
                return Err(error(format!("`{name}` is not a benchmark name")));
            }
            let budget: u64 = value
                .replace('_', "")
                .parse()
                .map_err(|_| error(format!("`{value}` is not a whole number")))?;
            if budgets.insert(name.to_string(), budget).is_some() {
                return Err(error(format!("`{name}` has two budgets")));
            }
        }
        Ok(Budgets(budgets))
    }

    /// Every way `results` break these budgets: medians over budget,
    /// budgeted benchmarks without a result, results without a budget.
    pub fn check(&self, results: &[BenchResult]) -> Vec<BudgetViolation> {
        let mut violations = Vec::new();
        for result in results {
            match self.0.get(&result.name) {
                Some(&budget) if result.median > budget => {
                    violations.push(BudgetViolation::OverBudget {
                        name: result.name.clone(),
                        budget,
                        median: result.median,
                    })
                }
                Some(_) => {}
                None => violations.push(BudgetViolation::Unbudgeted {
                    name: result.name.clone(),
                    median: result.median,
                }),
            }
        }
        for (name, &budget) in &self.0 {
            if results.iter().all(|result| &result.name != name) {
                violations.push(BudgetViolation::Missing {
                    name: name.clone(),
                    budget,
                });
            }
        }
        violations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, median: u64) -> BenchResult {
        BenchResult::flat(name, median)
    }

    #[test]
    fn reads_names_numbers_and_comments() {
        let text = "# budgets\n\nnull_syscall = 33   # measured 31\nfloor_svc_eret=6\nipc_round_trip_cross_as = 1_024\n";
        let budgets = Budgets::parse(text).expect("valid");
        assert_eq!(budgets.0.get("null_syscall"), Some(&33));
        assert_eq!(budgets.0.get("floor_svc_eret"), Some(&6));
        assert_eq!(budgets.0.get("ipc_round_trip_cross_as"), Some(&1024));
        assert_eq!(Budgets::parse("# only comments\n"), Ok(Budgets::default()));
    }

    #[test]
    fn refuses_bad_lines_with_their_number() {
        for (text, line) in [
            ("a = 1\nb 2\n", 2),
            ("Bad = 1\n", 1),
            ("a = lots\n", 1),
            ("a = -1\n", 1),
            ("a = 1\na = 2\n", 2),
        ] {
            let error = Budgets::parse(text).expect_err(text);
            assert_eq!(error.line_number, line, "{text:?}: {error}");
        }
    }

    #[test]
    fn finds_over_budget_missing_and_unbudgeted_rows() {
        let budgets =
            Budgets::parse("null_syscall = 33\nfloor_svc_eret = 6\ngone = 10\n").expect("valid");
        let results = [
            result("null_syscall", 34),
            result("floor_svc_eret", 6),
            result("brand_new", 100),
        ];
        let violations = budgets.check(&results);
        assert_eq!(
            violations,
            vec![
                BudgetViolation::OverBudget {
                    name: "null_syscall".into(),
                    budget: 33,
                    median: 34
                },
                BudgetViolation::Unbudgeted {
                    name: "brand_new".into(),
                    median: 100
                },
                BudgetViolation::Missing {
                    name: "gone".into(),
                    budget: 10
                },
            ]
        );
        let text: Vec<String> = violations.iter().map(ToString::to_string).collect();
        assert_eq!(
            text[0],
            "null_syscall: median 34 is over its budget 33 (+1)"
        );
        assert!(text[1].contains("add `brand_new = 102`"), "{}", text[1]);
        assert!(text[2].contains("gone") && text[2].contains("no result"));
        assert!(budgets
            .check(&[
                result("null_syscall", 33),
                result("floor_svc_eret", 1),
                result("gone", 10)
            ])
            .is_empty());
    }

    #[test]
    fn margin_is_two_percent_or_two() {
        assert_eq!(margin(0), 2);
        assert_eq!(margin(31), 2);
        assert_eq!(margin(100), 2);
        assert_eq!(margin(101), 3);
        assert_eq!(margin(14_511), 291);
    }
}
