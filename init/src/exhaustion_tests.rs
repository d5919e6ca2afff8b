//! Exhaustion from a small Untyped (`Exhauster`, `Survivor`): every kind
//! of object is paid for by its creator's Untyped, so filling one's own
//! memory takes nothing from anyone else.
//!
//! The exhauster makes a 512 KiB Untyped of its own from the case's and,
//! kind by kind, retypes objects from it until it answers
//! `NotEnoughMemory` (more of each kind than the kernel's old fixed tables
//! held: 1024 objects, 4096 CNode slots, 32 threads and spaces, 16
//! filters), revokes it and does the same again: the same count (nothing
//! leaked, nothing counted twice). Then it fills it once more and, while
//! it is full, the survivor makes one object of every kind from the
//! case's Untyped. Each returns 0 when every check passed, else the
//! number of the first failed one.

use abi::cap::CapType;
use abi::ErrorCode;
use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::syscall::{cnode, retype};

/// Slots of both threads: their CNode, the case's Untyped (a copy each),
/// the exhauster's "go" notification to the survivor and the survivor's
/// "done" back, the exhauster's own Untyped, and where objects go.
const CNODE: u64 = 0;
const CASE_UNTYPED: u64 = 2;
const GO: Cptr = Cptr(3);
const DONE: Cptr = Cptr(4);
const OWN_UNTYPED: u64 = 5;
const FIRST_OBJECT: u64 = 16;
/// The CNode's slots (the case's radix, 14).
const SLOTS: u64 = 1 << 14;
/// log2 of the exhauster's Untyped: 512 KiB.
const OWN_BITS: u64 = 19;
/// Most objects one retype makes.
const BATCH: u64 = 64;

/// Each kind the exhauster fills its Untyped with: its size parameter,
/// and how many of it the kernel's old tables allowed at most (the slots
/// of a CNode counted for CNodes).
const KINDS: [(CapType, u64, u64); 9] = [
    (CapType::Endpoint, 0, 1024),
    (CapType::Notification, 0, 1024),
    (CapType::Reply, 0, 1024),
    (CapType::Tcb, 0, 32),
    (CapType::CNode, 4, 4096 / 16),
    (CapType::Filter, 0, 16),
    (CapType::VSpace, 1, 32),
    (CapType::Frame, 0, 0),
    (CapType::Untyped, 12, 0),
];

/// Retypes objects of `kind` from the exhauster's Untyped into
/// consecutive slots from `first` until it is full: `Ok(count)`, or the
/// first error that is not `NotEnoughMemory`.
fn fill_from(first: u64, kind: CapType, size: u64) -> Result<u64, ErrorCode> {
    let mut made = 0;
    let mut batch = BATCH;
    loop {
        let count = batch.min(SLOTS - first - made);
        if count == 0 {
            return Err(ErrorCode::InvalidArgument);
        }
        match retype(OWN_UNTYPED, kind, size, first + made, count) {
            Ok(()) => made += count,
            // Nothing is made: try fewer, down to one.
            Err(ErrorCode::NotEnoughMemory) if batch > 1 => batch = 1,
            Err(ErrorCode::NotEnoughMemory) => return Ok(made),
            Err(code) => return Err(code),
        }
    }
}

/// `fill_from` the first object slot.
fn fill(kind: CapType, size: u64) -> Result<u64, ErrorCode> {
    fill_from(FIRST_OBJECT, kind, size)
}

/// The exhauster (see the module docs).
pub fn exhauster() -> i32 {
    expect!(
        1,
        retype(CASE_UNTYPED, CapType::Untyped, OWN_BITS, OWN_UNTYPED, 1),
        Ok(())
    );
    for (number, (kind, size, old_limit)) in KINDS.into_iter().enumerate() {
        let check = 10 * (number as i32 + 1);
        let first = match fill(kind, size) {
            Ok(count) => count,
            Err(code) => {
                println!("filling with {kind:?}: {code:?}");
                return check;
            }
        };
        println!("exhauster: {first} {kind:?} objects fill 512 KiB");
        if first <= old_limit {
            println!("only {first} {kind:?} objects, the old table held {old_limit}");
            return check + 1;
        }
        // Revoking gives all of it back: the same count again.
        expect!(check + 2, cnode::revoke(CNODE, OWN_UNTYPED), Ok(()));
        expect!(check + 3, fill(kind, size), Ok(first));
        expect!(check + 4, cnode::revoke(CNODE, OWN_UNTYPED), Ok(()));
    }
    // Full again (threads, then endpoints into what is left): the
    // survivor makes every kind meanwhile.
    let Ok(threads) = fill(CapType::Tcb, 0) else {
        return 100;
    };
    let Ok(endpoints) = fill_from(FIRST_OBJECT + threads, CapType::Endpoint, 0) else {
        return 101;
    };
    println!("exhauster: full with {threads} threads and {endpoints} endpoints");
    expect!(102, ipc::signal(GO), Ok(()));
    expect!(103, ipc::wait(DONE).map(|_| ()), Ok(()));
    expect!(
        104,
        retype(OWN_UNTYPED, CapType::Endpoint, 0, SLOTS - 1, 1),
        Err(ErrorCode::NotEnoughMemory)
    );
    expect!(105, cnode::revoke(CNODE, OWN_UNTYPED), Ok(()));
    0
}

/// The survivor: one object of every kind from the case's Untyped while
/// the exhauster's is full.
pub fn survivor() -> i32 {
    expect!(1, ipc::wait(GO).map(|_| ()), Ok(()));
    for (number, (kind, size, _)) in KINDS.into_iter().enumerate() {
        expect!(
            10 + number as i32,
            retype(CASE_UNTYPED, kind, size, FIRST_OBJECT + number as u64, 1),
            Ok(())
        );
    }
    println!("survivor: made one object of every kind");
    expect!(30, ipc::signal(DONE), Ok(()));
    0
}
