//! The rule file: read with `abi::rules`, matched against requests.
//!
//! One rule per line, `#` starts a comment; the first rule that matches
//! decides, and a `default -> DECISION` line answers what none matches:
//!
//! ```text
//! <syscall|*> [when <xN|wN|pc> [& <mask>] <op> <value>] [bytes <==|prefix|contains> <pattern> [within <n>]]
//!             [on <type>] [label == <v>] [badge == <v>] -> <decision>
//! default -> <decision>
//! ```
//!
//! The grammar is `abi::rules`'s, the one kernel filters are written in
//! (`docs/policy.md`, "The rule language"), read for
//! [`RuleUse::Server`]: a decision is `allow`, `errno <error_name>`,
//! `kill`, `emulate <x0> <x8>` or `clamp <xN> <max>` (allow, with register
//! `xN`, 2..=7, lowered to at most `max`). A request carries the object
//! type, the badge, `x0..x7`, the PC and the memory the kernel judged the
//! call by, so every condition matches as in a kernel filter
//! (`microkernel/src/filter/facts.rs`, `rule_matches`).

use abi::cap::CapType;
use abi::policy::{ArgMatch, BytesMatch, Operand};
use abi::rules::{self, Line, RuleUse};
use abi::{ErrorCode, MessageInfo, Syscall};
use sdk::policy_server::{CarriedMemory, PolicyAnswer, PolicyRequest};

pub use abi::rules::RuleError;

/// Most rules a file may hold.
pub const MAX_RULES: usize = 32;
/// Most conditions (`when`) one rule may have.
pub const MAX_CONDITIONS: usize = abi::policy::MAX_ARGS_PER_RULE;

/// A condition on a register, a message word or the PC: an
/// `abi::policy::ArgMatch` (mask `u64::MAX` unless the rule gives
/// `& mask`), so the server compares exactly as the kernel's filters do.
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
    /// `bytes ...`: a match on the bytes the call carries.
    pub bytes: Option<BytesMatch>,
    /// The decision.
    pub decision: Decision,
    /// Its line in the file (1-based), for the decision log.
    pub line: usize,
}

/// What a syscall no rule matches gets when the file has no `default`
/// line: refused, so a gap in the file fails closed.
pub const FALLBACK: Decision = Decision::Errno(ErrorCode::Denied);

/// The parsed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSet {
    rules: heapless::Vec<Rule, MAX_RULES>,
    /// The `default` line's decision and line, if the file has one.
    default: Option<(Decision, usize)>,
}

impl RuleSet {
    /// Parses a whole file; the first bad line is the error.
    pub fn parse(text: &str) -> Result<RuleSet, RuleError> {
        let mut set = RuleSet {
            rules: heapless::Vec::new(),
            default: None,
        };
        for line in rules::parse(text, RuleUse::Server) {
            match line? {
                Line::Rule(rule) => {
                    let too_many = rule.error("too many rules (the server holds at most 32)");
                    set.rules
                        .push(Rule::from_text(rule)?)
                        .map_err(|_| too_many)?;
                }
                // `rules::parse` refused a second one.
                Line::Default(default) => {
                    let decision = Decision::from_text(default.decision).ok_or(RuleError {
                        line: default.line,
                        column: default.column,
                        message: FILTER_ONLY,
                    })?;
                    set.default = Some((decision, default.line));
                }
            }
        }
        Ok(set)
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The `default` line's decision and line (`None`: the file has none,
    /// and [`FALLBACK`] applies).
    pub fn default(&self) -> Option<(Decision, usize)> {
        self.default
    }

    /// The first rule matching `request`, if any.
    pub fn first_match(&self, request: &PolicyRequest) -> Option<&Rule> {
        self.rules.iter().find(|rule| rule.matches(request))
    }

    /// What the file decides for `request`, and why.
    pub fn decide(&self, request: &PolicyRequest) -> (Decision, Why) {
        match (self.first_match(request), self.default) {
            (Some(rule), _) => (rule.decision, Why::Rule(rule.line)),
            (None, Some((decision, line))) => (decision, Why::Default(line)),
            (None, None) => (FALLBACK, Why::NoDefault),
        }
    }
}

/// Why a request got its decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The rule at this line matched.
    Rule(usize),
    /// No rule matched: the `default` line at this line.
    Default(usize),
    /// No rule matched and the file has no `default`: [`FALLBACK`].
    NoDefault,
}

// The limit the error message spells out.
const _: () = assert!(MAX_RULES == 32);

const FILTER_ONLY: &str = "a filter decision, not a policy server's answer";

impl Rule {
    /// The server's rule for a rule read for [`RuleUse::Server`].
    fn from_text(rule: rules::TextRule) -> Result<Rule, RuleError> {
        let decision = Decision::from_text(rule.decision).ok_or(rule.error(FILTER_ONLY))?;
        Ok(Rule {
            syscall: rule.syscall,
            object_type: rule.object_type,
            label: rule.label,
            badge: rule.badge,
            conditions: rule.args,
            bytes: rule.bytes,
            decision,
            line: rule.line,
        })
    }

    /// Does the rule apply to `request`? Exactly when a kernel filter's
    /// rule would match the call: a rule on the object type or badge does
    /// not match a syscall that names no object, a comparison of an
    /// operand the call does not have (a message word past what it sends)
    /// does not hold, and neither does a byte match of a call that
    /// carries no memory.
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
            && self
                .conditions
                .iter()
                .all(|c| c.holds(operand(request, c.operand)))
            && self.bytes.as_ref().is_none_or(|b| {
                b.holds(
                    carried_bytes(request),
                    usize::try_from(request.memory_length).unwrap_or(usize::MAX),
                )
            })
    }
}

/// The value of `operand` for `request`, as the kernel's facts give it
/// (`None`: the call has none).
fn operand(request: &PolicyRequest, operand: Operand) -> Option<u64> {
    match operand {
        Operand::Register(r) => request.args.get(usize::from(r)).copied(),
        Operand::Word(w) => request.word(usize::from(w)),
        Operand::Pc => Some(request.pc),
    }
}

/// The judged bytes of the memory `request`'s call carries; `None` if it
/// carries none (or none could be read).
pub fn carried_bytes(request: &PolicyRequest) -> Option<&[u8]> {
    match request.memory {
        CarriedMemory::None => None,
        CarriedMemory::Buffer | CarriedMemory::Message => Some(request.judged_bytes()),
    }
}

impl Decision {
    /// The server's decision for `decision`; `None` for a filter's
    /// (`rules::parse` refuses those for [`RuleUse::Server`]).
    fn from_text(decision: rules::Decision) -> Option<Decision> {
        Some(match decision {
            rules::Decision::Allow => Decision::Allow,
            rules::Decision::Errno(code) => Decision::Errno(code),
            rules::Decision::Kill => Decision::Kill,
            rules::Decision::Emulate { x0, x8 } => Decision::Emulate(x0, x8),
            rules::Decision::Clamp { register, max } => Decision::Clamp(register.into(), max),
            rules::Decision::Trap | rules::Decision::Notify | rules::Decision::Log => return None,
        })
    }

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
pub(crate) mod tests {
    use super::*;
    use abi::policy::MAX_JUDGED_BYTES;

    /// The rules the demo gives the server (`systems/demo.toml`), read
    /// here as they are at run time.
    pub(crate) const SHIPPED: &str = include_str!("../rules.txt");

    /// A request for `syscall` with `x0..x7` `args`, from PC 0x40_1000,
    /// carrying no memory.
    pub(crate) fn request(syscall: Syscall, args: [u64; 8]) -> PolicyRequest {
        PolicyRequest {
            syscall: Some(syscall),
            number: syscall.number(),
            object_type: None,
            badge: 0,
            thread: 3,
            cookie: 1,
            args,
            pc: 0x40_1000,
            memory: CarriedMemory::None,
            memory_length: 0,
            bytes: [0; MAX_JUDGED_BYTES],
            judged: 0,
            endpoint_badge: 0,
        }
    }

    /// `request` carrying `memory` `length` bytes long, of which `judged`
    /// were judged.
    pub(crate) fn carrying(
        mut request: PolicyRequest,
        memory: CarriedMemory,
        judged: &[u8],
        length: u64,
    ) -> PolicyRequest {
        request.memory = memory;
        request.memory_length = length;
        request.bytes[..judged.len()].copy_from_slice(judged);
        request.judged = judged.len();
        request
    }

    #[test]
    fn the_shipped_rule_file_parses_and_decides() {
        let rules = RuleSet::parse(SHIPPED).expect("the shipped rules parse");
        let print = |len| request(Syscall::DebugPrint, [1, 0, 0x40_0000, len, 0, 0, 0, 0]);
        let decide = |r: &PolicyRequest| {
            let (decision, why) = rules.decide(r);
            (decision.answer(r), why)
        };
        assert_eq!(decide(&print(10)), (PolicyAnswer::Allow, Why::Rule(19)));
        assert_eq!(
            decide(&print(200)),
            (
                PolicyAnswer::AllowWith([0x40_0000, 48, 0, 0, 0, 0]),
                Why::Rule(20)
            )
        );
        assert_eq!(
            decide(&request(Syscall::Poll, [0; 8])),
            (PolicyAnswer::Emulate { x0: 0, x8: 0x77 }, Why::Rule(21))
        );
        assert_eq!(
            decide(&request(Syscall::Signal, [0; 8])),
            (PolicyAnswer::Errno(ErrorCode::Denied), Why::Default(24))
        );
        assert_eq!(
            rules.default(),
            Some((Decision::Errno(ErrorCode::Denied), 24))
        );
    }

    #[test]
    fn the_default_line_answers_what_no_rule_matches() {
        let rules = RuleSet::parse("default -> emulate 0 7\npoll -> allow\n").expect("valid");
        assert_eq!(
            rules.decide(&request(Syscall::Poll, [0; 8])),
            (Decision::Allow, Why::Rule(2))
        );
        assert_eq!(
            rules.decide(&request(Syscall::Yield, [0; 8])),
            (Decision::Emulate(0, 7), Why::Default(1))
        );
        let rules = RuleSet::parse("poll -> allow\n").expect("valid");
        assert_eq!(rules.default(), None);
        assert_eq!(
            rules.decide(&request(Syscall::Yield, [0; 8])),
            (FALLBACK, Why::NoDefault)
        );
        assert_eq!(
            RuleSet::parse("default -> allow\n# and\ndefault -> kill\n"),
            Err(RuleError {
                line: 3,
                column: 1,
                message: "`default` twice in one file"
            })
        );
        assert_eq!(
            RuleSet::parse("default -> notify\n"),
            Err(RuleError {
                line: 1,
                column: 12,
                message: FILTER_ONLY
            })
        );
    }

    /// Message words, the PC and byte matches hold as the kernel's
    /// `rule_matches` (`microkernel/src/filter/facts.rs`) makes them:
    /// words 0..=5 are `x2..x7`, words from 6 the judged buffer words of
    /// a message (none for a call that carries a buffer or nothing, or
    /// past what was judged); bytes only for a call that carries memory.
    #[test]
    fn words_the_pc_and_bytes_match_as_in_a_filter() {
        let text = "call when w0 == 0x22 when w6 == 0x5afe -> emulate 0 1\n\
                    call when w7 & 0xff == 1 -> emulate 0 2\n\
                    * when pc < 0x40_0000 -> kill\n\
                    debug_print bytes prefix \"[app]\" -> allow\n\
                    debug_print bytes contains \"secret\" within 16 -> errno denied\n\
                    debug_print bytes == \"ok\" -> emulate 0 3\n\
                    call bytes contains 0xfeca -> emulate 0 4\n\
                    default -> kill\n";
        let rules = RuleSet::parse(text).expect("valid");
        let line = |r: &PolicyRequest| match rules.decide(r).1 {
            Why::Rule(line) | Why::Default(line) => line,
            Why::NoDefault => 0,
        };
        // Buffer words 6 and 7, little-endian, as the kernel copied them.
        let mut words = [0u8; 16];
        words[..8].copy_from_slice(&0x5afe_u64.to_le_bytes());
        words[8..].copy_from_slice(&0xcafe_0101_u64.to_le_bytes());
        let call = |x2, memory, judged: &[u8]| {
            carrying(
                request(Syscall::Call, [1, 0, x2, 0, 0, 0, 0, 0]),
                memory,
                judged,
                judged.len() as u64,
            )
        };
        assert_eq!(line(&call(0x22, CarriedMemory::Message, &words)), 1);
        // Word 0 is x2.
        assert_eq!(line(&call(0x23, CarriedMemory::Message, &words)), 2);
        // Word 7 past what was judged: no value, the comparison does not
        // hold; the bytes judged hold no 0xfeca either.
        assert_eq!(line(&call(0x23, CarriedMemory::Message, &words[..11])), 8);
        // Bytes that are not a message's have no words 6 and up.
        assert_eq!(line(&call(0x22, CarriedMemory::Buffer, &words)), 7);
        assert_eq!(line(&call(0x22, CarriedMemory::None, &words)), 8);
        // The PC.
        let mut low = request(Syscall::Yield, [0; 8]);
        low.pc = 0x3f_fffc;
        assert_eq!(line(&low), 3);
        low.pc = 0x40_0000;
        assert_eq!(line(&low), 8);
        // Bytes: prefix, contains within a window, equal (the whole
        // buffer, so not when it is longer than what was judged).
        let print = |judged: &[u8], length: u64| {
            carrying(
                request(Syscall::DebugPrint, [1, 0, 0x10, length, 0, 0, 0, 0]),
                CarriedMemory::Buffer,
                judged,
                length,
            )
        };
        assert_eq!(line(&print(b"[app] hello", 11)), 4);
        assert_eq!(line(&print(b"my secret", 9)), 5);
        assert_eq!(line(&print(b"0123456789 secret", 17)), 8);
        assert_eq!(line(&print(b"ok", 2)), 6);
        assert_eq!(line(&print(b"ok", 600)), 8);
        // No memory: no byte match holds.
        let mut none = print(b"[app]", 5);
        none.memory = CarriedMemory::None;
        assert_eq!(line(&none), 8);
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
        assert_eq!(rules.default(), None);
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
                "expected `when`, `bytes`, `on`, `label`, `badge` or `->`",
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
                "poll when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 when w6 == 1 when pc == 1 -> allow",
                84,
                "too many conditions (at most 6 `when`)",
            ),
            (
                "poll bytes prefix \"a\" bytes == 0x01 -> allow",
                23,
                "`bytes` twice in one rule",
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
                    poll -> notify\n\
                    default -> allow\n";
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
