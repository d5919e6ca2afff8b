//! When the kernel's next tick falls.
//!
//! Each tick is due one interval after the previous one was due, not one
//! interval after it was taken. Under emulation the host may stall the
//! guest for longer than a tick (QEMU without `-icount` follows host time):
//! re-arming from "now" would silently drop the ticks of the stall, and a
//! thread could run a whole time slice of counter time without being
//! interrupted once. Counting from the deadline, the missed ticks arrive
//! back to back when the guest runs again, up to a bounded number: after a
//! longer gap (a debugger, a suspended host) the tick starts afresh from
//! now instead of flooding the system.

/// How many missed ticks are still delivered after a stall.
pub const MAX_CATCH_UP_TICKS: u64 = 8;

/// Counter ticks between two kernel ticks, `None` when the counter runs
/// slower than `ticks_per_second`: with CNTFRQ_EL0 = 0 (a loader that
/// never programmed it) the interval would round to nothing, and a timer
/// re-armed every count is an interrupt storm, not a time slice.
pub fn interval(counter_frequency: u64, ticks_per_second: u64) -> Option<u64> {
    match counter_frequency.checked_div(ticks_per_second) {
        Some(0) | None => None,
        some => some,
    }
}

/// The next deadline after the tick due at `due` was taken at `now`.
pub fn next_deadline(due: u64, now: u64, interval: u64) -> u64 {
    let next = due.wrapping_add(interval);
    let behind = now.wrapping_sub(next);
    // `behind` as a signed distance: in the future when it is "negative".
    let in_the_future = behind > u64::MAX / 2;
    if in_the_future || behind < interval.saturating_mul(MAX_CATCH_UP_TICKS) {
        next
    } else {
        now.wrapping_add(interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_time_ticks_stay_on_the_grid() {
        assert_eq!(next_deadline(1000, 1003, 100), 1100);
        assert_eq!(next_deadline(1000, 1099, 100), 1100);
    }

    #[test]
    fn a_short_stall_delivers_the_missed_ticks() {
        // Taken 350 late: the next three deadlines are already past.
        assert_eq!(next_deadline(1000, 1350, 100), 1100);
        assert_eq!(next_deadline(1100, 1351, 100), 1200);
        assert_eq!(next_deadline(1300, 1352, 100), 1400);
    }

    #[test]
    fn a_long_gap_starts_afresh() {
        let late = 1000 + 100 * (MAX_CATCH_UP_TICKS + 2);
        assert_eq!(next_deadline(1000, late, 100), late + 100);
    }

    #[test]
    fn a_counter_frequency_of_zero_gives_no_interval() {
        assert_eq!(interval(54_000_000, 100), Some(540_000));
        assert_eq!(interval(62_500_000, 100), Some(625_000));
        assert_eq!(interval(100, 100), Some(1));
        assert_eq!(interval(99, 100), None);
        assert_eq!(interval(0, 100), None);
        assert_eq!(interval(54_000_000, 0), None);
    }

    #[test]
    fn the_counter_may_wrap() {
        assert_eq!(next_deadline(u64::MAX - 10, u64::MAX - 5, 100), 89);
        assert_eq!(next_deadline(u64::MAX - 10, 3, 100), 89);
    }
}
