//! Restartable sequences driven instruction by instruction, and refused
//! (issue 21; the case threads and workers of `rseq_tests.rs`).
//!
//! Stepping: the case thread traces a worker that marks each round with a
//! `Null` and then makes one add. A single-step report is not an event,
//! so the first round steps through the whole section with no abort and
//! records its path. Each later round stops the worker before one
//! instruction of that path and makes an event there: the worker is moved
//! to another CPU while it waits at the step stop (then stepped once
//! more: inside the section its next PC is after the abort handler's
//! first instruction, outside it is the path's next one), or suspended
//! and resumed (which ends the step stop; the add then reports whether it
//! aborted). The count stays exact.
//!
//! Refusals: `SetRseq`'s errors, and four workers the kernel must end
//! (not itself) with `KILLED_BY_RSEQ`: a wrong signature, a descriptor
//! address that is not mapped, a descriptor whose abort address lies in
//! its own section, an area unmapped after registration.

use crate::rseq_tests::{
    join, make_worker, AREAS, BADGE, COUNTER, DONE, DONE_SIGNAL, ENDPOINT, ENDPOINT_BADGED,
    OWN_AREA, OWN_VSPACE, PRIORITY, ROLE_BAD_ABORT, ROLE_BAD_AREA, ROLE_BAD_DESCRIPTOR,
    ROLE_BAD_SIGNATURE, ROLE_STEPPED, UNTYPED,
};
use abi::cap::CapType;
use abi::rseq::{REGISTER, UNREGISTER};
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use core::sync::atomic::{AtomicU64, Ordering};
use sdk::ipc::{self, Cptr, Message};
use sdk::println;
use sdk::rseq::{self, Descriptor, DescriptorCell, SIGNATURE};
use sdk::supervision::{self, KillReason, ThreadEnd};
use sdk::syscall::{raw_syscall, retype, this_cpu};
use sdk::trace::{self, Stop, StopKind};
use sdk::vspace::Frame;

/// `x2` of the `Null` that starts a round (its `x3` is the round).
const STEP_MARK: u64 = 0x57e9_05e9;
/// Set by the tracer at the last round's mark: the worker stops after
/// that round's add.
static STEP_STOP: AtomicU64 = AtomicU64::new(0);
/// Aborts of the worker's last add.
static ROUND_ABORTS: AtomicU64 = AtomicU64::new(u64::MAX);
/// Instructions of the section's routine the path may have.
const MAX_PATH: usize = 32;

/// A 32-aligned address nothing is mapped at.
const UNMAPPED: u64 = FRAME_MAP_START + 0x1000_0000;
/// Where the refusal scenario maps the page its area-unmapped worker
/// registers an area in.
const AREA_PAGE: u64 = FRAME_MAP_START + 0x10_0000;
/// Init's program is linked at 4 MiB; its text is well within 16 MiB.
const PROGRAM_START: u64 = 0x40_0000;
const PROGRAM_SPAN: u64 = 0x100_0000;
/// The descriptor of the abort-inside worker.
static BAD_DESCRIPTOR: DescriptorCell = DescriptorCell::new();
/// Set by each refused worker once its bad state is in place.
static READY: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

/// The next stop after answering the last one with `answer`.
fn answer(message: &Message) -> Option<Stop> {
    Stop::decode(&ipc::reply_recv(ENDPOINT, message).ok()?)
}

/// Checks that `$stop` is a stop of kind `$kind` from the worker.
macro_rules! stop {
    ($check:expr, $stop:expr, $kind:expr) => {{
        let Some(stop) = $stop else {
            println!("rseq: check {} failed: no stop", $check);
            return $check;
        };
        expect!($check, (stop.kind, stop.badge), ($kind, BADGE));
        stop
    }};
}

/// How a round makes its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// Moved to another CPU while it waits at the step stop.
    Migrate,
    /// Suspended and resumed at the step stop.
    Suspend,
}

/// 3. The tracer (this thread, CPU 0) and the stepped worker (CPU 1, or
///    0 on one CPU).
pub(crate) fn step(cpus: u64) -> i32 {
    let section = rseq::critical_section();
    let (first, second) = match cpus {
        1 => (0, 0),
        2 => (1, 0),
        _ => (1, 2),
    };
    let tcb = match make_worker(0, ROLE_STEPPED, first, PRIORITY, false) {
        Ok(tcb) => tcb,
        Err(check) => return check,
    };
    expect!(5, tcb.attach_tracer(Cptr(ENDPOINT_BADGED)), Ok(()));
    expect!(6, tcb.resume(), Ok(()));
    let Ok(mut received) = ipc::recv(ENDPOINT) else {
        return 7;
    };
    let mut path: heapless::Vec<u64, MAX_PATH> = heapless::Vec::new();
    let mut plan: heapless::Vec<(Event, usize), { 2 * MAX_PATH }> = heapless::Vec::new();
    let mut after = 0;
    let mut cpu = first;
    let mut expected_aborts = None;
    let mut inside_count = 0;
    let mut round: u64 = 0;
    loop {
        // The worker's other syscalls (its registration) stop too.
        let entry = match next_mark(received) {
            Ok(entry) => entry,
            Err(check) => return check,
        };
        expect!(9, entry.regs[3], round);
        if let Some(expected) = expected_aborts {
            let aborts = ROUND_ABORTS.load(Ordering::Acquire);
            if aborts != expected {
                println!(
                    "rseq: round {}: the add aborted {aborts} times, not {expected}",
                    round - 1
                );
                return 10;
            }
        }
        if round > 0 && round as usize > plan.len() {
            STEP_STOP.store(1, Ordering::Release);
            expect!(11, ipc::reply(&trace::detach()), Ok(()));
            break;
        }
        // Into the routine, one instruction at a time.
        stop!(12, answer(&trace::resume(false)), StopKind::Exit);
        let mut step = stop!(13, answer(&trace::resume(true)), StopKind::Step);
        let mut steps = 0;
        while step.pc != section.entry {
            step = stop!(14, answer(&trace::resume(true)), StopKind::Step);
            steps += 1;
            if steps > 200 {
                println!("rseq: the worker did not reach the section's routine");
                return 14;
            }
        }
        if round == 0 {
            // Through the routine with no event: nothing aborts.
            while (section.entry..section.end).contains(&step.pc) {
                if path.push(step.pc).is_err() {
                    return 15;
                }
                step = stop!(16, answer(&trace::resume(true)), StopKind::Step);
            }
            after = step.pc;
            let status = check_path(&path, &section);
            if status != 0 {
                return status;
            }
            let events: &[Event] = if cpus > 1 {
                &[Event::Migrate, Event::Suspend]
            } else {
                &[Event::Suspend]
            };
            for event in events {
                for k in 0..path.len() {
                    let _ = plan.push((*event, k));
                }
            }
            expected_aborts = Some(0);
            let Ok(next) = ipc::reply_recv(ENDPOINT, &trace::resume(false)) else {
                return 17;
            };
            received = next;
            round += 1;
            continue;
        }
        let (event, k) = plan[round as usize - 1];
        for pc in path.iter().take(k + 1).skip(1) {
            step = stop!(18, answer(&trace::resume(true)), StopKind::Step);
            expect!(19, step.pc, *pc);
        }
        // Stopped before path[k].
        let inside = (section.start..section.post_commit).contains(&path[k]);
        inside_count += u64::from(inside && event == Event::Suspend);
        match event {
            Event::Migrate => {
                cpu = if cpu == first { second } else { first };
                expect!(20, tcb.set_affinity(cpu).map(|_| ()), Ok(()));
                step = stop!(21, answer(&trace::resume(true)), StopKind::Step);
                let want = if inside {
                    // The handler's first instruction ran (it counts).
                    section.abort + 4
                } else {
                    path.get(k + 1).copied().unwrap_or(after)
                };
                if step.pc != want {
                    println!(
                        "rseq: an event at {:#x} (inside: {inside}): next PC {:#x}, not {want:#x}",
                        path[k], step.pc
                    );
                    return 22;
                }
                // The kernel wrote the new CPU on the way out.
                expect!(23, AREAS[0].cpu_id(), Some(cpu as u32));
                let Ok(next) = ipc::reply_recv(ENDPOINT, &trace::resume(false)) else {
                    return 24;
                };
                received = next;
            }
            Event::Suspend => {
                expect!(25, tcb.suspend(), Ok(()));
                expect!(26, tcb.resume(), Ok(()));
                let Ok(next) = ipc::recv(ENDPOINT) else {
                    return 27;
                };
                received = next;
            }
        }
        expected_aborts = Some(u64::from(inside));
        round += 1;
    }
    let status = join(1);
    if status != 0 {
        return status;
    }
    // Rounds 0..=round each added once.
    expect!(28, COUNTER.sum(), round + 1);
    println!(
        "rseq: stepped through the section's routine ({} instructions) with no abort; an event before each of them ({}): the {inside_count} inside the section sent it to its abort handler, the others did not; {round} rounds, the count exact",
        path.len(),
        if cpus > 1 {
            "a move to another CPU, then a suspension"
        } else {
            "a suspension"
        }
    );
    0
}

/// The first marked `Null`'s entry stop from `received` on, answering
/// the stops of any other syscall with "continue".
fn next_mark(mut received: ipc::Received) -> Result<Stop, i32> {
    for _ in 0..8 {
        let Some(stop) = Stop::decode(&received) else {
            return Err(8);
        };
        if stop.kind == StopKind::Entry
            && stop.number == Syscall::Null.number()
            && stop.regs[2] == STEP_MARK
        {
            return Ok(stop);
        }
        received = ipc::reply_recv(ENDPOINT, &trace::resume(false)).map_err(|_| 8)?;
    }
    println!("rseq: no marked round from the stepped worker");
    Err(8)
}

/// The routine's path: straight from its entry, every instruction of the
/// section (start to the commit) on it, none twice.
fn check_path(path: &[u64], section: &rseq::CriticalSection) -> i32 {
    expect!(30, path.first().copied(), Some(section.entry));
    let contiguous = path.windows(2).all(|pair| pair[1] == pair[0] + 4);
    expect!(31, contiguous, true);
    let inside = path
        .iter()
        .filter(|pc| (section.start..section.post_commit).contains(*pc))
        .count() as u64;
    expect!(32, inside, (section.post_commit - section.start) / 4);
    expect!(33, path.contains(&section.post_commit), true);
    0
}

/// The stepped worker: a marked `Null`, then one add, each round.
pub(crate) fn stepped(index: usize) -> i32 {
    let area = &AREAS[index];
    expect!(1, rseq::register(area, SIGNATURE), Ok(()));
    for round in 0..1000 {
        if STEP_STOP.load(Ordering::Acquire) != 0 {
            expect!(2, rseq::unregister(area, SIGNATURE), Ok(()));
            return 0;
        }
        expect!(
            3,
            raw_syscall(Syscall::Null.number(), 0, STEP_MARK, round).into_result(),
            Ok(())
        );
        match COUNTER.add(area, 1) {
            Ok(aborts) => ROUND_ABORTS.store(aborts, Ordering::Release),
            Err(error) => {
                println!("rseq: an add was refused: {error:?}");
                return 4;
            }
        }
    }
    5
}

/// 4. `SetRseq`'s refusals on this thread's own area, then the four
///    workers the kernel must end.
pub(crate) fn refusals() -> i32 {
    let area = &OWN_AREA;
    let signature = u64::from(SIGNATURE);
    expect!(
        5,
        rseq::set_rseq_raw(area.address() + 8, signature, REGISTER),
        Err(ErrorCode::InvalidAddress)
    );
    expect!(
        6,
        rseq::set_rseq_raw(UNMAPPED, signature, REGISTER),
        Err(ErrorCode::InvalidAddress)
    );
    expect!(
        7,
        rseq::set_rseq_raw(area.address(), signature, 2),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(8, rseq::register(area, SIGNATURE), Ok(()));
    let cpu = this_cpu() as u32;
    expect!(9, (area.cpu_id(), area.cpu_id_start()), (Some(cpu), cpu));
    expect!(
        10,
        rseq::register(area, SIGNATURE),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        11,
        rseq::register(&AREAS[0], SIGNATURE),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        12,
        rseq::unregister(area, SIGNATURE ^ 1),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        13,
        rseq::unregister(&AREAS[0], SIGNATURE),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(14, area.cpu_id(), Some(cpu));
    expect!(15, rseq::unregister(area, SIGNATURE), Ok(()));
    expect!(16, area.cpu_id(), None);
    expect!(
        17,
        rseq::unregister(area, SIGNATURE),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(18, rseq::register(area, SIGNATURE), Ok(()));
    expect!(19, rseq::unregister(area, SIGNATURE), Ok(()));

    let frame = Frame(Cptr(crate::rseq_tests::AREA_FRAME));
    expect!(
        20,
        retype(UNTYPED, CapType::Frame, 0, frame.0 .0, 1),
        Ok(())
    );
    expect!(
        21,
        frame.map(OWN_VSPACE, AREA_PAGE, MapRights::ReadWrite),
        Ok(())
    );
    let roles = [
        ("a wrong signature", ROLE_BAD_SIGNATURE),
        ("an unmapped descriptor", ROLE_BAD_DESCRIPTOR),
        ("an abort address inside its section", ROLE_BAD_ABORT),
        ("its area unmapped", ROLE_BAD_AREA),
    ];
    for (index, (what, role)) in roles.iter().enumerate() {
        let status = refused_worker(index, *role, frame);
        if status != 0 {
            println!("rseq: the worker with {what} failed at {status}");
            return status;
        }
    }
    println!(
        "rseq: SetRseq refusals checked; a wrong signature, an unmapped descriptor, an abort address inside its section and an area unmapped after registration each ended their thread ({})",
        rseq::KILLED_BY_RSEQ
    );
    0
}

/// Starts refused worker `index` (as urgent as this thread, on CPU 0),
/// waits until its bad state is in place, makes events (a suspension and
/// a turn of the CPU each time) until it ends, and checks its end.
fn refused_worker(index: usize, role: u64, frame: Frame) -> i32 {
    let check = 40 + 10 * index as i32;
    let tcb = match make_worker(index as u64, role, 0, PRIORITY, true) {
        Ok(tcb) => tcb,
        Err(status) => return status,
    };
    expect!(check, tcb.resume(), Ok(()));
    while READY[index].load(Ordering::Acquire) == 0 {
        if ipc::wait(DONE).is_err() {
            return check + 1;
        }
    }
    if role == ROLE_BAD_AREA {
        expect!(check + 2, frame.unmap(), Ok(()));
    }
    for _ in 0..2000 {
        match ipc::nb_recv(ENDPOINT) {
            Ok(received) => {
                expect!(check + 4, received.badge, BADGE + index as u64);
                let end = supervision::end_of(&received.message);
                if end != Some(ThreadEnd::Killed(KillReason::Rseq)) {
                    println!("rseq: refused worker {index} ended: {end:?}");
                    return check + 5;
                }
                return 0;
            }
            Err(ErrorCode::WouldBlock) => {
                // Suspended, then its turn: an event. (The kernel may
                // end it while this thread is preempted, so the calls on
                // its TCB may find it ended: its end message says.)
                let _ = tcb.suspend();
                let _ = tcb.resume();
                let _ = sdk::syscall::yield_now();
            }
            Err(_) => return check + 6,
        }
    }
    println!("rseq: refused worker {index} was not ended");
    check + 7
}

/// A refused worker: puts its bad state in place, says so, then spins
/// until the kernel ends it. Returning at all is a failure.
pub(crate) fn refused(index: usize, role: u64) -> i32 {
    let area = &AREAS[index];
    let section = rseq::critical_section();
    let ready = || {
        READY[index].store(1, Ordering::Release);
        let _ = ipc::signal(DONE_SIGNAL);
    };
    match role {
        ROLE_BAD_SIGNATURE => {
            // The SDK's own section, whose abort address has the SDK's
            // signature before it, named in the area for good: the first
            // event finds the descriptor and ends the thread, wherever it
            // is. (Adding through the section instead left the descriptor
            // named only while an add ran, and a run once went through
            // 50 000 000 adds with every event between two.)
            expect!(1, rseq::register(area, SIGNATURE ^ 0x0101_0101), Ok(()));
            area.set_critical_section(section.descriptor);
            ready();
            sdk::probe::spin_ms(20_000);
            3
        }
        ROLE_BAD_DESCRIPTOR => {
            expect!(4, rseq::register(area, SIGNATURE), Ok(()));
            area.set_critical_section(UNMAPPED);
            ready();
            sdk::probe::spin_ms(20_000);
            5
        }
        ROLE_BAD_ABORT => {
            expect!(6, rseq::register(area, SIGNATURE), Ok(()));
            // The whole program text, so this thread is inside it wherever
            // the event finds it; the abort address has the signature
            // before it but lies inside.
            BAD_DESCRIPTOR.set(&Descriptor {
                version: 0,
                flags: 0,
                start: PROGRAM_START,
                post_commit_offset: PROGRAM_SPAN,
                abort: section.abort,
            });
            area.set_critical_section(BAD_DESCRIPTOR.address());
            ready();
            sdk::probe::spin_ms(20_000);
            7
        }
        ROLE_BAD_AREA => {
            expect!(
                8,
                rseq::set_rseq_raw(AREA_PAGE + 0x20, u64::from(SIGNATURE), REGISTER),
                Ok(())
            );
            ready();
            sdk::probe::spin_ms(20_000);
            // Not reached when the kernel is right; unregister anyway.
            let _ = rseq::set_rseq_raw(AREA_PAGE + 0x20, u64::from(SIGNATURE), UNREGISTER);
            9
        }
        _ => 10,
    }
}
