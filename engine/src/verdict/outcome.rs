//! What reading a verdict artifact can come to: missing, malformed, invalid (with the
//! problems and the rejected rows) or valid, and the one-line reason each failure gives.

use std::fmt;

use super::artifact::Artifact;

/// The four outcomes of reading an artifact.
#[derive(Debug, Clone, PartialEq)]
pub enum ArtifactOutcome {
    /// Absent, empty or whitespace only.
    Missing {
        /// Which way it is missing.
        detail: MissingDetail,
    },
    /// Not JSON.
    Malformed {
        /// The JSON parser's message.
        error: String,
    },
    /// JSON, but not a verdict artifact.
    Invalid(Invalidity),
    /// A valid artifact, normalised.
    Valid(Artifact),
}

/// Which way an artifact is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingDetail {
    /// No file.
    Absent,
    /// A file of zero bytes.
    Empty,
    /// A file of whitespace only.
    Whitespace,
}

impl MissingDetail {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MissingDetail::Absent => "file does not exist",
            MissingDetail::Empty => "file is empty",
            MissingDetail::Whitespace => "file holds only whitespace",
        }
    }
}

/// Why a JSON document is not a valid artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalidity {
    /// Problems with the artifact as a whole (root type, top-level fields, size, reading).
    pub(crate) problems: Vec<String>,
    /// Rows that were rejected, in file order.
    pub(crate) rejected_rows: Vec<RejectedRow>,
    /// The artifact's `wbs` when it could be read, for the warning.
    pub(crate) wbs: Option<String>,
}

/// The array a row sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// `requirements`.
    Requirements,
    /// `acceptanceCriteria`.
    AcceptanceCriteria,
    /// `checks`.
    Checks,
}

impl Section {
    /// The array's name in the artifact (`acceptanceCriteria`).
    pub fn as_str(self) -> &'static str {
        match self {
            Section::Requirements => "requirements",
            Section::AcceptanceCriteria => "acceptanceCriteria",
            Section::Checks => "checks",
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rejected row and the fields that made it invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RejectedRow {
    pub(crate) section: Section,
    pub(crate) index: usize,
    pub(crate) problems: Vec<FieldProblem>,
}

/// One field of a rejected row and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldProblem {
    /// The field name, or `row` when the row itself is not an object.
    pub(crate) field: &'static str,
    pub(crate) problem: String,
}

impl RejectedRow {
    pub(crate) fn fields(&self) -> Vec<&'static str> {
        let mut fields: Vec<&'static str> = Vec::new();
        for p in &self.problems {
            if !fields.contains(&p.field) {
                fields.push(p.field);
            }
        }
        fields
    }
}

/// How many rejected rows a reason or warning spells out before summarising the rest.
const SHOWN_ROWS: usize = 5;

impl Invalidity {
    /// One line naming the failure mode, bounded whatever the artifact holds.
    pub(crate) fn reason(&self) -> String {
        let mut parts: Vec<String> = self.problems.iter().take(SHOWN_ROWS).cloned().collect();
        if self.problems.len() > SHOWN_ROWS {
            parts.push(format!(
                "{} more problems",
                self.problems.len() - SHOWN_ROWS
            ));
        }
        if !self.rejected_rows.is_empty() {
            let shown: Vec<String> = self
                .rejected_rows
                .iter()
                .take(SHOWN_ROWS)
                .map(|row| {
                    let detail: Vec<String> = row
                        .problems
                        .iter()
                        .map(|p| format!("{}: {}", p.field, p.problem))
                        .collect();
                    format!("{}[{}] ({})", row.section, row.index, detail.join("; "))
                })
                .collect();
            let more = self.rejected_rows.len().saturating_sub(SHOWN_ROWS);
            let tail = if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            };
            parts.push(format!(
                "{} rejected {}: {}{}",
                self.rejected_rows.len(),
                plural(self.rejected_rows.len(), "row", "rows"),
                shown.join(", "),
                tail
            ));
        }
        parts.join("; ")
    }
}

impl ArtifactOutcome {
    /// An invalid artifact with one whole-artifact problem.
    pub(crate) fn invalid(problem: String) -> Self {
        ArtifactOutcome::Invalid(Invalidity {
            problems: vec![problem],
            rejected_rows: Vec::new(),
            wbs: None,
        })
    }

    /// The outcome without its payload.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            ArtifactOutcome::Missing { .. } => OutcomeKind::Missing,
            ArtifactOutcome::Malformed { .. } => OutcomeKind::Malformed,
            ArtifactOutcome::Invalid(_) => OutcomeKind::Invalid,
            ArtifactOutcome::Valid(_) => OutcomeKind::Valid,
        }
    }

    /// The failure mode in words, `None` for a valid artifact.
    pub fn reason(&self) -> Option<String> {
        match self {
            ArtifactOutcome::Missing { detail } => Some(format!(
                "missing verify verdict artifact ({})",
                detail.as_str()
            )),
            ArtifactOutcome::Malformed { error } => Some(format!("malformed JSON: {error}")),
            ArtifactOutcome::Invalid(invalidity) => Some(invalidity.reason()),
            ArtifactOutcome::Valid(_) => None,
        }
    }

    /// The artifact, when valid.
    pub fn artifact(&self) -> Option<&Artifact> {
        match self {
            ArtifactOutcome::Valid(artifact) => Some(artifact),
            _ => None,
        }
    }
}

/// The outcome without its payload (for JSON and matching).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    /// Absent, empty or whitespace only.
    Missing,
    /// Not JSON.
    Malformed,
    /// JSON, but not a verdict artifact.
    Invalid,
    /// A valid artifact.
    Valid,
}

impl OutcomeKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Missing => "missing",
            OutcomeKind::Malformed => "malformed",
            OutcomeKind::Invalid => "invalid",
            OutcomeKind::Valid => "valid",
        }
    }
}

impl fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::parse_artifact;

    #[test]
    fn reports_every_rejected_row_but_bounds_the_reason() {
        let rows: Vec<String> = (0..50).map(|i| format!(r#"{{"id":"R{i}"}}"#)).collect();
        let text = format!(
            r#"{{"wbs":"T","verdict":"PASS","requirements":[{}]}}"#,
            rows.join(",")
        );
        let ArtifactOutcome::Invalid(invalidity) = parse_artifact(text.as_bytes()) else {
            panic!("invalid expected")
        };
        assert_eq!(invalidity.rejected_rows.len(), 50);
        let reason = invalidity.reason();
        assert!(
            reason.starts_with("50 rejected rows: requirements[0]"),
            "{reason}"
        );
        assert!(reason.ends_with("and 45 more"), "{reason}");
        assert!(reason.len() < 600, "{}", reason.len());
    }
}
