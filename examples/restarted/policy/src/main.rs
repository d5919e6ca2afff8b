//! A policy server that crashes on a request marked 2 (`../system.toml`):
//! the root restarts it and hands it the app's filter.
#![no_std]
#![no_main]

use sdk::ipc::Cptr;
use sdk::policy_server::{serve, PolicyAnswer, PolicyRequest, PolicyServer};
use sdk::println;

/// The endpoint the filter's requests come to.
const REQUESTS: Cptr = Cptr(2);
/// The mark (`x2`) of the request it crashes on.
const POISON: u64 = 2;

struct Fragile;

impl PolicyServer for Fragile {
    fn decide(&mut self, request: &PolicyRequest) -> PolicyAnswer {
        let mark = request.args[2];
        println!("policy: asked about a null marked {mark}");
        if mark == POISON {
            // A crash while it holds the request: the kernel refuses it.
            sdk::probe::write_u64(0);
        }
        PolicyAnswer::Allow
    }
}

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    match serve(REQUESTS, &mut Fragile) {
        Ok(()) => 0,
        Err(error) => {
            println!("policy: stopped: {}", error.name());
            1
        }
    }
}
