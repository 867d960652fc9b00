//! What the answer lint reports: one diagnostic per problem, tied to the answer file's line
//! and the row's text, with a stable code. Rendering is the CLI's job.

use serde::Serialize;

use crate::diagnostic::Code;

/// How much a diagnostic matters. Any `Error` fails the lint; warnings never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Error,
    Warning,
}

/// How much a lint finding matters: two findings only warn, every other one fails the lint.
pub(crate) const fn severity_of(code: Code) -> Severity {
    match code {
        Code::AnswerVerdictLineDisagrees | Code::AnswerEvidenceRuleDowngrade => Severity::Warning,
        _ => Severity::Error,
    }
}

/// The longest row text a diagnostic carries; a 10,000-column row is cut, not echoed.
const ROW_TEXT_LIMIT: usize = 200;

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswerDiagnostic {
    /// 1-based line in the answer file; `None` for findings about the file as a whole.
    pub line: Option<usize>,
    /// The row's text as written (shortened when long); `None` when no row is involved.
    pub row: Option<String>,
    /// The finding's stable code.
    pub code: Code,
    pub(crate) severity: Severity,
    /// The finding, for people.
    pub message: String,
    /// What to do about it, when there is something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

impl AnswerDiagnostic {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            line: None,
            row: None,
            code,
            severity: severity_of(code),
            message: message.into(),
            help: None,
        }
    }

    pub(crate) fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// Attach the row at `line` whose text is `text`.
    pub(crate) fn at_row(mut self, line: usize, text: &str) -> Self {
        self.line = Some(line);
        self.row = Some(shorten(text.trim()));
        self
    }

    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Whether the finding is an error (it fails the lint).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// `text` cut to [`ROW_TEXT_LIMIT`] characters, with `…` when cut.
pub(crate) fn shorten(text: &str) -> String {
    match text.char_indices().nth(ROW_TEXT_LIMIT) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_rows_are_shortened_on_a_char_boundary() {
        let row = "é".repeat(500);
        let short = shorten(&row);
        assert_eq!(short.chars().count(), ROW_TEXT_LIMIT + 1);
        assert!(short.ends_with('…'));
    }
}
