//! Moving a message from one thread to another.
//!
//! A message is the message-info word (`x1`) and up to
//! `MAX_MESSAGE_WORDS` words: the first `REGISTER_MESSAGE_WORDS` travel in
//! `x2..x7`, the rest in the threads' IPC buffers (word `i` at byte `8 * i`
//! of the buffer page), copied through physical memory. A message longer
//! than either side's buffer allows is cut to what fits, and the receiver's
//! message info says how many words arrived. The buffer words of a message
//! its sender's filters judged come from the sender's judged copy.

use crate::platform::PhysMemory;
use crate::thread::Thread;
use abi::{ErrorCode, MessageInfo, REGISTER_MESSAGE_WORDS};

/// Longest message, in words.
pub const MAX_MESSAGE_WORDS: usize = 64;

/// The message `from` is sending, as its message info says.
pub fn sent_info(thread: &Thread) -> MessageInfo {
    thread.context.message_info()
}

use abi::MESSAGE_LENGTH_AND_CAPS_MASK as LENGTH_AND_CAPS_MASK;

/// Does the message fit in registers (the fast path's condition): at most
/// `REGISTER_MESSAGE_WORDS` words and no capabilities? The count sits
/// above the length, so both hold exactly when the two fields together,
/// read as one number, are at most the register words: one compare.
pub fn fits_in_registers(info: MessageInfo) -> bool {
    u64::from(info) & LENGTH_AND_CAPS_MASK <= REGISTER_MESSAGE_WORDS as u64
}

/// Copies the message of `from` to `to`: x1 (message info, length as
/// delivered, no capabilities yet), x2..x7, buffer words, `badge` in x8
/// and `Ok` in x0. Returns whether the message names capabilities to
/// move (the kernel moves them afterwards: `Kernel::transfer_caps`).
#[inline(always)]
pub fn transfer<M: PhysMemory>(
    phys: &mut M,
    from: &mut Thread,
    to: &mut Thread,
    badge: u64,
) -> bool {
    let info = sent_info(from);
    let wanted = (info.length() as usize).min(MAX_MESSAGE_WORDS);
    let length = match (from.ipc_buffer, to.ipc_buffer) {
        // A judged message is what its filters judged, from the judged
        // copy, whatever became of the sender's buffer since: one that
        // dropped its buffer after the judgement must not deliver the
        // message cut short (a message they did not allow), nor one that
        // had none then and has one now deliver words nobody judged.
        (_, Some(target)) if wanted > REGISTER_MESSAGE_WORDS && from.judged.is_message() => {
            let judged = from.judged.message_words().unwrap_or(0);
            let length = wanted.min(REGISTER_MESSAGE_WORDS + judged);
            send_judged_words(phys, from, target, length);
            length
        }
        (Some(source), Some(target)) if wanted > REGISTER_MESSAGE_WORDS => {
            let first = 8 * REGISTER_MESSAGE_WORDS as u64;
            phys.copy_phys_words(
                source + first,
                target + first,
                wanted - REGISTER_MESSAGE_WORDS,
            );
            wanted
        }
        _ => {
            // Sent: a judged copy of its buffer words is done with too (a
            // copy lives as long as its call; kept, the thread's next
            // message would be judged and sent from it).
            if from.judged.is_message() {
                from.judged.forget();
            }
            wanted.min(REGISTER_MESSAGE_WORDS)
        }
    };
    let delivered = info.with_length(length as u8).with_caps(0);
    let receiver = &mut to.context;
    receiver.set_result(ErrorCode::Ok);
    receiver.set_message_info(delivered);
    // Word by word (the views'): a slice copy is a `memcpy` call on the
    // kernel target (strict alignment).
    receiver.set_message_words(from.context.message_words());
    receiver.set_badge(badge);
    info.caps() != 0
}

/// The buffer words `6..wanted` of a message its sender's filters judged,
/// from the sender's judged copy (`crate::judged_memory`), never its
/// buffer read again, into the receiver's buffer at `target`; the copy is
/// done with then (a `Call` waits for its reply, which carries nothing of
/// the caller's). `wanted` is at most what the copy holds (`transfer`);
/// a word it lacked would be 0. Out of line: the common message was not
/// judged.
#[cold]
#[inline(never)]
fn send_judged_words<M: PhysMemory>(phys: &mut M, from: &mut Thread, target: u64, wanted: usize) {
    for word in REGISTER_MESSAGE_WORDS..wanted {
        let value = from.judged.message_word(word).unwrap_or(0);
        phys.write_phys_u64(target + 8 * word as u64, value);
    }
    from.judged.forget();
}

#[cfg(test)]
mod tests;
