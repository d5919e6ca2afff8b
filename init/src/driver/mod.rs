//! The root task's driver: what the system was booted for (the command
//! line's `portcullis.mode`: the demo, the in-guest test suite, the
//! benchmarks or the syscall fuzzer) run as cases, like sel4test's driver:
//! for each case the driver builds its threads from init's own ELF with
//! the SDK's task builder, waits for their end messages, judges them, and
//! takes everything back. The kernel knows none of this: it started the
//! root task and nothing else.

mod case;
mod cases;
mod irq_control;
mod judge;
mod runner;

use crate::programs::{
    FuzzParameter, FUZZ_DONE, FUZZ_JUDGED_LABEL, FUZZ_JUDGED_MAX, FUZZ_JUDGED_MISMATCH,
    PARAMETER_SHIFT,
};
use abi::bench::BenchParameter;
use abi::bootinfo::{BootInfo, ROOT_CNODE_RADIX, ROOT_CNODE_SLOT, ROOT_CONSOLE_SLOT};
use abi::bootinfo::{ROOT_FIRST_FREE_SLOT, ROOT_IRQ_SLOT, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::{CapType, Rights};
use abi::fault::ThreadEnd;
use abi::vspace::FRAME_MAP_START;
use case::Case;
use judge::{evaluate, Ended};
use runner::Driver;
use sdk::ipc::Cptr;
use sdk::println;
use sdk::syscall::{cnode, retype};
use sdk::task::{SlotAllocator, Supervisor, UntypedPool};
use sdk::tcb::Tcb;
use sdk::time::Timer;
use sdk::vspace::VSpace;

/// The driver's slots start past those the root's own checks use.
const FIRST_SLOT: u64 = ROOT_FIRST_FREE_SLOT + 64;
/// The driver's own objects: its Untyped, the endpoint of ends, the
/// timer's notification and its badged signal capability.
const OWN_MEMORY: u64 = ROOT_FIRST_FREE_SLOT + 40;
const ENDS: u64 = OWN_MEMORY + 1;
const TIMER_NOTIFICATION: u64 = OWN_MEMORY + 2;
const TIMER_SIGNAL: u64 = OWN_MEMORY + 3;
const TIMER_BIT: u64 = 1;
/// The driver runs above every case thread: the threads of a case are all
/// ready before the first runs, and a wake-up of the driver is at once.
const DRIVER_PRIORITY: u64 = 255;

/// What the command line asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Demo,
    Test,
    Bench,
    Fuzz,
}

/// Runs what the command line asks for; `root_checks` is the result of
/// the root task's own checks (0 or the failed check), which is a step of
/// the demo and a case of the suite. Returns the root's exit status: 0
/// when everything passed.
pub fn run(info: &BootInfo, root_checks: i32) -> i32 {
    let mode = match info.option("portcullis.mode") {
        None | Some("demo") => Mode::Demo,
        Some("test") => Mode::Test,
        Some("bench") => Mode::Bench,
        Some("fuzz") => Mode::Fuzz,
        Some(other) => {
            println!("driver: unknown portcullis.mode={other}");
            return 1;
        }
    };
    let mut driver = match set_up(info) {
        Ok(driver) => driver,
        Err(reason) => {
            println!("driver: the driver cannot start: {reason}");
            return 1;
        }
    };
    match mode {
        Mode::Test => run_suite(&mut driver, root_checks),
        Mode::Demo => run_demo(&mut driver, root_checks),
        Mode::Bench => run_bench(&mut driver, info),
        Mode::Fuzz => run_fuzz(&mut driver, info),
    }
}

/// The driver's objects, from its share of the root's memory.
fn set_up(info: &BootInfo) -> Result<Driver, &'static str> {
    let own = Tcb(Cptr(ROOT_TCB_SLOT));
    own.set_priority(DRIVER_PRIORITY)
        .map_err(|_| "the root cannot raise its priority")?;
    let memory = UntypedPool::from_boot_info(info);
    memory
        .carve(16, OWN_MEMORY)
        .map_err(|_| "no memory for the driver's objects")?;
    retype(OWN_MEMORY, CapType::Endpoint, 0, ENDS, 1).map_err(|_| "no endpoint")?;
    retype(OWN_MEMORY, CapType::Notification, 0, TIMER_NOTIFICATION, 1)
        .map_err(|_| "no notification")?;
    cnode::mint(
        ROOT_CNODE_SLOT,
        TIMER_NOTIFICATION,
        TIMER_SIGNAL,
        Rights::WRITE,
        Some(TIMER_BIT),
    )
    .map_err(|_| "no timer signal")?;
    let slots = SlotAllocator::new(FIRST_SLOT..1 << ROOT_CNODE_RADIX)
        .map_err(|_| "no slots for the driver")?;
    // Where the driver runs (CPU 0: the root's) and how many CPUs run.
    let cpus = own
        .set_affinity(0)
        .map_err(|_| "the root cannot learn how many CPUs run")?;
    let mut driver = Driver {
        supervisor: Supervisor {
            cnode: Cptr(ROOT_CNODE_SLOT),
            vspace: VSpace(Cptr(ROOT_VSPACE_SLOT)),
            scratch: FRAME_MAP_START,
            slots,
            memory,
        },
        image: sdk::root_image(info.image_bytes),
        ends: Cptr(ENDS),
        timer: None,
        timer_irq: Cptr(ROOT_IRQ_SLOT),
        console: Cptr(ROOT_CONSOLE_SLOT),
        cpus,
    };
    let _ = own.bind_notification(None);
    own.bind_notification(Some(Cptr(TIMER_NOTIFICATION)))
        .map_err(|_| "cannot bind the timer's notification")?;
    restart_timer(&mut driver)?;
    Ok(driver)
}

/// The driver's timer on the physical timer's IrqHandler (again, after a
/// case that borrowed it).
fn restart_timer(driver: &mut Driver) -> Result<(), &'static str> {
    let timer = Timer::new(
        driver.timer_irq,
        Cptr(TIMER_SIGNAL),
        Cptr(TIMER_NOTIFICATION),
        TIMER_BIT,
    )
    .map_err(|_| "cannot set up the driver's timer")?;
    driver.timer = Some(timer);
    Ok(())
}

/// Which images a mode runs on have the test calls: the suite and the
/// fuzzer run on the test image; the demo on the default one, the
/// benchmarks on the bench one (neither has the invariant check).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// After each case, the kernel's invariants must hold.
    Invariants,
    /// How the threads ended is all there is to judge.
    EndsOnly,
}

/// Runs one case and judges it: `Ok` or the reason it failed, with how
/// each thread ended printed on failure.
fn judge(
    driver: &mut Driver,
    case: &Case,
    parameter: u64,
    checks: Checks,
) -> Result<(), &'static str> {
    // Threads spread over the CPUs (the fuzzer's SMP rounds): the
    // invariants at every 4th tick too while they run.
    let at_ticks = checks == Checks::Invariants && case.cpus == case::Cpus::Spread;
    if at_ticks && sdk::debug::check_invariants(true).is_err() {
        return Err("the kernel has no invariant check (the test image has)");
    }
    let ended = driver.run(case, parameter)?;
    if at_ticks {
        match sdk::debug::check_invariants(false) {
            Ok(report) if report.broken_at_a_tick => {
                return Err("the kernel's invariants were broken at a tick while threads ran")
            }
            Ok(report) => println!(
                "# {} invariant checks at ticks while the threads ran",
                report.tick_checks
            ),
            Err(_) => return Err("the kernel has no invariant check (the test image has)"),
        }
    }
    let verdict = evaluate(case.expect, &ended);
    if verdict.is_err() {
        for (index, thread) in ended.iter().enumerate() {
            println!("# thread {index} ended: {:?}", thread.end);
        }
    }
    verdict?;
    if checks == Checks::EndsOnly {
        return Ok(());
    }
    // Nothing the case did broke the kernel's invariants.
    match sdk::debug::check_invariants(false) {
        Ok(report) if report.hold_now => Ok(()),
        Ok(_) => Err("the kernel's invariants are broken after the case"),
        Err(_) => Err("the kernel has no invariant check (the test image has)"),
    }
}

/// The in-guest test suite, as TAP.
fn run_suite(driver: &mut Driver, root_checks: i32) -> i32 {
    let all = cases::TEST_CASES;
    println!("TAP version 13");
    println!("1..{}", all.len());
    println!("# suite: {} CPUs running", driver.cpus);
    let (mut passed, mut failed) = (0, 0);
    for (index, case) in all.iter().enumerate() {
        let needed = case.cpus.needed();
        if needed > driver.cpus {
            // TAP counts a skip as a pass; the host tests want none.
            println!(
                "ok {} - {} # SKIP needs {needed} CPUs, {} running",
                index + 1,
                case.name,
                driver.cpus
            );
            passed += 1;
            continue;
        }
        let verdict = if case.root_task {
            root_verdict(root_checks)
        } else {
            judge(driver, case, 0, Checks::Invariants)
        };
        report_tap(index + 1, case.name, verdict);
        match verdict {
            Ok(()) => passed += 1,
            Err(_) => failed += 1,
        }
    }
    println!("# portcullis: {passed} passed, {failed} failed");
    i32::from(failed != 0)
}

fn root_verdict(root_checks: i32) -> Result<(), &'static str> {
    match root_checks {
        0 => Ok(()),
        _ => Err("a check of the root task failed (its number is printed above)"),
    }
}

fn report_tap(number: usize, name: &str, verdict: Result<(), &str>) {
    match verdict {
        Ok(()) => println!("ok {number} - {name}"),
        Err(reason) => println!("not ok {number} - {name}\n# {reason}"),
    }
}

/// The demo's steps, for a person.
fn run_demo(driver: &mut Driver, root_checks: i32) -> i32 {
    let steps = cases::DEMO_CASES;
    let mut passed = 0;
    for case in steps {
        println!("next: {}", case.name);
        let verdict = if case.root_task {
            root_verdict(root_checks)
        } else {
            judge(driver, case, 0, Checks::EndsOnly)
        };
        match verdict {
            Ok(()) => {
                passed += 1;
                println!("done: {}", case.name);
            }
            Err(reason) => println!("unexpected: {}: {reason}", case.name),
        }
    }
    println!(
        "demo finished: {passed} of {} steps behaved as expected",
        steps.len()
    );
    i32::from(passed != steps.len())
}

/// The benchmarks, with what the command line says (iterations, rows,
/// counter): their threads print the rows.
fn run_bench(driver: &mut Driver, info: &BootInfo) -> i32 {
    let parameter = match BenchParameter::from_options(
        info.option("portcullis.bench.iterations"),
        info.option("portcullis.bench.filter"),
        info.option("portcullis.counter"),
    ) {
        Ok(parameter) => parameter,
        Err(reason) => {
            println!("driver: {reason}");
            return 1;
        }
    };
    let mut failed = 0;
    // Each list's programs are told the rows of their page of `ROWS`.
    let lists = [(cases::BENCH_CASES, 0), (cases::BENCH_SMP_CASES, 1)];
    for (case, page) in lists
        .iter()
        .flat_map(|(list, page)| list.iter().map(move |case| (case, *page)))
    {
        println!("next: {}", case.name);
        match judge(
            driver,
            case,
            parameter.encode_page(page) << PARAMETER_SHIFT,
            Checks::EndsOnly,
        ) {
            Ok(()) => println!("done: {}", case.name),
            Err(reason) => {
                failed += 1;
                println!("unexpected: {}: {reason}", case.name);
            }
        }
    }
    // The rows the suite ran, each of which printed one result line, or
    // one `BENCH-SKIP` line when the run has too few CPUs for it.
    println!(
        "# portcullis-bench: {} results",
        parameter.rows.count_ones()
    );
    i32::from(failed != 0)
}

/// How a fuzz run is divided into rounds.
struct FuzzPlan {
    seed: u32,
    calls_per_thread: u32,
    rounds: u32,
}

impl FuzzPlan {
    /// Most syscalls one fuzzer thread makes in one round: rounds are what
    /// the invariants are checked between.
    const CALLS_PER_THREAD: u32 = 5_000;
    /// Fuzzer threads per round.
    const THREADS: u32 = 3;

    /// `calls` syscalls in all from `seed`.
    fn new(seed: u32, calls: u64) -> FuzzPlan {
        let per_round = u64::from(Self::CALLS_PER_THREAD * Self::THREADS);
        FuzzPlan {
            seed,
            calls_per_thread: Self::CALLS_PER_THREAD
                .min(calls.div_ceil(u64::from(Self::THREADS)).max(1) as u32),
            rounds: calls.div_ceil(per_round).clamp(1, u64::from(u32::MAX)) as u32,
        }
    }

    /// The seed of round `round` (derived, so every round differs).
    fn round_seed(&self, round: u32) -> u32 {
        self.seed
            .wrapping_mul(0x9e37_79b9)
            .wrapping_add(round.wrapping_mul(0x85eb_ca6b))
            ^ self.seed
    }
}

/// A command-line number, decimal or `0x` hexadecimal.
fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The syscall fuzzer in rounds: TAP, one result per round (the kernel
/// survived and its invariants held, also at every tick while the
/// round's threads ran).
fn run_fuzz(driver: &mut Driver, info: &BootInfo) -> i32 {
    let number = |key, default| match info.option(key) {
        None => Some(default),
        Some(text) => parse_number(text),
    };
    let (Some(seed), Some(calls)) = (
        number("portcullis.fuzz.seed", 1),
        number("portcullis.fuzz.calls", 100_000),
    ) else {
        println!("driver: portcullis.fuzz.seed and portcullis.fuzz.calls take numbers");
        return 1;
    };
    let plan = FuzzPlan::new(seed as u32, calls);
    println!("TAP version 13");
    println!("1..{}", plan.rounds);
    println!(
        "# fuzz: seed {:#x}, {} rounds of {} threads x {} syscalls",
        plan.seed,
        plan.rounds,
        FuzzPlan::THREADS,
        plan.calls_per_thread
    );
    let (mut passed, mut failed) = (0u32, 0u32);
    let (mut syscalls, mut slow_path_only, mut tick_checks) = (0u64, 0u64, 0u64);
    let (mut judged_checked, mut judged_mismatches) = (0u64, 0u32);
    let case = &cases::FUZZ_CASES[0];
    for round in 0..plan.rounds {
        let parameter = FuzzParameter {
            index: 0,
            seed: plan.round_seed(round),
            calls: plan.calls_per_thread,
        };
        // The live-thread invariants, at every tick while threads run.
        let armed = sdk::debug::check_invariants(true);
        let ran = driver.run(case, parameter.encode() << PARAMETER_SHIFT);
        let after = sdk::debug::check_invariants(false);
        // A fuzzer that finishes exits with the number of syscalls it made
        // (exact). For one stopped early only the kernel's count is known,
        // and it sees the generic path only: the total is a lower bound.
        let (mut exact, mut lower) = (0u64, 0u64);
        let verdict = match (&ran, armed, after) {
            (Err(reason), _, _) => Err(*reason),
            (_, Err(_), _) | (_, _, Err(_)) => {
                Err("the kernel has no invariant check (the test image has)")
            }
            (Ok(ended), Ok(armed), Ok(after)) => {
                // A finished fuzzer's status also counts the judged
                // messages it checked (bits 22..32); one that found a
                // judged message changed exits at once with its own mark.
                let mut mismatch = false;
                for thread in ended {
                    match thread.end {
                        ThreadEnd::Exited { status } if status & !0xffff_ffff == FUZZ_DONE => {
                            exact += (status & 0x3f_ffff) as u64;
                            judged_checked += (status as u64 >> 22) & FUZZ_JUDGED_MAX;
                        }
                        ThreadEnd::Exited { status }
                            if status & !0xffff_ffff == FUZZ_JUDGED_MISMATCH
                                && (status as u64 & 0xffff_ffff) >> 9 == FUZZ_JUDGED_LABEL =>
                        {
                            lower += thread.stats.syscalls;
                            mismatch = true;
                        }
                        _ => lower += thread.stats.syscalls,
                    }
                }
                tick_checks += after.tick_checks;
                if mismatch {
                    judged_mismatches += 1;
                    Err("a judged message arrived with bytes other than those its filter allowed")
                } else if !armed.hold_now || !after.hold_now {
                    Err("the kernel's invariants are broken")
                } else if after.broken_at_a_tick {
                    Err("the kernel's invariants were broken at a tick while threads ran")
                } else {
                    check_ends(ended)
                }
            }
        };
        syscalls += exact + lower;
        slow_path_only += lower;
        let bound = if lower > 0 { "at least " } else { "" };
        let name_args = (round + 1, parameter.seed, exact + lower);
        match verdict {
            Ok(()) => {
                passed += 1;
                println!(
                    "ok {} - fuzz round {} (seed {:#x}): {bound}{} syscalls, invariants hold",
                    name_args.0, name_args.0, name_args.1, name_args.2
                );
            }
            Err(reason) => {
                failed += 1;
                println!(
                    "not ok {} - fuzz round {} (seed {:#x}): {bound}{} syscalls, invariants hold\n# {reason}",
                    name_args.0, name_args.0, name_args.1, name_args.2
                );
            }
        }
    }
    println!(
        "# fuzz: seed {:#x}, {}{} syscalls issued ({} of them the kernel's slow-path count for threads stopped early), 0 kernel panics, {failed} rounds with broken invariants ({} checks while threads ran)",
        plan.seed,
        if slow_path_only > 0 { "at least " } else { "" },
        syscalls,
        slow_path_only,
        tick_checks
    );
    println!("# fuzz: judged messages checked: {judged_checked}, mismatches: {judged_mismatches}");
    println!("# portcullis: {passed} passed, {failed} failed");
    i32::from(failed != 0)
}

/// A fuzz round's threads may end any way (`Expect::AnyEnd`).
fn check_ends(ended: &[Ended]) -> Result<(), &'static str> {
    evaluate(case::Expect::AnyEnd, ended)
}
