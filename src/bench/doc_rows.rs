//! The rows the generated docs show: every catalogue entry (measured or
//! not) in catalogue order, then any result the catalogue does not know,
//! so a new benchmark is never dropped from the page.

use super::catalogue::{LinuxPeer, CATALOGUE};
use super::result::BenchResult;
use super::target::{Standing, Target};

/// One row of the results page and chart.
#[derive(Clone, Debug, PartialEq)]
pub struct DocRow<'a> {
    /// The benchmark name.
    pub name: &'a str,
    /// What one operation is (empty for rows the catalogue lacks).
    pub what: &'static str,
    /// This run's result, if the benchmark ran.
    pub result: Option<&'a BenchResult>,
    /// Linux rows for the same kind of work, closest first.
    pub linux: &'static [LinuxPeer],
    /// seL4's reference number.
    pub sel4: Option<&'static str>,
    /// The goal.
    pub target: Option<Target>,
    /// Where the result stands against the goal (`None`: no goal).
    pub standing: Option<Standing>,
}

/// The rows for `results`.
pub fn doc_rows(results: &[BenchResult]) -> Vec<DocRow<'_>> {
    let find = |name: &str| results.iter().find(|result| result.name == name);
    let mut rows: Vec<DocRow<'_>> = CATALOGUE
        .iter()
        .map(|entry| DocRow {
            name: entry.name,
            what: entry.what,
            result: find(entry.name),
            linux: entry.linux,
            sel4: entry.sel4,
            target: entry.target,
            standing: entry
                .target
                .map(|target| target.standing(entry.name, results)),
        })
        .collect();
    rows.extend(
        results
            .iter()
            .filter(|result| CATALOGUE.iter().all(|entry| entry.name != result.name))
            .map(|result| DocRow {
                name: &result.name,
                what: "",
                result: Some(result),
                linux: &[],
                sel4: None,
                target: None,
                standing: None,
            }),
    );
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{Tenths, Unit};

    #[test]
    fn catalogue_rows_first_then_unknown_results() {
        let results = [
            BenchResult {
                name: "brand_new_row".into(),
                unit: Unit::Instructions,
                iterations: 1,
                min: 1,
                median: 1,
                mean: Tenths(10),
                max: 1,
                overhead: 0,
            },
            BenchResult {
                name: "null_syscall".into(),
                median: 30,
                min: 30,
                max: 30,
                mean: Tenths(300),
                unit: Unit::Instructions,
                iterations: 1,
                overhead: 0,
            },
        ];
        let rows = doc_rows(&results);
        assert_eq!(rows.len(), CATALOGUE.len() + 1);
        assert_eq!(rows.last().map(|row| row.name), Some("brand_new_row"));
        let null = rows.iter().find(|row| row.name == "null_syscall");
        assert_eq!(
            null.and_then(|row| row.standing.clone()).map(|s| s.word()),
            Some("met")
        );
        let floor = rows.iter().find(|row| row.name == "floor_svc_eret");
        assert!(floor.is_some_and(|row| row.result.is_none() && row.standing.is_none()));
    }
}
