//! Derivation: linted rows → the verdict artifact, through the one aggregation function.
//!
//! A clean answer becomes its rows (in task order) plus three checks: `answer-lint` (pass),
//! `evidence-rule-pass` / `evidence-rule-failed` (aggregation rule 6: a MET core behaviour-bearing
//! AC without `test`/`command` evidence is written PARTIAL) and `answer-verdict-line` (the
//! answer's own `Verdict:` line, which can only make the result harsher). An answer that
//! fails the lint becomes an explicit FAIL artifact — every requirement and criterion UNMET,
//! and a blocking `answer-lint` check naming the errors — so a stale PASS from an earlier
//! verification can never outlive a bad answer. Either way the stored verdict is the
//! aggregation of the stored rows: a derived artifact is never self-inconsistent.

use std::collections::HashMap;

use serde_json::Value;

use super::diagnostic::AnswerDiagnostic;
use super::lint::{LintReport, LintedAc, LintedRequirement};
use super::parse::{Answer, DeclaredVerdict};
use super::task_file::TaskFile;
use crate::diagnostic::Code;
use crate::verdict::{
    aggregate, AcceptanceCriterion, Artifact, Check, CheckStatus, EvidenceKind, EvidenceType,
    Requirement, RowStatus, Severity, Verdict,
};
use crate::wbs::Wbs;

/// The `source` every derived artifact carries.
pub(crate) const SOURCE: &str = "spur task verdict";

/// Names of the checks derivation adds.
pub(crate) mod check_names {
    pub(crate) const ANSWER_LINT: &str = "answer-lint";
    pub(crate) const EVIDENCE_RULE_PASS: &str = "evidence-rule-pass";
    pub(crate) const EVIDENCE_RULE_FAILED: &str = "evidence-rule-failed";
    pub(crate) const ANSWER_VERDICT_LINE: &str = "answer-verdict-line";
}

/// How many lint errors the `answer-lint` check names before summarising.
const LISTED_ERRORS: usize = 10;

/// The artifact, plus the warnings derivation itself raises (downgrades, a `Verdict:` line
/// that disagrees with the rows).
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    pub artifact: Artifact,
    pub(crate) warnings: Vec<AnswerDiagnostic>,
}

/// Build the artifact for `wbs` from a linted answer. `answer_name` names the answer file
/// in check evidence.
pub fn derive_artifact(
    wbs: &Wbs,
    task: &TaskFile,
    answer: &Answer,
    report: &LintReport,
    answer_name: &str,
) -> Derivation {
    if report.has_errors() {
        return Derivation {
            artifact: lint_failure_artifact(wbs, task, report, answer_name),
            warnings: Vec::new(),
        };
    }
    let mut warnings = Vec::new();
    let by_id: HashMap<&str, &LintedRequirement> = report
        .requirements
        .iter()
        .map(|row| (row.id.as_str(), row))
        .collect();
    let by_criterion: HashMap<usize, &LintedAc> = report
        .acceptance
        .iter()
        .map(|row| (row.criterion, row))
        .collect();
    let requirements: Vec<Requirement> = task
        .requirements
        .iter()
        .filter_map(|r| by_id.get(r.id.as_str()).copied())
        .map(|row| Requirement {
            id: row.id.clone(),
            status: row.status,
            evidence: Some(row.evidence.clone()),
        })
        .collect();

    let mut downgraded = Vec::new();
    let mut executable = 0;
    let mut exempt = 0;
    let mut acceptance_criteria = Vec::new();
    for (index, criterion) in task.acceptance.iter().enumerate() {
        let Some(row) = by_criterion.get(&index).copied() else {
            continue;
        };
        let mut ac = AcceptanceCriterion {
            id: criterion.label.clone(),
            status: row.status,
            evidence_type: Some(row.evidence_type.clone()),
            evidence: Some(row.evidence.clone()),
        };
        if ac.status == RowStatus::Met {
            if !ac.is_core_behaviour() {
                exempt += 1;
            } else if row.evidence_type.is_executable() {
                executable += 1;
            } else {
                ac.status = RowStatus::Partial;
                downgraded.push(format!("`{}` ({})", ac.id, row.evidence_type));
                warnings.push(
                    AnswerDiagnostic::new(
                        Code::AnswerEvidenceRuleDowngrade,
                        format!(
                            "`{}` is MET with only {} evidence; it is written PARTIAL",
                            ac.id, row.evidence_type
                        ),
                    )
                    .at_row(row.line, &row_text(answer, row.line))
                    .with_help("a core behaviour-bearing criterion needs `test` or `command` evidence, or an [advisory]/[non-core]/[non-behavior]/[docs-only] tag in the task"),
                );
            }
        }
        acceptance_criteria.push(ac);
    }

    let mut checks = vec![Check {
        name: check_names::ANSWER_LINT.to_owned(),
        status: CheckStatus::Pass,
        evidence: Some(format!(
            "{answer_name}: no lint errors ({} warning{})",
            report.diagnostics.len(),
            plural(report.diagnostics.len())
        )),
        severity: Some(Severity::Blocker),
    }];
    checks.push(if downgraded.is_empty() {
        Check {
            name: check_names::EVIDENCE_RULE_PASS.to_owned(),
            status: CheckStatus::Pass,
            evidence: Some(format!(
                "{executable} MET behaviour-bearing criteri{} with test/command evidence; {exempt} exempt by tag",
                if executable == 1 { "on" } else { "a" }
            )),
            severity: Some(Severity::Major),
        }
    } else {
        Check {
            name: check_names::EVIDENCE_RULE_FAILED.to_owned(),
            status: CheckStatus::Fail,
            evidence: Some(format!(
                "downgraded to PARTIAL (MET without test/command evidence): {}",
                downgraded.join(", ")
            )),
            severity: Some(Severity::Major),
        }
    });

    let mut artifact = Artifact {
        wbs: wbs.to_string(),
        verdict: Verdict::Unknown,
        requirements,
        acceptance_criteria,
        checks,
        source: Some(Value::String(SOURCE.to_owned())),
    };
    let rows_verdict = aggregate(&artifact).verdict;
    if let Some(line) = answer.verdict_line {
        artifact
            .checks
            .push(verdict_line_check(line.verdict, line.line, answer_name));
        let declared = declared(line.verdict);
        if declared != rows_verdict {
            let outcome = if declared.harsher(rows_verdict) == declared {
                format!("the artifact keeps the harsher {declared}")
            } else {
                format!("the rows win: the artifact is {rows_verdict}")
            };
            warnings.push(
                AnswerDiagnostic::new(
                    Code::AnswerVerdictLineDisagrees,
                    format!(
                        "the answer declares `Verdict: {}` but its rows aggregate to {rows_verdict}; {outcome}",
                        line.verdict.as_str()
                    ),
                )
                .at_row(line.line, &format!("Verdict: {}", line.verdict.as_str())),
            );
        }
    }
    artifact.verdict = aggregate(&artifact).verdict;
    Derivation { artifact, warnings }
}

/// The explicit FAIL artifact written when the answer fails the lint.
fn lint_failure_artifact(
    wbs: &Wbs,
    task: &TaskFile,
    report: &LintReport,
    answer_name: &str,
) -> Artifact {
    let errors: Vec<&AnswerDiagnostic> =
        report.diagnostics.iter().filter(|d| d.is_error()).collect();
    let not_certified = format!(
        "not certified: {answer_name} failed the answer lint (see check {})",
        check_names::ANSWER_LINT
    );
    let mut listed: Vec<String> = errors
        .iter()
        .take(LISTED_ERRORS)
        .map(|d| match d.line {
            Some(line) => format!("line {line}: {} {}", d.code, d.message),
            None => format!("{} {}", d.code, d.message),
        })
        .collect();
    if errors.len() > LISTED_ERRORS {
        listed.push(format!("and {} more", errors.len() - LISTED_ERRORS));
    }
    let mut artifact = Artifact {
        wbs: wbs.to_string(),
        verdict: Verdict::Fail,
        requirements: task
            .requirements
            .iter()
            .map(|r| Requirement {
                id: r.id.clone(),
                status: RowStatus::Unmet,
                evidence: Some(not_certified.clone()),
            })
            .collect(),
        acceptance_criteria: task
            .acceptance
            .iter()
            .map(|ac| AcceptanceCriterion {
                id: ac.label.clone(),
                status: RowStatus::Unmet,
                evidence_type: Some(EvidenceType::single(EvidenceKind::NotApplicable)),
                evidence: Some(not_certified.clone()),
            })
            .collect(),
        checks: vec![Check {
            name: check_names::ANSWER_LINT.to_owned(),
            status: CheckStatus::Fail,
            evidence: Some(format!(
                "{answer_name}: {} lint error{}: {}",
                errors.len(),
                plural(errors.len()),
                listed.join("; ")
            )),
            severity: Some(Severity::Blocker),
        }],
        source: Some(Value::String(SOURCE.to_owned())),
    };
    artifact.verdict = aggregate(&artifact).verdict;
    artifact
}

/// The `answer-verdict-line` check: PASS passes, PARTIAL is a major warning, FAIL a blocker.
fn verdict_line_check(verdict: DeclaredVerdict, line: usize, answer_name: &str) -> Check {
    let (status, severity) = match verdict {
        DeclaredVerdict::Pass => (CheckStatus::Pass, Severity::Major),
        DeclaredVerdict::Partial => (CheckStatus::Warn, Severity::Major),
        DeclaredVerdict::Fail => (CheckStatus::Fail, Severity::Blocker),
    };
    Check {
        name: check_names::ANSWER_VERDICT_LINE.to_owned(),
        status,
        evidence: Some(format!(
            "{answer_name}:{line} declares Verdict: {}",
            verdict.as_str()
        )),
        severity: Some(severity),
    }
}

fn declared(verdict: DeclaredVerdict) -> Verdict {
    match verdict {
        DeclaredVerdict::Pass => Verdict::Pass,
        DeclaredVerdict::Partial => Verdict::Partial,
        DeclaredVerdict::Fail => Verdict::Fail,
    }
}

fn row_text(answer: &Answer, line: usize) -> String {
    let at = answer.acceptance.partition_point(|r| r.line < line);
    answer
        .acceptance
        .get(at)
        .filter(|r| r.line == line)
        .map_or_else(String::new, |r| r.text.clone())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::anchor::AnchorChecker;
    use crate::answer::lint::lint;
    use crate::answer::parse::parse_answer;
    use crate::answer::task_file::parse_task_file;
    use crate::verdict::{parse_artifact, ArtifactOutcome, Evaluation};
    use std::path::Path;

    const TASK: &str = "## Requirements\n- R1 a\n- R2 b\n## Acceptance Criteria\n- [ ] AC-1: CLI emits JSON\n- [ ] [advisory] Docs mention it\n";

    fn derive(text: &str) -> Derivation {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.rs"), "1\n2\n3\n").unwrap();
        let task = parse_task_file(Path::new("task.md"), TASK).unwrap();
        let mut checker = AnchorChecker::new(tmp.path()).unwrap();
        let answer = parse_answer(text);
        let report = lint(&answer, &task, &mut checker);
        derive_artifact(
            &Wbs::parse("T1").unwrap(),
            &task,
            &answer,
            &report,
            "answer.md",
        )
    }

    fn answer(verdict: &str, ac1: &str, docs: &str) -> String {
        format!(
            "Verdict: {verdict}\n\n| Req | Status | Evidence |\n|---|---|---|\n| R2 | MET | ./a.rs:2 |\n| R1 | MET | ./a.rs:1 |\n\n| AC | Status | Evidence Type | Evidence |\n|---|---|---|---|\n| AC-1 | MET | {ac1} | ./a.rs:3 |\n| Docs mention it | MET | {docs} | ./a.rs:1 |\n"
        )
    }

    /// The stored verdict is what the contract's own evaluation recomputes.
    fn assert_self_consistent(artifact: &Artifact) {
        let ArtifactOutcome::Valid(parsed) = parse_artifact(artifact.to_json().as_bytes()) else {
            panic!("derived artifact must parse: {}", artifact.to_json());
        };
        let evaluation = Evaluation::new(
            Path::new("v.json"),
            ArtifactOutcome::Valid(parsed),
            Some("T1"),
        );
        assert_eq!(evaluation.stored, Some(artifact.verdict));
        assert_eq!(evaluation.effective, artifact.verdict);
    }

    fn check<'a>(artifact: &'a Artifact, name: &str) -> Option<&'a Check> {
        artifact.checks.iter().find(|c| c.name == name)
    }

    #[test]
    fn a_clean_answer_derives_pass_with_rows_in_task_order() {
        let d = derive(&answer("PASS", "test", "static-ref"));
        assert_eq!(d.artifact.verdict, Verdict::Pass);
        assert_eq!(d.artifact.requirements[0].id, "R1");
        assert_eq!(
            d.artifact.acceptance_criteria[1].id,
            "[advisory] Docs mention it"
        );
        assert!(check(&d.artifact, check_names::EVIDENCE_RULE_PASS).is_some());
        assert!(d.warnings.is_empty());
        assert_self_consistent(&d.artifact);
    }

    #[test]
    fn met_behaviour_ac_with_only_static_ref_is_downgraded_to_partial() {
        let d = derive(&answer("PASS", "static-ref+manual-review", "static-ref"));
        assert_eq!(d.artifact.verdict, Verdict::Partial);
        assert_eq!(d.artifact.acceptance_criteria[0].status, RowStatus::Partial);
        assert_eq!(
            d.artifact.acceptance_criteria[1].status,
            RowStatus::Met,
            "advisory is exempt"
        );
        let failed = check(&d.artifact, check_names::EVIDENCE_RULE_FAILED).unwrap();
        assert_eq!(failed.status, CheckStatus::Fail);
        assert!(check(&d.artifact, check_names::EVIDENCE_RULE_PASS).is_none());
        let codes: Vec<_> = d.warnings.iter().map(|w| w.code).collect();
        assert_eq!(
            codes,
            [
                Code::AnswerEvidenceRuleDowngrade,
                Code::AnswerVerdictLineDisagrees
            ]
        );
        assert_self_consistent(&d.artifact);
    }

    #[test]
    fn the_verdict_line_only_makes_it_harsher() {
        let d = derive(&answer("PARTIAL", "test", "static-ref"));
        assert_eq!(d.artifact.verdict, Verdict::Partial);
        assert_self_consistent(&d.artifact);
        let d = derive(&answer("FAIL", "command", "static-ref"));
        assert_eq!(d.artifact.verdict, Verdict::Fail);
        assert_eq!(d.warnings[0].code, Code::AnswerVerdictLineDisagrees);
        assert_self_consistent(&d.artifact);
    }

    #[test]
    fn a_lint_failure_derives_an_explicit_self_consistent_fail() {
        let d = derive(
            "Verdict: PASS\n| Req | Status | Evidence |\n|---|---|---|\n| R1 | MET | ./a.rs:9 |\n",
        );
        assert_eq!(d.artifact.verdict, Verdict::Fail);
        assert!(d
            .artifact
            .requirements
            .iter()
            .all(|r| r.status == RowStatus::Unmet));
        assert_eq!(d.artifact.acceptance_criteria.len(), 2);
        let lint = check(&d.artifact, check_names::ANSWER_LINT).unwrap();
        assert_eq!(lint.status, CheckStatus::Fail);
        assert!(lint
            .evidence
            .as_deref()
            .unwrap()
            .contains("anchor-line-out-of-range"));
        assert_self_consistent(&d.artifact);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Whatever the answer says, derivation never panics and its artifact parses and
        /// recomputes to exactly its stored verdict.
        #[test]
        fn any_answer_derives_a_valid_self_consistent_artifact(
            rows in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("| R1 | MET | ./a.rs:1 |".to_owned()),
                    proptest::strategy::Just("| R2 | PARTIAL | ./a.rs:2-3 |".to_owned()),
                    proptest::strategy::Just("| AC-1 | MET | test | ./a.rs:3 |".to_owned()),
                    proptest::strategy::Just("| AC-1 | MET | static-ref | ./a.rs:3 |".to_owned()),
                    proptest::strategy::Just("| Docs mention it | MET | llm-judge | ./a.rs:1 |".to_owned()),
                    proptest::strategy::Just("| Docs mention it | N/A | n/a | later |".to_owned()),
                    proptest::string::string_regex("\\|? ?(R[0-9]|AC-[0-9]|Docs mention it|`|\\\\|)? ?\\|? ?(MET|PARTIAL|UNMET|N/A|met)? ?\\|? ?(test|static-ref|n/a|x\\+y)? ?\\|? ?(\\./a\\.rs:[0-9]|a/\\*\\.rs|`|é|/)* ?\\|?").unwrap(),
                ],
                0..12,
            ),
            verdict in "(Verdict: (PASS|PARTIAL|FAIL|pass)|)",
        ) {
            let mut text = format!("{verdict}\n| Req | Status | Evidence |\n|---|---|---|\n");
            let split = rows.len() / 2;
            for (i, row) in rows.iter().enumerate() {
                if i == split {
                    text.push_str("\n| AC | Status | Evidence Type | Evidence |\n|---|---|---|---|\n");
                }
                text.push_str(row);
                text.push('\n');
            }
            let d = derive(&text);
            assert_self_consistent(&d.artifact);
        }
    }
}
