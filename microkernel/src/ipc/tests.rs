//! The IPC rules, on plain thread tables.

use super::*;
use crate::endpoint_queue::{EndpointQueue, Waiting};
use crate::platform::PhysMemory;
use crate::thread::test_threads::ThreadVec;
use abi::MessageInfo;
use std::collections::HashMap;

#[derive(Default)]
struct Ram(HashMap<u64, u64>);

impl PhysMemory for Ram {
    fn read_phys(&self, _pa: u64, _out: &mut [u8]) {
        unreachable!("IPC copies words")
    }
    fn write_phys(&mut self, _pa: u64, _data: &[u8]) {
        unreachable!("IPC copies words")
    }
    fn read_phys_u64(&self, pa: u64) -> u64 {
        self.0.get(&pa).copied().unwrap_or(0)
    }
    fn write_phys_u64(&mut self, pa: u64, value: u64) {
        self.0.insert(pa, value);
    }
    fn zero_frame(&mut self, _pa: u64) {}
}

fn threads(n: usize) -> ThreadVec {
    ThreadVec::new(n)
}

fn message(thread: &mut Thread, label: u64, words: &[u64]) {
    thread
        .context
        .set_message_info(MessageInfo::with(label, words.len() as u8));
    for (i, w) in words.iter().take(6).enumerate() {
        thread.context.set_message_word(i, *w);
    }
}

const SEND: SendKind = SendKind {
    blocking: true,
    call: false,
};
const CALL: SendKind = SendKind {
    blocking: true,
    call: true,
};

#[test]
fn a_sender_waits_until_a_receiver_comes() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    let (client, server) = (ThreadId::nth(0), ThreadId::nth(1));
    message(&mut t[0], 7, &[10, 20]);
    let e = send(&mut ram, &mut t, &mut ep, ObjectId(3), client, 0xb0, SEND).unwrap();
    assert_eq!(e.next, Next::Blocked);
    assert_eq!(
        t[0].state(),
        ThreadState::BlockedOnSend {
            endpoint: ObjectId(3),
            badge: 0xb0,
            call: false,
            kernel_message: false
        }
    );
    let e = receive(&mut ram, &mut t, &mut ep, ObjectId(3), server, true).unwrap();
    assert_eq!(e.next, Next::Continue);
    assert_eq!(e.woken().collect::<Vec<_>>(), vec![client]);
    assert_eq!(t[0].state(), ThreadState::Ready);
    let got = &t[1].context;
    assert_eq!(
        (
            got.result(),
            got.message_word(0),
            got.message_word(1),
            got.badge()
        ),
        (0, 10, 20, 0xb0)
    );
    assert_eq!(got.message_info().label(), 7);
    assert_eq!(ep.waiting(), Waiting::Nobody);
}

#[test]
fn a_receiver_waits_until_a_sender_comes() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    assert_eq!(
        receive(
            &mut ram,
            &mut t,
            &mut ep,
            ObjectId(0),
            ThreadId::nth(1),
            true
        )
        .unwrap()
        .next,
        Next::Blocked
    );
    message(&mut t[0], 1, &[5]);
    let e = send(
        &mut ram,
        &mut t,
        &mut ep,
        ObjectId(0),
        ThreadId::nth(0),
        9,
        SEND,
    )
    .unwrap();
    assert_eq!(e.next, Next::Continue);
    assert_eq!(e.woken().collect::<Vec<_>>(), vec![ThreadId::nth(1)]);
    assert_eq!((t[1].context.message_word(0), t[1].context.badge()), (5, 9));
    assert_eq!(t[1].state(), ThreadState::Ready);
}

#[test]
fn call_switches_to_the_receiver_and_reply_returns() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    let (client, server) = (ThreadId::nth(0), ThreadId::nth(1));
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), server, true).unwrap();
    message(&mut t[0], 2, &[1, 2, 3]);
    let e = send(&mut ram, &mut t, &mut ep, ObjectId(0), client, 0, CALL).unwrap();
    assert_eq!(e.next, Next::SwitchTo(server));
    assert_eq!(t[0].state(), ThreadState::BlockedOnReply);
    assert_eq!(t[1].reply_to, Some(client));
    message(&mut t[1], 99, &[42]);
    assert_eq!(reply(&mut ram, &mut t, server), Ok(client));
    assert_eq!(t[0].state(), ThreadState::Ready);
    assert_eq!(
        (t[0].context.result(), t[0].context.message_word(0)),
        (0, 42)
    );
    assert_eq!(t[0].context.message_info().label(), 99);
    assert_eq!(
        reply(&mut ram, &mut t, server),
        Err(IpcError::NoReplyTarget)
    );
}

#[test]
fn answer_delivers_like_reply_to_a_caller_that_still_waits() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    let (client, server) = (ThreadId::nth(0), ThreadId::nth(1));
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), server, true).unwrap();
    message(&mut t[0], 2, &[1]);
    send(&mut ram, &mut t, &mut ep, ObjectId(0), client, 0, CALL).unwrap();
    // What `ReplySave` does: the server no longer owes it.
    t[1].reply_to = None;
    message(&mut t[1], 7, &[8, 9]);
    assert_eq!(answer(&mut ram, &mut t, server, client), Ok(client));
    assert_eq!(t[0].state(), ThreadState::Ready);
    assert_eq!(
        (
            t[0].context.result(),
            t[0].context.message_word(0),
            t[0].context.message_word(1)
        ),
        (0, 8, 9)
    );
    assert_eq!(t[0].context.message_info().label(), 7);
    // A caller that no longer waits gets nothing.
    t[0].context.set_message_word(0, 0);
    assert_eq!(
        answer(&mut ram, &mut t, server, client),
        Err(IpcError::NoReplyTarget)
    );
    assert_eq!(t[0].context.message_word(0), 0);
}

#[test]
fn reply_recv_goes_straight_back_to_the_caller() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    let (client, server) = (ThreadId::nth(0), ThreadId::nth(1));
    message(&mut t[0], 1, &[]);
    send(&mut ram, &mut t, &mut ep, ObjectId(0), client, 0, CALL).unwrap(); // waits as a sender
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), server, true).unwrap(); // gets the call
    assert_eq!(t[0].state(), ThreadState::BlockedOnReply);
    let e = reply_receive(&mut ram, &mut t, &mut ep, ObjectId(0), server).unwrap();
    assert_eq!(e.next, Next::SwitchTo(client));
    assert_eq!(t[0].state(), ThreadState::Ready);
    assert_eq!(
        t[1].state(),
        ThreadState::BlockedOnReceive {
            endpoint: ObjectId(0)
        }
    );
}

#[test]
fn senders_are_served_in_fifo_order_with_their_badges() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(4), EndpointQueue::EMPTY);
    for i in 0..3u32 {
        message(&mut t[i as usize], 0, &[u64::from(i)]);
        send(
            &mut ram,
            &mut t,
            &mut ep,
            ObjectId(0),
            ThreadId::nth(i),
            100 + u64::from(i),
            SEND,
        )
        .unwrap();
    }
    for i in 0..3 {
        receive(
            &mut ram,
            &mut t,
            &mut ep,
            ObjectId(0),
            ThreadId::nth(3),
            true,
        )
        .unwrap();
        assert_eq!(
            (t[3].context.message_word(0), t[3].context.badge()),
            (i, 100 + i)
        );
    }
}

#[test]
fn non_blocking_operations_never_wait() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    let nb = SendKind {
        blocking: false,
        call: false,
    };
    assert_eq!(
        send(
            &mut ram,
            &mut t,
            &mut ep,
            ObjectId(0),
            ThreadId::nth(0),
            0,
            nb
        ),
        Err(IpcError::WouldBlock)
    );
    assert_eq!(
        receive(
            &mut ram,
            &mut t,
            &mut ep,
            ObjectId(0),
            ThreadId::nth(1),
            false
        ),
        Err(IpcError::WouldBlock)
    );
    assert_eq!(ep.waiting(), Waiting::Nobody);
    assert_eq!(t[0].state(), ThreadState::Free, "unchanged");
}

#[test]
fn long_messages_go_through_the_ipc_buffers_and_are_cut_to_what_fits() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(3), EndpointQueue::EMPTY);
    t[0].ipc_buffer = Some(0x1000);
    t[1].ipc_buffer = Some(0x2000);
    let words: Vec<u64> = (0..10).collect();
    message(&mut t[0], 0, &words);
    for w in 6..10 {
        ram.write_phys_u64(0x1000 + 8 * w, w * 11);
    }
    receive(
        &mut ram,
        &mut t,
        &mut ep,
        ObjectId(0),
        ThreadId::nth(1),
        true,
    )
    .unwrap();
    send(
        &mut ram,
        &mut t,
        &mut ep,
        ObjectId(0),
        ThreadId::nth(0),
        0,
        SEND,
    )
    .unwrap();
    assert_eq!(t[1].context.message_info().length(), 10);
    assert_eq!(ram.read_phys_u64(0x2000 + 8 * 9), 99);
    // A receiver without a buffer gets the register words only.
    receive(
        &mut ram,
        &mut t,
        &mut ep,
        ObjectId(0),
        ThreadId::nth(2),
        true,
    )
    .unwrap();
    send(
        &mut ram,
        &mut t,
        &mut ep,
        ObjectId(0),
        ThreadId::nth(0),
        0,
        SEND,
    )
    .unwrap();
    assert_eq!(t[2].context.message_info().length(), 6);
}

#[test]
fn a_judged_message_is_delivered_as_judged_whatever_became_of_the_senders_buffer() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    let (sender, receiver) = (ThreadId::nth(0), ThreadId::nth(1));
    t[1].ipc_buffer = Some(0x2000);
    let words: Vec<u64> = (0..10).collect();
    let deliver = |ram: &mut Ram, t: &mut ThreadVec, ep: &mut EndpointQueue| {
        receive(ram, t, ep, ObjectId(0), receiver, true).unwrap();
        send(ram, t, ep, ObjectId(0), sender, 0, SEND).unwrap();
        t[1].context.message_info().length()
    };
    // Judged with four buffer words, then the sender lost its buffer (its
    // Frame deleted while the message waited): all ten words, from the
    // copy (cut to six, it would be a message the filters never judged).
    message(&mut t[0], 0, &words);
    t[0].judged.take_message(4, |i| 0x600 + i as u64);
    assert_eq!(deliver(&mut ram, &mut t, &mut ep), 10);
    assert_eq!(ram.read_phys_u64(0x2000 + 8 * 6), 0x600);
    assert_eq!(ram.read_phys_u64(0x2000 + 8 * 9), 0x603);
    // Judged without a buffer (no buffer words), then given one: the six
    // register words only, as judged, not what its new buffer holds.
    t[0].ipc_buffer = Some(0x1000);
    ram.write_phys_u64(0x1000 + 8 * 6, 0xbad);
    ram.write_phys_u64(0x2000 + 8 * 6, 0);
    message(&mut t[0], 0, &words);
    t[0].judged.take_message(0, |_| 0);
    assert_eq!(deliver(&mut ram, &mut t, &mut ep), 6);
    assert_eq!(ram.read_phys_u64(0x2000 + 8 * 6), 0);
    // Not judged: from its buffer, as before.
    message(&mut t[0], 0, &words);
    assert_eq!(deliver(&mut ram, &mut t, &mut ep), 10);
    assert_eq!(ram.read_phys_u64(0x2000 + 8 * 6), 0xbad);
}

#[test]
fn a_judged_message_sent_in_registers_only_leaves_no_copy_behind() {
    // Found by review: the copy of a Send delivered without buffer words
    // (a short message, or a receiver without a buffer) outlived it, and
    // the thread's next message was judged and sent from it.
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(3), EndpointQueue::EMPTY);
    let (sender, server, bufferless) = (ThreadId::nth(0), ThreadId::nth(1), ThreadId::nth(2));
    t[0].ipc_buffer = Some(0x1000);
    t[1].ipc_buffer = Some(0x2000);
    // A long judged Send taken by a receiver without a buffer.
    let words: Vec<u64> = (0..10).collect();
    message(&mut t[0], 0, &words);
    t[0].judged.take_message(4, |i| 0x600 + i as u64);
    send(&mut ram, &mut t, &mut ep, ObjectId(0), sender, 0, SEND).unwrap();
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), bufferless, true).unwrap();
    assert_eq!(t[2].context.message_info().length(), 6);
    assert!(!t[0].judged.is_taken(), "no copy outlives its Send");
    // A short judged Send that waited; the next long one is sent whole,
    // from its buffer (it was not judged here).
    message(&mut t[0], 0, &[1, 2]);
    t[0].judged.take_message(0, |_| 0);
    send(&mut ram, &mut t, &mut ep, ObjectId(0), sender, 0, SEND).unwrap();
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), server, true).unwrap();
    assert!(!t[0].judged.is_taken());
    message(&mut t[0], 0, &words);
    ram.write_phys_u64(0x1000 + 8 * 9, 0x99);
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), server, true).unwrap();
    send(&mut ram, &mut t, &mut ep, ObjectId(0), sender, 0, SEND).unwrap();
    assert_eq!(t[1].context.message_info().length(), 10);
    assert_eq!(ram.read_phys_u64(0x2000 + 8 * 9), 0x99);
}

#[test]
fn a_new_call_fails_the_unanswered_previous_caller() {
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(3), EndpointQueue::EMPTY);
    let server = ThreadId::nth(2);
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), server, true).unwrap();
    send(
        &mut ram,
        &mut t,
        &mut ep,
        ObjectId(0),
        ThreadId::nth(0),
        0,
        CALL,
    )
    .unwrap();
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), server, true).unwrap();
    let e = send(
        &mut ram,
        &mut t,
        &mut ep,
        ObjectId(0),
        ThreadId::nth(1),
        0,
        CALL,
    )
    .unwrap();
    assert_eq!(e.woken().collect::<Vec<_>>(), vec![ThreadId::nth(0)]);
    assert_eq!(t[0].state(), ThreadState::Ready);
    assert_ne!(t[0].context.result(), 0, "the first caller gets an error");
    assert_eq!(t[2].reply_to, Some(ThreadId::nth(1)));
}

#[test]
fn a_fault_goes_to_the_handler_and_its_reply_resumes_or_stops_the_thread() {
    use crate::fault::FaultReport;
    use abi::fault::{FAULT_LABEL, FAULT_REPLY_SET_PC, FAULT_REPLY_STOP};
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(2), EndpointQueue::EMPTY);
    let (handler, faulter) = (ThreadId::nth(0), ThreadId::nth(1));
    let report = FaultReport::new(0x9200_0006, 0x1000, 0x40_0100);
    t[1].context.set_result_word(0xdead);
    t[1].set_kernel_message(KernelMessage::Fault(report));
    // No handler waiting yet: the faulter queues like a caller.
    assert_eq!(
        send_kernel_message(&mut ram, &mut t, &mut ep, ObjectId(0), faulter, 9).next,
        Next::Blocked
    );
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), handler, true).unwrap();
    let got = t[0].context;
    assert_eq!(got.message_info().label(), FAULT_LABEL);
    assert_eq!(
        (
            got.message_word(0),
            got.message_word(1),
            got.message_word(3),
            got.badge()
        ),
        (0x24, 0x1000, 0x40_0100, 9)
    );
    assert_eq!(t[1].state(), ThreadState::BlockedOnAnswer);
    // Resume at a new PC; the faulter's registers get no message.
    message(&mut t[0], FAULT_REPLY_SET_PC, &[0x40_0104]);
    assert_eq!(reply(&mut ram, &mut t, handler), Ok(faulter));
    assert_eq!(
        (t[1].state(), t[1].context.pc, t[1].context.result()),
        (ThreadState::Ready, 0x40_0104, 0xdead)
    );
    // A second fault, this time with the handler waiting: stop it.
    t[1].set_kernel_message(KernelMessage::Fault(report));
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), handler, true).unwrap();
    let effects = send_kernel_message(&mut ram, &mut t, &mut ep, ObjectId(0), faulter, 9);
    assert_eq!(effects.next, Next::SwitchTo(handler));
    message(&mut t[0], FAULT_REPLY_STOP, &[]);
    assert_eq!(reply(&mut ram, &mut t, handler), Ok(faulter));
    assert_eq!(
        t[1].state(),
        ThreadState::Faulted(report),
        "the kernel ends a thread in this state"
    );
}

#[test]
fn a_handler_that_moves_on_without_replying_stops_the_faulted_thread() {
    use crate::fault::FaultReport;
    let (mut ram, mut t, mut ep) = (Ram::default(), threads(3), EndpointQueue::EMPTY);
    let (handler, faulter, caller) = (ThreadId::nth(0), ThreadId::nth(1), ThreadId::nth(2));
    let report = FaultReport::new(0x9200_0006, 0x1000, 0x40_0100);
    t[1].set_kernel_message(KernelMessage::Fault(report));
    t[1].context.set_result_word(0xdead);
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), handler, true).unwrap();
    send_kernel_message(&mut ram, &mut t, &mut ep, ObjectId(0), faulter, 0);
    // The handler receives a Call instead of replying to the fault.
    receive(&mut ram, &mut t, &mut ep, ObjectId(0), handler, true).unwrap();
    let e = send(&mut ram, &mut t, &mut ep, ObjectId(0), caller, 0, CALL).unwrap();
    assert_eq!(e.woken().collect::<Vec<_>>(), vec![faulter]);
    assert_eq!(t[1].state(), ThreadState::Faulted(report));
    assert_eq!(
        t[1].context.result(),
        0xdead,
        "no error code written into a faulted thread"
    );
}
