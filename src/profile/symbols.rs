//! An ELF's code symbols, read with `llvm-nm`, for turning PCs into names.
//!
//! `llvm-nm` comes with the pinned toolchain's `llvm-tools` component
//! (`rust-toolchain.toml` lists it; `build.rs` uses its `llvm-objcopy`),
//! so reading it is cheaper than a dependency on an ELF crate.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable that names the `llvm-nm` to run.
pub const LLVM_NM_ENV: &str = "PORTCULLIS_LLVM_NM";

/// One function (or assembly label) and where its code lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// First address.
    pub start: u64,
    /// One past the last address (the next symbol's start when the ELF
    /// gives no size, as for assembly labels).
    pub end: u64,
    /// The demangled name without the hash suffix.
    pub name: String,
}

/// The code symbols of one ELF, sorted by address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolTable {
    symbols: Vec<Symbol>,
}

/// Why the symbols could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolError {
    /// `llvm-nm` could not be found or run.
    NoNm(String),
    /// It ran but failed.
    NmFailed {
        /// The ELF.
        elf: PathBuf,
        /// What it printed on stderr.
        stderr: String,
    },
}

impl fmt::Display for SymbolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolError::NoNm(reason) => write!(
                f,
                "cannot run llvm-nm ({reason}): it comes with the toolchain's llvm-tools component (`rustup component add llvm-tools`), or set ${LLVM_NM_ENV}"
            ),
            SymbolError::NmFailed { elf, stderr } => {
                write!(f, "llvm-nm failed on {}: {}", elf.display(), stderr.trim())
            }
        }
    }
}

impl std::error::Error for SymbolError {}

impl SymbolTable {
    /// Runs `llvm-nm` on `elf` and reads its code symbols.
    pub fn read(elf: &Path, workspace: &Path) -> Result<SymbolTable, SymbolError> {
        let nm = llvm_nm(workspace)?;
        let output = Command::new(&nm)
            .args([
                "--defined-only",
                "--numeric-sort",
                "--print-size",
                "--demangle",
            ])
            .arg(elf)
            .output()
            .map_err(|error| SymbolError::NoNm(format!("{}: {error}", nm.display())))?;
        if !output.status.success() {
            return Err(SymbolError::NmFailed {
                elf: elf.to_path_buf(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        Ok(SymbolTable::from_nm_output(&String::from_utf8_lossy(
            &output.stdout,
        )))
    }

    /// Reads `llvm-nm --print-size --numeric-sort --demangle` output:
    /// `ADDRESS [SIZE] TYPE NAME` lines; only code symbols (`t`, `T`,
    /// `w`, `W`) are kept.
    pub fn from_nm_output(text: &str) -> SymbolTable {
        let mut symbols: Vec<(u64, Option<u64>, String)> =
            text.lines().filter_map(parse_nm_line).collect();
        symbols.sort_by_key(|(address, _, _)| *address);
        symbols.dedup_by_key(|(address, _, _)| *address);
        let starts: Vec<u64> = symbols.iter().map(|(address, _, _)| *address).collect();
        let symbols = symbols
            .into_iter()
            .enumerate()
            .map(|(index, (start, size, name))| {
                let next = starts.get(index + 1).copied().unwrap_or(u64::MAX);
                Symbol {
                    start,
                    end: size.map_or(next, |size| start.saturating_add(size).min(next)),
                    name,
                }
            })
            .collect();
        SymbolTable { symbols }
    }

    /// Every symbol's name, in address order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.symbols.iter().map(|symbol| symbol.name.as_str())
    }

    /// The symbol whose code holds `pc`.
    pub fn lookup(&self, pc: u64) -> Option<&Symbol> {
        let index = self.symbols.partition_point(|symbol| symbol.start <= pc);
        let symbol = self.symbols.get(index.checked_sub(1)?)?;
        (pc < symbol.end).then_some(symbol)
    }

    /// Whether the table has no symbol.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }
}

/// `ADDRESS [SIZE] TYPE NAME` → (address, size if non-zero, clean name),
/// for code symbols only.
fn parse_nm_line(line: &str) -> Option<(u64, Option<u64>, String)> {
    let (address, rest) = line.split_once(' ')?;
    let address = u64::from_str_radix(address, 16).ok()?;
    // The type is one letter; a longer hex word is the size.
    let (size, rest) = match rest.split_once(' ') {
        Some((size, rest)) if size.len() > 1 => (u64::from_str_radix(size, 16).ok(), rest),
        _ => (None, rest),
    };
    let (kind, name) = rest.split_once(' ')?;
    matches!(kind, "t" | "T" | "w" | "W")
        .then(|| (address, size.filter(|size| *size > 0), clean_name(name)))
}

/// Drops the `::h0123456789abcdef` hash of legacy Rust symbols and decodes
/// the `$LT$`-style escapes that local symbols keep.
fn clean_name(name: &str) -> String {
    let name = name.trim();
    let without_hash = match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            head
        }
        _ => name,
    };
    if !without_hash.contains('$') {
        return without_hash.to_string();
    }
    let decoded = [
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$RF$", "&"),
        ("$BP$", "*"),
        ("$C$", ","),
        ("$u20$", " "),
        ("$u27$", "'"),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$u7b$", "{"),
        ("$u7d$", "}"),
        ("..", "::"),
    ]
    .iter()
    .fold(without_hash.to_string(), |text, (from, to)| {
        text.replace(from, to)
    });
    decoded.strip_prefix('_').unwrap_or(&decoded).to_string()
}

/// `$PORTCULLIS_LLVM_NM`, else the toolchain's
/// `<sysroot>/lib/rustlib/<host>/bin/llvm-nm` (asked from `rustc` in
/// `workspace`, so that `rust-toolchain.toml` picks the toolchain).
fn llvm_nm(workspace: &Path) -> Result<PathBuf, SymbolError> {
    if let Some(path) = env::var_os(LLVM_NM_ENV).filter(|value| !value.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let rustc = |args: &[&str]| -> Result<String, SymbolError> {
        let output = Command::new("rustc")
            .args(args)
            .current_dir(workspace)
            .output()
            .map_err(|error| SymbolError::NoNm(format!("rustc: {error}")))?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    let sysroot = rustc(&["--print", "sysroot"])?;
    let version = rustc(&["-vV"])?;
    let host = version
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .ok_or_else(|| SymbolError::NoNm("`rustc -vV` names no host".into()))?;
    let path = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(host)
        .join("bin/llvm-nm");
    if path.is_file() {
        Ok(path)
    } else {
        Err(SymbolError::NoNm(format!("{} is missing", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NM: &str = "\
0000000000000004 0000000000000000 a SYSCALL_BENCH_FLOOR
0000000000400000 000000000000000c T _start
000000000040000c 0000000000000244 t <&T as core::fmt::Debug>::fmt::ha0610a51982456e8
0000000000400250 0000000000000014 t _$LT$$RF$T$u20$as$u20$core..fmt..Display$GT$::fmt::h84cc5b74735ec5d6
0000000000401000 0000000000000000 T el0_sync
0000000000401080 0000000000000010 T exit_to_user
0000000000500000 0000000000000008 D COUNTER
";

    #[test]
    fn keeps_code_symbols_and_cleans_their_names() {
        let table = SymbolTable::from_nm_output(NM);
        let name = |pc| table.lookup(pc).map(|symbol| symbol.name.as_str());
        assert_eq!(name(0x40_0000), Some("_start"));
        assert_eq!(name(0x40_000b), Some("_start"));
        assert_eq!(name(0x40_000c), Some("<&T as core::fmt::Debug>::fmt"));
        assert_eq!(name(0x40_0250), Some("<&T as core::fmt::Display>::fmt"));
        // A label without a size runs to the next symbol.
        assert_eq!(name(0x40_107c), Some("el0_sync"));
        assert_eq!(name(0x40_108f), Some("exit_to_user"));
        // Past a sized symbol's end, before the next: unknown.
        assert_eq!(name(0x40_0264), None);
        assert_eq!(name(0x40_1090), None);
        assert_eq!(name(0x3f_ffff), None);
        // Data symbols are not code.
        assert_eq!(name(0x50_0000), None);
    }

    #[test]
    fn reads_lines_without_a_size() {
        let table =
            SymbolTable::from_nm_output("ffffffffc0080000 T _start\nffffffffc0080100 t vectors\n");
        assert_eq!(
            table.lookup(0xffff_ffff_c008_0010).map(|s| s.name.as_str()),
            Some("_start")
        );
        assert_eq!(
            table.lookup(0xffff_ffff_c008_0200).map(|s| s.name.as_str()),
            Some("vectors")
        );
    }
}
