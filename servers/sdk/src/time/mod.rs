//! Time for user space: the counter every thread reads ([`clock`]), and a
//! one-shot deadline timer with sleeps and a receive that times out
//! ([`timer`]), built on the EL1 physical timer that only the holder of
//! its IrqHandler (the root task, or whoever it gives it to) can program.
//! There is no kernel sleep or timeout: a supervisor that needs deadlines
//! holds the timer, or asks the one that does (`docs/tasks.md`, "Time").

pub mod clock;
pub mod timer;

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub use clock::{deadline_after, frequency, now};
pub use clock::{duration_of, ticks_for, Instant};
pub use timer::{next, Next, TimeError, Timer, TimerStep, MAX_ARM_TICKS};
