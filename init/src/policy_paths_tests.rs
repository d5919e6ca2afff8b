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
    expect!(5, attach(2, reads_the_pc()), Ok(()));
    let mut generic = [[0; 9]; CALLS.len() + DRAWN];
    let Ok(generic_counted) = run_all(&mut generic) else {
        return 6;
    };
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
