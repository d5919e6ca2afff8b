//! The line being typed: what each byte from the terminal does to it and
//! what the shell echoes back.
//!
//! Printable ASCII is added and echoed; backspace (DEL or BS) takes the
//! last character back (`BS space BS` erases it on the screen); Enter (CR,
//! or LF from a pipe; CR LF counts once) ends the line; Ctrl-C abandons
//! it. Escape sequences (arrow keys: `ESC [ ... letter`) and other
//! control bytes are ignored, so a stray key never wedges the line.

/// The longest line kept; bytes past it are ignored (and not echoed).
pub const MAX_LINE: usize = 200;

/// What one byte did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Added to the line: echo it.
    Added(u8),
    /// The last character was taken back: erase it on the screen.
    Erased,
    /// The line is complete ([`LineEditor::line`]).
    Enter,
    /// Ctrl-C.
    Interrupt,
    /// Nothing happened.
    Ignored,
}

/// Where an escape sequence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    /// After ESC.
    Started,
    /// After `ESC [`: parameters until a final byte (0x40..=0x7e).
    Parameters,
}

/// The line being typed.
pub struct LineEditor {
    bytes: heapless::Vec<u8, MAX_LINE>,
    escape: Escape,
    /// The last byte was CR (a following LF is the same Enter).
    after_cr: bool,
}

impl Default for LineEditor {
    fn default() -> Self {
        Self::new()
    }
}

impl LineEditor {
    /// An empty line.
    pub const fn new() -> LineEditor {
        LineEditor {
            bytes: heapless::Vec::new(),
            escape: Escape::None,
            after_cr: false,
        }
    }

    /// Takes one byte from the terminal.
    pub fn feed(&mut self, byte: u8) -> Edit {
        let after_cr = core::mem::replace(&mut self.after_cr, byte == b'\r');
        match self.escape {
            Escape::Started => {
                self.escape = if byte == b'[' {
                    Escape::Parameters
                } else {
                    Escape::None
                };
                return Edit::Ignored;
            }
            Escape::Parameters => {
                if (0x40..=0x7e).contains(&byte) {
                    self.escape = Escape::None;
                }
                return Edit::Ignored;
            }
            Escape::None => {}
        }
        match byte {
            b'\r' => Edit::Enter,
            b'\n' if after_cr => Edit::Ignored,
            b'\n' => Edit::Enter,
            abi::console::CTRL_C => Edit::Interrupt,
            0x7f | 0x08 => match self.bytes.pop() {
                Some(_) => Edit::Erased,
                None => Edit::Ignored,
            },
            0x1b => {
                self.escape = Escape::Started;
                Edit::Ignored
            }
            b' '..=b'~' => match self.bytes.push(byte) {
                Ok(()) => Edit::Added(byte),
                Err(_) => Edit::Ignored,
            },
            _ => Edit::Ignored,
        }
    }

    /// The line so far (printable ASCII only, so always text).
    pub fn line(&self) -> &str {
        core::str::from_utf8(&self.bytes).unwrap_or("")
    }

    /// Starts a new line.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(editor: &mut LineEditor, bytes: &[u8]) -> Vec<Edit> {
        bytes.iter().map(|&b| editor.feed(b)).collect()
    }

    #[test]
    fn characters_are_added_and_backspace_takes_them_back() {
        let mut e = LineEditor::new();
        typed(&mut e, b"psx");
        assert_eq!(e.feed(0x7f), Edit::Erased);
        assert_eq!(e.line(), "ps");
        assert_eq!(e.feed(0x08), Edit::Erased);
        assert_eq!(e.feed(0x08), Edit::Erased);
        assert_eq!(e.feed(0x08), Edit::Ignored, "nothing left to erase");
        assert_eq!(e.line(), "");
    }

    #[test]
    fn enter_is_cr_or_lf_and_cr_lf_is_one_enter() {
        let mut e = LineEditor::new();
        assert_eq!(
            typed(&mut e, b"a\r\n"),
            [Edit::Added(b'a'), Edit::Enter, Edit::Ignored]
        );
        e.clear();
        assert_eq!(
            typed(&mut e, b"b\n\n"),
            [Edit::Added(b'b'), Edit::Enter, Edit::Enter]
        );
    }

    #[test]
    fn ctrl_c_interrupts_and_escape_sequences_and_control_bytes_are_ignored() {
        let mut e = LineEditor::new();
        assert_eq!(e.feed(3), Edit::Interrupt);
        // Up arrow, a function key, then text.
        let edits = typed(&mut e, b"\x1b[A\x1b[15~\x01ok");
        assert!(edits[..edits.len() - 2].iter().all(|&x| x == Edit::Ignored));
        assert_eq!(e.line(), "ok");
        // Non-ASCII bytes never enter the line.
        assert_eq!(e.feed(0xc3), Edit::Ignored);
        assert_eq!(e.line(), "ok");
    }

    #[test]
    fn a_full_line_ignores_more() {
        let mut e = LineEditor::new();
        for _ in 0..MAX_LINE {
            assert!(matches!(e.feed(b'x'), Edit::Added(_)));
        }
        assert_eq!(e.feed(b'y'), Edit::Ignored);
        assert_eq!(e.line().len(), MAX_LINE);
    }
}
