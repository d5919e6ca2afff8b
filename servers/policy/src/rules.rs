//! The rule file: read with `abi::rules`, matched against requests.
//!
//! One rule per line, `#` starts a comment; the first rule that matches
//! decides:
//!
//! ```text
//! <syscall|*> [when <xN> [& <mask>] <op> <value>] [on <type>] [label == <v>] [badge == <v>] -> <decision>
//! ```
//!
//! The grammar is `abi::rules`'s, the one kernel filters are written in
//! (`docs/policy.md`, "The rule language"), read for
//! [`RuleUse::Server`]: a decision is `allow`, `errno <error_name>`,
//! `kill`, `emulate <x0> <x8>` or `clamp <xN> <max>` (allow, with register
//! `xN`, 2..=7, lowered to at most `max`). A request carries the object
//! type, the badge and `x0..x7`, so `on`, `label` and `badge` match as in
//! a kernel filter.

use abi::cap::CapType;
use abi::policy::ArgMatch;
use abi::rules::{self, RuleUse};
use abi::{ErrorCode, MessageInfo, Syscall};
use sdk::policy_server::{PolicyAnswer, PolicyRequest};

pub use abi::rules::RuleError;

/// Most rules a file may hold.
pub const MAX_RULES: usize = 32;
/// Most conditions (`when`) one rule may have.
pub const MAX_CONDITIONS: usize = abi::policy::MAX_ARGS_PER_RULE;

/// A condition on one register of the syscall: an `abi::policy::ArgMatch`
/// (mask `u64::MAX` unless the rule gives `& mask`), so the server
/// compares exactly as the kernel's filters do.
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
    /// Run it with register `.0` (2..=7) lowered to at most `.1`.
    Clamp(usize, u64),
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The syscall it is about (`None`: `*`, any).
    pub syscall: Option<Syscall>,
    /// `on <type>`: the type of the object `x0` names.
    pub object_type: Option<CapType>,
    /// `label == <value>`: the message label of `x1`.
    pub label: Option<u64>,
    /// `badge == <value>`: the badge of the capability `x0` names.
    pub badge: Option<u64>,
    /// All must hold.
    pub conditions: heapless::Vec<Condition, MAX_CONDITIONS>,
    /// The decision.
    pub decision: Decision,
    /// Its line in the file (1-based), for the decision log.
    pub line: usize,
}

/// The parsed file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSet {
    rules: heapless::Vec<Rule, MAX_RULES>,
}

impl RuleSet {
    /// Parses a whole file; the first bad line is the error.
    pub fn parse(text: &str) -> Result<RuleSet, RuleError> {
        let mut rules = heapless::Vec::new();
        for rule in rules::parse(text, RuleUse::Server) {
            let rule = rule?;
            let too_many = rule.error("too many rules (the server holds at most 32)");
            rules.push(Rule::from_text(rule)?).map_err(|_| too_many)?;
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

// The limit the error message spells out.
const _: () = assert!(MAX_RULES == 32);

impl Rule {
    /// The server's rule for a rule read for [`RuleUse::Server`].
    fn from_text(rule: rules::TextRule) -> Result<Rule, RuleError> {
        let decision = match rule.decision {
            rules::Decision::Allow => Decision::Allow,
            rules::Decision::Errno(code) => Decision::Errno(code),
            rules::Decision::Kill => Decision::Kill,
            rules::Decision::Emulate { x0, x8 } => Decision::Emulate(x0, x8),
            rules::Decision::Clamp { register, max } => Decision::Clamp(register.into(), max),
            // `rules::parse` refused these for `RuleUse::Server`.
            rules::Decision::Trap | rules::Decision::Notify | rules::Decision::Log => {
                return Err(rule.error("a filter decision, not a policy server's answer"));
            }
        };
        Ok(Rule {
            syscall: rule.syscall,
            object_type: rule.object_type,
            label: rule.label,
            badge: rule.badge,
            conditions: rule.args,
            decision,
            line: rule.line,
        })
    }

    /// Does the rule apply to `request`? As in a kernel filter, a rule on
    /// the object type or badge does not match a syscall that names no
    /// object.
    pub fn matches(&self, request: &PolicyRequest) -> bool {
        self.syscall.is_none_or(|s| request.syscall == Some(s))
            && self
                .object_type
                .is_none_or(|t| request.object_type == Some(t))
            && self
                .badge
                .is_none_or(|b| request.object_type.is_some() && request.badge == b)
            && self
                .label
                .is_none_or(|l| MessageInfo::from(request.args[1]).label() == l)
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
                // `rules` read only x2..x7 for `clamp`.
                if let Some(word) = words.get_mut(register.wrapping_sub(2)) {
                    *word = (*word).min(max);
                }
                PolicyAnswer::AllowWith(words)
            }
        }
    }
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
    fn bad_lines_are_refused_with_their_line_and_column() {
        let cases = [
            ("poll allow", 6, "no `->` before the decision"),
            ("frobnicate -> allow", 1, "unknown syscall name"),
            (
                "poll if x2 == 1 -> allow",
                6,
                "expected `when`, `on`, `label`, `badge` or `->`",
            ),
            (
                "poll when x9 == 1 -> allow",
                11,
                "register out of range (x0..x7)",
            ),
            (
                "poll when x2 =~ 1 -> allow",
                14,
                "unknown operator (== != < <= > >=)",
            ),
            ("poll when x2 == zz -> allow", 17, "not a number"),
            ("poll -> errno ok", 15, "`ok` is not an error"),
            ("poll -> errno nonsense", 15, "unknown error name"),
            (
                "poll -> clamp x1 5",
                15,
                "`clamp` takes a message register (x2..x7)",
            ),
            ("poll -> allow now", 15, "words after the decision"),
            ("poll -> maybe", 9, "unknown decision"),
            (
                "poll -> notify",
                9,
                "a filter decision, not a policy server's answer",
            ),
            (
                "poll when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 -> allow",
                58,
                "too many conditions (at most 4 `when`)",
            ),
        ];
        for (line, column, message) in cases {
            let text = format!("# header\n{line}\n");
            assert_eq!(
                RuleSet::parse(&text),
                Err(RuleError {
                    line: 2,
                    column,
                    message
                }),
                "{line}"
            );
        }
        let many = "* -> allow\n".repeat(MAX_RULES + 1);
        assert_eq!(
            RuleSet::parse(&many).map(|_| ()),
            Err(RuleError {
                line: MAX_RULES + 1,
                column: 1,
                message: "too many rules (the server holds at most 32)"
            })
        );
    }

    #[test]
    fn object_type_badge_label_and_masks_match_as_in_a_filter() {
        let text = "call on endpoint badge == 7 label == 2 -> kill\n\
                    call when x2 & 0xf0 == 0x30 -> emulate 1 2\n\
                    * -> allow\n";
        let rules = RuleSet::parse(text).expect("valid");
        let call = |object_type, badge, label: u64, x2| {
            let mut r = request(
                Syscall::Call,
                [1, u64::from(MessageInfo::with(label, 1)), x2, 0, 0, 0, 0, 0],
            );
            r.object_type = object_type;
            r.badge = badge;
            rules.first_match(&r).map(|rule| rule.line)
        };
        assert_eq!(call(Some(CapType::Endpoint), 7, 2, 0), Some(1));
        assert_eq!(call(Some(CapType::Notification), 7, 2, 0), Some(3));
        assert_eq!(call(Some(CapType::Endpoint), 6, 2, 0), Some(3));
        assert_eq!(call(Some(CapType::Endpoint), 7, 3, 0), Some(3));
        // No object: neither its type nor its badge is known.
        assert_eq!(call(None, 7, 2, 0), Some(3));
        assert_eq!(call(None, 0, 0, 0x1234_5639), Some(2));
        assert_eq!(call(None, 0, 0, 0x1234_5649), Some(3));
    }

    /// The demo's filter (`init/src/demo.rs`, `supervisor`) written as
    /// text compiles to exactly what its `RuleBuilder` chain makes, so a
    /// filter can move from code to a rule file unchanged.
    #[test]
    fn the_demo_filter_as_text_is_the_builders_filter() {
        use sdk::policy::{Action, ArgOp, FilterBuilder, RuleBuilder};
        const LOUD_CONSOLE: u64 = 6;
        let built = FilterBuilder::new(Action::Allow)
            .rule(RuleBuilder::syscall(Syscall::Signal).action(Action::errno(ErrorCode::Denied)))
            .rule(
                RuleBuilder::syscall(Syscall::DebugPrint)
                    .arg(0, ArgOp::Eq, LOUD_CONSOLE)
                    .arg(3, ArgOp::Gt, 48)
                    .action(Action::Notify),
            )
            .rule(RuleBuilder::syscall(Syscall::Poll).action(Action::Notify))
            .build()
            .expect("valid");
        let text = "signal -> errno denied\n\
                    debug_print when x0 == 6 when x3 > 48 -> notify\n\
                    poll -> notify\n";
        assert_eq!(abi::rules::filter_description(text), Ok(built.clone()));
        let mut from_text = [0u8; sdk::policy::MAX_DESCRIPTION_BYTES];
        let mut from_builder = [0u8; sdk::policy::MAX_DESCRIPTION_BYTES];
        assert_eq!(
            sdk::policy::encode(
                &abi::rules::filter_description(text).unwrap(),
                &mut from_text
            ),
            sdk::policy::encode(&built, &mut from_builder)
        );
    }
}
