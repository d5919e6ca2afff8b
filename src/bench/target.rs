//! The goals per benchmark and where a run stands against them.

use std::fmt;

use super::result::BenchResult;

/// A goal for one benchmark's median, in its unit (instructions under
/// `-icount shift=0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// median ≤ the number.
    AtMost(u64),
    /// median ≤ `base`'s median + `extra`: what a feature may add.
    AddsAtMost {
        /// The benchmark without the feature.
        base: &'static str,
        /// The most the feature may add.
        extra: u64,
    },
    /// median ≤ `tenths`/10 × `base`'s median.
    TimesAtMost {
        /// The benchmark it is measured against.
        base: &'static str,
        /// The factor in tenths (25 = 2.5×).
        tenths: u64,
    },
}

/// Where a benchmark stands against its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The target holds; the text shows the numbers.
    Met(String),
    /// The target does not hold; the text shows the numbers.
    NotMet(String),
    /// The benchmark, or the one its target refers to, has no result yet.
    NotYetMeasured,
}

impl Standing {
    /// `met`, `not met` or `not yet measured`.
    pub fn word(&self) -> &'static str {
        match self {
            Standing::Met(_) => "met",
            Standing::NotMet(_) => "not met",
            Standing::NotYetMeasured => "not yet measured",
        }
    }
}

impl fmt::Display for Standing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Standing::Met(numbers) | Standing::NotMet(numbers) => {
                write!(f, "{} ({numbers})", self.word())
            }
            Standing::NotYetMeasured => f.write_str(self.word()),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::AtMost(limit) => write!(f, "≤ {limit}"),
            Target::AddsAtMost { base, extra } => write!(f, "≤ {base} + {extra}"),
            Target::TimesAtMost { base, tenths } => {
                write!(f, "≤ {} × {base}", Tenths10(*tenths))
            }
        }
    }
}

/// A factor in tenths, printed without a useless `.0` (2.5, 2, 5).
struct Tenths10(u64);

impl fmt::Display for Tenths10 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 % 10 {
            0 => write!(f, "{}", self.0 / 10),
            tenth => write!(f, "{}.{tenth}", self.0 / 10),
        }
    }
}

fn median_of(results: &[BenchResult], name: &str) -> Option<u64> {
    results
        .iter()
        .find(|result| result.name == name)
        .map(|result| result.median)
}

impl Target {
    /// The limit for `name`'s median given `results`, and how it was
    /// computed, or `None` if a number it needs is missing.
    pub fn limit(&self, results: &[BenchResult]) -> Option<(u64, String)> {
        match *self {
            Target::AtMost(limit) => Some((limit, limit.to_string())),
            Target::AddsAtMost { base, extra } => {
                let base_median = median_of(results, base)?;
                Some((
                    base_median.saturating_add(extra),
                    format!("{base} {base_median} + {extra}"),
                ))
            }
            Target::TimesAtMost { base, tenths } => {
                let base_median = median_of(results, base)?;
                // Exact in integers: median ≤ tenths × base / 10.
                let limit = base_median.saturating_mul(tenths) / 10;
                Some((
                    limit,
                    format!("{} × {base} {base_median}", Tenths10(tenths)),
                ))
            }
        }
    }

    /// Where `name` stands against this target in `results`.
    pub fn standing(&self, name: &str, results: &[BenchResult]) -> Standing {
        let (Some(median), Some((limit, how))) = (median_of(results, name), self.limit(results))
        else {
            return Standing::NotYetMeasured;
        };
        if median <= limit {
            Standing::Met(format!("{median} ≤ {how}"))
        } else {
            Standing::NotMet(format!("{median} > {how}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, median: u64) -> BenchResult {
        BenchResult::flat(name, median)
    }

    #[test]
    fn absolute_targets() {
        let results = [result("null_syscall", 40)];
        assert_eq!(
            Target::AtMost(40).standing("null_syscall", &results),
            Standing::Met("40 ≤ 40".into())
        );
        assert_eq!(
            Target::AtMost(39).standing("null_syscall", &results).word(),
            "not met"
        );
        assert_eq!(
            Target::AtMost(40).standing("ipc_call", &results),
            Standing::NotYetMeasured
        );
    }

    #[test]
    fn relative_targets_need_their_base() {
        let added = Target::AddsAtMost {
            base: "null_syscall",
            extra: 5,
        };
        let only_policy = [result("policy", 36)];
        assert_eq!(
            added.standing("policy", &only_policy),
            Standing::NotYetMeasured
        );
        let both = [result("null_syscall", 31), result("policy", 36)];
        assert_eq!(
            added.standing("policy", &both),
            Standing::Met("36 ≤ null_syscall 31 + 5".into())
        );
        let times = Target::TimesAtMost {
            base: "rt",
            tenths: 25,
        };
        let results = [result("rt", 101), result("notify", 253)];
        // 2.5 × 101 = 252.5, and the limit rounds down.
        assert_eq!(
            times.standing("notify", &results),
            Standing::NotMet("253 > 2.5 × rt 101".into())
        );
        assert_eq!(times.to_string(), "≤ 2.5 × rt");
        assert_eq!(
            Target::TimesAtMost {
                base: "f",
                tenths: 20
            }
            .to_string(),
            "≤ 2 × f"
        );
        assert_eq!(added.to_string(), "≤ null_syscall + 5");
    }
}
