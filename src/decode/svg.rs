//! `--format svg`: the timeline drawn by hand, for a reader with no trace
//! viewer at hand.
//!
//! One lane per thread (`<g class="lane">`, labelled `name#N`, by thread
//! number); each call a bar from its entry stop to its end (dark: it
//! returned; light: no exit stop), each policy decision a red diamond on
//! its thread's lane, each audit drop an orange line across every lane.
//! Every mark has a `<title>`, which a browser shows on hover. Under the
//! lanes, a time axis with labelled ticks (1, 2 or 5 times a power of ten)
//! counts from the first event. Names are escaped, so the file is well
//! formed XML whatever a thread is called.

use std::fmt::Write as _;

use super::calls::CallEnd;
use super::capture::{arguments_text, result_text, syscall_name, verdict_text, Capture};
use super::timeline::Timeline;

const WIDTH: f64 = 1200.0;
const LABEL_LEFT: f64 = 10.0;
const PLOT_LEFT: f64 = 220.0;
const PLOT_RIGHT: f64 = 1180.0;
const TOP: f64 = 56.0;
const LANE_HEIGHT: f64 = 26.0;
const BAR_HEIGHT: f64 = 14.0;
const AXIS_HEIGHT: f64 = 44.0;
/// Narrowest bar: a call shorter than a pixel still shows.
const MIN_BAR: f64 = 2.0;
const RETURNED: &str = "#1f6fb4";
const NO_EXIT: &str = "#9cc3e6";
const DECISION: &str = "#c0392b";
const DROP: &str = "#e8832a";
/// About this many ticks on the axis.
const AXIS_TICKS: f64 = 6.0;

/// The log's timeline as an SVG document.
pub fn render(capture: &Capture) -> String {
    draw(&Timeline::of(capture))
}

/// Draws `timeline`.
pub fn draw(timeline: &Timeline) -> String {
    let lanes = timeline.threads.len().max(1) as f64;
    let plot_bottom = TOP + lanes * LANE_HEIGHT;
    let height = plot_bottom + AXIS_HEIGHT;
    let scale = Scale::of(timeline);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"monospace\" font-size=\"12\">"
    );
    svg.push_str("<title>Portcullis timeline</title>\n");
    let _ = writeln!(
        svg,
        "<rect width=\"{WIDTH}\" height=\"{height}\" fill=\"white\"/>"
    );
    let clock = if timeline.assumed {
        ", no Clock frame: 62.5 MHz assumed"
    } else {
        ""
    };
    let _ = writeln!(
        svg,
        "<text x=\"{LABEL_LEFT}\" y=\"20\" font-size=\"14\">Portcullis: {} calls, {} policy decisions, {} audit drops{clock}</text>",
        timeline.spans.len(),
        timeline.decisions.len(),
        timeline.drops.len()
    );
    let _ = writeln!(
        svg,
        "<text x=\"{LABEL_LEFT}\" y=\"40\" fill=\"#555\">bars: calls, entry to exit (light: no exit stop); \
         diamonds: policy decisions; orange lines: audit records dropped</text>"
    );
    for (index, (thread, label)) in timeline.threads.iter().enumerate() {
        let top = TOP + index as f64 * LANE_HEIGHT;
        let middle = top + LANE_HEIGHT / 2.0;
        let shade = if index % 2 == 0 { "#f3f3f3" } else { "white" };
        let _ = writeln!(svg, "<g class=\"lane\" data-thread=\"{thread}\">");
        let _ = writeln!(
            svg,
            "<rect x=\"0\" y=\"{top}\" width=\"{WIDTH}\" height=\"{LANE_HEIGHT}\" fill=\"{shade}\"/>"
        );
        let _ = writeln!(
            svg,
            "<text x=\"{LABEL_LEFT}\" y=\"{:.1}\">{}</text>",
            middle + 4.0,
            escape(label)
        );
        for span in timeline.spans.iter().filter(|s| s.call.thread == *thread) {
            let call = &span.call;
            let x = scale.x(call.start);
            let width = (scale.x(span.end) - x).max(MIN_BAR);
            let (fill, ending) = match call.end {
                CallEnd::Returned { result, .. } => (RETURNED, result_text(result)),
                CallEnd::NoExit { .. } | CallEnd::Open => (NO_EXIT, "? (no exit stop)".to_string()),
            };
            let title = format!(
                "{}({}) = {ending}, {}",
                syscall_name(call.number),
                arguments_text(&call.args),
                scale.duration(span.end.saturating_sub(call.start))
            );
            let _ = writeln!(
                svg,
                "<rect class=\"call\" x=\"{x:.2}\" y=\"{:.1}\" width=\"{width:.2}\" height=\"{BAR_HEIGHT}\" fill=\"{fill}\"><title>{}</title></rect>",
                middle - BAR_HEIGHT / 2.0,
                escape(&title)
            );
        }
        for record in timeline.decisions.iter().filter(|r| r.thread == *thread) {
            let x = scale.x(record.time);
            let title = format!(
                "{} {} (audit seq {}){}",
                verdict_text(record.verdict),
                syscall_name(record.syscall),
                record.sequence,
                if record.forwarded {
                    " by the policy server"
                } else {
                    ""
                }
            );
            let _ = writeln!(
                svg,
                "<path class=\"decision\" d=\"M{x:.2},{:.1} l6,7 l-6,7 l-6,-7 z\" fill=\"none\" stroke=\"{DECISION}\" stroke-width=\"2\"><title>{}</title></path>",
                middle - 7.0,
                escape(&title)
            );
        }
        svg.push_str("</g>\n");
    }
    for drop in &timeline.drops {
        let x = scale.x(drop.time);
        let _ = writeln!(
            svg,
            "<line class=\"drop\" x1=\"{x:.2}\" y1=\"{TOP}\" x2=\"{x:.2}\" y2=\"{plot_bottom}\" stroke=\"{DROP}\" stroke-width=\"2\"><title>{} audit records dropped</title></line>",
            drop.count
        );
    }
    axis(&mut svg, &scale, plot_bottom);
    svg.push_str("</svg>\n");
    svg
}

/// Where a time goes across the plot.
struct Scale {
    start: u64,
    /// Ticks across the plot (at least 1).
    span: u64,
    frequency: f64,
}

impl Scale {
    fn of(timeline: &Timeline) -> Scale {
        Scale {
            start: timeline.start,
            span: timeline.end.saturating_sub(timeline.start).max(1),
            frequency: timeline.frequency.max(1) as f64,
        }
    }

    fn x(&self, ticks: u64) -> f64 {
        let offset = ticks.saturating_sub(self.start) as f64 / self.span as f64;
        PLOT_LEFT + offset.min(1.0) * (PLOT_RIGHT - PLOT_LEFT)
    }

    /// `ticks` as a duration a person reads.
    fn duration(&self, ticks: u64) -> String {
        let seconds = ticks as f64 / self.frequency;
        let (unit, name) = unit(seconds);
        format!("{:.3} {name}", seconds / unit)
    }
}

/// The unit to write `seconds` in: the largest of s, ms, µs, ns not above
/// it.
fn unit(seconds: f64) -> (f64, &'static str) {
    [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs")]
        .into_iter()
        .find(|(unit, _)| seconds >= *unit)
        .unwrap_or((1e-9, "ns"))
}

/// A tick step of 1, 2 or 5 times a power of ten seconds, about a sixth
/// of `seconds`.
fn tick_step(seconds: f64) -> f64 {
    let raw = seconds / AXIS_TICKS;
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

fn axis(svg: &mut String, scale: &Scale, plot_bottom: f64) {
    let y = plot_bottom + 6.0;
    let _ = writeln!(svg, "<g class=\"axis\">");
    let _ = writeln!(
        svg,
        "<line x1=\"{PLOT_LEFT}\" y1=\"{y}\" x2=\"{PLOT_RIGHT}\" y2=\"{y}\" stroke=\"black\"/>"
    );
    let seconds = scale.span as f64 / scale.frequency;
    let step = tick_step(seconds);
    let (unit, name) = unit(step);
    let ticks = if step.is_finite() && step > 0.0 {
        (seconds / step).floor() as u64
    } else {
        0
    };
    for k in 0..=ticks.min(20) {
        let at = k as f64 * step;
        let x = PLOT_LEFT + at / seconds * (PLOT_RIGHT - PLOT_LEFT);
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.2}\" y1=\"{y}\" x2=\"{x:.2}\" y2=\"{:.1}\" stroke=\"black\"/>\
             <text x=\"{x:.2}\" y=\"{:.1}\" text-anchor=\"middle\">{} {name}</text>",
            y + 5.0,
            y + 18.0,
            (at / unit).round()
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555\">time since the first event</text>",
        PLOT_LEFT - 20.0,
        y + 18.0
    );
    svg.push_str("</g>\n");
}

/// `text` safe inside an element or an attribute; control characters,
/// which XML 1.0 does not allow, become `?`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a<b>&\"c'\u{1}"), "a&lt;b&gt;&amp;&quot;c&apos;?");
    }

    #[test]
    fn tick_steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(tick_step(6.0), 1.0);
        assert!((tick_step(0.009) - 0.002).abs() < 1e-12);
        assert!((tick_step(0.0003) - 0.00005).abs() < 1e-15);
        assert_eq!(unit(0.002), (1e-3, "ms"));
        assert_eq!(unit(0.0), (1e-9, "ns"));
    }

    #[test]
    fn an_empty_log_still_draws_an_axis() {
        let svg = render(&Capture::read(b""));
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("class=\"axis\""));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
