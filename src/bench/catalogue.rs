//! The one table that ties our benchmarks to their peers and goals: what
//! each row measures, the Linux figure for the same kind of work, seL4's
//! reference number, and the issue's target.
//!
//! The Linux numbers are the `icount-a` column of the Linux peer anchor
//! (`shared/peers/linux/README.md`): Debian's `linux-image-6.1.0-57-arm64`
//! 6.1.192-3 on the same QEMU (`virt`, Cortex-A72, `-icount shift=0`),
//! instructions per operation, user and kernel together. The row that
//! stands for a benchmark follows that README's "analog in our kernel"
//! column. seL4's numbers are the ones issue 7 quotes (release build with
//! the fastpath, same QEMU and CPU, measured the same way).
//!
//! Rows for benchmarks the guest does not run yet are kept here on
//! purpose: the generated docs show them as "not yet measured", so the
//! page says what is still missing.

use super::target::Target;

/// A Linux benchmark row that does the same kind of work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinuxPeer {
    /// The row's name in the peer README.
    pub row: &'static str,
    /// Instructions per operation (`icount-a`, or the boot named in `boot`).
    pub instructions: f64,
    /// The boot it comes from when it is not the main one (e.g. `audit=1`).
    pub boot: Option<&'static str>,
}

/// One of our benchmarks, with everything the docs show beside it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CatalogueEntry {
    /// The guest's benchmark name.
    pub name: &'static str,
    /// What one operation is.
    pub what: &'static str,
    /// The Linux rows for the same kind of work, closest analog first.
    pub linux: &'static [LinuxPeer],
    /// seL4's reference number for the same operation, as text.
    pub sel4: Option<&'static str>,
    /// The issue's goal for the median.
    pub target: Option<Target>,
}

const fn linux(row: &'static str, instructions: f64) -> LinuxPeer {
    LinuxPeer {
        row,
        instructions,
        boot: None,
    }
}

const GETPID: LinuxPeer = linux("getpid", 509.2);
const FUTEX_PROCS_RT: LinuxPeer = linux("futex_procs_pingpong_rt", 14511.3);
const PIPE_RT: LinuxPeer = linux("pipe_pingpong_rt", 15518.7);
/// getpid under a one-instruction `RET_ALLOW` filter, and under an arch
/// check and five number compares: Linux's seccomp action cache skips
/// the program for both, so they cost the same (+234 over `getpid_child`,
/// 509.2: the syscall leaves Linux's fast path for its work path).
const GETPID_SECCOMP_ALLOW_ALL: LinuxPeer = linux("getpid_seccomp_allow_all", 743.4);
const GETPID_SECCOMP_CHECK5: LinuxPeer = linux("getpid_seccomp_check5", 743.4);

/// Names: IPC rows are between two address spaces unless they end in
/// `_same_as`; `_slow` rows force the slow path with a message one word
/// too long for registers.
///
/// The IPC rows other rows name (their targets or the slow paths' rows).
const IPC_ROUND_TRIP: &str = "ipc_round_trip";
/// The fast-path Call (a constant-Allow filter's target is counted on it).
const IPC_CALL_FAST: &str = "ipc_call_one_way";
/// The fast-path ReplyRecv.
const IPC_REPLY_RECV_FAST: &str = "ipc_reply_recv_one_way";

/// Every benchmark the docs list, in the order they are shown.
pub const CATALOGUE: &[CatalogueEntry] = &[
    CatalogueEntry {
        name: "floor_svc_eret",
        what: "SVC whose benchmark-only handler only checks ESR_EL1.EC and x8, then does ERET: the architecture's floor",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "null_syscall",
        what: "a syscall that does nothing, no work flags",
        linux: &[GETPID],
        sel4: Some("91"),
        target: Some(Target::AtMost(40)),
    },
    CatalogueEntry {
        name: "null_syscall_scale_100",
        what: "null_syscall with 100 extra endpoints and capabilities alive (must stay flat)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "null_syscall_scale_1000",
        what: "null_syscall with 1000 extra endpoints and capabilities alive (must stay flat)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "null_syscall_scale_10000",
        what: "null_syscall with 10000 extra endpoints and capabilities alive (must stay flat)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "syscall_slow_path_error",
        what: "a syscall through the generic (non-fast) path that returns an error",
        linux: &[],
        sel4: None,
        target: Some(Target::AtMost(130)),
    },
    CatalogueEntry {
        name: "yield_no_switch",
        what: "yield with no other thread ready",
        linux: &[],
        sel4: None,
        target: Some(Target::AtMost(160)),
    },
    CatalogueEntry {
        name: "yield_switch_round_trip",
        what: "two threads yield to each other: one round trip, two switches",
        linux: &[],
        sel4: None,
        target: Some(Target::AtMost(350)),
    },
    CatalogueEntry {
        name: "ipc_call_one_way_same_as",
        what: "Call, client to server, same address space (read in the sender before, in the receiver after)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: IPC_CALL_FAST,
        what: "Call, client to server, different address spaces, fast path: from the counter read just before the client's svc (its first message word) to the server's read just after its ReplyRecv returns (sdk::timing::stamped_ipc; one mov and the svc besides the kernel)",
        linux: &[],
        sel4: Some("245"),
        target: Some(Target::AtMost(120)),
    },
    CatalogueEntry {
        name: "ipc_call_one_way_scale_100",
        what: "ipc_call_one_way with 100 extra endpoints and capabilities alive (must stay flat)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_call_one_way_scale_1000",
        what: "ipc_call_one_way with 1000 extra endpoints and capabilities alive (must stay flat)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_call_one_way_scale_10000",
        what: "ipc_call_one_way with 10000 extra endpoints and capabilities alive, in a radix-14 CNode (must stay flat)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_call_one_way_threads_10000",
        what: "ipc_call_one_way with 10000 extra threads alive (inactive TCBs retyped from the client's Untyped, each with its capability; must stay flat; the scale rows' client)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_reply_recv_one_way_same_as",
        what: "ReplyRecv, server to client, same address space",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: IPC_REPLY_RECV_FAST,
        what: "ReplyRecv, server to client, different address spaces, fast path, timed as ipc_call_one_way in the other direction",
        linux: &[],
        sel4: Some("269"),
        target: Some(Target::AtMost(120)),
    },
    CatalogueEntry {
        name: "ipc_round_trip_same_as",
        what: "Call + ReplyRecv round trip, same address space (read in the caller)",
        linux: &[linux("futex_threads_pingpong_rt", 12436.8)],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: IPC_ROUND_TRIP,
        what: "Call + ReplyRecv round trip, different address spaces: the client's counter reads around its svc, so the server's loop between its two svcs counts too (about 24 instructions: the sample's store, one compare of the raw message info, the reply's registers)",
        linux: &[FUTEX_PROCS_RT, PIPE_RT],
        sel4: None,
        target: Some(Target::AtMost(250)),
    },
    CatalogueEntry {
        name: "ipc_slow_call_one_way",
        what: "Call one-way forced onto the slow path (a message one word too long for registers)",
        linux: &[],
        sel4: Some("~690–760"),
        target: Some(Target::AtMost(400)),
    },
    CatalogueEntry {
        name: "ipc_slow_reply_recv_one_way",
        what: "ReplyRecv one-way on the slow path (a message one word too long for registers)",
        linux: &[],
        sel4: None,
        target: Some(Target::AtMost(400)),
    },
    CatalogueEntry {
        name: "ipc_slow_round_trip",
        what: "Call + ReplyRecv round trip on the slow path",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_call_one_way_higher_prio",
        what: "Call one-way to a receiver of higher priority, register-only, fast path: from the client's counter read before its svc to the server's read when its ReplyRecv returns",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_send_lower_prio",
        what: "Send to a waiting receiver of lower priority (no switch), one register word: the sender's svc until it is back in the sender; the receiver is made ready, not run (a notification it signals after each message is checked empty right after the Send)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "notification_round_trip",
        what: "Signal to Wait wake-up across address spaces and back (two wake-ups; a notification carries no timestamp for a one-way time)",
        linux: &[],
        sel4: None,
        target: Some(Target::AtMost(600)),
    },
    CatalogueEntry {
        name: "null_syscall_filtered_allow",
        what: "null_syscall from a thread with a filter attached whose verdict for Null is a constant Allow (its one rule refuses Yield): still answered in the vector, which reads the no-entry-work mask because the work word is not zero",
        linux: &[GETPID_SECCOMP_ALLOW_ALL, GETPID_SECCOMP_CHECK5],
        sel4: None,
        target: Some(Target::AddsAtMost {
            base: "null_syscall",
            extra: 5,
        }),
    },
    CatalogueEntry {
        name: "syscall_policy_errno",
        what: "Yield refused by a cached Errno verdict: the generic entry and the verdict cache, no dispatch (compare syscall_slow_path_error)",
        linux: &[],
        sel4: None,
        target: Some(Target::AtMost(150)),
    },
    CatalogueEntry {
        name: "syscall_policy_evaluated_allow",
        what: "null syscall whose verdict is not cached (a rule on x2 could refuse it): the vector's policy fast path walks the thread's compiled verdicts on the live registers, allows, and answers it as for a thread without work",
        linux: &[linux("getpid_seccomp_check5_arg_nocache", 881.5)],
        sel4: None,
        target: Some(Target::AtMost(180)),
    },
    CatalogueEntry {
        name: "ipc_call_one_way_filtered",
        what: "ipc_call_one_way with a filter on client and server whose verdict for Call and ReplyRecv is a constant Allow: must stay on the fast path",
        linux: &[],
        sel4: None,
        target: Some(Target::AddsAtMost {
            base: IPC_CALL_FAST,
            extra: 5,
        }),
    },
    CatalogueEntry {
        name: "ipc_reply_recv_one_way_filtered",
        what: "ipc_reply_recv_one_way between the same filtered threads: must stay on the fast path",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_round_trip_filtered",
        what: "ipc_round_trip between the same filtered threads",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "policy_notify_round_trip",
        what: "null syscall whose verdict is Notify, allowed by the policy server: the request IPC, the server's ReplyRecv, the svc run again (filters consulted again, that Notify waived once)",
        linux: &[
            linux("getppid_seccomp_notif_continue", 11335.5),
            linux("getppid_seccomp_notif_reply", 10771.8),
        ],
        sel4: None,
        target: Some(Target::AtMost(1000)),
    },
    CatalogueEntry {
        name: "policy_allow_with_round_trip",
        what: "null syscall whose verdict is Notify, allowed by the policy server with new x2..x7: the request IPC, the server's ReplyRecv, the filters judging the new arguments, the call run",
        linux: &[linux("getppid_seccomp_notif_continue", 11335.5)],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "policy_notify_64_bytes",
        what: "a 64-byte DebugPrint whose verdict is Notify: its bytes copied once into the kernel, carried to the server with the request, which answers with a result (emulate; nothing prints). Linux's supervisor would also have to read the bytes (process_vm_readv, not in the figure) and could not rely on them (TOCTOU)",
        linux: &[linux("getppid_seccomp_notif_reply", 10771.8)],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_call_one_way_bytes_judged",
        what: "a Call with 14 words (64 bytes in IPC buffer words 6..=13) judged by a byte rule (bytes == pattern) and allowed: the copy, the rule, the slow IPC path sending the judged copy; client to server",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_reply_recv_one_way_bytes_judged",
        what: "the register-only reply to ipc_call_one_way_bytes_judged (the server is not judged on bytes); server to client",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_round_trip_bytes_judged",
        what: "ipc_call_one_way_bytes_judged and its reply: the client's round trip",
        linux: &[linux("getpid_seccomp_check5_arg_nocache", 881.5)],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "trace_syscall_entry_exit",
        what: "a traced null syscall: its entry and exit stops, each answered \"continue\" by the tracer (two IPC round trips)",
        linux: &[
            linux("getpid_ptrace_syscall", 20845.1),
            linux("getpid_ptrace_syscall_getregs", 24613.2),
        ],
        sel4: None,
        target: Some(Target::AtMost(1500)),
    },
    CatalogueEntry {
        name: "audit_lossy_null_syscall",
        what: "an audited null syscall, lossy mode, the ring drained after each (as by an audit server keeping up): every record written, none dropped",
        linux: &[LinuxPeer {
            row: "getpid",
            instructions: 702.3,
            boot: Some("audit=1"),
        }],
        sel4: None,
        target: Some(Target::AtMost(300)),
    },
    CatalogueEntry {
        name: "user_dispatch_redirect",
        what: "a redirected syscall through the thread's handler and back: a Null made while the selector blocks, from the counter read before the svc (entry, frame written, handler entered; the handler counts it and sets x0) through UserDispatchReturn to the read after the svc",
        linux: &[],
        sel4: None,
        target: Some(Target::AtMost(400)),
    },
    // The SMP rows (init/src/bench/smp.rs): threads of one address space,
    // so their single-CPU peers are the `_same_as` rows. seL4's SMP kernel
    // also takes one big lock; its documented cost is a Call about 30-40 %
    // dearer than on its single-core kernel: a cost of the lock on one
    // CPU, not a cross-core figure (docs/bench/smp.md).
    CatalogueEntry {
        name: "ipc_cross_core_round_trip",
        what: "Call + ReplyRecv round trip, client on CPU 0, server on CPU 1 (slow path, an SGI each way), read in the caller on CPU 0: under icount every instruction any core executed meanwhile, both wake-ups and idles included (compare ipc_round_trip_same_as)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_cross_core_call_one_way",
        what: "HALF of each ipc_cross_core_round_trip sample, not a one-way measurement (each CPU's counter starts at its own boot, so no read on one CPU can be subtracted from one on another)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_throughput_1_pair",
        what: "fast-path round trips of one client/server pair on CPU 0, in bursts of 100 started and awaited by the benchmark thread (its signals included), timed on CPU 0: instructions of the whole machine per round trip",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_throughput_2_pairs",
        what: "ipc_throughput_1_pair with two pairs, pair i on CPU i, at once: per round trip of either pair (icount runs the cores one at a time: a cost per round trip, not a speed-up)",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "ipc_throughput_4_pairs",
        what: "ipc_throughput_1_pair with four pairs, one per CPU, at once: per round trip of any pair",
        linux: &[],
        sel4: None,
        target: None,
    },
    // The rseq rows (init/src/bench/rseq.rs): one thread with its rseq
    // area registered.
    CatalogueEntry {
        name: "rseq_percpu_increment",
        what: "one increment of a per-CPU counter through the SDK's restartable sequence (the call, the descriptor stored, the CPU id read, load, add, store, the descriptor cleared, the return), between two counter reads",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "atomic_increment",
        what: "one increment of a shared counter with an exclusive load/store loop (AtomicU64::fetch_add, relaxed), uncontended, between two counter reads",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "lock_increment",
        what: "one increment of a counter under a spin lock (spin::Mutex: take, add, release), uncontended, between two counter reads",
        linux: &[],
        sel4: None,
        target: None,
    },
    CatalogueEntry {
        name: "null_syscall_rseq",
        what: "null_syscall from a thread with an rseq area registered and no event pending",
        linux: &[],
        sel4: None,
        target: Some(Target::AddsAtMost {
            base: "null_syscall",
            extra: 0,
        }),
    },
    CatalogueEntry {
        name: "syscall_slow_path_error_rseq",
        what: "syscall_slow_path_error from a thread with an rseq area registered and no event pending",
        linux: &[],
        sel4: None,
        target: Some(Target::AddsAtMost {
            base: "syscall_slow_path_error",
            extra: 4,
        }),
    },
];

/// The catalogue entry for `name`, if it has one.
pub fn entry(name: &str) -> Option<&'static CatalogueEntry> {
    CATALOGUE.iter().find(|entry| entry.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::is_benchmark_name;

    #[test]
    fn names_are_unique_snake_case_and_targets_refer_to_listed_rows() {
        for (index, row) in CATALOGUE.iter().enumerate() {
            assert!(is_benchmark_name(row.name), "{}", row.name);
            assert!(
                CATALOGUE[..index]
                    .iter()
                    .all(|other| other.name != row.name),
                "{} listed twice",
                row.name
            );
            if let Some(Target::AddsAtMost { base, .. } | Target::TimesAtMost { base, .. }) =
                row.target
            {
                assert!(entry(base).is_some(), "{}'s target names {base}", row.name);
            }
        }
    }

    #[test]
    fn the_issue_targets_are_all_here() {
        let with_target = CATALOGUE
            .iter()
            .filter(|entry| entry.target.is_some())
            .count();
        // Issue 22's table: Call, ReplyRecv, the round trip, the two slow
        // one-ways, the generic path's error, both yields, the
        // notification round trip, the errno and evaluated-allow policy
        // rows, Notify, tracing, audit, user dispatch; kept from before:
        // the null syscall and constant Allow (null syscall and IPC Call);
        // rseq: the null syscall and the slow path with an area registered.
        assert_eq!(with_target, 20);
        assert_eq!(
            entry("null_syscall")
                .and_then(|entry| entry.linux.first())
                .map(|peer| peer.instructions),
            Some(509.2)
        );
    }
}
