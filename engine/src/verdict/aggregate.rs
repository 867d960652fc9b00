//! The one aggregation policy: eight ordered rules from rows to a verdict.
//! Every consumer (done gate, `spur verdict check`, answer derivation, reports) calls
//! [`aggregate`]; nothing else decides what a set of rows means.

use std::fmt;

use serde::Serialize;

use super::artifact::{is_hollow, Artifact, CheckStatus, RowStatus, Severity, Verdict};
use super::outcome::Section;

/// The rules, in the order they are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// 1. No requirement and no acceptance-criterion rows → UNKNOWN.
    NoRows,
    /// 2. Any UNMET row → FAIL.
    UnmetRow,
    /// 3. A non-pass `blocker` check, or a legacy (no severity) `fail` → FAIL.
    BlockingCheck,
    /// 4. A non-pass `major` check, or a legacy `warn` → PARTIAL.
    MajorCheck,
    /// 5. A PARTIAL row, or a MET row with hollow evidence → PARTIAL.
    PartialOrHollowRow,
    /// 6. A MET core behaviour-bearing AC without `test`/`command` evidence → PARTIAL.
    NonExecutableEvidence,
    /// 7. The task-check row not passing → PARTIAL.
    TaskCheck,
    /// 8. Nothing above fired → PASS.
    AllClear,
}

impl Rule {
    pub(crate) fn number(self) -> u8 {
        match self {
            Rule::NoRows => 1,
            Rule::UnmetRow => 2,
            Rule::BlockingCheck => 3,
            Rule::MajorCheck => 4,
            Rule::PartialOrHollowRow => 5,
            Rule::NonExecutableEvidence => 6,
            Rule::TaskCheck => 7,
            Rule::AllClear => 8,
        }
    }

    /// The verdict this rule yields when it fires.
    pub(crate) fn verdict(self) -> Verdict {
        match self {
            Rule::NoRows => Verdict::Unknown,
            Rule::UnmetRow | Rule::BlockingCheck => Verdict::Fail,
            Rule::MajorCheck
            | Rule::PartialOrHollowRow
            | Rule::NonExecutableEvidence
            | Rule::TaskCheck => Verdict::Partial,
            Rule::AllClear => Verdict::Pass,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule {}", self.number())
    }
}

/// What a fired rule points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Subject {
    /// The artifact as a whole (rules 1 and 8).
    Artifact,
    /// A row: its section, 0-based index and id (for checks, the name).
    Row {
        /// The array the row is in.
        section: Section,
        /// Its 0-based index there.
        index: usize,
        /// Its id (for checks, the name).
        id: String,
    },
}

impl Serialize for Section {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Artifact => f.write_str("artifact"),
            Subject::Row { section, index, id } => write!(f, "{section}[{index}] {id:?}"),
        }
    }
}

/// One firing of a rule: which rule, on what, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FiredRule {
    /// The rule that fired.
    pub rule: Rule,
    /// The verdict it yields.
    pub verdict: Verdict,
    /// The artifact or row it fired on.
    pub subject: Subject,
    /// Why, in words.
    pub detail: String,
}

/// The recomputed verdict and every rule firing that explains it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Aggregation {
    /// The recomputed verdict.
    pub verdict: Verdict,
    /// In rule order, then row order. The verdict is that of the first entry.
    pub fired: Vec<FiredRule>,
}

/// Apply the eight rules in order. The verdict is that of the lowest-numbered rule that
/// fired; every firing is reported so an operator sees all that stands between the
/// artifact and PASS.
pub fn aggregate(artifact: &Artifact) -> Aggregation {
    let mut fired = Vec::new();
    let fire = |fired: &mut Vec<FiredRule>, rule: Rule, subject: Subject, detail: String| {
        fired.push(FiredRule {
            rule,
            verdict: rule.verdict(),
            subject,
            detail,
        });
    };
    let req_row = |index: usize, id: &str| Subject::Row {
        section: Section::Requirements,
        index,
        id: id.to_owned(),
    };
    let ac_row = |index: usize, id: &str| Subject::Row {
        section: Section::AcceptanceCriteria,
        index,
        id: id.to_owned(),
    };
    let check_row = |index: usize, id: &str| Subject::Row {
        section: Section::Checks,
        index,
        id: id.to_owned(),
    };

    // Rule 1.
    if artifact.requirements.is_empty() && artifact.acceptance_criteria.is_empty() {
        fire(
            &mut fired,
            Rule::NoRows,
            Subject::Artifact,
            "no requirement and no acceptance-criterion rows: nothing was verified".to_owned(),
        );
    }

    // Rule 2.
    for (i, row) in artifact.requirements.iter().enumerate() {
        if row.status == RowStatus::Unmet {
            fire(
                &mut fired,
                Rule::UnmetRow,
                req_row(i, &row.id),
                "requirement is UNMET".to_owned(),
            );
        }
    }
    for (i, row) in artifact.acceptance_criteria.iter().enumerate() {
        if row.status == RowStatus::Unmet {
            fire(
                &mut fired,
                Rule::UnmetRow,
                ac_row(i, &row.id),
                "acceptance criterion is UNMET".to_owned(),
            );
        }
    }

    // Rules 3 and 4: the task-check row is left to rule 7 so it counts once.
    for (i, check) in artifact.checks.iter().enumerate() {
        if check.status == CheckStatus::Pass || check.is_task_check() {
            continue;
        }
        let rule = match (check.severity, check.status) {
            (Some(Severity::Blocker), _) => Some((Rule::BlockingCheck, "blocker check")),
            (None, CheckStatus::Fail) => Some((Rule::BlockingCheck, "legacy check (no severity)")),
            (Some(Severity::Major), _) => Some((Rule::MajorCheck, "major check")),
            (None, CheckStatus::Warn) => Some((Rule::MajorCheck, "legacy check (no severity)")),
            // minor and advisory never block.
            _ => None,
        };
        if let Some((rule, what)) = rule {
            fire(
                &mut fired,
                rule,
                check_row(i, &check.name),
                format!("{what} is {}", check.status),
            );
        }
    }

    // Rule 5.
    for (i, row) in artifact.requirements.iter().enumerate() {
        if let Some(detail) = partial_or_hollow(row.status, row.evidence.as_deref()) {
            fire(
                &mut fired,
                Rule::PartialOrHollowRow,
                req_row(i, &row.id),
                detail,
            );
        }
    }
    for (i, row) in artifact.acceptance_criteria.iter().enumerate() {
        if let Some(detail) = partial_or_hollow(row.status, row.evidence.as_deref()) {
            fire(
                &mut fired,
                Rule::PartialOrHollowRow,
                ac_row(i, &row.id),
                detail,
            );
        }
    }

    // Rule 6: fails closed — an absent evidenceType is not executable.
    for (i, row) in artifact.acceptance_criteria.iter().enumerate() {
        if row.status != RowStatus::Met || !row.is_core_behaviour() {
            continue;
        }
        let executable = row
            .evidence_type
            .as_ref()
            .is_some_and(|t| t.is_executable());
        if !executable {
            let shown = row.evidence_type.as_ref().map_or_else(
                || "no evidenceType".to_owned(),
                |t| format!("evidenceType {t}"),
            );
            fire(
                &mut fired,
                Rule::NonExecutableEvidence,
                ac_row(i, &row.id),
                format!(
                    "MET core behaviour-bearing criterion has {shown}; it needs a test or command part (or an [advisory]/[non-core]/[non-behavior]/[docs-only] tag)"
                ),
            );
        }
    }

    // Rule 7.
    for (i, check) in artifact.checks.iter().enumerate() {
        if check.is_task_check() && check.status != CheckStatus::Pass {
            fire(
                &mut fired,
                Rule::TaskCheck,
                check_row(i, &check.name),
                format!("the task check is {}", check.status),
            );
        }
    }

    fired.sort_by_key(|f| f.rule);
    let verdict = match fired.first() {
        Some(first) => first.verdict,
        None => {
            fire(
                &mut fired,
                Rule::AllClear,
                Subject::Artifact,
                "every row is MET with evidence or N/A, and no check blocks".to_owned(),
            );
            Verdict::Pass
        }
    };
    Aggregation { verdict, fired }
}

fn partial_or_hollow(status: RowStatus, evidence: Option<&str>) -> Option<String> {
    match status {
        RowStatus::Partial => Some("row is PARTIAL".to_owned()),
        RowStatus::Met if is_hollow(evidence) => Some(
            "row is MET but its evidence is hollow (missing, empty, whitespace or not a string)"
                .to_owned(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{parse_artifact, ArtifactOutcome};
    use serde_json::json;

    /// Aggregate a JSON artifact (requirements/AC/checks given; wbs and verdict filled in).
    fn verdict_of(rows: serde_json::Value) -> Aggregation {
        let mut doc = json!({"wbs": "T1", "verdict": "PASS", "requirements": []});
        if let (Some(doc), Some(rows)) = (doc.as_object_mut(), rows.as_object()) {
            for (k, v) in rows {
                doc.insert(k.clone(), v.clone());
            }
        }
        match parse_artifact(doc.to_string().as_bytes()) {
            ArtifactOutcome::Valid(artifact) => aggregate(&artifact),
            other => panic!("fixture must be valid, got {other:?}"),
        }
    }

    fn met(id: &str) -> serde_json::Value {
        json!({"id": id, "status": "MET", "evidence": "src/lib.rs:1"})
    }

    fn ac_met(id: &str, ty: &str) -> serde_json::Value {
        json!({"id": id, "status": "MET", "evidenceType": ty, "evidence": "tests/a.rs:3"})
    }

    #[test]
    fn every_rule_yields_its_verdict() {
        use Rule::*;
        use Verdict::*;
        // (case, rows, expected verdict, rules expected to fire, in order)
        let cases: Vec<(&str, serde_json::Value, Verdict, Vec<Rule>)> = vec![
            ("zero rows is UNKNOWN", json!({}), Unknown, vec![NoRows]),
            (
                "only checks, all passing, is still UNKNOWN",
                json!({"checks": [{"name": "lint", "status": "pass"}]}),
                Unknown,
                vec![NoRows],
            ),
            (
                "zero rows stays UNKNOWN even with a failing blocker",
                json!({"checks": [{"name": "sec", "status": "fail", "severity": "blocker"}]}),
                Unknown,
                vec![NoRows, BlockingCheck],
            ),
            (
                "all MET with evidence is PASS",
                json!({"requirements": [met("R1"), met("R2")]}),
                Pass,
                vec![AllClear],
            ),
            (
                "an UNMET requirement is FAIL",
                json!({"requirements": [met("R1"), {"id": "R2", "status": "UNMET", "evidence": "no evidence found"}]}),
                Fail,
                vec![UnmetRow],
            ),
            (
                "an UNMET AC is FAIL",
                json!({"requirements": [met("R1")], "acceptanceCriteria": [{"id": "AC-1", "status": "unmet", "evidenceType": "test", "evidence": "x"}]}),
                Fail,
                vec![UnmetRow],
            ),
            (
                "a failing blocker check is FAIL",
                json!({"requirements": [met("R1")], "checks": [{"name": "security", "status": "fail", "severity": "blocker"}]}),
                Fail,
                vec![BlockingCheck],
            ),
            (
                "a warning blocker check is FAIL too (non-pass)",
                json!({"requirements": [met("R1")], "checks": [{"name": "security", "status": "warn", "severity": "blocker"}]}),
                Fail,
                vec![BlockingCheck],
            ),
            (
                "blocker beats an earlier major",
                json!({"requirements": [met("R1")], "checks": [
                    {"name": "style", "status": "fail", "severity": "major"},
                    {"name": "security", "status": "fail", "severity": "blocker"}]}),
                Fail,
                vec![BlockingCheck, MajorCheck],
            ),
            (
                "legacy fail without severity is FAIL",
                json!({"requirements": [met("R1")], "checks": [{"name": "tests-pass", "status": "fail"}]}),
                Fail,
                vec![BlockingCheck],
            ),
            (
                "legacy warn without severity is PARTIAL",
                json!({"requirements": [met("R1")], "checks": [{"name": "lint-clean", "status": "warn"}]}),
                Partial,
                vec![MajorCheck],
            ),
            (
                "a failing major check is PARTIAL",
                json!({"requirements": [met("R1")], "checks": [{"name": "docs", "status": "fail", "severity": "major"}]}),
                Partial,
                vec![MajorCheck],
            ),
            (
                "minor and advisory checks never block",
                json!({"requirements": [met("R1")], "checks": [
                    {"name": "nit", "status": "fail", "severity": "minor"},
                    {"name": "idea", "status": "warn", "severity": "advisory"}]}),
                Pass,
                vec![AllClear],
            ),
            (
                "a PARTIAL row is PARTIAL",
                json!({"requirements": [met("R1"), {"id": "R2", "status": "PARTIAL", "evidence": "half"}]}),
                Partial,
                vec![PartialOrHollowRow],
            ),
            (
                "hollow MET evidence (missing, empty, blank, non-string) is PARTIAL",
                json!({"requirements": [
                    {"id": "R1", "status": "MET"},
                    {"id": "R2", "status": "MET", "evidence": ""},
                    {"id": "R3", "status": "MET", "evidence": "  \t"},
                    {"id": "R4", "status": "MET", "evidence": 42}]}),
                Partial,
                vec![PartialOrHollowRow; 4],
            ),
            (
                "N/A rows never block, even without evidence",
                json!({"requirements": [met("R1")], "acceptanceCriteria": [{"id": "AC-2", "status": "N/A", "evidenceType": "n/a"}]}),
                Pass,
                vec![AllClear],
            ),
            (
                "MET core AC with only static-ref evidence is PARTIAL",
                json!({"requirements": [met("R1")], "acceptanceCriteria": [ac_met("AC-1", "static-ref")]}),
                Partial,
                vec![NonExecutableEvidence],
            ),
            (
                "MET core AC with no evidenceType fails closed to PARTIAL",
                json!({"requirements": [met("R1")], "acceptanceCriteria": [{"id": "AC-1", "status": "MET", "evidence": "x"}]}),
                Partial,
                vec![NonExecutableEvidence],
            ),
            (
                "a test part in a compound evidenceType satisfies rule 6",
                json!({"requirements": [met("R1")], "acceptanceCriteria": [ac_met("AC-1", "static-ref+Test"), ac_met("AC-2", "command")]}),
                Pass,
                vec![AllClear],
            ),
            (
                "an [advisory] tag exempts an AC from the evidence rule",
                json!({"requirements": [met("R1")], "acceptanceCriteria": [
                    ac_met("AC-1 [advisory] docs read well", "manual-review"),
                    ac_met("AC-2 [Docs-Only]", "static-ref"),
                    ac_met("[non-core] AC-3", "llm-judge"),
                    ac_met("AC-4 [non-behavior]", "static-ref")]}),
                Pass,
                vec![AllClear],
            ),
            (
                "a failing task-check is PARTIAL, not FAIL, and counted once",
                json!({"requirements": [met("R1")], "checks": [{"name": "task-check", "status": "fail", "severity": "blocker"}]}),
                Partial,
                vec![TaskCheck],
            ),
            (
                "the task-check alias `spur task check` as a legacy fail is PARTIAL",
                json!({"requirements": [met("R1")], "checks": [{"check": "spur task check", "status": "fail"}]}),
                Partial,
                vec![TaskCheck],
            ),
            (
                "a passing task-check does not fire",
                json!({"requirements": [met("R1")], "checks": [{"id": "task-check", "status": "PASS"}]}),
                Pass,
                vec![AllClear],
            ),
            (
                "alias rows (scenario → id, check → name) aggregate like canonical ones",
                json!({"requirements": [{"scenario": "Scenario: login", "status": "met", "evidence": "a:1"}],
                       "checks": [{"check": "tests-pass", "status": "FAIL"}]}),
                Fail,
                vec![BlockingCheck],
            ),
        ];
        for (case, rows, expected, rules) in cases {
            let aggregation = verdict_of(rows);
            assert_eq!(aggregation.verdict, expected, "{case}: {aggregation:#?}");
            let got: Vec<Rule> = aggregation.fired.iter().map(|f| f.rule).collect();
            assert_eq!(got, rules, "{case}");
        }
    }

    #[test]
    fn fired_rules_name_the_row() {
        let aggregation = verdict_of(json!({
            "requirements": [met("R1"), {"id": "R2", "status": "UNMET", "evidence": "none"}],
            "checks": [{"name": "security", "status": "fail", "severity": "blocker"}],
        }));
        let subjects: Vec<String> = aggregation
            .fired
            .iter()
            .map(|f| f.subject.to_string())
            .collect();
        assert_eq!(
            subjects,
            vec![r#"requirements[1] "R2""#, r#"checks[0] "security""#]
        );
    }

    #[test]
    fn verdicts_order_by_harshness() {
        use Verdict::*;
        assert_eq!(Pass.harsher(Unknown), Unknown);
        assert_eq!(Unknown.harsher(Partial), Partial);
        assert_eq!(Fail.harsher(Partial), Fail);
        assert_eq!(Pass.harsher(Pass), Pass);
    }
}
