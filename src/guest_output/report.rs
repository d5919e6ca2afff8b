//! Everything the guest reported in one run, gathered from its output.

use super::line::{GuestLine, Summary, TestResult};

/// A kernel panic: the `KERNEL PANIC` line and the decoded report after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PanicReport {
    /// The `KERNEL PANIC ...` line.
    pub headline: String,
    /// Every line printed after it (the decoded report).
    pub details: Vec<String>,
}

/// What the guest said, in protocol terms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuestReport {
    /// The first `Portcullis ...` banner line.
    pub banner: Option<String>,
    /// The `TAP version N` number.
    pub tap_version: Option<u32>,
    /// Every `1..N` plan line's count, in order (one is expected).
    pub plans: Vec<usize>,
    /// Every `ok` / `not ok` line, in order.
    pub results: Vec<TestResult>,
    /// The closing summary line.
    pub summary: Option<Summary>,
    /// The first kernel panic, if the kernel panicked.
    pub panic: Option<PanicReport>,
}

impl GuestReport {
    /// Reads the guest's UART output.
    pub fn parse(output: &str) -> GuestReport {
        let mut report = GuestReport::default();
        for raw in output.lines() {
            if let Some(panic) = report.panic.as_mut() {
                panic.details.push(raw.trim_end().to_string());
                continue;
            }
            match GuestLine::classify(raw) {
                GuestLine::Banner(line) => {
                    report.banner.get_or_insert_with(|| line.to_string());
                }
                GuestLine::TapVersion(version) => {
                    report.tap_version.get_or_insert(version);
                }
                GuestLine::Plan(count) => report.plans.push(count),
                GuestLine::Result(result) => report.results.push(result),
                GuestLine::Summary(summary) => report.summary = Some(summary),
                GuestLine::Panic(line) => {
                    report.panic = Some(PanicReport {
                        headline: line.to_string(),
                        details: Vec::new(),
                    });
                }
                GuestLine::Diagnostic(_) | GuestLine::Other(_) => {}
            }
        }
        report
    }

    /// The results that fail the run (`not ok` without TODO).
    pub fn failures(&self) -> impl Iterator<Item = &TestResult> {
        self.results.iter().filter(|result| result.is_failure())
    }

    /// How many results passed and failed, counted from the result lines
    /// the same way as the summary counts them (TODO failures count as
    /// neither).
    pub fn counted(&self) -> Summary {
        let passed = self.results.iter().filter(|r| r.ok).count();
        Summary {
            passed,
            failed: self.failures().count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_banner_plan_results_and_summary() {
        let output = "Portcullis 0.1.0 virt EL1\r\nTAP version 13\r\n1..2\r\nok 1 - a\r\n# note\r\nnot ok 2 - b\r\n# portcullis: 1 passed, 1 failed\r\n";
        let report = GuestReport::parse(output);
        assert_eq!(report.banner.as_deref(), Some("Portcullis 0.1.0 virt EL1"));
        assert_eq!(report.tap_version, Some(13));
        assert_eq!(report.plans, vec![2]);
        assert_eq!(report.results.len(), 2);
        assert_eq!(
            report.counted(),
            Summary {
                passed: 1,
                failed: 1
            }
        );
        assert_eq!(report.summary, Some(report.counted()));
        assert_eq!(report.panic, None);
    }

    #[test]
    fn everything_after_a_panic_is_its_report() {
        let output =
            "1..3\nok 1 - a\nKERNEL PANIC: data abort\n  ESR_EL1 0x96000045\nok 2 - not a result\n";
        let report = GuestReport::parse(output);
        let panic = report.panic.expect("panic seen");
        assert_eq!(panic.headline, "KERNEL PANIC: data abort");
        assert_eq!(
            panic.details,
            vec!["  ESR_EL1 0x96000045", "ok 2 - not a result"]
        );
        assert_eq!(report.results.len(), 1);
    }
}
