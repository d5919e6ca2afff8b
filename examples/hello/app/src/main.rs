//! The smallest system: one task that greets and exits.
#![no_std]
#![no_main]

use sdk::println;

/// The program's entry, called by the SDK's `_start` with `x0`.
#[no_mangle]
fn portcullis_main(argument: u64) -> i32 {
    println!("hello from a task of my own (argument {argument:#x})");
    0
}
