//! One boot from request to verdict: find QEMU and the kernel, build the
//! command line, run it, judge the output.
//!
//! The CLI and the integration tests both go through here, so a test run
//! and `./qemu-run.sh` boot the guest the same way.

use std::fmt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::artifacts::{self, ArtifactError, KernelFlavour, RPI4_DTB_FILE_NAME};
use crate::guest_mode::GuestMode;
use crate::guest_output::RunOutcome;
use crate::machine::Machine;
use crate::qemu::{
    probe, probe_once, run_to_completion, shell_command, Echo, KernelFormat, LaunchConfig,
    QemuBinary, QemuError, GDB_PORT,
};

/// How long a run may take before QEMU is killed, unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// What the caller wants booted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRequest {
    /// The machine model.
    pub machine: Machine,
    /// Demo or tests.
    pub mode: GuestMode,
    /// On raspi4b, boot the ELF (entered at EL3) instead of `kernel8.img`.
    /// virt always boots the ELF.
    pub elf: bool,
    /// Wait for gdb on port 1234 before the first instruction.
    pub gdb: bool,
    /// Run with `-icount shift=0`.
    pub icount: bool,
    /// Kill QEMU after this long; `None` waits forever.
    pub timeout: Option<Duration>,
    /// A DTB to use on raspi4b instead of the one found by
    /// [`artifacts::find_rpi4_dtb`].
    pub dtb: Option<PathBuf>,
    /// Show the output live, or only capture it.
    pub echo: Echo,
    /// More `key=value` words for the kernel command line.
    pub boot_options: Vec<String>,
    /// Which build of the kernel boots (by default the one of `mode`).
    pub image: KernelFlavour,
    /// A system image to load beside the kernel (`--system-image`);
    /// `None`: the image of `system`, else the mode's own system.
    pub system_image: Option<PathBuf>,
    /// A system description to build and boot (`run SYSTEM.toml`).
    pub system: Option<PathBuf>,
    /// How many cores the guest runs (`--cpus N`; see
    /// [`LaunchConfig::cpus`]).
    pub cpus: Option<u32>,
}

impl RunRequest {
    /// A captured run with the default timeout: what the tests use.
    pub fn captured(machine: Machine, mode: GuestMode) -> RunRequest {
        RunRequest {
            machine,
            mode,
            elf: false,
            gdb: false,
            icount: false,
            timeout: Some(DEFAULT_TIMEOUT),
            dtb: None,
            echo: Echo::Quiet,
            boot_options: Vec::new(),
            image: KernelFlavour::for_mode(mode),
            system_image: None,
            system: None,
            cpus: None,
        }
    }
}

/// Why a run could not happen at all (as opposed to a guest that failed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// QEMU is missing, too old, or could not be run.
    Qemu(QemuError),
    /// A file to boot is missing.
    Artifact(ArtifactError),
    /// The system image to load is not a file.
    NoSystemImage(PathBuf),
    /// The system description has mistakes, or its tasks do not build:
    /// one line per mistake, each naming the file, line and field.
    System(String),
    /// A scripted shell session went wrong: what was awaited, and what
    /// the guest printed (`shell_session`).
    Session(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Qemu(error) => error.fmt(f),
            RunError::Artifact(error) => error.fmt(f),
            RunError::NoSystemImage(path) => {
                write!(f, "no system image at {} (--system-image)", path.display())
            }
            RunError::System(errors) => write!(f, "the system cannot be built:\n{errors}"),
            RunError::Session(what) => write!(f, "the shell session failed: {what}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<QemuError> for RunError {
    fn from(error: QemuError) -> Self {
        RunError::Qemu(error)
    }
}

impl From<ArtifactError> for RunError {
    fn from(error: ArtifactError) -> Self {
        RunError::Artifact(error)
    }
}

/// A run that is ready to start: QEMU found, files found, command built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedRun {
    /// The QEMU that will run.
    pub qemu: QemuBinary,
    /// The invocation.
    pub config: LaunchConfig,
    /// Things the user should know (e.g. raspi4b without a DTB).
    pub warnings: Vec<String>,
    /// The kernel ELF, for gdb's symbols (also when booting the Image).
    pub symbols: PathBuf,
    timeout: Option<Duration>,
    echo: Echo,
    /// It boots one of the project's own systems (`systems/*.toml`),
    /// whose driver speaks for it (`RunOutcome::judge_own_system`).
    own_system: bool,
}

/// Finds QEMU and the boot files for `request`, and checks (once per
/// machine and process, see [`crate::qemu::probe`]) that QEMU can start
/// the machine with the runner's command line.
pub fn prepare(request: &RunRequest) -> Result<PreparedRun, RunError> {
    let qemu = QemuBinary::locate()?;
    qemu.check_supports(request.machine)?;
    let elf = artifacts::flavoured_kernel_elf(request.image)?;
    let system_image = match (&request.system_image, &request.system) {
        (Some(image), _) => image.clone(),
        (None, Some(description)) => build_system(description, request.echo)?.0,
        (None, None) => artifacts::own_system_image(request.mode)?,
    };
    if !system_image.is_file() {
        return Err(RunError::NoSystemImage(system_image));
    }
    let mut warnings = Vec::new();
    let (kernel, format, dtb) = match request.machine {
        Machine::Virt => {
            if request.elf {
                warnings.push("--elf changes nothing on virt: virt always boots the ELF".into());
            }
            (elf.clone(), KernelFormat::Elf, None)
        }
        Machine::Raspi4b => {
            let (kernel, format) = if request.elf {
                (elf.clone(), KernelFormat::Elf)
            } else {
                (
                    artifacts::flavoured_kernel_image(request.image)?,
                    KernelFormat::Image,
                )
            };
            let dtb = artifacts::find_rpi4_dtb(request.dtb.as_deref())?;
            if dtb.is_none() {
                warnings.push(format!(
                    "no {RPI4_DTB_FILE_NAME} (looked at --dtb, ${}, {}): booting raspi4b without a device tree, so the kernel gets no memory map and no bootargs; ./qemu-run.sh --machine raspi4b fetches it",
                    artifacts::DTB_ENV,
                    artifacts::cached_rpi4_dtb().display()
                ));
            }
            (kernel, format, dtb)
        }
    };
    // A machine QEMU cannot start is named here, in one sentence, rather
    // than as a guest that printed nothing.
    probe_once(&qemu, request.machine, dtb.clone())?;
    Ok(PreparedRun {
        qemu,
        config: LaunchConfig {
            machine: request.machine,
            mode: request.mode,
            kernel,
            format,
            dtb,
            gdb: request.gdb,
            icount: request.icount,
            boot_options: request.boot_options.clone(),
            system_image: Some(system_image),
            cpus: request.cpus,
        },
        warnings,
        symbols: elf,
        // Nobody steps through a kernel in gdb against a deadline.
        timeout: if request.gdb { None } else { request.timeout },
        echo: request.echo,
        own_system: request.system_image.is_none() && request.system.is_none(),
    })
}

/// Checks the description at `path`, builds its tasks and writes its
/// system image under [`artifacts::systems_build_dir`]; returns the
/// image's path and a summary (a line per task). With `Echo::Live` the
/// summary is printed and cargo's progress shown.
pub fn build_system(path: &std::path::Path, echo: Echo) -> Result<(PathBuf, String), RunError> {
    let dir = artifacts::systems_build_dir();
    let options = system::BuildOptions {
        target_dir: dir.clone(),
        workspace: artifacts::workspace_root(),
        quiet: echo != Echo::Live,
    };
    let (image, summary) = system::build_image(path, &options)
        .map_err(|errors| RunError::System(errors.to_string()))?;
    let images = dir.join("images");
    let file = images.join(format!("{}.img", summary.name));
    std::fs::create_dir_all(&images)
        .and_then(|()| std::fs::write(&file, &image))
        .map_err(|e| RunError::System(format!("cannot write {}: {e}", file.display())))?;
    let summary = summary.to_string();
    if echo == Echo::Live {
        eprintln!(
            "portcullis: {}",
            summary.trim_end().replace('\n', "\nportcullis:   ")
        );
        eprintln!("portcullis: system image {}", file.display());
    }
    Ok((file, summary))
}

/// Starts each of `machines` once with the runner's command line (see
/// [`crate::qemu::probe`]); returns the QEMU that can start them all. On
/// raspi4b the device tree a boot would pass is passed.
pub fn probe_machines(machines: &[Machine]) -> Result<QemuBinary, RunError> {
    let qemu = QemuBinary::locate()?;
    for &machine in machines {
        qemu.check_supports(machine)?;
        let dtb = match machine {
            Machine::Virt => None,
            Machine::Raspi4b => artifacts::find_rpi4_dtb(None)?,
        };
        probe(&qemu, machine, dtb)?;
    }
    Ok(qemu)
}

impl PreparedRun {
    /// The QEMU command, ready to paste into a shell.
    pub fn command_line(&self) -> String {
        shell_command(&self.qemu.path, &self.config.qemu_args())
    }

    /// How to attach gdb to a `--gdb` run.
    pub fn gdb_instructions(&self) -> String {
        format!(
            "QEMU waits for gdb on port {GDB_PORT}; attach with:\n  gdb-multiarch {} -ex 'target remote :{GDB_PORT}'\n(gdb-multiarch is a Debian package: apt-get install gdb-multiarch)",
            self.symbols.display()
        )
    }

    /// Boots the guest, waits for it, and judges what it printed.
    pub fn run(&self) -> Result<RunOutcome, RunError> {
        let mut command = Command::new(&self.qemu.path);
        command.args(self.config.qemu_args());
        let output = run_to_completion(command, self.timeout, self.echo)?;
        Ok(if self.own_system {
            RunOutcome::judge_own_system(self.config.mode, output)
        } else {
            RunOutcome::judge(self.config.mode, output)
        })
    }
}

/// Prepares and runs `request` in one step.
pub fn boot(request: &RunRequest) -> Result<RunOutcome, RunError> {
    prepare(request)?.run()
}
