//! The probe: can this QEMU start a machine with the runner's command line?
//!
//! QEMU refuses to start a machine when a device on its command line needs
//! a firmware file that is not installed (`-M virt` without `-nic none`
//! wants `efi-virtio.rom` from `ipxe-qemu`, which QEMU only recommends).
//! A boot that fails that way says nothing about the kernel, and the test
//! suite would report it as several failed tests. So before the first boot
//! of a machine the runner starts it once with its own command line
//! ([`LaunchConfig::qemu_args`], only the kernel replaced by a 112-byte
//! arm64 Image that ends QEMU through semihosting with status 0), and
//! turns a refusal into one sentence naming the missing file and the
//! Debian package that has it.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use super::{run_to_completion, shell_command, Echo, KernelFormat, LaunchConfig, ProcessEnd};
use super::{QemuBinary, QemuError};
use crate::guest_mode::GuestMode;
use crate::machine::Machine;

/// How long the probe may take. It runs a handful of guest instructions;
/// QEMU itself starts in well under a second.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The probe's guest: an arm64 Image (header, so that both machines load
/// it as the firmware loads `kernel8.img`) whose code asks semihosting for
/// `SYS_EXIT_EXTENDED(ADP_Stopped_ApplicationExit, 0)`. It is position
/// independent and runs with the MMU off, at EL1 (virt) or EL2 (raspi4b).
pub fn probe_image() -> Vec<u8> {
    const CODE_OFFSET: u32 = 0x40;
    const BLOCK_OFFSET: u32 = 0x60;
    const IMAGE_SIZE: u64 = 0x70;
    let words: [u32; 4] = [
        // adr x1, block (+0x20 from here)
        0x1000_0001 | (((BLOCK_OFFSET - CODE_OFFSET) >> 2) << 5),
        // movz x0, #0x20 (SYS_EXIT_EXTENDED)
        0xd280_0000 | (0x20 << 5),
        // hlt #0xf000 (the A64 semihosting call)
        0xd440_0000 | (0xf000 << 5),
        // b . (only reached if semihosting is off)
        0x1400_0000,
    ];
    let mut image = Vec::with_capacity(IMAGE_SIZE as usize);
    // Header (Linux Documentation/arch/arm64/booting.rst): code0 branches
    // over the 64-byte header to the code.
    image.extend_from_slice(&(0x1400_0000u32 | (CODE_OFFSET >> 2)).to_le_bytes());
    image.extend_from_slice(&0u32.to_le_bytes()); // code1
    image.extend_from_slice(&0x8_0000u64.to_le_bytes()); // text_offset
    image.extend_from_slice(&IMAGE_SIZE.to_le_bytes()); // image_size
    image.extend_from_slice(&0u64.to_le_bytes()); // flags: little endian
    image.extend_from_slice(&[0; 24]); // res2..res4
    image.extend_from_slice(b"ARM\x64"); // magic
    image.extend_from_slice(&0u32.to_le_bytes()); // res5
    for word in words {
        image.extend_from_slice(&word.to_le_bytes());
    }
    image.resize(BLOCK_OFFSET as usize, 0);
    // The parameter block: reason ADP_Stopped_ApplicationExit, status 0.
    image.extend_from_slice(&0x2_0026u64.to_le_bytes());
    image.extend_from_slice(&0u64.to_le_bytes());
    image
}

/// The command line the probe runs for `machine`: the runner's own, with
/// the probe Image as the kernel.
pub fn probe_config(machine: Machine, image: &Path, dtb: Option<PathBuf>) -> LaunchConfig {
    LaunchConfig {
        machine,
        mode: GuestMode::Demo,
        kernel: image.to_path_buf(),
        format: KernelFormat::Image,
        dtb: match machine {
            Machine::Virt => None,
            Machine::Raspi4b => dtb,
        },
        gdb: false,
        icount: false,
        boot_options: Vec::new(),
        system_image: None,
        cpus: None,
    }
}

/// Starts `machine` once with the probe Image; `Ok` if QEMU ran it to its
/// semihosting exit.
pub fn probe(qemu: &QemuBinary, machine: Machine, dtb: Option<PathBuf>) -> Result<(), QemuError> {
    let image = std::env::temp_dir().join(format!("portcullis-probe-{}.img", std::process::id()));
    fs::write(&image, probe_image()).map_err(|error| QemuError::CannotStart {
        path: image.clone(),
        reason: format!("cannot write the probe image: {error}"),
    })?;
    let config = probe_config(machine, &image, dtb);
    let mut command = Command::new(&qemu.path);
    command.args(config.qemu_args());
    let output = run_to_completion(command, Some(PROBE_TIMEOUT), Echo::Quiet);
    // The image is only needed while QEMU loads it.
    let _ = fs::remove_file(&image);
    let output = output?;
    if output.end == ProcessEnd::Exited(0) {
        return Ok(());
    }
    let command = shell_command(&qemu.path, &config.qemu_args());
    Err(match missing_file(&output.stderr) {
        Some(file) => QemuError::MissingFile {
            machine,
            package: package_of(&file),
            file,
            command,
        },
        None => QemuError::ProbeFailed {
            machine,
            end: output.end,
            stderr: output.stderr.trim().to_string(),
            command,
        },
    })
}

/// [`probe`], at most once per QEMU executable and machine in this
/// process: every boot goes through here, and one start is enough.
pub fn probe_once(
    qemu: &QemuBinary,
    machine: Machine,
    dtb: Option<PathBuf>,
) -> Result<(), QemuError> {
    static PASSED: Mutex<Option<HashSet<(PathBuf, Machine)>>> = Mutex::new(None);
    let key = (qemu.path.clone(), machine);
    let passed = |set: &mut Option<HashSet<_>>| set.get_or_insert_with(HashSet::new).contains(&key);
    if passed(&mut PASSED.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(());
    }
    probe(qemu, machine, dtb)?;
    PASSED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(key);
    Ok(())
}

/// The file QEMU says it could not find, from its stderr: the quoted name
/// on a line about a ROM, BIOS or firmware file it failed to find, load or
/// open (`failed to find romfile "efi-virtio.rom"`, `Could not find ROM
/// image 'x.fd'`, `could not load PC BIOS 'bios-256k.bin'`).
pub fn missing_file(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|line| {
        // The words before the quoted name (a path may contain anything).
        let lower = line
            .split(['"', '\''])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let about_a_file = ["rom", "bios", "firmware"]
            .iter()
            .any(|word| lower.contains(word));
        let failed = ["find", "load", "open"]
            .iter()
            .any(|word| lower.contains(word));
        if !(about_a_file && failed) {
            return None;
        }
        let quoted = ['"', '\''].iter().find_map(|&quote| {
            let (_, rest) = line.split_once(quote)?;
            let (name, _) = rest.split_once(quote)?;
            (!name.is_empty()).then_some(name)
        })?;
        let name = Path::new(quoted)
            .file_name()?
            .to_string_lossy()
            .into_owned();
        Some(name)
    })
}

/// The Debian package that installs the QEMU firmware file `file` under
/// /usr/share/qemu, for the names QEMU's aarch64 machines can ask for.
pub fn package_of(file: &str) -> Option<&'static str> {
    let has_prefix = |prefixes: &[&str]| prefixes.iter().any(|p| file.starts_with(p));
    if has_prefix(&["efi-", "pxe-"]) && file.ends_with(".rom") {
        Some("ipxe-qemu")
    } else if has_prefix(&["vgabios", "bios"]) && file.ends_with(".bin") {
        Some("seabios")
    } else if has_prefix(&["QEMU_EFI", "AAVMF", "edk2-aarch64"]) {
        Some("qemu-efi-aarch64")
    } else if has_prefix(&["edk2-arm", "AAVMF32"]) {
        Some("qemu-efi-arm")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(image: &[u8], offset: usize) -> u32 {
        u32::from_le_bytes(image[offset..offset + 4].try_into().unwrap())
    }

    #[test]
    fn the_probe_image_has_an_arm64_header_and_branches_to_its_code() {
        let image = probe_image();
        assert_eq!(image.len(), 0x70);
        assert_eq!(&image[56..60], b"ARM\x64");
        assert_eq!(
            u64::from_le_bytes(image[8..16].try_into().unwrap()),
            0x80000
        );
        assert_eq!(
            u64::from_le_bytes(image[16..24].try_into().unwrap()),
            image.len() as u64
        );
        // b +0x40
        assert_eq!(word(&image, 0), 0x1400_0010);
    }

    #[test]
    fn the_probe_code_is_the_semihosting_exit() {
        let image = probe_image();
        // Encodings checked against `llvm-objdump -d` of the same source.
        assert_eq!(word(&image, 0x40), 0x1000_0101, "adr x1, #0x20");
        assert_eq!(word(&image, 0x44), 0xd280_0400, "mov x0, #0x20");
        assert_eq!(word(&image, 0x48), 0xd45e_0000, "hlt #0xf000");
        assert_eq!(word(&image, 0x4c), 0x1400_0000, "b .");
        assert_eq!(&image[0x60..0x68], &0x2_0026u64.to_le_bytes());
        assert_eq!(&image[0x68..0x70], &[0; 8]);
    }

    #[test]
    fn the_probe_runs_the_runners_command_line() {
        let image = Path::new("/tmp/probe.img");
        for machine in Machine::ALL {
            let config = probe_config(machine, image, Some(PathBuf::from("/f/rpi.dtb")));
            let real = LaunchConfig {
                kernel: image.to_path_buf(),
                ..config.clone()
            };
            assert_eq!(config.qemu_args(), real.qemu_args());
            assert_eq!(config.dtb.is_some(), machine == Machine::Raspi4b);
        }
    }

    /// A stand-in for qemu-system-aarch64: a shell script that prints
    /// `stderr` and exits with `status`.
    fn fake_qemu(name: &str, stderr: &str, status: i32) -> QemuBinary {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!(
            "portcullis-fake-qemu-{name}-{}",
            std::process::id()
        ));
        let script = format!("#!/bin/sh\nprintf '%s\\n' '{stderr}' >&2\nexit {status}\n");
        fs::write(&path, script).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        // A process another test thread forked while the file was open for
        // writing holds it open until it execs, and until then running the
        // script fails with ETXTBSY: wait that out once here.
        const TEXT_FILE_BUSY: i32 = 26;
        for _ in 0..200 {
            match std::process::Command::new(&path).output() {
                Err(e) if e.raw_os_error() == Some(TEXT_FILE_BUSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(5))
                }
                _ => break,
            }
        }
        QemuBinary {
            path,
            version: super::super::QemuVersion {
                major: 10,
                minor: 0,
                micro: 2,
            },
        }
    }

    #[test]
    fn a_qemu_without_the_rom_fails_the_probe_with_one_sentence() {
        let qemu = fake_qemu(
            "rom",
            r#"qemu-system-aarch64: failed to find romfile "efi-virtio.rom""#,
            1,
        );
        let error = probe(&qemu, Machine::Virt, None).unwrap_err();
        let _ = fs::remove_file(&qemu.path);
        assert!(
            matches!(&error, QemuError::MissingFile { file, package: Some("ipxe-qemu"), .. } if file == "efi-virtio.rom"),
            "{error:?}"
        );
        let sentence = error.to_string();
        assert!(
            sentence.starts_with(
                "QEMU cannot start the virt machine: it needs the file efi-virtio.rom, which is \
                 not installed; Debian's package ipxe-qemu has it (apt-get install ipxe-qemu)."
            ),
            "{sentence}"
        );
        assert!(sentence.contains(" -nic none "), "{sentence}");
    }

    #[test]
    fn a_qemu_that_fails_otherwise_is_reported_with_what_it_said() {
        let qemu = fake_qemu("other", "qemu-system-aarch64: something else", 1);
        let error = probe(&qemu, Machine::Raspi4b, None).unwrap_err();
        let _ = fs::remove_file(&qemu.path);
        assert!(
            matches!(
                &error,
                QemuError::ProbeFailed {
                    end: ProcessEnd::Exited(1),
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(error
            .to_string()
            .contains("exited with status 1; QEMU said: qemu-system-aarch64: something else"));
    }

    #[test]
    fn a_qemu_that_exits_0_passes_the_probe() {
        let qemu = fake_qemu("ok", "", 0);
        let result = probe(&qemu, Machine::Virt, None);
        let _ = fs::remove_file(&qemu.path);
        assert_eq!(result, Ok(()));
    }

    #[test]
    fn names_the_missing_rom_of_the_default_network_card() {
        let stderr = "qemu-system-aarch64: failed to find romfile \"efi-virtio.rom\"\n";
        assert_eq!(missing_file(stderr).as_deref(), Some("efi-virtio.rom"));
        assert_eq!(package_of("efi-virtio.rom"), Some("ipxe-qemu"));
    }

    #[test]
    fn names_other_missing_firmware_files() {
        assert_eq!(
            missing_file("qemu-system-aarch64: Could not find ROM image '/usr/share/qemu/edk2-aarch64-code.fd'")
                .as_deref(),
            Some("edk2-aarch64-code.fd")
        );
        assert_eq!(package_of("edk2-aarch64-code.fd"), Some("qemu-efi-aarch64"));
        assert_eq!(
            missing_file("qemu: could not load PC BIOS 'bios-256k.bin'").as_deref(),
            Some("bios-256k.bin")
        );
        assert_eq!(package_of("bios-256k.bin"), Some("seabios"));
        assert_eq!(package_of("vgabios-stdvga.bin"), Some("seabios"));
        assert_eq!(package_of("pxe-e1000.rom"), Some("ipxe-qemu"));
        assert_eq!(package_of("something-else.bin"), None);
    }

    #[test]
    fn other_complaints_name_no_file() {
        assert_eq!(missing_file(""), None);
        assert_eq!(
            missing_file("qemu-system-aarch64: -M raspi4b: unsupported machine type"),
            None
        );
        assert_eq!(
            missing_file("qemu-system-aarch64: could not load kernel '/k/kernel8.img'"),
            None,
            "the kernel is not firmware: the runner checks it exists"
        );
        assert_eq!(
            missing_file("qemu-system-aarch64: could not load kernel '/home/jerome/k.img'"),
            None,
            "words in the path do not count"
        );
    }
}
