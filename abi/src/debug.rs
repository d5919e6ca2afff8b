//! What the test image's `DebugThreadStats` says of a thread's state
//! (`x5`).

/// It runs, or is ready to.
pub const RUNS: u64 = 0;
/// It waits: blocked in IPC, on a notification or for audit room,
/// suspended, or not started.
pub const WAITS: u64 = 1;
/// It has ended.
pub const ENDED: u64 = 2;
