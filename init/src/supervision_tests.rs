//! A thread's end reaches its supervisor (`BootProgram::Supervisor`, case
//! 61): threads of this program in its own space, each with the
//! supervisor's fault endpoint (badged), end by exiting, by a Kill rule of
//! a filter and by a fault whose handler answers "stop"; each end comes as
//! an end message saying how. An ended thread is restarted and ends again;
//! deleting an ended TCB gives its memory back.

use crate::programs::{BootProgram, CNODE_SLOT};
use abi::cap::{CapType, Rights};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::supervision::{self, FaultReply, KillReason, Restart, ThreadEnd};
use sdk::syscall::{cnode, retype};
use sdk::tcb::{FilterCap, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::VSpace;

const CNODE: u64 = CNODE_SLOT;
const UNTYPED: u64 = 2;
const OWN_SPACE: VSpace = VSpace(Cptr(3));
const FAULTS: u64 = 4;
const FAULTS_BADGED: u64 = 5;
const FILTER: FilterCap = FilterCap(Cptr(6));
/// An Untyped just large enough for one TCB.
const SMALL: u64 = 7;
const EXITER: Tcb = Tcb(Cptr(8));
const KILLED: Tcb = Tcb(Cptr(9));
const FAULTER: Tcb = Tcb(Cptr(10));
const SPARE_TCB: u64 = 11;
/// Each child's frames: 3 slots from here.
const FIRST_FRAMES: u64 = 16;
const BADGE: u64 = 0x5e;
/// The children's priority: below the supervisor's (100), so that one
/// runs only while the supervisor waits. (At the same priority a timer
/// tick between two of its checks could let a restarted child run and
/// end, and a second restart meant to find it running would find it
/// ended: check 14 failed so on a loaded host.)
const PRIORITY: u64 = 99;

/// A child's parameter: how it ends (low byte), and its exit status.
const EXIT: u64 = 1;
const YIELD: u64 = 2;
const FAULT: u64 = 3;

/// The supervisor.
pub fn supervisor() -> i32 {
    expect!(1, retype(UNTYPED, CapType::Endpoint, 0, FAULTS, 1), Ok(()));
    expect!(
        2,
        cnode::mint(CNODE, FAULTS, FAULTS_BADGED, Rights::WRITE, Some(BADGE)),
        Ok(())
    );
    // The smallest Untyped one TCB fits in, and no second one.
    let mut bits = 12;
    loop {
        expect!(3, retype(UNTYPED, CapType::Untyped, bits, SMALL, 1), Ok(()));
        if retype(SMALL, CapType::Tcb, 0, EXITER.0 .0, 1).is_ok() {
            break;
        }
        expect!(4, cnode::delete(CNODE, SMALL), Ok(()));
        bits += 1;
        expect!(5, bits < 20, true);
    }
    expect!(
        6,
        retype(SMALL, CapType::Tcb, 0, SPARE_TCB, 1),
        Err(ErrorCode::NotEnoughMemory)
    );

    // An exit, with its status.
    let exiter = match start(EXITER, 0, EXIT | 5 << 8, false) {
        Ok(start) => start,
        Err(error) => {
            sdk::println!("starting the exiter failed: {error:?}");
            return 7;
        }
    };
    expect!(10, next_end(), Ok(ThreadEnd::Exited { status: 5 }));
    // Kept, ended: a resume does not run it, and its memory stays taken.
    expect!(11, EXITER.resume(), Err(ErrorCode::InvalidArgument));
    expect!(
        12,
        retype(SMALL, CapType::Tcb, 0, SPARE_TCB, 1),
        Err(ErrorCode::NotEnoughMemory)
    );
    // Restarted with new registers: it runs again and ends again.
    expect!(
        13,
        supervision::restart(EXITER, exiter(EXIT | 6 << 8)),
        Ok(())
    );
    expect!(
        14,
        supervision::restart(EXITER, exiter(EXIT)),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(15, next_end(), Ok(ThreadEnd::Exited { status: 6 }));
    // Deleting the ended TCB gives its memory back: a new TCB fits.
    expect!(16, cnode::delete(CNODE, EXITER.0 .0), Ok(()));
    expect!(17, retype(SMALL, CapType::Tcb, 0, SPARE_TCB, 1), Ok(()));
    expect!(18, cnode::delete(CNODE, SPARE_TCB), Ok(()));

    // A Kill rule (the filter's rule 1) ends the second.
    let mut buffer = [0u8; 64];
    let Ok(rules) = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::errno(ErrorCode::Denied)))
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::Kill))
        .encode(&mut buffer)
    else {
        return 20;
    };
    expect!(
        21,
        retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1),
        Ok(())
    );
    expect!(22, FILTER.load(rules), Ok(()));
    expect!(23, retype(UNTYPED, CapType::Tcb, 0, KILLED.0 .0, 1), Ok(()));
    if start(KILLED, 1, YIELD, true).is_err() {
        return 24;
    }
    expect!(
        25,
        next_end(),
        Ok(ThreadEnd::Killed(KillReason::Policy {
            filter: 0,
            rule: 1,
            syscall: Syscall::Yield.number(),
            by_server: false,
        }))
    );
    expect!(26, KILLED.resume(), Err(ErrorCode::InvalidArgument));
    expect!(27, cnode::delete(CNODE, KILLED.0 .0), Ok(()));

    // A fault its handler (this thread) answers "stop" ends the third.
    expect!(
        30,
        retype(UNTYPED, CapType::Tcb, 0, FAULTER.0 .0, 1),
        Ok(())
    );
    if start(FAULTER, 2, FAULT, false).is_err() {
        return 31;
    }
    let Ok(fault) = ipc::recv(Cptr(FAULTS)) else {
        return 32;
    };
    let Some(message) = supervision::fault_of(&fault.message) else {
        return 33;
    };
    expect!(34, fault.badge, BADGE);
    expect!(
        35,
        ipc::reply(&supervision::fault_reply(FaultReply::Stop)),
        Ok(())
    );
    expect!(
        36,
        next_end(),
        Ok(ThreadEnd::Faulted {
            class: 0x24,
            far: 0,
            esr: message.esr,
            pc: message.pc,
        })
    );
    expect!(37, cnode::delete(CNODE, FAULTER.0 .0), Ok(()));
    sdk::println!("supervisor: an exit (twice, restarted), a Kill rule and a stopped fault each came as an end message");
    0
}

/// Makes `tcb` a thread of this program in this space (frames from the
/// case's Untyped), sharing this CNode, with the badged fault endpoint,
/// confined by the filter if `confined`, and starts it with `parameter`.
/// Returns how to restart it from the beginning with another parameter.
fn start(
    tcb: Tcb,
    index: u64,
    parameter: u64,
    confined: bool,
) -> Result<impl Fn(u64) -> Restart, ErrorCode> {
    tcb.configure(Cptr(CNODE), PRIORITY)?;
    let thread = OwnThread {
        tcb,
        vspace: OWN_SPACE,
        untyped: Cptr(UNTYPED),
        first_slot: FIRST_FRAMES + 3 * index,
        stack_pages: 2,
        area: abi::vspace::FRAME_MAP_START + 0x10_0000 * (index + 1),
        fault_endpoint: Some(Cptr(FAULTS_BADGED)),
        name: None,
    };
    let layout = bind_to_own_space(&thread, BootProgram::Supervised.selector(parameter))?;
    if confined {
        tcb.attach_filter(FILTER, None)?;
    }
    tcb.resume()?;
    Ok(move |parameter| Restart {
        pc: sdk::entry_point(),
        sp: layout.stack_top,
        x0: BootProgram::Supervised.selector(parameter),
        tpidr: layout.buffer.address,
    })
}

/// The next end message on the fault endpoint (with the child's badge).
fn next_end() -> Result<ThreadEnd, ErrorCode> {
    let received = ipc::recv(Cptr(FAULTS))?;
    if received.badge != BADGE {
        return Err(ErrorCode::InvalidArgument);
    }
    supervision::end_of(&received.message).ok_or(ErrorCode::InvalidArgument)
}

/// A supervised thread: ends as its parameter says.
pub fn child(parameter: u64) -> i32 {
    match parameter & 0xff {
        EXIT => (parameter >> 8) as i32,
        YIELD => {
            let _ = sdk::syscall::yield_now();
            sdk::println!("not killed by the Kill rule");
            1
        }
        FAULT => {
            sdk::probe::write_u64(0);
            sdk::println!("the write to page 0 did not fault");
            2
        }
        _ => 3,
    }
}
