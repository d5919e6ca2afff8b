//! The echo server: a task the root loads from this ELF into an address
//! space of its own. It answers `abi::task::ECHO_LABEL` messages on its
//! endpoint with the same words ASCII-uppercased, prints one line per
//! message naming the sender's badge, and on `STOP_LABEL` replies,
//! reports `SERVER_DONE` to the root and exits 0. `abi::task` is the
//! contract; its entry argument is ignored.
#![no_std]
#![no_main]

use abi::task::{
    uppercase_word, ECHO_ENDPOINT_SLOT, ECHO_LABEL, ECHO_MAX_WORDS, ECHO_REPLY_LABEL,
    ERROR_REPLY_LABEL, SERVER_DONE, STOP_LABEL, STOP_REPLY_LABEL,
};
use abi::REGISTER_MESSAGE_WORDS;
use sdk::ipc::{self, Cptr, Message, Received};
use sdk::println;

const ENDPOINT: Cptr = Cptr(ECHO_ENDPOINT_SLOT);

/// What to do with one message.
enum Answer {
    /// Reply and keep serving.
    Reply(Message),
    /// Reply, report and exit.
    Stop(Message),
}

/// The program's entry, called by the SDK's `_start`.
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    println!("echo: serving on slot {ECHO_ENDPOINT_SLOT}");
    let mut received = ipc::recv(ENDPOINT);
    loop {
        let message = match received {
            Ok(message) => message,
            Err(error) => {
                println!("echo: receive failed: {error:?}");
                return 1;
            }
        };
        match answer(&message) {
            Answer::Reply(reply) => received = ipc::reply_recv(ENDPOINT, &reply),
            Answer::Stop(reply) => {
                if let Err(error) = ipc::reply(&reply) {
                    println!("echo: the reply to STOP failed: {error:?}");
                }
                // Printed before the report: the root may end this task
                // as soon as it has it.
                println!("echo: stopped");
                if let Err(error) = sdk::task::report(SERVER_DONE) {
                    println!("echo: reporting to the root failed: {error:?}");
                    return 2;
                }
                return 0;
            }
        }
    }
}

/// Prints the message's line and builds its reply; words past the
/// registers are read from, and written back to, the IPC buffer.
fn answer(received: &Received) -> Answer {
    let info = received.message.info;
    let badge = received.badge;
    let length = info.length() as usize;
    match info.label() {
        ECHO_LABEL if info.caps() == 0 && length <= ECHO_MAX_WORDS => {
            println!("echo: badge {badge:#x}: echo of {length} words");
            let mut words = [0u64; REGISTER_MESSAGE_WORDS];
            for (word, sent) in words.iter_mut().zip(received.message.words) {
                *word = uppercase_word(sent);
            }
            // The reply goes out of the same buffer the message came in.
            for index in REGISTER_MESSAGE_WORDS..length {
                ipc::set_buffer_word(index, uppercase_word(ipc::buffer_word(index)));
            }
            let registers = length.min(REGISTER_MESSAGE_WORDS);
            Answer::Reply(
                Message::new(ECHO_REPLY_LABEL, &words[..registers]).with_length(length as u8),
            )
        }
        STOP_LABEL => {
            println!("echo: badge {badge:#x}: stop");
            Answer::Stop(Message::new(STOP_REPLY_LABEL, &[badge]))
        }
        label => {
            println!(
                "echo: badge {badge:#x}: refused label {label:#x}, {length} words, {} capabilities",
                info.caps()
            );
            Answer::Reply(Message::new(ERROR_REPLY_LABEL, &[]))
        }
    }
}
