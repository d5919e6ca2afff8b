//! A task whose faults go to a handler task of its own, not to the root
//! (`fault_handler` in `../system.toml`).
#![no_std]
#![no_main]

use sdk::println;

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    println!("faulty: writing to address 0");
    sdk::probe::write_u64(0);
    println!("faulty: resumed, which the handler should not have allowed");
    1
}
