//! Writing a policy server: decode the kernel's requests, answer them.
//!
//! A filter rule with the `Notify` action makes the kernel ask the
//! thread's policy server (protocol: `abi::policy_request`). A server is
//! one [`PolicyServer`] implementation handed to [`serve`]:
//!
//! ```no_run
//! use sdk::ipc::Cptr;
//! use sdk::policy_server::{serve, PolicyAnswer, PolicyRequest, PolicyServer};
//! use sdk::{ErrorCode, Syscall};
//!
//! /// Lets threads print at most 64 bytes at a time.
//! struct ShortPrints;
//!
//! impl PolicyServer for ShortPrints {
//!     fn decide(&mut self, request: &PolicyRequest) -> PolicyAnswer {
//!         match request.syscall {
//!             Some(Syscall::DebugPrint) if request.args[3] <= 64 => PolicyAnswer::Allow,
//!             Some(Syscall::DebugPrint) => PolicyAnswer::Errno(ErrorCode::InvalidArgument),
//!             _ => PolicyAnswer::Errno(ErrorCode::Denied),
//!         }
//!     }
//! }
//!
//! // The endpoint the kernel sends requests to (named when the filter
//! // was attached); `serve` returns only if receiving fails.
//! let error = serve(Cptr(2), &mut ShortPrints);
//! ```
//!
//! A server that answers some requests later (one slow decision must not
//! hold up every other confined thread) implements [`AsyncPolicyServer`]
//! and runs [`serve_async`] with a [`ReplyPool`] of Reply capabilities:
//! a request it puts off ([`Decision::Later`]) is saved into a Reply
//! object (`ReplySave`) and answered, in any order, with
//! [`ReplyPool::answer`]. A saved request whose Reply object is destroyed
//! unused is refused (`Denied`), as is every request of a server thread
//! that ends or faults.
//!
//! The layout of requests and answers is `abi::policy_request`'s (its
//! `encode` and `decode`, which the kernel uses too); this module only
//! gathers the words and adds the typed views. Only [`serve`],
//! [`serve_async`], [`answer`] and [`ReplyPool`]'s `save` and `answer`
//! make syscalls.

use crate::ipc::{self, Cptr, Message, Received};
use crate::reply::ReplyCap;
use abi::cap::CapType;
use abi::policy::MAX_JUDGED_BYTES;
pub use abi::policy_request::CarriedMemory;
use abi::policy_request::{
    PolicyRequest as RequestMessage, POLICY_REQUEST_MEMORY_WORD, POLICY_REQUEST_WORDS,
};
use abi::{ErrorCode, Syscall};

/// A server's verdict on one request (encoded and decoded by `abi`).
pub use abi::policy_request::PolicyAnswer;

/// One syscall the kernel asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyRequest {
    /// The syscall (`None` for a number no syscall has).
    pub syscall: Option<Syscall>,
    /// Its raw number.
    pub number: u64,
    /// The type of the capability `x0` names (`None`: no capability).
    pub object_type: Option<CapType>,
    /// That capability's badge.
    pub badge: u64,
    /// Which thread asks (its number, as console lines show it).
    pub thread: u64,
    /// Unique per request.
    pub cookie: u64,
    /// `x0..x7` as the thread made the call.
    pub args: [u64; 8],
    /// The caller's PC (the address after its `svc`).
    pub pc: u64,
    /// What memory the call carries.
    pub memory: CarriedMemory,
    /// That memory's length in bytes (may exceed what was judged).
    pub memory_length: u64,
    /// The judged bytes: the kernel's copy, which the call uses if it runs
    /// (`judged` of them are valid).
    pub bytes: [u8; MAX_JUDGED_BYTES],
    /// How many of `bytes` were judged.
    pub judged: usize,
    /// The badge of the endpoint capability the request came through (the
    /// server can tell apart the threads or groups it serves by it).
    pub endpoint_badge: u64,
}

impl PolicyRequest {
    /// Decodes a received message; `None` if it is not a policy request.
    /// `buffer_word(i)` reads word `i` of this thread's IPC buffer (words
    /// 6..=16 carry `x1..x7`, the PC and the memory's description, words
    /// from `POLICY_REQUEST_MEMORY_WORD` on the judged bytes).
    pub fn decode(
        received: &Received,
        buffer_word: impl Fn(usize) -> u64,
    ) -> Option<PolicyRequest> {
        if !RequestMessage::is_request(received.message.info) {
            return None;
        }
        let mut words = [0u64; POLICY_REQUEST_WORDS as usize];
        for (i, word) in words.iter_mut().enumerate() {
            *word = match received.message.words.get(i) {
                Some(register) => *register,
                None => buffer_word(i),
            };
        }
        let mut request = PolicyRequest::new(RequestMessage::decode(&words), received.badge);
        for (i, chunk) in request.bytes[..request.judged.next_multiple_of(8).min(MAX_JUDGED_BYTES)]
            .chunks_mut(8)
            .enumerate()
        {
            let word = buffer_word(POLICY_REQUEST_MEMORY_WORD + i).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Some(request)
    }

    /// The judged bytes the call carries (its buffer's, or its message's
    /// IPC buffer words from word 6 on, little-endian).
    pub fn judged_bytes(&self) -> &[u8] {
        &self.bytes[..self.judged]
    }

    /// Message word `index` of an IPC call as judged: 0..=5 are `x2..x7`,
    /// 6 and up its IPC buffer words; `None` past what was judged or for a
    /// call that sends no message.
    pub fn word(&self, index: usize) -> Option<u64> {
        if index < abi::REGISTER_MESSAGE_WORDS {
            return Some(self.args[index + 2]);
        }
        if self.memory != CarriedMemory::Message {
            return None;
        }
        let offset = (index - abi::REGISTER_MESSAGE_WORDS) * 8;
        let word = self.judged_bytes().get(offset..offset + 8)?;
        Some(u64::from_le_bytes(word.try_into().ok()?))
    }

    /// The typed view of a request that came through an endpoint
    /// capability with badge `endpoint_badge`.
    pub fn new(request: RequestMessage, endpoint_badge: u64) -> PolicyRequest {
        PolicyRequest {
            syscall: Syscall::from_number(request.number),
            number: request.number,
            object_type: CapType::from_raw(request.object_type).filter(|t| *t != CapType::Null),
            badge: request.badge,
            thread: request.thread,
            cookie: request.cookie,
            args: request.args,
            pc: request.pc,
            memory: request.memory,
            memory_length: request.memory_length,
            bytes: [0; MAX_JUDGED_BYTES],
            judged: (request.judged as usize).min(MAX_JUDGED_BYTES),
            endpoint_badge,
        }
    }
}

/// The reply message that carries a verdict (`PolicyAnswer::encode`).
pub trait AnswerMessage {
    /// The message to reply with.
    fn to_message(self) -> Message;
}

impl AnswerMessage for PolicyAnswer {
    fn to_message(self) -> Message {
        let (info, words) = self.encode();
        Message { info, words }
    }
}

/// What a server does with a message that is not a policy request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Other {
    /// Reply with this message and wait for the next one.
    Reply(Message),
    /// Return from [`serve`] (without replying).
    Stop,
}

/// A policy server: the one method to write.
pub trait PolicyServer {
    /// The verdict on one request.
    fn decide(&mut self, request: &PolicyRequest) -> PolicyAnswer;

    /// Any other message on the endpoint (by default: stop serving, so a
    /// supervisor can end the server with a plain message).
    fn other(&mut self, _received: &Received) -> Other {
        Other::Stop
    }

    /// Asked after each verdict: `true` makes [`serve`] send that answer
    /// and return (`Ok`), for a server whose work ends with a decision
    /// (one that kills its last client, say). By default it serves on.
    fn done(&mut self) -> bool {
        false
    }
}

/// Answers requests on `endpoint` until a receive fails (returned as an
/// error), [`PolicyServer::other`] says stop, or [`PolicyServer::done`]
/// says so after a verdict (`Ok`, the verdict sent).
pub fn serve(endpoint: Cptr, server: &mut impl PolicyServer) -> Result<(), ErrorCode> {
    let mut received = ipc::recv(endpoint)?;
    loop {
        let answer = match PolicyRequest::decode(&received, ipc::buffer_word) {
            Some(request) => server.decide(&request).to_message(),
            None => match server.other(&received) {
                Other::Reply(message) => message,
                Other::Stop => return Ok(()),
            },
        };
        if server.done() {
            return ipc::reply(&answer);
        }
        received = ipc::reply_recv(endpoint, &answer)?;
    }
}

/// What an [`AsyncPolicyServer`] decides about a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The verdict, sent at once.
    Now(PolicyAnswer),
    /// Not yet: the request is saved in a Reply object of the pool
    /// ([`AsyncPolicyServer::deferred`] gets it) and answered later with
    /// [`ReplyPool::answer`]; meanwhile the server takes other requests.
    Later,
}

/// A request put off: the Reply capability holding it, and who asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deferred {
    /// The slot of the Reply capability that answers it.
    pub reply: u64,
    /// The asking thread's number.
    pub thread: u64,
    /// The request's cookie.
    pub cookie: u64,
}

/// Reply capabilities a server saves requests into: `count` (at most 64)
/// slots from `first` of its CSpace, each holding a Reply capability
/// (made with `retype(untyped, CapType::Reply, 0, first, count)`).
#[derive(Debug)]
pub struct ReplyPool {
    cnode: Cptr,
    first: u64,
    count: u32,
    /// Bit n: slot `first + n` holds a request not answered yet.
    used: u64,
}

impl ReplyPool {
    /// The pool of the Reply capabilities in slots `first ..` (`count`,
    /// at most 64) of the CSpace whose CNode capability (write right) is
    /// `cnode`.
    pub fn new(cnode: Cptr, first: u64, count: u32) -> ReplyPool {
        ReplyPool {
            cnode,
            first,
            count: count.min(64),
            used: 0,
        }
    }

    /// How many saved requests wait for their answer.
    pub fn pending(&self) -> u32 {
        self.used.count_ones()
    }

    /// A free slot, marked used (`None`: all hold requests).
    fn take(&mut self) -> Option<u64> {
        let free = (!self.used).trailing_zeros();
        if free >= self.count {
            return None;
        }
        self.used |= 1 << free;
        Some(self.first + u64::from(free))
    }

    /// Slot `reply` is free again.
    fn release(&mut self, reply: u64) {
        if let Some(bit) = reply.checked_sub(self.first).filter(|b| *b < 64) {
            self.used &= !(1 << bit);
        }
    }

    /// Saves the verdict this thread owes (on `request`, just received)
    /// into a free Reply object. `OutOfResources` when every one holds a
    /// request; the kernel's refusals otherwise (`NoReplyTarget`: nothing
    /// owed). A refusal leaves the pool as it was.
    pub fn save(&mut self, request: &PolicyRequest) -> Result<Deferred, ErrorCode> {
        let reply = self.take().ok_or(ErrorCode::OutOfResources)?;
        match ReplyCap::save(self.cnode, reply) {
            Ok(_) => Ok(Deferred {
                reply,
                thread: request.thread,
                cookie: request.cookie,
            }),
            Err(code) => {
                self.release(reply);
                Err(code)
            }
        }
    }

    /// Answers a saved request; its Reply object is free again either way.
    /// `NoReplyTarget` if the asker no longer waits (it ended, was
    /// suspended, or its server was lost meanwhile: the kernel refused it).
    pub fn answer(&mut self, deferred: Deferred, verdict: PolicyAnswer) -> Result<(), ErrorCode> {
        self.release(deferred.reply);
        answer(&ReplyCap(Cptr(deferred.reply)), verdict)
    }
}

/// Answers the policy request saved in `reply` with `verdict` (the
/// `Send` through a Reply capability that a policy request takes as its
/// verdict, exactly as a `Reply` would be).
pub fn answer(reply: &ReplyCap, verdict: PolicyAnswer) -> Result<(), ErrorCode> {
    reply.answer(&verdict.to_message())
}

/// A policy server that may answer later: one slow decision does not
/// hold up the others (each waiting thread has its own Reply object).
pub trait AsyncPolicyServer {
    /// The verdict now, or [`Decision::Later`].
    fn decide(&mut self, request: &PolicyRequest) -> Decision;

    /// `request` was put off and is saved as `deferred`: keep it and
    /// answer it with `pool.answer` (now, or on a later call of any of
    /// these methods).
    fn deferred(&mut self, request: &PolicyRequest, deferred: Deferred, pool: &mut ReplyPool);

    /// Any other message on the endpoint (a timer, a worker's result); it
    /// may answer saved requests through `pool`. By default: stop.
    fn other(&mut self, _received: &Received, _pool: &mut ReplyPool) -> Other {
        Other::Stop
    }
}

/// Answers requests on `endpoint` as [`serve`] does, but a request
/// `decide`s to put off is saved in a Reply object of `pool` and the
/// server goes on with the next message. With none free, the request is
/// refused (`Errno(Denied)`): the policy fails closed. Returns when a
/// receive fails (the error) or [`AsyncPolicyServer::other`] says stop.
pub fn serve_async(
    endpoint: Cptr,
    pool: &mut ReplyPool,
    server: &mut impl AsyncPolicyServer,
) -> Result<(), ErrorCode> {
    let mut received = ipc::recv(endpoint)?;
    loop {
        let answer = match PolicyRequest::decode(&received, ipc::buffer_word) {
            Some(request) => match server.decide(&request) {
                Decision::Now(verdict) => Some(verdict.to_message()),
                Decision::Later => match pool.save(&request) {
                    Ok(deferred) => {
                        server.deferred(&request, deferred, pool);
                        None
                    }
                    Err(_) => Some(PolicyAnswer::Errno(ErrorCode::Denied).to_message()),
                },
            },
            None => match server.other(&received, pool) {
                Other::Reply(message) => Some(message),
                Other::Stop => return Ok(()),
            },
        };
        received = match answer {
            Some(answer) => ipc::reply_recv(endpoint, &answer)?,
            None => ipc::recv(endpoint)?,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::policy_request::{
        POLICY_REPLY_ALLOW, POLICY_REPLY_ALLOW_MODIFIED, POLICY_REPLY_EMULATE, POLICY_REPLY_ERRNO,
        POLICY_REPLY_KILL, POLICY_REQUEST_LABEL,
    };
    use abi::MessageInfo;

    fn request_message(words: [u64; 6]) -> Received {
        Received {
            message: Message {
                info: MessageInfo::with(POLICY_REQUEST_LABEL, POLICY_REQUEST_WORDS),
                words,
            },
            badge: 0x5e,
        }
    }

    #[test]
    fn a_request_decodes_from_registers_and_buffer_words() {
        let received = request_message([3, 10, 0, 4, 17, 1]);
        let request = PolicyRequest::decode(&received, |i| 100 + i as u64).expect("a request");
        assert_eq!(request.syscall, Some(Syscall::DebugPrint));
        assert_eq!(request.object_type, Some(CapType::DebugConsole));
        assert_eq!((request.thread, request.cookie), (4, 17));
        assert_eq!(request.args, [1, 106, 107, 108, 109, 110, 111, 112]);
        assert_eq!(request.endpoint_badge, 0x5e);
    }

    #[test]
    fn other_messages_and_unknown_fields_are_not_taken_for_requests() {
        let mut received = request_message([999, 0, 0, 0, 1, 0]);
        let request = PolicyRequest::decode(&received, |_| 0).expect("a request");
        assert_eq!((request.syscall, request.object_type), (None, None));
        received.message.info = MessageInfo::with(POLICY_REQUEST_LABEL, 6);
        assert_eq!(
            PolicyRequest::decode(&received, |_| 0),
            None,
            "wrong length"
        );
        received.message.info = MessageInfo::with(7, POLICY_REQUEST_WORDS);
        assert_eq!(PolicyRequest::decode(&received, |_| 0), None, "wrong label");
    }

    #[test]
    fn a_reply_pool_hands_out_each_slot_once_until_it_is_answered() {
        let mut pool = ReplyPool::new(Cptr(0), 10, 3);
        assert_eq!(
            [pool.take(), pool.take(), pool.take()],
            [Some(10), Some(11), Some(12)]
        );
        assert_eq!(pool.take(), None, "all three hold requests");
        assert_eq!(pool.pending(), 3);
        pool.release(11);
        assert_eq!(pool.pending(), 2);
        assert_eq!(pool.take(), Some(11));
        // A slot that is not the pool's changes nothing.
        pool.release(9);
        pool.release(10 + 64);
        assert_eq!(pool.pending(), 3);
        assert_eq!(ReplyPool::new(Cptr(0), 0, 100).count, 64);
    }

    #[test]
    fn answers_encode_as_the_kernel_reads_them() {
        let m = PolicyAnswer::Errno(ErrorCode::Denied).to_message();
        assert_eq!(
            (m.info.label(), m.words[0]),
            (POLICY_REPLY_ERRNO, ErrorCode::Denied.raw())
        );
        let m = PolicyAnswer::Emulate { x0: 0, x8: 0x77 }.to_message();
        assert_eq!(
            (m.info.label(), m.words[0], m.words[1]),
            (POLICY_REPLY_EMULATE, 0, 0x77)
        );
        let m = PolicyAnswer::AllowWith([1, 2, 3, 4, 5, 6]).to_message();
        assert_eq!(
            (m.info.label(), m.info.length(), m.words),
            (POLICY_REPLY_ALLOW_MODIFIED, 6, [1, 2, 3, 4, 5, 6])
        );
        assert_eq!(
            PolicyAnswer::Allow.to_message().info.label(),
            POLICY_REPLY_ALLOW
        );
        assert_eq!(
            PolicyAnswer::Kill.to_message().info.label(),
            POLICY_REPLY_KILL
        );
    }
}
