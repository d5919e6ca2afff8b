//! One benchmark's result: what a `BENCH ...` line says.

use std::fmt;
use std::str::FromStr;

/// What the guest's counter counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Guest instructions: PMCCNTR_EL0 under QEMU `-icount shift=0`.
    Instructions,
    /// CPU cycles: PMCCNTR_EL0 on real hardware (or QEMU without icount).
    Cycles,
}

impl Unit {
    /// The name used on the wire and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Instructions => "instructions",
            Unit::Cycles => "cycles",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Unit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "instructions" => Ok(Unit::Instructions),
            "cycles" => Ok(Unit::Cycles),
            other => Err(format!(
                "unknown unit `{other}` (expected instructions or cycles)"
            )),
        }
    }
}

/// A mean with one decimal, kept as tenths so that it prints back exactly
/// as the guest wrote it and compares exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tenths(pub u64);

impl Tenths {
    /// The value as a float, for arithmetic in reports.
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 10.0
    }
}

impl fmt::Display for Tenths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0 / 10, self.0 % 10)
    }
}

impl FromStr for Tenths {
    type Err = String;

    /// `123`, `123.4`; more than one decimal is refused rather than rounded,
    /// because the protocol promises one.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let refuse = || format!("`{text}` is not a number with at most one decimal");
        let (whole, tenth) = match text.split_once('.') {
            Some((whole, fraction)) if fraction.len() == 1 => (whole, fraction),
            Some(_) => return Err(refuse()),
            None => (text, "0"),
        };
        let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(whole) || !all_digits(tenth) {
            return Err(refuse());
        }
        let whole: u64 = whole.parse().map_err(|_| refuse())?;
        let tenth: u64 = tenth.parse().map_err(|_| refuse())?;
        whole
            .checked_mul(10)
            .and_then(|tens| tens.checked_add(tenth))
            .map(Tenths)
            .ok_or_else(refuse)
    }
}

/// One benchmark's numbers. `min`, `median`, `mean` and `max` are per
/// operation with `overhead` (the cost of reading the counter) already
/// subtracted by the guest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchResult {
    /// Stable snake_case identifier, e.g. `null_syscall`.
    pub name: String,
    /// What the numbers count.
    pub unit: Unit,
    /// Timed iterations.
    pub iterations: u64,
    /// Fastest operation.
    pub min: u64,
    /// Median operation: the number budgets and comparisons use.
    pub median: u64,
    /// Mean operation, to one decimal.
    pub mean: Tenths,
    /// Slowest operation.
    pub max: u64,
    /// The measured cost of one counter read, already subtracted.
    pub overhead: u64,
}

impl BenchResult {
    /// Why these numbers cannot describe one distribution, if they cannot:
    /// min ≤ median ≤ max, min ≤ mean ≤ max, at least one iteration.
    pub fn inconsistency(&self) -> Option<String> {
        if self.iterations == 0 {
            return Some("iterations=0: nothing was measured".into());
        }
        if !(self.min <= self.median && self.median <= self.max) {
            return Some(format!(
                "median {} is not between min {} and max {}",
                self.median, self.min, self.max
            ));
        }
        let min = Tenths(self.min.saturating_mul(10));
        let max = Tenths(self.max.saturating_mul(10));
        if !(min <= self.mean && self.mean <= max) {
            return Some(format!(
                "mean {} is not between min {} and max {}",
                self.mean, self.min, self.max
            ));
        }
        None
    }
}

/// A valid snake_case benchmark name: lowercase ASCII letters, digits and
/// `_`, starting with a letter.
pub fn is_benchmark_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
impl BenchResult {
    /// A result whose every sample was `median` (for other modules' tests).
    pub(crate) fn flat(name: &str, median: u64) -> BenchResult {
        BenchResult {
            name: name.into(),
            unit: Unit::Instructions,
            iterations: 100,
            min: median,
            median,
            mean: Tenths(median * 10),
            max: median,
            overhead: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenths_read_and_print_one_decimal() {
        assert_eq!("12.3".parse(), Ok(Tenths(123)));
        assert_eq!("7".parse(), Ok(Tenths(70)));
        assert_eq!(Tenths(123).to_string(), "12.3");
        assert_eq!(Tenths(5).to_string(), "0.5");
        for bad in ["", ".", "1.", ".5", "1.23", "-1.0", "1e3", "x"] {
            assert!(bad.parse::<Tenths>().is_err(), "{bad:?} accepted");
        }
        assert!("99999999999999999999.0".parse::<Tenths>().is_err());
    }

    #[test]
    fn units_round_trip_and_unknown_ones_are_named() {
        for unit in [Unit::Instructions, Unit::Cycles] {
            assert_eq!(unit.name().parse(), Ok(unit));
        }
        assert!("ns"
            .parse::<Unit>()
            .is_err_and(|message| message.contains("`ns`")));
    }

    #[test]
    fn names_are_snake_case() {
        assert!(is_benchmark_name("ipc_call_one_way_same_as"));
        assert!(is_benchmark_name("scale_10000_threads"));
        for bad in ["", "Null", "null-syscall", "_x", "1x", "a b"] {
            assert!(!is_benchmark_name(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn inconsistent_numbers_are_named() {
        let good = BenchResult {
            name: "null_syscall".into(),
            unit: Unit::Instructions,
            iterations: 10,
            min: 30,
            median: 31,
            mean: Tenths(312),
            max: 40,
            overhead: 2,
        };
        assert_eq!(good.inconsistency(), None);
        let median_above_max = BenchResult {
            median: 41,
            ..good.clone()
        };
        assert!(median_above_max.inconsistency().is_some());
        let mean_below_min = BenchResult {
            mean: Tenths(299),
            ..good.clone()
        };
        assert!(mean_below_min.inconsistency().is_some());
        let none_run = BenchResult {
            iterations: 0,
            ..good
        };
        assert!(none_run.inconsistency().is_some());
    }
}
