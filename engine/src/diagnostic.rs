//! One diagnostic type for every finding the engine reports about a user's file: a
//! severity, a stable code (`spur::check::unknown-state`), a message, the exact span it is
//! about (plus secondary labelled spans, e.g. both places of a duplicate) and help text.
//! It renders through miette and serialises to the flat JSON form of `spur check --format
//! json`.

mod code;
mod coded;

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

pub use self::code::Code;
pub(crate) use self::coded::coded_diagnostic;
use crate::source::{SourceFile, Span};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// For information: nothing to fix.
    Info,
    /// Worth fixing; does not stop `spur check` from passing.
    Warning,
    /// Must be fixed: the pipeline does not check.
    Error,
}

impl Severity {
    /// The severity as written in output (`info`, `warning`, `error`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A span with a label shown under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Label {
    pub(crate) span: Span,
    pub(crate) text: String,
}

impl Label {
    pub(crate) fn new(span: Span, text: impl Into<String>) -> Self {
        Self {
            span,
            text: text.into(),
        }
    }
}

/// A finding about a source file.
#[derive(Clone)]
pub struct Diagnostic {
    pub(crate) severity: Severity,
    /// Stable code, e.g. `spur::check::unknown-state`. Never changes once released.
    pub(crate) code: Code,
    pub(crate) message: String,
    /// The offending value.
    pub(crate) primary: Label,
    /// Other places that explain the finding (e.g. the first of two duplicates).
    pub(crate) secondary: Vec<Label>,
    pub(crate) help: Option<String>,
    source: SourceFile,
    named: miette::NamedSource<Arc<str>>,
}

impl fmt::Debug for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Diagnostic")
            .field("severity", &self.severity)
            .field("code", &self.code)
            .field("message", &self.message)
            .field("primary", &self.primary)
            .field("secondary", &self.secondary)
            .field("help", &self.help)
            .field("file", &self.source.path())
            .finish()
    }
}

impl Diagnostic {
    pub(crate) fn new(
        severity: Severity,
        code: Code,
        source: &SourceFile,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity,
            code,
            message: message.into(),
            primary: Label::new(span, ""),
            secondary: Vec::new(),
            help: None,
            source: source.clone(),
            named: source.named_source(),
        }
    }

    pub(crate) fn error(
        code: Code,
        source: &SourceFile,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, code, source, span, message)
    }

    pub(crate) fn warning(
        code: Code,
        source: &SourceFile,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, source, span, message)
    }

    pub(crate) fn info(
        code: Code,
        source: &SourceFile,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Info, code, source, span, message)
    }

    /// The label under the primary span.
    #[must_use]
    pub(crate) fn label(mut self, text: impl Into<String>) -> Self {
        self.primary.text = text.into();
        self
    }

    #[must_use]
    pub(crate) fn secondary(mut self, span: Span, text: impl Into<String>) -> Self {
        self.secondary.push(Label::new(span, text));
        self
    }

    #[must_use]
    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The same finding at another severity.
    #[must_use]
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub(crate) fn source(&self) -> &SourceFile {
        &self.source
    }

    /// Whether the finding is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `line L, column C: message (help)`: the diagnostic in one line, for a message that
    /// carries it (an action's error, a deny message, a warning of a run).
    pub fn one_line(&self) -> String {
        let (line, column) = self.source.line_column(self.primary.span.offset);
        match &self.help {
            Some(help) => format!("line {line}, column {column}: {} ({help})", self.message),
            None => format!("line {line}, column {column}: {}", self.message),
        }
    }

    /// The flat JSON form: `{severity, code, message, file, line, column, offset, length,
    /// help}` (line and column 1-based, column in characters; offset and length in bytes).
    pub fn to_json(&self) -> JsonDiagnostic {
        let (line, column) = self.source.line_column(self.primary.span.offset);
        JsonDiagnostic {
            severity: self.severity,
            code: self.code,
            message: self.message.clone(),
            file: self.source.path().display().to_string(),
            line,
            column,
            offset: self.primary.span.offset,
            length: self.primary.span.len,
            help: self.help.clone(),
        }
    }
}

/// The JSON form of a [`Diagnostic`].
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct JsonDiagnostic {
    pub(crate) severity: Severity,
    pub(crate) code: Code,
    pub(crate) message: String,
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) offset: usize,
    pub(crate) length: usize,
    pub(crate) help: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

impl miette::Diagnostic for Diagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.named)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let label = |l: &Label| (!l.text.is_empty()).then(|| l.text.clone());
        let primary = std::iter::once(miette::LabeledSpan::new_primary_with_span(
            label(&self.primary),
            self.primary.span,
        ));
        let secondary = self
            .secondary
            .iter()
            .map(move |l| miette::LabeledSpan::new_with_span(label(l), l.span));
        Some(Box::new(primary.chain(secondary)))
    }
}

/// Counts of findings by severity, for summaries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// How many errors.
    pub errors: usize,
    /// How many warnings.
    pub warnings: usize,
    pub(crate) infos: usize,
}

impl Tally {
    /// Count `diagnostics` by severity.
    pub fn of<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Self {
        let mut tally = Tally::default();
        for d in diagnostics {
            match d.severity {
                Severity::Error => tally.errors += 1,
                Severity::Warning => tally.warnings += 1,
                Severity::Info => tally.infos += 1,
            }
        }
        tally
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn count(n: usize, word: &str) -> String {
            format!("{n} {word}{}", if n == 1 { "" } else { "s" })
        }
        let mut parts = Vec::new();
        if self.errors > 0 {
            parts.push(count(self.errors, "error"));
        }
        if self.warnings > 0 {
            parts.push(count(self.warnings, "warning"));
        }
        if self.infos > 0 {
            parts.push(count(self.infos, "note"));
        }
        if parts.is_empty() {
            f.write_str("ok")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// The closest candidate to `word` (Jaro-Winkler ≥ 0.8 or Levenshtein ≤ 2), for "did you
/// mean" hints.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| {
            (
                c,
                strsim::jaro_winkler(word, c),
                strsim::levenshtein(word, c),
            )
        })
        .filter(|(c, jw, lev)| *jw >= 0.8 || (*lev <= 2 && *lev < c.len().max(word.len())))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_name() {
        assert_eq!(
            did_you_mean("recrod", ["review", "record", "done"]),
            Some("record")
        );
        assert_eq!(
            did_you_mean("initalState", ["initialState", "name"]),
            Some("initialState")
        );
        assert_eq!(did_you_mean("zzz", ["record", "done"]), None);
    }

    #[test]
    fn json_form_has_one_based_line_and_column() {
        let file = SourceFile::new("p.yaml", "a: 1\nto: recrod\n");
        let d = Diagnostic::error(Code::CheckUnknownState, &file, Span::new(9, 6), "m").help("h");
        let json = d.to_json();
        assert_eq!(
            (json.line, json.column, json.offset, json.length),
            (2, 5, 9, 6)
        );
        assert_eq!(json.help.as_deref(), Some("h"));
    }
}
