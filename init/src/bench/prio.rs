//! The priority rows: IPC between threads of different priorities, where
//! the scheduler decides whether the kernel switches to the partner.
//!
//! * `ipc_call_one_way_higher_prio`: `BenchIpcServer`, more urgent than
//!   its client, answers register-only calls; it times each one-way from
//!   the client's timestamp, as for `ipc_call_one_way`.
//! * `ipc_send_lower_prio`: a sender more urgent than its receiver times
//!   its `Send` while the receiver waits: the message is delivered, the
//!   receiver made ready, and the sender continues (no switch). A
//!   notification the receiver signals after each message proves it did
//!   not run inside the timed `Send`; the row fails if it did.

use super::{print_row, summarise, FAST_LENGTH, SAMPLES};
use crate::programs::{ENDPOINT_SLOT, SECOND_ENDPOINT_SLOT, STOP_LABEL};
use abi::bench::{BenchParameter, IPC_HIGHER_PRIO_LABEL, MAX_ITERATIONS, WARM_UP_ITERATIONS};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::timing::{empty_delta, now, timed_syscall_x0_x2};

const CALL_ROW: &str = "ipc_call_one_way_higher_prio";
const SEND_ROW: &str = "ipc_send_lower_prio";

/// The client of a more urgent `BenchIpcServer`
/// (`BootProgram::BenchLowPrioCaller`): register-only calls carrying the
/// timestamp read just before them, as the scale client's (which runs 2
/// instructions fewer before the SVC than `run_ipc_client`).
pub fn run_low_prio_caller(parameter: BenchParameter) -> i32 {
    let endpoint = Cptr(ENDPOINT_SLOT);
    if parameter.runs(CALL_ROW) {
        let iterations = parameter.iterations.min(MAX_ITERATIONS);
        for _ in 0..(WARM_UP_ITERATIONS + iterations) {
            let message = Message::new(IPC_HIGHER_PRIO_LABEL, &[now()]).with_length(FAST_LENGTH);
            if ipc::call(endpoint, &message).is_err() {
                return error(CALL_ROW, "call failed");
            }
        }
    }
    match ipc::call(endpoint, &Message::new(STOP_LABEL, &[])) {
        Ok(_) => 0,
        Err(_) => 1,
    }
}

/// The data endpoint (sender: send right; receiver: receive right).
const DATA: Cptr = Cptr(ENDPOINT_SLOT);
/// The sync endpoint: the sender calls, the receiver answers.
const SYNC: Cptr = Cptr(SECOND_ENDPOINT_SLOT);
/// The receiver signals it (badge 1) after each data message; the sender
/// polls it.
const RECEIVED: Cptr = Cptr(4);
/// Label of the data messages (the stop message is `STOP_LABEL`).
const DATA_LABEL: u64 = 1;

/// `BootProgram::BenchHighPrioSender`. Each iteration: the timed `Send`
/// of message `i` (the receiver waits on `DATA`), a poll of `RECEIVED`
/// that must find nothing (the receiver did not run), then a `Call` on
/// `SYNC` that blocks the sender so the receiver runs, takes the message,
/// signals, and answers from its `ReplyRecv` on `DATA` (waiting again
/// before the sender runs), and a poll that must find the signal.
pub fn run_high_prio_sender(parameter: BenchParameter) -> i32 {
    let sync = || ipc::call(SYNC, &Message::new(DATA_LABEL, &[])).is_ok();
    // The first sync: from its answer on, the receiver waits on DATA.
    if !sync() {
        return error(SEND_ROW, "the first sync call failed");
    }
    let mut failed = 0;
    if parameter.runs(SEND_ROW) {
        failed = time_sends(parameter, &sync);
    }
    // The receiver waits on DATA again: the stop message ends it.
    if ipc::send(DATA, &Message::new(STOP_LABEL, &[])).is_err() {
        return error(SEND_ROW, "the stop message failed");
    }
    failed
}

fn time_sends(parameter: BenchParameter, sync: &dyn Fn() -> bool) -> i32 {
    let overhead = (0..64).map(|_| empty_delta()).min().unwrap_or(0);
    let info: u64 = Message::new(DATA_LABEL, &[0]).info.into();
    let iterations = parameter.iterations.min(MAX_ITERATIONS) as usize;
    let mut samples = SAMPLES.lock();
    for i in 0..(WARM_UP_ITERATIONS as usize + iterations) {
        let (delta, status) = timed_syscall_x0_x2(Syscall::Send.number(), DATA.0, info, i as u64);
        if status != ErrorCode::Ok.raw() {
            return error(SEND_ROW, "send failed");
        }
        if ipc::poll(RECEIVED) != Ok(0) {
            return error(SEND_ROW, "the receiver ran during the send");
        }
        if !sync() {
            return error(SEND_ROW, "a sync call failed");
        }
        if ipc::poll(RECEIVED) != Ok(1) {
            return error(SEND_ROW, "the receiver did not take the message");
        }
        if let Some(slot) = i.checked_sub(WARM_UP_ITERATIONS as usize) {
            samples[slot] = delta.saturating_sub(overhead);
        }
    }
    let stats = summarise(&mut samples[..iterations], overhead);
    drop(samples);
    print_row(parameter, SEND_ROW, stats);
    0
}

/// `BootProgram::BenchLowPrioReceiver`: answers the sender's first sync
/// call, then for each message on `DATA` (numbered from 0, checked):
/// signals `RECEIVED`, takes the next sync call and answers it with a
/// `ReplyRecv` on `DATA`. Ends at the stop message.
pub fn run_low_prio_receiver(_parameter: BenchParameter) -> i32 {
    if ipc::recv(SYNC).is_err() {
        return error(SEND_ROW, "the receiver's first recv failed");
    }
    let answer = Message::new(0, &[]);
    let mut expected = 0u64;
    loop {
        let Ok(received) = ipc::reply_recv(DATA, &answer) else {
            return error(SEND_ROW, "the receiver's reply_recv failed");
        };
        let message = received.message;
        if message.info.label() == STOP_LABEL {
            return 0;
        }
        if message.info.label() != DATA_LABEL || message.words[0] != expected {
            return error(SEND_ROW, "a message came out of order");
        }
        expected += 1;
        if ipc::signal(RECEIVED).is_err() || ipc::recv(SYNC).is_err() {
            return error(SEND_ROW, "the receiver's signal or recv failed");
        }
    }
}

fn error(row: &str, reason: &str) -> i32 {
    println!("BENCH-ERROR name={row} reason={reason}");
    1
}
