//! What only several CPUs can break (issue 20): IPC between CPUs, a
//! capability revoked while other CPUs invoke it, a frame unmapped while
//! another CPU reads it, threads moved between CPUs in every state, and
//! TCB invocations on a thread another CPU runs.
//!
//! Each case is one case thread (`SmpMain`, its scenario the parameter;
//! the case's Untyped in slot 2, its VSpace in 3, its TCB in 4) that
//! makes its workers (`SmpWorker`) as threads of its own program in its
//! own space and CNode (`sdk::thread::bind_to_own_space`), gives each its
//! CPU (`Tcb::set_affinity`) and starts them; they share its statics,
//! where each leaves its result. The case needs two CPUs (the driver
//! skips it on one, `Cpus::AtLeast(2)`), and on fewer than four puts
//! workers on the CPUs there are (several on one). The case thread runs
//! on CPU 0. Each program returns the number of its first failed check;
//! a worker's result becomes the case thread's (100 + 10 x worker +
//! check... as `join` says).

use crate::programs::{BootProgram, CNODE_SLOT};
use abi::cap::{CapType, Rights};
use abi::tcb::Register;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::ErrorCode;
use core::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::supervision::{self, FaultReply};
use sdk::syscall::{cnode, retype, this_cpu};
use sdk::tcb::Tcb;
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::{Frame, VSpace};

/// The scenarios (`SmpMain`'s parameter).
pub const SMP_PING_PONG: u64 = 0;
/// See [`SMP_PING_PONG`].
pub const SMP_REVOKE: u64 = 1;
/// See [`SMP_PING_PONG`].
pub const SMP_UNMAP: u64 = 2;
/// See [`SMP_PING_PONG`].
pub const SMP_MIGRATE: u64 = 3;
/// See [`SMP_PING_PONG`].
pub const SMP_REMOTE_TCB: u64 = 4;

/// Call/ReplyRecv rounds of the ping-pong.
pub const PING_PONG_ROUNDS: u64 = 20_000;
/// Unmap rounds.
const UNMAP_ROUNDS: u64 = 16;

/// The case thread's slots.
const CNODE: u64 = CNODE_SLOT;
const UNTYPED: u64 = 2;
const OWN_VSPACE: VSpace = VSpace(Cptr(3));
const OWN_TCB: Tcb = Tcb(Cptr(4));
/// A notification the workers signal when they finish (wait) and its
/// badged copy (signal).
const DONE: Cptr = Cptr(5);
const DONE_SIGNAL: Cptr = Cptr(6);
/// Objects of the scenarios.
const ENDPOINT: Cptr = Cptr(7);
const SECOND_ENDPOINT: Cptr = Cptr(8);
const NOTIFICATION: Cptr = Cptr(9);
/// Derived capabilities the revoke scenario takes away.
const DERIVED_NOTIFICATION: [Cptr; 2] = [Cptr(10), Cptr(11)];
const DERIVED_ENDPOINT: Cptr = Cptr(12);
/// The fault endpoint's badged capability (the unmap scenario's reader).
const FAULTS_BADGED: Cptr = Cptr(13);
/// The unmap scenario's two-page Untyped and its frame.
const SMALL_UNTYPED: u64 = 14;
const PAGE_FRAME: Frame = Frame(Cptr(15));
/// Workers' TCBs (16..20) and frames (32 + 8 x worker).
const WORKER_TCBS: u64 = 16;
const WORKER_FRAMES: u64 = 32;
const MAX_WORKERS: usize = 4;
const STACK_PAGES: u64 = 4;
/// Where the workers' stacks and buffers go (one 64 KiB area each).
const WORKER_AREA: u64 = FRAME_MAP_START + 0x20_0000;
/// Where the unmap scenario maps its frame: the reader's page, and the
/// page the same memory comes back at after the unmap.
const READ_PAGE: u64 = FRAME_MAP_START;
const AFTER_PAGE: u64 = FRAME_MAP_START + 0x1000;

/// The workers' priority: the case thread's (the driver's default).
const PRIORITY: u64 = 100;

/// Worker roles (the low byte of a worker's parameter; its index above).
const ROLE_PING: u64 = 1;
const ROLE_PONG: u64 = 2;
const ROLE_SIGNAL_LOOP: u64 = 3;
const ROLE_SEND_LOOP: u64 = 4;
const ROLE_READER: u64 = 5;
const ROLE_BLOCKED: u64 = 6;
const ROLE_READY: u64 = 7;
const ROLE_SPINNER: u64 = 8;
const ROLE_POLL_LOOP: u64 = 9;

/// What the workers leave for the case thread.
static RESULTS: [AtomicI32; MAX_WORKERS] = [const { AtomicI32::new(-1) }; MAX_WORKERS];
static FINISHED: AtomicU64 = AtomicU64::new(0);
/// Per worker: a count of its loop and the CPU it saw last.
static COUNTS: [AtomicU64; MAX_WORKERS] = [const { AtomicU64::new(0) }; MAX_WORKERS];
static SEEN_CPU: [AtomicU64; MAX_WORKERS] = [const { AtomicU64::new(u64::MAX) }; MAX_WORKERS];
/// Set by the case thread: the CPU a worker is being moved to, whether
/// the capabilities were revoked (unmap: the page unmapped), stop.
static TARGET_CPU: [AtomicU64; MAX_WORKERS] = [const { AtomicU64::new(u64::MAX) }; MAX_WORKERS];
static REVOKED: AtomicU64 = AtomicU64::new(0);
static STOP: AtomicU64 = AtomicU64::new(0);
/// The unmap reader's stale reads: how many, and the last value.
static STALE_READS: AtomicU64 = AtomicU64::new(0);
static STALE_VALUE: AtomicU64 = AtomicU64::new(0);
/// CPUs running (set by the case thread before any worker starts).
static CPUS: AtomicU64 = AtomicU64::new(1);

/// The value the reader must see while the page is mapped.
const OLD: u64 = 0x01d0_01d0_01d0_01d0;
/// Written into the same memory after the unmap has returned.
const NEW: u64 = 0x0e3e_0e3e_0e3e_0e3e;
/// What `landing_suspended` expects in `x0`.
const MAGIC: u64 = 0x05e7_0c0e_a11f_000d;
/// Init's program is linked at 4 MiB; its text is well within 16 MiB.
const PROGRAM_START: u64 = 0x40_0000;
const PROGRAM_END: u64 = PROGRAM_START + 0x100_0000;
/// A worker loop that never sees what it waits for gives up after this
/// many rounds (the case fails, it does not hang).
const PATIENCE: u64 = 50_000_000;

/// The `index`th CPU other than 0, wrapping over those that run.
fn other_cpu(index: u64) -> u64 {
    let cpus = CPUS.load(Ordering::Relaxed).max(2);
    1 + index % (cpus - 1)
}

/// The case thread: learns the CPUs, runs its scenario.
pub fn main(scenario: u64) -> i32 {
    let cpus = match OWN_TCB.set_affinity(0) {
        Ok(cpus) => cpus,
        Err(_) => return 1,
    };
    if cpus < 2 {
        println!("smp: {cpus} CPU running, the case needs 2: nothing to check");
        return 0;
    }
    CPUS.store(cpus, Ordering::Relaxed);
    if this_cpu() != 0 {
        return 2;
    }
    if retype(UNTYPED, CapType::Notification, 0, DONE.0, 1).is_err()
        || cnode::mint(CNODE, DONE.0, DONE_SIGNAL.0, Rights::WRITE, Some(1)).is_err()
    {
        return 3;
    }
    let status = match scenario {
        SMP_PING_PONG => ping_pong(cpus),
        SMP_REVOKE => revoke(),
        SMP_UNMAP => unmap(),
        SMP_MIGRATE => migrate(cpus),
        SMP_REMOTE_TCB => remote_tcb(),
        _ => 9,
    };
    // Whatever happened, no worker is left spinning.
    STOP.store(1, Ordering::Release);
    status
}

/// A worker's TCB.
const fn worker(index: u64) -> Tcb {
    Tcb(Cptr(WORKER_TCBS + index))
}

/// The stack range of worker `index` (lowest address, top).
fn worker_stack(index: u64) -> (u64, u64) {
    let top = WORKER_AREA + index * 0x1_0000 + (1 + STACK_PAGES) * 4096;
    (top - STACK_PAGES * 4096, top)
}

/// Makes worker `index` with `role` on `cpu` at `priority` (not started).
fn make_worker(
    index: u64,
    role: u64,
    cpu: u64,
    priority: u64,
    fault_endpoint: Option<Cptr>,
) -> Result<Tcb, i32> {
    let tcb = worker(index);
    let check = 10 + 10 * index as i32;
    retype(UNTYPED, CapType::Tcb, 0, tcb.0 .0, 1).map_err(|_| check)?;
    tcb.configure(Cptr(CNODE), priority)
        .map_err(|_| check + 1)?;
    let thread = OwnThread {
        tcb,
        vspace: OWN_VSPACE,
        untyped: Cptr(UNTYPED),
        first_slot: WORKER_FRAMES + 8 * index,
        stack_pages: STACK_PAGES,
        area: WORKER_AREA + index * 0x1_0000,
        fault_endpoint,
        name: Some("smp-worker"),
    };
    let selector = BootProgram::SmpWorker.selector(role | index << 8);
    bind_to_own_space(&thread, selector).map_err(|_| check + 2)?;
    tcb.set_affinity(cpu).map_err(|_| check + 3)?;
    Ok(tcb)
}

/// Makes and starts worker `index`.
fn start_worker(index: u64, role: u64, cpu: u64) -> Result<Tcb, i32> {
    let tcb = make_worker(index, role, cpu, PRIORITY, None)?;
    tcb.resume().map_err(|_| 14 + 10 * index as i32)?;
    Ok(tcb)
}

/// Waits until `count` workers have finished; the first failure among
/// workers `0..count` as `1000 + 100 x worker + its check`, else 0.
fn join(count: usize) -> i32 {
    while (FINISHED.load(Ordering::Acquire) as usize) < count {
        if ipc::wait(DONE).is_err() {
            return 4;
        }
    }
    for (index, result) in RESULTS.iter().enumerate().take(count) {
        let status = result.load(Ordering::Acquire);
        if status != 0 {
            println!("smp: worker {index} failed its check {status}");
            return 1000 + 100 * index as i32 + status;
        }
    }
    0
}

/// Spins (yielding: the case thread may share its CPU) until `done`, at
/// most `PATIENCE` / 100 times.
fn wait_for(done: impl Fn() -> bool) -> bool {
    for _ in 0..PATIENCE / 100 {
        if done() {
            return true;
        }
        let _ = sdk::syscall::yield_now();
    }
    done()
}

/// 1. Cross-CPU IPC: a client on one CPU calls a server on another
///    `PING_PONG_ROUNDS` times; every reply carries what the server
///    computed from that call, and each side checks at every round that
///    it runs where it was put.
fn ping_pong(cpus: u64) -> i32 {
    if retype(UNTYPED, CapType::Endpoint, 0, ENDPOINT.0, 1).is_err() {
        return 5;
    }
    let (client_cpu, server_cpu) = if cpus >= 3 { (1, 2) } else { (0, 1) };
    if let Err(check) = start_worker(0, ROLE_PONG, server_cpu) {
        return check;
    }
    if let Err(check) = start_worker(1, ROLE_PING, client_cpu) {
        return check;
    }
    let status = join(2);
    if status == 0 {
        println!(
            "smp: {PING_PONG_ROUNDS} calls from CPU {client_cpu} answered on CPU {server_cpu}, each reply checked"
        );
    }
    status
}

const PING_LABEL: u64 = 0x919;
const PONG_LABEL: u64 = 0x909;
const STOP_LABEL: u64 = 0x570;

fn pong_words(round: u64) -> [u64; 4] {
    [
        round,
        round.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        !round,
        round ^ 0xa5a5,
    ]
}

fn ping(cpu: u64) -> i32 {
    for round in 0..PING_PONG_ROUNDS {
        if this_cpu() != cpu {
            return 1;
        }
        let sent = [round, round ^ 0x5a5a_5a5a, round.rotate_left(17), cpu];
        let reply = match ipc::call(ENDPOINT, &Message::new(PING_LABEL, &sent)) {
            Ok(reply) => reply,
            Err(_) => return 2,
        };
        if reply.info.label() != PONG_LABEL || reply.info.length() != 4 {
            println!("smp: round {round}: reply {:?}", reply.info);
            return 3;
        }
        if reply.words[..4] != pong_words(round) {
            println!("smp: round {round}: reply words {:x?}", reply.words);
            return 4;
        }
    }
    if this_cpu() != cpu {
        return 5;
    }
    match ipc::call(ENDPOINT, &Message::new(STOP_LABEL, &[])) {
        Ok(reply) if reply.info.label() == STOP_LABEL => 0,
        _ => 6,
    }
}

fn pong(cpu: u64) -> i32 {
    let mut received = match ipc::recv(ENDPOINT) {
        Ok(received) => received,
        Err(_) => return 1,
    };
    let mut round: u64 = 0;
    loop {
        if this_cpu() != cpu {
            return 2;
        }
        let message = received.message;
        if message.info.label() == STOP_LABEL {
            break;
        }
        let client_cpu = if CPUS.load(Ordering::Relaxed) >= 3 {
            1
        } else {
            0
        };
        let expected = [
            round,
            round ^ 0x5a5a_5a5a,
            round.rotate_left(17),
            client_cpu,
        ];
        if message.info.label() != PING_LABEL
            || message.info.length() != 4
            || message.words[..4] != expected
        {
            println!("smp: call {round}: {:?} {:x?}", message.info, message.words);
            return 3;
        }
        received = match ipc::reply_recv(ENDPOINT, &Message::new(PONG_LABEL, &pong_words(round))) {
            Ok(received) => received,
            Err(_) => return 4,
        };
        round += 1;
    }
    if round != PING_PONG_ROUNDS {
        return 5;
    }
    match ipc::reply(&Message::new(STOP_LABEL, &[])) {
        Ok(()) => 0,
        Err(_) => 6,
    }
}

/// 2. A capability revoked on CPU 0 while workers on the other CPUs
///    invoke it: two signal through notification capabilities derived
///    from one (revoked), one sends through an endpoint capability
///    derived from another (deleted). Every invocation that starts after
///    the revoke and the delete returned fails with `InvalidCapability`,
///    and once one has failed none succeeds again; the workers then stop.
///    The kernel's invariants are checked while they still run, and after.
fn revoke() -> i32 {
    let made = retype(UNTYPED, CapType::Endpoint, 0, ENDPOINT.0, 1)
        .and_then(|()| retype(UNTYPED, CapType::Notification, 0, NOTIFICATION.0, 1))
        .and_then(|()| {
            cnode::mint(
                CNODE,
                NOTIFICATION.0,
                DERIVED_NOTIFICATION[0].0,
                Rights::WRITE,
                Some(0x10),
            )
        })
        .and_then(|()| {
            cnode::mint(
                CNODE,
                DERIVED_NOTIFICATION[0].0,
                DERIVED_NOTIFICATION[1].0,
                Rights::WRITE,
                None,
            )
        })
        .and_then(|()| {
            cnode::mint(
                CNODE,
                ENDPOINT.0,
                DERIVED_ENDPOINT.0,
                Rights::WRITE,
                Some(0x20),
            )
        });
    if made.is_err() {
        return 5;
    }
    let roles = [ROLE_SIGNAL_LOOP, ROLE_SEND_LOOP, ROLE_SIGNAL_LOOP];
    for (index, role) in roles.iter().enumerate() {
        if let Err(check) = start_worker(index as u64, *role, other_cpu(index as u64)) {
            return check;
        }
    }
    // Every worker is well into its loop.
    if !wait_for(|| {
        COUNTS
            .iter()
            .take(3)
            .all(|c| c.load(Ordering::Acquire) >= 500)
    }) {
        return 6;
    }
    expect!(7, cnode::revoke(CNODE, NOTIFICATION.0), Ok(()));
    expect!(8, cnode::delete(CNODE, DERIVED_ENDPOINT.0), Ok(()));
    REVOKED.store(1, Ordering::Release);
    // The invariants hold with the workers still at it on the other CPUs.
    match sdk::debug::check_invariants(false) {
        Ok(report) if report.hold_now => {}
        _ => return 9,
    }
    // The original notification is still there (only its children went).
    expect!(10, ipc::signal(NOTIFICATION).map(|_| ()), Ok(()));
    let status = join(3);
    if status != 0 {
        return status;
    }
    match sdk::debug::check_invariants(false) {
        Ok(report) if report.hold_now => {}
        _ => return 11,
    }
    0
}

/// Invokes `slot` until it fails after the revoke: every success must
/// have started before `REVOKED` was set, the failure must be
/// `InvalidCapability`, and so must the next 100.
fn invoke_until_revoked(index: usize, invoke: impl Fn() -> Result<(), ErrorCode>) -> i32 {
    let mut failed_once = false;
    let mut after_failure = 0;
    for _ in 0..PATIENCE {
        let revoked_before = REVOKED.load(Ordering::Acquire) != 0;
        match invoke() {
            Ok(()) | Err(ErrorCode::WouldBlock) if failed_once => return 1,
            Ok(()) | Err(ErrorCode::WouldBlock) if revoked_before => return 2,
            Ok(()) | Err(ErrorCode::WouldBlock) => {
                COUNTS[index].fetch_add(1, Ordering::Release);
            }
            Err(ErrorCode::InvalidCapability) => {
                failed_once = true;
                after_failure += 1;
                if after_failure > 100 {
                    return 0;
                }
            }
            Err(other) => {
                println!("smp: worker {index}: {other:?}");
                return 3;
            }
        }
    }
    4
}

/// 3. A frame unmapped on CPU 0 while a reader on another CPU loads from
///    it: once `FrameUnmap` has returned, the reader's next load must
///    fault (at that page, a translation fault), never reach the memory.
///    To show a stale translation, the frame is then deleted and the same
///    memory (the frame's two-page Untyped makes it the same) retyped and
///    mapped elsewhere with a new value: a reader that still reaches it
///    sees 0 or that value, where it must see only the old value or
///    fault. Sixteen rounds, the fault answered "retry" after the page is
///    mapped again.
fn unmap() -> i32 {
    let made = retype(UNTYPED, CapType::Endpoint, 0, ENDPOINT.0, 1)
        .and_then(|()| {
            cnode::mint(
                CNODE,
                ENDPOINT.0,
                FAULTS_BADGED.0,
                Rights::WRITE,
                Some(0x3ead),
            )
        })
        .and_then(|()| retype(UNTYPED, CapType::Untyped, 13, SMALL_UNTYPED, 1));
    if made.is_err() {
        return 5;
    }
    let reader_cpu = other_cpu(0);
    for round in 0..UNMAP_ROUNDS {
        let check = 20 + 10 * round as i32;
        expect!(
            check,
            retype(SMALL_UNTYPED, CapType::Frame, 0, PAGE_FRAME.0 .0, 1),
            Ok(())
        );
        let Ok(page) = PAGE_FRAME.map_view(OWN_VSPACE, READ_PAGE, MapRights::ReadWrite) else {
            return check + 1;
        };
        expect!(check + 2, page.write_u64(0, OLD), Ok(()));
        let reads_before = COUNTS[0].load(Ordering::Acquire);
        if round == 0 {
            match make_worker(0, ROLE_READER, reader_cpu, PRIORITY, Some(FAULTS_BADGED)) {
                Ok(tcb) => {
                    if tcb.resume().is_err() {
                        return check + 3;
                    }
                }
                Err(status) => return status,
            }
        } else {
            // The reader waits on its fault: load again.
            expect!(
                check + 3,
                ipc::reply(&supervision::fault_reply(FaultReply::Retry)),
                Ok(())
            );
        }
        // The reader is at it on its CPU (its TLB holds the page).
        if !wait_for(|| COUNTS[0].load(Ordering::Acquire) >= reads_before + 200) {
            return check + 4;
        }
        expect!(check + 5, PAGE_FRAME.unmap(), Ok(()));
        // The same memory comes back, zeroed, and is then written.
        expect!(check + 6, cnode::delete(CNODE, PAGE_FRAME.0 .0), Ok(()));
        expect!(
            check + 7,
            retype(SMALL_UNTYPED, CapType::Frame, 0, PAGE_FRAME.0 .0, 1),
            Ok(())
        );
        let Ok(after) = PAGE_FRAME.map_view(OWN_VSPACE, AFTER_PAGE, MapRights::ReadWrite) else {
            return check + 8;
        };
        expect!(check + 8, after.write_u64(0, NEW), Ok(()));
        // The reader faults at the page it read.
        let fault = match ipc::recv(ENDPOINT) {
            Ok(received) if received.badge == 0x3ead => supervision::fault_of(&received.message),
            _ => None,
        };
        let Some(fault) = fault else {
            return check + 9;
        };
        // A data abort from EL0 (0x24), translation fault (DFSC 0b0001xx).
        let translation = fault.esr & 0x3c == 0x04;
        if fault.class != 0x24 || fault.far != READ_PAGE || !translation {
            println!("smp: the reader's fault: {fault:x?}");
            return check + 9;
        }
        let stale = STALE_READS.load(Ordering::Acquire);
        if stale != 0 {
            println!(
                "smp: round {round}: the reader read {:#x} through the unmapped page ({stale} stale reads)",
                STALE_VALUE.load(Ordering::Acquire)
            );
            return check + 9;
        }
        // The next round's frame comes from the same two pages.
        expect!(check + 9, PAGE_FRAME.unmap(), Ok(()));
        expect!(check + 9, cnode::delete(CNODE, PAGE_FRAME.0 .0), Ok(()));
    }
    // The reader stops at its fault.
    expect!(
        300,
        ipc::reply(&supervision::fault_reply(FaultReply::Stop)),
        Ok(())
    );
    println!(
        "smp: {UNMAP_ROUNDS} unmaps while CPU {reader_cpu} read the page ({} reads): each faulted at once, no stale read",
        COUNTS[0].load(Ordering::Acquire)
    );
    0
}

/// The reader: loads the page forever (its fault handler stops it).
fn reader() -> i32 {
    loop {
        let value = sdk::probe::read_u64(READ_PAGE);
        if value == OLD {
            COUNTS[0].fetch_add(1, Ordering::Release);
        } else {
            STALE_VALUE.store(value, Ordering::Release);
            STALE_READS.fetch_add(1, Ordering::Release);
        }
    }
}

/// 4. Threads moved between CPUs in every state: blocked in `Recv`
///    (woken by a send, it runs on its new CPU with the message intact),
///    blocked in `Call` waiting for its reply (the same), ready but not
///    running (it first runs on its new CPU), running on another CPU
///    (it goes on there, through every CPU and CPU 0), and the case
///    thread itself.
fn migrate(cpus: u64) -> i32 {
    let made = retype(UNTYPED, CapType::Endpoint, 0, ENDPOINT.0, 1)
        .and_then(|()| retype(UNTYPED, CapType::Endpoint, 0, SECOND_ENDPOINT.0, 1));
    if made.is_err() {
        return 5;
    }
    let next = |cpu: u64| (cpu + 1) % cpus;
    // Blocked in Recv on CPU 1, moved to the next.
    let first = other_cpu(0);
    let receiver = match start_worker(0, ROLE_BLOCKED, first) {
        Ok(tcb) => tcb,
        Err(check) => return check,
    };
    if !wait_for(|| blocked(receiver)) {
        return 6;
    }
    let second = next(first);
    TARGET_CPU[0].store(second, Ordering::Release);
    expect!(7, receiver.set_affinity(second).map(|_| ()), Ok(()));
    expect!(8, blocked(receiver), true);
    expect!(
        9,
        ipc::send(ENDPOINT, &Message::new(0x11, &[1, 2, 3, second])),
        Ok(())
    );
    // Then it calls, and waits for the reply while it is moved again.
    let call = match ipc::recv(SECOND_ENDPOINT) {
        Ok(received) => received.message,
        Err(_) => return 10,
    };
    expect!(11, (call.info.label(), call.words[0]), (0x22, second));
    let third = next(second);
    TARGET_CPU[0].store(third, Ordering::Release);
    expect!(12, blocked(receiver), true);
    expect!(13, receiver.set_affinity(third).map(|_| ()), Ok(()));
    expect!(
        14,
        ipc::reply(&Message::new(0x33, &[4, 5, 6, third])),
        Ok(())
    );

    // Ready, not yet run: less urgent than this thread on CPU 0, then moved.
    let ready = match make_worker(1, ROLE_READY, 0, PRIORITY - 10, None) {
        Ok(tcb) => tcb,
        Err(check) => return check,
    };
    let target = other_cpu(1);
    TARGET_CPU[1].store(target, Ordering::Release);
    expect!(15, ready.resume(), Ok(()));
    expect!(
        16,
        sdk::debug::thread_stats(ready.0).map(|s| s.run_state),
        Ok(abi::debug::RUNS)
    );
    expect!(17, SEEN_CPU[1].load(Ordering::Acquire), u64::MAX);
    expect!(18, ready.set_affinity(target).map(|_| ()), Ok(()));

    // Running on another CPU, moved while it runs, through every CPU.
    let spinner_cpu = other_cpu(2);
    TARGET_CPU[2].store(spinner_cpu, Ordering::Release);
    let spinner = match start_worker(2, ROLE_SPINNER, spinner_cpu) {
        Ok(tcb) => tcb,
        Err(check) => return check,
    };
    if !wait_for(|| SEEN_CPU[2].load(Ordering::Acquire) == spinner_cpu) {
        return 19;
    }
    let mut cpu = spinner_cpu;
    for step in 0..cpus {
        cpu = next(cpu);
        TARGET_CPU[2].store(cpu, Ordering::Release);
        expect!(
            20 + step as i32,
            spinner.set_affinity(cpu).map(|_| ()),
            Ok(())
        );
        if !wait_for(|| SEEN_CPU[2].load(Ordering::Acquire) == cpu) {
            println!("smp: the spinner did not go on on CPU {cpu}");
            return 30 + step as i32;
        }
    }
    STOP.store(1, Ordering::Release);
    let status = join(3);
    if status != 0 {
        return status;
    }
    // The case thread moves itself, and back.
    for cpu in [other_cpu(0), 0] {
        expect!(40, OWN_TCB.set_affinity(cpu).map(|_| ()), Ok(()));
        expect!(41, this_cpu(), cpu);
    }
    0
}

/// Whether the worker of `tcb` waits.
fn blocked(tcb: Tcb) -> bool {
    sdk::debug::thread_stats(tcb.0).is_ok_and(|s| s.run_state == abi::debug::WAITS)
}

/// Worker 0 of the migrations.
fn blocked_worker() -> i32 {
    let start = TARGET_CPU[0].load(Ordering::Acquire);
    if start != u64::MAX || this_cpu() != other_cpu(0) {
        return 1;
    }
    let received = match ipc::recv(ENDPOINT) {
        Ok(received) => received.message,
        Err(_) => return 2,
    };
    let moved_to = TARGET_CPU[0].load(Ordering::Acquire);
    if this_cpu() != moved_to {
        println!("smp: woken on CPU {}, moved to {moved_to}", this_cpu());
        return 3;
    }
    if received.info.label() != 0x11 || received.words[..4] != [1, 2, 3, moved_to] {
        return 4;
    }
    let reply = match ipc::call(SECOND_ENDPOINT, &Message::new(0x22, &[moved_to])) {
        Ok(reply) => reply,
        Err(_) => return 5,
    };
    let moved_to = TARGET_CPU[0].load(Ordering::Acquire);
    if this_cpu() != moved_to {
        println!("smp: replied to on CPU {}, moved to {moved_to}", this_cpu());
        return 6;
    }
    if reply.info.label() != 0x33 || reply.words[..4] != [4, 5, 6, moved_to] {
        return 7;
    }
    0
}

/// Worker 1 of the migrations: its first instruction runs on its new CPU.
fn ready_worker() -> i32 {
    let cpu = this_cpu();
    SEEN_CPU[1].store(cpu, Ordering::Release);
    if cpu != TARGET_CPU[1].load(Ordering::Acquire) {
        println!("smp: the ready thread first ran on CPU {cpu}");
        return 1;
    }
    0
}

/// Worker 2 of the migrations: spins, saying where it runs; every CPU it
/// finds itself on is the one it was last moved to.
fn spinner() -> i32 {
    let mut last = u64::MAX;
    for _ in 0..PATIENCE {
        if STOP.load(Ordering::Acquire) != 0 {
            return 0;
        }
        let cpu = this_cpu();
        if cpu != last {
            if cpu != TARGET_CPU[2].load(Ordering::Acquire) {
                println!("smp: the spinner runs on CPU {cpu}, not where it was moved");
                return 1;
            }
            last = cpu;
            SEEN_CPU[2].store(cpu, Ordering::Release);
        }
        COUNTS[2].fetch_add(1, Ordering::Relaxed);
    }
    2
}

/// 5. TCB invocations on threads other CPUs run: registers read while it
///    spins (each read a coherent PC in the program and SP in its
///    stack), its PC written while it spins (it goes on there, on its
///    CPU); a second one suspended while it spins (it stops: its counter
///    and its registers stay as they are), `x0` and PC written, resumed
///    (it runs the new PC with the new `x0`, on its CPU); a third,
///    looping on a syscall, suspended and resumed 100 times (every call
///    returns its result).
fn remote_tcb() -> i32 {
    if retype(UNTYPED, CapType::Notification, 0, NOTIFICATION.0, 1).is_err() {
        return 5;
    }
    let cpus = [other_cpu(0), other_cpu(1), other_cpu(2)];
    for (index, role) in [ROLE_SPINNER, ROLE_SPINNER, ROLE_POLL_LOOP]
        .iter()
        .enumerate()
    {
        TARGET_CPU[index].store(cpus[index], Ordering::Release);
        if let Err(check) = start_worker(index as u64, *role, cpus[index]) {
            return check;
        }
    }
    let running = |index: usize| {
        let before = COUNTS[index].load(Ordering::Acquire);
        wait_for(|| COUNTS[index].load(Ordering::Acquire) > before + 100)
    };
    if !(0..3).all(running) {
        return 6;
    }
    // Reads while it runs.
    let (low, top) = worker_stack(0);
    for _ in 0..100 {
        let pc = worker(0).read_register(Register::Pc);
        let sp = worker(0).read_register(Register::Sp);
        match (pc, sp) {
            (Ok(pc), Ok(sp))
                if (PROGRAM_START..PROGRAM_END).contains(&pc) && (low..=top).contains(&sp) => {}
            other => {
                println!("smp: read from a running thread: {other:x?}");
                return 7;
            }
        }
    }
    if !running(0) {
        return 8;
    }
    // Its PC written while it runs: it goes on there.
    let landing = landing_running as *const () as usize as u64;
    expect!(
        9,
        worker(0).write_register(Register::Pc, landing),
        Ok(false)
    );

    // Suspended while it runs: it stops, and stays as it was.
    expect!(10, worker(1).suspend(), Ok(()));
    let frozen = COUNTS[1].load(Ordering::Acquire);
    let (pc, sp) = (
        worker(1).read_register(Register::Pc),
        worker(1).read_register(Register::Sp),
    );
    let (low, top) = worker_stack(1);
    match (pc, sp) {
        (Ok(pc), Ok(sp))
            if (PROGRAM_START..PROGRAM_END).contains(&pc) && (low..=top).contains(&sp) => {}
        other => {
            println!("smp: a suspended thread's registers: {other:x?}");
            return 11;
        }
    }
    for _ in 0..1000 {
        let _ = sdk::syscall::yield_now();
    }
    expect!(12, COUNTS[1].load(Ordering::Acquire), frozen);
    expect!(13, worker(1).read_register(Register::Pc), pc);
    expect!(14, worker(1).read_register(Register::Sp), sp);
    let landing = landing_suspended as *const () as usize as u64;
    expect!(
        15,
        worker(1).write_register(Register::X(0), MAGIC),
        Ok(false)
    );
    expect!(
        16,
        worker(1).write_register(Register::Pc, landing),
        Ok(false)
    );
    expect!(17, worker(1).read_register(Register::Pc), Ok(landing));
    expect!(18, worker(1).read_register(Register::X(0)), Ok(MAGIC));
    expect!(19, worker(1).resume(), Ok(()));

    // A thread in a loop of syscalls, suspended and resumed under it.
    for round in 0..100 {
        let before = COUNTS[2].load(Ordering::Acquire);
        expect!(20, worker(2).suspend(), Ok(()));
        expect!(21, worker(2).resume(), Ok(()));
        if !wait_for(|| COUNTS[2].load(Ordering::Acquire) > before + 2) {
            println!("smp: the syscall loop did not go on after round {round}");
            return 22;
        }
    }
    STOP.store(1, Ordering::Release);
    join(3)
}

/// Where worker 0 of the TCB scenario goes on: on its CPU.
fn landing_running() -> ! {
    let status = if this_cpu() == TARGET_CPU[0].load(Ordering::Acquire) {
        0
    } else {
        50
    };
    finish(0, status);
    sdk::syscall::exit(status)
}

/// Where worker 1 of the TCB scenario is resumed: on its CPU, with the
/// `x0` written.
extern "C" fn landing_suspended(x0: u64) -> ! {
    let status = if x0 != MAGIC {
        51
    } else if this_cpu() != TARGET_CPU[1].load(Ordering::Acquire) {
        52
    } else {
        0
    };
    finish(1, status);
    sdk::syscall::exit(status)
}

/// A worker's loop of `Poll`s (each must return 0: nobody signals).
fn poll_loop(index: usize) -> i32 {
    for _ in 0..PATIENCE {
        if STOP.load(Ordering::Acquire) != 0 {
            return 0;
        }
        match ipc::poll(NOTIFICATION) {
            Ok(0) => {}
            other => {
                println!("smp: poll returned {other:?}");
                return 1;
            }
        }
        if this_cpu() != TARGET_CPU[index].load(Ordering::Acquire) {
            return 2;
        }
        COUNTS[index].fetch_add(1, Ordering::Release);
    }
    3
}

/// A TCB-scenario spinner: counts, checks its CPU.
fn counting_spinner(index: usize) -> i32 {
    for _ in 0..PATIENCE {
        if STOP.load(Ordering::Acquire) != 0 {
            // Its PC should have been moved before this.
            return 4;
        }
        if this_cpu() != TARGET_CPU[index].load(Ordering::Acquire) {
            return 5;
        }
        COUNTS[index].fetch_add(1, Ordering::Release);
    }
    6
}

/// Leaves worker `index`'s result and tells the case thread.
fn finish(index: usize, status: i32) {
    if let Some(result) = RESULTS.get(index) {
        result.store(status, Ordering::Release);
    }
    FINISHED.fetch_add(1, Ordering::AcqRel);
    let _ = ipc::signal(DONE_SIGNAL);
}

/// A worker: its role in the low byte of `parameter`, its index above.
pub fn worker_main(parameter: u64) -> i32 {
    let role = parameter & 0xff;
    let index = ((parameter >> 8) as usize).min(MAX_WORKERS - 1);
    let status = match role {
        ROLE_PING => ping(if CPUS.load(Ordering::Relaxed) >= 3 {
            1
        } else {
            0
        }),
        ROLE_PONG => pong(if CPUS.load(Ordering::Relaxed) >= 3 {
            2
        } else {
            1
        }),
        ROLE_SIGNAL_LOOP => {
            let slot = DERIVED_NOTIFICATION[index / 2 % 2];
            invoke_until_revoked(index, || ipc::signal(slot))
        }
        ROLE_SEND_LOOP => invoke_until_revoked(index, || {
            ipc::nb_send(DERIVED_ENDPOINT, &Message::new(0, &[index as u64]))
        }),
        ROLE_READER => reader(),
        ROLE_BLOCKED => blocked_worker(),
        ROLE_READY => ready_worker(),
        ROLE_SPINNER if index == 2 => spinner(),
        ROLE_SPINNER => counting_spinner(index),
        ROLE_POLL_LOOP => poll_loop(index),
        _ => 99,
    };
    finish(index, status);
    status
}
