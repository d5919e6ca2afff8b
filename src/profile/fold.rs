//! Folding per-PC counts into per-symbol counts, and two runs into the
//! cost of one iteration.

use std::collections::HashMap;

use super::exec_log::PcCounts;
use super::symbols::SymbolTable;

/// Addresses at or above this are the kernel's (TTBR1); below, user
/// space's or the kernel's boot code running before the MMU is on.
const KERNEL_SPACE_START: u64 = 0xffff_0000_0000_0000;

/// Which program's code an address belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// The kernel ELF (EL1).
    Kernel,
    /// The init ELF (EL0 programs).
    User,
}

impl Space {
    /// The heading for this space's table.
    pub fn title(self) -> &'static str {
        match self {
            Space::Kernel => "kernel (EL1)",
            Space::User => "user (EL0: the init ELF)",
        }
    }
}

/// Executed instructions per (space, symbol name).
pub type SymbolCounts = HashMap<(Space, String), i64>;

/// Attributes every PC to its symbol. A PC no symbol covers is counted
/// under `[no symbol] <page>`, so that nothing is dropped silently.
pub fn fold(pcs: &PcCounts, kernel: &SymbolTable, user: &SymbolTable) -> SymbolCounts {
    let mut folded = SymbolCounts::new();
    for (&pc, &count) in &pcs.counts {
        let (space, table) = if pc >= KERNEL_SPACE_START {
            (Space::Kernel, kernel)
        } else {
            (Space::User, user)
        };
        let name = match table.lookup(pc) {
            Some(symbol) => symbol.name.clone(),
            None => format!("[no symbol] page {:#x}", pc & !0xfff),
        };
        *folded.entry((space, name)).or_default() += count;
    }
    folded
}

/// One symbol's cost per iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct PerIteration {
    /// Kernel or user.
    pub space: Space,
    /// The symbol.
    pub name: String,
    /// Instructions per iteration (the difference of the two runs divided
    /// by the difference of their iteration counts).
    pub instructions: f64,
}

/// What one more iteration costs, per symbol: (long − short) ÷ (its
/// extra iterations). Boot, set-up, warm-up and the end of the run are
/// the same in both runs and cancel. Sorted by space, then cost (largest
/// first), then name; symbols whose difference is 0 are left out.
pub fn per_iteration(
    short: &SymbolCounts,
    long: &SymbolCounts,
    extra_iterations: u32,
) -> Vec<PerIteration> {
    let divisor = f64::from(extra_iterations.max(1));
    let mut keys: Vec<&(Space, String)> = short.keys().chain(long.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut rows: Vec<PerIteration> = keys
        .into_iter()
        .filter_map(|key| {
            let difference =
                long.get(key).copied().unwrap_or(0) - short.get(key).copied().unwrap_or(0);
            (difference != 0).then(|| PerIteration {
                space: key.0,
                name: key.1.clone(),
                instructions: difference as f64 / divisor,
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        a.space
            .cmp(&b.space)
            .then(b.instructions.total_cmp(&a.instructions))
            .then(a.name.cmp(&b.name))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> (SymbolTable, SymbolTable) {
        (
            SymbolTable::from_nm_output(
                "ffffffffc0080000 0000000000000100 T el0_sync\nffffffffc0080100 0000000000000100 T dispatch\n",
            ),
            SymbolTable::from_nm_output("0000000000400000 0000000000000040 T bench_loop\n"),
        )
    }

    fn pcs(entries: &[(u64, i64)]) -> PcCounts {
        PcCounts {
            counts: entries.iter().copied().collect(),
            total: entries.iter().map(|(_, count)| count).sum(),
            other_lines: Vec::new(),
        }
    }

    #[test]
    fn attributes_pcs_to_symbols_and_spaces() {
        let (kernel, user) = tables();
        let folded = fold(
            &pcs(&[
                (0xffff_ffff_c008_0000, 3),
                (0xffff_ffff_c008_0004, 2),
                (0xffff_ffff_c008_0100, 1),
                (0x40_0010, 7),
                (0x40_2000, 1),
            ]),
            &kernel,
            &user,
        );
        assert_eq!(folded.get(&(Space::Kernel, "el0_sync".into())), Some(&5));
        assert_eq!(folded.get(&(Space::Kernel, "dispatch".into())), Some(&1));
        assert_eq!(folded.get(&(Space::User, "bench_loop".into())), Some(&7));
        assert_eq!(
            folded.get(&(Space::User, "[no symbol] page 0x402000".into())),
            Some(&1)
        );
    }

    #[test]
    fn per_iteration_is_the_difference_over_the_extra_iterations() {
        let key = |space, name: &str| (space, name.to_string());
        let short: SymbolCounts = [
            (key(Space::Kernel, "boot"), 1000),
            (key(Space::Kernel, "el0_sync"), 500),
            (key(Space::User, "bench_loop"), 300),
        ]
        .into_iter()
        .collect();
        let long: SymbolCounts = [
            (key(Space::Kernel, "boot"), 1000),
            (key(Space::Kernel, "el0_sync"), 1500),
            (key(Space::User, "bench_loop"), 800),
            (key(Space::Kernel, "timer_irq"), 20),
        ]
        .into_iter()
        .collect();
        let rows = per_iteration(&short, &long, 100);
        let summary: Vec<(Space, &str, f64)> = rows
            .iter()
            .map(|row| (row.space, row.name.as_str(), row.instructions))
            .collect();
        assert_eq!(
            summary,
            [
                (Space::Kernel, "el0_sync", 10.0),
                (Space::Kernel, "timer_irq", 0.2),
                (Space::User, "bench_loop", 5.0),
            ]
        );
    }
}
