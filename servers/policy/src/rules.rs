//! The rule file: parsing and matching.
//!
//! One rule per line, `#` starts a comment:
//!
//! ```text
//! <syscall|*> [when <xN> <op> <value>]... -> <decision>
//! ```
//!
//! `op` is one of `== != < <= > >=` (unsigned), a value is decimal or
//! `0x` hexadecimal, and a decision is `allow`, `errno <error_name>`
//! (`abi::ErrorCode::name`), `kill`, `emulate <x0> <x8>` or
//! `clamp <xN> <max>` (allow, with register `xN`, 2..=7, lowered to at
//! most `max`). The first rule that matches decides.

use abi::policy::{ArgMatch, ArgOp};
use abi::{ErrorCode, Syscall};
use sdk::policy_server::{PolicyAnswer, PolicyRequest};

/// Most rules a file may hold.
pub const MAX_RULES: usize = 32;
/// Most conditions one rule may have.
pub const MAX_CONDITIONS: usize = 4;

/// A condition on one register of the syscall: an `abi::policy::ArgMatch`
/// on the whole register (mask `u64::MAX`), so the server compares
/// exactly as the kernel's filters do.
pub type Condition = ArgMatch;

/// What a matching rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run the syscall.
    Allow,
    /// Refuse it with this error.
    Errno(ErrorCode),
    /// End the thread.
    Kill,
    /// Do not run it; return these values.
    Emulate(u64, u64),
    /// Run it with register `.0` lowered to at most `.1`.
    Clamp(usize, u64),
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The syscall it is about (`None`: `*`, any).
    pub syscall: Option<Syscall>,
    /// All must hold.
    pub conditions: heapless::Vec<Condition, MAX_CONDITIONS>,
    /// The decision.
    pub decision: Decision,
    /// Its line in the file (1-based), for the decision log.
    pub line: usize,
}

/// A rule file that could not be read: where and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// The parsed file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSet {
    rules: heapless::Vec<Rule, MAX_RULES>,
}

impl RuleSet {
    /// Parses a whole file; the first bad line is the error.
    pub fn parse(text: &str) -> Result<RuleSet, ParseError> {
        let mut rules = heapless::Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let rule = parse_rule(content, line).map_err(|reason| ParseError { line, reason })?;
            rules.push(rule).map_err(|_| ParseError {
                line,
                reason: "too many rules",
            })?;
        }
        Ok(RuleSet { rules })
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The first rule matching `request`, if any.
    pub fn first_match(&self, request: &PolicyRequest) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.matches(request))
    }
}

impl Rule {
    /// Does the rule apply to `request`?
    pub fn matches(&self, request: &PolicyRequest) -> bool {
        self.syscall.is_none_or(|s| request.syscall == Some(s))
            && self.conditions.iter().all(|c| c.matches(&request.args))
    }
}

impl Decision {
    /// The answer for `request`.
    pub fn answer(self, request: &PolicyRequest) -> PolicyAnswer {
        match self {
            Decision::Allow => PolicyAnswer::Allow,
            Decision::Errno(code) => PolicyAnswer::Errno(code),
            Decision::Kill => PolicyAnswer::Kill,
            Decision::Emulate(x0, x8) => PolicyAnswer::Emulate { x0, x8 },
            Decision::Clamp(register, max) => {
                let mut words = [0u64; 6];
                words.copy_from_slice(&request.args[2..8]);
                let word = &mut words[register - 2];
                *word = (*word).min(max);
                PolicyAnswer::AllowWith(words)
            }
        }
    }
}

fn parse_rule(content: &str, line: usize) -> Result<Rule, &'static str> {
    let (matcher, decision) = content
        .split_once("->")
        .ok_or("no `->` between the match and the decision")?;
    let mut words = matcher.split_whitespace();
    let syscall = match words.next().ok_or("no syscall name")? {
        "*" => None,
        name => Some(
            Syscall::ALL
                .iter()
                .copied()
                .find(|s| s.name() == name)
                .ok_or("unknown syscall name")?,
        ),
    };
    let mut conditions = heapless::Vec::new();
    while let Some(word) = words.next() {
        if word != "when" {
            return Err("expected `when` before a condition");
        }
        let register = register(words.next().ok_or("`when` without a register")?, 0)?;
        let op = match words.next().ok_or("a condition without an operator")? {
            "==" => ArgOp::Eq,
            "!=" => ArgOp::Ne,
            "<" => ArgOp::Lt,
            "<=" => ArgOp::Le,
            ">" => ArgOp::Gt,
            ">=" => ArgOp::Ge,
            _ => return Err("unknown operator"),
        };
        let value = number(words.next().ok_or("a condition without a value")?)?;
        conditions
            .push(Condition {
                // At most 7: `register` checked it.
                register: register as u8,
                mask: u64::MAX,
                op,
                value,
            })
            .map_err(|_| "too many conditions")?;
    }
    Ok(Rule {
        syscall,
        conditions,
        decision: parse_decision(decision)?,
        line,
    })
}

fn parse_decision(text: &str) -> Result<Decision, &'static str> {
    let mut words = text.split_whitespace();
    let decision = match words.next().ok_or("no decision")? {
        "allow" => Decision::Allow,
        "kill" => Decision::Kill,
        "errno" => {
            let name = words.next().ok_or("`errno` without an error name")?;
            match ErrorCode::from_name(name) {
                Some(ErrorCode::Ok) | None => return Err("not an error name"),
                Some(code) => Decision::Errno(code),
            }
        }
        "emulate" => {
            let x0 = number(words.next().ok_or("`emulate` needs x0 and x8")?)?;
            let x8 = number(words.next().ok_or("`emulate` needs x0 and x8")?)?;
            Decision::Emulate(x0, x8)
        }
        "clamp" => {
            let register = register(words.next().ok_or("`clamp` without a register")?, 2)?;
            let max = number(words.next().ok_or("`clamp` without a maximum")?)?;
            Decision::Clamp(register, max)
        }
        _ => return Err("unknown decision"),
    };
    if words.next().is_some() {
        return Err("words after the decision");
    }
    Ok(decision)
}

/// `xN` with `lowest <= N <= 7`.
fn register(word: &str, lowest: usize) -> Result<usize, &'static str> {
    let n: usize = word
        .strip_prefix('x')
        .and_then(|n| n.parse().ok())
        .ok_or("not a register (x0..x7)")?;
    if (lowest..=7).contains(&n) {
        Ok(n)
    } else {
        Err("register out of range")
    }
}

fn number(word: &str) -> Result<u64, &'static str> {
    match word.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => word.parse(),
    }
    .map_err(|_| "not a number")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(syscall: Syscall, args: [u64; 8]) -> PolicyRequest {
        PolicyRequest {
            syscall: Some(syscall),
            number: syscall.number(),
            object_type: None,
            badge: 0,
            thread: 3,
            cookie: 1,
            args,
            endpoint_badge: 0,
        }
    }

    #[test]
    fn the_shipped_rule_file_parses_and_decides() {
        let rules = RuleSet::parse(crate::RULES).expect("the shipped rules parse");
        let print = |len| request(Syscall::DebugPrint, [1, 0, 0x40_0000, len, 0, 0, 0, 0]);
        let decide = |r: &PolicyRequest| rules.first_match(r).map(|rule| rule.decision.answer(r));
        assert_eq!(decide(&print(10)), Some(PolicyAnswer::Allow));
        assert_eq!(
            decide(&print(200)),
            Some(PolicyAnswer::AllowWith([0x40_0000, 48, 0, 0, 0, 0]))
        );
        assert_eq!(
            decide(&request(Syscall::Poll, [0; 8])),
            Some(PolicyAnswer::Emulate { x0: 0, x8: 0x77 })
        );
        assert_eq!(
            decide(&request(Syscall::Signal, [0; 8])),
            Some(PolicyAnswer::Errno(ErrorCode::Denied))
        );
    }

    #[test]
    fn every_operator_and_decision_parses() {
        let text = "signal when x2 == 1 when x3 != 2 -> kill\n\
                    wait when x4 < 0x10 when x5 <= 3 when x6 > 4 when x7 >= 5 -> emulate 0 7\n\
                    # a comment line\n\
                    \n\
                    * -> errno would_block   # trailing comment\n";
        let rules = RuleSet::parse(text).expect("valid");
        assert_eq!(rules.rules().len(), 3);
        assert_eq!(rules.rules()[0].decision, Decision::Kill);
        assert_eq!(rules.rules()[1].conditions.len(), 4);
        assert_eq!(rules.rules()[1].conditions[0].value, 0x10);
        assert_eq!(rules.rules()[2].line, 5);
        let mut args = [0u64; 8];
        args[2] = 1;
        assert!(rules.rules()[0].matches(&request(Syscall::Signal, args)));
        args[3] = 2;
        assert!(!rules.rules()[0].matches(&request(Syscall::Signal, args)));
    }

    #[test]
    fn bad_lines_are_refused_with_their_line_number() {
        let cases = [
            ("poll allow", "no `->` between the match and the decision"),
            ("frobnicate -> allow", "unknown syscall name"),
            (
                "poll if x2 == 1 -> allow",
                "expected `when` before a condition",
            ),
            ("poll when x9 == 1 -> allow", "register out of range"),
            ("poll when x2 =~ 1 -> allow", "unknown operator"),
            ("poll when x2 == zz -> allow", "not a number"),
            ("poll -> errno ok", "not an error name"),
            ("poll -> errno nonsense", "not an error name"),
            ("poll -> clamp x1 5", "register out of range"),
            ("poll -> allow now", "words after the decision"),
            ("poll -> maybe", "unknown decision"),
            (
                "poll when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 -> allow",
                "too many conditions",
            ),
        ];
        for (line, reason) in cases {
            let text = format!("# header\n{line}\n");
            assert_eq!(
                RuleSet::parse(&text),
                Err(ParseError { line: 2, reason }),
                "{line}"
            );
        }
        let many = "* -> allow\n".repeat(MAX_RULES + 1);
        assert_eq!(
            RuleSet::parse(&many).map(|_| ()),
            Err(ParseError {
                line: MAX_RULES + 1,
                reason: "too many rules"
            })
        );
    }
}
