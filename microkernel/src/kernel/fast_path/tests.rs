//! Tests of `fast_path`: what the assembly relies on that the host can
//! check.

use crate::thread::Thread;
use abi::Syscall;

/// `vectors.s` sends an SVC to the IPC fast path's two entries only when
/// `x8` is exactly `SYSCALL_CALL` or `SYSCALL_REPLY_RECV`: `Call` to
/// the one, `ReplyRecv` to the other; `Yield`, `Signal` and `Wait` to
/// their own paths.
#[test]
fn the_vector_sends_exactly_call_and_reply_recv_here() {
    let vectors = include_str!("../../../../arch/src/cpu/vectors.s");
    // The numbers are const operands (`arch/src/cpu/mod.rs`) of the
    // syscalls themselves.
    let operands = include_str!("../../../../arch/src/cpu/mod.rs");
    for (name, syscall) in [
        ("SYSCALL_CALL", Syscall::Call),
        ("SYSCALL_REPLY_RECV", Syscall::ReplyRecv),
        ("SYSCALL_YIELD", Syscall::Yield),
    ] {
        assert!(vectors.contains(&format!(".equ {name}, {{{name}}} ")));
        assert!(operands.contains(&format!(
            "pub const {name}: u64 = abi::Syscall::{syscall:?}.number();"
        )));
    }
    let fast_path = include_str!("../../ipc_fast_path.s");
    for (number, entry, slow) in [
        (
            "SYSCALL_CALL",
            "portcullis_ipc_fast_call",
            "el0_ipc_call_slow",
        ),
        (
            "SYSCALL_REPLY_RECV",
            "portcullis_ipc_fast_reply_recv",
            "el0_ipc_reply_recv_slow",
        ),
    ] {
        let test = format!("cmp     x8, #{number}\n    b.eq    {entry}\n");
        assert!(vectors.contains(&test), "{number} goes to {entry}");
        assert_eq!(vectors.matches(&format!("b.eq    {entry}")).count(), 1);
        // Each entry first sends a message longer than the registers to
        // its own syscall's IPC entry.
        assert!(fast_path.contains(&format!(
            "{entry}:\n    fits_in_registers_or_slow {slow}\n    save_and_lock\n"
        )));
    }
    // Yield goes to its own path, after the two IPC numbers; the numbers
    // above ReplyRecv's skip its test.
    let test = "b.eq    portcullis_ipc_fast_reply_recv\n    b.hi    el0_svc_above_reply_recv\n    cmp     x8, #SYSCALL_YIELD\n    b.eq    portcullis_yield_fast\n";
    assert!(vectors.contains(test));
    assert_eq!(vectors.matches("b.eq    portcullis_yield_fast").count(), 1);
    assert!(include_str!("../../yield_fast_path.s").contains("portcullis_yield_fast:\n"));
    // Signal and Wait (the next number) go to the notification path, with
    // x9 = 0 for Signal and 1 for Wait; nothing else does (any number
    // above Wait's, and the capability syscalls between, go to the lean
    // entry, which sends a thread with work on to the generic one).
    assert_eq!(Syscall::Wait.number(), Syscall::Signal.number() + 1);
    assert!(Syscall::Signal.number() > Syscall::ReplyRecv.number());
    assert!(Syscall::Yield.number() < Syscall::ReplyRecv.number());
    assert!(operands.contains("pub const SYSCALL_SIGNAL: u64 = abi::Syscall::Signal.number();"));
    let test = "el0_svc_above_reply_recv:\n    cmp     x8, #SYSCALL_SIGNAL + 1\n    b.hi    el0_svc_generic\n    sub     x9, x8, #SYSCALL_SIGNAL\n    cmp     x9, #1\n    b.ls    portcullis_notification_fast\n    b       el0_svc_generic\n";
    assert!(vectors.contains(test));
    assert!(vectors.contains("el0_svc_generic:\n    cbnz    x10, el0_sync_slow_x9_x10_saved\n"));
    assert_eq!(vectors.matches("portcullis_notification_fast").count(), 1);
    let notification = include_str!("../../notification_fast_path.s");
    assert!(notification.contains("portcullis_notification_fast:\n"));
    assert!(notification.contains("    cbnz    x9, notification_wait\n"));
}

/// The IPC entry (`kernel/ipc_entry.rs`): each of its stubs saves the
/// whole frame and calls its own syscall's kernel half, then the generic
/// entry (reached only when that half declines: it returns); the fast
/// path's refusal picks the half by `x8`, which the vector tested to be
/// `Call`'s or `ReplyRecv`'s number.
#[test]
fn the_ipc_entry_takes_each_syscall_to_its_own_half_then_the_generic_entry() {
    let vectors = include_str!("../../../../arch/src/cpu/vectors.s");
    let stub = ".macro ipc_entry_stub kernel_half\n    save_user_context x9_x10_saved=1\n    bl      \\kernel_half\n    bl      portcullis_el0_sync\n    b       .\n.endm\n";
    assert!(vectors.contains(stub));
    for (slow, half) in [
        ("el0_ipc_call_slow", "portcullis_el0_ipc_call"),
        ("el0_ipc_reply_recv_slow", "portcullis_el0_ipc_reply_recv"),
    ] {
        assert!(vectors.contains(&format!("{slow}:\n    ipc_entry_stub {half}\n")));
    }
    let fast_path = include_str!("../../ipc_fast_path.s");
    let refusal = "    cmp     x8, #SYSCALL_CALL\n    b.ne    1f\n    bl      portcullis_el0_ipc_call\n    bl      portcullis_el0_sync\n1:  bl      portcullis_el0_ipc_reply_recv\n    bl      portcullis_el0_sync\n    b       .\n";
    assert!(fast_path.contains(&format!(
        "ipc_refuse_locked:\n    stlr    xzr, [x19]\nipc_refuse:\n    refusal_save\n{refusal}"
    )));
    assert!(fast_path.contains(".macro refusal_save\n    save_arguments_and_temporaries\n    mov     x0, sp\n    mrs     x21, tpidr_el1\n    mov     sp, x21\n.endm\n"));
    // The IPC path refuses only to its own labels (whose x8 test holds
    // for its two numbers alone); the trace and policy request paths,
    // which take any number, only to the generic entry's.
    let (path, labels) = fast_path.split_once("// What a refusal saves").unwrap();
    let code = path
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""));
    for word in code.flat_map(|line| line.split(|c: char| !(c.is_alphanumeric() || c == '_'))) {
        assert!(word != "refuse" && word != "refuse_locked", "{word}");
    }
    assert!(labels.contains(
        "refuse_locked:\n    stlr    xzr, [x19]\nrefuse:\n    refusal_save\n    bl      portcullis_el0_sync\n    b       .\n"
    ));
    for other in [
        include_str!("../../trace_fast_path.s"),
        include_str!("../../policy_request_fast_path.s"),
    ] {
        assert!(!other.contains("ipc_refuse"));
    }
    let halves = include_str!("../../syscall_entries.rs");
    for (half, reply_recv) in [
        ("portcullis_el0_ipc_call", false),
        ("portcullis_el0_ipc_reply_recv", true),
    ] {
        assert!(halves.contains(&format!(
            "extern \"C\" fn {half}(_context: *mut UserContext) {{\n    el0_ipc::<{reply_recv}>()\n}}"
        )));
    }
}

/// `vectors.s` sends an SVC to the trace fast path only from a thread
/// whose work word is `TRACE` alone (no exit work, no single step, no
/// other entry work) and whose number is below 64 (the way through
/// `el0_refused_or_slow`, which sends a larger one elsewhere); the path
/// saves the whole frame first.
#[test]
fn the_vector_sends_only_a_thread_traced_alone_to_the_trace_path() {
    let vectors = include_str!("../../../../arch/src/cpu/vectors.s");
    let operands = include_str!("../../../../arch/src/cpu/mod.rs");
    assert!(operands.contains("pub const WORK_TRACE: u64 = entry::WorkFlags::TRACE.bits();"));
    assert!(vectors.contains(".equ WORK_TRACE, {WORK_TRACE} "));
    let test = "el0_traced_or_slow:\n    cmp     x10, #WORK_TRACE\n    b.eq    portcullis_trace_entry_fast\n    b       el0_sync_slow_x9_x10_saved\n";
    assert!(vectors.contains(test));
    assert_eq!(vectors.matches("portcullis_trace_entry_fast").count(), 1);
    assert_eq!(vectors.matches("el0_traced_or_slow").count(), 2);
    assert!(vectors.contains("tbz     x10, #WORK_USER_DISPATCH_BIT, el0_traced_or_slow\n"));
    assert!(vectors.contains(
        "el0_refused_or_slow:\n    cmp     x8, #64\n    b.hs    el0_dispatched_or_slow\n"
    ));
    let path = include_str!("../../trace_fast_path.s");
    assert!(path.contains("portcullis_trace_entry_fast:\n    stop_opening\n"));
    assert!(path.contains(
        ".macro stop_opening\n    save_arguments_and_temporaries\n    save_callee_saved\n"
    ));
    let common = include_str!("../../fast_path_common.s");
    assert!(common.contains(".macro save_arguments_and_temporaries\n    save_arguments\n    stp     x11, x12, [sp, #8 * 11]\n    stp     x13, x14, [sp, #8 * 13]\n    stp     x15, x16, [sp, #8 * 15]\n    stp     x17, x18, [sp, #8 * 17]\n.endm\n"));
    // The work word's test in the vector is the exact `TRACE`, one bit.
    assert_eq!(entry::WorkFlags::TRACE.bits().count_ones(), 1);
}

/// The assembly's one compare of the two keys (`partner_may_run`: the
/// difference below 256) is `Thread::fast_partner_of`: the same CPU, and
/// at least as urgent.
#[test]
fn the_key_compare_is_same_cpu_and_at_least_as_urgent() {
    for caller_cpu in 0..4u8 {
        for partner_cpu in 0..4u8 {
            for caller_priority in [0u8, 1, 100, 254, 255] {
                for partner_priority in [0u8, 1, 99, 100, 101, 255] {
                    let mut caller = Thread::EMPTY;
                    caller.set_affinity(caller_cpu);
                    caller.set_priority(caller_priority);
                    let mut partner = Thread::EMPTY;
                    partner.set_affinity(partner_cpu);
                    partner.set_priority(partner_priority);
                    assert_eq!(
                        partner.fast_partner_of(&caller),
                        caller_cpu == partner_cpu && partner_priority >= caller_priority,
                        "caller {caller_cpu}/{caller_priority}, partner {partner_cpu}/{partner_priority}"
                    );
                }
            }
        }
    }
}

/// The trace fast path gives the tracer the message info of an entry
/// stop as `StopMessage::info` makes it.
/// The vector sends a thread whose work word is `POLICY` alone to the
/// policy request fast path only for a number of its `asked` mask (below
/// 64: `el0_refused_or_slow` tests it first), which saves the whole frame
/// as the trace fast path does; every other number the lean entry does
/// not judge goes to the generic entry.
#[test]
fn the_vector_sends_only_an_asked_number_to_the_policy_request_path() {
    let vectors = include_str!("../../../../arch/src/cpu/vectors.s");
    let test = "el0_asked_or_slow:\n    ldr     x9, [sp, #ASKED_OFFSET]\n    lsr     x9, x9, x8\n    tbnz    x9, #0, portcullis_policy_request_fast\n    b       el0_sync_slow_x9_x10_saved\n";
    assert!(vectors.contains(test));
    assert_eq!(vectors.matches("portcullis_policy_request_fast").count(), 1);
    assert!(vectors.contains(
        "el0_judged_or_slow:\n    ldp     x9, x10, [sp, #LEAN_JUDGED_OFFSET]\n    lsr     x9, x9, x8\n    tbz     x9, #0, el0_asked_or_slow\n"
    ));
    assert!(vectors.contains("    cmp     x10, #WORK_POLICY\n    b.eq    el0_judged_or_slow\n"));
    let path = include_str!("../../policy_request_fast_path.s");
    assert!(path.contains("portcullis_policy_request_fast:\n    stop_opening\n"));
}

/// A policy request's message info is the one the assembly loads.
#[test]
fn a_policy_requests_message_info_is_the_requests() {
    assert_eq!(
        u64::from(abi::policy_request::PolicyRequest::info()),
        super::layout::POLICY_REQUEST_INFO
    );
}

#[test]
fn an_entry_stops_message_info_is_the_messages() {
    let stop = abi::trace::StopMessage {
        kind: abi::trace::StopKind::Entry,
        number: 0,
        regs: [0; 9],
        pc: 0,
        thread: 0,
        time: 0,
    };
    assert_eq!(u64::from(stop.info()), super::layout::STOP_ENTRY_INFO);
}
