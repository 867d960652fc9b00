//! Source text and byte spans: what a diagnostic points at.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A byte range in a source text. `offset + len` never exceeds the text length of the file
/// it was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub(crate) offset: usize,
    pub(crate) len: usize,
}

impl Span {
    pub(crate) const fn new(offset: usize, len: usize) -> Self {
        Self { offset, len }
    }

    pub(crate) const fn end(self) -> usize {
        self.offset + self.len
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(span: Span) -> Self {
        miette::SourceSpan::new(span.offset.into(), span.len)
    }
}

/// A value together with the span of the YAML node it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    pub(crate) span: Span,
}

impl<T> Located<T> {
    /// `value` found at `span`.
    pub const fn new(value: T, span: Span) -> Self {
        Self { value, span }
    }
}

impl Located<String> {
    /// The string value.
    pub fn as_str(&self) -> &str {
        &self.value
    }
}

/// A named source text, cheap to clone, usable as a miette `SourceCode`.
#[derive(Debug, Clone)]
pub struct SourceFile {
    path: PathBuf,
    text: Arc<str>,
}

impl SourceFile {
    /// The source file at `path` (named in messages) holding `text`.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> Self {
        Self {
            path: path.into(),
            text: text.into(),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// 1-based line and column (in characters) of a byte offset; offsets past the end
    /// clamp to the end.
    pub(crate) fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        (line, column)
    }

    /// A miette named source for this file.
    pub(crate) fn named_source(&self) -> miette::NamedSource<Arc<str>> {
        miette::NamedSource::new(self.path.display().to_string(), Arc::clone(&self.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_from_one() {
        let file = SourceFile::new("p.yaml", "ab\ncd\n");
        assert_eq!(file.line_column(0), (1, 1));
        assert_eq!(file.line_column(4), (2, 2));
        assert_eq!(file.line_column(99), (3, 1));
    }
}
