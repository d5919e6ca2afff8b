//! Finding `qemu-system-aarch64` and reading its version.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::QemuError;
use crate::machine::Machine;

/// The executable the runner starts.
pub const QEMU_PROGRAM: &str = "qemu-system-aarch64";

/// Environment variable that overrides the QEMU executable's path.
pub const QEMU_ENV: &str = "PORTCULLIS_QEMU";

/// A QEMU release number, as printed by `--version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QemuVersion {
    /// Major release (raspi4b needs 9 or newer).
    pub major: u32,
    /// Minor release.
    pub minor: u32,
    /// Micro (patch) release.
    pub micro: u32,
}

impl fmt::Display for QemuVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.micro)
    }
}

impl QemuVersion {
    /// Reads the version from `qemu-system-aarch64 --version` output, whose
    /// first line is `QEMU emulator version 10.0.2 (Debian ...)`.
    pub fn parse(version_output: &str) -> Option<QemuVersion> {
        let first_line = version_output.lines().next()?;
        let number = first_line
            .split_once("version ")?
            .1
            .split_whitespace()
            .next()?;
        let mut parts = number.split('.').map(|part| {
            // A release candidate reads `9.0.0-rc1` or `8.2.90`.
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
        let major = parts.next()??;
        let minor = parts.next().flatten().unwrap_or(0);
        let micro = parts.next().flatten().unwrap_or(0);
        Some(QemuVersion {
            major,
            minor,
            micro,
        })
    }
}

/// A located QEMU executable and its version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QemuBinary {
    /// Path of the executable.
    pub path: PathBuf,
    /// Its release number.
    pub version: QemuVersion,
}

impl QemuBinary {
    /// Finds QEMU through `$PORTCULLIS_QEMU` or `PATH` and asks its version.
    pub fn locate() -> Result<QemuBinary, QemuError> {
        let path = match env::var_os(QEMU_ENV).filter(|value| !value.is_empty()) {
            Some(path) => PathBuf::from(path),
            None => search_path(QEMU_PROGRAM).ok_or(QemuError::NotFound)?,
        };
        let output = Command::new(&path)
            .arg("--version")
            .output()
            .map_err(|source| QemuError::CannotStart {
                path: path.clone(),
                reason: source.to_string(),
            })?;
        let text = String::from_utf8_lossy(&output.stdout);
        let version = QemuVersion::parse(&text).ok_or_else(|| QemuError::UnreadableVersion {
            path: path.clone(),
            output: text.trim().to_string(),
        })?;
        Ok(QemuBinary { path, version })
    }

    /// Checks that this QEMU has the machine model.
    pub fn check_supports(&self, machine: Machine) -> Result<(), QemuError> {
        let needed = machine.minimum_qemu_major();
        if self.version.major >= needed {
            Ok(())
        } else {
            Err(QemuError::TooOld {
                machine,
                found: self.version,
                needed_major: needed,
            })
        }
    }
}

/// The first executable file called `program` in a `PATH` folder.
fn search_path(program: &str) -> Option<PathBuf> {
    let folders = env::var_os("PATH")?;
    env::split_paths(&folders)
        .map(|folder| folder.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_debian_version_line() {
        let text = "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)\nCopyright (c) 2003-2025 Fabrice Bellard and the QEMU Project developers\n";
        assert_eq!(
            QemuVersion::parse(text),
            Some(QemuVersion {
                major: 10,
                minor: 0,
                micro: 2
            })
        );
    }

    #[test]
    fn reads_bookworm_qemu_7_and_release_candidates() {
        let bookworm = "QEMU emulator version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u12)";
        assert_eq!(QemuVersion::parse(bookworm).map(|v| v.major), Some(7));
        let rc = "QEMU emulator version 9.0.0-rc1";
        assert_eq!(
            QemuVersion::parse(rc),
            Some(QemuVersion {
                major: 9,
                minor: 0,
                micro: 0
            })
        );
    }

    #[test]
    fn rejects_text_without_a_version() {
        assert_eq!(QemuVersion::parse(""), None);
        assert_eq!(QemuVersion::parse("qemu-system-aarch64: oops"), None);
    }

    #[test]
    fn qemu_7_cannot_boot_raspi4b_but_can_boot_virt() {
        let old = QemuBinary {
            path: PathBuf::from("/usr/bin/qemu-system-aarch64"),
            version: QemuVersion {
                major: 7,
                minor: 2,
                micro: 15,
            },
        };
        assert!(old.check_supports(Machine::Virt).is_ok());
        assert!(matches!(
            old.check_supports(Machine::Raspi4b),
            Err(QemuError::TooOld {
                needed_major: 9,
                ..
            })
        ));
    }
}
