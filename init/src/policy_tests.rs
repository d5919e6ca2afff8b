//! Policy programs of the in-guest suite: filters made, loaded and
//! attached from user space, and every verdict seen from the filtered
//! thread. Returns the number of the first failed check.

use abi::cap::CapType;
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr};
use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
use sdk::tcb::{FilterCap, Tcb};

const UNTYPED: u64 = 2;
/// Its own TCB, with the policy right.
const SELF_POLICY: Tcb = Tcb(Cptr(3));
/// Its own TCB, read-write but without the policy right.
const SELF_NO_POLICY: Tcb = Tcb(Cptr(4));
const NOTIFICATION: Cptr = Cptr(5);
const FIRST: FilterCap = FilterCap(Cptr(8));
const SECOND: FilterCap = FilterCap(Cptr(9));
const CNODE: u64 = abi::boot_program::CNODE_SLOT;

macro_rules! expect {
    ($number:expr, $got:expr, $want:expr) => {
        let (got, want) = ($got, $want);
        if !same(&got, &want) {
            sdk::println!("check {} failed: {:?} != {:?}", $number, got, want);
            return $number;
        }
    };
}

fn same<T: PartialEq>(got: &T, want: &T) -> bool {
    got == want
}

/// Ends with the `Kill` of its last syscall (exit status
/// `KILLED_BY_POLICY`); any other end is a failed check.
pub fn user() -> i32 {
    let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
    expect!(
        1,
        sdk::syscall::retype(UNTYPED, CapType::Filter, 0, 8, 2),
        Ok(())
    );
    expect!(2, FIRST.load(&[0xff; 16]), Err(ErrorCode::InvalidArgument));
    let oversized = [0u8; MAX_DESCRIPTION_BYTES + 1];
    expect!(3, FIRST.load(&oversized), Err(ErrorCode::InvalidArgument));
    let Ok(first) = FilterBuilder::new()
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::errno(ErrorCode::OutOfResources)))
        .rule(
            RuleBuilder::syscall(Syscall::DebugPrint)
                .arg(3, ArgOp::Ge, 40)
                .action(Action::errno(ErrorCode::Denied)),
        )
        .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::Kill))
        .encode(&mut buffer)
    else {
        return 4;
    };
    expect!(5, FIRST.load(first), Ok(()));
    expect!(
        6,
        SELF_NO_POLICY.attach_filter(FIRST, None),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        7,
        SELF_POLICY.attach_filter(FilterCap(NOTIFICATION), None),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(8, SELF_POLICY.attach_filter(FIRST, None), Ok(()));
    expect!(9, FIRST.load(first), Err(ErrorCode::Denied));
    expect!(10, ipc::poll(NOTIFICATION), Err(ErrorCode::OutOfResources));
    expect!(11, sdk::syscall::debug_print(b"allowed\n"), Ok(()));
    expect!(
        12,
        sdk::syscall::debug_print(&[b'x'; 50]),
        Err(ErrorCode::Denied)
    );
    // No rule names Null: a constant Allow, taken in the vector itself.
    expect!(13, sdk::syscall::null(), Ok(()));

    let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
    let Ok(second) = FilterBuilder::new()
        .rule(RuleBuilder::syscall(Syscall::Null).action(Action::errno(ErrorCode::Denied)))
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::errno(ErrorCode::NotEnoughMemory)))
        .encode(&mut buffer)
    else {
        return 14;
    };
    expect!(15, SECOND.load(second), Ok(()));
    expect!(16, SELF_POLICY.attach_filter(SECOND, None), Ok(()));
    // Stacked: Null is no longer allowed (the vector must not answer it),
    // and of two Errno verdicts the larger code wins.
    expect!(17, sdk::syscall::null(), Err(ErrorCode::Denied));
    expect!(18, ipc::poll(NOTIFICATION), Err(ErrorCode::NotEnoughMemory));
    // Deleting the filters' capabilities lifts nothing.
    expect!(19, sdk::syscall::cnode::delete(CNODE, 8), Ok(()));
    expect!(20, sdk::syscall::cnode::delete(CNODE, 9), Ok(()));
    expect!(21, ipc::poll(NOTIFICATION), Err(ErrorCode::NotEnoughMemory));
    expect!(22, sdk::syscall::null(), Err(ErrorCode::Denied));
    // The last call: Kill.
    let _ = ipc::signal(NOTIFICATION);
    99
}
