//! The policy fast path against the generic entry
//! (`BootProgram::PolicyPaths`): the same syscalls with the same
//! registers, judged first by the vector's walk of the thread's compiled
//! verdicts (`policy_fast_path.s`), then, once a filter that reads the PC
//! leaves them to the generic entry, by its evaluation. Returns the
//! number of the first failed check.

use abi::cap::CapType;
use abi::{ErrorCode, MessageInfo, Syscall};
use sdk::ipc::Cptr;
use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
use sdk::syscall::raw_syscall_registers;
use sdk::tcb::{FilterCap, Tcb};

const UNTYPED: u64 = 4;
/// Its own TCB, with the policy right.
const OWN_TCB: Tcb = Tcb(Cptr(7));
const FILTERS: [FilterCap; 3] = [FilterCap(Cptr(8)), FilterCap(Cptr(9)), FilterCap(Cptr(10))];

/// The first filter: `Null`'s rules compare registers in every way a
/// rule can (each operator, a mask, the label, a message word, two
/// comparisons in one rule, an `Allow` that ends the filter); `Yield`
/// is refused for x2 = 7.
fn registers_first() -> FilterBuilder {
    let null = || RuleBuilder::syscall(Syscall::Null);
    FilterBuilder::new(Action::Allow)
        .rule(
            null()
                .arg(2, ArgOp::Eq, 1)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .rule(
            null()
                .arg_masked(3, 0xf0, ArgOp::MaskedEq, 0x3f)
                .action(Action::errno(ErrorCode::WouldBlock)),
        )
        .rule(
            null()
                .label(5)
                .action(Action::errno(ErrorCode::InvalidArgument)),
        )
        .rule(
            null()
                .arg(4, ArgOp::Lt, 3)
                .arg(5, ArgOp::Ne, 0)
                .action(Action::errno(ErrorCode::Interrupted)),
        )
        .rule(null().word(5, ArgOp::Ge, 0x100).action(Action::Allow))
        .rule(
            null()
                .arg(6, ArgOp::Gt, 100)
                .action(Action::errno(ErrorCode::OutOfResources)),
        )
        .rule(
            RuleBuilder::syscall(Syscall::Yield)
                .arg(2, ArgOp::Eq, 7)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .rule(
            RuleBuilder::syscall(Syscall::Call)
                .arg(2, ArgOp::Eq, REFUSED_X2)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .rule(
            RuleBuilder::syscall(Syscall::ReplyRecv)
                .arg(2, ArgOp::Eq, REFUSED_X2)
                .action(Action::errno(ErrorCode::Denied)),
        )
}

/// The second filter: more `Null` rules, so the stack's verdict is the
/// strictest of two (`Errno` codes ordered by number).
fn registers_second() -> FilterBuilder {
    let null = || RuleBuilder::syscall(Syscall::Null);
    FilterBuilder::new(Action::Allow)
        .rule(
            null()
                .arg(2, ArgOp::Le, 1)
                .arg(3, ArgOp::Eq, 0x30)
                .action(Action::errno(ErrorCode::SlotOccupied)),
        )
        .rule(
            null()
                .arg(6, ArgOp::Ge, 0x135)
                .action(Action::errno(ErrorCode::InvalidAddress)),
        )
}

/// A filter that reads the PC for `Null` and `Yield` (and never matches:
/// no `svc` is at address 1), so neither the vector nor the lean entry
/// judges them: the generic entry does.
fn reads_the_pc() -> FilterBuilder {
    let never = |syscall| {
        RuleBuilder::syscall(syscall)
            .pc(ArgOp::Eq, 1)
            .action(Action::errno(ErrorCode::Denied))
    };
    FilterBuilder::new(Action::Allow)
        .rule(never(Syscall::Null))
        .rule(never(Syscall::Yield))
        .rule(never(Syscall::Call))
        .rule(never(Syscall::ReplyRecv))
}

fn attach(slot: usize, rules: FilterBuilder) -> Result<(), ErrorCode> {
    let mut buffer = [0u8; 1024];
    let description = rules
        .encode(&mut buffer)
        .map_err(|_| ErrorCode::InvalidArgument)?;
    FILTERS[slot].load(description)?;
    OWN_TCB.attach_filter(FILTERS[slot], None)
}

/// x1 with `label`.
fn label(label: u64) -> u64 {
    MessageInfo::with(label, 0).into()
}

/// The calls made on both paths, and what the two filters answer: x0 for
/// `Null` with x0..x7 as given (`Yield` for the last two).
const CALLS: [(Syscall, [u64; 8], u64); 12] = {
    const OK: u64 = ErrorCode::Ok.raw();
    [
        (Syscall::Null, [0; 8], OK),
        (
            Syscall::Null,
            [0, 0, 1, 0, 0, 0, 0, 0],
            ErrorCode::Denied.raw(),
        ),
        (
            Syscall::Null,
            [0, 0, 2, 0x3f, 0, 0, 0, 0],
            ErrorCode::WouldBlock.raw(),
        ),
        // Both filters refuse: the larger code.
        (
            Syscall::Null,
            [0, 0, 1, 0x30, 0, 0, 0, 0],
            ErrorCode::SlotOccupied.raw(),
        ),
        (
            Syscall::Null,
            [0, 5 << 9, 2, 0, 9, 0, 0, 0],
            ErrorCode::InvalidArgument.raw(),
        ),
        (
            Syscall::Null,
            [0, 0, 2, 0, 2, 1, 0, 0],
            ErrorCode::Interrupted.raw(),
        ),
        (Syscall::Null, [0, 0, 2, 0, 3, 1, 0, 0], OK),
        // The first filter's `Allow` on x7 ends it before its x6 rule;
        // the second filter still refuses x6 ≥ 0x135.
        (Syscall::Null, [0, 0, 2, 0, 3, 1, 101, 0x100], OK),
        (
            Syscall::Null,
            [0, 0, 2, 0, 3, 1, 101, 0],
            ErrorCode::OutOfResources.raw(),
        ),
        (
            Syscall::Null,
            [0, 0, 2, 0, 3, 1, 0x135, 0x100],
            ErrorCode::InvalidAddress.raw(),
        ),
        (
            Syscall::Yield,
            [0, 0, 7, 0, 0, 0, 0, 0],
            ErrorCode::Denied.raw(),
        ),
        (Syscall::Yield, [0, 0, 6, 0, 0, 0, 0, 0], OK),
    ]
};

/// The `x2` for which the first filter refuses `Call` and `ReplyRecv`.
const REFUSED_X2: u64 = 0xdead;

/// A capability pointer past the CSpace.
const NO_SLOT: u64 = 1 << 40;

/// `Call`s and `ReplyRecv`s of a capability that does not exist, with
/// message lengths in x1 and an x2: on the first run the policy fast
/// path allows all but those with `REFUSED_X2`, and sends them on to the
/// IPC fast path, which declines each (a message too long for registers,
/// or, after its save, the missing capability) to its IPC entry. That
/// declines it too (the thread has policy work for it), and the generic
/// entry takes it, judges it again and refuses it for the capability:
/// the IPC entry's way back to the generic entry, which nothing else in
/// the suite takes. On the second run the generic entry takes them at
/// once. Both runs must leave the same registers and count one syscall
/// each for those allowed.
const IPC_CALLS: [(Syscall, u8, u64); 6] = [
    (Syscall::Call, 2, 1),
    (Syscall::Call, 7, 1),
    (Syscall::ReplyRecv, 2, 1),
    (Syscall::ReplyRecv, 7, 1),
    (Syscall::Call, 2, REFUSED_X2),
    (Syscall::ReplyRecv, 7, REFUSED_X2),
];

/// The registers of `IPC_CALLS[i]`.
fn ipc_args(i: usize) -> [u64; 8] {
    let (_, length, x2) = IPC_CALLS[i];
    [
        NO_SLOT,
        MessageInfo::with(3, length).into(),
        x2,
        3,
        4,
        5,
        6,
        7,
    ]
}

/// What the allowed ones of `IPC_CALLS` may leave in x0 (no such
/// capability; for the long message of a thread without an IPC buffer,
/// that first).
fn ipc_refusal(x0: u64) -> bool {
    x0 == ErrorCode::InvalidCapability.raw() || x0 == ErrorCode::InvalidAddress.raw()
}

/// More calls, their registers drawn from values the rules' edges lie
/// on; what each gets is compared between the paths.
const EDGES: [u64; 12] = [0, 1, 2, 3, 5, 7, 0x30, 0x3f, 101, 0x100, 0x135, u64::MAX];

fn drawn(index: usize) -> [u64; 8] {
    let mut seed = index as u64 * 0x9e37_79b9_7f4a_7c15 + 1;
    core::array::from_fn(|register| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let value = EDGES[(seed % EDGES.len() as u64) as usize];
        if register == 1 {
            label(value & 7)
        } else {
            value
        }
    })
}

const DRAWN: usize = 48;

/// Every call, in order: x0..x8 as each left them, and how many reached
/// the generic entry.
fn run_all(out: &mut [[u64; 9]; CALLS.len() + DRAWN]) -> Result<u64, ErrorCode> {
    let before = sdk::debug::thread_stats(OWN_TCB.0)?.syscalls;
    for (i, (syscall, args, _)) in CALLS.iter().enumerate() {
        out[i] = raw_syscall_registers(syscall.number(), *args);
    }
    for i in 0..DRAWN {
        out[CALLS.len() + i] = raw_syscall_registers(Syscall::Null.number(), drawn(i));
    }
    let after = sdk::debug::thread_stats(OWN_TCB.0)?.syscalls;
    // (The second `thread_stats` counts itself.)
    Ok(after - before - 1)
}

/// `IPC_CALLS`, in order: x0..x8 as each left them, and how many reached
/// the generic entry.
fn run_ipc(out: &mut [[u64; 9]; IPC_CALLS.len()]) -> Result<u64, ErrorCode> {
    let before = sdk::debug::thread_stats(OWN_TCB.0)?.syscalls;
    for (i, (syscall, _, _)) in IPC_CALLS.iter().enumerate() {
        out[i] = raw_syscall_registers(syscall.number(), ipc_args(i));
    }
    let after = sdk::debug::thread_stats(OWN_TCB.0)?.syscalls;
    Ok(after - before - 1)
}

/// `BootProgram::PolicyPaths`: an Untyped in slot 4, its own TCB with the
/// policy right in slot 7.
pub fn paths() -> i32 {
    expect!(
        1,
        sdk::syscall::retype(UNTYPED, CapType::Filter, 0, 8, 3),
        Ok(())
    );
    expect!(2, attach(0, registers_first()), Ok(()));
    expect!(3, attach(1, registers_second()), Ok(()));
    let mut fast = [[0; 9]; CALLS.len() + DRAWN];
    let Ok(fast_counted) = run_all(&mut fast) else {
        return 4;
    };
    let mut ipc_fast = [[0; 9]; IPC_CALLS.len()];
    let Ok(ipc_fast_counted) = run_ipc(&mut ipc_fast) else {
        return 4;
    };
    expect!(5, attach(2, reads_the_pc()), Ok(()));
    let mut generic = [[0; 9]; CALLS.len() + DRAWN];
    let Ok(generic_counted) = run_all(&mut generic) else {
        return 6;
    };
    let mut ipc_generic = [[0; 9]; IPC_CALLS.len()];
    let Ok(ipc_generic_counted) = run_ipc(&mut ipc_generic) else {
        return 6;
    };
    // The IPC calls the filter allowed reached the generic entry once
    // each on both runs (the IPC entry declined them without counting);
    // the refused ones only on the second.
    let allowed = IPC_CALLS.iter().filter(|c| c.2 != REFUSED_X2).count() as u64;
    expect!(300, ipc_fast_counted, allowed);
    expect!(301, ipc_generic_counted, IPC_CALLS.len() as u64);
    for (i, (syscall, _, x2)) in IPC_CALLS.iter().enumerate() {
        let check = 310 + 3 * i as i32;
        let x0 = ipc_fast[i][0];
        if *x2 == REFUSED_X2 {
            expect!(check, (*syscall, x0), (*syscall, ErrorCode::Denied.raw()));
        } else {
            expect!(check, (*syscall, ipc_refusal(x0)), (*syscall, true));
        }
        expect!(check + 1, &ipc_fast[i][1..8], &ipc_args(i)[1..8]);
        expect!(check + 2, ipc_fast[i], ipc_generic[i]);
    }
    // The vector judged every call of the first run (none reached the
    // generic entry), the generic entry every call of the second.
    expect!(7, fast_counted, 0);
    expect!(8, generic_counted, (CALLS.len() + DRAWN) as u64);
    for (i, (syscall, args, want)) in CALLS.iter().enumerate() {
        let check = 10 + 2 * i as i32;
        expect!(check, (*syscall, fast[i][0]), (*syscall, *want));
        expect!(check + 1, &fast[i][1..8], &args[1..8]);
    }
    for i in 0..fast.len() {
        expect!(100 + i as i32, fast[i], generic[i]);
    }
    0
}
