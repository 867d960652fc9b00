//! Aggregation never softens: generated artifacts, each property searched over
//! at least 10,000 of them. Artifacts go through their JSON and the one parser, so what is
//! aggregated is what a verifier could have written.

use proptest::prelude::*;
use proptest::sample::select;
use spur_engine::verdict::{
    aggregate, parse_artifact, AcceptanceCriterion, Artifact, ArtifactOutcome, Check, CheckStatus,
    Evaluation, EvidenceKind, EvidenceType, Requirement, RowStatus, Severity, Verdict,
};
use std::path::Path;

use crate::property::property;

const CASES: u32 = 10_000;

fn verdict() -> impl Strategy<Value = Verdict> {
    select(vec![
        Verdict::Pass,
        Verdict::Unknown,
        Verdict::Partial,
        Verdict::Fail,
    ])
}

fn row_status() -> impl Strategy<Value = RowStatus> {
    select(vec![
        RowStatus::Met,
        RowStatus::Partial,
        RowStatus::Unmet,
        RowStatus::NotApplicable,
    ])
}

fn evidence() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => Just(Some("src/lib.rs:12".to_owned())),
        1 => Just(None),
        1 => Just(Some(String::new())),
        1 => Just(Some(" \t\n".to_owned())),
        1 => "[ -~]{0,12}".prop_map(Some),
    ]
}

fn requirement() -> impl Strategy<Value = Requirement> {
    ("R[0-9]{1,2}", row_status(), evidence()).prop_map(|(id, status, evidence)| Requirement {
        id,
        status,
        evidence,
    })
}

fn evidence_type() -> impl Strategy<Value = Option<EvidenceType>> {
    let kind = select(vec![
        EvidenceKind::Test,
        EvidenceKind::Command,
        EvidenceKind::StaticRef,
        EvidenceKind::ManualReview,
        EvidenceKind::LlmJudge,
        EvidenceKind::NotApplicable,
    ]);
    prop_oneof![
        1 => Just(None),
        4 => proptest::collection::vec(kind, 1..3).prop_map(EvidenceType::new),
    ]
}

fn acceptance_criterion() -> impl Strategy<Value = AcceptanceCriterion> {
    let id = prop_oneof![
        "AC-[0-9]",
        select(vec![
            "AC-1 [advisory]",
            "[non-core] docs",
            "AC-3 [NON-BEHAVIOR]",
            "[docs-only]",
            "AC-4 [other]",
            "Users can log in",
        ])
        .prop_map(str::to_owned),
    ];
    (id, row_status(), evidence_type(), evidence()).prop_map(
        |(id, status, evidence_type, evidence)| AcceptanceCriterion {
            id,
            status,
            evidence_type,
            evidence,
        },
    )
}

fn check_status() -> impl Strategy<Value = CheckStatus> {
    select(vec![
        CheckStatus::Pass,
        CheckStatus::Fail,
        CheckStatus::Warn,
    ])
}

fn severity() -> impl Strategy<Value = Option<Severity>> {
    prop_oneof![
        Just(None),
        select(vec![
            Severity::Blocker,
            Severity::Major,
            Severity::Minor,
            Severity::Advisory
        ])
        .prop_map(Some),
    ]
}

fn check() -> impl Strategy<Value = Check> {
    let name = select(vec![
        "build",
        "tests",
        "security",
        "lint",
        "task-check",
        "Spur Task Check",
        " task-check ",
    ]);
    (name, check_status(), evidence(), severity()).prop_map(|(name, status, evidence, severity)| {
        Check {
            name: name.to_owned(),
            status,
            evidence,
            severity,
        }
    })
}

pub(crate) fn artifact() -> impl Strategy<Value = Artifact> {
    (
        verdict(),
        proptest::collection::vec(requirement(), 0..5),
        proptest::collection::vec(acceptance_criterion(), 0..5),
        proptest::collection::vec(check(), 0..5),
    )
        .prop_map(
            |(verdict, requirements, acceptance_criteria, checks)| Artifact {
                wbs: "T1".to_owned(),
                verdict,
                requirements,
                acceptance_criteria,
                checks,
                source: None,
            },
        )
}

/// The artifact as a verifier would write it, read back by the one parser.
fn through_the_parser(artifact: &Artifact) -> Result<Artifact, TestCaseError> {
    match parse_artifact(artifact.to_json().as_bytes()) {
        ArtifactOutcome::Valid(parsed) => Ok(parsed),
        other => Err(TestCaseError::fail(format!(
            "a generated artifact must parse as valid, got {other:?}"
        ))),
    }
}

fn has_rows(artifact: &Artifact) -> bool {
    !artifact.requirements.is_empty() || !artifact.acceptance_criteria.is_empty()
}

/// Where to insert into a list of `len` items, from a raw index.
fn slot(raw: usize, len: usize) -> usize {
    raw % (len + 1)
}

#[test]
fn adding_an_unmet_row_never_yields_a_better_verdict() {
    let unmet = prop_oneof![
        requirement().prop_map(|r| (true, r.id, r.evidence, None)),
        acceptance_criterion().prop_map(|a| (false, a.id, a.evidence, a.evidence_type)),
    ];
    property(
        "adding an UNMET row never yields a better verdict",
        CASES,
        (artifact(), unmet, any::<usize>()),
        |(before, (is_requirement, id, evidence, evidence_type), at)| {
            let mut after = before.clone();
            if is_requirement {
                let at = slot(at, after.requirements.len());
                after.requirements.insert(
                    at,
                    Requirement {
                        id,
                        status: RowStatus::Unmet,
                        evidence,
                    },
                );
            } else {
                let at = slot(at, after.acceptance_criteria.len());
                after.acceptance_criteria.insert(
                    at,
                    AcceptanceCriterion {
                        id,
                        status: RowStatus::Unmet,
                        evidence_type,
                        evidence,
                    },
                );
            }
            let was = aggregate(&through_the_parser(&before)?).verdict;
            let now = aggregate(&through_the_parser(&after)?).verdict;
            prop_assert!(now >= was, "{was} became {now}");
            // Stronger: with a row present, rule 2 decides.
            prop_assert_eq!(now, Verdict::Fail);
            Ok(())
        },
    );
}

#[test]
fn adding_a_non_pass_blocker_check_yields_fail() {
    let blocker = (
        select(vec!["security", "build", "tests", "license"]),
        select(vec![CheckStatus::Fail, CheckStatus::Warn]),
        evidence(),
    )
        .prop_map(|(name, status, evidence)| Check {
            name: name.to_owned(),
            status,
            evidence,
            severity: Some(Severity::Blocker),
        });
    property(
        "adding a non-pass blocker check yields FAIL",
        CASES,
        (artifact(), blocker, any::<usize>()),
        |(before, blocker, at)| {
            let mut after = before.clone();
            let at = slot(at, after.checks.len());
            after.checks.insert(at, blocker);
            let was = aggregate(&through_the_parser(&before)?).verdict;
            let now = aggregate(&through_the_parser(&after)?).verdict;
            prop_assert!(now >= was, "{was} became {now}");
            // Rule 1 comes first: with nothing verified the verdict is UNKNOWN, never PASS.
            let expected = if has_rows(&after) {
                Verdict::Fail
            } else {
                Verdict::Unknown
            };
            prop_assert_eq!(now, expected);
            Ok(())
        },
    );
}

#[test]
fn the_effective_verdict_is_never_better_than_the_stored_or_the_computed_one() {
    let expected_wbs = prop_oneof![
        4 => Just(Some("T1")),
        1 => Just(Some("T2")),
        1 => Just(None),
    ];
    property(
        "effective verdict is never better than stored or computed",
        CASES,
        (artifact(), expected_wbs),
        |(artifact, expected_wbs)| {
            let text = artifact.to_json();
            let evaluation = Evaluation::new(
                Path::new("verdict.json"),
                parse_artifact(text.as_bytes()),
                expected_wbs,
            );
            let stored = evaluation
                .stored
                .expect("valid artifacts have a stored verdict");
            let computed = evaluation
                .computed_verdict()
                .expect("valid artifacts are recomputed");
            prop_assert_eq!(stored, artifact.verdict);
            prop_assert!(evaluation.effective >= stored);
            prop_assert!(evaluation.effective >= computed);
            prop_assert_eq!(
                evaluation.effective == Verdict::Pass,
                stored == Verdict::Pass
                    && computed == Verdict::Pass
                    && expected_wbs.is_none_or(|w| w == "T1"),
                "only an agreeing PASS for this task is PASS"
            );
            prop_assert_eq!(
                evaluation.is_self_inconsistent(),
                stored == Verdict::Pass && computed != Verdict::Pass
            );
            Ok(())
        },
    );
}

#[test]
fn row_order_never_changes_the_result() {
    let shuffled = artifact().prop_flat_map(|artifact| {
        (
            Just(artifact.clone()),
            Just(artifact.requirements).prop_shuffle(),
            Just(artifact.acceptance_criteria).prop_shuffle(),
            Just(artifact.checks).prop_shuffle(),
        )
    });
    property(
        "row order never changes the result",
        CASES,
        shuffled,
        |(original, requirements, acceptance_criteria, checks)| {
            let reordered = Artifact {
                requirements,
                acceptance_criteria,
                checks,
                ..original.clone()
            };
            let a = aggregate(&through_the_parser(&original)?);
            let b = aggregate(&through_the_parser(&reordered)?);
            prop_assert_eq!(a.verdict, b.verdict);
            // The same rules fire on the same rows, whatever their positions.
            let fired = |agg: &spur_engine::verdict::Aggregation| {
                let mut fired: Vec<String> = agg
                    .fired
                    .iter()
                    .map(|f| match &f.subject {
                        spur_engine::verdict::Subject::Row { section, id, .. } => {
                            format!("{:?} {} {id} {}", f.rule, section.as_str(), f.detail)
                        }
                        spur_engine::verdict::Subject::Artifact => format!("{:?}", f.rule),
                    })
                    .collect();
                fired.sort();
                fired
            };
            prop_assert_eq!(fired(&a), fired(&b));
            Ok(())
        },
    );
}

#[test]
fn any_generated_artifact_survives_its_own_json() {
    property(
        "artifact JSON round-trips through the parser",
        CASES,
        artifact(),
        |artifact| {
            let parsed = through_the_parser(&artifact)?;
            prop_assert_eq!(parsed, artifact);
            Ok(())
        },
    );
}
