//! What `ps` and `caps` print: one line per thread or capability, under
//! a header, in columns.

use abi::cap::CapType;
use abi::fault::{KillReason, ThreadEnd};
use abi::inspect::{CapInfo, ThreadInfo};
use core::fmt;

/// `ps`'s header.
pub const THREAD_HEADER: &str = "  NUM NAME                     STATE      PRI CPU  CONFINEMENT";
/// `caps`'s header.
pub const CAP_HEADER: &str = " SLOT TYPE           RIGHTS  BADGE               OBJECT";

/// One `ps` line.
pub struct ThreadRow<'a>(pub &'a ThreadInfo);

impl fmt::Display for ThreadRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        write!(
            f,
            "{:>5} {:<24} {:<10} {:>3} {:>3} ",
            t.number,
            t.name(),
            t.state.name(),
            t.priority,
            t.cpu
        )?;
        if t.filters > 0 {
            write!(f, " filters={}", t.filters)?;
        }
        if t.traced {
            write!(f, " traced")?;
        }
        if t.audited {
            write!(f, " audited")?;
        }
        if let Some(end) = t.end {
            write!(f, " ({})", Ended(end))?;
        }
        Ok(())
    }
}

/// How a thread ended, briefly.
pub struct Ended(pub ThreadEnd);

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ThreadEnd::Exited { status } => write!(f, "exited with status {status}"),
            ThreadEnd::Killed(KillReason::Policy { filter, rule, .. }) => {
                write!(f, "killed by filter {filter} rule {rule}")
            }
            ThreadEnd::Killed(reason) => write!(f, "killed: {reason:?}"),
            ThreadEnd::Faulted { class, far, pc, .. } => {
                write!(f, "faulted: class {class:#x} at {far:#x}, pc {pc:#x}")
            }
        }
    }
}

/// One `caps` line.
pub struct CapRow<'a>(pub &'a CapInfo);

impl fmt::Display for CapRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.0;
        write!(f, "{:>5} {:<14} ", c.slot, c.cap_type.name())?;
        let mut rights = [b'-'; 6];
        for (i, letter) in b"rwgGtp".iter().enumerate() {
            if c.rights & (1 << i) != 0 {
                rights[i] = *letter;
            }
        }
        let rights = core::str::from_utf8(&rights).unwrap_or("?");
        match c.badge {
            Some(badge) => write!(f, "{rights}  {badge:<#18x}  #{}", c.object),
            None => write!(f, "{rights}  {:<18}  #{}", "", c.object),
        }
    }
}

/// Is this capability worth showing? (Every kind is; `Null` never comes.)
pub fn shown(cap: &CapInfo) -> bool {
    cap.cap_type != CapType::Null
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::inspect::ThreadState;

    #[test]
    fn a_thread_line_has_its_columns_and_confinement() {
        let mut name = [0u8; 24];
        name[..6].copy_from_slice(b"ticker");
        let info = ThreadInfo {
            number: 5,
            state: ThreadState::Ready,
            priority: 50,
            mcp: 50,
            cpu: 0,
            filters: 1,
            traced: true,
            audited: true,
            name,
            name_len: 6,
            end: None,
        };
        let line = format!("{}", ThreadRow(&info));
        assert_eq!(
            line,
            "    5 ticker                   ready       50   0  filters=1 traced audited"
        );
        let ended = ThreadInfo {
            end: Some(ThreadEnd::Exited { status: 0 }),
            state: ThreadState::Ended,
            filters: 0,
            traced: false,
            audited: false,
            ..info
        };
        assert!(format!("{}", ThreadRow(&ended)).ends_with("  (exited with status 0)"));
    }

    #[test]
    fn a_capability_line_spells_its_rights_and_badge() {
        let cap = CapInfo {
            slot: 2,
            cap_type: CapType::Endpoint,
            rights: 0b1110,
            badge: Some(0xc1),
            object: 17,
        };
        assert_eq!(
            format!("{}", CapRow(&cap)),
            "    2 endpoint       -wgG--  0xc1                #17"
        );
        let console = CapInfo {
            slot: 1,
            cap_type: CapType::DebugConsole,
            rights: 0b11,
            badge: None,
            object: 1,
        };
        assert!(format!("{}", CapRow(&console)).starts_with("    1 debug_console  rw----  "));
    }
}
