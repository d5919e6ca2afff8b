//! `portcullis profile NAME`: where the instructions of one benchmark's
//! operation go, per symbol.
//!
//! The benchmark runs twice under the instruction log, with N and 2N
//! iterations; everything but the N extra iterations (boot, set-up,
//! warm-up, the end of the run) is the same in both runs, so the
//! difference divided by N is the cost of one iteration, symbol by symbol.

use std::path::Path;
use std::time::Duration;

use super::capture::run_profiled;
use super::fold::{fold, per_iteration, SymbolCounts};
use super::report::profile_table;
use super::symbols::SymbolTable;
use crate::artifacts::{self, workspace_root};
use crate::bench::run::ITERATIONS_KEY;
use crate::bench::{BenchOutcome, BenchSettings};
use crate::guest_mode::GuestMode;
use crate::guest_output::RunOutcome;
use crate::machine::Machine;
use crate::qemu::Echo;
use crate::session::{self, RunRequest};

/// Iterations of the shorter run unless told otherwise (the longer run
/// has twice as many).
pub const DEFAULT_PROFILE_ITERATIONS: u32 = 100;

/// What `portcullis profile` was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileOptions {
    /// The benchmark (passed as the guest's name filter).
    pub name: String,
    /// Iterations of the shorter run.
    pub iterations: u32,
    /// The machine model.
    pub machine: Machine,
    /// Kill each QEMU after this long.
    pub timeout: Option<Duration>,
    /// Also write each PC's instructions per iteration to this file (one
    /// `pc count` line per PC, hottest first), to read beside a
    /// disassembly.
    pub pcs: Option<std::path::PathBuf>,
    /// How many cores the guest runs (`--cpus N`; `None`: the runner's
    /// default). QEMU's exec log counts every core's instructions.
    pub cpus: Option<u32>,
}

/// Runs the command; returns the process exit status.
pub fn run_profile_command(options: &ProfileOptions) -> u8 {
    match profile(options) {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("portcullis: {message}");
            1
        }
    }
}

fn profile(options: &ProfileOptions) -> Result<(), String> {
    let workspace = workspace_root();
    // The benchmarks run on the bench image.
    let kernel_elf = artifacts::flavoured_kernel_elf(artifacts::KernelFlavour::Bench)
        .map_err(|e| e.to_string())?;
    let init_elf = artifacts::init_elf().map_err(|e| e.to_string())?;
    let kernel = read_symbols(&kernel_elf, &workspace)?;
    let user = read_symbols(&init_elf, &workspace)?;

    let short_iterations = options.iterations;
    let long_iterations = options
        .iterations
        .checked_mul(2)
        .ok_or("--iterations is too large to double")?;
    let mut folded: Vec<SymbolCounts> = Vec::new();
    let mut runs: Vec<super::exec_log::PcCounts> = Vec::new();
    let mut medians = String::new();
    for iterations in [short_iterations, long_iterations] {
        let settings = BenchSettings {
            iterations: Some(iterations),
            filter: Some(options.name.clone()),
            timeout: options.timeout,
            cpus: options.cpus,
            ..BenchSettings::new(options.machine)
        };
        let prepared = session::prepare(&same_length_options(settings.run_request(Echo::Quiet)))
            .map_err(|e| e.to_string())?;
        eprintln!(
            "portcullis: profiling {} with {iterations} iterations: {} {}",
            options.name,
            prepared.command_line(),
            super::capture::PROFILE_QEMU_ARGS.join(" ")
        );
        let run = run_profiled(&prepared, options.timeout).map_err(|e| e.to_string())?;
        let outcome = BenchOutcome::judge(
            RunOutcome::judge(GuestMode::Bench, run.output),
            settings.unit(),
        );
        if !outcome.passed() {
            return Err(format!("the profiled run failed:\n{outcome}"));
        }
        let names: Vec<&str> = outcome
            .report
            .results
            .iter()
            .map(|result| result.name.as_str())
            .collect();
        if names != [options.name.as_str()] {
            eprintln!(
                "portcullis: warning: the filter `{}` ran {names:?}; the profile adds up all of them",
                options.name
            );
        }
        medians = outcome
            .report
            .results
            .iter()
            .map(|result| format!("{} median {} {}", result.name, result.median, result.unit))
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!(
            "portcullis: {} instructions executed in {:.1} s",
            run.pcs.total,
            outcome.run.elapsed.as_secs_f32()
        );
        folded.push(fold(&run.pcs, &kernel, &user));
        runs.push(run.pcs);
    }
    if let Some(path) = &options.pcs {
        let text = pc_lines(&runs[0], &runs[1], long_iterations - short_iterations);
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("portcullis: wrote each PC's count to {}", path.display());
    }
    let rows = per_iteration(&folded[0], &folded[1], long_iterations - short_iterations);
    println!(
        "profile of {} ({long_iterations} − {short_iterations} iterations; the guest reports: {medians})\n",
        options.name
    );
    print!("{}", profile_table(&rows));
    Ok(())
}

/// `pc count` lines (hexadecimal PC, instructions per iteration), hottest
/// first: the difference of the two runs, as `per_iteration` makes it.
pub fn pc_lines(
    short: &super::exec_log::PcCounts,
    long: &super::exec_log::PcCounts,
    extra_iterations: u32,
) -> String {
    let mut rows: Vec<(u64, f64)> = long
        .counts
        .iter()
        .map(|(&pc, &count)| {
            let before = short.counts.get(&pc).copied().unwrap_or(0);
            (pc, (count - before) as f64 / f64::from(extra_iterations))
        })
        .filter(|&(_, per_iteration)| per_iteration != 0.0)
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    rows.iter()
        .map(|(pc, count)| format!("{pc:#x} {count:.2}\n"))
        .collect()
}

/// Writes the iteration count with leading zeros (the guest reads
/// `0100` as 100), so that both runs' command lines have the same length:
/// the kernel's boot-option parsing then costs the same in both and
/// cancels out of the difference.
fn same_length_options(mut request: RunRequest) -> RunRequest {
    for option in &mut request.boot_options {
        if let Some(count) = option
            .strip_prefix(ITERATIONS_KEY)
            .and_then(|rest| rest.strip_prefix('='))
            .and_then(|count| count.parse::<u32>().ok())
        {
            *option = format!("{ITERATIONS_KEY}={count:010}");
        }
    }
    request
}

fn read_symbols(elf: &Path, workspace: &Path) -> Result<SymbolTable, String> {
    let table = SymbolTable::read(elf, workspace).map_err(|e| e.to_string())?;
    if table.is_empty() {
        return Err(format!("{} has no code symbols", elf.display()));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iteration_counts_are_padded_to_one_length() {
        let request = BenchSettings {
            iterations: Some(100),
            filter: Some("null_syscall".into()),
            ..BenchSettings::new(Machine::Virt)
        }
        .run_request(Echo::Quiet);
        let padded = same_length_options(request).boot_options;
        assert_eq!(
            padded,
            [
                "portcullis.counter=instructions",
                "portcullis.bench.iterations=0000000100",
                "portcullis.bench.filter=null_syscall"
            ]
        );
    }
}

#[cfg(test)]
mod pc_tests {
    use super::*;
    use crate::profile::exec_log::PcCounts;

    #[test]
    fn pc_lines_are_the_difference_per_iteration_hottest_first() {
        let mut short = PcCounts::default();
        let mut long = PcCounts::default();
        short.counts.insert(0x10, 5);
        long.counts.insert(0x10, 25);
        short.counts.insert(0x20, 7);
        long.counts.insert(0x20, 7);
        long.counts.insert(0x30, 40);
        assert_eq!(pc_lines(&short, &long, 10), "0x30 4.00\n0x10 2.00\n");
    }
}
