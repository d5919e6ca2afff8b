//! An address space built from user space (`Retype` of a VSpace,
//! `TcbConfigure` with `NO_PROGRAM`, `TcbSetSpace`): the root makes a
//! child that runs a tiny hand-written program in a space of the root's
//! making, and checks every refusal and lifetime rule. Returns 0 when
//! every check passed, else the number of the first failed check.

use abi::cap::{CapType, Rights};
use abi::fault::FAULT_LABEL;
use abi::vspace::{MapRights, FRAME_MAP_START, MAX_USER_TABLE_PAGES};
use abi::{ErrorCode, Syscall, IPC_BUFFER_ADDRESS};
use sdk::ipc::{self, Cptr, Message};
use sdk::probe;
use sdk::syscall::{cnode, retype};
use sdk::tcb::{IpcBuffer, Tcb, ThreadStart};
use sdk::vspace::{Frame, VSpace};

/// The root's own CNode (radix 6), Untyped (32 pages, a power of two)
/// and address space (user-made: the driver built it).
const ROOT_CNODE: u64 = 0;
const UNTYPED: u64 = 2;
const OWN_SPACE: VSpace = VSpace(Cptr(3));
/// The notification the child signals, the fault endpoint, and the
/// fault endpoint minted with `FAULT_BADGE` (what the child is given).
const SIGNALS: Cptr = Cptr(4);
const FAULTS: Cptr = Cptr(5);
const FAULTS_BADGED: Cptr = Cptr(6);
/// The child's CNode (radix 2) and TCB, and its VSpace (8 table pages:
/// a path of three to the code and stack, three to the IPC buffer, one
/// more last-level table for page 1, and one spare).
const CHILD_CNODE: u64 = 7;
const CHILD: Tcb = Tcb(Cptr(8));
const SPACE: VSpace = VSpace(Cptr(9));
/// Frames: the child's code, stack and IPC buffer, and a spare.
const CODE: Frame = Frame(Cptr(10));
const STACK: Frame = Frame(Cptr(11));
const BUFFER: Frame = Frame(Cptr(12));
const SPARE: Frame = Frame(Cptr(13));
/// `BUFFER` minted read-only, `FAULTS` minted read-only.
const BUFFER_READ_ONLY: Frame = Frame(Cptr(14));
const FAULTS_READ_ONLY: Cptr = Cptr(15);
/// The root's own TCB (granted by the case).
const SELF: Tcb = Tcb(Cptr(16));
/// Later threads, and a small VSpace they share in turn.
const SECOND: Tcb = Tcb(Cptr(17));
const SMALL_SPACE: VSpace = VSpace(Cptr(18));
const THIRD: Tcb = Tcb(Cptr(19));
/// Where `ipc_tests::fill_signature` puts what it measures the Untyped
/// with: when it is new, and once everything is reclaimed.
const FILL: core::ops::Range<u64> = 24..40;
/// A thread that shares the child's space, and the notification it waits
/// on (never signalled).
const SHARER: Tcb = Tcb(Cptr(21));
const IDLE: Cptr = Cptr(22);
/// A thread that runs in the root's own space (the driver made it, and
/// bound the root to it).
const GUEST: Tcb = Tcb(Cptr(23));
/// A slot nothing is put in.
const EMPTY: u64 = 40;

/// The child's priority: the root's (its MCP).
const CHILD_PRIORITY: u64 = 100;
/// The slot of the notification in the child's CNode.
const CHILD_SIGNALS: u16 = 2;
/// The slot of `IDLE` in the child's CNode (read: waiting only).
const CHILD_IDLE: u16 = 3;
const FAULT_BADGE: u64 = 0x77;

/// Where the root writes the code in its own space, and where the child's
/// frames go in the child's: the program image's usual address (outside
/// the window a kernel-made space allows), a stack page in the same
/// last-level table, the SDK's IPC buffer page.
const WRITE_VA: u64 = FRAME_MAP_START;
const CODE_VA: u64 = 0x40_0000;
const STACK_VA: u64 = CODE_VA + 0x1_0000;
const STACK_TOP: u64 = STACK_VA + 0x1000;
/// The address the child's last instruction loads from (never mapped).
const FAULT_ADDRESS: u64 = 0x0bad_0000;
/// The exception class of a data abort from EL0.
const DATA_ABORT: u64 = 0x24;

/// `movz x<rd>, #imm16, lsl #(16 * hw)`.
const fn movz(rd: u32, imm16: u32, hw: u32) -> u32 {
    0xd280_0000 | (hw << 21) | (imm16 << 5) | rd
}

/// The child: signal the notification in its slot 2, then load from an
/// unmapped address (a fault its handler receives), then spin. From
/// `SHARER_PC` on, the sharer's part: signal the same notification, then
/// wait on the one in slot 3 for ever (so it is alive, blocked, when the
/// space goes).
const CHILD_PROGRAM: [u32; 14] = [
    movz(0, CHILD_SIGNALS as u32, 0),
    movz(8, Syscall::Signal.number() as u32, 0),
    0xd400_0001, // svc #0
    movz(1, (FAULT_ADDRESS >> 16) as u32, 1),
    0xf940_0022, // ldr x2, [x1]
    0x1400_0000, // b .
    // The sharer starts here.
    movz(0, CHILD_SIGNALS as u32, 0),
    movz(8, Syscall::Signal.number() as u32, 0),
    0xd400_0001, // svc #0
    movz(0, CHILD_IDLE as u32, 0),
    movz(8, Syscall::Wait.number() as u32, 0),
    0xd400_0001, // svc #0
    0x17ff_fffd, // b (back to the movz x0 three instructions up)
    0x1400_0000, // b . (padding: the program is written in pairs)
];
/// The PC of the load.
const FAULTING_PC: u64 = CODE_VA + 16;
/// Where the sharer starts (word 6 of the program).
const SHARER_PC: u64 = CODE_VA + 24;

/// Where a thread given a space here starts.
fn start(ipc_buffer: Option<Frame>, fault_endpoint: Option<Cptr>) -> ThreadStart {
    ThreadStart {
        ipc_buffer: ipc_buffer.map(|frame| IpcBuffer {
            frame,
            address: IPC_BUFFER_ADDRESS,
        }),
        fault_endpoint,
        pc: CODE_VA,
        sp: 0x41_0000,
        x0: 0,
    }
}

/// Builds, runs and takes down the child (see the module docs).
pub fn root() -> i32 {
    // What the Untyped holds while nothing is made from it (it keeps its
    // own record in its last bytes: no child as large as itself fits),
    // so that `lifetimes` can tell all of it came back.
    let fresh = match crate::ipc_tests::fill_signature(UNTYPED, FILL) {
        Ok(fresh) => fresh,
        Err(error) => {
            sdk::println!("filling the new Untyped: {error:?}");
            return 95;
        }
    };
    expect!(96, cnode::revoke(ROOT_CNODE, UNTYPED), Ok(()));
    let status = make_objects();
    if status != 0 {
        return status;
    }
    let status = refusals();
    if status != 0 {
        return status;
    }
    let status = run_child();
    if status != 0 {
        return status;
    }
    let status = share_space();
    if status != 0 {
        return status;
    }
    lifetimes(&fresh)
}

fn make_objects() -> i32 {
    expect!(
        1,
        retype(UNTYPED, CapType::Notification, 0, SIGNALS.0, 1),
        Ok(())
    );
    expect!(
        2,
        retype(UNTYPED, CapType::Endpoint, 0, FAULTS.0, 1),
        Ok(())
    );
    expect!(
        3,
        cnode::mint(
            ROOT_CNODE,
            FAULTS.0,
            FAULTS_BADGED.0,
            Rights::WRITE,
            Some(FAULT_BADGE)
        ),
        Ok(())
    );
    expect!(
        4,
        retype(UNTYPED, CapType::CNode, 2, CHILD_CNODE, 1),
        Ok(())
    );
    expect!(5, retype(UNTYPED, CapType::Tcb, 0, CHILD.0 .0, 1), Ok(()));
    // A VSpace's size is the number of table pages besides its root.
    expect!(
        6,
        VSpace::retype(Cptr(UNTYPED), 0, SPACE.0 .0),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        7,
        VSpace::retype(Cptr(UNTYPED), MAX_USER_TABLE_PAGES + 1, SPACE.0 .0),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(8, VSpace::retype(Cptr(UNTYPED), 8, SPACE.0 .0), Ok(SPACE));
    expect!(9, retype(UNTYPED, CapType::Frame, 0, CODE.0 .0, 4), Ok(()));
    expect!(
        10,
        cnode::mint(
            ROOT_CNODE,
            BUFFER.0 .0,
            BUFFER_READ_ONLY.0 .0,
            Rights::READ,
            None
        ),
        Ok(())
    );
    expect!(
        11,
        cnode::mint(ROOT_CNODE, FAULTS.0, FAULTS_READ_ONLY.0, Rights::READ, None),
        Ok(())
    );
    expect!(
        12,
        cnode::mint_into(
            CHILD_CNODE,
            SIGNALS.0,
            u64::from(CHILD_SIGNALS),
            Rights::WRITE,
            None
        ),
        Ok(())
    );
    // CSpace and priority only: no program, no address space yet.
    expect!(
        13,
        CHILD.configure(Cptr(CHILD_CNODE), CHILD_PRIORITY),
        Ok(())
    );
    0
}

/// Every bad argument is refused with its typed error and changes
/// nothing (the successful call at the end proves it).
fn refusals() -> i32 {
    let good = || start(Some(BUFFER), Some(FAULTS_BADGED));
    // Not startable without a space; an unbound VSpace has no tables.
    expect!(20, CHILD.resume(), Err(ErrorCode::InvalidArgument));
    expect!(
        21,
        SPARE.map(SPACE, CODE_VA, MapRights::Read),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        22,
        Tcb(SPACE.0).set_space(SPACE, good()),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        23,
        Tcb(Cptr(EMPTY)).set_space(SPACE, good()),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        24,
        CHILD.set_space(VSpace(CODE.0), good()),
        Err(ErrorCode::WrongCapabilityType)
    );
    // (A VSpace another thread is bound to takes threads too: see
    // `share_space`.)
    expect!(
        26,
        CHILD.set_space(SPACE, start(Some(Frame(FAULTS)), Some(FAULTS_BADGED))),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        27,
        CHILD.set_space(SPACE, start(Some(BUFFER_READ_ONLY), Some(FAULTS_BADGED))),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        28,
        CHILD.set_space(SPACE, start(Some(BUFFER), Some(SIGNALS))),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        29,
        CHILD.set_space(SPACE, start(Some(BUFFER), Some(FAULTS_READ_ONLY))),
        Err(ErrorCode::MissingRights)
    );
    let at = |pc: u64, sp: u64| ThreadStart { pc, sp, ..good() };
    expect!(
        30,
        CHILD.set_space(SPACE, at(CODE_VA + 2, STACK_TOP)),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        31,
        CHILD.set_space(SPACE, at(CODE_VA, STACK_TOP - 8)),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        32,
        CHILD.set_space(SPACE, at(0xffff_0000_0000_0000, STACK_TOP)),
        Err(ErrorCode::InvalidAddress)
    );
    expect!(
        33,
        CHILD.set_space(SPACE, at(CODE_VA, 0xffff_0000_0000_0000)),
        Err(ErrorCode::InvalidAddress)
    );
    // A running thread (the root) is no new thread.
    expect!(
        34,
        SELF.set_space(SPACE, good()),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(35, CHILD.set_space(SPACE, good()), Ok(()));
    // Once: the thread has a space, and the VSpace a thread.
    expect!(
        36,
        CHILD.set_space(SPACE, good()),
        Err(ErrorCode::InvalidArgument)
    );
    // A program selector is never taken (the kernel loads no program).
    expect!(
        37,
        CHILD.configure_with_x4(
            Cptr(CHILD_CNODE),
            CHILD_PRIORITY,
            crate::programs::BootProgram::ThreadsCaller.selector(0)
        ),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(38, retype(UNTYPED, CapType::Tcb, 0, SECOND.0 .0, 1), Ok(()));
    expect!(
        39,
        SECOND.configure(Cptr(CHILD_CNODE), CHILD_PRIORITY),
        Ok(())
    );
    // (A VSpace bound already takes more threads: see `share_space`.)
    0
}

/// Writes the program, maps code, stack and IPC buffer into the child's
/// space, starts it, and receives its signal and its fault.
fn run_child() -> i32 {
    expect!(
        50,
        CODE.map(OWN_SPACE, WRITE_VA, MapRights::ReadWrite),
        Ok(())
    );
    for pair in 0..CHILD_PROGRAM.len() / 2 {
        let word =
            u64::from(CHILD_PROGRAM[2 * pair]) | (u64::from(CHILD_PROGRAM[2 * pair + 1]) << 32);
        probe::store_u64(WRITE_VA + 8 * pair as u64, word);
    }
    expect!(51, CODE.unmap(), Ok(()));
    // Never write and execute.
    expect!(
        52,
        CODE.map_raw(SPACE, CODE_VA, 7),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(53, CODE.map(SPACE, CODE_VA, MapRights::ReadExecute), Ok(()));
    expect!(54, STACK.map(SPACE, STACK_VA, MapRights::ReadWrite), Ok(()));
    expect!(
        55,
        BUFFER.map(SPACE, IPC_BUFFER_ADDRESS, MapRights::ReadWrite),
        Ok(())
    );
    // The whole user half but page 0.
    expect!(
        56,
        SPARE.map(SPACE, 0, MapRights::Read),
        Err(ErrorCode::InvalidAddress)
    );
    expect!(57, SPARE.map(SPACE, 0x1000, MapRights::Read), Ok(()));
    expect!(58, SPARE.unmap(), Ok(()));

    expect!(59, CHILD.resume(), Ok(()));
    // It ran in its own space: the signal proves it.
    expect!(60, ipc::wait(SIGNALS), Ok(1));
    let Ok(fault) = ipc::recv(FAULTS) else {
        return 61;
    };
    let [class, address, _esr, pc, ..] = fault.message.words;
    expect!(62, fault.message.info.label(), FAULT_LABEL);
    expect!(63, fault.badge, FAULT_BADGE);
    expect!(
        64,
        (class, address, pc),
        (DATA_ABORT, FAULT_ADDRESS, FAULTING_PC)
    );
    0
}

/// A second thread runs in the child's space: the same code, mapped once,
/// at another entry, with its own stack top. It signals, then waits.
fn share_space() -> i32 {
    expect!(
        100,
        retype(UNTYPED, CapType::Notification, 0, IDLE.0, 1),
        Ok(())
    );
    expect!(
        101,
        cnode::mint_into(
            CHILD_CNODE,
            IDLE.0,
            u64::from(CHILD_IDLE),
            Rights::READ,
            None
        ),
        Ok(())
    );
    expect!(
        102,
        retype(UNTYPED, CapType::Tcb, 0, SHARER.0 .0, 1),
        Ok(())
    );
    expect!(
        103,
        SHARER.configure(Cptr(CHILD_CNODE), CHILD_PRIORITY),
        Ok(())
    );
    // The child's VSpace is bound already: the sharer joins it.
    let sharer_start = ThreadStart {
        ipc_buffer: None,
        fault_endpoint: None,
        pc: SHARER_PC,
        sp: STACK_TOP - 0x800,
        x0: 0,
    };
    expect!(104, SHARER.set_space(SPACE, sharer_start), Ok(()));
    expect!(105, SHARER.resume(), Ok(()));
    // It ran in the child's space, from the code mapped there once.
    expect!(106, ipc::wait(SIGNALS), Ok(1));
    // The space takes mappings as before, for both.
    expect!(107, SPARE.map(SPACE, 0x1000, MapRights::Read), Ok(()));
    expect!(
        108,
        SPARE.map(SPACE, 0x2000, MapRights::Read),
        Err(ErrorCode::AlreadyMapped)
    );
    expect!(109, SPARE.unmap(), Ok(()));

    // A thread in the root's own space, which the driver made and bound
    // the root to (a space this program did not make, holding the
    // running caller): the sharer's code, copied into a frame the root
    // maps into its own space.
    let guest_code = WRITE_VA + 0x1000;
    expect!(
        111,
        SPARE.map(OWN_SPACE, guest_code, MapRights::ReadWrite),
        Ok(())
    );
    for pair in 0..CHILD_PROGRAM.len() / 2 {
        let word =
            u64::from(CHILD_PROGRAM[2 * pair]) | (u64::from(CHILD_PROGRAM[2 * pair + 1]) << 32);
        probe::store_u64(guest_code + 8 * pair as u64, word);
    }
    expect!(112, SPARE.unmap(), Ok(()));
    expect!(
        113,
        SPARE.map(OWN_SPACE, guest_code, MapRights::ReadExecute),
        Ok(())
    );
    expect!(114, retype(UNTYPED, CapType::Tcb, 0, GUEST.0 .0, 1), Ok(()));
    expect!(
        115,
        GUEST.configure(Cptr(CHILD_CNODE), CHILD_PRIORITY),
        Ok(())
    );
    let guest_start = ThreadStart {
        ipc_buffer: None,
        fault_endpoint: None,
        pc: guest_code + (SHARER_PC - CODE_VA),
        sp: 0,
        x0: 0,
    };
    expect!(116, GUEST.set_space(OWN_SPACE, guest_start), Ok(()));
    expect!(117, GUEST.resume(), Ok(()));
    expect!(118, ipc::wait(SIGNALS), Ok(1));
    // It ends; the root's space and the mapping stay.
    expect!(119, cnode::delete(ROOT_CNODE, GUEST.0 .0), Ok(()));
    expect!(120, GUEST.resume(), Err(ErrorCode::InvalidCapability));
    expect!(
        121,
        probe::read_u64(guest_code),
        u64::from(CHILD_PROGRAM[0]) | (u64::from(CHILD_PROGRAM[1]) << 32)
    );
    expect!(122, SPARE.unmap(), Ok(()));
    0
}

/// Deleting the VSpace ends every thread in it; ending a thread unbinds its
/// VSpace for reuse; the table budget; revoking the Untyped reclaims
/// everything.
fn lifetimes(fresh: &[u64; crate::ipc_tests::FILL_STEPS]) -> i32 {
    // The child waits for the fault reply. Its VSpace goes: it ends (so
    // does the thread sharing it), its TCB kept without a space, so it
    // cannot be resumed or restarted until a new space is given.
    expect!(70, cnode::delete(ROOT_CNODE, SPACE.0 .0), Ok(()));
    expect!(71, CHILD.resume(), Err(ErrorCode::InvalidArgument));
    expect!(110, SHARER.resume(), Err(ErrorCode::InvalidArgument));
    let again = sdk::supervision::Restart {
        pc: CODE_VA,
        sp: STACK_TOP,
        x0: 0,
        tpidr: 0,
    };
    expect!(
        111,
        sdk::supervision::restart(CHILD, again),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        72,
        ipc::reply(&Message::new(0, &[])),
        Err(ErrorCode::NoReplyTarget)
    );
    // Its mappings were forgotten: the code frame maps again, as written.
    expect!(73, CODE.map(OWN_SPACE, WRITE_VA, MapRights::Read), Ok(()));
    expect!(
        74,
        probe::read_u64(WRITE_VA),
        u64::from(CHILD_PROGRAM[0]) | (u64::from(CHILD_PROGRAM[1]) << 32)
    );
    expect!(75, CODE.unmap(), Ok(()));

    // Three table pages: one path from the root to a page, no more.
    expect!(
        80,
        VSpace::retype(Cptr(UNTYPED), 3, SMALL_SPACE.0 .0),
        Ok(SMALL_SPACE)
    );
    expect!(81, SECOND.set_space(SMALL_SPACE, start(None, None)), Ok(()));
    expect!(82, SPARE.map(SMALL_SPACE, 0x1000, MapRights::Read), Ok(()));
    expect!(
        83,
        STACK.map(SMALL_SPACE, 0x2000, MapRights::ReadWrite),
        Ok(())
    );
    expect!(
        84,
        BUFFER.map(SMALL_SPACE, 1 << 39, MapRights::ReadWrite),
        Err(ErrorCode::OutOfResources)
    );
    // Ending the thread (its TCB deleted) unbinds the VSpace, empty.
    expect!(85, cnode::delete(ROOT_CNODE, SECOND.0 .0), Ok(()));
    expect!(86, retype(UNTYPED, CapType::Tcb, 0, THIRD.0 .0, 1), Ok(()));
    expect!(
        87,
        THIRD.configure(Cptr(CHILD_CNODE), CHILD_PRIORITY),
        Ok(())
    );
    expect!(88, THIRD.set_space(SMALL_SPACE, start(None, None)), Ok(()));
    expect!(89, SPARE.map(SMALL_SPACE, 0x1000, MapRights::Read), Ok(()));
    expect!(
        90,
        STACK.map(SMALL_SPACE, 0x2000, MapRights::ReadWrite),
        Ok(())
    );

    // Revoking the Untyped destroys the thread, its space and its
    // frames, and gives back all of the memory: it fills as when it was
    // new.
    expect!(91, cnode::revoke(ROOT_CNODE, UNTYPED), Ok(()));
    expect!(92, THIRD.resume(), Err(ErrorCode::InvalidCapability));
    expect!(93, SPARE.unmap(), Err(ErrorCode::InvalidCapability));
    let again = crate::ipc_tests::fill_signature(UNTYPED, FILL);
    expect!(94, again.as_ref(), Ok(fresh));
    0
}
