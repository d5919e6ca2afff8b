//! The benchmark suite's shared vocabulary: row names and how the kernel
//! passes the run's parameters to the benchmark programs.
//!
//! The host runner selects rows and iterations with boot options
//! (`portcullis.bench.iterations=N`, `portcullis.bench.filter=TEXT`,
//! `portcullis.counter=instructions|cycles`); the kernel encodes them into
//! the program selector's parameter.

/// Every benchmark row, in the order they run. A row's index is its bit in
/// `BenchParameter::rows`. The rows come in pages of `ROWS_PER_PAGE`: a
/// program is told one page's rows (see `BenchParameter::encode_page`),
/// so the rows one case runs must all be in one page: page 0 is the
/// suite's single-CPU cases, page 1 the SMP and rseq rows
/// (`BENCH_SMP_CASES`).
pub const ROWS: [&str; 49] = [
    "floor_svc_eret",
    "null_syscall",
    "syscall_slow_path_error",
    "yield_no_switch",
    "yield_switch_round_trip",
    "ipc_call_one_way",
    "ipc_reply_recv_one_way",
    "ipc_round_trip",
    "ipc_slow_call_one_way",
    "ipc_slow_reply_recv_one_way",
    "ipc_slow_round_trip",
    "null_syscall_scale_100",
    "ipc_call_one_way_scale_100",
    "null_syscall_scale_1000",
    "ipc_call_one_way_scale_1000",
    "null_syscall_scale_10000",
    "ipc_call_one_way_scale_10000",
    "ipc_call_one_way_threads_10000",
    "notification_round_trip",
    "null_syscall_filtered_allow",
    "syscall_policy_errno",
    "syscall_policy_evaluated_allow",
    "ipc_call_one_way_filtered",
    "ipc_reply_recv_one_way_filtered",
    "ipc_round_trip_filtered",
    "policy_notify_round_trip",
    "ipc_call_one_way_bytes_judged",
    "ipc_reply_recv_one_way_bytes_judged",
    "ipc_round_trip_bytes_judged",
    "policy_notify_64_bytes",
    "policy_allow_with_round_trip",
    "audit_lossy_null_syscall",
    "trace_syscall_entry_exit",
    "ipc_call_one_way_higher_prio",
    "ipc_send_lower_prio",
    "user_dispatch_redirect",
    "ipc_call_one_way_same_as",
    "ipc_reply_recv_one_way_same_as",
    "ipc_round_trip_same_as",
    // Page 1: the SMP rows (init/src/bench/smp.rs).
    "ipc_cross_core_call_one_way",
    "ipc_cross_core_round_trip",
    "ipc_throughput_1_pair",
    "ipc_throughput_2_pairs",
    "ipc_throughput_4_pairs",
    // Page 1 too: the rseq rows (init/src/bench/rseq.rs).
    "rseq_percpu_increment",
    "atomic_increment",
    "lock_increment",
    "null_syscall_rseq",
    "syscall_slow_path_error_rseq",
];

/// Rows per page of `ROWS` (the bits one selector carries).
pub const ROWS_PER_PAGE: usize = ROW_BITS as usize;
// The SMP rows start page 1.
const _: () = assert!(ROWS_PER_PAGE == 39);

/// Message label of the IPC benchmark's register-only phase.
pub const IPC_FAST_LABEL: u64 = 1;
/// Message label of the phase with one word too many for registers.
pub const IPC_SLOW_LABEL: u64 = 2;
/// Message label of the register-only phase between filtered threads
/// (`ipc_call_one_way_filtered`; 3, 4 and 9 are `SCALE_STEPS`').
pub const IPC_FILTERED_LABEL: u64 = 5;
/// Message label of the register-only phase whose server is more urgent
/// than its client (`ipc_call_one_way_higher_prio`).
pub const IPC_HIGHER_PRIO_LABEL: u64 = 6;
/// Message label of the register-only phase between two threads of one
/// address space (`ipc_call_one_way_same_as`).
pub const IPC_SAME_AS_LABEL: u64 = 7;
/// Message label of the phase whose calls carry 64 bytes in IPC buffer
/// words 6..=13, judged by a byte rule of the client's filter
/// (`ipc_call_one_way_bytes_judged`); the server's replies are
/// register-only.
pub const IPC_BYTES_JUDGED_LABEL: u64 = 10;
/// Words in a call of that phase.
pub const IPC_BYTES_JUDGED_LENGTH: u8 = 14;
/// Message label of the register-only phase with `THREAD_COUNT_EXTRA`
/// more threads alive (`ipc_call_one_way_threads_10000`).
pub const IPC_THREADS_LABEL: u64 = 8;
/// Extra threads (inactive TCBs, each with its capability) alive during
/// `ipc_call_one_way_threads_10000`.
pub const THREAD_COUNT_EXTRA: u64 = 10_000;
/// Extra endpoints (each with its capability) the scale benchmark makes
/// before each of its phases is timed, and the label of that phase's
/// fast-path calls (`SCALE_STEPS[i].1`).
pub const SCALE_STEPS: [(u64, u64, &str, &str); 3] = [
    (
        100,
        3,
        "null_syscall_scale_100",
        "ipc_call_one_way_scale_100",
    ),
    (
        1000,
        4,
        "null_syscall_scale_1000",
        "ipc_call_one_way_scale_1000",
    ),
    (
        10_000,
        9,
        "null_syscall_scale_10000",
        "ipc_call_one_way_scale_10000",
    ),
];

/// Iterations when the boot options do not say.
pub const DEFAULT_ITERATIONS: u32 = 10_000;
/// Most iterations one row can record (the programs keep every sample).
pub const MAX_ITERATIONS: u32 = 20_000;
/// Untimed iterations before the timed ones.
pub const WARM_UP_ITERATIONS: u32 = 100;

/// What one benchmark run measures and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchParameter {
    /// Timed iterations per row.
    pub iterations: u32,
    /// Bit `i` set: run `ROWS[i]`.
    pub rows: u64,
    /// The counter counts instructions (QEMU `-icount shift=0`), not cycles.
    pub instructions: bool,
}

/// Enough for `MAX_ITERATIONS`.
const ITERATION_BITS: u32 = 15;
const _: () = assert!(MAX_ITERATIONS < 1 << ITERATION_BITS);
/// One page of rows: with the counter bit and the page bit the parameter
/// fills the selector's 56 bits.
const ROW_BITS: u32 = 39;
/// Pages of `ROWS` a parameter can name (one bit).
const PAGES: usize = 2;
const _: () = assert!(ROWS.len() <= PAGES * ROWS_PER_PAGE);
const _: () = assert!(ITERATION_BITS + ROW_BITS + 2 <= 56);

impl BenchParameter {
    /// From the boot options' values (each `None` when absent). An unknown
    /// counter name or a bad number is an error for the boot log.
    pub fn from_options(
        iterations: Option<&str>,
        filter: Option<&str>,
        counter: Option<&str>,
    ) -> Result<Self, &'static str> {
        let iterations = match iterations {
            None => DEFAULT_ITERATIONS,
            Some(text) => match text.parse::<u32>() {
                Ok(n) if (1..=MAX_ITERATIONS).contains(&n) => n,
                _ => return Err("portcullis.bench.iterations must be 1..=20000"),
            },
        };
        let rows = ROWS
            .iter()
            .enumerate()
            .filter(|(_, name)| filter.is_none_or(|f| name.contains(f)))
            .fold(0, |mask, (i, _)| mask | (1 << i));
        if rows == 0 {
            return Err("portcullis.bench.filter matches no benchmark");
        }
        let instructions = match counter {
            None | Some("cycles") => false,
            Some("instructions") => true,
            Some(_) => return Err("portcullis.counter must be instructions or cycles"),
        };
        Ok(BenchParameter {
            iterations,
            rows,
            instructions,
        })
    }

    /// Packs the parameter with the rows of page `page` of `ROWS` (0 or
    /// 1; fits the selector's 56 parameter bits): the program told it
    /// sees only that page's rows.
    pub const fn encode_page(self, page: usize) -> u64 {
        let page = page % PAGES;
        let rows = (self.rows >> (page * ROWS_PER_PAGE)) & ((1 << ROW_BITS) - 1);
        (self.iterations as u64)
            | (rows << ITERATION_BITS)
            | ((self.instructions as u64) << (ITERATION_BITS + ROW_BITS))
            | ((page as u64) << (ITERATION_BITS + ROW_BITS + 1))
    }

    /// Packs a parameter whose rows are all in one page (as one made by
    /// `decode` is): that page's.
    pub const fn encode(self) -> u64 {
        let page = if self.rows & ((1 << ROW_BITS) - 1) == 0 && self.rows != 0 {
            1
        } else {
            0
        };
        self.encode_page(page)
    }

    /// Unpacks a parameter made by `encode_page`: its rows are that
    /// page's, at their places in `ROWS`.
    pub const fn decode(raw: u64) -> Self {
        let page = ((raw >> (ITERATION_BITS + ROW_BITS + 1)) & 1) as usize;
        BenchParameter {
            iterations: (raw & ((1 << ITERATION_BITS) - 1)) as u32,
            rows: ((raw >> ITERATION_BITS) & ((1 << ROW_BITS) - 1)) << (page * ROWS_PER_PAGE),
            instructions: (raw >> (ITERATION_BITS + ROW_BITS)) & 1 == 1,
        }
    }

    /// Should row `name` run?
    pub fn runs(&self, name: &str) -> bool {
        ROWS.iter()
            .position(|row| *row == name)
            .is_some_and(|i| self.rows & (1 << i) != 0)
    }

    /// The unit the counter measures.
    pub const fn unit(&self) -> &'static str {
        if self.instructions {
            "instructions"
        } else {
            "cycles"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_run_everything_in_cycles() {
        let p = BenchParameter::from_options(None, None, None).unwrap();
        assert_eq!(p.iterations, DEFAULT_ITERATIONS);
        assert!(ROWS.iter().all(|row| p.runs(row)));
        assert_eq!(p.unit(), "cycles");
    }

    #[test]
    fn filter_iterations_and_unit_round_trip() {
        let p =
            BenchParameter::from_options(Some("500"), Some("yield"), Some("instructions")).unwrap();
        assert!(p.runs("yield_no_switch") && p.runs("yield_switch_round_trip"));
        assert!(!p.runs("null_syscall"));
        assert_eq!(BenchParameter::decode(p.encode()), p);
        assert!(p.encode() < 1 << 56, "fits the selector's parameter bits");
    }

    #[test]
    fn every_row_has_a_bit_and_each_page_encodes() {
        assert!(ROWS.len() <= PAGES * ROWS_PER_PAGE);
        let p = BenchParameter::from_options(Some("20000"), None, Some("instructions")).unwrap();
        assert_eq!(p.rows.count_ones() as usize, ROWS.len());
        let (first, second) = (
            BenchParameter::decode(p.encode_page(0)),
            BenchParameter::decode(p.encode_page(1)),
        );
        assert_eq!(first.rows | second.rows, p.rows);
        assert_eq!(first.rows & second.rows, 0);
        for raw in [p.encode_page(0), p.encode_page(1)] {
            assert!(raw < 1 << 56, "fits the selector's parameter bits");
            let page = BenchParameter::decode(raw);
            assert_eq!(page.encode(), raw, "a page's parameter encodes as itself");
            assert_eq!((page.iterations, page.instructions), (20000, true));
        }
        assert!(first.runs(ROWS[ROWS_PER_PAGE - 1]) && !first.runs(ROWS[ROWS_PER_PAGE]));
        assert!(second.runs(ROWS[ROWS.len() - 1]) && !second.runs(ROWS[0]));
    }

    #[test]
    fn the_smp_and_rseq_rows_are_page_1() {
        for filter in ["ipc_cross_core", "_rseq", "increment"] {
            let p = BenchParameter::from_options(None, Some(filter), None).unwrap();
            assert_eq!(BenchParameter::decode(p.encode_page(0)).rows, 0, "{filter}");
            assert_eq!(BenchParameter::decode(p.encode_page(1)), p, "{filter}");
        }
        let rseq = [
            "rseq_percpu_increment",
            "atomic_increment",
            "lock_increment",
        ];
        assert!(ROWS[ROWS_PER_PAGE..]
            .iter()
            .all(|row| row.starts_with("ipc_cross_core")
                || row.starts_with("ipc_throughput")
                || row.ends_with("_rseq")
                || rseq.contains(row)));
    }

    #[test]
    fn bad_options_are_errors() {
        assert!(BenchParameter::from_options(Some("0"), None, None).is_err());
        assert!(BenchParameter::from_options(Some("x"), None, None).is_err());
        assert!(BenchParameter::from_options(None, Some("nothing-matches"), None).is_err());
        assert!(BenchParameter::from_options(None, None, Some("ns")).is_err());
    }
}
