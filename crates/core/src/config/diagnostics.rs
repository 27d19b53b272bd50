//! Config problems with their location. Offsets from the parser are turned
//! into 1-based line and column (in characters) here, once.

use std::fmt;
use std::ops::Range;

/// One problem in a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Diagnostic {
    /// A problem at byte `offset` of `text` (a file connecta reads, such
    /// as the search lexicon's).
    pub fn at(text: &str, offset: usize, message: impl Into<String>) -> Diagnostic {
        let (line, column) = line_col(text, offset);
        Diagnostic {
            line,
            column,
            message: message.into(),
        }
    }
}

/// Many offsets of one text turned into 1-based lines and columns: the
/// line starts are found once, so each position costs a binary search and
/// its own line, not a scan from the top of the file.
pub struct Positions<'a> {
    text: &'a str,
    /// The byte offset each line starts at.
    line_starts: Vec<usize>,
}

impl<'a> Positions<'a> {
    pub fn new(text: &'a str) -> Positions<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Positions { text, line_starts }
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    pub fn of(&self, offset: usize) -> (usize, usize) {
        let offset = crate::error::floor_char_boundary(self.text, offset.min(self.text.len()));
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        (line, self.text[start..offset].chars().count() + 1)
    }
}

/// Every problem found in one config file. `connecta check` prints them all
/// and exits non-zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}:{}:{}: {}", self.file, d.line, d.column, d.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Collects diagnostics against one source text.
pub(crate) struct Sink<'a> {
    positions: Positions<'a>,
    pub(crate) items: Vec<Diagnostic>,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(text: &'a str) -> Sink<'a> {
        Sink {
            positions: Positions::new(text),
            items: Vec::new(),
        }
    }

    pub(crate) fn at(&mut self, span: Range<usize>, message: impl Into<String>) {
        let (line, column) = self.positions.of(span.start);
        let message = message.into();
        let d = Diagnostic {
            line,
            column,
            message,
        };
        if !self.items.contains(&d) {
            self.items.push(d);
        }
    }

    /// The 1-based line and column of a byte offset's span.
    pub(crate) fn position(&self, span: Range<usize>) -> (usize, usize) {
        self.positions.of(span.start)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// 1-based line and column (columns count characters, as editors do) of
/// one offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    Positions::new(text).of(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let t = "a = 1\nbé = 2\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, 9), (2, 3));
    }

    /// Every offset, against a scan from the top: inside a multi-byte
    /// character (its start), on a newline, past the end, in an empty text.
    #[test]
    fn positions_agree_with_a_scan_from_the_top_at_every_offset() {
        fn scanned(text: &str, offset: usize) -> (usize, usize) {
            let offset = crate::error::floor_char_boundary(text, offset.min(text.len()));
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            (line, before[start..].chars().count() + 1)
        }
        for text in ["", "\n", "a", "a = 1\nbé = 2\n", "\n\nx\n€€\ny", "é\n\n"] {
            let positions = Positions::new(text);
            for offset in 0..=text.len() + 2 {
                assert_eq!(
                    positions.of(offset),
                    scanned(text, offset),
                    "{text:?} at {offset}"
                );
            }
        }
    }
}
