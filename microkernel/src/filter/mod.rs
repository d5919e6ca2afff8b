//! Filters: the seccomp-like engine of Filter objects (rule evaluation and
//! the per-thread verdict cache). (The Filter object's syscalls are
//! `kernel/object/filter.rs`; a `Notify` verdict's request to a policy
//! server is `kernel/forward/policy.rs`.)
//!
//! Pure, safe and host-tested; the syscall path calls it. The rule model
//! and its wire format are shared with user space in [`abi::policy`];
//! `docs/policy.md` describes both.
//!
//! * [`Filter`]: a Filter object's content, a decoded and validated
//!   description. Loading new rules either succeeds or leaves the old ones.
//! * [`SyscallFacts`]: what a rule can look at for one syscall.
//! * [`evaluate`]: within a filter the first matching rule decides (no
//!   match: `Allow`); across a thread's stacked filters the strictest
//!   verdict wins.
//! * [`VerdictCache`]: per syscall number, the verdict when it does not
//!   depend on anything but the number, and from it the thread's "no entry
//!   work" mask: the syscalls that may take the fast path.
//! * [`RegisterProgram`]: the verdicts of the syscalls whose filters look
//!   at `x0..x7` alone, compiled to a table of comparisons the vector
//!   walks in assembly (and the lean entry in Rust).

mod cache;
#[cfg(test)]
mod cache_tests;
mod description;
mod evaluate;
mod facts;
mod register_program;
#[cfg(test)]
mod register_program_tests;
#[cfg(test)]
mod tests;

pub use cache::{VerdictCache, SYSCALL_COUNT};
pub use description::Filter;
pub use evaluate::{evaluate, evaluate_deciding, killing_rule, routed_verdict};
pub use facts::{JudgedView, SyscallFacts};
pub use register_program::{
    Comparison, RegisterProgram, END, EQUAL, ERRNO_RANK, GREATER, LESS, PROGRAM_COMPARISONS,
};
