//! The demo's policy scene: a supervisor confines an app with a filter,
//! traces it and audits it; the reference policy server answers what the
//! filter forwards, the reference tracer prints each syscall strace-like,
//! and the reference audit server prints the app's audit records.
//!
//! A boot-suite case has at most four threads, so the supervisor is also
//! the audit server: once the app is confined, traced and audited, it
//! steps below the app and reads the ring when the app has ended.
//! Priorities (`DEMO_CASES`): supervisor, policy server, tracer above the
//! app, so each is set up and waiting before the app's first syscall.

use crate::programs::{CNODE_SLOT, CONSOLE_SLOT};
use abi::audit::{AuditMode, DROPPED_OFFSET, RING_SLOTS};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use audit_server::{Entry, Line, Reader};
use sdk::console::Console;
use sdk::ipc::{self, Cptr, Message};
use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
use sdk::println;
use sdk::tcb::{FilterCap, FilterServer, Tcb};
use sdk::trace::{self, Next, Stop, TraceServer};
use sdk::vspace::{Frame, MappedFrame, VSpace};

/// Every demo thread's capability to the endpoint it serves or uses:
/// the policy server's (supervisor, policy server, app), the tracer's
/// (tracer), the audit server's (audit server).
const SERVER: Cptr = Cptr(2);
/// The supervisor's capability to the app's TCB (policy and trace rights).
const APP_TCB: Tcb = Tcb(Cptr(3));
/// The supervisor's Untyped memory.
const UNTYPED: u64 = 4;
/// The supervisor's capability to the audit notification.
const AUDIT_NOTIFICATION: Cptr = Cptr(5);
/// The supervisor's capability to the tracer's endpoint (write, badged).
const TRACER_ENDPOINT: Cptr = Cptr(6);
/// Where the supervisor puts the app's filter.
const FILTER: FilterCap = FilterCap(Cptr(8));
/// Where the supervisor puts the audit ring.
const RING: Frame = Frame(Cptr(9));
/// The supervisor's own TCB (it steps below the app to read the ring).
const OWN_TCB: Tcb = Tcb(Cptr(10));
/// The supervisor's own address space (the ring is mapped into it).
const OWN_VSPACE: VSpace = VSpace(Cptr(11));
/// The supervisor's capability to the policy server's TCB (read): the
/// thread that answers the filter's requests.
const POLICY_SERVER_TCB: Tcb = Tcb(Cptr(12));
/// The badge of every audit record of the app.
const APP_AUDIT_BADGE: u64 = 0xa99;
/// A notification the app polls and signals.
const NOTIFICATION: Cptr = Cptr(5);
/// The app's second console capability: its long prints are forwarded.
const LOUD_CONSOLE: u64 = 6;
/// The label of the message that ends the policy server.
const STOP: u64 = 0x5709;
/// Where `systems/demo.toml` maps the policy server's rules file
/// (`servers/policy/rules.txt`) into the driver, which copies it into a
/// Frame for the server (`CaseObject::File`).
pub const RULES_IN_DRIVER: u64 = 0x3000_0000;
/// The policy server's capability to that Frame (read).
const RULES_FRAME: Frame = Frame(Cptr(3));
/// The policy server's own address space, where it maps its rules.
const SERVER_VSPACE: VSpace = VSpace(Cptr(4));
/// Most bytes of rules the policy server reads: the Frame's page, less
/// the length word.
const MAX_RULES_BYTES: usize = 4096 - 8;

/// Confines, traces and audits the app before it runs (the supervisor
/// is the most urgent thread of the scene), then reads the audit ring.
pub fn supervisor() -> i32 {
    let mut buffer = [0u8; 512];
    let filter = FilterBuilder::new(Action::Allow)
        .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::errno(ErrorCode::Denied)))
        .rule(
            RuleBuilder::syscall(Syscall::DebugPrint)
                .arg(0, ArgOp::Eq, LOUD_CONSOLE)
                .arg(3, ArgOp::Gt, 48)
                .action(Action::Notify),
        )
        .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::Notify))
        .encode(&mut buffer);
    let confined = filter
        .map_err(|_| ErrorCode::InvalidArgument)
        .and_then(|bytes| {
            sdk::syscall::retype(UNTYPED, CapType::Filter, 0, FILTER.0 .0, 1)?;
            FILTER.load(bytes)?;
            APP_TCB.attach_filter(
                FILTER,
                Some(FilterServer {
                    endpoint: SERVER,
                    thread: POLICY_SERVER_TCB,
                }),
            )
        });
    if let Err(error) = confined {
        println!("could not confine the app: {}", error.describe());
        return 1;
    }
    println!("confining the app: signal -> Errno(Denied); poll, and prints over 48 bytes through");
    println!("  its second console capability (slot {LOUD_CONSOLE}) -> ask the policy server");
    let watched = sdk::syscall::retype(UNTYPED, CapType::Frame, 0, RING.0 .0, 1)
        .and_then(|()| RING.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite))
        .and_then(|view| {
            APP_TCB.set_audit(
                RING,
                AUDIT_NOTIFICATION,
                Some(AuditMode::Lossy),
                APP_AUDIT_BADGE,
            )?;
            APP_TCB.attach_tracer(TRACER_ENDPOINT)?;
            Ok(view)
        });
    let mut view = match watched {
        Ok(view) => view,
        Err(error) => {
            println!("could not trace and audit the app: {}", error.describe());
            return 2;
        }
    };
    println!("tracing it (stops to the tracer), auditing it (a {RING_SLOTS}-record ring, lossy)");
    // Below the app from here: the ring is read once the app has ended.
    if OWN_TCB.set_priority(90).is_err() {
        return 3;
    }
    read_audit_ring(&mut view)
}

/// The reference audit server's reading (`servers/audit`): waits for
/// the ring's notification and prints each record, reporting every gap,
/// until the record of the app's `exit`.
fn read_audit_ring(ring: &mut MappedFrame) -> i32 {
    let mut reader = Reader::new();
    println!("[audit] the app's records:");
    loop {
        if ipc::wait(AUDIT_NOTIFICATION).is_err() {
            return 4;
        }
        while let Some(entry) = reader.next(ring) {
            let Entry::Record { record, gap } = entry else {
                println!("[audit] a garbled record");
                continue;
            };
            if gap > 0 {
                println!("[audit] {gap} records lost before #{}", record.sequence);
            }
            println!("[audit] {}", Line(&record));
            if record.syscall == Syscall::Exit.number() {
                match reader.missing {
                    0 => println!("[audit] {} records, none lost", reader.records),
                    missing => println!(
                        "[audit] {} records, {missing} lost ({} dropped by the kernel)",
                        reader.records,
                        ring.read_u64(DROPPED_OFFSET)
                    ),
                }
                return 0;
            }
        }
    }
}

/// The reference policy server, reading its rules at run time from the
/// file the driver was given (`servers/policy/rules.txt`, which the host
/// tool checked); it prints each decision.
pub fn policy_server() -> i32 {
    // The file as the root lays it out: its length, then its bytes.
    let mut text = [0u8; MAX_RULES_BYTES];
    let length = match RULES_FRAME.map_view(SERVER_VSPACE, FRAME_MAP_START, MapRights::Read) {
        Ok(rules) => {
            let length = (rules.read_u64(0) as usize).min(MAX_RULES_BYTES);
            for (i, byte) in text[..length].iter_mut().enumerate() {
                *byte = rules.read_u8(8 + i as u64);
            }
            length
        }
        Err(error) => {
            println!("cannot map the rules file: {}", error.describe());
            return 1;
        }
    };
    let Ok(text) = core::str::from_utf8(&text[..length]) else {
        println!("rules.txt is not UTF-8");
        return 1;
    };
    let mut server = match policy_server::RuleServer::new(text, Console) {
        Ok(server) => server,
        Err(error) => {
            println!("rules.txt {error}");
            return 1;
        }
    };
    let rules = server.rules();
    match rules.default() {
        Some((_, line)) => println!(
            "serving {} rules and the default at line {line} from rules.txt, read at run time",
            rules.rules().len()
        ),
        None => println!(
            "serving {} rules from rules.txt, read at run time (no default: refused)",
            rules.rules().len()
        ),
    }
    match sdk::policy_server::serve(SERVER, &mut server) {
        Ok(()) => 0,
        Err(error) => {
            println!("stopped: {}", error.describe());
            2
        }
    }
}

/// The demo's tracer: the reference tracer's lines, every stop continued;
/// it ends after the app's `exit`.
struct DemoTracer(tracer::Tracer);

impl TraceServer for DemoTracer {
    fn stop(&mut self, stop: &Stop) -> Next {
        if let Some(event) = self.0.stop(stop) {
            println!("{}", self.0.line(&event));
        }
        if stop.is_entry() && stop.syscall() == Some(Syscall::Exit) {
            Next::AnswerThenStop(trace::resume(false))
        } else {
            Next::Answer(trace::resume(false))
        }
    }
}

/// The reference tracer (`servers/tracer`), told the app's slots.
pub fn tracer() -> i32 {
    let names = tracer::Tracer::new()
        .name_slot(CNODE_SLOT, "cnode")
        .name_slot(CONSOLE_SLOT, "console")
        .name_slot(SERVER.0, "ep")
        .name_slot(NOTIFICATION.0, "ntfn")
        .name_slot(LOUD_CONSOLE, "console");
    println!("tracing the app: a line per syscall, arguments at entry, result at exit");
    match trace::serve(SERVER, &mut DemoTracer(names)) {
        Ok(()) => 0,
        Err(error) => {
            println!("stopped: {}", error.describe());
            1
        }
    }
}

/// The app's calls, each checked against the outcome the rules give; the
/// tracer and the audit server show them. Returns how many were not as
/// expected.
pub fn app() -> i32 {
    let mut failures = 0;
    let mut expect = |what: &str, got: Result<u64, ErrorCode>, want: Result<u64, ErrorCode>| {
        if got != want {
            println!("UNEXPECTED: {what}: {got:?}, not {want:?}");
            failures += 1;
        }
    };
    expect("null", sdk::syscall::null().map(|()| 0), Ok(0));
    expect(
        "a short print",
        sdk::syscall::debug_print(b"  hello, politely\n").map(|()| 0),
        Ok(0),
    );
    expect(
        "signal",
        ipc::signal(NOTIFICATION).map(|()| 0),
        Err(ErrorCode::Denied),
    );
    let long =
        b"  forwarded print: the server keeps 48 bytes --\n and drops this part of the line\n";
    let copied = sdk::syscall::cnode::copy(CNODE_SLOT, CONSOLE_SLOT, LOUD_CONSOLE);
    expect(
        "a copy of the console capability",
        copied.map(|()| 0),
        Ok(0),
    );
    expect(
        "a long print through it",
        sdk::syscall::debug_print_raw_via(LOUD_CONSOLE, long.as_ptr() as u64, long.len() as u64)
            .map(|()| 0),
        Ok(0),
    );
    expect("poll", ipc::poll(NOTIFICATION), Ok(0x77));
    if failures == 0 {
        println!("its 6 calls each had the outcome the rules give");
    }
    // Done: a plain message (not a policy request) ends the server.
    let _ = ipc::send(SERVER, &Message::new(STOP, &[]));
    failures
}
