//! The terminal table of one run's results.

use super::result::BenchResult;
use super::text_table::{render, Align};

/// One row per result: name, unit, min, median, mean, max, iterations,
/// overhead (the counter-read cost already subtracted from the others).
pub fn results_table(results: &[BenchResult]) -> String {
    let header = [
        ("name", Align::Left),
        ("unit", Align::Left),
        ("min", Align::Right),
        ("median", Align::Right),
        ("mean", Align::Right),
        ("max", Align::Right),
        ("iterations", Align::Right),
        ("overhead", Align::Right),
    ];
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|result| {
            vec![
                result.name.clone(),
                result.unit.to_string(),
                result.min.to_string(),
                result.median.to_string(),
                result.mean.to_string(),
                result.max.to_string(),
                result.iterations.to_string(),
                result.overhead.to_string(),
            ]
        })
        .collect();
    render(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{Tenths, Unit};

    #[test]
    fn has_every_column_in_order() {
        let table = results_table(&[BenchResult {
            name: "null_syscall".into(),
            unit: Unit::Instructions,
            iterations: 10_000,
            min: 31,
            median: 32,
            mean: Tenths(325),
            max: 58,
            overhead: 2,
        }]);
        let mut lines = table.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(
            header,
            [
                "name",
                "unit",
                "min",
                "median",
                "mean",
                "max",
                "iterations",
                "overhead"
            ]
        );
        let row: Vec<&str> = lines
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(
            row,
            [
                "null_syscall",
                "instructions",
                "31",
                "32",
                "32.5",
                "58",
                "10000",
                "2"
            ]
        );
    }
}
