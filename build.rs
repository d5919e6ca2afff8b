//! Cross-builds the Portcullis image for the host package.
//!
//! The host package (the QEMU runner and the integration tests) needs the
//! kernel ELF, the Raspberry Pi `kernel8.img` and the project's own system
//! images. This script builds them with a nested cargo:
//!
//! 1. the task programs init embeds (`servers/echo`, `servers/echo-client`)
//!    for `aarch64-unknown-none`, stripped with `llvm-objcopy --strip-all`
//!    into `target/image/tasks/` (`PORTCULLIS_TASK_ELF_DIR`), so the copies
//!    in init's image are small;
//! 2. the root task (`root/`, `portcullis-root`) for `aarch64-unknown-none`
//!    (hard float: user code may use FP/SIMD, the kernel saves it on
//!    thread switches), stripped into `target/image/root/` (the root task
//!    gets a copy of the file);
//! 3. the kernel for `aarch64-unknown-none-softfloat` (the kernel never
//!    touches FP/SIMD registers, so syscalls need not save them), embedding
//!    the stripped root through `PORTCULLIS_ROOT_ELF`, in three flavours
//!    (see docs/abi.md, "Calls of test and bench images"): the test image
//!    (`--features test-calls`, into `target/image/test/`), the bench
//!    image (`--features bench-calls`, into `target/image/bench/`), and
//!    last the default image, which has neither and stays where cargo
//!    puts it;
//! 4. for each, `kernel8.img`, a raw copy of the kernel's loadable segments that starts
//!    with an arm64 Image header, through `llvm-objcopy` from the pinned
//!    toolchain's `llvm-tools` component, padded with zeros to a multiple
//!    of 8 bytes (older Pi firmware refused an image whose size was not a
//!    multiple of 4; the padding lies below `.bss`, which the kernel zeroes
//!    anyway);
//! 5. the project's own systems, `systems/{demo,test,bench,fuzz}.toml`,
//!    through the system tool (`system::build_image`, as any description
//!    is built), into `target/image/systems/NAME.img`
//!    (`PORTCULLIS_SYSTEMS_DIR`). Each has one task, `driver`: init
//!    (`portcullis-init`, embedding the stripped tasks of step 1) as a
//!    privileged task, its mode in its command line.
//!
//! The nested cargo uses its own target directory (`target/image`) so it
//! does not wait for the lock the outer cargo holds, and it starts from a
//! clean environment: variables such as `RUSTFLAGS`, `CARGO_BUILD_TARGET` or
//! `CARGO_ENCODED_RUSTFLAGS` that the outer build sets for the host must not
//! leak into the AArch64 build.
//!
//! Set `PORTCULLIS_SKIP_IMAGE=1` to skip the nested build (for example when
//! only the host parser is being worked on); an image an earlier build
//! left is removed, so the runner reports the image missing instead of
//! booting one built from other sources.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const USER_TARGET: &str = "aarch64-unknown-none";
const KERNEL_TARGET: &str = "aarch64-unknown-none-softfloat";
const PROFILE: &str = "image";
/// The task programs init embeds: their packages (each builds a binary of
/// the same name).
const TASKS: [&str; 2] = ["portcullis-echo", "portcullis-echo-client"];
/// The project's own systems, `systems/NAME.toml`, built into
/// `target/image/systems/NAME.img`.
const OWN_SYSTEMS: [&str; 4] = ["demo", "test", "bench", "fuzz"];

fn main() {
    let workspace = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let target_root = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let image_dir = target_root.join("image");

    let kernel_elf = image_dir
        .join(KERNEL_TARGET)
        .join(PROFILE)
        .join("portcullis-kernel");
    let kernel_image = image_dir.join("kernel8.img");
    let task_dir = image_dir.join("tasks");
    let flavoured = |flavour: &str| {
        let dir = image_dir.join(flavour);
        (dir.join("portcullis-kernel"), dir.join("kernel8.img"))
    };
    let (test_elf, test_image) = flavoured("test");
    let (bench_elf, bench_image) = flavoured("bench");
    let systems_dir = image_dir.join("systems");

    println!(
        "cargo:rustc-env=PORTCULLIS_WORKSPACE={}",
        workspace.display()
    );
    println!(
        "cargo:rustc-env=PORTCULLIS_KERNEL_ELF={}",
        kernel_elf.display()
    );
    println!(
        "cargo:rustc-env=PORTCULLIS_KERNEL_IMAGE={}",
        kernel_image.display()
    );
    println!(
        "cargo:rustc-env=PORTCULLIS_TASK_ELF_DIR={}",
        task_dir.display()
    );
    for (variable, path) in [
        ("PORTCULLIS_SYSTEMS_DIR", &systems_dir),
        ("PORTCULLIS_TEST_KERNEL_ELF", &test_elf),
        ("PORTCULLIS_TEST_KERNEL_IMAGE", &test_image),
        ("PORTCULLIS_BENCH_KERNEL_ELF", &bench_elf),
        ("PORTCULLIS_BENCH_KERNEL_IMAGE", &bench_image),
    ] {
        println!("cargo:rustc-env={variable}={}", path.display());
    }
    println!("cargo:rerun-if-env-changed=PORTCULLIS_SKIP_IMAGE");
    for dir in [
        "abi",
        "arch",
        "entry",
        "microkernel",
        "init",
        "root",
        "servers",
        "systems",
        "system",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=rust-toolchain.toml");

    if env::var_os("PORTCULLIS_SKIP_IMAGE").is_some() {
        // An image left from an earlier build was built from other
        // sources: the runner must report it missing, not boot it.
        for stale in [
            &kernel_elf,
            &kernel_image,
            &test_elf,
            &test_image,
            &bench_elf,
            &bench_image,
        ] {
            match std::fs::remove_file(stale) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => panic!("cannot remove the stale {}: {e}", stale.display()),
            }
        }
        println!("cargo:warning=PORTCULLIS_SKIP_IMAGE is set: the AArch64 image is not built (and an earlier one is removed)");
        return;
    }

    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let user_elf_dir = image_dir.join(USER_TARGET).join(PROFILE);

    let mut tasks = nested_cargo(&cargo, &workspace, &image_dir);
    tasks.args(["build", "--profile", PROFILE]);
    for task in TASKS {
        tasks.args(["-p", task, "--features", &format!("{task}/image")]);
    }
    tasks.args(["--target", USER_TARGET]).run("task programs");
    std::fs::create_dir_all(&task_dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", task_dir.display()));
    for task in TASKS {
        strip(&user_elf_dir.join(task), &task_dir.join(task));
    }
    nested_cargo(&cargo, &workspace, &image_dir)
        .args([
            "build",
            "--profile",
            PROFILE,
            "-p",
            "portcullis-root",
            "--features",
            "image",
        ])
        .args(["--target", USER_TARGET])
        .run("root task");

    // The kernel embeds the root stripped (the root task gets a copy of
    // the file).
    let root_elf = image_dir.join("root").join("portcullis-root");
    std::fs::create_dir_all(image_dir.join("root"))
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", image_dir.join("root").display()));
    strip(&user_elf_dir.join("portcullis-root"), &root_elf);
    // Cargo keeps each feature set's build apart, so after the first build
    // of each, a change rebuilds only what it touches. The default image
    // goes last: cargo's own output path is then the default image's.
    for (features, what, copies) in [
        (
            "image,test-calls",
            "test kernel",
            Some((&test_elf, &test_image)),
        ),
        (
            "image,bench-calls",
            "bench kernel",
            Some((&bench_elf, &bench_image)),
        ),
        ("image", "kernel", None),
    ] {
        nested_cargo(&cargo, &workspace, &image_dir)
            .args([
                "build",
                "--profile",
                PROFILE,
                "-p",
                "portcullis-microkernel",
                "--features",
                features,
            ])
            .args(["--target", KERNEL_TARGET])
            .env("PORTCULLIS_ROOT_ELF", &root_elf)
            .run(what);
        match copies {
            Some((elf, image)) => {
                let dir = elf.parent().expect("a flavour's directory");
                std::fs::create_dir_all(dir)
                    .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
                copy_if_changed(&kernel_elf, elf);
                objcopy_to_binary(elf, image);
            }
            None => objcopy_to_binary(&kernel_elf, &kernel_image),
        }
    }

    // The project's own systems (demo, test suite, benchmarks, fuzzer),
    // from their descriptions, as any user's system is built.
    std::fs::create_dir_all(&systems_dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", systems_dir.display()));
    let options = system::BuildOptions {
        target_dir: image_dir.clone(),
        workspace: workspace.clone(),
        quiet: true,
    };
    for name in OWN_SYSTEMS {
        let description = workspace.join("systems").join(format!("{name}.toml"));
        let (image, _) = system::build_image(&description, &options)
            .unwrap_or_else(|errors| panic!("the {name} system does not build:\n{errors}"));
        write_if_changed(&systems_dir.join(format!("{name}.img")), &image);
    }
}

/// Writes `bytes` to `path` unless it already holds them.
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return;
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// Copies `from` to `to` unless `to` already has the same bytes (so a
/// build that changed nothing leaves the file's time alone).
fn copy_if_changed(from: &Path, to: &Path) {
    let bytes =
        std::fs::read(from).unwrap_or_else(|e| panic!("cannot read {}: {e}", from.display()));
    if std::fs::read(to).ok().as_deref() == Some(bytes.as_slice()) {
        return;
    }
    std::fs::write(to, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", to.display()));
}

/// A cargo command for the AArch64 image with a scrubbed environment.
fn nested_cargo(cargo: &str, workspace: &Path, image_dir: &Path) -> Command {
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .env("CARGO_TARGET_DIR", image_dir)
        // User programs link with the SDK's layout, the same flags the
        // system tool builds with, so the two share one cache.
        .env(
            "CARGO_TARGET_AARCH64_UNKNOWN_NONE_RUSTFLAGS",
            system::user_rustflags(workspace),
        );
    system::scrub_host_build_variables(&mut command);
    command
}

trait RunChecked {
    fn run(&mut self, what: &str);
}

impl RunChecked for Command {
    fn run(&mut self, what: &str) {
        let status = self
            .status()
            .unwrap_or_else(|e| panic!("cannot start cargo for the {what}: {e}"));
        assert!(
            status.success(),
            "building the {what} for AArch64 failed ({status}); see the errors above"
        );
    }
}

/// What the size of `kernel8.img` is rounded up to.
const IMAGE_SIZE_MULTIPLE: u64 = 8;

/// Writes the kernel's loadable segments as a flat binary (`kernel8.img`),
/// padded to a multiple of [`IMAGE_SIZE_MULTIPLE`] bytes.
fn objcopy_to_binary(elf: &Path, image: &Path) {
    let objcopy = find_llvm_objcopy();
    let status = Command::new(&objcopy)
        .args(["-O", "binary"])
        .arg(elf)
        .arg(image)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", objcopy.display()));
    assert!(status.success(), "llvm-objcopy failed ({status})");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(image)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", image.display()));
    let size = file
        .metadata()
        .unwrap_or_else(|e| panic!("cannot read the size of {}: {e}", image.display()))
        .len();
    file.set_len(size.next_multiple_of(IMAGE_SIZE_MULTIPLE))
        .unwrap_or_else(|e| panic!("cannot pad {}: {e}", image.display()));
}

/// Writes `elf` without symbols or debug information to `stripped`,
/// leaving an unchanged file untouched (init, which embeds it, is rebuilt
/// when its time stamp changes).
fn strip(elf: &Path, stripped: &Path) {
    let objcopy = find_llvm_objcopy();
    let fresh = stripped.with_extension("new");
    let status = Command::new(&objcopy)
        .arg("--strip-all")
        .arg(elf)
        .arg(&fresh)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", objcopy.display()));
    assert!(
        status.success(),
        "llvm-objcopy --strip-all {} failed ({status})",
        elf.display()
    );
    let read = |path: &Path| std::fs::read(path).ok();
    if read(&fresh).is_some() && read(&fresh) == read(stripped) {
        let _ = std::fs::remove_file(&fresh);
    } else {
        std::fs::rename(&fresh, stripped).unwrap_or_else(|e| {
            panic!(
                "cannot rename {} to {}: {e}",
                fresh.display(),
                stripped.display()
            )
        });
    }
}

/// `llvm-objcopy` ships in the toolchain's `llvm-tools` component, under
/// `<sysroot>/lib/rustlib/<host>/bin/`.
fn find_llvm_objcopy() -> PathBuf {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let query = |args: &[&str]| -> String {
        let out = Command::new(&rustc)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {rustc}: {e}"));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let sysroot = query(&["--print", "sysroot"]);
    let host = query(&["-vV"])
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let path = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(host)
        .join("bin/llvm-objcopy");
    assert!(
        path.exists(),
        "{} is missing: the llvm-tools component is needed (rust-toolchain.toml lists it; run `rustup toolchain install`)",
        path.display()
    );
    path
}
