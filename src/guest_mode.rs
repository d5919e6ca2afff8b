//! What the guest runs after boot: the demo, the in-kernel test suite or
//! the benchmark suite.

use std::fmt;
use std::str::FromStr;

/// The guest's mode, passed as `portcullis.mode=` on the kernel command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GuestMode {
    /// The demo: boot, show what the kernel does, exit 0.
    #[default]
    Demo,
    /// The test suite: TAP on the UART, exit status 0 only if every test passed.
    Test,
    /// The benchmark suite: one `BENCH ...` line per benchmark (see
    /// [`crate::bench`]), exit status 0 only if every benchmark ran.
    Bench,
    /// The syscall fuzzer: TAP, one result per round (the kernel survived
    /// and its invariants held), judged like the test suite.
    Fuzz,
}

impl GuestMode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [GuestMode; 4] = [
        GuestMode::Demo,
        GuestMode::Test,
        GuestMode::Bench,
        GuestMode::Fuzz,
    ];

    /// Does the guest print TAP in this mode?
    pub fn prints_tap(self) -> bool {
        matches!(self, GuestMode::Test | GuestMode::Fuzz)
    }

    /// The name used on the command line and in `portcullis.mode=`.
    pub fn name(self) -> &'static str {
        match self {
            GuestMode::Demo => "demo",
            GuestMode::Test => "test",
            GuestMode::Bench => "bench",
            GuestMode::Fuzz => "fuzz",
        }
    }
}

impl fmt::Display for GuestMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--mode` value that names no mode the guest knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownMode(pub String);

impl fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown mode `{}` (expected demo, test, bench or fuzz)",
            self.0
        )
    }
}

impl std::error::Error for UnknownMode {}

impl FromStr for GuestMode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        GuestMode::ALL
            .into_iter()
            .find(|mode| mode.name() == text)
            .ok_or_else(|| UnknownMode(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_mode_name_back() {
        for mode in GuestMode::ALL {
            assert_eq!(mode.name().parse::<GuestMode>(), Ok(mode));
        }
        assert_eq!("bench".parse::<GuestMode>(), Ok(GuestMode::Bench));
        assert!("benchmark".parse::<GuestMode>().is_err());
    }
}
