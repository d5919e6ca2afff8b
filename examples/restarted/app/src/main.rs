//! The app whose policy server crashes (`../system.toml`): each `Null`
//! it makes asks the server, which it marks in `x2` (a `Null` ignores it).
#![no_std]
#![no_main]

use sdk::println;
use sdk::syscall::raw_syscall;
use sdk::Syscall;

/// A `Null` marked with `mark`: what the server decided.
fn null(mark: u64) -> Result<(), sdk::ErrorCode> {
    raw_syscall(Syscall::Null.number(), 0, mark, 0).into_result()
}

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let first = null(1);
    println!("app: a null the server allows -> {first:?}");
    // The server crashes on this one: closed, not open.
    let crashed = null(2);
    println!("app: a null the server crashes on -> {crashed:?}");
    // The root restarted the server and handed it the filter.
    let again = null(3);
    println!("app: a null after the restart -> {again:?}");
    match (first, crashed, again) {
        (Ok(()), Err(sdk::ErrorCode::Denied), Ok(())) => {
            println!("app: allowed, refused when its server crashed, allowed again by the restarted server");
            0
        }
        _ => 1,
    }
}
