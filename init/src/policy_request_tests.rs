//! A policy request sent on both paths (`BootProgram::PolicyRequestServer`,
//! `BootProgram::PolicyRequestAsker`): the asker's one filter asks its
//! server about every `Null`, `Yield` and `Poll` (a constant `Notify` of
//! syscalls that carry no memory, which the vector sends to the policy
//! request fast path; `Poll` names a badged notification, whose type and
//! badge the request carries, an empty slot or no slot, which carry
//! none), made with marked `x0..x7` (`x1..x7` for `Poll`), and with
//! marked `x9..x30`, SP, TPIDR_EL0 and the flags. First the
//! server answers each with `ReplyRecv`, so it waits when the next comes
//! (the fast path sends it: the asker's syscall is not counted as a
//! generic-path one); then with `Reply` and `Recv`, and the asker, more
//! urgent, asks again before the server waits (the generic entry queues
//! the request, counted). The requests carry the same words either way,
//! each written afresh (the server marks its IPC buffer's request words
//! before each receive), their cookies one more each time, and the asker
//! finds the same results and its registers kept. Each returns the number
//! of its first failed check (0: all passed).

use crate::programs::ENDPOINT_SLOT;
use abi::cap::CapType;
use abi::policy_request::{POLICY_REQUEST_LABEL, POLICY_REQUEST_WORDS};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Received};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::policy_server::{AnswerMessage, PolicyAnswer};
use sdk::tcb::{FilterCap, FilterServer, Tcb};

/// The server's endpoint: receive right (the server's), send right with
/// `ASKER_BADGE` (the asker's).
const REQUESTS: Cptr = Cptr(ENDPOINT_SLOT);
/// The asker's TCB: the server's (its statistics), the asker's own (with
/// the policy right).
const ASKER: Tcb = Tcb(Cptr(3));
/// The asker's Untyped, for its filter.
const UNTYPED: u64 = 4;
/// The server's TCB (read): the thread that answers the asker's filter.
const SERVER_TCB: Tcb = Tcb(Cptr(5));
/// The notification that lets the server start (the asker's, to signal;
/// the server's, to wait on).
const GO: Cptr = Cptr(6);
/// The notification the asker polls, with `POLLED_BADGE`.
const POLLED: Cptr = Cptr(7);
/// Its badge.
pub const POLLED_BADGE: u64 = 0x90b;
/// Where the asker's filter goes.
const FILTER: FilterCap = FilterCap(Cptr(8));
/// The badge of the asker's endpoint capability, which its filter's
/// server was named through: every request carries it.
pub const ASKER_BADGE: u64 = 0xa5c;

/// Rounds per path; each makes two syscalls (`CALLS`).
pub const ROUNDS: usize = 5;
/// Syscalls per round: one with marked `x0..x7` (`Null`, `Yield`, then
/// `Poll` of the badged notification, of an empty slot and of no slot:
/// the request's number is not always 0, and the capability it names is
/// one, empty, or past the CSpace), then a `Null` with marked `x9..x30`,
/// SP, TPIDR_EL0 and the flags (`probe::registers_kept_across`).
const CALLS: usize = 2;
/// What the server writes into its IPC buffer's request words (6..16)
/// before each receive: a request that left one unwritten shows it.
const STALE: u64 = 0x57a1e;
/// A request's words.
type Words = [u64; POLICY_REQUEST_WORDS as usize];
/// The cookie's word, and the PC's.
const COOKIE: usize = 4;
const PC: usize = 13;

/// An empty slot of the asker's CSpace, and a number past its slots.
const EMPTY: u64 = 30;
const PAST: u64 = 1 << 40;

/// Round `round`'s first syscall, and the slot its `x0` names (`None`: a
/// mark).
fn syscall(round: usize) -> (Syscall, Option<u64>) {
    [
        (Syscall::Null, None),
        (Syscall::Yield, None),
        (Syscall::Poll, Some(POLLED.0)),
        (Syscall::Poll, Some(EMPTY)),
        (Syscall::Poll, Some(PAST)),
    ][round % 5]
}

/// The marks of round `round`'s `x0..x7` (`x0` the slot it names, if
/// any).
fn marks(round: usize) -> [u64; 8] {
    core::array::from_fn(|i| match (syscall(round).1, i) {
        (Some(slot), 0) => slot,
        _ => 0xa0 + 0x10 * round as u64 + i as u64,
    })
}

/// The asker's generic-path syscalls so far.
fn asker_syscalls() -> u64 {
    sdk::debug::thread_stats(ASKER.0).map_or(u64::MAX, |stats| stats.syscalls)
}

/// Marks the IPC buffer's request words.
fn mark_buffer() {
    for word in 6..POLICY_REQUEST_WORDS as usize {
        ipc::set_buffer_word(word, STALE);
    }
}

/// The request received (after the buffer's words were marked): its
/// words, and the badge it came with.
fn request(received: Result<Received, ErrorCode>) -> Option<(Words, u64)> {
    let received = received.ok()?;
    let info = received.message.info;
    if info.label() != POLICY_REQUEST_LABEL || info.length() != POLICY_REQUEST_WORDS {
        return None;
    }
    let words = core::array::from_fn(|i| match i {
        0..6 => received.message.words[i],
        _ => ipc::buffer_word(i),
    });
    Some((words, received.badge))
}

/// Lets the asker start and answers its requests "allow": path 0's with
/// `ReplyRecv` (the next request finds it waiting), path 1's with `Reply`
/// and then `Recv`. Compares each path's requests.
pub fn server() -> i32 {
    let allow = PolicyAnswer::Allow.to_message();
    expect!(1, ipc::wait(GO), Ok(1));
    // The asker (more urgent) has attached its filter; its first request
    // waits in the queue for this `Recv`.
    mark_buffer();
    let mut next = request(ipc::recv(REQUESTS));
    let mut seen = [[[0u64; POLICY_REQUEST_WORDS as usize]; CALLS * ROUNDS]; 2];
    let mut cookie = 0;
    let mut thread = None;
    for (path, requests) in seen.iter_mut().enumerate() {
        for (call, kept) in requests.iter_mut().enumerate() {
            let (round, first) = (call / CALLS, call % CALLS == 0);
            let Some((mut words, badge)) = next else {
                sdk::println!("check 2 failed: no request");
                return 2;
            };
            expect!(3, badge, ASKER_BADGE);
            let (want, slot) = if first {
                syscall(round)
            } else {
                (Syscall::Null, None)
            };
            // The number, the type and badge of the capability it names
            // (none for `Null` and `Yield`, an empty slot and no slot);
            // no memory.
            let named = match slot {
                Some(slot) if slot == POLLED.0 => {
                    (u64::from(CapType::Notification.raw()), POLLED_BADGE)
                }
                _ => (0, 0),
            };
            expect!(4, (words[0], (words[1], words[2])), (want.number(), named));
            expect!(5, (words[14], words[15], words[16]), (0, 0, 0));
            if first {
                expect!(6, &words[5..13], &marks(round)[..]);
            }
            // Each request's cookie is the kernel's next; this thread
            // alone is asked meanwhile. The asker's number, and a PC.
            expect!(7, cookie == 0 || words[COOKIE] == cookie + 1, true);
            cookie = words[COOKIE];
            expect!(8, *thread.get_or_insert(words[3]), words[3]);
            expect!(9, words[PC] != 0 && words[PC] != STALE, true);
            // Compared without the cookie and the PC (each path's calls
            // may be compiled apart), nor, for the probe's syscall, the
            // registers it does not set (`x1`, `x4..x7`).
            words[COOKIE] = 0;
            words[PC] = 0;
            if !first {
                for unset in [1, 4, 5, 6, 7] {
                    words[5 + unset] = 0;
                }
            }
            *kept = words;
            if path == 1 && call + 1 == CALLS * ROUNDS {
                // The last: its answer ends the server's part.
                expect!(10, ipc::reply(&allow), Ok(()));
                break;
            }
            let next_path = if call + 1 == CALLS * ROUNDS {
                path + 1
            } else {
                path
            };
            // The asker's count across the next request: 0 when it was
            // sent from the vector, 1 through the generic entry.
            let before = asker_syscalls();
            mark_buffer();
            next = if next_path == 0 {
                request(ipc::reply_recv(REQUESTS, &allow))
            } else {
                expect!(11, ipc::reply(&allow), Ok(()));
                request(ipc::recv(REQUESTS))
            };
            expect!(
                12 + next_path as i32,
                asker_syscalls().wrapping_sub(before),
                next_path as u64
            );
        }
    }
    // Both paths sent the same requests (but for the cookie and the PC).
    for (slow, fast) in seen[1].iter().zip(&seen[0]) {
        expect!(14, slow, fast);
    }
    0
}

/// The asker: attaches its filter, lets the server start, then makes the
/// same syscalls on both paths, each leaving the same `x0..x8` on both
/// and every register it must keep as it was.
pub fn asker() -> i32 {
    let mut buffer = [0u8; 1024];
    expect!(
        20,
        sdk::syscall::retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1),
        Ok(())
    );
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::Notify))
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::Notify))
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::Notify))
        .encode(&mut buffer)
    else {
        return 21;
    };
    expect!(22, FILTER.load(rules), Ok(()));
    let server = FilterServer {
        endpoint: REQUESTS,
        thread: SERVER_TCB,
    };
    expect!(23, ASKER.attach_filter(FILTER, Some(server)), Ok(()));
    expect!(24, ipc::signal(GO), Ok(()));
    let mut first_path = [[0u64; 9]; ROUNDS];
    for path in 0..2 {
        for (round, kept) in first_path.iter_mut().enumerate() {
            let (number, slot) = syscall(round);
            let after = sdk::syscall::raw_syscall_registers(number.number(), marks(round));
            // (Polling nothing fails, the same way on both paths.)
            if !matches!(slot, Some(EMPTY | PAST)) {
                expect!(25, after[0], ErrorCode::Ok.raw());
            }
            if path == 0 {
                *kept = after;
            } else {
                expect!(26, after, *kept);
            }
            expect!(
                27 + path,
                sdk::probe::registers_kept_across(Syscall::Null.number(), 0, round as u64, 0),
                (ErrorCode::Ok.raw(), 0)
            );
        }
    }
    0
}
