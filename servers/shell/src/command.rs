//! The shell's commands, parsed from a typed line. A wrong line is one
//! [`Mistake`], which the shell prints on one line; nothing else happens.

/// One command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    /// Nothing typed.
    Empty,
    /// `help`.
    Help,
    /// `ps`: every thread.
    Ps,
    /// `caps TASK`: a task's capabilities.
    Caps(&'a str),
    /// `trace TASK on` (`true`) or `off`.
    Trace(&'a str, bool),
    /// `policy TASK RULES`: rules separated by `;`.
    Policy(&'a str, &'a str),
    /// `audit`, `audit stats` or `audit tail`.
    Audit(AuditView),
    /// `kill TASK`.
    Kill(&'a str),
    /// `restart TASK`.
    Restart(&'a str),
    /// `export on` (`true`) or `off`.
    Export(bool),
    /// `exit [STATUS]`: the shell ends, and with it its system.
    Exit(i32),
}

/// What `audit` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditView {
    /// The ring's counters.
    Stats,
    /// New records as they come, until Ctrl-C.
    Tail,
}

/// Why a line is not a command: printed as `shell: MESSAGE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mistake<'a> {
    /// A word no command is.
    Unknown(&'a str),
    /// A command used wrongly: its usage.
    Usage(&'static str),
}

impl core::fmt::Display for Mistake<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Mistake::Unknown(word) => write!(f, "unknown command `{word}` (try `help`)"),
            Mistake::Usage(usage) => write!(f, "usage: {usage}"),
        }
    }
}

/// Each command's usage and what it does, as `help` prints them.
pub const HELP: &[(&str, &str)] = &[
    ("help", "this list"),
    ("ps", "every thread: number, name, state, priority, CPU, confinement"),
    ("caps TASK", "the capabilities in TASK's CSpace"),
    ("trace TASK on|off", "strace-like lines of TASK's syscalls (Ctrl-C: back to the prompt, still traced)"),
    ("policy TASK RULES", "attach a filter to TASK: rules in the rule language, `;` between them, with a `default -> ...`"),
    ("audit [stats|tail]", "the audit ring's counters, or its records as they come (Ctrl-C stops)"),
    ("kill TASK", "take TASK down for good"),
    ("restart TASK", "rebuild TASK from the system description and start it"),
    ("export on|off", "trace lines and audit records as binary frames for `portcullis decode`"),
    ("exit [STATUS]", "end the shell, and with it the system (status 0 unless given)"),
];

/// Parses one line.
pub fn parse(line: &str) -> Result<Command<'_>, Mistake<'_>> {
    let line = line.trim();
    let (word, rest) = match line.split_once(' ') {
        Some((word, rest)) => (word, rest.trim()),
        None => (line, ""),
    };
    let mut args = rest.split_whitespace();
    let one = |usage| match (args.clone().next(), args.clone().nth(1)) {
        (Some(task), None) => Ok(task),
        _ => Err(Mistake::Usage(usage)),
    };
    let switch = |value: Option<&str>, usage| match value {
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        _ => Err(Mistake::Usage(usage)),
    };
    Ok(match word {
        "" => Command::Empty,
        "help" | "?" => Command::Help,
        "ps" if rest.is_empty() => Command::Ps,
        "ps" => return Err(Mistake::Usage("ps")),
        "caps" => Command::Caps(one("caps TASK")?),
        "kill" => Command::Kill(one("kill TASK")?),
        "restart" => Command::Restart(one("restart TASK")?),
        "trace" => {
            const USAGE: &str = "trace TASK on|off";
            let task = args.next().ok_or(Mistake::Usage(USAGE))?;
            let on = switch(args.next(), USAGE)?;
            if args.next().is_some() {
                return Err(Mistake::Usage(USAGE));
            }
            Command::Trace(task, on)
        }
        "policy" => {
            const USAGE: &str =
                "policy TASK RULES (e.g. policy ticker signal -> errno denied; default -> allow)";
            let (task, rules) = rest.split_once(' ').ok_or(Mistake::Usage(USAGE))?;
            let rules = rules.trim();
            if rules.is_empty() {
                return Err(Mistake::Usage(USAGE));
            }
            Command::Policy(task, rules)
        }
        "audit" => match (args.next(), args.next()) {
            (None | Some("stats"), None) => Command::Audit(AuditView::Stats),
            (Some("tail"), None) => Command::Audit(AuditView::Tail),
            _ => return Err(Mistake::Usage("audit [stats|tail]")),
        },
        "export" => {
            const USAGE: &str = "export on|off";
            let on = switch(args.next(), USAGE)?;
            if args.next().is_some() {
                return Err(Mistake::Usage(USAGE));
            }
            Command::Export(on)
        }
        "exit" => match (args.next(), args.next()) {
            (None, None) => Command::Exit(0),
            (Some(status), None) => Command::Exit(
                status
                    .parse()
                    .map_err(|_| Mistake::Usage("exit [STATUS]"))?,
            ),
            _ => return Err(Mistake::Usage("exit [STATUS]")),
        },
        other => return Err(Mistake::Unknown(other)),
    })
}

/// A filter's rules as the rule language has them: one a line, where the
/// shell's line separates them with `;` (a `;` inside a quoted pattern
/// stays). Writes the text and returns where each of its lines starts in
/// the shell's line, for errors to point at the column typed; `None` if
/// it does not fit.
pub fn rule_lines<const N: usize>(
    rules: &str,
    text: &mut heapless::String<N>,
) -> Option<heapless::Vec<usize, 64>> {
    let mut starts = heapless::Vec::new();
    starts.push(0).ok()?;
    let mut quoted = false;
    for (i, c) in rules.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => {
                text.push('\n').ok()?;
                starts.push(i + 1).ok()?;
                continue;
            }
            _ => {}
        }
        text.push(c).ok()?;
    }
    Some(starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_parses() {
        assert_eq!(parse("  "), Ok(Command::Empty));
        assert_eq!(parse("help"), Ok(Command::Help));
        assert_eq!(parse("ps"), Ok(Command::Ps));
        assert_eq!(parse("caps ticker"), Ok(Command::Caps("ticker")));
        assert_eq!(parse("trace ticker on"), Ok(Command::Trace("ticker", true)));
        assert_eq!(
            parse("trace  ticker  off "),
            Ok(Command::Trace("ticker", false))
        );
        assert_eq!(
            parse("policy ticker signal -> errno denied; default -> allow"),
            Ok(Command::Policy(
                "ticker",
                "signal -> errno denied; default -> allow"
            ))
        );
        assert_eq!(parse("audit"), Ok(Command::Audit(AuditView::Stats)));
        assert_eq!(parse("audit stats"), Ok(Command::Audit(AuditView::Stats)));
        assert_eq!(parse("audit tail"), Ok(Command::Audit(AuditView::Tail)));
        assert_eq!(parse("kill ticker"), Ok(Command::Kill("ticker")));
        assert_eq!(parse("restart ticker"), Ok(Command::Restart("ticker")));
        assert_eq!(parse("export on"), Ok(Command::Export(true)));
        assert_eq!(parse("exit"), Ok(Command::Exit(0)));
        assert_eq!(parse("exit 3"), Ok(Command::Exit(3)));
        assert!(matches!(parse("exit soon"), Err(Mistake::Usage(_))));
    }

    #[test]
    fn wrong_lines_are_one_mistake_each() {
        assert_eq!(parse("pss"), Err(Mistake::Unknown("pss")));
        assert_eq!(parse("ps x"), Err(Mistake::Usage("ps")));
        assert_eq!(parse("caps"), Err(Mistake::Usage("caps TASK")));
        assert_eq!(parse("caps a b"), Err(Mistake::Usage("caps TASK")));
        assert!(matches!(parse("trace ticker"), Err(Mistake::Usage(_))));
        assert!(matches!(
            parse("trace ticker maybe"),
            Err(Mistake::Usage(_))
        ));
        assert!(matches!(parse("trace ticker on x"), Err(Mistake::Usage(_))));
        assert!(matches!(parse("policy ticker"), Err(Mistake::Usage(_))));
        assert!(matches!(parse("policy"), Err(Mistake::Usage(_))));
        assert!(matches!(parse("audit head"), Err(Mistake::Usage(_))));
        assert!(matches!(parse("export"), Err(Mistake::Usage(_))));
        let shown = format!("{}", parse("frobnicate now").unwrap_err());
        assert_eq!(shown, "unknown command `frobnicate` (try `help`)");
    }

    #[test]
    fn rules_are_split_at_semicolons_outside_quotes() {
        let mut text = heapless::String::<256>::new();
        let starts = rule_lines(
            r#"debug_print bytes contains "a;b" -> kill; default -> allow"#,
            &mut text,
        )
        .unwrap();
        assert_eq!(
            text.as_str(),
            "debug_print bytes contains \"a;b\" -> kill\n default -> allow"
        );
        assert_eq!(starts.as_slice(), &[0, 41]);
    }
}
