//! The confined app's policy server: the filter forwards some of the
//! app's calls here (`../system.toml`). It clamps long prints to 48
//! bytes, refuses signals, allows polls and kills the app at its third,
//! then ends (ending the system).
#![no_std]
#![no_main]

use sdk::ipc::Cptr;
use sdk::policy_server::{serve, PolicyAnswer, PolicyRequest, PolicyServer};
use sdk::println;
use sdk::{ErrorCode, Syscall};

/// The endpoint the filter's requests come to.
const REQUESTS: Cptr = Cptr(2);
/// The longest print let through.
const MAX_PRINT: u64 = 48;
/// The poll that gets the app killed.
const FATAL_POLL: u32 = 3;

/// Counts what it was asked.
#[derive(Default)]
struct Confiner {
    requests: u32,
    polls: u32,
    killed: bool,
}

impl PolicyServer for Confiner {
    fn decide(&mut self, request: &PolicyRequest) -> PolicyAnswer {
        self.requests += 1;
        let answer = match request.syscall {
            Some(Syscall::DebugPrint) if request.args[3] > MAX_PRINT => {
                let mut registers = [0u64; 6];
                registers.copy_from_slice(&request.args[2..8]);
                registers[1] = MAX_PRINT;
                PolicyAnswer::AllowWith(registers)
            }
            Some(Syscall::DebugPrint) => PolicyAnswer::Allow,
            Some(Syscall::Signal) => PolicyAnswer::Errno(ErrorCode::Denied),
            Some(Syscall::Poll) => {
                self.polls += 1;
                if self.polls >= FATAL_POLL {
                    self.killed = true;
                    PolicyAnswer::Kill
                } else {
                    PolicyAnswer::Allow
                }
            }
            _ => PolicyAnswer::Errno(ErrorCode::Denied),
        };
        println!(
            "policy: request {} from thread {}: {} -> {:?}",
            self.requests,
            request.thread,
            request.syscall.map_or("?", |s| s.name()),
            answer
        );
        answer
    }

    fn done(&mut self) -> bool {
        self.killed
    }
}

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    let mut confiner = Confiner::default();
    match serve(REQUESTS, &mut confiner) {
        Ok(()) => {
            println!(
                "policy: {} requests answered, none of them a yield; the app was killed at poll {FATAL_POLL}",
                confiner.requests
            );
            0
        }
        Err(error) => {
            println!("policy: stopped: {}", error.name());
            1
        }
    }
}
