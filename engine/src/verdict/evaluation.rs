//! An artifact judged: its outcome, the stored and recomputed verdicts, the effective
//! verdict (the harsher of the two; UNKNOWN unless the artifact is valid) and the warnings.
//! The done gate and `spur verdict check` both start here.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::aggregate::{aggregate, Aggregation};
use super::artifact::Verdict;
use super::outcome::{ArtifactOutcome, OutcomeKind};
use crate::diagnostic::Code;

/// A warning with a stable code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The warning's stable code.
    pub code: Code,
    /// The warning, for people.
    pub message: String,
}

/// Everything a consumer needs to act on an artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Where the artifact was read from.
    pub path: PathBuf,
    /// What reading it found.
    pub outcome: ArtifactOutcome,
    /// The verdict the artifact stores (valid artifacts only).
    pub stored: Option<Verdict>,
    /// The recomputed aggregation (valid artifacts only).
    pub computed: Option<Aggregation>,
    /// What the artifact certifies: the harsher of stored and computed; UNKNOWN for any
    /// non-valid outcome or a wbs mismatch.
    pub effective: Verdict,
    /// The artifact's `wbs` differs from the expected task.
    pub wbs_mismatch: Option<WbsMismatch>,
    /// Warnings about the artifact (malformed, self-inconsistent, another task's).
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WbsMismatch {
    pub(crate) expected: String,
    pub(crate) found: String,
}

impl Evaluation {
    /// Judge `outcome`, read from `path`. `expected_wbs` is the task the artifact should
    /// certify (named in warnings; a different `wbs` in the artifact makes it UNKNOWN).
    pub fn new(path: &Path, outcome: ArtifactOutcome, expected_wbs: Option<&str>) -> Self {
        let mut warnings = Vec::new();
        let (stored, computed, mut effective, wbs_mismatch) = match &outcome {
            ArtifactOutcome::Valid(artifact) => {
                let aggregation = aggregate(artifact);
                let effective = artifact.verdict.harsher(aggregation.verdict);
                if artifact.verdict == Verdict::Pass && aggregation.verdict != Verdict::Pass {
                    warnings.push(Warning {
                        code: Code::VerdictSelfInconsistent,
                        message: format!(
                            "{}: stored verdict PASS is self-inconsistent: the rows recompute to {}",
                            path.display(),
                            aggregation.verdict
                        ),
                    });
                }
                let mismatch = expected_wbs
                    .filter(|expected| *expected != artifact.wbs)
                    .map(|expected| WbsMismatch {
                        expected: expected.to_owned(),
                        found: artifact.wbs.clone(),
                    });
                (
                    Some(artifact.verdict),
                    Some(aggregation),
                    effective,
                    mismatch,
                )
            }
            _ => (None, None, Verdict::Unknown, None),
        };
        if let Some(mismatch) = &wbs_mismatch {
            effective = effective.harsher(Verdict::Unknown);
            warnings.push(Warning {
                code: Code::VerdictWbsMismatch,
                message: format!(
                    "{}: the artifact certifies task {:?}, not {:?}",
                    path.display(),
                    mismatch.found,
                    mismatch.expected
                ),
            });
        }
        if let Some(warning) = malformed_warning(&outcome, path, expected_wbs) {
            warnings.insert(0, warning);
        }
        Self {
            path: path.to_path_buf(),
            outcome,
            stored,
            computed,
            effective,
            wbs_mismatch,
            warnings,
        }
    }

    /// The outcome without its payload.
    pub fn kind(&self) -> OutcomeKind {
        self.outcome.kind()
    }

    /// The recomputed verdict, if the artifact was valid.
    pub fn computed_verdict(&self) -> Option<Verdict> {
        self.computed.as_ref().map(|a| a.verdict)
    }

    /// A stored PASS that does not recompute to PASS.
    pub fn is_self_inconsistent(&self) -> bool {
        self.stored == Some(Verdict::Pass) && self.computed_verdict() != Some(Verdict::Pass)
    }
}

/// The one bounded `L4.malformed-verdict-artifact` warning for a non-valid artifact:
/// wbs, path, failure mode, and the rejected row count and fields.
pub(crate) fn malformed_warning(
    outcome: &ArtifactOutcome,
    path: &Path,
    expected_wbs: Option<&str>,
) -> Option<Warning> {
    let reason = outcome.reason()?;
    let artifact_wbs = match outcome {
        ArtifactOutcome::Invalid(invalidity) => invalidity.wbs.as_deref(),
        _ => None,
    };
    let wbs = expected_wbs.or(artifact_wbs).unwrap_or("(unknown)");
    let rows = match outcome {
        ArtifactOutcome::Invalid(invalidity) if !invalidity.rejected_rows.is_empty() => {
            let mut fields: Vec<&str> = Vec::new();
            for row in &invalidity.rejected_rows {
                for field in row.fields() {
                    if !fields.contains(&field) {
                        fields.push(field);
                    }
                }
            }
            format!(
                "; rejected rows: {}; invalid fields: {}",
                invalidity.rejected_rows.len(),
                fields.join(", ")
            )
        }
        _ => String::new(),
    };
    Some(Warning {
        code: Code::VerdictMalformedArtifact,
        message: format!(
            "task {wbs}: verdict artifact {} is {}: {reason}{rows}",
            path.display(),
            outcome.kind()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::parse_artifact;

    fn evaluate(text: &str, wbs: Option<&str>) -> Evaluation {
        Evaluation::new(Path::new("v.json"), parse_artifact(text.as_bytes()), wbs)
    }

    #[test]
    fn stored_pass_with_an_unmet_row_is_self_inconsistent_fail() {
        let e = evaluate(
            r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","status":"UNMET","evidence":"none"}]}"#,
            Some("T"),
        );
        assert_eq!(e.effective, Verdict::Fail);
        assert!(e.is_self_inconsistent());
        assert_eq!(e.warnings[0].code, Code::VerdictSelfInconsistent);
        assert!(e.warnings[0].message.contains("self-inconsistent"));
    }

    #[test]
    fn stored_fail_with_all_rows_met_stays_fail() {
        let e = evaluate(
            r#"{"wbs":"T","verdict":"FAIL","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}]}"#,
            None,
        );
        assert_eq!(e.computed_verdict(), Some(Verdict::Pass));
        assert_eq!(e.effective, Verdict::Fail);
        assert!(!e.is_self_inconsistent());
        assert!(e.warnings.is_empty());
    }

    #[test]
    fn another_tasks_artifact_is_unknown() {
        let e = evaluate(
            r#"{"wbs":"OTHER","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}]}"#,
            Some("T"),
        );
        assert_eq!(e.effective, Verdict::Unknown);
        assert_eq!(e.warnings[0].code, Code::VerdictWbsMismatch);
    }

    #[test]
    fn one_bounded_warning_per_invalid_artifact_naming_rows_and_fields() {
        let e = evaluate(
            r#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1"},{"id":"a","scenario":"b","status":"MET"}]}"#,
            None,
        );
        assert_eq!(e.effective, Verdict::Unknown);
        assert_eq!(e.warnings.len(), 1);
        let w = &e.warnings[0];
        assert_eq!(w.code, Code::VerdictMalformedArtifact);
        assert!(
            w.message
                .starts_with("task T: verdict artifact v.json is invalid"),
            "{}",
            w.message
        );
        assert!(
            w.message
                .ends_with("rejected rows: 2; invalid fields: status, id, scenario"),
            "{}",
            w.message
        );
    }
}
