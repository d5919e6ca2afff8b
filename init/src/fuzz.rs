//! The syscall fuzzer: random syscall numbers (valid ones mostly, and any
//! value), random capability pointers, message infos and arguments,
//! pointers into its own, unmapped, kernel and device memory. Blocking
//! operations are mostly turned into their non-blocking variants so a
//! round does not end in a deadlock at once (when it does, the kernel
//! stops the round's threads, which is fine: the kernel surviving is what
//! is tested).
//!
//! Judged memory (issue 19) runs under it too: random filters judge
//! message words, the PC and the bytes calls carry; a scribbler thread of
//! the fuzzer's own space rewrites the fuzzer's IPC buffer and the buffers
//! it passes to `DebugPrint` and `FilterLoad` while its calls wait; and a
//! judged channel checks that a message a filter allowed on its bytes
//! arrives with exactly those bytes, whatever the scribbling.

use crate::programs::{BootProgram, FuzzParameter};
use abi::cap::CapType;
use abi::vspace::MapRights;
use abi::{ErrorCode, Syscall, IPC_BUFFER_ADDRESS};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, ArgOp, BytesOp, FilterBuilder, RuleBuilder};
use sdk::println;
use sdk::syscall::raw_syscall_registers;
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::{Frame, MappedFrame, VSpace};

/// xorshift64*: small, fast, and the same sequence for the same seed.
struct Random(u64);

impl Random {
    fn new(seed: u64) -> Random {
        Random(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Where each fuzzer keeps 16 KiB of the case's Untyped (slot 4) for the
/// stacks and IPC buffers of the threads it starts (`spawn_randomly`), so
/// that the random retypes that use up slot 4 leave it some.
const THREAD_UNTYPED: u64 = 15;

/// Addresses worth passing as pointers.
const ADDRESSES: [u64; 8] = [
    IPC_BUFFER_ADDRESS,
    IPC_BUFFER_ADDRESS + 4090,
    0x40_0000,             // own code (readable)
    0x7fff_fffe_f000,      // own stack
    0x1000,                // unmapped
    0xffff_ffff_c008_0000, // kernel text
    0x0900_0000,           // a device's physical address
    0x0000_ffff_ffff_fff8, // top of the user half
];

fn argument(random: &mut Random) -> u64 {
    match random.below(4) {
        0 => random.below(64),
        1 => ADDRESSES[random.below(ADDRESSES.len() as u64) as usize] + random.below(16),
        2 => random.next(),
        _ => random.below(1 << 16),
    }
}

/// Picks a syscall number: a real one mostly (blocking ones mostly made
/// non-blocking, exit rarely), sometimes any value.
fn number(random: &mut Random) -> u64 {
    let last = Syscall::END - 1;
    if random.below(100) >= 90 {
        return random.next();
    }
    let mut number = random.below(last + 1);
    let mostly = random.below(100) < 97;
    number = match Syscall::from_number(number) {
        Some(Syscall::Send | Syscall::Call) if mostly => Syscall::NBSend.number(),
        Some(Syscall::Recv | Syscall::ReplyRecv) if mostly => Syscall::NBRecv.number(),
        Some(Syscall::Wait) if mostly => Syscall::Poll.number(),
        // Each prints the kernel's rseq counters: kept rare, as noise.
        Some(Syscall::DebugRseqCounters) if mostly => Syscall::Null.number(),
        Some(Syscall::Exit) if random.below(2000) != 0 => Syscall::Yield.number(),
        // Rewriting a TCB's registers usually crashes that thread, and
        // suspending one often leaves the round deadlocked: both end a
        // round early, so they stay rare.
        Some(Syscall::TcbWriteRegister) if random.below(200) != 0 => {
            Syscall::TcbReadRegister.number()
        }
        Some(Syscall::TcbSuspend) if random.below(100) != 0 => Syscall::TcbResume.number(),
        // User dispatch sends the fuzzer's later syscalls to a random
        // handler, and a dispatch return jumps to a random frame's PC:
        // either usually ends the fuzzer's round with a fault. Rare too.
        Some(Syscall::SetUserDispatch | Syscall::UserDispatchReturn) if random.below(100) != 0 => {
            Syscall::Null.number()
        }
        // A traced fuzzer stops at every syscall until some fuzzer
        // receives and answers its stops on the shared endpoint: often a
        // deadlocked round. Rare, then, and mostly undone.
        Some(Syscall::TcbAttachTracer) if random.below(100) != 0 => {
            Syscall::TcbDetachTracer.number()
        }
        _ => number,
    };
    number
}

/// Makes a Frame from the Untyped in slot 4 and audits this thread or the
/// next one into it (the notification in slot 3 is signalled), lossy or,
/// rarely, lossless (nobody drains the ring, so a lossless thread soon
/// waits for good and the round ends when its threads all wait).
fn audit_randomly(random: &mut Random) {
    let slot = 7 + random.below(9);
    let _ = sdk::syscall::retype(4, CapType::Frame, 0, slot, 1);
    let mode = if random.below(8) == 0 { 2 } else { 1 };
    let _ = sdk::syscall::raw_syscall6(
        Syscall::TcbSetAudit.number(),
        5 + random.below(2),
        [slot, 3, mode, random.next(), 0],
    );
}

/// Makes a filter from the Untyped in slot 4 with one to four random
/// rules, and attaches it to this thread or the next one (their TCBs are
/// in slots 6 and 5), sometimes naming the endpoint in slot 2 as the
/// policy server. Every step may fail; that is part of the test.
fn attach_random_filter(random: &mut Random) {
    let slot = 7 + random.below(9);
    let _ = sdk::syscall::retype(4, CapType::Filter, 0, slot, 1);
    // The default: allow mostly; now and then a refusal or a log, and
    // rarely one that ends or stops the thread (Kill, Trap, Notify, as
    // the rules' actions below). A default other than Allow gets `Exit`
    // allowed first: a fuzzer whose exit were refused would spin forever.
    let default = match random.below(200) {
        0 => Action::Kill,
        1 => Action::Trap,
        2..=3 => Action::Notify,
        4..=11 => Action::errno(ErrorCode::Denied),
        12..=19 => Action::Log,
        _ => Action::Allow,
    };
    let mut builder = FilterBuilder::new(default);
    if default != Action::Allow {
        builder = builder.rule(RuleBuilder::syscall(Syscall::Exit).action(Action::Allow));
    }
    for _ in 0..1 + random.below(4) {
        let number = Syscall::ALL[random.below(Syscall::ALL.len() as u64) as usize];
        if number == Syscall::Exit {
            // A fuzzer whose exit were refused would spin forever and the
            // round would never end.
            continue;
        }
        // Kill and Trap end the thread (no fuzzer has a fault endpoint),
        // and Notify can leave a round deadlocked: all three stay rare.
        let action = match random.below(40) {
            0 => Action::Kill,
            1 => Action::Trap,
            2..=5 => Action::Notify,
            6..=12 => Action::Log,
            13..=24 => Action::errno(
                ErrorCode::from_raw(1 + random.below(14)).unwrap_or(ErrorCode::Denied),
            ),
            _ => Action::Allow,
        };
        let mut rule = RuleBuilder::syscall(number);
        if random.below(2) == 0 {
            let ops = [ArgOp::Eq, ArgOp::Ne, ArgOp::Lt, ArgOp::Ge, ArgOp::MaskedEq];
            let op = ops[random.below(ops.len() as u64) as usize];
            rule = rule.arg(random.below(8) as u8, op, random.below(64));
        }
        rule = judging_memory(random, rule);
        builder = builder.rule(rule.action(action));
    }
    let mut buffer = [0u8; 1024];
    if let Ok(bytes) = builder.encode(&mut buffer) {
        let _ = FilterCap(Cptr(slot)).load(bytes);
    }
    let tcb = Tcb(Cptr(5 + random.below(2)));
    // The shared endpoint, a badged copy of it (another server to tell
    // apart), or an endpoint of its own that nobody serves (its Notify
    // waits until the round ends): each filter keeps the one named. The
    // server thread is this one or the next (which may be the one
    // confined: refused); without a server, a Notify filter is refused.
    let endpoint = match random.below(8) {
        0..=1 => None,
        2..=5 => Some(Cptr(2)),
        6 => {
            let copy = 7 + random.below(9);
            let _ =
                sdk::syscall::cnode::mint(0, 2, copy, abi::cap::Rights::ALL, Some(random.next()));
            Some(Cptr(copy))
        }
        _ => {
            let own = 7 + random.below(9);
            let _ = sdk::syscall::retype(4, CapType::Endpoint, 0, own, 1);
            Some(Cptr(own))
        }
    };
    let server = endpoint.map(|endpoint| FilterServer {
        endpoint,
        thread: Tcb(Cptr(5 + random.below(2))),
    });
    let filter = FilterCap(Cptr(slot));
    let _ = tcb.attach_filter(filter, server);
    // Now and then the filter (or whatever the slot holds) is handed to
    // a server, taking those of its attachments whose server is gone.
    if let (Some(server), 0) = (server, random.below(4)) {
        let _ = filter.set_server(server);
    }
}

/// The scribbler's and the judged channel's capabilities, in the
/// fuzzer's CNode past the slots its random capability pointers mostly
/// name (0..20; its CNode has 32): the channel's endpoint, the
/// notification that wakes the scribbler, the scribbler's TCB and filter,
/// and its stack and IPC-buffer frames.
const CHANNEL: u64 = 20;
const SCRIBBLE_GO: u64 = 21;
const SCRIBBLER_TCB: u64 = 22;
const SCRIBBLER_FILTER: u64 = 23;
const SCRIBBLER_FRAMES: u64 = 24;
/// Where its stack and buffer go: past the four areas `spawn_randomly`
/// uses.
const SCRIBBLER_AREA: u64 = abi::vspace::FRAME_MAP_START + 0x10_0000 * 5;
/// The fuzzers' priority (the driver's default for a case's threads).
const FUZZER_PRIORITY: u64 = 100;

/// The judged channel's messages: this label, `x2` = `JUDGED_MARK` (no
/// random message has both), and the pattern in buffer words 6..=13.
const JUDGED_LABEL: u64 = crate::programs::FUZZ_JUDGED_LABEL;
const JUDGED_MARK: u64 = 0x6a75_6467_6564_2121;
const JUDGED_FIRST_WORD: usize = 6;
const JUDGED_WORDS: usize = 8;
const JUDGED_LENGTH: u8 = (JUDGED_FIRST_WORD + JUDGED_WORDS) as u8;
const JUDGED_PATTERN: &[u8; 64] =
    b"fuzz-judged:0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNO";
/// What the scribbler writes over buffers.
const SCRIBBLED: u64 = 0x5c21_bb1e_5c21_bb1e;

/// Set by the fuzzer and read by the scribbler (threads of one space share
/// these): the scribbler's IPC buffer (0: none), a request for one judged
/// message, and a count the scribbler makes odd while it rewrites the
/// fuzzer's buffer (so the fuzzer knows whether a message it read from
/// there could have been rewritten since it arrived).
static SCRIBBLER_BUFFER: AtomicU64 = AtomicU64::new(0);
static SEND_JUDGED: AtomicBool = AtomicBool::new(false);
static SCRIBBLING: AtomicU64 = AtomicU64::new(0);
/// The buffer the fuzzer now and then passes to `DebugPrint` and
/// `FilterLoad` (512 bytes), which the scribbler rewrites.
static ARGUMENT_BUFFER: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// Buffer word `i` of the judged pattern.
fn judged_word(i: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&JUDGED_PATTERN[8 * i..8 * i + 8]);
    u64::from_le_bytes(bytes)
}

/// What the judged channel found: messages checked, and whether one
/// arrived with other bytes than those its filter allowed.
#[derive(Default)]
struct Judged {
    checked: u64,
    mismatch: bool,
    /// The low 32 bits of the mismatched message's info.
    info: u64,
}

/// Starts the scribbler: a thread of this program in the fuzzer's space
/// and CNode, at the fuzzer's priority, confined by a filter that allows
/// its `Send`s with `JUDGED_LABEL` only on the judged pattern (others
/// with that label `Denied`), so every judged message delivered must
/// carry exactly the pattern. `false` if a step failed (the Untyped may be
/// used up): then there is no channel this round, and no scribbling.
fn start_scribbler() -> bool {
    let tcb = Tcb(Cptr(SCRIBBLER_TCB));
    let made = [
        (CapType::Endpoint, CHANNEL),
        (CapType::Notification, SCRIBBLE_GO),
        (CapType::Tcb, SCRIBBLER_TCB),
        (CapType::Filter, SCRIBBLER_FILTER),
    ]
    .iter()
    .all(|&(kind, slot)| sdk::syscall::retype(4, kind, 0, slot, 1).is_ok());
    if !made || tcb.configure(Cptr(0), FUZZER_PRIORITY).is_err() {
        return false;
    }
    let thread = OwnThread {
        tcb,
        vspace: VSpace(Cptr(7)),
        untyped: Cptr(4),
        first_slot: SCRIBBLER_FRAMES,
        stack_pages: 1,
        area: SCRIBBLER_AREA,
        fault_endpoint: None,
        name: None,
    };
    let Ok(layout) = bind_to_own_space(&thread, BootProgram::FuzzScribbler.selector(0)) else {
        return false;
    };
    let judged = |syscall| RuleBuilder::syscall(syscall).label(JUDGED_LABEL);
    let mut buffer = [0u8; 1024];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(
            judged(Syscall::Send)
                .bytes(BytesOp::Equal, JUDGED_PATTERN, 0)
                .action(Action::Allow),
        )
        .rule(judged(Syscall::Send).action(Action::errno(ErrorCode::Denied)))
        .encode(&mut buffer)
    else {
        return false;
    };
    let filter = FilterCap(Cptr(SCRIBBLER_FILTER));
    if filter.load(rules).is_err() || tcb.attach_filter(filter, None).is_err() {
        return false;
    }
    SCRIBBLER_BUFFER.store(layout.buffer.address, Ordering::Release);
    tcb.resume().is_ok()
}

/// The scribbler: each time the fuzzer wakes it, rewrites the fuzzer's
/// IPC buffer words 6..64 and the argument buffer (the fuzzer may be
/// waiting in a judged call on them: for a policy server's answer, or
/// queued to send), then, if asked, sends one judged message: the pattern
/// in its buffer words 6..=13, `Send` on the channel, where it waits until
/// the fuzzer takes it (rewriting this buffer meanwhile). It ends when
/// its notification is gone.
pub fn scribbler() -> i32 {
    let fuzzer_buffer = MappedFrame::described(IPC_BUFFER_ADDRESS, true);
    let mut round = 0u64;
    while ipc::wait(Cptr(SCRIBBLE_GO)).is_ok() {
        round += 1;
        SCRIBBLING.fetch_add(1, Ordering::AcqRel);
        for word in 6..64 {
            let _ = fuzzer_buffer.write_u64(8 * word, SCRIBBLED ^ round);
        }
        SCRIBBLING.fetch_add(1, Ordering::AcqRel);
        for word in &ARGUMENT_BUFFER {
            word.store(SCRIBBLED.rotate_left(round as u32), Ordering::Relaxed);
        }
        if SEND_JUDGED.swap(false, Ordering::AcqRel) {
            for i in 0..JUDGED_WORDS {
                ipc::set_buffer_word(JUDGED_FIRST_WORD + i, judged_word(i));
            }
            let message = Message::new(JUDGED_LABEL, &[JUDGED_MARK, round, 0, 0, 0, 0])
                .with_length(JUDGED_LENGTH);
            let _ = ipc::send(Cptr(CHANNEL), &message);
        }
    }
    0
}

/// One step of the judged channel: wake the scribbler (asking it for a
/// judged message now and then), spoil the scribbler's buffer while its
/// judged message may wait queued, or take a message from the channel
/// and check it: one with the judged label and mark must carry exactly
/// the pattern (unless the scribbler rewrote this buffer since it
/// arrived, which the fuzzer can tell: then it is not counted).
fn judged_step(random: &mut Random, judged: &mut Judged) {
    match random.below(8) {
        0..=2 => {
            if random.below(2) == 0 {
                SEND_JUDGED.store(true, Ordering::Release);
            }
            let _ = ipc::signal(Cptr(SCRIBBLE_GO));
        }
        3..=4 => {
            let address = SCRIBBLER_BUFFER.load(Ordering::Acquire);
            // Only while its buffer frame is still mapped there (a random
            // call may have deleted it): then mapping it again is refused.
            let frame = Frame(Cptr(SCRIBBLER_FRAMES + 1));
            let mapped = address != 0
                && matches!(
                    frame.map(VSpace(Cptr(7)), address, MapRights::ReadWrite),
                    Ok(()) | Err(ErrorCode::AlreadyMapped)
                );
            if mapped {
                let buffer = MappedFrame::described(address, true);
                let spoiled = random.below(JUDGED_WORDS as u64 + 1) as usize;
                for i in 0..spoiled {
                    let _ = buffer.write_u64(8 * (JUDGED_FIRST_WORD + i) as u64, random.next());
                }
            }
        }
        _ => {
            let before = SCRIBBLING.load(Ordering::Acquire);
            let Ok(received) = ipc::nb_recv(Cptr(CHANNEL)) else {
                return;
            };
            let info = received.message.info;
            if info.label() != JUDGED_LABEL || received.message.words[0] != JUDGED_MARK {
                return;
            }
            let words: [u64; JUDGED_WORDS] =
                core::array::from_fn(|i| ipc::buffer_word(JUDGED_FIRST_WORD + i));
            let after = SCRIBBLING.load(Ordering::Acquire);
            if before != after || before % 2 == 1 {
                return;
            }
            judged.checked += 1;
            let expected: [u64; JUDGED_WORDS] = core::array::from_fn(judged_word);
            if info.length() != JUDGED_LENGTH || words != expected {
                println!(
                    "fuzzer: judged mismatch: a message allowed on its bytes arrived with others (length {}, words {:x?})",
                    info.length(),
                    words
                );
                judged.mismatch = true;
                judged.info = u64::from(info) & 0xffff_ffff;
            }
        }
    }
}

/// Sometimes makes `rule` judge memory and the PC: a message word
/// (mostly the IPC buffer's, 6..16, which the kernel copies to judge),
/// the caller's PC (near the fuzzer's code mostly), the bytes the call
/// carries (a few bytes of the judged pattern, of what the scribbler
/// writes, or random ones, within the first bytes or all).
fn judging_memory(random: &mut Random, mut rule: RuleBuilder) -> RuleBuilder {
    let ops = [ArgOp::Eq, ArgOp::Ne, ArgOp::Lt, ArgOp::Ge, ArgOp::MaskedEq];
    let mut op = || ops[random.below(ops.len() as u64) as usize];
    let (first, second) = (op(), op());
    if random.below(3) == 0 {
        let word = if random.below(4) == 0 {
            random.below(64)
        } else {
            6 + random.below(10)
        };
        let value = match random.below(3) {
            0 => judged_word(random.below(JUDGED_WORDS as u64) as usize),
            1 => random.below(64),
            _ => random.next(),
        };
        rule = rule.word(word as u8, first, value);
    }
    if random.below(6) == 0 {
        let value = match random.below(2) {
            0 => 0x40_0000 + random.below(0x4_0000),
            _ => random.next(),
        };
        rule = rule.pc(second, value);
    }
    if random.below(3) == 0 {
        let bytes_ops = [BytesOp::Equal, BytesOp::Prefix, BytesOp::Contains];
        let bytes_op = bytes_ops[random.below(3) as usize];
        let mut pattern = [0u8; 16];
        let length = 1 + random.below(16) as usize;
        let start = random.below(48) as usize;
        match random.below(3) {
            0 => pattern[..length].copy_from_slice(&JUDGED_PATTERN[start..start + length]),
            1 => {
                for (i, byte) in pattern.iter_mut().enumerate() {
                    *byte = SCRIBBLED.to_le_bytes()[i % 8];
                }
            }
            _ => pattern
                .iter_mut()
                .for_each(|byte| *byte = random.below(256) as u8),
        }
        let within = if random.below(2) == 0 {
            0
        } else {
            random.below(600) as u16
        };
        rule = rule.bytes(bytes_op, &pattern[..length], within);
    }
    rule
}

/// Where the kernel starts every fuzzer: the program's entry.
fn entry() -> u64 {
    extern "C" {
        fn _start(argument: u64) -> !;
    }
    _start as *const () as u64
}

/// What a hostile sibling does to the next fuzzer (its TCB is in slot 5)
/// while it may be waiting for a policy server or a tracer, or be about
/// to go on with an answered call: writes one of the call's registers
/// (`x0..x8`: the call is cancelled), a register outside the call (it
/// must not be), suspends and resumes it, or reads it. The kernel must
/// never run a call that was not judged as it runs, whatever the timing.
fn meddle_with_sibling(random: &mut Random) {
    use abi::tcb::Register;
    let sibling = Tcb(Cptr(5));
    match random.below(6) {
        0..=2 => {
            let register = Register::X(random.below(9) as u8);
            let value = argument(random);
            // Until the sibling has run, its x0 is its program selector,
            // not a call's: rewritten, it would start another init program
            // (0x0900_0008 is `Spin` for 590 s, longer than the run may
            // take) instead of fuzzing.
            let not_started = || sibling.read_register(Register::Pc) == Ok(entry());
            if register != Register::X(0) || !not_started() {
                let _ = sibling.write_register(register, value);
            }
        }
        3 => {
            let _ = sibling.write_register(Register::X(9 + random.below(10) as u8), random.next());
        }
        4 => {
            let _ = sibling.suspend();
            if random.below(8) != 0 {
                let _ = sibling.resume();
            }
        }
        _ => {
            let _ = sibling.read_register(Register::X(random.below(31) as u8));
        }
    }
}

/// Makes a thread from the Untyped in slot 4: a small CNode and a TCB
/// in random slots, the console and the endpoint in slot 2 minted into
/// the CNode (sometimes the fuzzer's own CNode instead), configured
/// (mostly with `NO_PROGRAM`; now and then with a random `x4`, a program
/// selector among them, which the kernel refuses), started as a thread
/// of the fuzzer's own program and space (its VSpace in slot 7) at
/// `ThreadsCaller` or `ThreadsServer`, with a one-page stack and an IPC
/// buffer from the Untyped in `THREAD_UNTYPED`, at one of four areas of
/// the frame window (a taken one fails), resumed; sometimes its TCB is
/// deleted again at once. Every step may fail; that is part of the test
/// (threads left over end with the round's Untyped, or with the fuzzer
/// whose space they share).
fn spawn_randomly(random: &mut Random) {
    let cnode = 7 + random.below(9);
    let tcb = Tcb(Cptr(7 + random.below(9)));
    let _ = sdk::syscall::retype(4, CapType::CNode, 2, cnode, 1);
    let _ = sdk::syscall::retype(4, CapType::Tcb, 0, tcb.0 .0, 1);
    let rights = abi::cap::Rights::from_raw(random.below(64)).unwrap_or(abi::cap::Rights::ALL);
    let _ = sdk::syscall::cnode::mint_into(cnode, 1, 1, abi::cap::Rights::WRITE, None);
    let _ = sdk::syscall::cnode::mint_into(cnode, 2, 2, rights, None);
    let space = if random.below(4) == 0 { 0 } else { cnode };
    let program = if random.below(2) == 0 {
        BootProgram::ThreadsCaller
    } else {
        BootProgram::ThreadsServer
    };
    let x4 = match random.below(8) {
        0 => program.selector(random.below(4)),
        1 => random.next(),
        _ => abi::tcb::NO_PROGRAM,
    };
    // Only `NO_PROGRAM` is taken; what another `x4` gets cannot be
    // checked here (a random filter, tracer or policy server may have
    // the last word), the host fuzzer's decode check holds the rule.
    let _ = tcb.configure_with_x4(Cptr(space), random.below(120), x4);
    // Its stack and buffer frames' two slots: past the VSpaces in 7 and
    // 8 and clear of the new CNode and TCB when they can be, mostly
    // emptied first (mappings go with what was there).
    let first_slot = (9..14)
        .filter(|&s| ![s, s + 1].iter().any(|t| *t == cnode || *t == tcb.0 .0))
        .nth(random.below(3) as usize)
        .unwrap_or(9 + random.below(5));
    if random.below(8) != 0 {
        for slot in [first_slot, first_slot + 1] {
            let _ = sdk::syscall::cnode::delete(0, slot);
        }
    }
    let thread = OwnThread {
        tcb,
        vspace: VSpace(Cptr(7)),
        untyped: Cptr(THREAD_UNTYPED),
        first_slot,
        stack_pages: 1,
        area: abi::vspace::FRAME_MAP_START + 0x10_0000 * (1 + random.below(4)),
        fault_endpoint: None,
        name: None,
    };
    let _ = bind_to_own_space(&thread, program.selector(0));
    let _ = tcb.resume();
    if random.below(3) == 0 {
        let _ = sdk::syscall::cnode::delete(0, tcb.0 .0);
    }
}

/// Reply objects: calls the endpoint in slot 2 (the caller waits until a
/// fuzzer answers it, saves its reply or ends), or takes a message from
/// it and saves the reply it may owe into a random slot (mostly a Reply
/// object retyped there first; remembered in `saved`), or answers through
/// the slot saved last (the reply may have gone stale) or a random one
/// (anything may be there), or deletes the saved one. Saved replies left
/// over go with their CNode when the fuzzer ends, waking their callers.
fn reply_randomly(random: &mut Random, saved: &mut Option<u64>) {
    let mut args = [0u64; 8];
    args[1] = random.below(1 << 20) << 9 | random.below(8);
    // A caller waits until some fuzzer answers it or the round ends in a
    // deadlock, which cuts the round short: calls stay the rare choice.
    match random.below(20) {
        0 => {
            args[0] = 2;
            // The scribbler rewrites this buffer while the call waits.
            let _ = ipc::signal(Cptr(SCRIBBLE_GO));
            raw_syscall_registers(Syscall::Call.number(), args);
        }
        1..=6 => {
            args[0] = 2;
            raw_syscall_registers(Syscall::NBRecv.number(), args);
            let slot = 7 + random.below(9);
            if random.below(4) != 0 {
                let _ = sdk::syscall::retype(4, CapType::Reply, 0, slot, 1);
            }
            if sdk::syscall::cnode::reply_save(0, slot).is_ok() {
                *saved = Some(slot);
            }
        }
        7..=8 => {
            if let Some(slot) = saved.take() {
                let _ = sdk::syscall::cnode::delete(0, slot);
            }
        }
        _ => {
            args[0] = saved.take().unwrap_or(7 + random.below(9));
            raw_syscall_registers(Syscall::NBSend.number(), args);
        }
    }
}

/// Builds a thread in an address space of its own: a VSpace (1 to 4 table
/// pages), a TCB and a Frame from the Untyped in slot 4 in random slots
/// (mostly emptied first; 7 and 8, the VSpaces, are left alone),
/// configured without a program (the fuzzer's CNode as its CSpace), then
/// `TcbSetSpace` with random IPC buffer and fault endpoint slots (or
/// none) and a mostly-valid PC and SP; a random frame mapped into the
/// space at a low page; sometimes resumed (it runs whatever that page
/// holds, and most likely faults); sometimes its VSpace or TCB deleted
/// again at once. Every step may fail; that is part of the test.
fn build_space_randomly(random: &mut Random) {
    let vspace = 9 + random.below(7);
    let tcb = 9 + random.below(7);
    let buffer_slot = 9 + random.below(7);
    // Fresh slots mostly (what was there goes, or the retype would fail).
    for slot in [vspace, tcb, buffer_slot] {
        if random.below(4) != 0 {
            let _ = sdk::syscall::cnode::delete(0, slot);
        }
    }
    let _ = sdk::syscall::retype(4, CapType::VSpace, 1 + random.below(4), vspace, 1);
    let _ = sdk::syscall::retype(4, CapType::Tcb, 0, tcb, 1);
    let _ = sdk::syscall::retype(4, CapType::Frame, 0, buffer_slot, 1);
    let _ = Tcb(Cptr(tcb)).configure(Cptr(0), random.below(120));
    let optional = |random: &mut Random, slot: u64| {
        if random.below(3) == 0 {
            abi::tcb::NO_CAP
        } else {
            slot
        }
    };
    let buffer = optional(random, buffer_slot);
    let endpoint = optional(random, 2);
    let misaligned = |random: &mut Random, by: u64| if random.below(8) == 0 { by } else { 0 };
    let pc = 0x1000 * (1 + random.below(4)) + 4 * random.below(2) + misaligned(random, 2);
    let sp = 0x1_0000 - 16 * random.below(2) - misaligned(random, 8);
    // Where the buffer is mapped: a page, now and then a misaligned or
    // kernel address, or one without a buffer.
    let buffer_address = match random.below(8) {
        0 => random.next(),
        1 => 0x2000 + 8,
        _ if buffer == abi::tcb::NO_CAP => 0,
        _ => 0x1000 * (1 + random.below(8)),
    };
    let _ = sdk::syscall::tcb_set_space(
        tcb,
        vspace,
        buffer,
        buffer_address,
        endpoint,
        [pc, sp, random.next()],
    );
    let frame = 7 + random.below(9);
    let rights = [1, 3, 5, 7][random.below(4) as usize];
    let _ = sdk::syscall::raw_syscall6(
        Syscall::FrameMap.number(),
        frame,
        [vspace, 0x1000 * random.below(5), rights, 0, 0],
    );
    if random.below(2) == 0 {
        let _ = Tcb(Cptr(tcb)).resume();
    }
    match random.below(4) {
        0 => {
            let _ = sdk::syscall::cnode::delete(0, vspace);
        }
        1 => {
            let _ = sdk::syscall::cnode::delete(0, tcb);
        }
        _ => {}
    }
}

/// Runs the fuzzer; it exits with `FUZZ_DONE` and the number of syscalls
/// it made (the kernel counts only those that reach its generic path, not
/// the inline Null fast path, so the fuzzer reports its own count).
pub fn run(parameter: u64) -> i32 {
    let parameter = FuzzParameter::decode(parameter);
    let seed = (u64::from(parameter.seed) << 8) | u64::from(parameter.index);
    println!(
        "fuzzer {}: seed {:#x}, {} syscalls",
        parameter.index, seed, parameter.calls
    );
    let mut random = Random::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut saved_reply = None;
    // May fail (another fuzzer took the memory): then so do the spawns.
    let _ = sdk::syscall::retype(4, CapType::Untyped, 14, THREAD_UNTYPED, 1);
    let channel = start_scribbler();
    let mut judged = Judged::default();
    for made in 0..parameter.calls {
        if judged.mismatch {
            // With the message info it got (its label says it is real: a
            // fuzzer whose control flow a random dispatch or register
            // write has sent here would not have it).
            let _ = made;
            sdk::syscall::exit_with(crate::programs::FUZZ_JUDGED_MISMATCH | judged.info as i64)
        }
        if channel && random.below(40) == 0 {
            judged_step(&mut random, &mut judged);
            continue;
        }
        // Now and then a well-formed filter, so that the policy path
        // (verdicts, Notify to a peer, Trap, Kill) runs under fuzzing too.
        if random.below(1500) == 0 {
            attach_random_filter(&mut random);
            continue;
        }
        if random.below(3000) == 0 {
            audit_randomly(&mut random);
            continue;
        }
        if random.below(1000) == 0 {
            spawn_randomly(&mut random);
            continue;
        }
        if random.below(100) == 0 {
            reply_randomly(&mut random, &mut saved_reply);
            continue;
        }
        if random.below(300) == 0 {
            meddle_with_sibling(&mut random);
            continue;
        }
        if random.below(1000) == 0 {
            build_space_randomly(&mut random);
            continue;
        }
        let number = number(&mut random);
        let mut args = [0u64; 8];
        args[0] = if random.below(10) < 7 {
            random.below(20)
        } else {
            random.next()
        };
        // Message info: label, length up to past the limit, rarely caps.
        args[1] =
            random.below(1 << 20) << 9 | random.below(70) | ((random.below(10) == 0) as u64) << 7;
        for slot in &mut args[2..] {
            *slot = argument(&mut random);
        }
        if number == Syscall::DebugPrint.number() {
            // Short prints only: the console is shared.
            args[3] = random.below(8);
        }
        // The argument buffer the scribbler rewrites, as the text or the
        // description (a filter may judge its bytes, a policy server be
        // asked about them while the call waits).
        if (number == Syscall::DebugPrint.number() || number == Syscall::FilterLoad.number())
            && random.below(4) == 0
        {
            args[2] = ARGUMENT_BUFFER.as_ptr() as u64 + 8 * random.below(4);
            if number == Syscall::FilterLoad.number() {
                args[3] = random.below(520);
            }
        }
        // Frames: retype some from the Untyped (slot 4) into random slots,
        // map them into a VSpace (slots 7 and 8) at a few window pages
        // with mostly-valid permissions, unmap, delete, revoke.
        if number == Syscall::Retype.number() && random.below(2) == 0 {
            args[0] = 4;
            args[2] = u64::from(abi::cap::CapType::Frame.raw());
            args[3] = 0;
            args[4] = random.below(16);
            args[5] = 1 + random.below(3);
        }
        // Saved replies: into the fuzzer's own CNode (slot 0), at the
        // slots that frames and filters use too, so later sends, moves,
        // copies and deletes meet Reply capabilities.
        if number == Syscall::ReplySave.number() && random.below(4) != 0 {
            args[0] = 0;
            args[2] = 7 + random.below(9);
        }
        // A tracer is attached and detached through the shared endpoint
        // (slot 2) mostly: a detach must name the endpoint it was attached
        // with, so a random one would leave most tracers on.
        if (number == Syscall::TcbAttachTracer.number()
            || number == Syscall::TcbDetachTracer.number())
            && random.below(4) != 0
        {
            args[2] = 2;
        }
        if number == Syscall::FrameMap.number() && random.below(4) != 0 {
            args[2] = 7 + random.below(2);
            args[3] = abi::vspace::FRAME_MAP_START + 0x1000 * random.below(4);
            args[4] = [1, 3, 5, 7][random.below(4) as usize];
        }
        // A call that may wait: the scribbler is woken to rewrite the
        // buffer under it.
        if channel
            && [
                Syscall::Send,
                Syscall::Call,
                Syscall::Recv,
                Syscall::ReplyRecv,
            ]
            .iter()
            .any(|blocking| blocking.number() == number)
        {
            let _ = ipc::signal(Cptr(SCRIBBLE_GO));
        }
        raw_syscall_registers(number, args);
    }
    let status = crate::programs::FUZZ_DONE
        | (judged.checked.min(crate::programs::FUZZ_JUDGED_MAX) << 22) as i64
        | i64::from(parameter.calls);
    sdk::syscall::exit_with(status)
}
