//! The printed profile: per space, each symbol's instructions per
//! iteration, largest first.

use std::fmt::Write as _;

use super::fold::{PerIteration, Space};

/// Rows below this many instructions per iteration are summed into one
/// `(others)` line, so rounding noise does not fill the screen.
const SHOWN_FROM: f64 = 0.05;

/// The tables, one per space, with totals.
pub fn profile_table(rows: &[PerIteration]) -> String {
    let total: f64 = rows.iter().map(|row| row.instructions).sum();
    let mut out = String::new();
    for space in [Space::Kernel, Space::User] {
        let in_space: Vec<&PerIteration> = rows.iter().filter(|row| row.space == space).collect();
        let space_total: f64 = in_space.iter().map(|row| row.instructions).sum();
        let _ = writeln!(
            out,
            "{}: {space_total:.1} instructions per iteration",
            space.title()
        );
        let _ = writeln!(out, "  {:>10}  {:>6}  symbol", "instr/iter", "share");
        let mut others = 0.0;
        for row in in_space {
            if row.instructions.abs() < SHOWN_FROM {
                others += row.instructions;
                continue;
            }
            let _ = writeln!(
                out,
                "  {:>10.1}  {:>5.1}%  {}",
                row.instructions,
                share(row.instructions, total),
                row.name
            );
        }
        if others != 0.0 {
            let _ = writeln!(
                out,
                "  {others:>10.2}  {:>5.1}%  (others, each below {SHOWN_FROM})",
                share(others, total)
            );
        }
        out.push('\n');
    }
    let _ = writeln!(out, "total: {total:.1} instructions per iteration");
    out
}

fn share(part: f64, total: f64) -> f64 {
    if total == 0.0 {
        0.0
    } else {
        part * 100.0 / total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(space: Space, name: &str, instructions: f64) -> PerIteration {
        PerIteration {
            space,
            name: name.into(),
            instructions,
        }
    }

    #[test]
    fn lists_each_space_with_totals_and_shares() {
        let table = profile_table(&[
            row(Space::Kernel, "el0_sync", 30.0),
            row(Space::Kernel, "timer_irq", 0.01),
            row(Space::User, "bench_loop", 10.0),
        ]);
        assert!(
            table.contains("kernel (EL1): 30.0 instructions per iteration"),
            "{table}"
        );
        assert!(table.contains("        30.0   75.0%  el0_sync"), "{table}");
        assert!(table.contains("(others, each below 0.05)"), "{table}");
        assert!(
            table.contains("        10.0   25.0%  bench_loop"),
            "{table}"
        );
        assert!(table
            .trim_end()
            .ends_with("total: 40.0 instructions per iteration"));
    }
}
