//! `portcullis decode`: a captured serial log, text lines and export
//! frames (`abi::export`, docs/export.md) mixed, turned into something to
//! read or to open in a viewer.
//!
//! The log is read once ([`Capture::read`]): split into text lines and
//! frames, each frame decoded, the first `Clock` frame and the threads'
//! names noted. Each output format is one file:
//!
//! | file | one idea |
//! | --- | --- |
//! | `split.rs` | the bytes: where frames are, what is text, what does not decode |
//! | `capture.rs` | the log read once: its items, clock and thread names |
//! | `calls.rs` | an entry stop paired with the exit stop of its thread |
//! | `timeline.rs` | calls, policy decisions and audit drops on a time line (for the two drawings) |
//! | `text.rs` | `--format text`: strace-like lines between the log's own |
//! | `jsonl.rs` | `--format jsonl`: one JSON object per line |
//! | `perfetto.rs` | `--format perfetto`: Chrome trace-event JSON for ui.perfetto.dev |
//! | `svg.rs` | `--format svg`: a timeline drawn as SVG, one lane per thread |
//! | `framed.rs` | (tests) logs made of frames, as the kernel writes them |
//!
//! Nothing in a log makes the decoder panic: a frame that does not decode
//! is counted and shown where it was, and a frame the log ends inside is
//! reported as cut off.

pub mod calls;
pub mod capture;
#[cfg(test)]
mod framed;
pub mod jsonl;
pub mod perfetto;
pub mod split;
pub mod svg;
pub mod text;
pub mod timeline;

use std::fmt;
use std::str::FromStr;

pub use capture::{Capture, Summary};
pub use split::LogItem;

/// The counter frequency assumed when a log has no `Clock` frame: QEMU
/// virt's 62.5 MHz.
pub const ASSUMED_FREQUENCY: u64 = 62_500_000;

/// What `decode` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Text lines and strace-like event lines ([`text`]).
    #[default]
    Text,
    /// One JSON object per line ([`jsonl`]).
    Jsonl,
    /// Chrome trace-event JSON ([`perfetto`]).
    Perfetto,
    /// An SVG timeline ([`svg`]).
    Svg,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 4] = [Format::Text, Format::Jsonl, Format::Perfetto, Format::Svg];

    /// Its `--format` word.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Jsonl => "jsonl",
            Format::Perfetto => "perfetto",
            Format::Svg => "svg",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|format| format.name() == text)
            .ok_or_else(|| format!("`{text}` is not text, jsonl, perfetto or svg"))
    }
}

/// Writes `capture` in `format`.
pub fn render(capture: &Capture, format: Format) -> String {
    match format {
        Format::Text => text::render(capture),
        Format::Jsonl => jsonl::render(capture),
        Format::Perfetto => perfetto::render(capture),
        Format::Svg => svg::render(capture),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_words_round_trip() {
        for format in Format::ALL {
            assert_eq!(format.name().parse(), Ok(format));
        }
        assert!("json".parse::<Format>().is_err());
    }

    #[test]
    fn every_format_takes_any_bytes() {
        let logs: [&[u8]; 5] = [
            b"",
            b"\0",
            b"\0\0\0",
            b"text\r\n\0\x01\x02\x03\0more\n\0\xff\xfe",
            &[0x80, 0, 2, 0xff, 0, 0x0a],
        ];
        for log in logs {
            let capture = Capture::read(log);
            for format in Format::ALL {
                let _ = render(&capture, format);
            }
        }
    }
}
