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
    text: &'a str,
    pub(crate) items: Vec<Diagnostic>,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(text: &'a str) -> Sink<'a> {
        Sink {
            text,
            items: Vec::new(),
        }
    }

    pub(crate) fn at(&mut self, span: Range<usize>, message: impl Into<String>) {
        let (line, column) = line_col(self.text, span.start);
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
        line_col(self.text, span.start)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// 1-based line and column (columns count characters, as editors do).
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = crate::error::floor_char_boundary(text, offset.min(text.len()));
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
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
}
