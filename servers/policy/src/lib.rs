//! The reference policy server.
//!
//! Threads whose filters `Notify` it ask it about syscalls; it answers from
//! rules it reads at run time (the text is given to [`RuleServer::new`]:
//! a file its system description maps for it, say) and prints each
//! decision on the console, with the start of the bytes the call carries
//! when it carries any:
//!
//! ```text
//! [policy] task 4: debug_print(x0=0x6, x2=0x7ffffffeff10, x3=0x51, "  forwarded print: t"...) -> clamp x3 to 48 (rule at line 20)
//! ```
//!
//! The rule format is `abi::rules`'s (`docs/policy.md`, "The rule
//! language"); [`rules`] reads it and matches requests. A syscall no rule
//! matches gets the file's `default`, or is refused (`errno denied`) if
//! it has none, so a gap in the file fails closed.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]

pub mod rules;

use core::fmt::{self, Write};
use rules::{RuleError, RuleSet, Why};
use sdk::policy_server::{PolicyAnswer, PolicyRequest, PolicyServer};

/// How many of the bytes a call carries a log line shows.
const LOGGED_BYTES: usize = 20;

/// A policy server answering from a [`RuleSet`], logging to `log`.
pub struct RuleServer<W: Write> {
    rules: RuleSet,
    log: W,
}

impl<W: Write> RuleServer<W> {
    /// A server for the rules in `text`.
    pub fn new(text: &str, log: W) -> Result<RuleServer<W>, RuleError> {
        Ok(RuleServer {
            rules: RuleSet::parse(text)?,
            log,
        })
    }

    /// The rules it answers from.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }
}

impl<W: Write> PolicyServer for RuleServer<W> {
    fn decide(&mut self, request: &PolicyRequest) -> PolicyAnswer {
        let (decision, why) = self.rules.decide(request);
        let answer = decision.answer(request);
        let _ = writeln!(
            self.log,
            "{}",
            Decided {
                request,
                answer,
                why
            }
        );
        answer
    }
}

/// One line of the decision log.
struct Decided<'a> {
    request: &'a PolicyRequest,
    answer: PolicyAnswer,
    why: Why,
}

impl fmt::Display for Decided<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.request;
        write!(f, "[policy] task {}: ", r.thread)?;
        match r.syscall {
            Some(s) => write!(f, "{}", s.name())?,
            None => write!(f, "syscall_{}", r.number)?,
        }
        write!(
            f,
            "(x0={:#x}, x2={:#x}, x3={:#x}",
            r.args[0], r.args[2], r.args[3]
        )?;
        if let Some(bytes) = rules::carried_bytes(r).filter(|b| !b.is_empty()) {
            write!(f, ", {}", Quoted(bytes))?;
        }
        write!(f, ") -> ")?;
        match self.answer {
            PolicyAnswer::Allow => write!(f, "allow")?,
            PolicyAnswer::AllowWith(words) => {
                // Only a clamp makes `AllowWith`: name what changed.
                match words
                    .iter()
                    .zip(&r.args[2..])
                    .position(|(new, old)| new != old)
                {
                    Some(i) => write!(f, "clamp x{} to {}", i + 2, words[i])?,
                    None => write!(f, "allow (nothing to clamp)")?,
                }
            }
            PolicyAnswer::Errno(code) => write!(f, "errno {}", code.name())?,
            PolicyAnswer::Emulate { x0, x8 } => write!(f, "emulate x0={x0:#x} x8={x8:#x}")?,
            PolicyAnswer::Kill => write!(f, "kill")?,
        }
        match self.why {
            Why::Rule(line) => write!(f, " (rule at line {line})"),
            Why::Default(line) => write!(f, " (no rule matches: the default at line {line})"),
            Why::NoDefault => write!(f, " (no rule matches: refused)"),
        }
    }
}

/// The first [`LOGGED_BYTES`] of some bytes, quoted and escaped as Rust
/// escapes bytes (`\n`, `\"`, `\x00`), `...` after the quote when there
/// were more: a log line stays one short line whatever a call carries.
struct Quoted<'a>(&'a [u8]);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for &byte in self.0.iter().take(LOGGED_BYTES) {
            write!(f, "{}", core::ascii::escape_default(byte))?;
        }
        f.write_char('"')?;
        if self.0.len() > LOGGED_BYTES {
            f.write_str("...")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::tests::{carrying, request, SHIPPED};
    use abi::{ErrorCode, Syscall};
    use sdk::policy_server::CarriedMemory;

    #[test]
    fn each_decision_is_logged_with_its_rule() {
        let mut server = RuleServer::new(SHIPPED, String::new()).expect("rules parse");
        let answer = server.decide(&request(Syscall::DebugPrint, [1, 0, 0x10, 80, 0, 0, 0, 0]));
        assert_eq!(answer, PolicyAnswer::AllowWith([0x10, 48, 0, 0, 0, 0]));
        assert_eq!(
            server.log.lines().last(),
            Some("[policy] task 3: debug_print(x0=0x1, x2=0x10, x3=0x50) -> clamp x3 to 48 (rule at line 20)")
        );
        server.decide(&request(Syscall::Signal, [0; 8]));
        assert!(
            server
                .log
                .ends_with("-> errno denied (no rule matches: the default at line 24)\n"),
            "{}",
            server.log
        );
    }

    #[test]
    fn with_no_matching_rule_and_no_default_it_refuses() {
        let mut server = RuleServer::new("poll -> allow\n", String::new()).expect("parses");
        let answer = server.decide(&request(Syscall::Yield, [0; 8]));
        assert_eq!(answer, PolicyAnswer::Errno(ErrorCode::Denied));
        assert!(server.log.contains("no rule matches: refused"));
    }

    #[test]
    fn the_bytes_a_call_carries_start_its_log_line() {
        let mut server = RuleServer::new("default -> allow\n", String::new()).expect("parses");
        let text = b"  forwarded print: the server keeps 48 bytes\n";
        let print = carrying(
            request(
                Syscall::DebugPrint,
                [6, 0, 0x10, text.len() as u64, 0, 0, 0, 0],
            ),
            CarriedMemory::Buffer,
            text,
            text.len() as u64,
        );
        server.decide(&print);
        assert_eq!(
            server.log.lines().last(),
            Some("[policy] task 3: debug_print(x0=0x6, x2=0x10, x3=0x2d, \"  forwarded print: t\"...) -> allow (no rule matches: the default at line 1)")
        );
        // Escaped, and whole when short.
        let call = carrying(
            request(Syscall::Call, [2, 0, 0, 0, 0, 0, 0, 0]),
            CarriedMemory::Message,
            b"\x01\0\"\\\n",
            5,
        );
        server.decide(&call);
        assert!(
            server
                .log
                .ends_with("x3=0x0, \"\\x01\\x00\\\"\\\\\\n\") -> allow (no rule matches: the default at line 1)\n"),
            "{}",
            server.log
        );
    }
}
