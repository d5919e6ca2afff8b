//! Splitting a captured log into text lines and frames.
//!
//! A frame is the bytes between a `0x00` and the next `0x00`; everything
//! outside frames is text, cut into lines at `\n` (a `\r` before it is
//! dropped). Text before a frame that has no line ending yet comes out as a
//! line of its own (a zero always ends a line), and the line ending that
//! follows the frame then ends nothing more.
//!
//! The kernel's text is printable (it shows a thread's other bytes as
//! `?`), so it never holds a zero, and a real frame never looks like text
//! (its first or second byte is a control byte: the COBS code or the
//! variant's tag). That lets the splitter find its way back when a log
//! starts inside a frame or lost a delimiter: bytes between two zeros that
//! do not decode but are all text are text, and their closing zero opens
//! the next frame. Two zeros in a row hold no frame: the second opens one.

use abi::export::{decode_frame, FrameError, FRAME_DELIMITER};

/// One piece of a log, in the order of its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogItem {
    /// A line of text, without its line ending (bytes that are not UTF-8
    /// shown as U+FFFD).
    Text(String),
    /// A frame that decoded.
    Event {
        /// Where its opening `0x00` is in the log.
        offset: usize,
        /// What it said.
        event: abi::export::Event,
    },
    /// A frame that did not decode.
    Malformed {
        /// Where its opening `0x00` is in the log.
        offset: usize,
        /// Why.
        error: FrameError,
    },
    /// A frame the log ends inside (no closing `0x00`).
    CutOff {
        /// Where its opening `0x00` is in the log.
        offset: usize,
    },
}

/// Splits `log` into its items.
pub fn split(log: &[u8]) -> Vec<LogItem> {
    let mut splitter = Splitter::default();
    let mut at = 0;
    while at < log.len() {
        let Some(open) = find_delimiter(log, at) else {
            splitter.text(&log[at..]);
            break;
        };
        splitter.text(&log[at..open]);
        // A zero always ends the line before it.
        splitter.frame_boundary();
        let start = open + 1;
        let Some(close) = find_delimiter(log, start) else {
            let rest = &log[start..];
            if is_text(rest) {
                splitter.text(rest);
            } else {
                splitter.items.push(LogItem::CutOff { offset: open });
            }
            break;
        };
        let bytes = &log[start..close];
        if bytes.is_empty() {
            // The second zero opens the frame.
            at = close;
            continue;
        }
        match decode_frame(&mut bytes.to_vec()) {
            Ok(event) => {
                splitter.items.push(LogItem::Event {
                    offset: open,
                    event,
                });
                at = close + 1;
            }
            Err(_) if is_text(bytes) => {
                // Out of step: this was text, and its closing zero opens
                // the next frame.
                splitter.text(bytes);
                at = close;
            }
            Err(error) => {
                splitter.items.push(LogItem::Malformed {
                    offset: open,
                    error,
                });
                at = close + 1;
            }
        }
    }
    splitter.finish()
}

fn find_delimiter(log: &[u8], from: usize) -> Option<usize> {
    log.get(from..)?
        .iter()
        .position(|&byte| byte == FRAME_DELIMITER)
        .map(|i| from + i)
}

/// Could the kernel have printed these bytes as text? UTF-8 with no
/// control character but tab and the line endings.
fn is_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|text| {
        text.chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
    })
}

/// Text bytes gathered into lines between frames.
#[derive(Default)]
struct Splitter {
    items: Vec<LogItem>,
    /// The line being read: bytes since the last line ending.
    line: Vec<u8>,
    /// A frame cut the last line short, so a line ending right after it
    /// ends no further line.
    after_cut_line: bool,
}

impl Splitter {
    fn text(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte == b'\n' {
                if !(self.after_cut_line && self.line.is_empty()) {
                    self.end_line();
                }
                self.after_cut_line = false;
            } else if byte == b'\r' && self.line.is_empty() && self.after_cut_line {
                // The `\r` of a `\r\n` that ends a line cut by a frame.
            } else {
                self.line.push(byte);
                self.after_cut_line = false;
            }
        }
    }

    /// A zero: the line read so far ends before it.
    fn frame_boundary(&mut self) {
        if !self.line.is_empty() {
            self.end_line();
            self.after_cut_line = true;
        }
    }

    fn end_line(&mut self) {
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.items.push(LogItem::Text(line));
        self.line.clear();
    }

    fn finish(mut self) -> Vec<LogItem> {
        if !self.line.is_empty() {
            self.end_line();
        }
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::export::{encode_frame, Event, MAX_FRAME_BYTES};

    fn frame(event: &Event) -> Vec<u8> {
        let mut out = [0u8; MAX_FRAME_BYTES];
        let bytes = encode_frame(event, &mut out).expect("fits");
        [&[0][..], bytes, &[0]].concat()
    }

    fn dropped(count: u64) -> Event {
        Event::AuditDropped { time: 9, count }
    }

    fn text(line: &str) -> LogItem {
        LogItem::Text(line.to_string())
    }

    fn event(offset: usize, event: Event) -> LogItem {
        LogItem::Event { offset, event }
    }

    #[test]
    fn text_lines_and_frames_come_out_in_order() {
        let f = frame(&dropped(1));
        let log = [b"one\r\ntwo\n".as_slice(), &f, b"three\r\n"].concat();
        assert_eq!(
            split(&log),
            [
                text("one"),
                text("two"),
                event(9, dropped(1)),
                text("three")
            ]
        );
    }

    #[test]
    fn a_line_cut_by_a_frame_ends_before_it() {
        let f = frame(&dropped(1));
        let log = [b"[a#1] hal".as_slice(), &f, b"\r\nnext\n"].concat();
        assert_eq!(
            split(&log),
            [text("[a#1] hal"), event(9, dropped(1)), text("next")]
        );
        // A line ending after a whole line is a line of its own.
        let log = [b"done\n".as_slice(), &f, b"\n"].concat();
        assert_eq!(split(&log), [text("done"), event(5, dropped(1)), text("")]);
    }

    #[test]
    fn frames_back_to_back_and_doubled_zeros() {
        let f = frame(&dropped(1));
        let g = frame(&dropped(2));
        let log = [f.as_slice(), &[0, 0], &g, &f].concat();
        let g_at = f.len() + 2;
        assert_eq!(
            split(&log),
            [
                event(0, dropped(1)),
                event(g_at, dropped(2)),
                event(g_at + g.len(), dropped(1))
            ]
        );
    }

    #[test]
    fn a_frame_that_does_not_decode_is_reported_where_it_was() {
        let f = frame(&dropped(1));
        let log = [b"a\n".as_slice(), &[0, 0x02, 0x09, 0], b"b\n", &f].concat();
        assert_eq!(
            split(&log),
            [
                text("a"),
                LogItem::Malformed {
                    offset: 2,
                    error: FrameError::Malformed
                },
                text("b"),
                event(8, dropped(1))
            ]
        );
    }

    #[test]
    fn a_frame_the_log_ends_inside_is_cut_off() {
        let f = frame(&dropped(1));
        let log = [b"a\n".as_slice(), &f[..f.len() - 3]].concat();
        assert_eq!(split(&log), [text("a"), LogItem::CutOff { offset: 2 }]);
    }

    #[test]
    fn a_log_that_starts_inside_a_frame_finds_its_way_back() {
        let f = frame(&dropped(1));
        let g = frame(&dropped(2));
        // The tail of a frame, its closing zero, text, then two frames.
        let log = [&f[4..], b"hello\r\n".as_slice(), &g, &f].concat();
        let items = split(&log);
        assert_eq!(items.len(), 4, "{items:?}");
        assert!(matches!(items[0], LogItem::Text(_)));
        assert_eq!(items[1], text("hello"));
        assert!(matches!(items[2], LogItem::Event { event: ref e, .. } if *e == dropped(2)));
        assert!(matches!(items[3], LogItem::Event { event: ref e, .. } if *e == dropped(1)));
    }

    #[test]
    fn text_at_the_end_with_no_line_ending_is_a_line() {
        assert_eq!(split(b"a\nb"), [text("a"), text("b")]);
        assert_eq!(split(b"a\n\0b"), [text("a"), text("b")]);
        assert_eq!(split(b""), []);
    }
}
