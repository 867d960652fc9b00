//! What the answer lint reports: one diagnostic per problem, tied to the answer file's line
//! and the row's text, with a stable code. Rendering is the CLI's job.

use std::fmt;

use serde::Serialize;

/// How much a diagnostic matters. Any `Error` fails the lint; warnings never do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// The stable identity of a lint finding (`spur::answer::<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LintCode {
    AnswerTooLarge,
    AnswerNotUtf8,
    MissingVerdictLine,
    DuplicateVerdictLine,
    InvalidVerdictLine,
    VerdictLineDisagrees,
    EvidenceRuleDowngrade,
    DuplicateTable,
    TableHeaderMismatch,
    MalformedTable,
    IncompleteRow,
    WrongColumnCount,
    MissingRequirement,
    DuplicateRequirement,
    UnknownRequirement,
    MissingAc,
    DuplicateAc,
    UnresolvedAc,
    AmbiguousAc,
    UndeclaredAcTag,
    InvalidStatus,
    InvalidEvidenceType,
    EmptyEvidence,
    MissingAnchor,
    GlobAnchor,
    DirectoryAnchor,
    AnchorFileMissing,
    AnchorOutsideProject,
    AnchorLineOutOfRange,
}

impl LintCode {
    /// Every code, in documentation order.
    pub const ALL: [LintCode; 29] = [
        Self::AnswerTooLarge,
        Self::AnswerNotUtf8,
        Self::MissingVerdictLine,
        Self::DuplicateVerdictLine,
        Self::InvalidVerdictLine,
        Self::VerdictLineDisagrees,
        Self::EvidenceRuleDowngrade,
        Self::DuplicateTable,
        Self::TableHeaderMismatch,
        Self::MalformedTable,
        Self::IncompleteRow,
        Self::WrongColumnCount,
        Self::MissingRequirement,
        Self::DuplicateRequirement,
        Self::UnknownRequirement,
        Self::MissingAc,
        Self::DuplicateAc,
        Self::UnresolvedAc,
        Self::AmbiguousAc,
        Self::UndeclaredAcTag,
        Self::InvalidStatus,
        Self::InvalidEvidenceType,
        Self::EmptyEvidence,
        Self::MissingAnchor,
        Self::GlobAnchor,
        Self::DirectoryAnchor,
        Self::AnchorFileMissing,
        Self::AnchorOutsideProject,
        Self::AnchorLineOutOfRange,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Self::AnswerTooLarge => "spur::answer::too_large",
            Self::AnswerNotUtf8 => "spur::answer::not_utf8",
            Self::MissingVerdictLine => "spur::answer::missing_verdict_line",
            Self::DuplicateVerdictLine => "spur::answer::duplicate_verdict_line",
            Self::InvalidVerdictLine => "spur::answer::invalid_verdict_line",
            Self::VerdictLineDisagrees => "spur::answer::verdict_line_disagrees",
            Self::EvidenceRuleDowngrade => "spur::answer::evidence_rule_downgrade",
            Self::DuplicateTable => "spur::answer::duplicate_table",
            Self::TableHeaderMismatch => "spur::answer::table_header_mismatch",
            Self::MalformedTable => "spur::answer::malformed_table",
            Self::IncompleteRow => "spur::answer::incomplete_row",
            Self::WrongColumnCount => "spur::answer::wrong_column_count",
            Self::MissingRequirement => "spur::answer::missing_requirement",
            Self::DuplicateRequirement => "spur::answer::duplicate_requirement",
            Self::UnknownRequirement => "spur::answer::unknown_requirement",
            Self::MissingAc => "spur::answer::missing_ac",
            Self::DuplicateAc => "spur::answer::duplicate_ac",
            Self::UnresolvedAc => "spur::answer::unresolved_ac",
            Self::AmbiguousAc => "spur::answer::ambiguous_ac",
            Self::UndeclaredAcTag => "spur::answer::undeclared_ac_tag",
            Self::InvalidStatus => "spur::answer::invalid_status",
            Self::InvalidEvidenceType => "spur::answer::invalid_evidence_type",
            Self::EmptyEvidence => "spur::answer::empty_evidence",
            Self::MissingAnchor => "spur::answer::missing_anchor",
            Self::GlobAnchor => "spur::answer::glob_anchor",
            Self::DirectoryAnchor => "spur::answer::directory_anchor",
            Self::AnchorFileMissing => "spur::answer::anchor_file_missing",
            Self::AnchorOutsideProject => "spur::answer::anchor_outside_project",
            Self::AnchorLineOutOfRange => "spur::answer::anchor_line_out_of_range",
        }
    }

    pub const fn severity(self) -> Severity {
        match self {
            Self::VerdictLineDisagrees | Self::EvidenceRuleDowngrade => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for LintCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for LintCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
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
    pub code: LintCode,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

impl AnswerDiagnostic {
    pub fn new(code: LintCode, message: impl Into<String>) -> Self {
        Self {
            line: None,
            row: None,
            code,
            severity: code.severity(),
            message: message.into(),
            help: None,
        }
    }

    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// Attach the row at `line` whose text is `text`.
    pub fn at_row(mut self, line: usize, text: &str) -> Self {
        self.line = Some(line);
        self.row = Some(shorten(text.trim()));
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// `text` cut to [`ROW_TEXT_LIMIT`] characters, with `…` when cut.
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(ROW_TEXT_LIMIT) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_namespaced() {
        let mut names: Vec<_> = LintCode::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), LintCode::ALL.len());
        assert!(names.iter().all(|n| n.starts_with("spur::answer::")));
    }

    #[test]
    fn long_rows_are_shortened_on_a_char_boundary() {
        let row = "é".repeat(500);
        let short = shorten(&row);
        assert_eq!(short.chars().count(), ROW_TEXT_LIMIT + 1);
        assert!(short.ends_with('…'));
    }
}
