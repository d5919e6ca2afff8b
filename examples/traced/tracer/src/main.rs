//! The app's tracer: the reference tracer's strace-like lines, every
//! stop continued; it ends at the app's `exit`.
#![no_std]
#![no_main]

use sdk::ipc::Cptr;
use sdk::println;
use sdk::trace::{self, Next, Stop, TraceServer};
use sdk::Syscall;

/// The endpoint the app's stops come to.
const STOPS: Cptr = Cptr(2);

struct Lines(tracer::Tracer);

impl TraceServer for Lines {
    fn stop(&mut self, stop: &Stop) -> Next {
        if let Some(event) = self.0.stop(stop) {
            println!("{}", self.0.line(&event));
        }
        if stop.is_entry() && stop.syscall() == Some(Syscall::Exit) {
            Next::AnswerThenStop(trace::resume(false))
        } else {
            Next::Answer(trace::resume(false))
        }
    }
}

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    // The app's slots, named as its system description gives them.
    let names = tracer::Tracer::new()
        .name_slot(1, "console")
        .name_slot(2, "bell");
    match trace::serve(STOPS, &mut Lines(names)) {
        Ok(()) => 0,
        Err(error) => {
            println!("tracer: stopped: {}", error.name());
            1
        }
    }
}
