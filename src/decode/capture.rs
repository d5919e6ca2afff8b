//! A log read once: its items in order, the clock and the threads' names,
//! which every output format starts from.

use std::collections::BTreeMap;

use abi::audit::AuditVerdict;
use abi::export::Event;
use abi::{ErrorCode, Syscall};

use super::split::{split, LogItem};
use super::ASSUMED_FREQUENCY;

/// A decoded log.
#[derive(Clone, Debug)]
pub struct Capture {
    /// Text lines and frames, in the order of the log's bytes.
    pub items: Vec<LogItem>,
    /// The first `Clock` frame with a frequency (ticks per second, time).
    pub clock: Option<(u64, u64)>,
    /// Each thread's name, from its last `Thread` frame.
    names: BTreeMap<u32, String>,
}

/// What a log held, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Text lines.
    pub lines: usize,
    /// Frames that decoded.
    pub frames: usize,
    /// Frames that did not.
    pub malformed: usize,
    /// Frames the log ends inside.
    pub cut_off: usize,
}

impl Capture {
    /// Splits and decodes `log`.
    pub fn read(log: &[u8]) -> Capture {
        let items = split(log);
        let mut clock = None;
        let mut names = BTreeMap::new();
        for event in items.iter().filter_map(event_of) {
            match event {
                Event::Clock { frequency, time } if *frequency > 0 && clock.is_none() => {
                    clock = Some((*frequency, *time));
                }
                Event::Thread { thread, name } => {
                    names.insert(*thread, name.as_str().to_string());
                }
                _ => {}
            }
        }
        Capture {
            items,
            clock,
            names,
        }
    }

    /// The decoded events, in order.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.items.iter().filter_map(event_of)
    }

    /// Counts of what the log held.
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        for item in &self.items {
            match item {
                LogItem::Text(_) => summary.lines += 1,
                LogItem::Event { .. } => summary.frames += 1,
                LogItem::Malformed { .. } => summary.malformed += 1,
                LogItem::CutOff { .. } => summary.cut_off += 1,
            }
        }
        summary
    }

    /// Ticks per second: the `Clock` frame's, else [`ASSUMED_FREQUENCY`].
    pub fn frequency(&self) -> u64 {
        self.clock
            .map_or(ASSUMED_FREQUENCY, |(frequency, _)| frequency)
    }

    /// Seconds from the first `Clock` frame's time (when the export
    /// began) to `ticks`, if there is one: negative for an audit record
    /// made before.
    pub fn seconds(&self, ticks: u64) -> Option<f64> {
        self.clock.map(|(frequency, time)| {
            (i128::from(ticks) - i128::from(time)) as f64 / frequency as f64
        })
    }

    /// A thread's name, if a `Thread` frame gave one.
    pub fn name(&self, thread: u32) -> Option<&str> {
        self.names.get(&thread).map(String::as_str)
    }

    /// A thread as the kernel's console shows it: `name#N`, or `#N`.
    pub fn thread_label(&self, thread: u32) -> String {
        format!("{}#{thread}", self.name(thread).unwrap_or(""))
    }
}

fn event_of(item: &LogItem) -> Option<&Event> {
    match item {
        LogItem::Event { event, .. } => Some(event),
        _ => None,
    }
}

/// A syscall's name, or `syscall_N` for a number no syscall has.
pub fn syscall_name(number: u64) -> String {
    Syscall::from_number(number)
        .map_or_else(|| format!("syscall_{number}"), |s| s.name().to_string())
}

/// A result word: `0`, an error code's number and name, or hex.
pub fn result_text(result: u64) -> String {
    match ErrorCode::from_raw(result) {
        Some(ErrorCode::Ok) => "0".to_string(),
        Some(code) => format!("{result} ({})", code.name()),
        None => format!("{result:#x}"),
    }
}

/// An audit verdict as one word (`refused(N)` with its code).
pub fn verdict_text(verdict: AuditVerdict) -> String {
    match verdict {
        AuditVerdict::Allowed => "allowed".to_string(),
        AuditVerdict::Refused(code) => format!("refused({code})"),
        AuditVerdict::Killed => "killed".to_string(),
        AuditVerdict::Trapped => "trapped".to_string(),
        AuditVerdict::Logged => "logged".to_string(),
        AuditVerdict::Emulated => "emulated".to_string(),
        AuditVerdict::Cancelled => "cancelled".to_string(),
    }
}

/// Arguments as `0x1, 0x2`: up to the last non-zero one.
pub fn arguments_text(args: &[u64]) -> String {
    let used = args.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    args[..used]
        .iter()
        .map(|x| format!("{x:#x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::framed::log;

    #[test]
    fn the_first_clock_with_a_frequency_counts() {
        let capture = Capture::read(&log(&[
            Event::Clock {
                frequency: 0,
                time: 1,
            },
            Event::Clock {
                frequency: 100,
                time: 2,
            },
            Event::Clock {
                frequency: 200,
                time: 3,
            },
        ]));
        assert_eq!(capture.clock, Some((100, 2)));
        assert_eq!(capture.seconds(252), Some(2.5));
        assert_eq!(capture.seconds(0), Some(-0.02));
        assert_eq!(Capture::read(b"").frequency(), ASSUMED_FREQUENCY);
        assert_eq!(Capture::read(b"").seconds(1), None);
    }

    #[test]
    fn threads_are_named_by_their_frames() {
        let capture = Capture::read(&log(&[Event::Thread {
            thread: 4,
            name: "shell".try_into().expect("short"),
        }]));
        assert_eq!(capture.thread_label(4), "shell#4");
        assert_eq!(capture.thread_label(5), "#5");
    }

    #[test]
    fn words_as_text() {
        assert_eq!(syscall_name(3), "debug_print");
        assert_eq!(syscall_name(9999), "syscall_9999");
        assert_eq!(result_text(0), "0");
        assert_eq!(result_text(8), "8 (denied)");
        assert_eq!(result_text(0xdead), "0xdead");
        assert_eq!(arguments_text(&[1, 0, 2, 0, 0]), "0x1, 0x0, 0x2");
        assert_eq!(arguments_text(&[0, 0]), "");
        assert_eq!(verdict_text(AuditVerdict::Refused(8)), "refused(8)");
    }
}
