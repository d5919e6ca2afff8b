//! The counter every thread may read (CNTVCT_EL0, at CNTFRQ_EL0 ticks a
//! second) as instants, and the arithmetic between ticks and
//! [`Duration`]s. Conversions round so that a deadline is never early: a
//! duration becomes at least as many ticks as it lasts.

use core::time::Duration;

/// A reading of the counter, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub u64);

/// The counter now.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn now() -> Instant {
    Instant(crate::probe::counter().0)
}

/// The counter's frequency in ticks per second.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn frequency() -> u64 {
    crate::probe::counter().1
}

/// On the host there is no counter: it stands at 0.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn now() -> Instant {
    Instant(0)
}

/// On the host there is no counter: its frequency is 0.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn frequency() -> u64 {
    0
}

/// The instant `duration` from now.
pub fn deadline_after(duration: Duration) -> Instant {
    now().after(duration, frequency())
}

/// Ticks that last at least `duration` at `frequency` ticks a second
/// (rounded up; `u64::MAX` if it does not fit).
pub fn ticks_for(duration: Duration, frequency: u64) -> u64 {
    let ticks = (duration.as_nanos() * u128::from(frequency)).div_ceil(1_000_000_000);
    u64::try_from(ticks).unwrap_or(u64::MAX)
}

/// How long `ticks` last at `frequency` (rounded down to a nanosecond;
/// zero at frequency 0).
pub fn duration_of(ticks: u64, frequency: u64) -> Duration {
    if frequency == 0 {
        return Duration::ZERO;
    }
    let nanos = u128::from(ticks) * 1_000_000_000 / u128::from(frequency);
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

impl Instant {
    /// The counter value.
    pub const fn ticks(self) -> u64 {
        self.0
    }

    /// `duration` later (saturating at the counter's end).
    pub fn after(self, duration: Duration, frequency: u64) -> Instant {
        Instant(self.0.saturating_add(ticks_for(duration, frequency)))
    }

    /// Ticks from `earlier` to this instant (0 if `earlier` is later).
    pub const fn ticks_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// Time from `earlier` to this instant.
    pub fn since(self, earlier: Instant, frequency: u64) -> Duration {
        duration_of(self.ticks_since(earlier), frequency)
    }

    /// Microseconds from `earlier` to this instant (rounded down).
    pub fn micros_since(self, earlier: Instant, frequency: u64) -> u64 {
        u64::try_from(self.since(earlier, frequency).as_micros()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QEMU: u64 = 62_500_000;
    const PI4: u64 = 54_000_000;

    #[test]
    fn durations_become_at_least_as_many_ticks() {
        assert_eq!(ticks_for(Duration::from_millis(2), QEMU), 125_000);
        assert_eq!(ticks_for(Duration::from_millis(2), PI4), 108_000);
        // 1 ns at 54 MHz is 0.054 ticks: one whole tick.
        assert_eq!(ticks_for(Duration::from_nanos(1), PI4), 1);
        assert_eq!(ticks_for(Duration::ZERO, PI4), 0);
        assert_eq!(ticks_for(Duration::MAX, QEMU), u64::MAX);
        for nanos in [1, 7, 999, 1_000, 123_457, 2_000_001] {
            for frequency in [QEMU, PI4, 19_200_000, 1] {
                let d = Duration::from_nanos(nanos);
                let ticks = ticks_for(d, frequency);
                assert!(
                    duration_of(ticks, frequency) >= d,
                    "{nanos} ns at {frequency}"
                );
                assert!(duration_of(ticks - 1, frequency) < d, "the fewest ticks");
            }
        }
    }

    #[test]
    fn instants_add_and_subtract_without_wrapping() {
        let t = Instant(1_000);
        let later = t.after(Duration::from_micros(3), QEMU);
        assert_eq!(later, Instant(1_000 + 188)); // 187.5 rounded up
        assert_eq!(later.ticks_since(t), 188);
        assert_eq!(t.ticks_since(later), 0);
        assert_eq!(later.micros_since(t, QEMU), 3);
        assert_eq!(
            Instant(u64::MAX - 1).after(Duration::from_secs(1), QEMU),
            Instant(u64::MAX)
        );
        assert_eq!(duration_of(QEMU, QEMU), Duration::from_secs(1));
        assert_eq!(duration_of(5, 0), Duration::ZERO);
    }
}
