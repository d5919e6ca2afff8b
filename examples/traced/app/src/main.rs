//! The traced app: a few calls, each seen by its tracer (a line at entry
//! and exit) and recorded in its audit ring (`../system.toml`).
#![no_std]
#![no_main]

use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::syscall;

/// A notification it signals and polls.
const BELL: Cptr = Cptr(2);

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let _ = syscall::null();
    println!("app: traced and audited");
    let _ = ipc::signal(BELL);
    let word = ipc::poll(BELL);
    println!("app: the bell's word -> {word:?}");
    0
}
