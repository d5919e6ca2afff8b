//! One audit record per syscall, whatever becomes of it (issue 13, points
//! 2 and 4): a syscall that ends its own thread (its `Exit`, the deletion
//! of its own TCB capability, the revocation of the Untyped its TCB came
//! from) is recorded, with no result, when the thread ends. Each program
//! returns the number of its first failed check.

use abi::audit::{AuditMode, AuditRecord, AuditVerdict};
use abi::boot_program::BootProgram;
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::ipc::{self, Cptr};
use sdk::syscall::{cnode, retype};
use sdk::tcb::Tcb;
use sdk::vspace::{Frame, MappedFrame, VSpace};

/// `SelfEnder`'s parameter: the low byte says how it ends itself, the
/// rest is the slot (or the exit status) it ends itself with.
pub const SELF_END_EXIT: u64 = 0;
/// Deletes its own TCB's only capability (in the CNode it shares with its
/// creator).
pub const SELF_END_DELETE: u64 = 1;
/// Revokes the Untyped its TCB was retyped from.
pub const SELF_END_REVOKE: u64 = 2;

/// `SelfEndAuditor`'s slots: its own CNode (shared with each child), the
/// case's Untyped, its own VSpace and TCB, the ring and its notification.
const CNODE: u64 = abi::boot_program::CNODE_SLOT;
const UNTYPED: u64 = 2;
const OWN_VSPACE: VSpace = VSpace(Cptr(3));
const OWN_TCB: Tcb = Tcb(Cptr(4));
const RING: Frame = Frame(Cptr(5));
const RING_SIGNAL: Cptr = Cptr(6);
/// Child `i`'s one-page Untyped is in slot `7 + 2 i`, its TCB in `8 + 2 i`.
const FIRST_CHILD_SLOT: u64 = 7;
/// Where a copy of an ended child's TCB capability would go.
const SPARE: u64 = 15;
/// The children's priority: above the auditor once it has lowered itself.
const CHILD_PRIORITY: u64 = 100;
/// The exit status of the child that exits.
const EXIT_STATUS: u64 = 0x5e1f;

/// Makes a ring Frame (retyped from the Untyped, mapped read-write at the
/// start of the frame window) and its notification.
fn make_ring() -> Result<MappedFrame, i32> {
    if retype(UNTYPED, CapType::Frame, 0, RING.0 .0, 1).is_err() {
        return Err(1);
    }
    if retype(UNTYPED, CapType::Notification, 0, RING_SIGNAL.0, 1).is_err() {
        return Err(2);
    }
    RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite)
        .map_err(|_| 3)
}

/// The next record in the ring, printed; `None` if the ring is empty, or
/// it is garbled or follows a gap (both printed).
fn next_record(ring: &mut MappedFrame, reader: &mut Reader) -> Option<AuditRecord> {
    match reader.next(ring)? {
        Entry::Record { record, gap: 0 } => {
            sdk::println!("[audit] {}", Line(&record));
            Some(record)
        }
        Entry::Record { record, gap } => {
            sdk::println!("[audit] {gap} records lost before {}", Line(&record));
            None
        }
        Entry::Garbled { index } => {
            sdk::println!("[audit] record {index} is garbled");
            None
        }
    }
}

/// Makes three audited threads, each ending itself with its first
/// syscall (an `Exit`, a `CapDelete` of its own TCB, a `CapRevoke` of the
/// Untyped its TCB came from), and checks each left exactly one record:
/// that syscall, its arguments, no result.
pub fn self_end_auditor() -> i32 {
    let mut ring = match make_ring() {
        Ok(ring) => ring,
        Err(check) => return check,
    };
    let mut reader = Reader::new();
    // Below the children from now on (the MCP stays 100): each runs until
    // it has ended itself before this thread goes on.
    expect!(4, OWN_TCB.set_priority(CHILD_PRIORITY - 10), Ok(()));
    let children = [
        (SELF_END_EXIT, Syscall::Exit, 0xe1),
        (SELF_END_DELETE, Syscall::CapDelete, 0xde),
        (SELF_END_REVOKE, Syscall::CapRevoke, 0x4e),
    ];
    for (index, (mode, syscall, badge)) in children.into_iter().enumerate() {
        let check = 10 * (index as i32 + 1);
        let untyped = FIRST_CHILD_SLOT + 2 * index as u64;
        let tcb = Tcb(Cptr(untyped + 1));
        let argument = match mode {
            SELF_END_EXIT => EXIT_STATUS,
            SELF_END_DELETE => tcb.0 .0,
            _ => untyped,
        };
        expect!(
            check,
            retype(UNTYPED, CapType::Untyped, 12, untyped, 1),
            Ok(())
        );
        expect!(
            check + 1,
            retype(untyped, CapType::Tcb, 0, tcb.0 .0, 1),
            Ok(())
        );
        let selector = BootProgram::SelfEnder.selector(mode | argument << 8);
        expect!(
            check + 2,
            tcb.configure(Cptr(CNODE), CHILD_PRIORITY, selector),
            Ok(())
        );
        expect!(
            check + 3,
            tcb.set_audit(RING, RING_SIGNAL, Some(AuditMode::Lossy), badge),
            Ok(())
        );
        expect!(check + 4, tcb.resume(), Ok(()));
        // It has ended: its TCB names no thread (it exited) or is gone.
        let gone = match mode {
            SELF_END_EXIT => tcb.resume(),
            _ => cnode::copy(CNODE, tcb.0 .0, SPARE),
        };
        expect!(check + 5, gone, Err(ErrorCode::InvalidCapability));
        let Some(record) = next_record(&mut ring, &mut reader) else {
            sdk::println!("no record of the {} that ended its thread", syscall.name());
            return check + 6;
        };
        expect!(
            check + 7,
            (record.syscall, record.thread_badge, record.args[2]),
            (syscall.number(), badge, argument)
        );
        // No result (the thread ended in it), run as the filters allowed.
        expect!(
            check + 8,
            (
                record.result,
                record.verdict,
                record.forwarded,
                record.dropped
            ),
            (None, AuditVerdict::Allowed, false, 0)
        );
        // Exactly one: nothing after the syscall that ended the thread.
        expect!(check + 9, reader.next(&mut ring), None);
    }
    // The Untyped the last child revoked is whole again.
    let untyped = FIRST_CHILD_SLOT + 4;
    expect!(50, retype(untyped, CapType::Frame, 0, SPARE, 1), Ok(()));
    expect!(51, ipc::poll(RING_SIGNAL).map(|word| word != 0), Ok(true));
    0
}

/// A thread made by `self_end_auditor`, audited, sharing its creator's
/// CNode: its first syscall ends it (see `SELF_END_*`). Returning is a
/// failure, which its record (an `Exit` after the first call) shows.
pub fn self_ender(parameter: u64) -> i32 {
    let (mode, argument) = (parameter & 0xff, parameter >> 8);
    match mode {
        SELF_END_EXIT => sdk::syscall::exit_with(argument as i64),
        SELF_END_DELETE => {
            let _ = cnode::delete(CNODE, argument);
        }
        SELF_END_REVOKE => {
            let _ = cnode::revoke(CNODE, argument);
        }
        _ => {}
    }
    1
}
