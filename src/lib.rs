//! Host runner for the Portcullis microkernel.
//!
//! `build.rs` cross-builds the AArch64 kernel and user programs; this crate
//! boots them in QEMU and reads what the guest prints. It is used by the
//! `portcullis` binary (behind `./qemu-run.sh`) and by the integration
//! tests in `tests/`.
//!
//! Design points a reader should keep in mind:
//!
//! 1. **The guest decides, the host checks.** The guest ends QEMU through
//!    semihosting with its own status (0 success, 1 a test failed, 2 kernel
//!    panic); the runner always passes `-semihosting` together with
//!    `portcullis.exit=semihosting`. The host does not trust the status
//!    alone: it also reads the output (TAP plan, results, summary, panic
//!    line, banner) and fails on any disagreement.
//! 2. **Nothing hangs.** Every run has a deadline (120 s unless told
//!    otherwise); at the deadline QEMU is killed and the run fails.
//! 3. **Failures show everything.** A [`RunOutcome`] keeps the full UART
//!    output and QEMU's stderr; its `Display` prints them with the reasons.
//! 4. **Missing pieces are named.** A missing QEMU, kernel image or DTB is
//!    an error that says which file and how to get it.
//!
//! The guest protocol on the UART (QEMU's `-serial stdio`):
//!
//! | line | meaning |
//! | --- | --- |
//! | `Portcullis ...` | boot banner (version, board, entry EL, RAM, timer) |
//! | `TAP version 13`, `1..N` | test mode: TAP header and plan |
//! | `ok K - name`, `not ok K - name` | one test's result |
//! | `# ...` | diagnostics |
//! | `# portcullis: N passed, M failed` | end of the test suite |
//! | `KERNEL PANIC ...` | a panic; the decoded report follows |
//! | `BENCH ...`, `BENCH-ERROR ...`, `# portcullis-bench: C results` | bench mode: see [`bench`] |

#![deny(missing_docs)]

pub mod artifacts;
pub mod bench;
pub mod cli;
pub mod decode;
pub mod guest_mode;
pub mod guest_output;
pub mod machine;
pub mod new;
pub mod profile;
pub mod qemu;
pub mod session;
pub mod shell_session;

pub use artifacts::KernelFlavour;
pub use guest_mode::GuestMode;
pub use guest_output::RunOutcome;
pub use machine::Machine;
pub use session::{boot, prepare, RunError, RunRequest};
