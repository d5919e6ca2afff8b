//! The app: three calls its filter forwards, answered from the policy
//! server's rules file (`../policy.rules`).
#![no_std]
#![no_main]

use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::syscall;

/// A second console capability: the filter forwards prints through it.
const LOUD_CONSOLE: u64 = 2;
/// A notification it polls and signals.
const BELL: Cptr = Cptr(3);

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let long = b"app: this line is longer than the 48 bytes the rules allow\n";
    let printed =
        syscall::debug_print_raw_via(LOUD_CONSOLE, long.as_ptr() as u64, long.len() as u64);
    println!("\napp: the long print -> {printed:?}");
    println!("app: poll -> {:?}", ipc::poll(BELL));
    println!("app: signal -> {:?}", ipc::signal(BELL));
    0
}
