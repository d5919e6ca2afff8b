//! The confined app: each of its calls meets a different rule of the
//! filter its system description attaches (`../system.toml`).
#![no_std]
#![no_main]

use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::syscall;

/// A second capability to the console: the filter sends prints through
/// it to the policy server.
const LOUD_CONSOLE: u64 = 2;
/// A notification the app signals and polls.
const BELL: Cptr = Cptr(3);

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    // A constant Allow: decided by the filter alone, on the fast path.
    let yields = (0..100).filter(|_| syscall::yield_now().is_ok()).count();
    println!("app: {yields} yields went through; none of them reached the policy server");

    let long = b"app: a long line through the loud console, which the server clamps to 48 bytes\n";
    let printed =
        syscall::debug_print_raw_via(LOUD_CONSOLE, long.as_ptr() as u64, long.len() as u64);
    println!("\napp: the long print -> {printed:?}");

    println!("app: signal -> {:?}", ipc::signal(BELL));

    // The filter reads the text itself (a copy the kernel judges and
    // would print): a line that names the secret is refused.
    let refused = syscall::debug_print(b"app: the secret is 42\n");
    println!("app: a print that gives it away -> {refused:?}");

    for attempt in 1.. {
        println!("app: poll #{attempt}");
        println!("app: poll #{attempt} -> {:?}", ipc::poll(BELL));
    }
    0
}
