//! Logs made of frames, as the kernel writes them, for the decoder's
//! unit tests.

use abi::export::{encode_frame, Event, MAX_FRAME_BYTES};

/// `events` as a log: each one's frame between two zero bytes.
pub fn log(events: &[Event]) -> Vec<u8> {
    let mut log = Vec::new();
    for event in events {
        let mut out = [0u8; MAX_FRAME_BYTES];
        log.push(0);
        log.extend_from_slice(encode_frame(event, &mut out).expect("fits"));
        log.push(0);
    }
    log
}
