//! TCB programs of the in-guest suite: priority and MCP rules, suspend and
//! resume, reading and writing another thread's registers. Each returns
//! its exit status: 0 when every check passed, else the number of the
//! first failed check.

use crate::programs::{
    ENDPOINT_SLOT, TCB_REGISTER_MAGIC, TCB_SCENARIO_REGISTERS, TCB_SCENARIO_SUSPEND,
};
use abi::tcb::{Register, NZCV_MASK};
use abi::{ErrorCode, Syscall};
use sdk::ipc::{self, Cptr, Message};
use sdk::tcb::Tcb;

/// The peer's (or subject's) TCB, read-write.
const PEER: Tcb = Tcb(Cptr(4));
/// The same TCB, read-only.
const PEER_READ_ONLY: Tcb = Tcb(Cptr(5));
/// A notification the peers signal (read-write, each its own badge).
const NOTIFICATION: Cptr = Cptr(6);
/// The thread's own TCB.
const SELF: Tcb = Tcb(Cptr(7));
/// A slot the case leaves empty.
const EMPTY: Tcb = Tcb(Cptr(9));
const ENDPOINT: Cptr = Cptr(ENDPOINT_SLOT);

/// Runs at priority 100 with MCP 100; its first peer at 90, the second at
/// 80. Checks every refusal, then that raising a peer to its own priority
/// lets it run only when this thread yields, and that lowering itself
/// below the second peer hands the CPU over at once.
pub fn priority() -> i32 {
    expect!(1, PEER.set_priority(256), Err(ErrorCode::InvalidArgument));
    expect!(2, PEER.set_priority(101), Err(ErrorCode::Denied));
    expect!(3, PEER.set_mcp(101), Err(ErrorCode::Denied));
    expect!(
        4,
        PEER_READ_ONLY.set_priority(95),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        5,
        Tcb(NOTIFICATION).set_priority(95),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(6, EMPTY.set_priority(95), Err(ErrorCode::InvalidCapability));
    expect!(7, SELF.set_priority(101), Err(ErrorCode::Denied));
    expect!(8, ipc::poll(NOTIFICATION), Ok(0));
    // Same priority as this thread: it shares the CPU with it now. A yield
    // hands it over, but a tick may hand it back before the peer's signal
    // (time slices under a loaded host are short), so yield until the
    // signal shows, a bounded number of times. At its old priority (90) it
    // could never run while this thread is ready: check 8.
    expect!(9, PEER.set_priority(100), Ok(()));
    let mut word = Ok(0);
    for _ in 0..1000 {
        expect!(11, sdk::syscall::yield_now(), Ok(()));
        word = ipc::poll(NOTIFICATION);
        if word != Ok(0) {
            break;
        }
    }
    expect!(12, word, Ok(1));
    // Below the second peer (80): it runs before this call returns.
    expect!(13, SELF.set_priority(70), Ok(()));
    expect!(14, ipc::poll(NOTIFICATION), Ok(2));
    // Lowering the priority kept the MCP: back up to 100 is allowed.
    expect!(15, SELF.set_priority(100), Ok(()));
    expect!(16, SELF.set_mcp(50), Ok(()));
    expect!(17, SELF.set_priority(60), Err(ErrorCode::Denied));
    expect!(18, SELF.set_priority(50), Ok(()));
    // The first peer has exited (check 13 let every more urgent thread
    // run to its end). Its TCB is kept, ended, while a capability names
    // it: only `TcbRestart` runs it again, so a resume is refused, which
    // a live or suspended thread would take.
    expect!(19, PEER.resume(), Err(ErrorCode::InvalidArgument));
    0
}

/// Signals its badge on the notification and exits.
pub fn peer() -> i32 {
    match ipc::signal(NOTIFICATION) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// Acts on its subject, which (at a higher priority) already waits in
/// `Recv` on the endpoint.
pub fn controller(scenario: u64) -> i32 {
    expect!(
        1,
        PEER.read_register(Register::X(8)),
        Ok(Syscall::Recv.number())
    );
    expect!(
        2,
        PEER.read_register_number(34),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        3,
        PEER_READ_ONLY.write_register(Register::X(0), 1),
        Err(ErrorCode::MissingRights)
    );
    expect!(4, PEER_READ_ONLY.suspend(), Err(ErrorCode::MissingRights));
    expect!(5, PEER.suspend(), Ok(()));
    expect!(6, PEER.suspend(), Ok(()));
    // It left the endpoint's queue: nobody receives now.
    expect!(
        7,
        ipc::nb_send(ENDPOINT, &Message::new(1, &[])),
        Err(ErrorCode::WouldBlock)
    );
    match scenario {
        TCB_SCENARIO_SUSPEND => {
            // It runs at once (higher priority), sees `Interrupted` and
            // suspends itself; the second resume lets it finish.
            expect!(20, PEER.resume(), Ok(()));
            expect!(21, PEER.resume(), Ok(()));
        }
        TCB_SCENARIO_REGISTERS => {
            let resumed_at = subject_redirected as *const () as usize as u64;
            // Suspended, it is in no syscall (its receive returned
            // `Interrupted`): nothing to cancel.
            expect!(
                30,
                PEER.write_register(Register::X(0), TCB_REGISTER_MAGIC),
                Ok(false)
            );
            expect!(31, PEER.write_register(Register::Pc, resumed_at), Ok(false));
            expect!(
                32,
                PEER.write_register(Register::Nzcv, 0x6000_0000),
                Ok(false)
            );
            expect!(
                33,
                PEER.write_register_number(Register::NZCV, 1 << 21),
                Err(ErrorCode::InvalidArgument)
            );
            expect!(34, PEER.read_register(Register::Pc), Ok(resumed_at));
            expect!(35, PEER.read_register(Register::Nzcv), Ok(0x6000_0000));
            expect!(
                36,
                PEER.read_register(Register::X(0)),
                Ok(TCB_REGISTER_MAGIC)
            );
            expect!(
                37,
                PEER.read_register(Register::Nzcv).map(|v| v & !NZCV_MASK),
                Ok(0)
            );
            expect!(38, PEER.resume(), Ok(()));
        }
        _ => return 99,
    }
    // The subject has exited (more urgent, it ran to its end at the last
    // resume). Its TCB is kept, ended: a suspend changes nothing, a
    // resume is refused (only `TcbRestart` runs it again; a live or
    // suspended thread would take it), and its registers still show the
    // call that ended it.
    expect!(40, PEER.suspend(), Ok(()));
    expect!(41, PEER.resume(), Err(ErrorCode::InvalidArgument));
    expect!(
        42,
        PEER.read_register(Register::X(8)),
        Ok(Syscall::Exit.number())
    );
    0
}

/// Waits in `Recv`; the controller suspends it there.
pub fn subject(scenario: u64) -> i32 {
    let received = ipc::recv(ENDPOINT);
    match scenario {
        TCB_SCENARIO_SUSPEND => {
            expect!(1, received.map(|_| ()), Err(ErrorCode::Interrupted));
            // Suspending itself returns only once the controller resumes it.
            expect!(2, SELF.suspend(), Ok(()));
            0
        }
        // The controller moved this thread to `subject_redirected`.
        _ => 10,
    }
}

/// Where the registers scenario resumes its subject: `x0` is what the
/// controller wrote.
extern "C" fn subject_redirected(value: u64) -> ! {
    sdk::syscall::exit(if value == TCB_REGISTER_MAGIC { 0 } else { 11 })
}
