//! One line of guest output, classified by the Portcullis UART protocol.
//!
//! The protocol (see the crate docs): a banner `Portcullis ...`, TAP 13
//! (`TAP version 13`, `1..N`, `ok K - name`, `not ok K - name`, `# ...`
//! diagnostics), a closing `# portcullis: N passed, M failed`, and
//! `KERNEL PANIC ...` followed by a decoded report.

/// The start of the boot banner line.
pub const BANNER_PREFIX: &str = "Portcullis ";
/// The start of the line that announces a kernel panic.
pub const PANIC_PREFIX: &str = "KERNEL PANIC";
/// The start of the closing summary line.
pub const SUMMARY_PREFIX: &str = "# portcullis: ";

/// A TAP directive after `#` on a result line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `# SKIP reason`: the test did not run; it counts as passed.
    Skip(String),
    /// `# TODO reason`: a known failure; `not ok` does not fail the run.
    Todo(String),
}

/// One `ok` / `not ok` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestResult {
    /// `true` for `ok`, `false` for `not ok`.
    pub ok: bool,
    /// The test number, if the line gave one.
    pub number: Option<usize>,
    /// The description after the number (and the optional ` - `).
    pub name: String,
    /// A SKIP or TODO directive, if any.
    pub directive: Option<Directive>,
}

impl TestResult {
    /// Whether this result fails the run (`not ok` without TODO).
    pub fn is_failure(&self) -> bool {
        !self.ok && !matches!(self.directive, Some(Directive::Todo(_)))
    }
}

/// The closing `# portcullis: N passed, M failed` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Tests the guest says passed.
    pub passed: usize,
    /// Tests the guest says failed.
    pub failed: usize,
}

/// What one line of guest output is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuestLine<'a> {
    /// `Portcullis <version> ...`: the boot banner.
    Banner(&'a str),
    /// `TAP version N`.
    TapVersion(u32),
    /// `1..N`: the number of tests that will run.
    Plan(usize),
    /// `ok ...` or `not ok ...`.
    Result(TestResult),
    /// `# portcullis: N passed, M failed`.
    Summary(Summary),
    /// `KERNEL PANIC ...`: the first line of a panic report.
    Panic(&'a str),
    /// Any other `#` line.
    Diagnostic(&'a str),
    /// Anything else (demo output, kernel log lines).
    Other(&'a str),
}

impl<'a> GuestLine<'a> {
    /// Classifies one line (without its line terminator; a trailing `\r`
    /// from the UART is ignored).
    pub fn classify(raw: &'a str) -> GuestLine<'a> {
        let line = raw.trim_end();
        if line.starts_with(BANNER_PREFIX) {
            return GuestLine::Banner(line);
        }
        if line.starts_with(PANIC_PREFIX) {
            return GuestLine::Panic(line);
        }
        if let Some(summary) = parse_summary(line) {
            return GuestLine::Summary(summary);
        }
        if line.starts_with('#') {
            return GuestLine::Diagnostic(line);
        }
        if let Some(version) = line
            .strip_prefix("TAP version ")
            .and_then(|n| n.trim().parse().ok())
        {
            return GuestLine::TapVersion(version);
        }
        if let Some(count) = parse_plan(line) {
            return GuestLine::Plan(count);
        }
        if let Some(result) = parse_result(line) {
            return GuestLine::Result(result);
        }
        GuestLine::Other(line)
    }
}

/// `1..N`, optionally followed by ` # reason`.
/// The name of the project's test driver task (`systems/*.toml`): the
/// suite's TAP, summary and diagnostics are its lines, which the kernel
/// tags `[driver#N] ` like every thread's but the root's.
pub const DRIVER_TAG: &str = "[driver#";

/// `output` with the driver's tag taken off each of its lines (and every
/// other line as it was).
pub fn untag_driver_lines(output: &str) -> String {
    let mut untagged = String::with_capacity(output.len());
    for line in output.split_inclusive('\n') {
        untagged.push_str(untag_driver(line));
    }
    untagged
}

/// `line` without the driver's tag, if it has it.
fn untag_driver(line: &str) -> &str {
    let Some(rest) = line.strip_prefix(DRIVER_TAG) else {
        return line;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match rest[digits..].strip_prefix("] ") {
        Some(text) if digits > 0 => text,
        _ => line,
    }
}

fn parse_plan(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("1..")?;
    let count = rest.split('#').next()?.trim();
    count.parse().ok()
}

/// `# portcullis: N passed, M failed` (more `, K word` parts may follow).
fn parse_summary(line: &str) -> Option<Summary> {
    let mut parts = line.strip_prefix(SUMMARY_PREFIX)?.split(',').map(str::trim);
    let passed = count_of(parts.next()?, "passed")?;
    let failed = count_of(parts.next()?, "failed")?;
    Some(Summary { passed, failed })
}

fn count_of(part: &str, word: &str) -> Option<usize> {
    part.strip_suffix(word)?.trim().parse().ok()
}

/// `ok [N] [-] [description] [# SKIP|TODO reason]`, or the same with `not ok`.
fn parse_result(line: &str) -> Option<TestResult> {
    let (ok, rest) = if let Some(rest) = word_after(line, "not ok") {
        (false, rest)
    } else {
        (true, word_after(line, "ok")?)
    };
    let rest = rest.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let number = rest[..digits].parse().ok();
    let rest = rest[digits..].trim_start();
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    let (name, directive) = match rest
        .split_once(" # ")
        .or_else(|| rest.strip_prefix("# ").map(|d| ("", d)))
    {
        Some((name, directive)) => (name, parse_directive(directive)),
        None => (rest, None),
    };
    Some(TestResult {
        ok,
        number,
        name: name.trim().to_string(),
        directive,
    })
}

/// The text after `word` when `word` is the whole line or followed by a space.
fn word_after<'a>(line: &'a str, word: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(word)?;
    (rest.is_empty() || rest.starts_with(' ')).then_some(rest)
}

fn parse_directive(text: &str) -> Option<Directive> {
    let text = text.trim();
    let (keyword, reason) = text.split_once(' ').unwrap_or((text, ""));
    let reason = reason.trim().to_string();
    match keyword.to_ascii_uppercase().as_str() {
        "SKIP" => Some(Directive::Skip(reason)),
        "TODO" => Some(Directive::Todo(reason)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(line: &str) -> TestResult {
        match GuestLine::classify(line) {
            GuestLine::Result(result) => result,
            other => panic!("{line:?} classified as {other:?}"),
        }
    }

    #[test]
    fn only_the_drivers_tag_is_taken_off() {
        assert_eq!(
            GuestLine::classify("[app#3] ok 1 - forged"),
            GuestLine::Other("[app#3] ok 1 - forged")
        );
        assert_eq!(untag_driver_lines("[driver#] ok 1"), "[driver#] ok 1");
        assert_eq!(untag_driver_lines("[driver#12] 1..61"), "1..61");
        assert_eq!(
            untag_driver_lines("[driver#1] ok 1\n[app#2] hi\n[driver#1] partial"),
            "ok 1\n[app#2] hi\npartial"
        );
    }

    #[test]
    fn classifies_protocol_lines() {
        assert_eq!(
            GuestLine::classify("TAP version 13\r"),
            GuestLine::TapVersion(13)
        );
        assert_eq!(GuestLine::classify("1..12"), GuestLine::Plan(12));
        assert_eq!(GuestLine::classify("1..0 # no tests"), GuestLine::Plan(0));
        assert_eq!(
            GuestLine::classify("# portcullis: 11 passed, 1 failed"),
            GuestLine::Summary(Summary {
                passed: 11,
                failed: 1
            })
        );
        assert_eq!(
            GuestLine::classify("# ipc: call took 212 instructions"),
            GuestLine::Diagnostic("# ipc: call took 212 instructions")
        );
        assert_eq!(
            GuestLine::classify("Portcullis 0.1.0 on virt, entered at EL1\r"),
            GuestLine::Banner("Portcullis 0.1.0 on virt, entered at EL1")
        );
        assert_eq!(
            GuestLine::classify("KERNEL PANIC at microkernel/src/lib.rs:10"),
            GuestLine::Panic("KERNEL PANIC at microkernel/src/lib.rs:10")
        );
        assert_eq!(
            GuestLine::classify("okay then"),
            GuestLine::Other("okay then")
        );
        assert_eq!(GuestLine::classify("1..x"), GuestLine::Other("1..x"));
    }

    #[test]
    fn reads_ok_and_not_ok_lines() {
        assert_eq!(
            result("ok 1 - ipc: call and reply"),
            TestResult {
                ok: true,
                number: Some(1),
                name: "ipc: call and reply".into(),
                directive: None
            }
        );
        let failed = result("not ok 7 - caps: revoke\r");
        assert!(!failed.ok && failed.is_failure());
        assert_eq!(
            (failed.number, failed.name.as_str()),
            (Some(7), "caps: revoke")
        );
        assert_eq!(result("ok").number, None);
        assert_eq!(result("ok 3 no dash").name, "no dash");
    }

    #[test]
    fn reads_skip_and_todo_directives() {
        let skipped = result("ok 2 - pmu # SKIP no PMU on this board");
        assert_eq!(
            skipped.directive,
            Some(Directive::Skip("no PMU on this board".into()))
        );
        let todo = result("not ok 3 - smp # TODO secondaries");
        assert!(!todo.is_failure());
        assert_eq!(result("ok 4 - a # b").directive, None);
    }

    #[test]
    fn summary_may_carry_more_counts() {
        assert_eq!(
            GuestLine::classify("# portcullis: 3 passed, 0 failed, 1 skipped"),
            GuestLine::Summary(Summary {
                passed: 3,
                failed: 0
            })
        );
        assert!(matches!(
            GuestLine::classify("# portcullis: booted"),
            GuestLine::Diagnostic(_)
        ));
    }
}
