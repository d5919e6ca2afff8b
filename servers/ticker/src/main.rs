//! The ticker: a task for the shell's system (systems/shell.toml) to
//! trace, audit, confine, kill and restart. Once a second (by the
//! counter, which it reads without a syscall) it makes three quiet
//! syscalls: `null`, `signal` and `poll` on its notification (slot 1). It
//! prints nothing, so a person typing at the prompt is not interrupted;
//! `trace ticker on` and `audit tail` show what it does. A `signal` the
//! shell's policy refuses is counted, and the ticker carries on.
#![no_std]
#![no_main]

use sdk::ipc::{self, Cptr};
use sdk::time::clock;

/// Its notification.
const NOTIFICATION: Cptr = Cptr(1);

#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let second = clock::frequency();
    let mut next = clock::now().0;
    loop {
        // Spin on the counter: a syscall per turn would flood a trace.
        while clock::now().0 < next {
            core::hint::spin_loop();
        }
        next += second;
        let _ = sdk::syscall::null();
        let _ = ipc::signal(NOTIFICATION);
        let _ = ipc::poll(NOTIFICATION);
    }
}
