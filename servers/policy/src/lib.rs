//! The reference policy server.
//!
//! Threads whose filters `Notify` it ask it about syscalls; it answers from
//! the rules in `servers/policy/rules.txt`, compiled into the program at
//! build time, and prints each decision on the console:
//!
//! ```text
//! [policy] task 4: debug_print(x0=0x1, x2=0x7ffffffeff10, x3=80) -> clamp x3 to 48 (rule at line 11)
//! ```
//!
//! The rule format is `abi::rules`'s (`docs/policy.md`, "The rule
//! language"); [`rules`] reads it and matches requests. A syscall no rule
//! matches is refused (`errno denied`), so a gap in the file fails closed.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]

pub mod rules;

use abi::ErrorCode;
use core::fmt::{self, Write};
use rules::{RuleError, RuleSet};
use sdk::policy_server::{PolicyAnswer, PolicyRequest, PolicyServer};

/// The rule file, as compiled in.
pub const RULES: &str = include_str!("../rules.txt");

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
        let (answer, line) = match self.rules.first_match(request) {
            Some(rule) => (rule.decision.answer(request), Some(rule.line)),
            None => (PolicyAnswer::Errno(ErrorCode::Denied), None),
        };
        let _ = writeln!(
            self.log,
            "{}",
            Decided {
                request,
                answer,
                line
            }
        );
        answer
    }
}

/// One line of the decision log.
struct Decided<'a> {
    request: &'a PolicyRequest,
    answer: PolicyAnswer,
    line: Option<usize>,
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
            "(x0={:#x}, x2={:#x}, x3={:#x}) -> ",
            r.args[0], r.args[2], r.args[3]
        )?;
        match (self.answer, self.line) {
            (PolicyAnswer::Allow, _) => write!(f, "allow")?,
            (PolicyAnswer::AllowWith(words), Some(_)) => {
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
            (PolicyAnswer::AllowWith(_), None) => write!(f, "allow with new arguments")?,
            (PolicyAnswer::Errno(code), _) => write!(f, "errno {}", code.name())?,
            (PolicyAnswer::Emulate { x0, x8 }, _) => write!(f, "emulate x0={x0:#x} x8={x8:#x}")?,
            (PolicyAnswer::Kill, _) => write!(f, "kill")?,
        }
        match self.line {
            Some(line) => write!(f, " (rule at line {line})"),
            None => write!(f, " (no rule matches: refused)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::Syscall;

    fn request(syscall: Syscall, args: [u64; 8]) -> PolicyRequest {
        PolicyRequest {
            syscall: Some(syscall),
            number: syscall.number(),
            object_type: None,
            badge: 0,
            thread: 4,
            cookie: 9,
            args,
            endpoint_badge: 0,
        }
    }

    #[test]
    fn each_decision_is_logged_with_its_rule() {
        let mut server = RuleServer::new(RULES, String::new()).expect("rules parse");
        let answer = server.decide(&request(Syscall::DebugPrint, [1, 0, 0x10, 80, 0, 0, 0, 0]));
        assert_eq!(answer, PolicyAnswer::AllowWith([0x10, 48, 0, 0, 0, 0]));
        assert_eq!(
            server.log.lines().last(),
            Some("[policy] task 4: debug_print(x0=0x1, x2=0x10, x3=0x50) -> clamp x3 to 48 (rule at line 11)")
        );
        server.decide(&request(Syscall::Signal, [0; 8]));
        assert!(
            server.log.ends_with("-> errno denied (rule at line 14)\n"),
            "{}",
            server.log
        );
    }

    #[test]
    fn with_no_matching_rule_it_refuses() {
        let mut server = RuleServer::new("poll -> allow\n", String::new()).expect("parses");
        let answer = server.decide(&request(Syscall::Yield, [0; 8]));
        assert_eq!(answer, PolicyAnswer::Errno(ErrorCode::Denied));
        assert!(server.log.contains("no rule matches: refused"));
    }
}
