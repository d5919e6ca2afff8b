//! A reader and writer for flat JSON objects: `{"key": "text" | number, ...}`.
//!
//! Why by hand and not serde_json: the results are flat objects of one
//! string and a few numbers, written and read only by this runner, and a
//! JSON dependency would change the workspace's shared `Cargo.lock` for
//! ~150 lines of code. The reader follows RFC 8259 for what it accepts
//! (string escapes, number grammar) and refuses nesting, `true`, `false`
//! and `null`, which our files never contain.

use std::fmt::Write as _;

/// A value in a flat object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlatValue {
    /// A string, unescaped.
    Text(String),
    /// A number, as written (valid JSON number syntax).
    Number(String),
}

/// Writes `text` as a JSON string literal.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Reads one flat JSON object; the keys in order with their values.
pub fn parse_object(text: &str) -> Result<Vec<(String, FlatValue)>, String> {
    let mut reader = Reader {
        chars: text.char_indices().peekable(),
        text,
    };
    reader.expect('{')?;
    let mut fields = Vec::new();
    if reader.peek_non_space() == Some('}') {
        reader.expect('}')?;
    } else {
        loop {
            let key = reader.string()?;
            reader.expect(':')?;
            let value = match reader.peek_non_space() {
                Some('"') => FlatValue::Text(reader.string()?),
                Some(c) if c == '-' || c.is_ascii_digit() => FlatValue::Number(reader.number()?),
                Some(c) => return Err(format!("value of `{key}`: `{c}` is not a string or number (nested values, true, false and null are not read)")),
                None => return Err(format!("value of `{key}` is missing")),
            };
            fields.push((key, value));
            match reader.next_non_space() {
                Some(',') => continue,
                Some('}') => break,
                Some(c) => return Err(format!("expected `,` or `}}`, found `{c}`")),
                None => return Err("the object is not closed".into()),
            }
        }
    }
    match reader.next_non_space() {
        None => Ok(fields),
        Some(c) => Err(format!("`{c}` after the end of the object")),
    }
}

struct Reader<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    text: &'a str,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self
            .chars
            .peek()
            .is_some_and(|(_, c)| matches!(c, ' ' | '\t' | '\n' | '\r'))
        {
            self.chars.next();
        }
    }

    fn peek_non_space(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.peek().map(|(_, c)| *c)
    }

    fn next_non_space(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.next().map(|(_, c)| c)
    }

    fn expect(&mut self, wanted: char) -> Result<(), String> {
        match self.next_non_space() {
            Some(c) if c == wanted => Ok(()),
            Some(c) => Err(format!("expected `{wanted}`, found `{c}`")),
            None => Err(format!("expected `{wanted}`, found the end")),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            let c = self.chars.next().ok_or("a string is not closed")?.1;
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let escaped = self.chars.next().ok_or("a string is not closed")?.1;
                    out.push(match escaped {
                        '"' => '"',
                        '\\' => '\\',
                        '/' => '/',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        'u' => self.unicode_escape()?,
                        other => return Err(format!("unknown escape `\\{other}`")),
                    });
                }
                c if (c as u32) < 0x20 => return Err("a control character inside a string".into()),
                c => out.push(c),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut value = 0;
        for _ in 0..4 {
            let c = self.chars.next().ok_or("a \\u escape is cut short")?.1;
            value = value * 16 + c.to_digit(16).ok_or("a \\u escape needs 4 hex digits")?;
        }
        Ok(value)
    }

    /// `\uXXXX`, with UTF-16 surrogate pairs joined.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let first = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&first) {
            let pair = (
                self.chars.next().map(|(_, c)| c),
                self.chars.next().map(|(_, c)| c),
            );
            if pair != (Some('\\'), Some('u')) {
                return Err("a lone UTF-16 surrogate".into());
            }
            let second = self.hex4()?;
            if !(0xDC00..0xE000).contains(&second) {
                return Err("a lone UTF-16 surrogate".into());
            }
            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| format!("\\u{code:04x} is not a character"))
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Result<String, String> {
        self.skip_space();
        let start = self.chars.peek().map_or(self.text.len(), |(i, _)| *i);
        let mut end = start;
        while let Some(&(i, c)) = self.chars.peek() {
            if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
                end = i + c.len_utf8();
                self.chars.next();
            } else {
                break;
            }
        }
        let number = &self.text[start..end];
        if is_json_number(number) {
            Ok(number.to_string())
        } else {
            Err(format!("`{number}` is not a JSON number"))
        }
    }
}

fn is_json_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    match bytes.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> FlatValue {
        FlatValue::Text(value.into())
    }

    fn number(value: &str) -> FlatValue {
        FlatValue::Number(value.into())
    }

    #[test]
    fn reads_strings_and_numbers_in_order() {
        let fields =
            parse_object(r#" { "name" : "a\"b\\c\u00e9\ud83d\ude00", "n":-1.5e3,"z":0 } "#);
        assert_eq!(
            fields,
            Ok(vec![
                ("name".into(), text("a\"b\\cé😀")),
                ("n".into(), number("-1.5e3")),
                ("z".into(), number("0")),
            ])
        );
        assert_eq!(parse_object("{}"), Ok(vec![]));
    }

    #[test]
    fn quote_round_trips_through_the_reader() {
        let awkward = "tab\tquote\"back\\slash\nbell\u{7}é";
        let object = format!("{{{}:{}}}", quote("k"), quote(awkward));
        assert_eq!(parse_object(&object), Ok(vec![("k".into(), text(awkward))]));
    }

    #[test]
    fn refuses_what_is_not_a_flat_object() {
        for bad in [
            "",
            "[1]",
            "{\"a\":1",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{\"a\":{\"b\":1}}",
            "{\"a\":true}",
            "{\"a\":null}",
            "{\"a\":01}",
            "{\"a\":1.}",
            "{\"a\":-}",
            "{\"a\":1e}",
            "{\"a\":\"x\\q\"}",
            "{\"a\":\"\\ud800\"}",
            "{\"a\":1} x",
            "{a:1}",
        ] {
            assert!(parse_object(bad).is_err(), "{bad:?} accepted");
        }
    }
}
