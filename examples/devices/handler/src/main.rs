//! The fault handler of `faulty`: it receives the fault as a message
//! (badged as the description says), stops the thread, and reports how
//! it ended (the end message comes to the same endpoint).
#![no_std]
#![no_main]

use abi::fault::{FAULT_LABEL, FAULT_REPLY_STOP};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::supervision::{self, END_LABEL};

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
            FAULT_LABEL => {
                let [class, address, _, pc, ..] = message.words;
                println!(
                    "handler: badge {:#x}: a fault (class {class:#x}) at address {address:#x}, pc {pc:#x}; stopping it",
                    received.badge
                );
                if ipc::reply(&Message::new(FAULT_REPLY_STOP, &[])).is_err() {
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
