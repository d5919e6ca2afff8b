//! The profile aid: where the instructions of one benchmark operation go,
//! per symbol of the kernel and of the init ELF.
//!
//! QEMU runs the benchmark with one instruction per translation block and
//! logs every block it enters (`-d exec,nochain`); the log streams into
//! per-PC counts ([`exec_log`]), which `llvm-nm`'s symbol tables
//! ([`symbols`]) fold into per-symbol counts ([`fold`]). Two runs with N
//! and 2N iterations give the cost of one iteration by difference. See
//! `docs/bench/profiling.md`.

mod capture;
mod command;
pub mod exec_log;
pub mod fold;
mod report;
pub mod symbols;

pub use command::{run_profile_command, ProfileOptions, DEFAULT_PROFILE_ITERATIONS};
pub use report::profile_table;
