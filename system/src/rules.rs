//! Rule text: a filter's rules (compiled to an
//! `abi::policy::FilterDescription`) and a policy server's rules file
//! (checked only; the server reads it at run time).
//!
//! One rule per line, `#` starts a comment (`docs/policy.md`):
//!
//! ```text
//! <syscall|*> [when <xN> <op> <value>]... -> <decision>
//! ```
//!
//! A filter's decisions: `allow`, `errno NAME`, `kill`, `trap`, `notify`,
//! `log`. A server's: `allow`, `errno NAME`, `kill`, `emulate X0 X8`,
//! `clamp xN MAX`.

use abi::policy::{Action, ArgMatch, ArgOp, FilterDescription, Rule, MAX_ARGS_PER_RULE};
use abi::{ErrorCode, Syscall};

/// What rule text is for: the two grammars differ only in their
/// decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleUse {
    /// A filter the kernel runs.
    Filter,
    /// A policy server's rules file.
    Server,
}

/// Where rule text is wrong (1-based line and column within the text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// Line in the text.
    pub line: usize,
    /// Column in the line, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

// abi::rules replaces this: until the shared grammar lands in `abi`, this
// small parser of the current grammar stands in, behind this one
// function, so the swap is made here and nowhere else.
/// Compiles `text`: for a filter, its description (`Some`); for a
/// server's rules file, `None` once it is checked.
pub fn compile_rules(text: &str, usage: RuleUse) -> Result<Option<FilterDescription>, RuleError> {
    let mut description = FilterDescription::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split('#').next().unwrap_or("");
        let words = words(content);
        if words.is_empty() {
            continue;
        }
        let end_column = content.chars().count() + 1;
        let rule =
            parse_rule(&words, end_column, usage).map_err(|(column, message)| RuleError {
                line,
                column,
                message,
            })?;
        if let Some(rule) = rule {
            description.push(rule).map_err(|_| RuleError {
                line,
                column: words[0].0,
                message: format!("more than {} rules", abi::policy::MAX_RULES),
            })?;
        }
    }
    Ok((usage == RuleUse::Filter).then_some(description))
}

/// The words of a line, each with its 1-based column.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (column, (byte, c)) in line.char_indices().enumerate() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some((column + 1, byte)),
            (true, Some((col, from))) => {
                out.push((col, &line[from..byte]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((col, from)) = start {
        out.push((col, &line[from..]));
    }
    out
}

type Failure = (usize, String);

/// One rule; `None` for a server's rule (checked, not kept).
fn parse_rule(
    words: &[(usize, &str)],
    end_column: usize,
    usage: RuleUse,
) -> Result<Option<Rule>, Failure> {
    let arrow = words.iter().position(|(_, w)| *w == "->").ok_or((
        words[0].0,
        "no `->` between the match and the decision".into(),
    ))?;
    let (matcher, decision) = (&words[..arrow], &words[arrow + 1..]);
    let after_arrow = words[arrow].0 + 2;
    let (column, name) = *matcher.first().ok_or((
        words[arrow].0,
        "no syscall name (or `*`) before `->`".to_string(),
    ))?;
    let mut rule = Rule::new(Action::Allow);
    if name != "*" {
        let syscall = Syscall::ALL
            .iter()
            .find(|s| s.name() == name)
            .ok_or((column, format!("unknown syscall {name:?}")))?;
        rule.syscall = Some(syscall.number());
    }
    let mut rest = matcher[1..].iter();
    while let Some(&(column, word)) = rest.next() {
        if word != "when" {
            return Err((column, format!("expected `when`, found {word:?}")));
        }
        let mut next = |what: &str| {
            rest.next()
                .copied()
                .ok_or((words[arrow].0, format!("`when` without {what}")))
        };
        let (rc, register_word) = next("a register")?;
        let (oc, op_word) = next("an operator")?;
        let (vc, value_word) = next("a value")?;
        let register = register(register_word, 0).map_err(|m| (rc, m))?;
        let op = match op_word {
            "==" => ArgOp::Eq,
            "!=" => ArgOp::Ne,
            "<" => ArgOp::Lt,
            "<=" => ArgOp::Le,
            ">" => ArgOp::Gt,
            ">=" => ArgOp::Ge,
            _ => return Err((oc, format!("unknown operator {op_word:?}"))),
        };
        let value = number(value_word).map_err(|m| (vc, m))?;
        rule.push_arg(ArgMatch {
            register,
            mask: u64::MAX,
            op,
            value,
        })
        .map_err(|_| (column, format!("more than {MAX_ARGS_PER_RULE} conditions")))?;
    }
    let (column, verb) = *decision
        .first()
        .ok_or((after_arrow, "no decision after `->`".to_string()))?;
    let argument = |i: usize, what: &str| {
        decision
            .get(i)
            .copied()
            .ok_or((end_column, format!("`{verb}` needs {what}")))
    };
    let (action, used) = match (verb, usage) {
        ("allow", _) => (Action::Allow, 1),
        ("kill", _) => (Action::Kill, 1),
        ("errno", _) => {
            let (c, name) = argument(1, "an error name")?;
            match ErrorCode::from_name(name) {
                Some(ErrorCode::Ok) | None => {
                    return Err((c, format!("{name:?} is not an error name")))
                }
                Some(code) => (Action::errno(code), 2),
            }
        }
        ("trap", RuleUse::Filter) => (Action::Trap, 1),
        ("notify", RuleUse::Filter) => (Action::Notify, 1),
        ("log", RuleUse::Filter) => (Action::Log, 1),
        ("emulate", RuleUse::Server) => {
            for i in [1, 2] {
                let (c, w) = argument(i, "x0 and x8")?;
                number(w).map_err(|m| (c, m))?;
            }
            (Action::Allow, 3)
        }
        ("clamp", RuleUse::Server) => {
            let (rc, r) = argument(1, "a register and a maximum")?;
            register(r, 2).map_err(|m| (rc, m))?;
            let (mc, m) = argument(2, "a register and a maximum")?;
            number(m).map_err(|m| (mc, m))?;
            (Action::Allow, 3)
        }
        _ => {
            let known = match usage {
                RuleUse::Filter => "allow, errno NAME, kill, trap, notify, log",
                RuleUse::Server => "allow, errno NAME, kill, emulate X0 X8, clamp xN MAX",
            };
            return Err((
                column,
                format!("unknown decision {verb:?} (known: {known})"),
            ));
        }
    };
    if let Some(&(c, w)) = decision.get(used) {
        return Err((c, format!("{w:?} after the decision")));
    }
    rule.action = action;
    Ok((usage == RuleUse::Filter).then_some(rule))
}

/// `xN` with `lowest <= N <= 7`.
fn register(word: &str, lowest: u8) -> Result<u8, String> {
    let n: u8 = word
        .strip_prefix('x')
        .and_then(|n| n.parse().ok())
        .ok_or(format!("{word:?} is not a register (x0..x7)"))?;
    if (lowest..=7).contains(&n) {
        Ok(n)
    } else {
        Err(format!("register {word} is out of range (x{lowest}..x7)"))
    }
}

/// Decimal or `0x` hexadecimal.
fn number(word: &str) -> Result<u64, String> {
    match word.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => word.parse(),
    }
    .map_err(|_| format!("{word:?} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_compiles_to_the_abi_description() {
        let text = "# comment\n\
                    debug_print when x3 <= 0x40 -> allow\n\
                    call -> notify\n\
                    * -> errno denied\n";
        let description = compile_rules(text, RuleUse::Filter).unwrap().unwrap();
        assert_eq!(description.rules.len(), 3);
        let first = &description.rules[0];
        assert_eq!(first.syscall, Some(Syscall::DebugPrint.number()));
        assert_eq!(first.args[0].register, 3);
        assert_eq!(first.args[0].op, ArgOp::Le);
        assert_eq!(first.args[0].value, 0x40);
        assert_eq!(description.rules[1].action, Action::Notify);
        assert_eq!(
            description.rules[2].action,
            Action::errno(ErrorCode::Denied)
        );
        let mut buffer = [0u8; abi::policy::MAX_DESCRIPTION_BYTES];
        let bytes = abi::policy::encode(&description, &mut buffer).unwrap();
        assert_eq!(abi::policy::decode(bytes).unwrap(), description);
    }

    #[test]
    fn a_server_file_is_checked_with_its_own_decisions() {
        let text = "debug_print when x3 > 48 -> clamp x3 48\npoll -> emulate 0 0x77\n";
        assert_eq!(compile_rules(text, RuleUse::Server), Ok(None));
        let error = compile_rules("poll -> notify", RuleUse::Server).unwrap_err();
        assert_eq!((error.line, error.column), (1, 9));
        let error = compile_rules("poll -> clamp x3 48", RuleUse::Filter).unwrap_err();
        assert_eq!((error.line, error.column), (1, 9));
    }

    #[test]
    fn errors_name_the_word() {
        let at = |text: &str| {
            let e = compile_rules(text, RuleUse::Filter).unwrap_err();
            (e.line, e.column)
        };
        assert_eq!(at("\n  frob -> allow"), (2, 3));
        assert_eq!(at("poll when x9 == 1 -> allow"), (1, 11));
        assert_eq!(at("poll when x2 =~ 1 -> allow"), (1, 14));
        assert_eq!(at("poll when x2 == zz -> allow"), (1, 17));
        assert_eq!(at("poll -> errno nonsense"), (1, 15));
        assert_eq!(at("poll -> allow now"), (1, 15));
        assert_eq!(at("poll allow"), (1, 1));
        assert_eq!(at("poll ->"), (1, 8));
    }
}
