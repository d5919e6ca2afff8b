//! What the two drawings (Perfetto's and the SVG) show: calls as spans,
//! policy decisions and audit drops as moments, one lane per thread.
//!
//! A call spans its entry stop to its exit stop; one with no exit stop
//! ends at its thread's next entry stop, or at the end of the log (the
//! latest time of any event). A policy decision is an audit record whose
//! verdict is not `Allowed`. An exit stop with no entry before it is left
//! out (the text and JSON lines show it).

use std::collections::BTreeSet;

use abi::audit::{AuditRecord, AuditVerdict};
use abi::export::Event;

use super::calls::{pair, Call, CallEnd, Completed};
use super::capture::Capture;

/// A call with its end resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The call.
    pub call: Call,
    /// When it ended (ticks; never before it began).
    pub end: u64,
}

/// Records lost by an audit ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drop {
    /// When the loss was seen.
    pub time: u64,
    /// How many.
    pub count: u64,
}

/// A log's calls, decisions and drops on one time line.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Ticks per second (the `Clock` frame's, or assumed).
    pub frequency: u64,
    /// No `Clock` frame gave the frequency.
    pub assumed: bool,
    /// The earliest time of any event (ticks).
    pub start: u64,
    /// The latest.
    pub end: u64,
    /// Every thread an event names, by number, with its label (`name#N`).
    pub threads: Vec<(u32, String)>,
    /// The calls, in the order they were completed.
    pub spans: Vec<Span>,
    /// Audit records whose verdict is not `Allowed`.
    pub decisions: Vec<AuditRecord>,
    /// Audit drops.
    pub drops: Vec<Drop>,
}

impl Timeline {
    /// The time line of `capture`.
    pub fn of(capture: &Capture) -> Timeline {
        let mut threads = BTreeSet::new();
        let mut times = Vec::new();
        let mut decisions = Vec::new();
        let mut drops = Vec::new();
        for event in capture.events() {
            match event {
                Event::Clock { .. } => {}
                Event::Thread { thread, .. } => {
                    threads.insert(*thread);
                }
                Event::SyscallEntry { time, thread, .. }
                | Event::SyscallExit { time, thread, .. } => {
                    threads.insert(*thread);
                    times.push(*time);
                }
                Event::Audit(record) => {
                    threads.insert(record.thread);
                    times.push(record.time);
                    if record.verdict != AuditVerdict::Allowed {
                        decisions.push(*record);
                    }
                }
                Event::AuditDropped { time, count } => {
                    times.push(*time);
                    drops.push(Drop {
                        time: *time,
                        count: *count,
                    });
                }
            }
        }
        let fallback = capture.clock.map_or(0, |(_, time)| time);
        let start = times.iter().copied().min().unwrap_or(fallback);
        let end = times.iter().copied().max().unwrap_or(fallback);
        let spans = pair(capture.events())
            .into_iter()
            .filter_map(|completed| match completed {
                Completed::Call(call) => {
                    let ended = match call.end {
                        CallEnd::Returned { time, .. } | CallEnd::NoExit { time } => time,
                        CallEnd::Open => end,
                    };
                    Some(Span {
                        end: ended.max(call.start),
                        call,
                    })
                }
                Completed::Unpaired { .. } => None,
            })
            .collect();
        Timeline {
            frequency: capture.frequency(),
            assumed: capture.clock.is_none(),
            start,
            end,
            threads: threads
                .into_iter()
                .map(|thread| (thread, capture.thread_label(thread)))
                .collect(),
            spans,
            decisions,
            drops,
        }
    }

    /// `ticks` in microseconds.
    pub fn micros(&self, ticks: u64) -> f64 {
        ticks as f64 * 1e6 / self.frequency as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::framed::log;

    #[test]
    fn an_open_call_ends_with_the_log() {
        let timeline = Timeline::of(&Capture::read(&log(&[
            Event::SyscallEntry {
                time: 10,
                thread: 2,
                number: 1,
                args: [0; 6],
            },
            Event::AuditDropped { time: 40, count: 1 },
        ])));
        assert_eq!((timeline.start, timeline.end), (10, 40));
        assert_eq!(timeline.spans.len(), 1);
        assert_eq!(timeline.spans[0].end, 40);
        assert_eq!(timeline.threads, [(2, "#2".to_string())]);
        assert!(timeline.assumed);
        assert_eq!(timeline.micros(62_500_000), 1e6);
    }
}
