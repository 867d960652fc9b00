//! Row-level parsing: one raw row object to a requirement, an acceptance criterion or a
//! check, normalised (case, aliases), or to the field problems that reject it.

use super::artifact::{
    AcceptanceCriterion, Check, CheckStatus, EvidenceType, Requirement, RowStatus, Severity,
};
use super::outcome::FieldProblem;
use super::raw::{FromRawRow, Loose, RawRow};

impl FromRawRow for Requirement {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>> {
        requirement(row)
    }
}

impl FromRawRow for AcceptanceCriterion {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>> {
        acceptance_criterion(row)
    }
}

impl FromRawRow for Check {
    fn from_raw(row: &RawRow<'_>) -> Result<Self, Vec<FieldProblem>> {
        check(row)
    }
}

fn requirement(row: &RawRow<'_>) -> Result<Requirement, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let id = row_id(row, &mut problems);
    let status = row_status(row, &mut problems);
    match (id, status) {
        (Some(id), Some(status)) if problems.is_empty() => Ok(Requirement {
            id,
            status,
            evidence: evidence(row),
        }),
        _ => Err(problems),
    }
}

fn acceptance_criterion(row: &RawRow<'_>) -> Result<AcceptanceCriterion, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let id = row_id(row, &mut problems);
    let status = row_status(row, &mut problems);
    let evidence_type = match &row.evidence_type {
        None => None,
        Some(Loose::Str(s)) => {
            let parsed = EvidenceType::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "evidenceType",
                    problem: format!(
                        "{} is not test, command, static-ref, manual-review, llm-judge, n/a or a `+` compound of them",
                        brief_str(s)
                    ),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "evidenceType",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    };
    match (id, status) {
        (Some(id), Some(status)) if problems.is_empty() => Ok(AcceptanceCriterion {
            id,
            status,
            evidence_type,
            evidence: evidence(row),
        }),
        _ => Err(problems),
    }
}

fn check(row: &RawRow<'_>) -> Result<Check, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    // Precedence name → check → id; the first non-empty string wins.
    let name = [&row.name, &row.check, &row.id]
        .into_iter()
        .find_map(|field| field.as_ref().and_then(Loose::non_blank))
        .map(str::to_owned);
    if name.is_none() {
        problems.push(FieldProblem {
            field: "name",
            problem: "a check needs a label: a non-empty string `name`, `check` or `id`".to_owned(),
        });
    }
    let status = match &row.status {
        None => {
            problems.push(FieldProblem {
                field: "status",
                problem: "a check needs a status".to_owned(),
            });
            None
        }
        Some(Loose::Str(s)) => {
            let parsed = CheckStatus::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "status",
                    problem: format!("{} is not pass, fail or warn", brief_str(s)),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "status",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    };
    let severity = match &row.severity {
        None => None,
        Some(Loose::Str(s)) => {
            let parsed = Severity::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "severity",
                    problem: format!("{} is not blocker, major, minor or advisory", brief_str(s)),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "severity",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    };
    match (name, status) {
        (Some(name), Some(status)) if problems.is_empty() => Ok(Check {
            name,
            status,
            evidence: evidence(row),
            severity,
        }),
        _ => Err(problems),
    }
}

/// The row identifier: `id`, or its compatibility alias `scenario`. Both present must be
/// equal strings; anything else is a conflict.
fn row_id(row: &RawRow<'_>, problems: &mut Vec<FieldProblem>) -> Option<String> {
    match (&row.id, &row.scenario) {
        (None, None) => {
            problems.push(FieldProblem {
                field: "id",
                problem: "a row needs an `id` (or its alias `scenario`)".to_owned(),
            });
            None
        }
        (Some(value), None) | (None, Some(value)) => {
            let field = if row.id.is_some() { "id" } else { "scenario" };
            let parsed = value.non_blank().map(str::to_owned);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field,
                    problem: format!("must be a non-empty string, found {}", brief(value)),
                });
            }
            parsed
        }
        (Some(id), Some(scenario)) => match (id.non_blank(), scenario.non_blank()) {
            (Some(a), Some(b)) if a == b => Some(a.to_owned()),
            _ => {
                let problem = format!(
                    "`id` {} and `scenario` {} conflict: both present, they must be equal strings",
                    brief(id),
                    brief(scenario)
                );
                problems.push(FieldProblem {
                    field: "id",
                    problem,
                });
                problems.push(FieldProblem {
                    field: "scenario",
                    problem: "conflicts with `id`".to_owned(),
                });
                None
            }
        },
    }
}

fn row_status(row: &RawRow<'_>, problems: &mut Vec<FieldProblem>) -> Option<RowStatus> {
    match &row.status {
        None => {
            problems.push(FieldProblem {
                field: "status",
                problem: "a row needs a status".to_owned(),
            });
            None
        }
        Some(Loose::Str(s)) => {
            let parsed = RowStatus::parse(s);
            if parsed.is_none() {
                problems.push(FieldProblem {
                    field: "status",
                    problem: format!("{} is not MET, PARTIAL, UNMET or N/A", brief_str(s)),
                });
            }
            parsed
        }
        Some(other) => {
            problems.push(FieldProblem {
                field: "status",
                problem: format!("must be a string, found {}", brief(other)),
            });
            None
        }
    }
}

/// Evidence is kept only when it is a string; anything else counts as absent (hollow).
fn evidence(row: &RawRow<'_>) -> Option<String> {
    row.evidence
        .as_ref()
        .and_then(Loose::as_str)
        .map(str::to_owned)
}

/// A short rendering of a value for messages: scalars shown (truncated), containers named.
pub(super) fn brief(value: &Loose<'_>) -> String {
    match value {
        Loose::Str(s) => brief_str(s),
        Loose::Other { shown, .. } => shown.clone(),
    }
}

const SHOWN_CHARS: usize = 40;

pub(super) fn brief_str(s: &str) -> String {
    if s.chars().count() > SHOWN_CHARS {
        let head: String = s.chars().take(SHOWN_CHARS).collect();
        format!("{head:?}…")
    } else {
        format!("{s:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{parse_artifact, ArtifactOutcome, Verdict};

    fn outcome(text: &str) -> ArtifactOutcome {
        parse_artifact(text.as_bytes())
    }

    #[test]
    fn normalises_case_and_aliases() {
        let text = r#"{"wbs":"T","verdict":"partial","requirements":[
            {"scenario":"Scenario: a","status":"met","evidence":"x:1"},
            {"id":"R2","scenario":"R2","status":"n/a","evidence":"x"}],
          "acceptanceCriteria":[{"id":"AC-1","status":"Partial","evidenceType":"TEST+Static-Ref","evidence":"y"}],
          "checks":[{"name":"","check":"lint","id":"z","status":"WARN","severity":"MAJOR"},
                    {"id":"only-id","status":"Pass"}]}"#;
        let ArtifactOutcome::Valid(a) = outcome(text) else {
            panic!("valid expected")
        };
        assert_eq!(a.verdict, Verdict::Partial);
        assert_eq!(a.requirements[0].id, "Scenario: a");
        assert_eq!(a.requirements[0].status, RowStatus::Met);
        assert_eq!(a.requirements[1].status, RowStatus::NotApplicable);
        assert_eq!(a.acceptance_criteria[0].status, RowStatus::Partial);
        assert_eq!(
            a.acceptance_criteria[0]
                .evidence_type
                .as_ref()
                .map(ToString::to_string),
            Some("test+static-ref".to_owned())
        );
        // name is empty, so `check` wins over `id`.
        assert_eq!(a.checks[0].name, "lint");
        assert_eq!(a.checks[0].status, CheckStatus::Warn);
        assert_eq!(a.checks[0].severity, Some(Severity::Major));
        assert_eq!(a.checks[1].name, "only-id");
    }

    #[test]
    fn long_values_are_truncated_in_messages() {
        let long = "x".repeat(10_000);
        let reason = reason_of(&format!(
            r#"{{"wbs":"T","verdict":"{long}","requirements":[]}}"#
        ));
        assert!(reason.len() < 200, "{reason}");
        assert!(reason.contains('…'));
    }

    fn reason_of(text: &str) -> String {
        match outcome(text) {
            ArtifactOutcome::Invalid(invalidity) => invalidity.reason(),
            other => panic!("expected invalid, got {other:?}"),
        }
    }
}
