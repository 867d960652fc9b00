//! The verdict artifact (`.spur/run/<wbs>-verdict.json`) as typed, normalised values.
//!
//! These are what the parser produces and what producers (answer files, verify gates)
//! construct; `Serialize` writes the canonical artifact JSON.

use std::fmt;

use serde::Serialize;

/// An aggregate verdict. Ordered by harshness: `Pass < Unknown < Partial < Fail`, so the
/// harsher of two verdicts is their maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Every requirement and criterion is met with evidence.
    Pass,
    /// Not enough is known to say (e.g. nothing was checked).
    Unknown,
    /// Some of the work is done, not all.
    Partial,
    /// Something required is not met, or a blocking check failed.
    Fail,
}

impl Verdict {
    /// The harsher of two verdicts (FAIL > PARTIAL > UNKNOWN > PASS).
    pub(crate) fn harsher(self, other: Verdict) -> Verdict {
        self.max(other)
    }

    /// The verdict as written in artifacts and output (`PASS`, `FAIL`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Unknown => "UNKNOWN",
            Verdict::Partial => "PARTIAL",
            Verdict::Fail => "FAIL",
        }
    }

    /// Case-insensitive: `pass`, `Pass` and `PASS` are all PASS.
    pub(crate) fn parse(text: &str) -> Option<Verdict> {
        match text.trim().to_ascii_uppercase().as_str() {
            "PASS" => Some(Verdict::Pass),
            "UNKNOWN" => Some(Verdict::Unknown),
            "PARTIAL" => Some(Verdict::Partial),
            "FAIL" => Some(Verdict::Fail),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Status of a requirement or acceptance-criterion row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum RowStatus {
    /// `MET`: done, with evidence.
    #[serde(rename = "MET")]
    Met,
    /// `PARTIAL`: partly done.
    #[serde(rename = "PARTIAL")]
    Partial,
    /// `UNMET`: not done.
    #[serde(rename = "UNMET")]
    Unmet,
    /// `N/A`: does not apply to this task.
    #[serde(rename = "N/A")]
    NotApplicable,
}

impl RowStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RowStatus::Met => "MET",
            RowStatus::Partial => "PARTIAL",
            RowStatus::Unmet => "UNMET",
            RowStatus::NotApplicable => "N/A",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<RowStatus> {
        match text.trim().to_ascii_uppercase().as_str() {
            "MET" => Some(RowStatus::Met),
            "PARTIAL" => Some(RowStatus::Partial),
            "UNMET" => Some(RowStatus::Unmet),
            "N/A" => Some(RowStatus::NotApplicable),
            _ => None,
        }
    }
}

impl fmt::Display for RowStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Status of a `checks[]` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// The check passed.
    Pass,
    /// The check failed.
    Fail,
    /// The check passed with a warning.
    Warn,
}

impl CheckStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
            CheckStatus::Warn => "warn",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<CheckStatus> {
        match text.trim().to_ascii_lowercase().as_str() {
            "pass" => Some(CheckStatus::Pass),
            "fail" => Some(CheckStatus::Fail),
            "warn" => Some(CheckStatus::Warn),
            _ => None,
        }
    }
}

impl fmt::Display for CheckStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Severity of a check; absent on legacy rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Blocks the task: a failing blocker check fails the verdict.
    Blocker,
    /// A serious problem.
    Major,
    /// A small problem.
    Minor,
    /// For information only.
    Advisory,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Blocker => "blocker",
            Severity::Major => "major",
            Severity::Minor => "minor",
            Severity::Advisory => "advisory",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Severity> {
        match text.trim().to_ascii_lowercase().as_str() {
            "blocker" => Some(Severity::Blocker),
            "major" => Some(Severity::Major),
            "minor" => Some(Severity::Minor),
            "advisory" => Some(Severity::Advisory),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One kind of evidence an acceptance criterion can cite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvidenceKind {
    /// `test`: a test that exercises the behaviour.
    Test,
    /// `command`: a command whose output shows it.
    Command,
    /// `static-ref`: a pointer into the code (`file:line`).
    StaticRef,
    /// `manual-review`: a person looked at it.
    ManualReview,
    /// `llm-judge`: a model judged it.
    LlmJudge,
    /// `n/a`: no evidence applies.
    NotApplicable,
}

impl EvidenceKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::Test => "test",
            EvidenceKind::Command => "command",
            EvidenceKind::StaticRef => "static-ref",
            EvidenceKind::ManualReview => "manual-review",
            EvidenceKind::LlmJudge => "llm-judge",
            EvidenceKind::NotApplicable => "n/a",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<EvidenceKind> {
        match text.trim().to_ascii_lowercase().as_str() {
            "test" => Some(EvidenceKind::Test),
            "command" => Some(EvidenceKind::Command),
            "static-ref" => Some(EvidenceKind::StaticRef),
            "manual-review" => Some(EvidenceKind::ManualReview),
            "llm-judge" => Some(EvidenceKind::LlmJudge),
            "n/a" => Some(EvidenceKind::NotApplicable),
            _ => None,
        }
    }

    /// `test` and `command` are deterministic, executable evidence (aggregation rule 6).
    pub(crate) fn is_executable(self) -> bool {
        matches!(self, EvidenceKind::Test | EvidenceKind::Command)
    }
}

/// An `evidenceType`: one kind or a `+` compound (`test+static-ref`). Never empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EvidenceType(Vec<EvidenceKind>);

impl EvidenceType {
    /// `None` when empty; the parser rejects empty types, so a value always has a kind.
    pub fn new(kinds: Vec<EvidenceKind>) -> Option<Self> {
        if kinds.is_empty() {
            None
        } else {
            Some(Self(kinds))
        }
    }

    pub(crate) fn single(kind: EvidenceKind) -> Self {
        Self(vec![kind])
    }

    /// Case-insensitive; `+` joins kinds, whitespace around parts is ignored.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let kinds: Option<Vec<_>> = text.split('+').map(EvidenceKind::parse).collect();
        Self::new(kinds?)
    }

    /// The kinds, in the order written.
    pub fn kinds(&self) -> &[EvidenceKind] {
        &self.0
    }

    pub(crate) fn is_executable(&self) -> bool {
        self.0.iter().any(|k| k.is_executable())
    }
}

impl fmt::Display for EvidenceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, kind) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(kind.as_str())?;
        }
        Ok(())
    }
}

impl Serialize for EvidenceType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A requirement row: `{id, status, evidence}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// The requirement's id (`R1`).
    pub id: String,
    /// Whether it is met.
    pub status: RowStatus,
    /// `None` when absent or not a string (the parser keeps the row; rule 5 calls it hollow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// An acceptance-criterion row: `{id, status, evidenceType, evidence}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AcceptanceCriterion {
    /// The criterion's id (`AC-1`), with any tags (`[advisory]`).
    pub id: String,
    /// Whether it is met.
    pub status: RowStatus,
    /// What kind of evidence it cites, when the row says.
    #[serde(rename = "evidenceType", skip_serializing_if = "Option::is_none")]
    pub evidence_type: Option<EvidenceType>,
    /// The evidence itself (a test name, a command, `file:line`), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// Id tags that exempt an acceptance criterion from the executable-evidence rule (rule 6).
pub(crate) const NON_CORE_TAGS: [&str; 4] =
    ["[advisory]", "[non-core]", "[non-behavior]", "[docs-only]"];

impl AcceptanceCriterion {
    /// Core and behaviour-bearing unless its id carries one of [`NON_CORE_TAGS`].
    pub(crate) fn is_core_behaviour(&self) -> bool {
        if !self.id.contains('[') {
            return true;
        }
        let id = self.id.to_ascii_lowercase();
        !NON_CORE_TAGS.iter().any(|tag| id.contains(tag))
    }
}

/// A `checks[]` row: `{name, status, evidence, severity?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// The check's name (`cargo test`, `task-check`).
    pub name: String,
    /// Whether it passed.
    pub status: CheckStatus,
    /// What shows the result, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// How much a failure matters; absent on legacy rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
}

/// Names of the independent task-check row (rule 7), compared case-insensitively.
pub(crate) const TASK_CHECK_NAMES: [&str; 2] = ["task-check", "spur task check"];

impl Check {
    pub(crate) fn is_task_check(&self) -> bool {
        let name = self.name.trim();
        TASK_CHECK_NAMES
            .iter()
            .any(|candidate| name.eq_ignore_ascii_case(candidate))
    }
}

/// A valid verdict artifact, normalised: statuses in canonical case, `scenario` folded
/// into `id`, `check`/`id` folded into `name`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Artifact {
    /// The task (WBS id) the verdict is about.
    pub wbs: String,
    /// The verdict the producer stored. The done gate trusts it only when it agrees with
    /// the recomputed one.
    pub verdict: Verdict,
    /// The requirement rows, in file order.
    pub requirements: Vec<Requirement>,
    /// The acceptance-criterion rows, in file order.
    #[serde(rename = "acceptanceCriteria")]
    pub acceptance_criteria: Vec<AcceptanceCriterion>,
    /// The check rows, in file order.
    pub checks: Vec<Check>,
    /// Who produced the artifact (free-form; e.g. the answer file it was derived from).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<serde_json::Value>,
}

impl Artifact {
    /// The canonical artifact JSON, pretty-printed with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| String::from("{}"));
        text.push('\n');
        text
    }
}

/// Whether a piece of evidence is hollow: missing, not a string, empty or whitespace.
pub(crate) fn is_hollow(evidence: Option<&str>) -> bool {
    evidence.is_none_or(|text| text.trim().is_empty())
}
