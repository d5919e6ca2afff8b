//! Control requests (`abi::control`): a task the description gave a
//! `supervisor` capability asks the root, on the supervisor's endpoint,
//! to show the running system (through the root's Inspector) or to
//! change a task (`tasks/steering.rs` decides what may be changed). Each
//! is answered at once; the root never waits for the asker.

use crate::tasks::System;
use abi::bootinfo::{ROOT_CNODE_SLOT, ROOT_INSPECTOR_SLOT};
use abi::control::{ControlError, Request, MAX_POLICY_BYTES, MAX_WORDS};
use abi::fault::{END_LABEL, FAULT_LABEL, FAULT_REPLY_STOP};
use abi::inspect::{CAP_INFO_WORDS, THREAD_INFO_WORDS};
use abi::policy_request::{POLICY_REPLY_ERRNO, POLICY_REQUEST_LABEL};
use abi::trace::{TRACE_ENTRY, TRACE_EXIT, TRACE_REPLY_DETACH, TRACE_STEP};
use abi::ErrorCode;
use abi::{IPC_BUFFER_RECEIVE_SLOT_WORD, REGISTER_MESSAGE_WORDS};
use sdk::ipc::{self, Message, Received};
use sdk::println;
use sdk::syscall::cnode;

/// Where a capability sent with a request arrives: one slot of the
/// root's, named in its IPC buffer before every receive.
pub struct ReceiveSlot(u64);

impl ReceiveSlot {
    /// A free slot of the root's, named as the place for received
    /// capabilities.
    pub fn new(system: &mut System) -> Option<ReceiveSlot> {
        let slot = system.slot().ok()?;
        let receive = ReceiveSlot(slot);
        receive.arm();
        Some(receive)
    }

    /// Names the slot again (a long message may have overwritten the
    /// buffer word).
    pub fn arm(&self) {
        ipc::set_buffer_word(IPC_BUFFER_RECEIVE_SLOT_WORD, self.0);
    }

    /// Takes what arrived (`count` capabilities): the first is the
    /// caller's now, and another slot is named in its place.
    ///
    /// The kernel puts a message's capabilities in consecutive slots from
    /// the one named, each of which was empty: a request carries at most
    /// one, so any others landed in the slots after it (free in the
    /// root's books, or taken and still empty), and are deleted at once.
    /// Kept, they would fill slots the root hands out later (a rebuild's,
    /// the next receive slot), and its own retypes and copies there would
    /// fail. With no slot left to name next, what arrived is deleted and
    /// the same slot named again: a full CNode refuses the request, it
    /// does not wedge the next one.
    fn take(&mut self, system: &mut System, count: u8) -> Option<u64> {
        for extra in 1..u64::from(count) {
            let _ = cnode::delete(ROOT_CNODE_SLOT, self.0 + extra);
        }
        let taken = match system.slot() {
            Ok(next) => Some(core::mem::replace(&mut self.0, next)),
            Err(_) => {
                let _ = cnode::delete(ROOT_CNODE_SLOT, self.0);
                None
            }
        };
        self.arm();
        taken
    }
}

/// Serves one request of task `asker`; returns the system's status if a
/// kill ended the system.
#[inline(never)]
pub fn serve(
    system: &mut System,
    receive: &mut ReceiveSlot,
    asker: usize,
    received: &Received,
) -> Option<i32> {
    let message = &received.message;
    let length = usize::from(message.info.length()).min(MAX_WORDS);
    let mut words = [0u64; MAX_WORDS];
    for (i, word) in words.iter_mut().enumerate().take(length) {
        *word = if i < REGISTER_MESSAGE_WORDS {
            message.words[i]
        } else {
            ipc::buffer_word(i)
        };
    }
    // A capability that came with it is the request's, or deleted.
    let caps = message.info.caps();
    let sent_cap = (caps > 0).then(|| receive.take(system, caps)).flatten();
    // A kernel message, not a request: a thread whose tracer, policy
    // server or fault endpoint was set (by a holder of the rights to do
    // so) to a copy of the asker's supervisor capability sends its stops,
    // requests and faults here with the asker's badge. An answer labelled
    // as a control error would be read by the kernel as that message's
    // answer (1: a trace "modify", a policy "errno 0", a fault's "set the
    // PC"), so each gets the answer that fails safe.
    if let Some(answer) = kernel_message_answer(message.info.label()) {
        if let Some(slot) = sent_cap {
            let _ = cnode::delete(ROOT_CNODE_SLOT, slot);
            let _ = system.supervisor.slots.free(slot);
        }
        if let Some(answer) = answer {
            let _ = ipc::reply(&answer);
        }
        receive.arm();
        return None;
    }
    let mut bytes = [0u8; MAX_POLICY_BYTES];
    let request = Request::decode(message.info.label(), &words[..length], &mut bytes);
    let asker_name = system.plan.task(asker as u16).map_or("?", |t| t.name);
    let mut answer = [0u64; THREAD_INFO_WORDS];
    let mut answer_words = 0;
    let mut ended_system = None;
    let mut used_cap = false;
    let outcome = match request {
        None => Err(ControlError::BadRequest),
        Some(Request::Thread { first }) => sdk::inspect::thread(ROOT_INSPECTOR_SLOT, first)
            .map_err(ControlError::Kernel)
            .map(|found| {
                if let Some(info) = found {
                    answer.copy_from_slice(&info.encode());
                    answer_words = THREAD_INFO_WORDS;
                }
            }),
        Some(Request::Caps { thread, first }) => {
            sdk::inspect::cap(ROOT_INSPECTOR_SLOT, thread, first)
                .map_err(ControlError::Kernel)
                .map(|found| {
                    if let Some(info) = found {
                        answer[..CAP_INFO_WORDS].copy_from_slice(&info.encode());
                        answer_words = CAP_INFO_WORDS;
                    }
                })
        }
        Some(Request::Kill { task }) => named(system, task.as_str()).and_then(|index| {
            let name = system.kill(index, asker)?;
            println!("system: {name} was killed at {asker_name}'s request");
            ended_system = crate::supervise::after_end(system, index, 1);
            Ok(())
        }),
        Some(Request::Restart { task }) => named(system, task.as_str()).and_then(|index| {
            match system.restart_on_request(index, asker) {
                Ok(name) => {
                    println!("system: {name} restarted at {asker_name}'s request");
                    Ok(())
                }
                Err(not) => {
                    // Taken down and not built again: it has ended, and
                    // that may end the system, as any end does.
                    if not.ended {
                        ended_system = crate::supervise::after_end(system, index, 1);
                    }
                    Err(not.error)
                }
            }
        }),
        Some(Request::TraceOn { task }) => named(system, task.as_str()).and_then(|index| {
            let endpoint = sent_cap.ok_or(ControlError::NoEndpoint)?;
            used_cap = true;
            system.trace_to(index, asker, endpoint).inspect_err(|_| {
                let _ = cnode::delete(ROOT_CNODE_SLOT, endpoint);
                let _ = system.supervisor.slots.free(endpoint);
            })
        }),
        Some(Request::TraceOff { task }) => {
            named(system, task.as_str()).and_then(|index| system.untrace(index, asker))
        }
        Some(Request::Policy { task, description }) => named(system, task.as_str())
            .and_then(|index| system.attach_policy(index, asker, description)),
    };
    if let (Some(slot), false) = (sent_cap, used_cap) {
        let _ = cnode::delete(ROOT_CNODE_SLOT, slot);
        let _ = system.supervisor.slots.free(slot);
    }
    let label = match outcome {
        Ok(()) => 0,
        Err(error) => error.code(),
    };
    for (i, word) in answer.iter().enumerate().take(answer_words) {
        if i >= REGISTER_MESSAGE_WORDS {
            ipc::set_buffer_word(i, *word);
        }
    }
    let reply = Message::new(label, &answer[..answer_words.min(REGISTER_MESSAGE_WORDS)])
        .with_length(answer_words as u8);
    // The asker may have ended meanwhile (a kill of its own memory is
    // refused, but it may have been killed): nothing to answer then.
    let _ = ipc::reply(&reply);
    receive.arm();
    ended_system
}

/// For a kernel message's label, its safe answer: a trace stop's tracer
/// is detached (the thread runs on, as when a tracer goes), a policy
/// request is refused with `Denied` (policy fails closed), a fault stops
/// the thread; an end message is owed no answer (`Some(None)`). `None`
/// for any other label: a request.
fn kernel_message_answer(label: u64) -> Option<Option<Message>> {
    match label {
        TRACE_ENTRY | TRACE_EXIT | TRACE_STEP => Some(Some(Message::new(TRACE_REPLY_DETACH, &[]))),
        POLICY_REQUEST_LABEL => Some(Some(Message::new(
            POLICY_REPLY_ERRNO,
            &[ErrorCode::Denied.raw()],
        ))),
        FAULT_LABEL => Some(Some(Message::new(FAULT_REPLY_STOP, &[]))),
        END_LABEL => Some(None),
        _ => None,
    }
}

/// The task named `name`.
fn named(system: &System, name: &str) -> Result<usize, ControlError> {
    system.task_named(name).ok_or(ControlError::NoSuchTask)
}
