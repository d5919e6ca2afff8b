//! `--compare FILE`: the change of each benchmark's median against an
//! earlier run.

use super::result::BenchResult;
use super::text_table::{render, Align};

/// One benchmark in the comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Comparison<'a> {
    /// In both runs.
    Both {
        /// The earlier result.
        old: &'a BenchResult,
        /// This run's result.
        new: &'a BenchResult,
    },
    /// Only in the earlier run (removed, renamed, or filtered out now).
    OnlyOld(&'a BenchResult),
    /// Only in this run (new).
    OnlyNew(&'a BenchResult),
}

impl Comparison<'_> {
    /// The benchmark's name.
    pub fn name(&self) -> &str {
        match self {
            Comparison::Both { new, .. } | Comparison::OnlyNew(new) => &new.name,
            Comparison::OnlyOld(old) => &old.name,
        }
    }

    /// new median − old median, when both exist.
    pub fn delta(&self) -> Option<i128> {
        match self {
            Comparison::Both { old, new } => Some(i128::from(new.median) - i128::from(old.median)),
            _ => None,
        }
    }
}

/// Pairs results by name: this run's order first, then the rows only the
/// earlier run has, in its order.
pub fn compare<'a>(old: &'a [BenchResult], new: &'a [BenchResult]) -> Vec<Comparison<'a>> {
    let mut rows: Vec<Comparison<'a>> = new
        .iter()
        .map(|new| match old.iter().find(|old| old.name == new.name) {
            Some(old) => Comparison::Both { old, new },
            None => Comparison::OnlyNew(new),
        })
        .collect();
    rows.extend(
        old.iter()
            .filter(|old| !new.iter().any(|new| new.name == old.name))
            .map(Comparison::OnlyOld),
    );
    rows
}

/// The comparison as a table: name, old median, new median, delta,
/// percent, and a note for rows on one side only or in other units.
pub fn comparison_table(rows: &[Comparison<'_>]) -> String {
    let header = [
        ("name", Align::Left),
        ("old median", Align::Right),
        ("new median", Align::Right),
        ("delta", Align::Right),
        ("percent", Align::Right),
        ("note", Align::Left),
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let dash = || "-".to_string();
            match row {
                Comparison::Both { old, new } => {
                    let delta = i128::from(new.median) - i128::from(old.median);
                    let percent = if old.median == 0 {
                        dash()
                    } else {
                        format!("{:+.1}%", delta as f64 * 100.0 / old.median as f64)
                    };
                    let note = if old.unit == new.unit {
                        String::new()
                    } else {
                        format!("units differ: {} then, {} now", old.unit, new.unit)
                    };
                    vec![
                        row.name().to_string(),
                        old.median.to_string(),
                        new.median.to_string(),
                        format!("{delta:+}"),
                        percent,
                        note,
                    ]
                }
                Comparison::OnlyNew(new) => vec![
                    row.name().to_string(),
                    dash(),
                    new.median.to_string(),
                    dash(),
                    dash(),
                    "only in this run".into(),
                ],
                Comparison::OnlyOld(old) => vec![
                    row.name().to_string(),
                    old.median.to_string(),
                    dash(),
                    dash(),
                    dash(),
                    "only in the earlier run".into(),
                ],
            }
        })
        .collect();
    render(&header, &cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::Unit;

    fn result(name: &str, median: u64) -> BenchResult {
        BenchResult::flat(name, median)
    }

    #[test]
    fn pairs_by_name_and_marks_one_sided_rows() {
        let old = [result("a", 100), result("gone", 5)];
        let new = [result("added", 7), result("a", 90)];
        let rows = compare(&old, &new);
        let names: Vec<&str> = rows.iter().map(Comparison::name).collect();
        assert_eq!(names, ["added", "a", "gone"]);
        assert!(matches!(rows[0], Comparison::OnlyNew(_)));
        assert_eq!(rows[1].delta(), Some(-10));
        assert!(matches!(rows[2], Comparison::OnlyOld(_)));

        let table = comparison_table(&rows);
        let line = |name: &str| {
            table
                .lines()
                .find(|line| line.starts_with(name))
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(line("a "), "a 100 90 -10 -10.0%");
        assert_eq!(line("added"), "added - 7 - - only in this run");
        assert_eq!(line("gone"), "gone 5 - - - only in the earlier run");
    }

    #[test]
    fn growth_is_positive_and_zero_medians_have_no_percent() {
        let old = [result("a", 0), result("b", 40)];
        let new = [result("a", 3), result("b", 41)];
        let table = comparison_table(&compare(&old, &new));
        let words: Vec<Vec<&str>> = table
            .lines()
            .skip(2)
            .map(|line| line.split_whitespace().collect())
            .collect();
        assert_eq!(
            words,
            [
                vec!["a", "0", "3", "+3", "-"],
                vec!["b", "40", "41", "+1", "+2.5%"]
            ]
        );
    }

    #[test]
    fn different_units_are_flagged() {
        let old = [BenchResult {
            unit: Unit::Cycles,
            ..result("a", 10)
        }];
        let new = [result("a", 10)];
        assert!(comparison_table(&compare(&old, &new)).contains("units differ"));
    }
}
