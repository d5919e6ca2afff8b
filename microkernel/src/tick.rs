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
mod tests;
