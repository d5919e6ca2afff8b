//! Task programs: building a task's crate for AArch64, stripping it, and
//! the checks that need its segments (memory estimate, mappings that
//! would overlap it, the budget).

use crate::diagnostic::{Diagnostic, Diagnostics, Report};
use crate::model::{show, Program, System, Task};
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target user programs are built for (hard float: the kernel saves
/// FP/SIMD state on thread switches).
pub const USER_TARGET: &str = "aarch64-unknown-none";
/// The profile a crate of the Portcullis workspace is built with (its
/// own `[profile.image]`); other crates use `--release`.
pub const WORKSPACE_PROFILE: &str = "image";

/// What `build` hands `pack`: each task's stripped ELF and memory.
#[derive(Debug, Clone)]
pub struct Built {
    /// One per task, in task order.
    pub tasks: Vec<BuiltTask>,
}

/// One task's program, built.
#[derive(Debug, Clone)]
pub struct BuiltTask {
    /// The stripped ELF (a prebuilt one as given).
    pub elf: Vec<u8>,
    /// Bytes it needs (`Task::estimate`).
    pub estimate: u64,
    /// Its memory: what it asked for, or the estimate rounded up to a
    /// power of two.
    pub memory: u64,
}

/// How [`build`] runs cargo.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// `CARGO_TARGET_DIR` of the task builds (and where stripped copies
    /// go, under `system/`).
    pub target_dir: PathBuf,
    /// The Portcullis repository: its SDK linker script, and which crates
    /// are its own members (built with its `image` profile).
    pub workspace: PathBuf,
    /// Pass `--quiet` to cargo.
    pub quiet: bool,
}

/// The flags every user program is linked with: the SDK's layout, and
/// segments aligned to 4 KiB in the file (lld's default of 64 KiB would
/// make most of each file padding). The repository's build.rs passes the
/// same string, so both share one cache.
pub fn user_rustflags(workspace: &Path) -> String {
    format!(
        "-C link-arg=-T{} -C link-arg=-zmax-page-size=4096",
        workspace.join("servers/sdk/user.ld").display()
    )
}

/// Checks an ELF with the parser and page bound the root's loader uses
/// (`sdk::loader`, through `abi::elf::parse`).
pub fn parse_elf(bytes: &[u8]) -> Result<abi::elf::Image, String> {
    abi::elf::parse(bytes).map_err(|e| format!("{e:?}"))
}

/// The checks that need task `index`'s program `elf`: its memory against
/// the estimate, and its mappings against its segments. Returns its
/// memory.
pub fn check_program(system: &System, index: usize, elf: &[u8]) -> Result<u64, Vec<Diagnostic>> {
    let task = &system.tasks[index];
    let source = &system.source;
    let field = |f: &str| format!("tasks.{}.{f}", task.name);
    let program_field = match task.program {
        Program::Crate { .. } => field("crate"),
        Program::Elf { .. } => field("elf"),
    };
    let image = parse_elf(elf).map_err(|e| {
        vec![source.at(
            task.program_at,
            &program_field,
            format!("the program is not an AArch64 executable the root can load: {e}"),
        )]
    })?;
    let mut report = Report::default();
    let estimate = task.estimate(image.page_count() as u64, elf.len() as u64);
    let memory = task.memory_for(estimate);
    if let Some((bytes, at)) = task.memory {
        if bytes < estimate {
            report.push(source.at(
                at,
                &field("memory"),
                format!(
                    "{} is below the task's estimate of {} ({} program pages, {} stack pages, tables, CNode, TCB, Untypeds)",
                    show(bytes),
                    show(estimate),
                    image.page_count(),
                    task.stack_pages
                ),
            ));
        }
    }
    for (i, (mapping, bytes, at)) in task.mappings.iter().enumerate() {
        let end = mapping.address + bytes;
        if let Some(segment) = image
            .segments()
            .iter()
            .find(|s| mapping.address < s.end_page() && s.first_page() < end)
        {
            report.push(source.at(
                *at,
                &format!("tasks.{}.maps[{i}].address", task.name),
                format!(
                    "{:#x}..{end:#x} overlaps the program's segment at {:#x}..{:#x}",
                    mapping.address,
                    segment.first_page(),
                    segment.end_page()
                ),
            ));
        }
    }
    report.finish(memory).map_err(|d| d.0)
}

/// Checks that the tasks (`memory_of` each, once more for each restart
/// it may have: a rebuild takes fresh memory) and the shared RAM fit the
/// budget.
pub fn check_budget(system: &System, memory_of: &dyn Fn(&Task) -> u64) -> Result<(), Diagnostic> {
    // Saturating: a description may ask for 2^47 bytes restarted 2^32
    // times; the sum must not wrap under the budget.
    let memory_of = |task: &Task| memory_of(task).saturating_mul(1 + u64::from(task.restarts()));
    let tasks: u64 = system
        .tasks
        .iter()
        .map(memory_of)
        .fold(0, u64::saturating_add);
    let shared: u64 = system
        .objects
        .iter()
        .map(|o| o.ram_bytes())
        .fold(0, u64::saturating_add);
    let total = tasks.saturating_add(shared);
    let bound = 1u64 << abi::system::plan::MAX_MEMORY_BITS;
    if total <= system.budget && tasks <= bound {
        return Ok(());
    }
    let each: Vec<String> = system
        .tasks
        .iter()
        .map(|t| format!("{} {}", t.name, show(memory_of(t))))
        .collect();
    Err(system.source.at(
        system.budget_at,
        "system.memory",
        format!(
            "the system needs {} ({}, shared {}) but the budget is {}",
            show(total),
            each.join(", "),
            show(shared),
            if total <= system.budget {
                format!("{} for the tasks, restarts included", show(bound))
            } else {
                show(system.budget)
            }
        ),
    ))
}

/// Builds every task's program and checks what needs it; see the crate
/// docs.
pub fn build(system: &System, options: &BuildOptions) -> Result<Built, Diagnostics> {
    let mut report = Report::default();
    let members = workspace_members(&options.workspace);
    let mut tasks = Vec::new();
    for (index, task) in system.tasks.iter().enumerate() {
        let elf = match &task.program {
            Program::Elf { bytes, .. } => Ok(bytes.clone()),
            Program::Crate { dir, bin, features } => {
                build_crate(dir, bin, features, &members, options).map_err(|message| {
                    system.source.at(
                        task.program_at,
                        &format!("tasks.{}.crate", task.name),
                        message,
                    )
                })
            }
        };
        match elf.map_err(|d| vec![d]).and_then(|elf| {
            let memory = check_program(system, index, &elf)?;
            Ok((elf, memory))
        }) {
            Ok((elf, memory)) => {
                let pages = parse_elf(&elf).map_or(0, |i| i.page_count() as u64);
                tasks.push(BuiltTask {
                    estimate: task.estimate(pages, elf.len() as u64),
                    elf,
                    memory,
                });
            }
            Err(found) => report.0.extend(found),
        }
    }
    if report.0.is_empty() {
        if let Err(d) = check_budget(system, &|t| {
            let index = system.tasks.iter().position(|x| x.name == t.name);
            index.map_or(0, |i| tasks[i].memory)
        }) {
            report.push(d);
        }
    }
    report.finish(Built { tasks })
}

/// The canonical directories of the workspace's members.
fn workspace_members(workspace: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(workspace.join("Cargo.toml")) else {
        return Vec::new();
    };
    let Ok(manifest) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let members = manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .cloned()
        .unwrap_or_default();
    members
        .iter()
        .filter_map(|m| m.as_str())
        .filter_map(|m| workspace.join(m).canonicalize().ok())
        .collect()
}

/// Builds `bin` of the crate in `dir`; returns the stripped ELF.
fn build_crate(
    dir: &Path,
    bin: &str,
    features: &[String],
    members: &[PathBuf],
    options: &BuildOptions,
) -> Result<Vec<u8>, String> {
    let member = dir.canonicalize().is_ok_and(|d| members.contains(&d));
    let profile_dir = if member { WORKSPACE_PROFILE } else { "release" };
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    scrub_host_build_variables(&mut command);
    command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &options.target_dir)
        .env(
            "CARGO_TARGET_AARCH64_UNKNOWN_NONE_RUSTFLAGS",
            user_rustflags(&options.workspace),
        )
        .arg("build")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .args(["--target", USER_TARGET, "--bin", bin]);
    if member {
        command.args(["--profile", WORKSPACE_PROFILE]);
    } else {
        command.arg("--release");
    }
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    if options.quiet {
        command.arg("--quiet");
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building {bin} for {USER_TARGET} failed ({status}); cargo's errors are above"
        ));
    }
    let built = options
        .target_dir
        .join(USER_TARGET)
        .join(profile_dir)
        .join(bin);
    let stripped_dir = options.target_dir.join("system");
    std::fs::create_dir_all(&stripped_dir)
        .map_err(|e| format!("cannot create {}: {e}", stripped_dir.display()))?;
    let stripped = stripped_dir.join(bin);
    strip(&built, &stripped, &options.workspace)?;
    std::fs::read(&stripped).map_err(|e| format!("cannot read {}: {e}", stripped.display()))
}

/// Removes what cargo sets for a host build when this runs inside a build
/// script or a test (the repository's build.rs uses it for its nested
/// cargo too): none of it may leak into the AArch64 build.
pub fn scrub_host_build_variables(command: &mut Command) {
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        let leaks_host_settings = key == "RUSTFLAGS"
            || key == "RUSTDOCFLAGS"
            || key == "RUSTC_WRAPPER"
            || key == "RUSTC_WORKSPACE_WRAPPER"
            || key == "TARGET"
            || key == "HOST"
            || key == "OUT_DIR"
            || key == "PROFILE"
            || key == "OPT_LEVEL"
            || key == "DEBUG"
            || key == "NUM_JOBS"
            || key.starts_with("CARGO_ENCODED_")
            || key.starts_with("CARGO_BUILD_")
            || key.starts_with("CARGO_CFG_")
            || key.starts_with("CARGO_FEATURE_")
            || key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_MANIFEST_")
            || key.starts_with("CARGO_PRIMARY_")
            || key.starts_with("CARGO_MAKEFLAGS")
            || key.starts_with("DEP_")
            || key.starts_with("RUSTC_");
        if leaks_host_settings {
            command.env_remove(key.as_ref());
        }
    }
}

/// `llvm-objcopy --strip-all elf stripped`.
fn strip(elf: &Path, stripped: &Path, workspace: &Path) -> Result<(), String> {
    let objcopy = find_llvm_objcopy(workspace)?;
    let status = Command::new(&objcopy)
        .arg("--strip-all")
        .arg(elf)
        .arg(stripped)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", objcopy.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "llvm-objcopy --strip-all {} failed ({status})",
            elf.display()
        ))
    }
}

/// `llvm-objcopy` from the pinned toolchain's `llvm-tools` component
/// (`<sysroot>/lib/rustlib/<host>/bin/`); rustc runs in the workspace so
/// rustup picks the toolchain its rust-toolchain.toml pins.
fn find_llvm_objcopy(workspace: &Path) -> Result<PathBuf, String> {
    let query = |args: &[&str]| -> Result<String, String> {
        let out = Command::new("rustc")
            .current_dir(workspace)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run rustc: {e}"))?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let sysroot = query(&["--print", "sysroot"])?;
    let host = query(&["-vV"])?
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or("rustc -vV names no host")?;
    let path = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(host)
        .join("bin/llvm-objcopy");
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: the llvm-tools component is needed (rust-toolchain.toml lists it)",
            path.display()
        ))
    }
}
