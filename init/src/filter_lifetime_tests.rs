//! A filter's memory and the threads it confines (`FilterOwner`,
//! `FilterChild`): a filter is paid for by its Untyped like any object,
//! and nothing lifts it. Deleting its last capability pins it: its rules
//! stay in force and its memory taken until the last thread it confines
//! has ended. Revoking its Untyped takes the memory back, so the threads
//! it confines end (`FILTER_DESTROYED_STATUS`): fail closed.
//!
//! The owner carves a 16 KiB Untyped that holds exactly one filter,
//! attaches that filter to two children (threads of this program in its
//! own space, sharing its CNode), checks they are confined, deletes the
//! filter's capability (both still run, the memory stays taken), ends
//! the children one by one (the memory comes back with the last), then
//! confines a third child with a new filter and revokes the Untyped (the
//! child ends, the memory is back, also when the same revoke destroys
//! another object made from it), and last shows that a revoke through a
//! copy of the Untyped without the write right ends nobody. Returns 0
//! when every check passed, else the number of the first failed one.

use crate::programs::{BootProgram, CNODE_SLOT};
use abi::cap::{CapType, Rights};
use abi::tcb::Register;
use abi::vspace::FRAME_MAP_START;
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr};
use sdk::policy::{Action, FilterBuilder, RuleBuilder};
use sdk::syscall::{cnode, retype};
use sdk::tcb::{FilterCap, Tcb};
use sdk::thread::{bind_to_own_space, OwnThread};
use sdk::vspace::VSpace;

/// The owner's CNode (shared with its children), the case's Untyped, its
/// own VSpace, the children's "confined" notification (they signal it,
/// badged, once they found `Yield` refused) and the one they wait on.
const CNODE: u64 = CNODE_SLOT;
const CASE_UNTYPED: u64 = 2;
const OWN_SPACE: VSpace = VSpace(Cptr(3));
const CONFINED: Cptr = Cptr(4);
const IDLE: Cptr = Cptr(5);
/// The small Untyped, the filter made from it, and a second attempt.
const SMALL: u64 = 6;
const FILTER: FilterCap = FilterCap(Cptr(7));
const SECOND_FILTER: u64 = 8;
/// The children's TCBs, and where their frames go (3 slots each).
const CHILDREN: [Tcb; 4] = [Tcb(Cptr(9)), Tcb(Cptr(10)), Tcb(Cptr(11)), Tcb(Cptr(12))];
const FIRST_FRAMES: u64 = 13;
/// The children's badged capabilities to `CONFINED`.
const CONFINED_BADGED: u64 = 25;
/// A copy of the small Untyped without the write right.
const READ_ONLY_SMALL: u64 = 29;
/// log2 of the small Untyped: 32 KiB, room for one filter's record
/// (18 496 bytes) and its own, not for two filters.
const SMALL_BITS: u64 = 15;
/// What the filter answers `Yield` with.
const REFUSED: ErrorCode = ErrorCode::Denied;
const PRIORITY: u64 = 100;

/// The owner (see the module docs).
pub fn owner() -> i32 {
    expect!(
        1,
        retype(CASE_UNTYPED, CapType::Untyped, SMALL_BITS, SMALL, 1),
        Ok(())
    );
    expect!(2, make_filter(), Ok(()));
    expect!(
        3,
        retype(SMALL, CapType::Filter, 0, SECOND_FILTER, 1),
        Err(ErrorCode::NotEnoughMemory)
    );
    for index in 0..2 {
        expect!(10 + index as i32, start_child(index), Ok(()));
    }
    expect!(20, confined(0b11), Ok(()));
    // The filter's last capability goes: it is pinned, not lifted. Both
    // threads still run under it and its memory stays taken.
    expect!(21, cnode::delete(CNODE, FILTER.0 .0), Ok(()));
    for (index, child) in CHILDREN[..2].iter().enumerate() {
        expect!(
            22 + index as i32,
            child.read_register(Register::Pc).map(|_| ()),
            Ok(())
        );
    }
    expect!(
        24,
        retype(SMALL, CapType::Filter, 0, SECOND_FILTER, 1),
        Err(ErrorCode::NotEnoughMemory)
    );
    // The first child ends: the filter still confines the second.
    expect!(25, cnode::delete(CNODE, CHILDREN[0].0 .0), Ok(()));
    expect!(
        26,
        retype(SMALL, CapType::Filter, 0, SECOND_FILTER, 1),
        Err(ErrorCode::NotEnoughMemory)
    );
    // The last one ends: the filter goes, its memory is back.
    expect!(27, cnode::delete(CNODE, CHILDREN[1].0 .0), Ok(()));
    expect!(30, make_filter(), Ok(()));
    // A third child under the new filter, which is pinned; an endpoint
    // from the same Untyped too. One revoke destroys the endpoint and
    // takes the filter's memory back: the child ends with it.
    expect!(31, start_child(2), Ok(()));
    expect!(32, confined(1 << 2), Ok(()));
    expect!(
        33,
        retype(SMALL, CapType::Endpoint, 0, SECOND_FILTER, 1),
        Ok(())
    );
    expect!(34, cnode::delete(CNODE, FILTER.0 .0), Ok(()));
    expect!(35, cnode::revoke(CNODE, SMALL), Ok(()));
    // It ended (its TCB, from another Untyped, is kept) and lost the
    // filter: a restart would lift the restriction, so it is refused.
    expect!(36, CHILDREN[2].resume(), Err(ErrorCode::InvalidArgument));
    expect!(47, restart(CHILDREN[2]), Err(ErrorCode::Denied));
    expect!(37, make_filter(), Ok(()));
    // A fourth: a revoke through a copy of the Untyped without the write
    // right (which could not retype from it) ends nobody; the original's
    // does.
    expect!(38, start_child(3), Ok(()));
    expect!(39, confined(1 << 3), Ok(()));
    expect!(
        40,
        cnode::mint(CNODE, SMALL, READ_ONLY_SMALL, Rights::READ, None),
        Ok(())
    );
    expect!(41, cnode::delete(CNODE, FILTER.0 .0), Ok(()));
    expect!(42, cnode::revoke(CNODE, READ_ONLY_SMALL), Ok(()));
    expect!(
        43,
        CHILDREN[3].read_register(Register::Pc).map(|_| ()),
        Ok(())
    );
    expect!(44, cnode::revoke(CNODE, SMALL), Ok(()));
    expect!(45, CHILDREN[3].resume(), Err(ErrorCode::InvalidArgument));
    expect!(48, restart(CHILDREN[3]), Err(ErrorCode::Denied));
    expect!(46, make_filter(), Ok(()));
    0
}

/// Restarts the ended `child` where it started (refused for a thread that
/// lost its filter).
fn restart(child: Tcb) -> Result<(), ErrorCode> {
    let pc = child.read_register(Register::Pc)?;
    let sp = child.read_register(Register::Sp)? & !0xf;
    sdk::supervision::restart(
        child,
        sdk::supervision::Restart {
            pc,
            sp,
            x0: 0,
            tpidr: 0,
        },
    )
}

/// A filter refusing `Yield`, retyped from the small Untyped and loaded.
fn make_filter() -> Result<(), ErrorCode> {
    retype(SMALL, CapType::Filter, 0, FILTER.0 .0, 1)?;
    let mut buffer = [0u8; 64];
    let rules = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Yield).action(Action::errno(REFUSED)))
        .encode(&mut buffer)
        .map_err(|_| ErrorCode::InvalidArgument)?;
    FILTER.load(rules)
}

/// Child `index`: a TCB, a thread of this program in this space sharing
/// this CNode, confined by the filter, with its badged capability to
/// `CONFINED` (badge `1 << index`), resumed.
fn start_child(index: usize) -> Result<(), ErrorCode> {
    let child = CHILDREN[index];
    retype(CASE_UNTYPED, CapType::Tcb, 0, child.0 .0, 1)?;
    child.configure(Cptr(CNODE), PRIORITY)?;
    let badged = CONFINED_BADGED + index as u64;
    cnode::mint(
        CNODE,
        CONFINED.0,
        badged,
        abi::cap::Rights::WRITE,
        Some(1 << index),
    )?;
    let thread = OwnThread {
        tcb: child,
        vspace: OWN_SPACE,
        untyped: Cptr(CASE_UNTYPED),
        first_slot: FIRST_FRAMES + 3 * index as u64,
        stack_pages: 2,
        area: FRAME_MAP_START + 0x10_0000 * (index as u64 + 1),
        fault_endpoint: None,
        name: None,
    };
    bind_to_own_space(&thread, BootProgram::FilterChild.selector(badged))?;
    child.attach_filter(FILTER, None)?;
    child.resume()
}

/// Waits until the children of `mask` have each said they are confined.
fn confined(mask: u64) -> Result<(), ErrorCode> {
    let mut seen = 0;
    while seen & mask != mask {
        seen |= ipc::wait(CONFINED)?;
    }
    Ok(())
}

/// A child: finds `Yield` refused, says so through its badged capability
/// in slot `report`, and waits for good.
pub fn child(report: u64) -> i32 {
    if sdk::syscall::yield_now() != Err(REFUSED) {
        sdk::println!("the child's Yield was not refused: it is not confined");
        return 1;
    }
    if ipc::signal(Cptr(report)).is_err() {
        return 2;
    }
    let _ = ipc::wait(IDLE);
    3
}
