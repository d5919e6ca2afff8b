//! `docs/bench/results.svg`: a horizontal bar chart written as SVG text.
//!
//! Our medians and the Linux peer's figures in two colours, on a
//! logarithmic axis (the values run from a handful of instructions to tens
//! of thousands). Rows with neither a result nor a peer are left out: the
//! results page lists them.

use std::fmt::Write as _;

use super::doc_rows::{doc_rows, DocRow};
use super::docs_markdown::DocSetup;
use super::result::BenchResult;

const WIDTH: f64 = 1280.0;
const PLOT_LEFT: f64 = 330.0;
/// Leaves room on the right for the longest bar label.
const PLOT_RIGHT: f64 = 790.0;
const BAR_HEIGHT: f64 = 13.0;
const BAR_GAP: f64 = 2.0;
const GROUP_GAP: f64 = 12.0;
const OURS: &str = "#1f6fb4";
const LINUX: &str = "#e8832a";
/// Longest line of the QEMU command under the title, in characters.
const COMMAND_LINE_CHARS: usize = 190;

/// One bar: a value and its label.
struct Bar {
    value: f64,
    label: String,
    colour: &'static str,
}

/// The chart for `results`.
pub fn results_svg(results: &[BenchResult], setup: &DocSetup) -> String {
    let rows = doc_rows(results);
    let groups: Vec<(&DocRow<'_>, Vec<Bar>)> = rows
        .iter()
        .map(|row| (row, bars(row)))
        .filter(|(_, bars)| !bars.is_empty())
        .collect();
    let scale = LogScale::covering(
        groups
            .iter()
            .flat_map(|(_, bars)| bars.iter().map(|b| b.value)),
    );

    let command_lines = wrap(&setup.qemu_command, COMMAND_LINE_CHARS);
    let plot_top = 78.0 + 14.0 * command_lines.len() as f64;
    let plot_height: f64 = groups
        .iter()
        .map(|(_, bars)| bars.len() as f64 * (BAR_HEIGHT + BAR_GAP) + GROUP_GAP)
        .sum();
    let height = plot_top + plot_height + 40.0;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r#"<text x="16" y="24" font-size="16" font-weight="bold">Portcullis vs Linux 6.1: guest {} per operation (median; log scale)</text>"#,
        setup.unit
    );
    for (index, line) in command_lines.iter().enumerate() {
        let _ = writeln!(
            svg,
            r##"<text x="16" y="{}" font-family="DejaVu Sans Mono, monospace" font-size="10" fill="#444444">{}</text>"##,
            42.0 + 13.0 * index as f64,
            escape(line)
        );
    }
    legend(&mut svg, plot_top - 22.0);
    axis(&mut svg, &scale, plot_top, plot_top + plot_height);

    let mut y = plot_top + GROUP_GAP / 2.0;
    for (row, bars) in &groups {
        let group_height = bars.len() as f64 * (BAR_HEIGHT + BAR_GAP) - BAR_GAP;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-family="DejaVu Sans Mono, monospace">{}</text>"#,
            PLOT_LEFT - 8.0,
            y + group_height / 2.0 + 4.0,
            escape(row.name)
        );
        for bar in bars {
            let end = scale.x(bar.value);
            let _ = writeln!(
                svg,
                r#"<rect x="{PLOT_LEFT:.1}" y="{y:.1}" width="{:.1}" height="{BAR_HEIGHT:.1}" fill="{}"/>"#,
                (end - PLOT_LEFT).max(1.0),
                bar.colour
            );
            let _ = writeln!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
                end + 4.0,
                y + BAR_HEIGHT - 2.5,
                escape(&bar.label)
            );
            y += BAR_HEIGHT + BAR_GAP;
        }
        y += GROUP_GAP - BAR_GAP;
    }
    svg.push_str("</svg>\n");
    svg
}

fn bars(row: &DocRow<'_>) -> Vec<Bar> {
    let mut bars = Vec::new();
    if let Some(result) = row.result {
        bars.push(Bar {
            value: result.median as f64,
            label: result.median.to_string(),
            colour: OURS,
        });
    }
    if let Some(peer) = row.linux.first() {
        let boot = peer
            .boot
            .map(|boot| format!(" ({boot})"))
            .unwrap_or_default();
        bars.push(Bar {
            value: peer.instructions,
            label: format!(
                "{:.1} Linux {}{boot}{}",
                peer.instructions,
                peer.row,
                if row.result.is_none() {
                    " (ours: not yet measured)"
                } else {
                    ""
                }
            ),
            colour: LINUX,
        });
    }
    bars
}

fn legend(svg: &mut String, y: f64) {
    let entries = [
        (OURS, "Portcullis (median)"),
        (LINUX, "Linux 6.1 peer, same kind of work (icount-a)"),
    ];
    let mut x = PLOT_LEFT;
    for (colour, text) in entries {
        let _ = writeln!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="14" height="10" fill="{colour}"/><text x="{:.1}" y="{y:.1}">{text}</text>"#,
            y - 9.0,
            x + 19.0
        );
        x += 19.0 + 7.0 * text.len() as f64 + 24.0;
    }
}

/// Gridlines at every power of ten (labelled) and the 2..9 multiples
/// between them (light), so a value can be read off the log axis.
fn axis(svg: &mut String, scale: &LogScale, top: f64, bottom: f64) {
    for exponent in scale.low_exponent..=scale.high_exponent {
        let decade = 10f64.powi(exponent);
        let x = scale.x(decade);
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#999999" stroke-width="1"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#333333">{}</text>"##,
            bottom + 16.0,
            decade_label(exponent)
        );
        if exponent < scale.high_exponent {
            for multiple in 2..10 {
                let x = scale.x(decade * f64::from(multiple));
                let _ = writeln!(
                    svg,
                    r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#e4e4e4" stroke-width="1"/>"##
                );
            }
        }
    }
}

fn decade_label(exponent: i32) -> String {
    match exponent {
        e if e < 3 => 10u64.pow(e.max(0) as u32).to_string(),
        e if e < 6 => format!("{}k", 10u64.pow((e - 3) as u32)),
        e => format!("{}M", 10u64.pow((e - 6).max(0) as u32)),
    }
}

/// A log10 axis from one power of ten to another, mapped onto the plot.
struct LogScale {
    low_exponent: i32,
    high_exponent: i32,
}

impl LogScale {
    /// The smallest span of whole decades that holds every value (at
    /// least 1..10; values below 1 are drawn at 1).
    fn covering(values: impl Iterator<Item = f64>) -> LogScale {
        let (mut low, mut high) = (i32::MAX, i32::MIN);
        for value in values.filter(|value| *value >= 1.0) {
            let exponent = value.log10();
            low = low.min(exponent.floor() as i32);
            high = high.max(exponent.ceil() as i32);
        }
        if low > high {
            return LogScale {
                low_exponent: 0,
                high_exponent: 5,
            };
        }
        LogScale {
            low_exponent: low.max(0),
            high_exponent: high.max(low.max(0) + 1),
        }
    }

    fn x(&self, value: f64) -> f64 {
        let span = f64::from(self.high_exponent - self.low_exponent);
        let position = (value.max(1.0).log10() - f64::from(self.low_exponent)) / span;
        PLOT_LEFT + position.clamp(0.0, 1.0) * (PLOT_RIGHT - PLOT_LEFT)
    }
}

/// Splits `text` at spaces into lines of at most `width` characters (a
/// longer word gets a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::Unit;

    fn result(name: &str, median: u64) -> BenchResult {
        BenchResult::flat(name, median)
    }

    fn setup() -> DocSetup {
        DocSetup {
            unit: Unit::Instructions,
            qemu_command: "qemu-system-aarch64 -icount shift=0 -append 'a&b'".into(),
        }
    }

    #[test]
    fn draws_both_colours_a_legend_and_a_log_axis() {
        let svg = results_svg(
            &[result("floor_svc_eret", 6), result("null_syscall", 31)],
            &setup(),
        );
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("instructions per operation"));
        assert!(svg.contains("-icount shift=0 -append 'a&amp;b'"));
        assert!(svg.contains(OURS) && svg.contains(LINUX));
        assert!(svg.contains("Portcullis (median)"));
        assert!(svg.contains(">509.2 Linux getpid<"));
        // The Linux peers reach past 10k, so the axis runs 1 .. 100k.
        for label in [">1<", ">10<", ">100<", ">1k<", ">10k<", ">100k<"] {
            assert!(svg.contains(label), "axis label {label} missing");
        }
        // Rows with neither a result nor a peer are not drawn.
        assert!(!svg.contains(">ipc_call_one_way<"));
        assert!(svg.contains(">ipc_round_trip<"));
        assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
    }

    #[test]
    fn log_scale_places_decades_evenly() {
        let scale = LogScale::covering([6.0, 25_000.0].into_iter());
        assert_eq!((scale.low_exponent, scale.high_exponent), (0, 5));
        let step = (PLOT_RIGHT - PLOT_LEFT) / 5.0;
        assert!((scale.x(10.0) - (PLOT_LEFT + step)).abs() < 1e-9);
        assert!((scale.x(1000.0) - (PLOT_LEFT + 3.0 * step)).abs() < 1e-9);
        assert_eq!(scale.x(0.0), PLOT_LEFT);
        let narrow = LogScale::covering([20.0, 30.0].into_iter());
        assert_eq!((narrow.low_exponent, narrow.high_exponent), (1, 2));
    }

    #[test]
    fn wraps_long_commands_at_spaces() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("averylongword x", 4), ["averylongword", "x"]);
        assert_eq!(decade_label(4), "10k");
        assert_eq!(decade_label(6), "1M");
    }
}
