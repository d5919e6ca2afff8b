//! The demo's policy scene: a supervisor confines an app with a filter,
//! the reference policy server answers what the filter forwards, and the
//! app shows each outcome.

use abi::boot_program::CONSOLE_SLOT;
use abi::cap::CapType;
use abi::{ErrorCode, Syscall};
use sdk::console::Console;
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
use sdk::println;
use sdk::tcb::{FilterCap, Tcb};

/// Every demo thread's capability to the policy server's endpoint.
const SERVER: Cptr = Cptr(2);
/// The supervisor's capability to the app's TCB (with the policy right).
const APP_TCB: Tcb = Tcb(Cptr(3));
/// The supervisor's Untyped memory.
const UNTYPED: u64 = 4;
/// Where the supervisor puts the app's filter.
const FILTER: FilterCap = FilterCap(Cptr(8));
/// A notification the app polls and signals.
const NOTIFICATION: Cptr = Cptr(5);
/// The app's second console capability: its long prints are forwarded.
const LOUD_CONSOLE: u64 = 6;
/// The label of the message that ends the policy server.
const STOP: u64 = 0x5709;

/// Confines the app before it runs (the supervisor is the most urgent
/// thread of the scene), then exits.
pub fn supervisor() -> i32 {
    let mut buffer = [0u8; 512];
    let filter = FilterBuilder::new()
        .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::errno(ErrorCode::Denied)))
        .rule(
            RuleBuilder::syscall(Syscall::DebugPrint)
                .arg(0, ArgOp::Eq, LOUD_CONSOLE)
                .arg(3, ArgOp::Gt, 48)
                .action(Action::Notify),
        )
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::Notify))
        .encode(&mut buffer);
    let result = filter
        .map_err(|_| ErrorCode::InvalidArgument)
        .and_then(|bytes| {
            sdk::syscall::retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1)?;
            FILTER.load(bytes)?;
            APP_TCB.attach_filter(FILTER, Some(SERVER))
        });
    match result {
        Ok(()) => {
            println!("confining the app: signal -> Errno(Denied); poll, and prints over 48 bytes through");
            println!(
                "  its second console capability (slot {LOUD_CONSOLE}) -> ask the policy server"
            );
            0
        }
        Err(error) => {
            println!("could not confine the app: {}", error.describe());
            1
        }
    }
}

/// The reference policy server, rules compiled in from
/// `servers/policy/rules.txt`; it prints each decision.
pub fn policy_server() -> i32 {
    let mut server = match policy_server::RuleServer::new(policy_server::RULES, Console) {
        Ok(server) => server,
        Err(error) => {
            println!("rules.txt line {}: {}", error.line, error.reason);
            return 1;
        }
    };
    println!(
        "serving {} rules from servers/policy/rules.txt",
        server.rules().rules().len()
    );
    match sdk::policy_server::serve(SERVER, &mut server) {
        Ok(()) => 0,
        Err(error) => {
            println!("stopped: {}", error.describe());
            2
        }
    }
}

/// Each outcome a confined thread can see; returns 0 when each was the
/// expected one.
pub fn app() -> i32 {
    let mut failures = 0;
    let mut expect = |what: &str, got: Result<u64, ErrorCode>, want: Result<u64, ErrorCode>| {
        let verdict = if got == want {
            "as expected"
        } else {
            "UNEXPECTED"
        };
        match got {
            Ok(value) => println!("  {what}: ok ({value:#x}), {verdict}"),
            Err(error) => println!(
                "  {what}: error {} ({}), {verdict}",
                error.name(),
                error.describe()
            ),
        }
        failures += i32::from(got != want);
    };
    println!("a confined app:");
    expect(
        "null (no rule: allowed in the vector)",
        sdk::syscall::null().map(|()| 0),
        Ok(0),
    );
    expect(
        "a short print (no rule)",
        sdk::syscall::debug_print(b"  hello, politely\n").map(|()| 0),
        Ok(0),
    );
    expect(
        "signal (a filter rule refuses it)",
        ipc::signal(NOTIFICATION).map(|()| 0),
        Err(ErrorCode::Denied),
    );
    let long =
        b"  forwarded print: the server keeps 48 bytes --\n and drops this part of the line\n";
    let copied =
        sdk::syscall::cnode::copy(abi::boot_program::CNODE_SLOT, CONSOLE_SLOT, LOUD_CONSOLE);
    expect(
        "a copy of its console capability",
        copied.map(|()| 0),
        Ok(0),
    );
    expect(
        "an 81-byte print through it (forwarded: clamped to 48)",
        sdk::syscall::debug_print_raw_via(LOUD_CONSOLE, long.as_ptr() as u64, long.len() as u64)
            .map(|()| 0),
        Ok(0),
    );
    expect(
        "poll (forwarded: the server answers for the kernel)",
        ipc::poll(NOTIFICATION),
        Ok(0x77),
    );
    // Done: a plain message (not a policy request) ends the server.
    let _ = ipc::send(SERVER, &Message::new(STOP, &[]));
    failures
}
