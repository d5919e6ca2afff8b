//! Counting executed instructions per PC from QEMU's execution log.
//!
//! With `-accel tcg,one-insn-per-tb=on` every translation block is one
//! guest instruction, and with `-d exec,nochain` QEMU logs every block it
//! enters:
//!
//! ```text
//! Trace 0: 0x7f330fc00100 [00004000/0000000040200000/00000521/ff022201] symbol
//! ```
//!
//! (host code pointer, then cs_base/PC/flags/cflags). When a block is
//! entered but not executed because the icount budget ran out or an
//! interrupt is pending, QEMU follows up with
//!
//! ```text
//! Stopped execution of TB chain before 0x7f330fc02440 [0000000040200180] symbol
//! ```
//!
//! which takes that count back. The log is read as a stream: a boot logs
//! millions of lines, and only the counts are kept.

use std::collections::HashMap;
use std::io::{self, BufRead};

/// How many of QEMU's other stderr lines are kept for error messages.
const KEPT_OTHER_LINES: usize = 40;

/// Executed instructions per guest PC.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcCounts {
    /// PC → times executed.
    pub counts: HashMap<u64, i64>,
    /// Every instruction counted.
    pub total: i64,
    /// The last lines that were not log lines (QEMU's own messages).
    pub other_lines: Vec<String>,
}

impl PcCounts {
    /// Counts one log line.
    pub fn add_line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("Trace ") {
            if let Some(pc) = bracketed_pc(rest, 1) {
                *self.counts.entry(pc).or_default() += 1;
                self.total += 1;
                return;
            }
        } else if let Some(rest) = line.strip_prefix("Stopped execution of TB chain before ") {
            if let Some(pc) = bracketed_pc(rest, 0) {
                *self.counts.entry(pc).or_default() -= 1;
                self.total -= 1;
                return;
            }
        }
        if self.other_lines.len() == KEPT_OTHER_LINES {
            self.other_lines.remove(0);
        }
        self.other_lines.push(line.to_string());
    }

    /// Counts a whole log.
    pub fn read(log: impl BufRead) -> io::Result<PcCounts> {
        let mut counts = PcCounts::default();
        for line in log.split(b'\n') {
            counts.add_line(String::from_utf8_lossy(&line?).trim_end());
        }
        Ok(counts)
    }
}

/// The `index`th `/`-separated hex field inside the first `[...]`.
fn bracketed_pc(text: &str, index: usize) -> Option<u64> {
    let inside = text.split_once('[')?.1.split_once(']')?.0;
    u64::from_str_radix(inside.split('/').nth(index)?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_entries_and_takes_back_blocks_that_did_not_run() {
        let log = "\
Trace 0: 0x7f330fc00100 [00004000/0000000040200000/00000521/ff022201] \n\
Trace 0: 0x7f330fc00240 [00004000/ffffffffc0087ee8/00000521/ff022201] kernel_main\n\
Trace 0: 0x7f330fc00100 [00004000/0000000040200000/00000521/ff022201] \n\
Stopped execution of TB chain before 0x7f330fc00100 [0000000040200000] \n\
qemu-system-aarch64: warning: something\n\
Trace 0: 0x7f330fc00240 [00004000/ffffffffc0087ee8/00000521/ff022201] kernel_main\n";
        let counts = PcCounts::read(log.as_bytes()).expect("in memory");
        assert_eq!(counts.counts.get(&0x4020_0000), Some(&1));
        assert_eq!(counts.counts.get(&0xffff_ffff_c008_7ee8), Some(&2));
        assert_eq!(counts.total, 3);
        assert_eq!(
            counts.other_lines,
            ["qemu-system-aarch64: warning: something"]
        );
    }

    #[test]
    fn keeps_only_the_last_other_lines() {
        let mut counts = PcCounts::default();
        for index in 0..100 {
            counts.add_line(&format!("line {index}"));
        }
        assert_eq!(counts.other_lines.len(), KEPT_OTHER_LINES);
        assert_eq!(
            counts.other_lines.last().map(String::as_str),
            Some("line 99")
        );
        counts.add_line("Trace 0: garbage without brackets");
        assert_eq!(counts.total, 0);
    }
}
