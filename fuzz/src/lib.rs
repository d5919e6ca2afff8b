//! Fuzz entry points for the parts of Portcullis that read bytes and words
//! user space (or a boot loader) controls, for the SDK's task loader, and
//! for the capability table.
//!
//! Each entry takes arbitrary bytes, must never panic, and checks the
//! property its code promises; a broken property panics, which is how
//! libFuzzer and the corpus replay recognise a finding. The same functions
//! run under two drivers, so what is fuzzed is exactly what is tested:
//!
//! * `fuzz_targets/*.rs`: one cargo-fuzz target per entry
//!   (`cargo +nightly fuzz run <name>` from `fuzz/`);
//! * `tests/host_fuzz_corpus.rs` in the root package: replays every file of
//!   `fuzz/corpus/<name>/` plus a fixed-seed mutation run on the stable
//!   toolchain, as part of `cargo test`.
//!
//! `docs/fuzzing.md` lists the targets and what each checks.
//!
//! The replay test includes this file as a module (`#[path]`), not as a
//! crate, so that the stable build does not compile libFuzzer: paths inside
//! start from `super::`, never from `crate::`.
#![deny(missing_docs)]

mod bytes;
mod cap_table;
mod device_tree;
mod elf_image;
mod policy;
mod records;
mod syscall;
mod task_loader;
mod words;

pub use cap_table::cap_table_ops;
pub use device_tree::device_tree;
pub use elf_image::elf_image;
pub use policy::{policy_description, policy_verdict};
pub use records::{audit_record, audit_ring, server_messages};
pub use syscall::syscall_registers;
pub use words::{capability_word, message_info};

/// An entry point: takes any bytes, panics only on a finding.
pub type Entry = fn(&[u8]);

/// Every entry with its target name (the name of its `fuzz_targets/` file
/// and of its `corpus/` directory).
pub const TARGETS: [(&str, Entry); 11] = [
    ("policy_description", policy_description),
    ("policy_verdict", policy_verdict),
    ("elf_image", elf_image),
    ("device_tree", device_tree),
    ("message_info", message_info),
    ("capability_word", capability_word),
    ("syscall_registers", syscall_registers),
    ("cap_table_ops", cap_table_ops),
    ("audit_record", audit_record),
    ("audit_ring", audit_ring),
    ("server_messages", server_messages),
];
