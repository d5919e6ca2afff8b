//! The boot suite: what the kernel runs after boot, and how it judges it.
//!
//! Each case starts one or more copies of init, each with a program
//! selector (see `abi::boot_program`), waits until all of them have ended,
//! and checks how they ended against the case's expectation. In test mode
//! the results are printed as TAP (`ok N - name`); in demo mode only the
//! programs' own output and the fault reports are shown.

use crate::thread::{ThreadState, ThreadStats};
use abi::boot_program::{BootProgram, KERNEL_PROBE_ADDRESS};
use arch::exception::{ExceptionClass, FaultStatus};

/// What the kernel runs after boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Show what the kernel does, for a person.
    Demo,
    /// Run the in-guest tests and print TAP.
    Test,
    /// Run the benchmarks and print `BENCH` lines.
    Bench,
}

impl Mode {
    /// From the `portcullis.mode=` boot option (demo when absent).
    pub fn from_option(value: Option<&str>) -> Result<Mode, &str> {
        match value {
            None | Some("demo") => Ok(Mode::Demo),
            Some("test") => Ok(Mode::Test),
            Some("bench") => Ok(Mode::Bench),
            Some(other) => Err(other),
        }
    }

    /// The cases this mode runs.
    pub fn cases(self) -> &'static [Case] {
        match self {
            Mode::Demo => DEMO_CASES,
            Mode::Test => TEST_CASES,
            Mode::Bench => BENCH_CASES,
        }
    }
}

/// How the threads of a case must end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Every thread exits with status 0.
    ExitZero,
    /// Every thread exits 0 and took at least this many interrupts at EL0.
    ExitZeroWithInterrupts(u64),
    /// Every thread exits 0 and was preempted by the timer at least once.
    ExitZeroPreempted,
    /// Every thread exits 0 after exactly this many yields.
    ExitZeroAfterYields(u64),
    /// Every thread stops with a data abort whose status is an alignment
    /// fault.
    AlignmentFault,
    /// Every thread faults with this class; for aborts, at this address
    /// (if given) and with this kind of fault status (if given).
    Fault {
        /// The exception class.
        class: ExceptionClass,
        /// The faulting address (FAR).
        address: Option<u64>,
        /// Permission fault (true) or translation fault (false).
        permission: Option<bool>,
    },
}

/// One case of the boot suite.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// The TAP test name.
    pub name: &'static str,
    /// One init selector per thread to start.
    pub threads: &'static [u64],
    /// How they must end.
    pub expect: Expect,
}

/// How one thread of a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ended {
    /// Exit or fault.
    pub state: ThreadState,
    /// Its counters.
    pub stats: ThreadStats,
}

/// Why a case failed (for the TAP diagnostic).
pub type Failure = &'static str;

/// Checks the ended threads of a case.
pub fn evaluate(expect: Expect, ended: &[Ended]) -> Result<(), Failure> {
    if ended.is_empty() {
        return Err("no thread ran");
    }
    for thread in ended {
        match expect {
            Expect::ExitZero
            | Expect::ExitZeroWithInterrupts(_)
            | Expect::ExitZeroPreempted
            | Expect::ExitZeroAfterYields(_) => match thread.state {
                ThreadState::Exited(0) => {}
                ThreadState::Exited(_) => return Err("a thread exited with a non-zero status"),
                ThreadState::Faulted(_) => return Err("a thread faulted"),
                _ => return Err("a thread did not end"),
            },
            Expect::AlignmentFault => {
                let ThreadState::Faulted(report) = thread.state else {
                    return Err("a thread did not fault");
                };
                if report.status() != Some(FaultStatus::Alignment) {
                    return Err("not an alignment fault");
                }
            }
            Expect::Fault {
                class,
                address,
                permission,
            } => {
                let ThreadState::Faulted(report) = thread.state else {
                    return Err("a thread did not fault");
                };
                if report.class != class {
                    return Err("wrong exception class");
                }
                if address.is_some_and(|a| a != report.far) {
                    return Err("wrong fault address");
                }
                if let Some(want_permission) = permission {
                    let is_permission = matches!(report.status(), Some(FaultStatus::Permission(_)));
                    if is_permission != want_permission {
                        return Err("wrong fault status");
                    }
                }
            }
        }
        match expect {
            Expect::ExitZeroWithInterrupts(at_least) if thread.stats.irqs_from_el0 < at_least => {
                return Err("too few interrupts arrived while the thread ran at EL0");
            }
            Expect::ExitZeroPreempted if thread.stats.preemptions == 0 => {
                return Err("a thread was never preempted");
            }
            Expect::ExitZeroAfterYields(count) if thread.stats.yields != count => {
                return Err("yield count differs");
            }
            _ => {}
        }
    }
    Ok(())
}

const fn fault(class: ExceptionClass, address: Option<u64>, permission: Option<bool>) -> Expect {
    Expect::Fault {
        class,
        address,
        permission,
    }
}

/// The in-guest tests of the foundation.
pub const TEST_CASES: &[Case] = &[
    Case {
        name: "syscall round trip from EL0 (results and error codes)",
        threads: &[BootProgram::Syscalls.selector(0)],
        expect: Expect::ExitZero,
    },
    Case {
        name: "user write to address 0 faults and only that thread stops",
        threads: &[BootProgram::NullWrite.selector(0)],
        expect: fault(ExceptionClass::DataAbortLower, Some(0), Some(false)),
    },
    Case {
        name: "user read of a kernel address faults",
        threads: &[BootProgram::ReadKernel.selector(0)],
        expect: fault(
            ExceptionClass::DataAbortLower,
            Some(KERNEL_PROBE_ADDRESS),
            None,
        ),
    },
    Case {
        name: "undefined instruction stops the thread",
        threads: &[BootProgram::Undefined.selector(0)],
        expect: fault(ExceptionClass::Unknown, None, None),
    },
    Case {
        name: "branch to a misaligned address is a PC alignment fault",
        threads: &[BootProgram::MisalignedPc.selector(0)],
        expect: fault(ExceptionClass::PcAlignment, None, None),
    },
    Case {
        name: "misaligned exclusive load is an alignment fault",
        threads: &[BootProgram::MisalignedExclusive.selector(0)],
        expect: Expect::AlignmentFault,
    },
    Case {
        name: "user code is not writable (W^X)",
        threads: &[BootProgram::WriteText.selector(0)],
        expect: fault(ExceptionClass::DataAbortLower, None, Some(true)),
    },
    Case {
        name: "user stack is not executable (W^X)",
        threads: &[BootProgram::ExecuteStack.selector(0)],
        expect: fault(ExceptionClass::InstructionAbortLower, None, Some(true)),
    },
    Case {
        name: "timer interrupts arrive while a user thread spins",
        threads: &[BootProgram::Spin.selector(60)],
        expect: Expect::ExitZeroWithInterrupts(3),
    },
    Case {
        name: "two spinning threads are preempted round robin",
        threads: &[
            BootProgram::Spin.selector(60),
            BootProgram::Spin.selector(60),
        ],
        expect: Expect::ExitZeroPreempted,
    },
    Case {
        name: "FP/SIMD registers survive preemption by another FP user",
        threads: &[
            BootProgram::FpCheck.selector(1),
            BootProgram::FpCheck.selector(2),
        ],
        expect: Expect::ExitZeroPreempted,
    },
    Case {
        name: "yield hands the CPU between threads",
        threads: &[
            BootProgram::Yield.selector(50),
            BootProgram::Yield.selector(50),
        ],
        expect: Expect::ExitZeroAfterYields(50),
    },
];

/// The benchmark suite: the rows of one thread, then yield round trips
/// between two address spaces. The kernel adds the run's
/// `abi::bench::BenchParameter` to each selector.
pub const BENCH_CASES: &[Case] = &[
    Case {
        name: "benchmarks in one thread",
        threads: &[BootProgram::Bench.selector(0)],
        expect: Expect::ExitZero,
    },
    Case {
        name: "yield round trips between two address spaces",
        threads: &[
            BootProgram::BenchYieldPing.selector(0),
            BootProgram::BenchYieldPartner.selector(0),
        ],
        expect: Expect::ExitZero,
    },
];

/// What the demo shows.
pub const DEMO_CASES: &[Case] = &[
    Case {
        name: "init greets from EL0",
        threads: &[BootProgram::Demo.selector(0)],
        expect: Expect::ExitZero,
    },
    Case {
        name: "a faulting thread is stopped, the kernel carries on",
        threads: &[BootProgram::NullWrite.selector(0)],
        expect: fault(ExceptionClass::DataAbortLower, Some(0), Some(false)),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultReport;

    fn exited(status: i64) -> Ended {
        Ended {
            state: ThreadState::Exited(status),
            stats: ThreadStats::default(),
        }
    }

    #[test]
    fn exit_zero_passes_and_anything_else_fails() {
        assert_eq!(evaluate(Expect::ExitZero, &[exited(0)]), Ok(()));
        assert!(evaluate(Expect::ExitZero, &[exited(0), exited(3)]).is_err());
        assert!(evaluate(Expect::ExitZero, &[]).is_err());
    }

    #[test]
    fn faults_are_matched_by_class_address_and_status() {
        let null_write = Ended {
            state: ThreadState::Faulted(FaultReport::new(0x9200_0046, 0, 0x40_0000)),
            stats: ThreadStats::default(),
        };
        let expect = fault(ExceptionClass::DataAbortLower, Some(0), Some(false));
        assert_eq!(evaluate(expect, &[null_write]), Ok(()));
        assert!(evaluate(
            fault(ExceptionClass::DataAbortLower, Some(8), None),
            &[null_write]
        )
        .is_err());
        assert!(evaluate(
            fault(ExceptionClass::DataAbortLower, None, Some(true)),
            &[null_write]
        )
        .is_err());
        assert!(evaluate(fault(ExceptionClass::Unknown, None, None), &[null_write]).is_err());
        assert!(evaluate(expect, &[exited(0)]).is_err());
    }

    #[test]
    fn counters_are_checked() {
        let mut spun = exited(0);
        assert!(evaluate(Expect::ExitZeroWithInterrupts(1), &[spun]).is_err());
        assert!(evaluate(Expect::ExitZeroPreempted, &[spun]).is_err());
        spun.stats.irqs_from_el0 = 4;
        spun.stats.preemptions = 1;
        spun.stats.yields = 5;
        assert_eq!(evaluate(Expect::ExitZeroWithInterrupts(4), &[spun]), Ok(()));
        assert_eq!(evaluate(Expect::ExitZeroPreempted, &[spun]), Ok(()));
        assert_eq!(evaluate(Expect::ExitZeroAfterYields(5), &[spun]), Ok(()));
        assert!(evaluate(Expect::ExitZeroAfterYields(4), &[spun]).is_err());
    }

    #[test]
    fn every_case_has_threads_and_a_valid_selector() {
        for case in TEST_CASES.iter().chain(DEMO_CASES).chain(BENCH_CASES) {
            assert!(
                !case.threads.is_empty() && case.threads.len() <= 4,
                "{}",
                case.name
            );
            for &selector in case.threads {
                assert!(BootProgram::decode(selector).is_some());
            }
        }
        assert_eq!(Mode::from_option(None), Ok(Mode::Demo));
        assert_eq!(Mode::from_option(Some("test")), Ok(Mode::Test));
        assert_eq!(Mode::from_option(Some("bogus")), Err("bogus"));
    }
}
