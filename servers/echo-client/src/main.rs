//! The echo client: a task the root loads from this ELF into an address
//! space of its own. It calls the echo server with a short message (in
//! registers) and a long one (through the IPC buffer) and checks both
//! replies exactly; loads from an unmapped address so that its fault
//! handler (the root) must resume it; sends STOP and checks that the
//! server saw the badge the root passed as the entry argument; then
//! reports `CLIENT_DONE` and exits 0, or `CLIENT_FAILED` and exits 1 if
//! any check failed. `abi::task` is the contract.
#![no_std]
#![no_main]

use abi::task::{
    pack_words, CLIENT_DONE, CLIENT_FAILED, CLIENT_FAULT_ADDRESS, ECHO_ENDPOINT_SLOT, ECHO_LABEL,
    ECHO_MAX_WORDS, ECHO_REPLY_LABEL, STOP_LABEL, STOP_REPLY_LABEL,
};
use abi::REGISTER_MESSAGE_WORDS;
use sdk::ipc::{self, Cptr, Message};
use sdk::println;

const ENDPOINT: Cptr = Cptr(ECHO_ENDPOINT_SLOT);

/// Fits in the message registers.
const SHORT: &[u8] = b"hello from the echo client!";
const SHORT_REPLY: &[u8] = b"HELLO FROM THE ECHO CLIENT!";
/// Needs the IPC buffer: words 6.. of it.
const LONG: &[u8] = b"this message is too long for the six message registers, \
so the kernel copies the words after the sixth from the client's IPC buffer \
into the server's, and the uppercased reply comes back the same way: \
every lower-case letter of it (a to z) changes, digits 0123456789 and \
punctuation (!?.,;:) do not.";
const LONG_REPLY: &[u8] = b"THIS MESSAGE IS TOO LONG FOR THE SIX MESSAGE REGISTERS, \
SO THE KERNEL COPIES THE WORDS AFTER THE SIXTH FROM THE CLIENT'S IPC BUFFER \
INTO THE SERVER'S, AND THE UPPERCASED REPLY COMES BACK THE SAME WAY: \
EVERY LOWER-CASE LETTER OF IT (A TO Z) CHANGES, DIGITS 0123456789 AND \
PUNCTUATION (!?.,;:) DO NOT.";

const _: () = {
    assert!(SHORT.len() == SHORT_REPLY.len() && SHORT.len() <= 8 * REGISTER_MESSAGE_WORDS);
    assert!(LONG.len() == LONG_REPLY.len());
    assert!(LONG.len() > 8 * REGISTER_MESSAGE_WORDS && LONG.len() <= 8 * ECHO_MAX_WORDS);
};

/// A failed check: which one.
struct Failed(&'static str);

/// The program's entry, called by the SDK's `_start`; `badge` is the
/// badge the root minted on this task's endpoint capability.
#[no_mangle]
fn portcullis_main(badge: u64) -> i32 {
    println!("echo-client: started (badge {badge:#x})");
    let checks = echo(SHORT, SHORT_REPLY)
        .and_then(|()| echo(LONG, LONG_REPLY))
        .map(|()| fault_and_resume());
    // Stop the server whatever happened, so that it exits too.
    let stopped = stop(badge);
    let (bit, status) = match checks.and(stopped) {
        Ok(()) => (CLIENT_DONE, 0),
        Err(Failed(check)) => {
            println!("echo-client: FAILED: {check}");
            (CLIENT_FAILED, 1)
        }
    };
    // Printed before the report: the root may end this task as soon as
    // it has it.
    if status == 0 {
        println!("echo-client: done");
    }
    if let Err(error) = sdk::task::report(bit) {
        println!("echo-client: reporting to the root failed: {error:?}");
        return 2;
    }
    status
}

/// Calls the server with `text`, checks the reply is `want` (label,
/// length, every word) and prints it.
fn echo(text: &[u8], want: &[u8]) -> Result<(), Failed> {
    let mut words = [0u64; ECHO_MAX_WORDS];
    let length = pack_words(text, &mut words);
    for (index, word) in words
        .iter()
        .enumerate()
        .take(length)
        .skip(REGISTER_MESSAGE_WORDS)
    {
        ipc::set_buffer_word(index, *word);
    }
    let registers = length.min(REGISTER_MESSAGE_WORDS);
    let message = Message::new(ECHO_LABEL, &words[..registers]).with_length(length as u8);
    let reply = ipc::call(ENDPOINT, &message).map_err(|_| Failed("the echo call"))?;
    if reply.info.label() != ECHO_REPLY_LABEL || reply.info.length() as usize != length {
        return Err(Failed("the echo reply's label or length"));
    }
    let mut expected = [0u64; ECHO_MAX_WORDS];
    pack_words(want, &mut expected);
    let mut bytes = [0u8; 8 * ECHO_MAX_WORDS];
    for index in 0..length {
        let word = if index < REGISTER_MESSAGE_WORDS {
            reply.words[index]
        } else {
            ipc::buffer_word(index)
        };
        if word != expected[index] {
            return Err(Failed("the echo reply's words"));
        }
        bytes[8 * index..8 * index + 8].copy_from_slice(&word.to_le_bytes());
    }
    let text = core::str::from_utf8(&bytes[..want.len()]).unwrap_or("(not UTF-8)");
    println!("echo-client: {length} words back: {text}");
    Ok(())
}

/// Loads from an address no task maps: the fault goes to this thread's
/// fault endpoint, whose handler resumes it after the load.
fn fault_and_resume() {
    println!("echo-client: reading {CLIENT_FAULT_ADDRESS:#x}, which is not mapped");
    let _ = sdk::probe::read_u64(CLIENT_FAULT_ADDRESS);
    println!("echo-client: resumed after the fault");
}

/// Sends STOP; the reply must carry the badge the server saw, which must
/// be the one the root passed as the entry argument.
fn stop(badge: u64) -> Result<(), Failed> {
    let reply =
        ipc::call(ENDPOINT, &Message::new(STOP_LABEL, &[])).map_err(|_| Failed("the stop call"))?;
    if reply.info.label() != STOP_REPLY_LABEL || reply.info.length() != 1 {
        return Err(Failed("the stop reply's label or length"));
    }
    if reply.words[0] != badge {
        println!(
            "echo-client: the server saw badge {:#x}, the root said {badge:#x}",
            reply.words[0]
        );
        return Err(Failed("the badge"));
    }
    Ok(())
}
