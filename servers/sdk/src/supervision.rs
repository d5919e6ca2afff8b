//! Supervising threads: their fault messages, how a thread ended (its end
//! message) and restarting it.
//!
//! A thread with a fault endpoint that faults sends it a fault message
//! ([`fault_of`] decodes it) and waits for the reply ([`fault_reply`]
//! builds it): layouts in `abi::fault`, whose `encode` and `decode` the
//! kernel uses too.
//!
//! A thread made from user space that ends (it exits, the kernel kills it,
//! or it faults with no handler able to take the fault) keeps its TCB,
//! ended, and the holder of its fault endpoint receives an end message
//! (`abi::fault::END_LABEL`, with the fault endpoint capability's badge):
//! [`end_of`] decodes it. The supervisor then deletes the TCB (its memory
//! comes back as any object's) or restarts the thread with [`restart`].

use crate::ipc::Message;
use crate::tcb::Tcb;
use abi::{ErrorCode, Syscall};

pub use abi::fault::ServerLoss;
pub use abi::fault::{FaultMessage, FaultReply, KillReason, ThreadEnd, END_LABEL, FAULT_LABEL};

/// The fault `message` reports, if it is a fault message (label
/// [`FAULT_LABEL`], at least four words); `None` for any other message.
pub fn fault_of(message: &Message) -> Option<FaultMessage> {
    FaultMessage::decode(message.info, &message.words)
}

/// The reply to a fault message that carries `reply`.
pub fn fault_reply(reply: FaultReply) -> Message {
    let (info, [word]) = reply.encode();
    Message {
        info,
        words: [word, 0, 0, 0, 0, 0],
    }
}

/// How the thread ended, if `message` is an end message (label
/// [`END_LABEL`], six words); `None` for any other message.
pub fn end_of(message: &Message) -> Option<ThreadEnd> {
    if message.info.label() != END_LABEL
        || usize::from(message.info.length()) < abi::fault::END_WORDS
    {
        return None;
    }
    ThreadEnd::decode(&message.words)
}

/// What a thread's loss as a policy server came to, if `message` is a
/// fault or end message (`abi::fault::ServerLoss`: the filter attachments
/// that lost it, which its supervisor hands to another server with
/// `FilterCap::set_server`, and their requests refused); `None` for any
/// other message. An end message's are in this thread's IPC buffer, so
/// read it before the next receive.
pub fn server_loss_of(message: &Message) -> Option<ServerLoss> {
    ServerLoss::decode(message.info, &message.words, crate::ipc::buffer_word)
}

/// The registers an ended thread restarts with (the others are zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restart {
    /// Where it starts (4-byte aligned, in the user half).
    pub pc: u64,
    /// Its stack pointer (16-byte aligned, in the user half).
    pub sp: u64,
    /// Its `x0` (the SDK's entry point passes it to `portcullis_main`).
    pub x0: u64,
    /// Its `TPIDR_EL0`: where it finds its IPC buffer (`sdk::ipc`).
    pub tpidr: u64,
}

/// Restarts the ended thread of `tcb` (write right) with `registers`, in the
/// address space it is bound to (its own, or one a `Tcb::set_space` after
/// its end gave it). Its end message, if no one took it, is withdrawn.
/// `InvalidArgument` for a thread that has not ended or has no address
/// space, `Denied` for one that lost a filter confining it.
pub fn restart(tcb: Tcb, registers: Restart) -> Result<(), ErrorCode> {
    crate::syscall::raw_syscall6(
        Syscall::TcbRestart.number(),
        tcb.0 .0,
        [registers.pc, registers.sp, registers.x0, registers.tpidr, 0],
    )
    .into_result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_end_message_decodes_and_other_messages_do_not() {
        let end = ThreadEnd::Exited { status: 4 };
        let message = Message::new(END_LABEL, &end.encode());
        assert_eq!(end_of(&message), Some(end));
        let fault = Message::new(abi::fault::FAULT_LABEL, &end.encode());
        assert_eq!(end_of(&fault), None);
        let short = Message::new(END_LABEL, &end.encode()[..4]);
        assert_eq!(end_of(&short), None);
    }

    #[test]
    fn fault_messages_decode_and_replies_carry_their_labels() {
        let fault = FaultMessage::new(0x9200_0046, 0x1000, 0x40_0000);
        let message = Message::new(FAULT_LABEL, &fault.encode());
        assert_eq!(fault_of(&message), Some(fault));
        let end = Message::new(END_LABEL, &fault.encode());
        assert_eq!(fault_of(&end), None);
        let m = fault_reply(FaultReply::SetPc(0x40_0004));
        assert_eq!(
            (m.info.label(), m.info.length(), m.words[0]),
            (abi::fault::FAULT_REPLY_SET_PC, 1, 0x40_0004)
        );
        let m = fault_reply(FaultReply::Stop);
        assert_eq!(m.info.label(), abi::fault::FAULT_REPLY_STOP);
    }
}
