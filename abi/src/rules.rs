//! The rule language: filter rules and policy-server rules as text.
//!
//! One grammar, defined here once, for a filter's rules (compiled on the
//! host into a [`FilterDescription`] by [`filter_description`]) and for a
//! policy server's rules (read at run time with [`parse`]). The grammar,
//! examples and error format are in `docs/policy.md`, "The rule language".
//!
//! Nothing here allocates: lines are read from the borrowed text one at a
//! time, and every error is a [`RuleError`] naming the line and the column
//! of the token at fault.

use crate::cap::CapType;
use crate::policy::{
    Action, ArgMatch, ArgOp, FilterDescription, Rule, LABEL_BITS, MAX_ARGS_PER_RULE,
    MAX_ARG_REGISTER, MAX_RULES,
};
use crate::{ErrorCode, Syscall};
use core::fmt;
use core::iter::Enumerate;
use core::str::Lines;

/// The token between a rule's match and its decision.
const ARROW: &str = "->";

// The limits some error messages spell out.
const _: () = assert!(MAX_RULES == 64 && MAX_ARGS_PER_RULE == 6);

/// Who reads the rules: which decisions (and so which rules) make sense.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleUse {
    /// A kernel filter: `allow`, `errno`, `kill`, `trap`, `notify`, `log`.
    Filter,
    /// A policy server answering `Notify` requests: `allow`, `errno`,
    /// `kill`, `emulate`, `clamp`. Its requests carry the object type, the
    /// badge and `x0..x7` (so the label), so every condition applies.
    Server,
}

/// What a matching rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run the syscall.
    Allow,
    /// Refuse it with this error (never [`ErrorCode::Ok`]).
    Errno(ErrorCode),
    /// End the thread.
    Kill,
    /// Filters only: send a fault message to the thread's fault endpoint.
    Trap,
    /// Filters only: ask the policy server.
    Notify,
    /// Filters only: run it and write an audit record.
    Log,
    /// Servers only: do not run it; return `x0` and `x8`.
    Emulate {
        /// The result in `x0`.
        x0: u64,
        /// The value in `x8`.
        x8: u64,
    },
    /// Servers only: run it with message register `register` (2..=7)
    /// lowered to at most `max`.
    Clamp {
        /// The register, 2..=7 for `x2..x7` (the words an answer replaces).
        register: u8,
        /// Its largest allowed value.
        max: u64,
    },
}

impl Decision {
    /// May a rule read by `rule_use` decide this?
    pub const fn is_valid_for(self, rule_use: RuleUse) -> bool {
        match self {
            Decision::Allow | Decision::Errno(_) | Decision::Kill => true,
            Decision::Trap | Decision::Notify | Decision::Log => {
                matches!(rule_use, RuleUse::Filter)
            }
            Decision::Emulate { .. } | Decision::Clamp { .. } => {
                matches!(rule_use, RuleUse::Server)
            }
        }
    }

    /// The filter action; `None` for a policy server's answer.
    pub const fn action(self) -> Option<Action> {
        Some(match self {
            Decision::Allow => Action::Allow,
            Decision::Errno(code) => Action::errno(code),
            Decision::Kill => Action::Kill,
            Decision::Trap => Action::Trap,
            Decision::Notify => Action::Notify,
            Decision::Log => Action::Log,
            Decision::Emulate { .. } | Decision::Clamp { .. } => return None,
        })
    }
}

/// One rule as written: what it matches, what it decides, where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextRule {
    /// The syscall (`None`: `*`, any).
    pub syscall: Option<Syscall>,
    /// `on <type>`: the type of the object the capability in `x0` names.
    pub object_type: Option<CapType>,
    /// `label == <value>`: the message label of `x1` (at most 55 bits).
    pub label: Option<u64>,
    /// `badge == <value>`: the badge of the capability in `x0`.
    pub badge: Option<u64>,
    /// The `when` comparisons, all of which must hold.
    pub args: heapless::Vec<ArgMatch, MAX_ARGS_PER_RULE>,
    /// What the rule decides.
    pub decision: Decision,
    /// Its line (1-based).
    pub line: usize,
    /// The column (1-based) of its first token, for errors about the
    /// rule as a whole (one too many).
    pub column: usize,
}

impl TextRule {
    /// The kernel filter rule it compiles to; `None` for a policy server's
    /// answer (`emulate`, `clamp`).
    pub fn filter_rule(&self) -> Option<Rule> {
        let mut rule = Rule::new(self.decision.action()?);
        rule.syscall = self.syscall.map(Syscall::number);
        rule.object_type = self.object_type;
        rule.label = self.label;
        rule.badge = self.badge;
        rule.args = self.args.clone();
        Some(rule)
    }

    /// An error about the rule as a whole.
    pub const fn error(&self, message: &'static str) -> RuleError {
        RuleError {
            line: self.line,
            column: self.column,
            message,
        }
    }
}

/// A rule that could not be read: where and why.
///
/// Displays as `line 3, column 14: unknown syscall name`; a tool prefixes
/// the file's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// The line (1-based).
    pub line: usize,
    /// The column (1-based, in characters) of the offending token; a
    /// missing token is reported just past the line's last token.
    pub column: usize,
    /// What is wrong.
    pub message: &'static str,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl core::error::Error for RuleError {}

/// Reads the rules of `text` for `rule_use`, in order: one item per rule
/// or bad line (comments and blank lines yield nothing). Reading goes on
/// after an error, so a checker can report every bad line.
pub fn parse(text: &str, rule_use: RuleUse) -> TextRules<'_> {
    TextRules {
        lines: text.lines().enumerate(),
        rule_use,
    }
}

/// The rules of a text, from [`parse`].
#[derive(Clone, Debug)]
pub struct TextRules<'a> {
    lines: Enumerate<Lines<'a>>,
    rule_use: RuleUse,
}

impl Iterator for TextRules<'_> {
    type Item = Result<TextRule, RuleError>;

    fn next(&mut self) -> Option<Self::Item> {
        for (index, text) in self.lines.by_ref() {
            match parse_line(index + 1, text, self.rule_use) {
                Ok(None) => continue,
                Ok(Some(rule)) => return Some(Ok(rule)),
                Err(error) => return Some(Err(error)),
            }
        }
        None
    }
}

/// Compiles the rules of `text` into a kernel filter: every decision must
/// be a filter's, at most [`MAX_RULES`] rules, and the result passes the
/// checks `abi::policy::encode` makes. The first bad line is the error.
pub fn filter_description(text: &str) -> Result<FilterDescription, RuleError> {
    let mut description = FilterDescription::new(Action::Allow);
    for rule in parse(text, RuleUse::Filter) {
        let rule = rule?;
        // `parse` refused every server answer, so this is always `Some`.
        let compiled = rule.filter_rule().ok_or(rule.error(SERVER_ONLY_DECISION))?;
        // The parser checked every field; this is encode's own check, so
        // what compiles here is what the kernel accepts.
        compiled
            .validate()
            .map_err(|error| rule.error(error.describe()))?;
        description
            .push(compiled)
            .map_err(|_| rule.error("too many rules (a filter holds at most 64)"))?;
    }
    Ok(description)
}

const SERVER_ONLY_DECISION: &str = "a policy server's answer, not a filter decision";
const FILTER_ONLY_DECISION: &str = "a filter decision, not a policy server's answer";

/// Reads line `line` (1-based), `text`, of a rule file for `rule_use`:
/// `None` for a blank or comment-only line.
pub fn parse_line(
    line: usize,
    text: &str,
    rule_use: RuleUse,
) -> Result<Option<TextRule>, RuleError> {
    let content = text.find('#').map_or(text, |comment| &text[..comment]);
    let mut parser = LineParser {
        tokens: Tokens {
            text: content,
            offset: 0,
        },
        line,
        end_column: column_of(content, content.trim_end().len()),
    };
    let Some(first) = parser.tokens.next() else {
        return Ok(None);
    };
    let syscall = match first.text {
        "*" => None,
        ARROW => return Err(parser.error(first, "no syscall name (or `*`) before `->`")),
        name => Some(Syscall::from_name(name).ok_or(parser.error(first, "unknown syscall name"))?),
    };
    let mut rule = TextRule {
        syscall,
        object_type: None,
        label: None,
        badge: None,
        args: heapless::Vec::new(),
        decision: Decision::Allow,
        line,
        column: first.column,
    };
    loop {
        let token = parser.next_or("no `->` between the match and the decision")?;
        match token.text {
            ARROW => break,
            "when" => {
                if rule.args.is_full() {
                    return Err(parser.error(token, "too many conditions (at most 6 `when`)"));
                }
                let arg = parser.comparison()?;
                // Cannot fail: not full, checked above.
                let _ = rule.args.push(arg);
            }
            "on" => {
                if rule.object_type.is_some() {
                    return Err(parser.error(token, "`on` twice in one rule"));
                }
                rule.object_type = Some(parser.object_type()?);
            }
            "label" => {
                if rule.label.is_some() {
                    return Err(parser.error(token, "`label` twice in one rule"));
                }
                let value = parser.equality()?;
                if value.0 >> LABEL_BITS != 0 {
                    return Err(parser.error(value.1, "label wider than 55 bits"));
                }
                rule.label = Some(value.0);
            }
            "badge" => {
                if rule.badge.is_some() {
                    return Err(parser.error(token, "`badge` twice in one rule"));
                }
                rule.badge = Some(parser.equality()?.0);
            }
            "allow" | "errno" | "kill" | "trap" | "notify" | "log" | "emulate" | "clamp" => {
                return Err(parser.error(token, "no `->` before the decision"));
            }
            _ => return Err(parser.error(token, "expected `when`, `on`, `label`, `badge` or `->`")),
        }
    }
    let word = parser.next_or("no decision after `->`")?;
    rule.decision = parser.decision(word)?;
    if !rule.decision.is_valid_for(rule_use) {
        let message = match rule_use {
            RuleUse::Filter => SERVER_ONLY_DECISION,
            RuleUse::Server => FILTER_ONLY_DECISION,
        };
        return Err(parser.error(word, message));
    }
    if let Some(extra) = parser.tokens.next() {
        return Err(parser.error(extra, "words after the decision"));
    }
    Ok(Some(rule))
}

/// A word of a line and the column (1-based) it starts at.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    text: &'a str,
    column: usize,
}

/// The words of a line (comment removed): separated by whitespace, and
/// `->` is a word of its own even without spaces around it (`poll->allow`).
#[derive(Clone, Debug)]
struct Tokens<'a> {
    text: &'a str,
    /// Byte offset of the rest.
    offset: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let rest = &self.text[self.offset..];
        let start = self.offset + (rest.len() - rest.trim_start().len());
        let rest = &self.text[start..];
        if rest.is_empty() {
            self.offset = start;
            return None;
        }
        let len = if rest.starts_with(ARROW) {
            ARROW.len()
        } else {
            rest.char_indices()
                .find(|&(i, c)| c.is_whitespace() || rest[i..].starts_with(ARROW))
                .map_or(rest.len(), |(i, _)| i)
        };
        self.offset = start + len;
        Some(Token {
            text: &rest[..len],
            column: column_of(self.text, start),
        })
    }
}

/// The 1-based character column of byte `offset` of `text`.
fn column_of(text: &str, offset: usize) -> usize {
    text[..offset].chars().count() + 1
}

/// One line being read.
struct LineParser<'a> {
    tokens: Tokens<'a>,
    line: usize,
    /// Just past the last token: where a missing token is reported.
    end_column: usize,
}

impl<'a> LineParser<'a> {
    fn error(&self, token: Token<'_>, message: &'static str) -> RuleError {
        RuleError {
            line: self.line,
            column: token.column,
            message,
        }
    }

    /// The next token; `message` at the end of the line if there is none.
    fn next_or(&mut self, message: &'static str) -> Result<Token<'a>, RuleError> {
        self.tokens.next().ok_or(RuleError {
            line: self.line,
            column: self.end_column,
            message,
        })
    }

    /// The next token, a number; `missing` if there is none.
    fn next_number(&mut self, missing: &'static str) -> Result<u64, RuleError> {
        let token = self.next_or(missing)?;
        self.number(token)
    }

    /// The next token, a register (see [`LineParser::register`]).
    fn next_register(
        &mut self,
        missing: &'static str,
        lowest: u8,
        out_of_range: &'static str,
    ) -> Result<u8, RuleError> {
        let token = self.next_or(missing)?;
        self.register(token, lowest, out_of_range)
    }

    /// After `when`: `xN [& mask] op value`.
    fn comparison(&mut self) -> Result<ArgMatch, RuleError> {
        let register = self.next_register(
            "`when` without a register",
            0,
            "register out of range (x0..x7)",
        )?;
        let mut token = self.next_or("a condition without an operator")?;
        let mut mask = u64::MAX;
        if token.text == "&" {
            mask = self.next_number("`&` without a mask")?;
            token = self.next_or("a condition without an operator")?;
        }
        let op = match token.text {
            "==" => ArgOp::Eq,
            "!=" => ArgOp::Ne,
            "<" => ArgOp::Lt,
            "<=" => ArgOp::Le,
            ">" => ArgOp::Gt,
            ">=" => ArgOp::Ge,
            _ => return Err(self.error(token, "unknown operator (== != < <= > >=)")),
        };
        let value_token = self.next_or("a condition without a value")?;
        let value = self.number(value_token)?;
        if matches!(op, ArgOp::Eq | ArgOp::Ne) && value & !mask != 0 {
            // `x & mask == value` could never hold (`!=` always would):
            // surely a mistake in the mask or the value.
            return Err(self.error(value_token, "value has bits outside the mask"));
        }
        Ok(ArgMatch::register(register, mask, op, value))
    }

    /// After `on`: an object type other than `null`.
    fn object_type(&mut self) -> Result<CapType, RuleError> {
        let token = self.next_or("`on` without an object type")?;
        match CapType::from_name(token.text) {
            Some(CapType::Null) => Err(self.error(
                token,
                "`null` is no object type (a rule with `on` never matches an empty slot)",
            )),
            Some(object_type) => Ok(object_type),
            None => Err(self.error(token, "unknown object type")),
        }
    }

    /// After `label` or `badge`: `== value` (the kernel compares these
    /// for equality only). The value and its token.
    fn equality(&mut self) -> Result<(u64, Token<'a>), RuleError> {
        let op = self.next_or("`label` or `badge` without `==`")?;
        if op.text != "==" {
            return Err(self.error(op, "`label` and `badge` compare with `==` only"));
        }
        let token = self.next_or("a condition without a value")?;
        Ok((self.number(token)?, token))
    }

    /// A decision, from its first word on (its arguments).
    fn decision(&mut self, word: Token<'a>) -> Result<Decision, RuleError> {
        Ok(match word.text {
            "allow" => Decision::Allow,
            "kill" => Decision::Kill,
            "trap" => Decision::Trap,
            "notify" => Decision::Notify,
            "log" => Decision::Log,
            "errno" => {
                let name = self.next_or("`errno` without an error name")?;
                match ErrorCode::from_name(name.text) {
                    Some(ErrorCode::Ok) => {
                        return Err(self.error(name, "`ok` is not an error"));
                    }
                    Some(code) => Decision::Errno(code),
                    None => return Err(self.error(name, "unknown error name")),
                }
            }
            "emulate" => {
                let x0 = self.next_number("`emulate` needs x0 and x8")?;
                let x8 = self.next_number("`emulate` needs x0 and x8")?;
                Decision::Emulate { x0, x8 }
            }
            "clamp" => {
                let register = self.next_register(
                    "`clamp` without a register",
                    2,
                    "`clamp` takes a message register (x2..x7)",
                )?;
                let max = self.next_number("`clamp` without a maximum")?;
                Decision::Clamp { register, max }
            }
            _ => return Err(self.error(word, "unknown decision")),
        })
    }

    /// `xN` with `lowest <= N <= 7`; `out_of_range` if N is not.
    fn register(
        &self,
        token: Token<'_>,
        lowest: u8,
        out_of_range: &'static str,
    ) -> Result<u8, RuleError> {
        let digits = token
            .text
            .strip_prefix('x')
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .ok_or(self.error(token, "not a register (x0..x7)"))?;
        match digits.parse::<u8>() {
            Ok(n) if (lowest..=MAX_ARG_REGISTER).contains(&n) => Ok(n),
            _ => Err(self.error(token, out_of_range)),
        }
    }

    /// A decimal or `0x` hexadecimal number, `_` allowed between digits.
    fn number(&self, token: Token<'_>) -> Result<u64, RuleError> {
        let (digits, radix) = match token.text.strip_prefix("0x") {
            Some(hex) => (hex, 16),
            None => (token.text, 10),
        };
        let not_a_number = self.error(token, "not a number");
        // A decimal number starts with a digit (`_1` is no number); both
        // need at least one.
        if radix == 10 && !digits.starts_with(|c: char| c.is_ascii_digit())
            || !digits.contains(|c: char| c != '_')
        {
            return Err(not_a_number);
        }
        let mut value: u64 = 0;
        for c in digits.chars().filter(|&c| c != '_') {
            let digit = c.to_digit(radix).ok_or(not_a_number)?;
            value = value
                .checked_mul(radix.into())
                .and_then(|v| v.checked_add(digit.into()))
                .ok_or(self.error(token, "number does not fit in 64 bits"))?;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{decode, encode, PolicyError, MAX_DESCRIPTION_BYTES};

    fn one(text: &str, rule_use: RuleUse) -> TextRule {
        parse_line(1, text, rule_use)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .unwrap_or_else(|| panic!("{text}: no rule"))
    }

    fn arg(register: u8, mask: u64, op: ArgOp, value: u64) -> ArgMatch {
        ArgMatch::register(register, mask, op, value)
    }

    fn error(line: usize, column: usize, message: &'static str) -> RuleError {
        RuleError {
            line,
            column,
            message,
        }
    }

    #[test]
    fn every_decision_parses_for_its_use() {
        use RuleUse::{Filter, Server};
        let cases = [
            ("allow", Decision::Allow, true, true),
            (
                "errno denied",
                Decision::Errno(ErrorCode::Denied),
                true,
                true,
            ),
            (
                "errno irq_in_use",
                Decision::Errno(ErrorCode::IrqInUse),
                true,
                true,
            ),
            ("kill", Decision::Kill, true, true),
            ("trap", Decision::Trap, true, false),
            ("notify", Decision::Notify, true, false),
            ("log", Decision::Log, true, false),
            (
                "emulate 0 0x77",
                Decision::Emulate { x0: 0, x8: 0x77 },
                false,
                true,
            ),
            (
                "clamp x3 48",
                Decision::Clamp {
                    register: 3,
                    max: 48,
                },
                false,
                true,
            ),
        ];
        for (words, decision, filter, server) in cases {
            let text = format!("poll -> {words}");
            for (rule_use, valid) in [(Filter, filter), (Server, server)] {
                assert_eq!(decision.is_valid_for(rule_use), valid);
                let parsed = parse_line(4, &text, rule_use);
                if valid {
                    assert_eq!(parsed.unwrap().unwrap().decision, decision, "{text}");
                } else {
                    let message = match rule_use {
                        Filter => SERVER_ONLY_DECISION,
                        Server => FILTER_ONLY_DECISION,
                    };
                    assert_eq!(parsed, Err(error(4, 9, message)), "{text}");
                }
            }
            assert_eq!(decision.action().is_some(), filter);
        }
    }

    #[test]
    fn every_operator_with_and_without_a_mask() {
        let ops = [
            ("==", ArgOp::Eq),
            ("!=", ArgOp::Ne),
            ("<", ArgOp::Lt),
            ("<=", ArgOp::Le),
            (">", ArgOp::Gt),
            (">=", ArgOp::Ge),
        ];
        for (register, (word, op)) in ops.iter().enumerate() {
            let register = register as u8;
            let rule = one(
                &format!("* when x{register} {word} 5 -> allow"),
                RuleUse::Filter,
            );
            assert_eq!(rule.args[..], [arg(register, u64::MAX, *op, 5)]);
            let rule = one(
                &format!("* when x{register} & 0xf0 {word} 0x10 -> allow"),
                RuleUse::Filter,
            );
            assert_eq!(rule.args[..], [arg(register, 0xf0, *op, 0x10)]);
        }
        let rule = one(
            "wait when x2 != 1 when x3 == 2 when x4 < 0x10 when x5 <= 3 when x6 > 4 when x7 >= 5 -> kill",
            RuleUse::Server,
        );
        assert_eq!(rule.args.len(), MAX_ARGS_PER_RULE);
        assert_eq!(rule.args[5], arg(7, u64::MAX, ArgOp::Ge, 5));
        // The mask selects bits; a value inside it compares as written.
        let masked = one("* when x1 & 0x7f == 6 -> log", RuleUse::Filter);
        assert!(masked.args[0].matches(&[0, 0x1234_5686, 0, 0, 0, 0, 0, 0]));
    }

    #[test]
    fn object_type_label_and_badge() {
        for object_type in &CapType::ALL[1..] {
            let rule = one(
                &format!("call on {} -> notify", object_type.name()),
                RuleUse::Filter,
            );
            assert_eq!(rule.object_type, Some(*object_type));
        }
        let rule = one(
            "call on endpoint label == 2 badge == 0x9 when x2 == 1 -> errno denied",
            RuleUse::Server,
        );
        assert_eq!(rule.syscall, Some(Syscall::Call));
        assert_eq!(rule.object_type, Some(CapType::Endpoint));
        assert_eq!((rule.label, rule.badge), (Some(2), Some(9)));
        assert_eq!(rule.args[..], [arg(2, u64::MAX, ArgOp::Eq, 1)]);
        let widest = one("* label == 0x7f_ffff_ffff_ffff -> allow", RuleUse::Filter);
        assert_eq!(widest.label, Some((1 << LABEL_BITS) - 1));
    }

    #[test]
    fn values_comments_and_spacing() {
        let cases = [
            ("* when x2 == 0 -> allow", 0),
            ("* when x2 == 1_000 -> allow", 1000),
            ("* when x2 == 0x40_0000 -> allow", 0x40_0000),
            ("* when x2 == 0xDeadBeef -> allow", 0xdead_beef),
            ("* when x2 == 0x_ff -> allow", 0xff),
            ("* when x2 == 18446744073709551615 -> allow", u64::MAX),
            ("* when x2 == 0xffff_ffff_ffff_ffff -> allow", u64::MAX),
        ];
        for (text, value) in cases {
            assert_eq!(one(text, RuleUse::Filter).args[0].value, value, "{text}");
        }
        let text = "# header\n\
                    \n\
                    \t  # indented comment\n\
                    poll->allow\n\
                    \tsignal\twhen x2 >= 3   ->   kill   # trailing comment\n\
                    * -> errno would_block#no space before it\r\n\
                    yield -> log";
        let rules: Vec<TextRule> = parse(text, RuleUse::Filter)
            .collect::<Result<_, _>>()
            .unwrap();
        let lines: Vec<(usize, usize)> = rules.iter().map(|r| (r.line, r.column)).collect();
        assert_eq!(lines, [(4, 1), (5, 2), (6, 1), (7, 1)]);
        assert_eq!(rules[0].decision, Decision::Allow);
        assert_eq!(rules[1].args[0], arg(2, u64::MAX, ArgOp::Ge, 3));
        assert_eq!(rules[2].syscall, None);
        assert_eq!(rules[2].decision, Decision::Errno(ErrorCode::WouldBlock));
        assert_eq!(rules[3].decision, Decision::Log);
        assert_eq!(parse("", RuleUse::Server).count(), 0);
        assert_eq!(parse_line(1, "  # nothing  ", RuleUse::Filter), Ok(None));
    }

    #[test]
    fn every_error_names_its_line_and_column() {
        use RuleUse::{Filter, Server};
        let cases: &[(&str, RuleUse, usize, &str)] = &[
            ("poll allow", Server, 6, "no `->` before the decision"),
            (
                "poll when x2 == 1 errno denied",
                Server,
                19,
                "no `->` before the decision",
            ),
            (
                "poll when x2 == 1",
                Filter,
                18,
                "no `->` between the match and the decision",
            ),
            (
                "-> allow",
                Filter,
                1,
                "no syscall name (or `*`) before `->`",
            ),
            ("frobnicate -> allow", Filter, 1, "unknown syscall name"),
            ("Poll -> allow", Filter, 1, "unknown syscall name"),
            (
                "poll if x2 == 1 -> allow",
                Filter,
                6,
                "expected `when`, `on`, `label`, `badge` or `->`",
            ),
            ("poll when -> allow", Filter, 11, "not a register (x0..x7)"),
            ("poll when", Filter, 10, "`when` without a register"),
            (
                "poll when r2 == 1 -> allow",
                Filter,
                11,
                "not a register (x0..x7)",
            ),
            (
                "poll when x == 1 -> allow",
                Filter,
                11,
                "not a register (x0..x7)",
            ),
            (
                "poll when x+1 == 1 -> allow",
                Filter,
                11,
                "not a register (x0..x7)",
            ),
            (
                "poll when x9 == 1 -> allow",
                Filter,
                11,
                "register out of range (x0..x7)",
            ),
            (
                "poll when x2",
                Filter,
                13,
                "a condition without an operator",
            ),
            (
                "poll when x2 =~ 1 -> allow",
                Filter,
                14,
                "unknown operator (== != < <= > >=)",
            ),
            ("poll when x2 & == 1 -> allow", Filter, 16, "not a number"),
            (
                "poll when x2 & 0xff -> allow",
                Filter,
                21,
                "unknown operator (== != < <= > >=)",
            ),
            (
                "poll when x2 & 0xff == 0x100 -> allow",
                Filter,
                24,
                "value has bits outside the mask",
            ),
            (
                "poll when x2 & 0xff != 0x1ff -> allow",
                Filter,
                24,
                "value has bits outside the mask",
            ),
            ("poll when x2 == -> allow", Filter, 17, "not a number"),
            ("poll when x2 == zz -> allow", Filter, 17, "not a number"),
            ("poll when x2 == 0x -> allow", Filter, 17, "not a number"),
            ("poll when x2 == _1 -> allow", Filter, 17, "not a number"),
            ("poll when x2 == 0xfg -> allow", Filter, 17, "not a number"),
            ("poll when x2 == 12a -> allow", Filter, 17, "not a number"),
            (
                "poll when x2 == 18446744073709551616 -> allow",
                Filter,
                17,
                "number does not fit in 64 bits",
            ),
            (
                "poll when x2 == 0x1_0000_0000_0000_0000 -> allow",
                Filter,
                17,
                "number does not fit in 64 bits",
            ),
            (
                "poll when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 when x2 == 1 -> allow",
                Filter,
                84,
                "too many conditions (at most 6 `when`)",
            ),
            ("call on -> allow", Filter, 9, "unknown object type"),
            ("call on", Filter, 8, "`on` without an object type"),
            (
                "call on Endpoint -> allow",
                Filter,
                9,
                "unknown object type",
            ),
            (
                "call on null -> allow",
                Filter,
                9,
                "`null` is no object type (a rule with `on` never matches an empty slot)",
            ),
            (
                "call on tcb on frame -> allow",
                Filter,
                13,
                "`on` twice in one rule",
            ),
            (
                "call label 2 -> allow",
                Filter,
                12,
                "`label` and `badge` compare with `==` only",
            ),
            (
                "call label > 2 -> allow",
                Filter,
                12,
                "`label` and `badge` compare with `==` only",
            ),
            (
                "call badge != 2 -> allow",
                Server,
                12,
                "`label` and `badge` compare with `==` only",
            ),
            ("call badge", Filter, 11, "`label` or `badge` without `==`"),
            ("call label ==", Filter, 14, "a condition without a value"),
            (
                "call label == 0x80_0000_0000_0000 -> allow",
                Filter,
                15,
                "label wider than 55 bits",
            ),
            (
                "call label == 1 label == 1 -> allow",
                Filter,
                17,
                "`label` twice in one rule",
            ),
            (
                "call badge == 1 badge == 1 -> allow",
                Filter,
                17,
                "`badge` twice in one rule",
            ),
            ("poll ->", Filter, 8, "no decision after `->`"),
            ("poll -> maybe", Filter, 9, "unknown decision"),
            ("poll -> -> allow", Filter, 9, "unknown decision"),
            ("poll -> allow now", Filter, 15, "words after the decision"),
            (
                "poll -> allow -> kill",
                Filter,
                15,
                "words after the decision",
            ),
            ("poll -> errno", Filter, 14, "`errno` without an error name"),
            ("poll -> errno ok", Filter, 15, "`ok` is not an error"),
            ("poll -> errno nonsense", Server, 15, "unknown error name"),
            ("poll -> errno 8", Server, 15, "unknown error name"),
            ("poll -> emulate 0", Server, 18, "`emulate` needs x0 and x8"),
            ("poll -> emulate x0 1", Server, 17, "not a number"),
            (
                "poll -> emulate 0 1 2",
                Server,
                21,
                "words after the decision",
            ),
            ("poll -> clamp", Server, 14, "`clamp` without a register"),
            (
                "poll -> clamp x1 5",
                Server,
                15,
                "`clamp` takes a message register (x2..x7)",
            ),
            (
                "poll -> clamp x8 5",
                Server,
                15,
                "`clamp` takes a message register (x2..x7)",
            ),
            ("poll -> clamp 3 5", Server, 15, "not a register (x0..x7)"),
            ("poll -> clamp x3", Server, 17, "`clamp` without a maximum"),
            ("poll -> trap", Server, 9, FILTER_ONLY_DECISION),
            ("poll -> notify", Server, 9, FILTER_ONLY_DECISION),
            ("poll -> log", Server, 9, FILTER_ONLY_DECISION),
            ("poll -> emulate 0 0", Filter, 9, SERVER_ONLY_DECISION),
            ("poll -> clamp x3 48", Filter, 9, SERVER_ONLY_DECISION),
            // A wrong use is reported before words after the decision.
            ("poll -> log now", Server, 9, FILTER_ONLY_DECISION),
            // Columns count characters, not bytes.
            (
                "poll\u{a0}when x9 == 1 -> allow",
                Filter,
                11,
                "register out of range (x0..x7)",
            ),
            (
                "poll when x2 == 1 \u{2192} allow",
                Filter,
                19,
                "expected `when`, `on`, `label`, `badge` or `->`",
            ),
        ];
        for &(line, rule_use, column, message) in cases {
            let text = format!("# header\n* -> allow\n{line}\n* -> kill\n");
            let results: Vec<_> = parse(&text, rule_use).collect();
            assert_eq!(results.len(), 3, "{line}");
            assert_eq!(results[1], Err(error(3, column, message)), "{line}");
            // Reading goes on after the bad line.
            assert!(results[2].is_ok(), "{line}");
            if rule_use == Filter {
                assert_eq!(
                    filter_description(&text),
                    Err(error(3, column, message)),
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn errors_display_line_column_and_message() {
        let e = parse_line(3, "poll when x2 == 1 -> errno nope", RuleUse::Filter).unwrap_err();
        assert_eq!(e.to_string(), "line 3, column 28: unknown error name");
    }

    #[test]
    fn a_filter_holds_at_most_max_rules() {
        let full = "* -> allow\n".repeat(MAX_RULES);
        assert_eq!(filter_description(&full).unwrap().rules.len(), MAX_RULES);
        let over = format!("{full}  yield -> kill\n");
        assert_eq!(
            filter_description(&over),
            Err(error(
                MAX_RULES + 1,
                3,
                "too many rules (a filter holds at most 64)"
            ))
        );
    }

    /// The demo's filter (`init/src/demo.rs`, `supervisor`), as the SDK's
    /// `RuleBuilder` chain makes it (the policy server's tests compare
    /// with the builder itself).
    #[test]
    fn the_demo_filter_compiles_to_what_the_builder_makes() {
        let text = "# The demo app's filter\n\
                    signal -> errno denied\n\
                    debug_print when x0 == 6 when x3 > 48 -> notify   # the loud console\n\
                    poll -> notify\n";
        let mut expected = FilterDescription::new(Action::Allow);
        let mut signal = Rule::new(Action::errno(ErrorCode::Denied));
        signal.syscall = Some(Syscall::Signal.number());
        expected.push(signal).unwrap();
        let mut print = Rule::new(Action::Notify);
        print.syscall = Some(Syscall::DebugPrint.number());
        print.push_arg(arg(0, u64::MAX, ArgOp::Eq, 6)).unwrap();
        print.push_arg(arg(3, u64::MAX, ArgOp::Gt, 48)).unwrap();
        expected.push(print).unwrap();
        let mut poll = Rule::new(Action::Notify);
        poll.syscall = Some(Syscall::Poll.number());
        expected.push(poll).unwrap();
        let compiled = filter_description(text).unwrap();
        assert_eq!(compiled, expected);
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let bytes = encode(&compiled, &mut buffer).unwrap();
        assert_eq!(decode(bytes), Ok(expected));
    }

    #[test]
    fn every_field_compiles() {
        let text = "call on endpoint label == 2 badge == 7 when x4 & 0xff == 0x12 -> trap\n\
                    * -> log\n";
        let d = filter_description(text).unwrap();
        let call = &d.rules[0];
        assert_eq!(call.syscall, Some(Syscall::Call.number()));
        assert_eq!(call.object_type, Some(CapType::Endpoint));
        assert_eq!((call.label, call.badge), (Some(2), Some(7)));
        assert_eq!(call.args[..], [arg(4, 0xff, ArgOp::Eq, 0x12)]);
        assert_eq!(call.action, Action::Trap);
        assert_eq!(d.rules[1], Rule::new(Action::Log));
    }

    use crate::test_rng::Rng;

    /// Random lines of the language's words never panic, every error
    /// points into the line, and whatever compiles, `encode` accepts.
    #[test]
    fn random_lines_never_panic_and_compile_to_valid_filters() {
        const WORDS: &[&str] = &[
            "*",
            "poll",
            "call",
            "signal",
            "->",
            "->",
            "when",
            "on",
            "label",
            "badge",
            "x0",
            "x3",
            "x7",
            "x8",
            "&",
            "==",
            "==",
            "!=",
            "<",
            ">=",
            "0",
            "6",
            "0xff",
            "1_0",
            "0x80_0000_0000_0000",
            "endpoint",
            "null",
            "allow",
            "errno",
            "denied",
            "ok",
            "kill",
            "trap",
            "notify",
            "log",
            "emulate",
            "clamp",
            "#",
            "é",
        ];
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let (mut rules, mut errors) = (0, 0);
        for _ in 0..20_000 {
            let mut line = String::new();
            for _ in 0..rng.next() % 12 {
                line.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
                line.push(if rng.next().is_multiple_of(8) {
                    '\t'
                } else {
                    ' '
                });
            }
            for rule_use in [RuleUse::Filter, RuleUse::Server] {
                match parse_line(1, &line, rule_use) {
                    Ok(Some(rule)) => {
                        rules += 1;
                        assert!(rule.decision.is_valid_for(rule_use));
                    }
                    Ok(None) => {}
                    Err(e) => {
                        errors += 1;
                        assert!(
                            e.column >= 1 && e.column <= line.chars().count() + 1,
                            "{line}: {e}"
                        );
                    }
                }
            }
            if let Ok(d) = filter_description(&line) {
                assert!(encode(&d, &mut buffer).is_ok(), "{line}");
            }
        }
        assert!(rules > 0 && errors > 0, "{rules} rules, {errors} errors");
    }

    #[test]
    fn policy_errors_have_messages() {
        assert_eq!(PolicyError::BadLabel.describe(), "label wider than 55 bits");
    }
}
