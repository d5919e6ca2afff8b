//! The fault handler of `faulty`: it receives the fault as a message
//! (badged as the description says), stops the thread, and reports how
//! it ended (the end message comes to the same endpoint).
#![no_std]
#![no_main]

use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::supervision::{self, FaultReply, END_LABEL};

/// The endpoint `faulty`'s faults come to.
const FAULTS: Cptr = Cptr(2);

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    loop {
        let Ok(received) = ipc::recv(FAULTS) else {
            return 1;
        };
        let message = received.message;
        match message.info.label() {
            supervision::FAULT_LABEL => {
                let Some(fault) = supervision::fault_of(&message) else {
                    return 1;
                };
                println!(
                    "handler: badge {:#x}: a fault (class {:#x}) at address {:#x}, pc {:#x}; stopping it",
                    received.badge, fault.class, fault.far, fault.pc
                );
                if ipc::reply(&supervision::fault_reply(FaultReply::Stop)).is_err() {
                    return 1;
                }
            }
            END_LABEL => {
                let end = supervision::end_of(&message);
                println!("handler: badge {:#x}: it ended: {end:?}", received.badge);
                return 0;
            }
            label => println!("handler: a message with label {label:#x}"),
        }
    }
}
