//! The rule language: filter rules and policy-server rules as text.
//!
//! One grammar, defined here once, for a filter's rules (compiled on the
//! host into a [`FilterDescription`] by [`filter_description`]) and for a
//! policy server's rules (read at run time with [`parse`]). The grammar,
//! examples and error format are in `docs/policy.md`, "The rule language".
//!
//! A file is rules, one a line, and one `default -> DECISION` line: what
//! a syscall no rule matches gets. A filter must say it (a filter's
//! default is explicit on the wire too); a policy server's file may
//! leave it out, and then the server says what it falls back to.
//!
//! Nothing here allocates: lines are read from the borrowed text one at a
//! time, and every error is a [`RuleError`] naming the line and the column
//! of the token at fault.

use crate::cap::CapType;
use crate::policy::{
    Action, ArgMatch, ArgOp, BytesMatch, BytesOp, FilterDescription, Operand, Rule, LABEL_BITS,
    MAX_ARGS_PER_RULE, MAX_ARG_REGISTER, MAX_MESSAGE_WORDS, MAX_PATTERN_BYTES, MAX_RULES,
};
use crate::{ErrorCode, Syscall};
use core::fmt;
use core::iter::Enumerate;
use core::str::Lines;

/// The token between a rule's match and its decision.
const ARROW: &str = "->";

/// The first token of the line that says what no rule matching gets.
const DEFAULT: &str = "default";

// The limits some error messages spell out.
const _: () = assert!(
    MAX_RULES == 64
        && MAX_ARGS_PER_RULE == 6
        && MAX_PATTERN_BYTES == 64
        && MAX_MESSAGE_WORDS == 64
        && MAX_ARG_REGISTER == 7
);

/// Who reads the rules: which decisions (and so which rules) make sense.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleUse {
    /// A kernel filter: `allow`, `errno`, `kill`, `trap`, `notify`, `log`.
    /// Its text must have a `default` line.
    Filter,
    /// A policy server answering `Notify` requests: `allow`, `errno`,
    /// `kill`, `emulate`, `clamp`. Its requests carry the object type, the
    /// badge, `x0..x7` (so the label), the PC and the judged memory, so
    /// every condition applies. Its `default` line is optional.
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
    /// The `when` comparisons (of a register, a message word or the PC),
    /// all of which must hold.
    pub args: heapless::Vec<ArgMatch, MAX_ARGS_PER_RULE>,
    /// `bytes <op> <pattern> [within <n>]`: a match on the bytes the call
    /// carries.
    pub bytes: Option<BytesMatch>,
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
        rule.bytes = self.bytes.clone();
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

/// The `default -> DECISION` line: what a syscall no rule matches gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextDefault {
    /// The decision.
    pub decision: Decision,
    /// Its line (1-based).
    pub line: usize,
    /// The column (1-based) of `default`.
    pub column: usize,
}

/// What a line that is not blank or a comment says.
// Nothing here allocates, so a rule cannot be boxed; lines are read one
// at a time and not stored as `Line`s, so the default's wasted bytes are
// never multiplied.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A rule.
    Rule(TextRule),
    /// The default: what a syscall no rule matches gets.
    Default(TextDefault),
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

/// Reads the rules of `text` for `rule_use`, in order: one item per rule,
/// `default` line or bad line (comments and blank lines yield nothing).
/// A second `default` line is an error. Reading goes on after an error,
/// so a checker can report every bad line.
pub fn parse(text: &str, rule_use: RuleUse) -> TextRules<'_> {
    TextRules {
        lines: text.lines().enumerate(),
        rule_use,
        default: None,
    }
}

/// The lines of a text, from [`parse`].
#[derive(Clone, Debug)]
pub struct TextRules<'a> {
    lines: Enumerate<Lines<'a>>,
    rule_use: RuleUse,
    /// The `default` line read so far.
    default: Option<TextDefault>,
}

impl TextRules<'_> {
    /// The `default` line, once it has been read (the first one: a second
    /// is an error).
    pub fn default(&self) -> Option<TextDefault> {
        self.default
    }
}

impl Iterator for TextRules<'_> {
    type Item = Result<Line, RuleError>;

    fn next(&mut self) -> Option<Self::Item> {
        for (index, text) in self.lines.by_ref() {
            match parse_line(index + 1, text, self.rule_use) {
                Ok(None) => continue,
                Ok(Some(Line::Default(default))) if self.default.is_some() => {
                    return Some(Err(RuleError {
                        line: default.line,
                        column: default.column,
                        message: "`default` twice in one file",
                    }));
                }
                Ok(Some(line)) => {
                    if let Line::Default(default) = line {
                        self.default = Some(default);
                    }
                    return Some(Ok(line));
                }
                Err(error) => return Some(Err(error)),
            }
        }
        None
    }
}

/// Compiles the rules of `text` into a kernel filter: every decision must
/// be a filter's, at most [`MAX_RULES`] rules, exactly one `default`
/// line, and the result passes the checks `abi::policy::encode` makes.
/// The first bad line is the error; a missing `default` is reported at
/// line 1, column 1, after every line has been read.
pub fn filter_description(text: &str) -> Result<FilterDescription, RuleError> {
    let mut description = FilterDescription::new(Action::Allow);
    let mut lines = parse(text, RuleUse::Filter);
    for line in lines.by_ref() {
        let rule = match line? {
            Line::Rule(rule) => rule,
            // Kept by `lines`; compiled once all are read.
            Line::Default(_) => continue,
        };
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
    let default = lines.default().ok_or(RuleError {
        line: 1,
        column: 1,
        message: MISSING_DEFAULT,
    })?;
    let not_a_filter_decision = RuleError {
        line: default.line,
        column: default.column,
        message: SERVER_ONLY_DECISION,
    };
    description.default = default.decision.action().ok_or(not_a_filter_decision)?;
    description.validate().map_err(|error| RuleError {
        line: default.line,
        column: default.column,
        message: error.describe(),
    })?;
    Ok(description)
}

const SERVER_ONLY_DECISION: &str = "a policy server's answer, not a filter decision";
const FILTER_ONLY_DECISION: &str = "a filter decision, not a policy server's answer";
const MISSING_DEFAULT: &str = "a filter says what a syscall no rule matches gets: add a line `default -> DECISION` (`default -> allow`, `default -> errno denied`, ...)";

/// Reads line `line` (1-based), `text`, of a rule file for `rule_use`:
/// `None` for a blank or comment-only line.
pub fn parse_line(line: usize, text: &str, rule_use: RuleUse) -> Result<Option<Line>, RuleError> {
    let content = &text[..comment_start(text)];
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
        DEFAULT => {
            return parser
                .default_line(first, rule_use)
                .map(|default| Some(Line::Default(default)));
        }
        ARROW => return Err(parser.error(first, "no syscall name (or `*`) before `->`")),
        name => Some(Syscall::from_name(name).ok_or(parser.error(first, "unknown syscall name"))?),
    };
    let mut rule = TextRule {
        syscall,
        object_type: None,
        label: None,
        badge: None,
        args: heapless::Vec::new(),
        bytes: None,
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
            "bytes" => {
                if rule.bytes.is_some() {
                    return Err(parser.error(token, "`bytes` twice in one rule"));
                }
                rule.bytes = Some(parser.bytes_match()?);
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
            _ => {
                return Err(parser.error(
                    token,
                    "expected `when`, `bytes`, `on`, `label`, `badge` or `->`",
                ))
            }
        }
    }
    rule.decision = parser.decision_to_the_end(rule_use)?;
    Ok(Some(Line::Rule(rule)))
}

/// Where the comment of `text` starts: its first `#` outside a quoted
/// string (a pattern may hold one), or its end.
fn comment_start(text: &str) -> usize {
    // Bytes, not characters: `"`, `\` and `#` are ASCII, and no byte of
    // a multi-byte UTF-8 character is.
    let mut string = StringScan::default();
    text.bytes()
        .position(|b| !string.step(b) && b == b'#')
        .unwrap_or(text.len())
}

/// Follows quoted strings (with `\` escapes) through a line.
#[derive(Clone, Copy, Debug, Default)]
struct StringScan {
    inside: bool,
    escaped: bool,
}

impl StringScan {
    /// Takes the next character (or byte) of the line: was it part of a
    /// quoted string (its quotes included)?
    fn step(&mut self, c: impl Into<u32>) -> bool {
        let c = c.into();
        let quote = u32::from(b'"');
        if self.inside {
            if self.escaped {
                self.escaped = false;
            } else if c == u32::from(b'\\') {
                self.escaped = true;
            } else if c == quote {
                self.inside = false;
            }
            true
        } else {
            self.inside = c == quote;
            self.inside
        }
    }
}

/// A word of a line and the column (1-based) it starts at.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    text: &'a str,
    column: usize,
}

/// The words of a line (comment removed): separated by whitespace, and
/// `->` is a word of its own even without spaces around it (`poll->allow`).
/// A quoted string is part of its word whatever it holds (`"a b -> c"`).
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
            let mut string = StringScan::default();
            rest.char_indices()
                .find(|&(i, c)| {
                    !string.step(c) && (c.is_whitespace() || rest[i..].starts_with(ARROW))
                })
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
        self.error_at(token.column, message)
    }

    fn error_at(&self, column: usize, message: &'static str) -> RuleError {
        RuleError {
            line: self.line,
            column,
            message,
        }
    }

    /// The next token; `message` at the end of the line if there is none.
    fn next_or(&mut self, message: &'static str) -> Result<Token<'a>, RuleError> {
        self.tokens
            .next()
            .ok_or(self.error_at(self.end_column, message))
    }

    /// The next token, a number; `missing` if there is none.
    fn next_number(&mut self, missing: &'static str) -> Result<u64, RuleError> {
        let token = self.next_or(missing)?;
        self.number(token)
    }

    /// The next token, if it is `word` (taken), else nothing is taken.
    fn take(&mut self, word: &str) -> Option<Token<'a>> {
        let mut ahead = self.tokens.clone();
        let token = ahead.next().filter(|t| t.text == word)?;
        self.tokens = ahead;
        Some(token)
    }

    /// After `default`: `-> decision`, the end of the line.
    fn default_line(
        &mut self,
        default: Token<'_>,
        rule_use: RuleUse,
    ) -> Result<TextDefault, RuleError> {
        let arrow = self.next_or("no `->` after `default`")?;
        if arrow.text != ARROW {
            return Err(self.error(
                arrow,
                "`default` takes no conditions: `default -> DECISION`",
            ));
        }
        Ok(TextDefault {
            decision: self.decision_to_the_end(rule_use)?,
            line: self.line,
            column: default.column,
        })
    }

    /// After `->`: a decision valid for `rule_use`, and nothing after it.
    fn decision_to_the_end(&mut self, rule_use: RuleUse) -> Result<Decision, RuleError> {
        let word = self.next_or("no decision after `->`")?;
        let decision = self.decision(word)?;
        if !decision.is_valid_for(rule_use) {
            let message = match rule_use {
                RuleUse::Filter => SERVER_ONLY_DECISION,
                RuleUse::Server => FILTER_ONLY_DECISION,
            };
            return Err(self.error(word, message));
        }
        if let Some(extra) = self.tokens.next() {
            return Err(self.error(extra, "words after the decision"));
        }
        Ok(decision)
    }

    /// After `when`: `operand [& mask] op value`.
    fn comparison(&mut self) -> Result<ArgMatch, RuleError> {
        let operand = self.next_or("`when` without a register, word or `pc`")?;
        let operand = self.operand(operand)?;
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
        Ok(ArgMatch {
            operand,
            mask,
            op,
            value,
        })
    }

    /// What `when` compares: `xN` (a register, 0..=7), `wN` (a message
    /// word, 0..=63) or `pc`.
    fn operand(&self, token: Token<'_>) -> Result<Operand, RuleError> {
        if token.text == "pc" {
            return Ok(Operand::Pc);
        }
        let not_an_operand = "not a register, word or `pc` (x0..x7, w0..w63, pc)";
        let (kind, digits) = token
            .text
            .split_at_checked(1)
            .filter(|(_, d)| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .ok_or(self.error(token, not_an_operand))?;
        let n = digits.parse::<u8>().ok();
        match kind {
            "x" => match n {
                Some(r) if r <= MAX_ARG_REGISTER => Ok(Operand::Register(r)),
                _ => Err(self.error(token, "register out of range (x0..x7)")),
            },
            "w" => match n {
                Some(w) if w < MAX_MESSAGE_WORDS => Ok(Operand::Word(w)),
                _ => Err(self.error(token, "message word out of range (w0..w63)")),
            },
            _ => Err(self.error(token, not_an_operand)),
        }
    }

    /// After `bytes`: `op pattern [within n]`.
    fn bytes_match(&mut self) -> Result<BytesMatch, RuleError> {
        let op = self.next_or("`bytes` without `==`, `prefix` or `contains`")?;
        let op = match op.text {
            "==" => BytesOp::Equal,
            "prefix" => BytesOp::Prefix,
            "contains" => BytesOp::Contains,
            _ => return Err(self.error(op, "unknown byte match (== prefix contains)")),
        };
        let pattern_token = self.next_or("a byte match without a pattern")?;
        let pattern = self.pattern(pattern_token)?;
        let mut within = 0;
        if self.take("within").is_some() {
            let length = self.next_or("`within` without a length")?;
            within = match self.number(length)? {
                n @ 1..=0xffff => n as u16,
                _ => return Err(self.error(length, "`within` takes 1 to 65535 bytes")),
            };
            if usize::from(within) < pattern.len() {
                // The window cannot hold the pattern: the match could
                // never hold.
                return Err(self.error(length, "`within` is shorter than the pattern"));
            }
        }
        Ok(BytesMatch {
            op,
            pattern,
            within,
        })
    }

    /// A byte pattern: a quoted string (`\"`, `\\`, `\n`, `\t`, `\xNN`
    /// escapes; other characters as their UTF-8 bytes) or `0x` and two
    /// hex digits a byte, in order (`_` allowed between digits); 1 to
    /// [`MAX_PATTERN_BYTES`] bytes.
    fn pattern(&self, token: Token<'_>) -> Result<heapless::Vec<u8, MAX_PATTERN_BYTES>, RuleError> {
        let too_long = self.error(token, "pattern longer than 64 bytes");
        let mut pattern = heapless::Vec::new();
        if let Some(hex) = token.text.strip_prefix("0x") {
            let not_hex = self.error(token, "not a hex pattern (0x and two digits a byte)");
            let mut high: Option<u8> = None;
            for c in hex.chars().filter(|&c| c != '_') {
                let digit = c.to_digit(16).ok_or(not_hex)? as u8;
                match high.take() {
                    None => high = Some(digit),
                    Some(h) => pattern.push(h << 4 | digit).map_err(|_| too_long)?,
                }
            }
            if high.is_some() || pattern.is_empty() {
                return Err(not_hex);
            }
            return Ok(pattern);
        }
        let Some(body) = token.text.strip_prefix('"') else {
            return Err(self.error(token, "a pattern is a \"string\" or 0x hex bytes"));
        };
        // The column of byte `i` of `body`.
        let column = |i: usize| token.column + column_of(body, i);
        let unterminated = self.error(token, "a string without its closing `\"`");
        let mut chars = body.char_indices();
        loop {
            let Some((i, c)) = chars.next() else {
                return Err(unterminated);
            };
            let mut utf8 = [0u8; 4];
            let bytes: &[u8] = match c {
                '"' => {
                    if let Some((after, _)) = chars.next() {
                        return Err(
                            self.error_at(column(after), "characters after the closing `\"`")
                        );
                    }
                    break;
                }
                '\\' => {
                    let escape =
                        self.error_at(column(i), "unknown escape (\\\" \\\\ \\n \\t \\xNN)");
                    match chars.next().map(|(_, e)| e) {
                        Some('"') => b"\"",
                        Some('\\') => b"\\",
                        Some('n') => b"\n",
                        Some('t') => b"\t",
                        Some('x') => {
                            let bad = self.error_at(column(i), "`\\x` takes two hex digits");
                            let mut byte = 0u8;
                            for _ in 0..2 {
                                let digit = chars.next().and_then(|(_, d)| d.to_digit(16));
                                byte = byte << 4 | digit.ok_or(bad)? as u8;
                            }
                            utf8[0] = byte;
                            &utf8[..1]
                        }
                        Some(_) => return Err(escape),
                        None => return Err(unterminated),
                    }
                }
                c => c.encode_utf8(&mut utf8).as_bytes(),
            };
            pattern.extend_from_slice(bytes).map_err(|_| too_long)?;
        }
        if pattern.is_empty() {
            return Err(self.error(token, "an empty pattern (1 to 64 bytes)"));
        }
        Ok(pattern)
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
                let register = self.next_or("`clamp` without a register")?;
                let register = self.register(register)?;
                let max = self.next_number("`clamp` without a maximum")?;
                Decision::Clamp { register, max }
            }
            _ => return Err(self.error(word, "unknown decision")),
        })
    }

    /// `xN` with `2 <= N <= 7`: the message register `clamp` lowers.
    fn register(&self, token: Token<'_>) -> Result<u8, RuleError> {
        let digits = token
            .text
            .strip_prefix('x')
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .ok_or(self.error(token, "not a register (x0..x7)"))?;
        match digits.parse::<u8>() {
            Ok(n) if (2..=MAX_ARG_REGISTER).contains(&n) => Ok(n),
            _ => Err(self.error(token, "`clamp` takes a message register (x2..x7)")),
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
        match parse_line(1, text, rule_use) {
            Ok(Some(Line::Rule(rule))) => rule,
            other => panic!("{text}: {other:?}"),
        }
    }

    /// The rules of `text`, which has no bad line.
    fn rules_of(text: &str, rule_use: RuleUse) -> Vec<TextRule> {
        parse(text, rule_use)
            .filter_map(|line| match line {
                Ok(Line::Rule(rule)) => Some(rule),
                Ok(Line::Default(_)) => None,
                Err(e) => panic!("{text}: {e}"),
            })
            .collect()
    }

    fn word(word: u8, mask: u64, op: ArgOp, value: u64) -> ArgMatch {
        ArgMatch {
            operand: Operand::Word(word),
            mask,
            op,
            value,
        }
    }

    fn arg(register: u8, mask: u64, op: ArgOp, value: u64) -> ArgMatch {
        ArgMatch::register(register, mask, op, value)
    }

    const NOT_AN_OPERAND: &str = "not a register, word or `pc` (x0..x7, w0..w63, pc)";

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
                    let Ok(Some(Line::Rule(rule))) = parsed else {
                        panic!("{text}: {parsed:?}");
                    };
                    assert_eq!(rule.decision, decision, "{text}");
                    let default = format!("default -> {words}");
                    let Ok(Some(Line::Default(default))) = parse_line(4, &default, rule_use) else {
                        panic!("{default}");
                    };
                    assert_eq!((default.decision, default.column), (decision, 1));
                } else {
                    let message = match rule_use {
                        Filter => SERVER_ONLY_DECISION,
                        Server => FILTER_ONLY_DECISION,
                    };
                    assert_eq!(parsed, Err(error(4, 9, message)), "{text}");
                    let default = format!("default -> {words}");
                    assert_eq!(
                        parse_line(4, &default, rule_use),
                        Err(error(4, 12, message)),
                        "{default}"
                    );
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
    fn message_words_and_the_pc() {
        let ops = [
            ("==", ArgOp::Eq),
            ("!=", ArgOp::Ne),
            ("<", ArgOp::Lt),
            ("<=", ArgOp::Le),
            (">", ArgOp::Gt),
            (">=", ArgOp::Ge),
        ];
        for (n, (text, op)) in ops.iter().enumerate() {
            let w = (n * 12) as u8;
            let rule = one(
                &format!("call when w{w} {text} 5 when w{w} & 0xf0 {text} 0x10 -> allow"),
                RuleUse::Filter,
            );
            assert_eq!(
                rule.args[..],
                [word(w, u64::MAX, *op, 5), word(w, 0xf0, *op, 0x10)]
            );
            let rule = one(
                &format!("* when pc {text} 0x40_0000 when pc & 0xfff {text} 0 -> kill"),
                RuleUse::Server,
            );
            let pc = |mask, value| ArgMatch {
                operand: Operand::Pc,
                mask,
                op: *op,
                value,
            };
            assert_eq!(rule.args[..], [pc(u64::MAX, 0x40_0000), pc(0xfff, 0)]);
        }
        // `w0..w5` name the message words in `x2..x7` as words (the
        // kernel reads them from the registers); `w63` is the last.
        let rule = one("call when w0 == 1 when w63 == 2 -> allow", RuleUse::Filter);
        assert_eq!(
            rule.args[..],
            [
                word(0, u64::MAX, ArgOp::Eq, 1),
                word(63, u64::MAX, ArgOp::Eq, 2)
            ]
        );
        let rule = one("call when w6 == 0x5afe -> allow", RuleUse::Filter);
        assert!(rule.args[0].operand.reads_memory());
        assert!(!one("call when w5 == 0 -> allow", RuleUse::Filter).args[0]
            .operand
            .reads_memory());
    }

    #[test]
    fn byte_patterns() {
        let pattern = |text: &str| {
            let rule = one(
                &format!("debug_print bytes prefix {text} -> allow"),
                RuleUse::Filter,
            );
            let bytes = rule.bytes.expect("a byte match");
            assert_eq!((bytes.op, bytes.within), (BytesOp::Prefix, 0));
            bytes.pattern.to_vec()
        };
        assert_eq!(pattern("\"[app]\""), b"[app]");
        // Spaces, `->` and `#` are the pattern's inside quotes.
        assert_eq!(pattern("\"a b  -> c # d\""), b"a b  -> c # d");
        assert_eq!(pattern("\"\\\"\\\\\\n\\t\\x00\\xfF\""), b"\"\\\n\t\x00\xff");
        assert_eq!(pattern("\"é\""), "é".as_bytes());
        assert_eq!(pattern("0x53414645"), b"SAFE");
        assert_eq!(pattern("0x_53_41_46_45"), b"SAFE");
        assert_eq!(pattern("0x00"), [0]);
        let longest = "x".repeat(MAX_PATTERN_BYTES);
        assert_eq!(pattern(&format!("\"{longest}\"")), longest.as_bytes());
        assert_eq!(
            pattern(&format!("0x{}", "ab".repeat(MAX_PATTERN_BYTES))),
            [0xab; MAX_PATTERN_BYTES]
        );
        // One byte too many, however it is written.
        for text in [
            format!("\"{longest}x\""),
            format!("\"{}\\x01\"", "x".repeat(MAX_PATTERN_BYTES)),
            format!("\"{}é\"", "x".repeat(MAX_PATTERN_BYTES - 1)),
            format!("0x{}", "ab".repeat(MAX_PATTERN_BYTES + 1)),
        ] {
            assert_eq!(
                parse_line(
                    2,
                    &format!("debug_print bytes == {text} -> allow"),
                    RuleUse::Filter
                ),
                Err(error(2, 22, "pattern longer than 64 bytes")),
                "{text}"
            );
        }
        for (op, expected) in [
            ("==", BytesOp::Equal),
            ("prefix", BytesOp::Prefix),
            ("contains", BytesOp::Contains),
        ] {
            let rule = one(
                &format!("call bytes {op} \"ok\" within 0x10 -> log # \"a comment\""),
                RuleUse::Filter,
            );
            assert_eq!(
                rule.bytes,
                Some(BytesMatch::new(expected, b"ok", 16).unwrap())
            );
        }
        let rule = one("* bytes contains \"ab\" within 2 -> allow", RuleUse::Server);
        assert_eq!(rule.bytes.unwrap().within, 2);
        let rule = one(
            "call bytes contains 0x01 within 65535 when w6 == 1 -> allow",
            RuleUse::Server,
        );
        assert_eq!(rule.bytes.unwrap().within, u16::MAX);
        assert_eq!(rule.args[..], [word(6, u64::MAX, ArgOp::Eq, 1)]);
        // No spaces needed before `->` after a string.
        let rule = one("debug_print bytes == \"x\"->allow", RuleUse::Filter);
        assert_eq!(rule.bytes.unwrap().pattern[..], *b"x");
    }

    #[test]
    fn the_default_line() {
        use RuleUse::{Filter, Server};
        // Anywhere in the file, for both uses; a filter's is its default
        // action.
        let text = "# what no rule matches gets\n\
                    default -> errno denied   # first\n\
                    poll -> allow\n";
        let mut lines = parse(text, Server);
        assert!(matches!(lines.next(), Some(Ok(Line::Default(_)))));
        assert_eq!(
            lines.default(),
            Some(TextDefault {
                decision: Decision::Errno(ErrorCode::Denied),
                line: 2,
                column: 1
            })
        );
        assert!(matches!(lines.next(), Some(Ok(Line::Rule(_)))));
        assert!(lines.next().is_none());
        let d = filter_description(text).unwrap();
        assert_eq!(d.default, Action::errno(ErrorCode::Denied));
        assert_eq!(d.rules.len(), 1);
        let d = filter_description("poll -> notify\n  default->notify").unwrap();
        assert_eq!(d.default, Action::Notify);
        assert!(d.asks_a_server());
        // A server's file may leave it out.
        let mut lines = parse("poll -> allow\n", Server);
        assert!(lines.all(|l| l.is_ok()));
        assert_eq!(parse("poll -> allow\n", Server).default(), None);
        // A filter's may not: reported at line 1, column 1, once every
        // line is read (a bad line is reported first).
        for text in ["", "# nothing\n", "poll -> allow\n* -> kill\n"] {
            assert_eq!(
                filter_description(text),
                Err(error(1, 1, MISSING_DEFAULT)),
                "{text:?}"
            );
        }
        assert_eq!(
            filter_description("poll -> allow\npoll -> nope\n"),
            Err(error(2, 9, "unknown decision"))
        );
        // At most one a file.
        let twice = "default -> allow\npoll -> kill\n  default -> kill\n";
        for rule_use in [Filter, Server] {
            let results: Vec<_> = parse(twice, rule_use).collect();
            assert_eq!(results[2], Err(error(3, 3, "`default` twice in one file")));
            let mut lines = parse(twice, rule_use);
            lines.by_ref().for_each(drop);
            assert_eq!(lines.default().map(|d| d.decision), Some(Decision::Allow));
        }
        assert_eq!(
            filter_description(twice),
            Err(error(3, 3, "`default` twice in one file"))
        );
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
        let rules = rules_of(text, RuleUse::Filter);
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
                "expected `when`, `bytes`, `on`, `label`, `badge` or `->`",
            ),
            ("poll when -> allow", Filter, 11, NOT_AN_OPERAND),
            (
                "poll when",
                Filter,
                10,
                "`when` without a register, word or `pc`",
            ),
            ("poll when r2 == 1 -> allow", Filter, 11, NOT_AN_OPERAND),
            ("poll when x == 1 -> allow", Filter, 11, NOT_AN_OPERAND),
            ("poll when x+1 == 1 -> allow", Filter, 11, NOT_AN_OPERAND),
            ("poll when w == 1 -> allow", Filter, 11, NOT_AN_OPERAND),
            ("poll when w-1 == 1 -> allow", Filter, 11, NOT_AN_OPERAND),
            ("poll when PC == 1 -> allow", Filter, 11, NOT_AN_OPERAND),
            ("poll when pc2 == 1 -> allow", Filter, 11, NOT_AN_OPERAND),
            ("poll when é1 == 1 -> allow", Server, 11, NOT_AN_OPERAND),
            (
                "call when w64 == 1 -> allow",
                Filter,
                11,
                "message word out of range (w0..w63)",
            ),
            (
                "call when w300 == 1 -> allow",
                Server,
                11,
                "message word out of range (w0..w63)",
            ),
            (
                "call when w6 & 0xff == 0x100 -> allow",
                Filter,
                24,
                "value has bits outside the mask",
            ),
            (
                "call when pc =< 4 -> allow",
                Filter,
                14,
                "unknown operator (== != < <= > >=)",
            ),
            (
                "call when pc <",
                Filter,
                15,
                "a condition without a value",
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
            (
                "call when w6 == 1 when pc > 1 when w7 == 1 when x2 == 1 when w63 == 1 when pc < 9 when w8 == 1 -> allow",
                Server,
                83,
                "too many conditions (at most 6 `when`)",
            ),
            // Byte matches.
            (
                "debug_print bytes",
                Filter,
                18,
                "`bytes` without `==`, `prefix` or `contains`",
            ),
            (
                "debug_print bytes starts \"a\" -> allow",
                Filter,
                19,
                "unknown byte match (== prefix contains)",
            ),
            (
                "debug_print bytes != \"a\" -> allow",
                Filter,
                19,
                "unknown byte match (== prefix contains)",
            ),
            (
                "debug_print bytes prefix",
                Filter,
                25,
                "a byte match without a pattern",
            ),
            (
                "debug_print bytes prefix -> allow",
                Filter,
                26,
                "a pattern is a \"string\" or 0x hex bytes",
            ),
            (
                "debug_print bytes prefix hello -> allow",
                Filter,
                26,
                "a pattern is a \"string\" or 0x hex bytes",
            ),
            (
                "debug_print bytes prefix 'hello' -> allow",
                Filter,
                26,
                "a pattern is a \"string\" or 0x hex bytes",
            ),
            (
                "debug_print bytes prefix \"\" -> allow",
                Filter,
                26,
                "an empty pattern (1 to 64 bytes)",
            ),
            (
                "debug_print bytes prefix \"abc -> allow",
                Filter,
                26,
                "a string without its closing `\"`",
            ),
            (
                "debug_print bytes prefix \"abc\\\" -> allow",
                Server,
                26,
                "a string without its closing `\"`",
            ),
            (
                "debug_print bytes prefix \"abc\"def -> allow",
                Filter,
                31,
                "characters after the closing `\"`",
            ),
            (
                "debug_print bytes prefix \"a\"\"b\" -> allow",
                Filter,
                29,
                "characters after the closing `\"`",
            ),
            (
                "debug_print bytes prefix \"ab\\q\" -> allow",
                Filter,
                29,
                "unknown escape (\\\" \\\\ \\n \\t \\xNN)",
            ),
            (
                "debug_print bytes prefix \"é\\0\" -> allow",
                Filter,
                28,
                "unknown escape (\\\" \\\\ \\n \\t \\xNN)",
            ),
            (
                "debug_print bytes prefix \"a\\x4g\" -> allow",
                Filter,
                28,
                "`\\x` takes two hex digits",
            ),
            (
                "debug_print bytes prefix \"a\\x4\" -> allow",
                Filter,
                28,
                "`\\x` takes two hex digits",
            ),
            (
                "debug_print bytes prefix \"a\\x",
                Filter,
                28,
                "`\\x` takes two hex digits",
            ),
            (
                "debug_print bytes prefix \"a\\",
                Filter,
                26,
                "a string without its closing `\"`",
            ),
            (
                "debug_print bytes == 0x -> allow",
                Filter,
                22,
                "not a hex pattern (0x and two digits a byte)",
            ),
            (
                "debug_print bytes == 0x534 -> allow",
                Filter,
                22,
                "not a hex pattern (0x and two digits a byte)",
            ),
            (
                "debug_print bytes == 0x5g -> allow",
                Filter,
                22,
                "not a hex pattern (0x and two digits a byte)",
            ),
            (
                "debug_print bytes == 0x__ -> allow",
                Filter,
                22,
                "not a hex pattern (0x and two digits a byte)",
            ),
            (
                "debug_print bytes contains \"a\" within -> allow",
                Filter,
                39,
                "not a number",
            ),
            (
                "debug_print bytes contains \"a\" within",
                Filter,
                38,
                "`within` without a length",
            ),
            (
                "debug_print bytes contains \"a\" within 0 -> allow",
                Filter,
                39,
                "`within` takes 1 to 65535 bytes",
            ),
            (
                "debug_print bytes contains \"a\" within 65536 -> allow",
                Filter,
                39,
                "`within` takes 1 to 65535 bytes",
            ),
            (
                "debug_print bytes contains \"abcd\" within 3 -> allow",
                Filter,
                42,
                "`within` is shorter than the pattern",
            ),
            (
                "debug_print bytes prefix \"a\" bytes prefix \"b\" -> allow",
                Filter,
                30,
                "`bytes` twice in one rule",
            ),
            (
                "debug_print bytes prefix \"a\" within 4 within 4 -> allow",
                Filter,
                39,
                "expected `when`, `bytes`, `on`, `label`, `badge` or `->`",
            ),
            // The default line.
            ("default", Filter, 8, "no `->` after `default`"),
            ("  default  ", Server, 10, "no `->` after `default`"),
            ("default ->", Filter, 11, "no decision after `->`"),
            (
                "default when x2 == 1 -> allow",
                Filter,
                9,
                "`default` takes no conditions: `default -> DECISION`",
            ),
            (
                "default poll -> allow",
                Server,
                9,
                "`default` takes no conditions: `default -> DECISION`",
            ),
            ("default -> allow now", Filter, 18, "words after the decision"),
            ("default -> errno ok", Filter, 18, "`ok` is not an error"),
            ("default -> maybe", Server, 12, "unknown decision"),
            ("default -> trap", Server, 12, FILTER_ONLY_DECISION),
            ("default -> clamp x3 48", Filter, 12, SERVER_ONLY_DECISION),
            (
                "poll -> default",
                Filter,
                9,
                "unknown decision",
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
                "expected `when`, `bytes`, `on`, `label`, `badge` or `->`",
            ),
            (
                "debug_print bytes prefix \"\u{e9}\u{e9}\" within 1 -> allow",
                Filter,
                38,
                "`within` is shorter than the pattern",
            ),
        ];
        for &(line, rule_use, column, message) in cases {
            let text = format!("# header\n* -> allow\n{line}\ndefault -> kill\n");
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
        let full = format!("default -> kill\n{}", "* -> allow\n".repeat(MAX_RULES));
        assert_eq!(filter_description(&full).unwrap().rules.len(), MAX_RULES);
        let over = format!("{full}  yield -> kill\n");
        assert_eq!(
            filter_description(&over),
            Err(error(
                MAX_RULES + 2,
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
                    poll -> notify\n\
                    default -> allow\n";
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
        let text = "default -> errno would_block\n\
                    call on endpoint label == 2 badge == 7 when x4 & 0xff == 0x12 \
                    when w9 & 0xf0 >= 0x30 when pc < 0x40_0000 bytes contains \"ok\" within 32 -> trap\n\
                    * -> log\n";
        let d = filter_description(text).unwrap();
        let call = &d.rules[0];
        assert_eq!(call.syscall, Some(Syscall::Call.number()));
        assert_eq!(call.object_type, Some(CapType::Endpoint));
        assert_eq!((call.label, call.badge), (Some(2), Some(7)));
        assert_eq!(
            call.args[..],
            [
                arg(4, 0xff, ArgOp::Eq, 0x12),
                word(9, 0xf0, ArgOp::Ge, 0x30),
                ArgMatch {
                    operand: Operand::Pc,
                    mask: u64::MAX,
                    op: ArgOp::Lt,
                    value: 0x40_0000
                },
            ]
        );
        assert_eq!(
            call.bytes,
            Some(BytesMatch::new(BytesOp::Contains, b"ok", 32).unwrap())
        );
        assert_eq!(call.action, Action::Trap);
        assert_eq!(d.rules[1], Rule::new(Action::Log));
        assert_eq!(d.default, Action::errno(ErrorCode::WouldBlock));
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let bytes = encode(&d, &mut buffer).unwrap();
        assert_eq!(decode(bytes), Ok(d));
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
            "w0",
            "w6",
            "w63",
            "w64",
            "pc",
            "bytes",
            "bytes",
            "prefix",
            "contains",
            "within",
            "3",
            "\"a b\"",
            "\"#->\\\"\"",
            "\"\\x4g\"",
            "\"\\x41\\n\"",
            "\"unterminated",
            "\"\"",
            "\"é\"x",
            "\\",
            "0x5341",
            "0x534",
            "default",
            "default",
        ];
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
        let (mut rules, mut errors, mut compiled) = (0, 0, 0);
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
                    Ok(Some(Line::Rule(TextRule { decision, .. })))
                    | Ok(Some(Line::Default(TextDefault { decision, .. }))) => {
                        rules += 1;
                        assert!(decision.is_valid_for(rule_use));
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
            for text in [line.clone(), format!("{line}\ndefault -> log")] {
                if let Ok(d) = filter_description(&text) {
                    compiled += 1;
                    assert!(encode(&d, &mut buffer).is_ok(), "{text}");
                }
            }
        }
        assert!(
            rules > 0 && errors > 0 && compiled > 0,
            "{rules} rules, {errors} errors, {compiled} compiled"
        );
    }

    #[test]
    fn policy_errors_have_messages() {
        assert_eq!(PolicyError::BadLabel.describe(), "label wider than 55 bits");
    }
}
