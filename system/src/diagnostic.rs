//! Mistakes found in a description, each named by file, line, column and
//! field, so a user can go straight to it.

use std::fmt;
use std::path::{Path, PathBuf};

/// One mistake: where it is and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file it is in (the description, or a rules file it names).
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The field, as a dotted path (`tasks.app.caps[1].endpoint`); empty
    /// for a TOML syntax error, which lies in no field.
    pub field: String,
    /// What is wrong, and where it helps, what would be right.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.field,
            self.message
        )
    }
}

/// Every mistake found (at least one): independent mistakes are all
/// reported, so one run lists everything to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    /// One diagnostic per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, diagnostic) in self.0.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{diagnostic}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl From<Diagnostic> for Diagnostics {
    fn from(diagnostic: Diagnostic) -> Diagnostics {
        Diagnostics(vec![diagnostic])
    }
}

/// A text file read for a description, to turn byte offsets into lines
/// and columns.
#[derive(Clone, Debug)]
pub struct Source {
    /// Its path as the user named it (relative paths stay relative, so
    /// messages read as the user wrote them).
    pub path: PathBuf,
    /// Its contents.
    pub text: String,
}

impl Source {
    /// `text`, read from `path`.
    pub fn new(path: &Path, text: String) -> Source {
        Source {
            path: path.to_path_buf(),
            text,
        }
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    /// A diagnostic at byte `offset` of this file.
    pub fn at(&self, offset: usize, field: &str, message: impl Into<String>) -> Diagnostic {
        let (line, column) = self.line_column(offset);
        Diagnostic {
            file: self.path.clone(),
            line,
            column,
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// The largest char boundary at or below `offset`.
fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Collects diagnostics while checking goes on.
#[derive(Debug, Default)]
pub struct Report(pub Vec<Diagnostic>);

impl Report {
    /// Records one mistake.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }

    /// `Ok(value)` if nothing was recorded, else every diagnostic.
    pub fn finish<T>(self, value: T) -> Result<T, Diagnostics> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(Diagnostics(self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_one_based_lines_and_columns() {
        let source = Source::new(Path::new("s.toml"), "ab\ncdé\nx".into());
        assert_eq!(source.line_column(0), (1, 1));
        assert_eq!(source.line_column(3), (2, 1));
        assert_eq!(source.line_column(7), (2, 4), "é is one column");
        assert_eq!(source.line_column(8), (3, 1));
        let d = source.at(4, "system.name", "bad");
        assert_eq!(d.to_string(), "s.toml:2:2: system.name: bad");
    }
}
