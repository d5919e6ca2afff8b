//! Where the files QEMU boots live: the kernel ELF, `kernel8.img`, the DTB.
//!
//! `build.rs` exports the kernel paths at compile time. The files themselves
//! may not exist (the kernel failed to build, or `PORTCULLIS_SKIP_IMAGE` was
//! set), so every lookup checks the file and says what is missing.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};

/// File name of the Raspberry Pi 4 model B device tree blob.
pub const RPI4_DTB_FILE_NAME: &str = "bcm2711-rpi-4-b.dtb";

/// Environment variable that names a DTB to use (set by `qemu-run.sh`).
pub const DTB_ENV: &str = "PORTCULLIS_DTB";

/// The kernel ELF path exported by `build.rs`.
const KERNEL_ELF: Option<&str> = option_env!("PORTCULLIS_KERNEL_ELF");
/// The `kernel8.img` path exported by `build.rs`.
const KERNEL_IMAGE: Option<&str> = option_env!("PORTCULLIS_KERNEL_IMAGE");
/// The test image's files (`--features test-calls`).
const TEST_KERNEL_ELF: Option<&str> = option_env!("PORTCULLIS_TEST_KERNEL_ELF");
const TEST_KERNEL_IMAGE: Option<&str> = option_env!("PORTCULLIS_TEST_KERNEL_IMAGE");
/// The bench image's files (`--features bench-calls`).
const BENCH_KERNEL_ELF: Option<&str> = option_env!("PORTCULLIS_BENCH_KERNEL_ELF");
const BENCH_KERNEL_IMAGE: Option<&str> = option_env!("PORTCULLIS_BENCH_KERNEL_IMAGE");

/// Which build of the kernel: `build.rs` makes all three (docs/abi.md,
/// "Calls of test and bench images").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelFlavour {
    /// No test or bench calls: what a user boots (the demo, the SD card).
    #[default]
    Default,
    /// With the test calls (`test-calls`): the in-guest suite, the fuzzer,
    /// the kernel-fault tests.
    Test,
    /// With the bench calls (`bench-calls`): the benchmarks.
    Bench,
}

impl KernelFlavour {
    /// The build a mode runs on.
    pub fn for_mode(mode: crate::GuestMode) -> KernelFlavour {
        match mode {
            crate::GuestMode::Demo => KernelFlavour::Default,
            crate::GuestMode::Test | crate::GuestMode::Fuzz => KernelFlavour::Test,
            crate::GuestMode::Bench => KernelFlavour::Bench,
        }
    }

    /// Its name, as `--image` takes it.
    pub fn name(self) -> &'static str {
        match self {
            KernelFlavour::Default => "default",
            KernelFlavour::Test => "test",
            KernelFlavour::Bench => "bench",
        }
    }

    /// By name (`--image`).
    pub fn from_name(name: &str) -> Option<KernelFlavour> {
        [
            KernelFlavour::Default,
            KernelFlavour::Test,
            KernelFlavour::Bench,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }
}
/// The directory of the stripped task ELFs init embeds, exported by
/// `build.rs`.
const TASK_ELF_DIR: Option<&str> = option_env!("PORTCULLIS_TASK_ELF_DIR");
/// The directory of the project's own system images, exported by
/// `build.rs` (`systems/NAME.toml` built into `NAME.img`).
const SYSTEMS_DIR: Option<&str> = option_env!("PORTCULLIS_SYSTEMS_DIR");
/// The workspace root exported by `build.rs`.
const WORKSPACE: Option<&str> = option_env!("PORTCULLIS_WORKSPACE");

/// A boot file that is not there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArtifactError {
    /// `build.rs` did not export the variable that names this file.
    NotExported {
        /// The compile-time variable that was missing.
        variable: &'static str,
    },
    /// The path is known but no file is there.
    Missing {
        /// What the file is, for the message.
        what: &'static str,
        /// Where it was expected.
        path: PathBuf,
    },
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::NotExported { variable } => write!(
                f,
                "{variable} was not set when the runner was compiled: build.rs exports it; rebuild with `cargo build`"
            ),
            ArtifactError::Missing { what, path } => write!(
                f,
                "the {what} is missing at {}: build it with `cargo build` (build.rs cross-builds the kernel; check its errors, and that PORTCULLIS_SKIP_IMAGE is not set)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ArtifactError {}

/// The kernel ELF (`-kernel` on virt, or on raspi4b with `--elf`).
pub fn kernel_elf() -> Result<PathBuf, ArtifactError> {
    flavoured_kernel_elf(KernelFlavour::Default)
}

/// The ELF of that build of the kernel.
pub fn flavoured_kernel_elf(flavour: KernelFlavour) -> Result<PathBuf, ArtifactError> {
    match flavour {
        KernelFlavour::Default => existing_file(KERNEL_ELF, "PORTCULLIS_KERNEL_ELF", "kernel ELF"),
        KernelFlavour::Test => existing_file(
            TEST_KERNEL_ELF,
            "PORTCULLIS_TEST_KERNEL_ELF",
            "test kernel ELF",
        ),
        KernelFlavour::Bench => existing_file(
            BENCH_KERNEL_ELF,
            "PORTCULLIS_BENCH_KERNEL_ELF",
            "bench kernel ELF",
        ),
    }
}

/// The `kernel8.img` of that build of the kernel.
pub fn flavoured_kernel_image(flavour: KernelFlavour) -> Result<PathBuf, ArtifactError> {
    match flavour {
        KernelFlavour::Default => kernel_image(),
        KernelFlavour::Test => existing_file(
            TEST_KERNEL_IMAGE,
            "PORTCULLIS_TEST_KERNEL_IMAGE",
            "test kernel8.img",
        ),
        KernelFlavour::Bench => existing_file(
            BENCH_KERNEL_IMAGE,
            "PORTCULLIS_BENCH_KERNEL_IMAGE",
            "bench kernel8.img",
        ),
    }
}

/// The raw arm64 Image `kernel8.img` (`-kernel` on raspi4b).
pub fn kernel_image() -> Result<PathBuf, ArtifactError> {
    existing_file(KERNEL_IMAGE, "PORTCULLIS_KERNEL_IMAGE", "kernel8.img")
}

/// The nested build's target directory (`target/image`), where the
/// kernel is `<kernel target>/image/portcullis-kernel`.
fn image_dir() -> Result<&'static Path, ArtifactError> {
    let kernel = KERNEL_ELF.ok_or(ArtifactError::NotExported {
        variable: "PORTCULLIS_KERNEL_ELF",
    })?;
    Ok(Path::new(kernel)
        .ancestors()
        .nth(3)
        .unwrap_or(Path::new("")))
}

/// init's ELF (the project's test driver, built by the system tool into
/// the same target directory as the kernel), for the profile aid's
/// symbols: `target/image/aarch64-unknown-none/image/portcullis-init`.
pub fn init_elf() -> Result<PathBuf, ArtifactError> {
    require_file(
        &image_dir()?.join("aarch64-unknown-none/image/portcullis-init"),
        "init ELF",
    )
}

/// The root task's ELF as the kernel embeds it (stripped):
/// `target/image/root/portcullis-root`.
pub fn root_elf() -> Result<PathBuf, ArtifactError> {
    require_file(&image_dir()?.join("root/portcullis-root"), "root task ELF")
}

/// A stripped task ELF init embeds (`portcullis-echo`,
/// `portcullis-echo-client`): `build.rs` writes them to
/// `target/image/tasks/`.
pub fn task_elf(name: &str) -> Result<PathBuf, ArtifactError> {
    let dir = TASK_ELF_DIR.ok_or(ArtifactError::NotExported {
        variable: "PORTCULLIS_TASK_ELF_DIR",
    })?;
    require_file(&Path::new(dir).join(name), "task ELF")
}

/// The system image of one of the project's own systems (`systems/`),
/// the one a mode boots unless told another.
pub fn own_system_image(mode: crate::GuestMode) -> Result<PathBuf, ArtifactError> {
    let dir = SYSTEMS_DIR.ok_or(ArtifactError::NotExported {
        variable: "PORTCULLIS_SYSTEMS_DIR",
    })?;
    require_file(
        &Path::new(dir).join(format!("{}.img", mode.name())),
        "system image",
    )
}

/// Where `run SYSTEM.toml` builds a user's tasks (one cargo target
/// directory for every system, so a warm build is quick) and writes
/// their images (`images/NAME.img`).
pub fn systems_build_dir() -> PathBuf {
    workspace_root().join("target").join("systems")
}

/// The workspace root: the folder that holds `qemu-run.sh` and `target/`.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(WORKSPACE.unwrap_or(env!("CARGO_MANIFEST_DIR")))
}

/// Where `qemu-run.sh` caches the Raspberry Pi 4 DTB.
pub fn cached_rpi4_dtb() -> PathBuf {
    workspace_root()
        .join("target")
        .join("firmware")
        .join(RPI4_DTB_FILE_NAME)
}

/// The Raspberry Pi 4 DTB to pass with `-dtb`, if one can be found.
///
/// Looks at `explicit` (from `--dtb`), then `$PORTCULLIS_DTB`, then the
/// cache of `qemu-run.sh`. An explicit path that does not exist is an
/// error rather than a silent fallback: the user asked for that file.
pub fn find_rpi4_dtb(explicit: Option<&Path>) -> Result<Option<PathBuf>, ArtifactError> {
    if let Some(path) = explicit {
        return require_file(path, "DTB given with --dtb").map(Some);
    }
    if let Some(path) = env::var_os(DTB_ENV).filter(|value| !value.is_empty()) {
        return require_file(Path::new(&path), "DTB named by $PORTCULLIS_DTB").map(Some);
    }
    let cached = cached_rpi4_dtb();
    Ok(cached.is_file().then_some(cached))
}

fn existing_file(
    exported: Option<&'static str>,
    variable: &'static str,
    what: &'static str,
) -> Result<PathBuf, ArtifactError> {
    let path = exported.ok_or(ArtifactError::NotExported { variable })?;
    require_file(Path::new(path), what)
}

fn require_file(path: &Path, what: &'static str) -> Result<PathBuf, ArtifactError> {
    if path.is_file() {
        Ok(path.to_path_buf())
    } else {
        Err(ArtifactError::Missing {
            what,
            path: path.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_dtb_lives_under_target_firmware() {
        let path = cached_rpi4_dtb();
        assert!(path.ends_with("target/firmware/bcm2711-rpi-4-b.dtb"));
        assert!(path.starts_with(workspace_root()));
    }

    #[test]
    fn explicit_dtb_that_does_not_exist_is_an_error() {
        let missing = Path::new("/nonexistent/portcullis/test.dtb");
        assert_eq!(
            find_rpi4_dtb(Some(missing)),
            Err(ArtifactError::Missing {
                what: "DTB given with --dtb",
                path: missing.to_path_buf()
            })
        );
    }

    #[test]
    fn explicit_dtb_that_exists_is_used() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        assert_eq!(find_rpi4_dtb(Some(&manifest)), Ok(Some(manifest.clone())));
    }

    #[test]
    fn missing_artifact_message_says_how_to_build() {
        let error = ArtifactError::Missing {
            what: "kernel ELF",
            path: PathBuf::from("/x/kernel"),
        };
        let message = error.to_string();
        assert!(message.contains("/x/kernel"));
        assert!(message.contains("cargo build"));
    }
}
