//! The task programs embedded in init's image, stripped: the root loads
//! them into address spaces of their own with `sdk::loader::load_elf`
//! (`abi::task` is their slot and message contract, `docs/tasks.md` the
//! overview). `build.rs` says where the files come from.

/// The echo server (`servers/echo`).
pub static ECHO_ELF: &[u8] = include_bytes!(env!("PORTCULLIS_ECHO_ELF"));

/// The echo client (`servers/echo-client`).
pub static ECHO_CLIENT_ELF: &[u8] = include_bytes!(env!("PORTCULLIS_ECHO_CLIENT_ELF"));
