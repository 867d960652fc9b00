//! What a verify run produced: every gate's result, the actionable findings, and where the
//! report, ledger and verdict are. Serialises as the `spur verify --json` document.

use serde::Serialize;

use super::finding::FindingSeverity;
use super::gate_result::GateResult;
use super::status::GateStatus;
use super::verdict_checks::MergeOutcome;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyOutcome {
    pub(crate) run: String,
    /// The task, or `null` for a project-wide verify.
    pub(crate) task: Option<String>,
    /// `--gate NAME`: only this gate ran.
    pub(crate) gate: Option<String>,
    /// No gate is FAIL or ERROR and everything was recorded.
    pub passed: bool,
    pub summary: Summary,
    pub(crate) gates: Vec<GateResult>,
    pub(crate) actionable: Vec<ActionableFinding>,
    pub report: String,
    pub(crate) ledger: String,
    /// The verdict artifact the gate rows were merged into (`null` without a task).
    pub verdict: Option<String>,
    pub(crate) verdict_merge: Option<MergeOutcome>,
    /// The tree fingerprint recorded with the results in the task ledger's `verified`
    /// record (`null` without a task, or when it could not be taken: see `problems`).
    pub fingerprint: Option<String>,
    /// The gates that could have changed the tree while this run's gates ran (empty when it
    /// did not change); the done gate does not count such a run's results.
    pub tree_changed_by: Vec<String>,
    /// Results that could not be recorded (ledger, report or verdict not written).
    pub problems: Vec<Problem>,
    /// What the configuration holds that spur ignores (an unknown key under `doneGate`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Problem>,
    /// The Markdown report (also written to `report`).
    #[serde(skip)]
    pub markdown: String,
}

/// A result that could not be recorded.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub code: String,
    pub message: String,
}

/// Gates per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub pass: usize,
    pub(crate) warn: usize,
    pub(crate) fail: usize,
    pub(crate) error: usize,
    pub(crate) skip: usize,
}

impl Summary {
    pub(crate) fn of(gates: &[GateResult]) -> Self {
        let count = |s| gates.iter().filter(|g| g.status == s).count();
        Self {
            pass: count(GateStatus::Pass),
            warn: count(GateStatus::Warn),
            fail: count(GateStatus::Fail),
            error: count(GateStatus::Error),
            skip: count(GateStatus::Skip),
        }
    }

    pub fn ran(&self) -> usize {
        self.pass + self.warn + self.fail + self.error
    }
}

/// A WARN or BLOCK finding, numbered as in the report's table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActionableFinding {
    pub(crate) number: usize,
    pub(crate) gate: String,
    pub(crate) severity: FindingSeverity,
    /// `file:line`, or the file alone, or `null`.
    pub(crate) file: Option<String>,
    pub(crate) finding: String,
    /// The gate's fix, or "manual review" when it gave none.
    pub(crate) fix: String,
    /// No fix was given: a person has to judge.
    pub(crate) manual: bool,
}

/// The recommended fix of a finding with none.
pub(crate) const MANUAL_REVIEW: &str = "manual review";

/// Every WARN and BLOCK finding of `gates`, in gate order.
pub(crate) fn actionable_findings(gates: &[GateResult]) -> Vec<ActionableFinding> {
    gates
        .iter()
        .flat_map(|g| g.findings.iter().map(move |f| (g, f)))
        .filter(|(_, f)| f.severity != FindingSeverity::Info)
        .enumerate()
        .map(|(i, (g, f))| ActionableFinding {
            number: i + 1,
            gate: g.name.clone(),
            severity: f.severity,
            file: f.locator().or_else(|| f.file.clone()),
            finding: f.message.clone(),
            fix: f.fix.clone().unwrap_or_else(|| MANUAL_REVIEW.to_owned()),
            manual: f.fix.is_none(),
        })
        .collect()
}
