//! Tests of `tick`.

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
