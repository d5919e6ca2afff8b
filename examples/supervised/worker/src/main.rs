//! A worker that faults on its first two runs and exits cleanly on the
//! third: the root rebuilds it after each fault (`restart = "on-fault"`,
//! `../system.toml`). Each run starts from a fresh image; only the page
//! of memory the description maps for it keeps the count of runs.
#![no_std]
#![no_main]

use sdk::println;
use sdk::vspace::MappedFrame;

/// Where the description maps the page that outlives a restart.
const RUNS: u64 = 0x1000_0000;

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let page = MappedFrame::described(RUNS, true);
    let run = page.read_u64(0) + 1;
    if page.write_u64(0, run).is_err() {
        return 2;
    }
    println!("worker: run {run}");
    if run < 3 {
        println!("worker: writing to address 0");
        sdk::probe::write_u64(0);
    }
    println!("worker: third time lucky; exiting");
    0
}
