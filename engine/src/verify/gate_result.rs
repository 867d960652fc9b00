//! The result of one gate in one verify run, as the report, the ledger, the verdict checks
//! and `--json` see it.

use serde::Serialize;

use super::attempt::Attempt;
use super::finding::Finding;
use super::gate::{Gate, GateSeverity};
use super::reprobe::Settled;
use super::status::{Confidence, GateStatus};

/// Why a gate did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum SkipReason {
    /// `enabled: false`.
    Disabled,
}

impl SkipReason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
        }
    }
}

/// Where a gate's evidence is, as paths relative to the project root when possible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct EvidenceFiles {
    pub(crate) markdown: String,
    pub(crate) json: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GateResult {
    pub(crate) name: String,
    pub(crate) status: GateStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) skipped: Option<SkipReason>,
    /// `None` for a skipped gate: there is no verdict to be confident about.
    pub(crate) confidence: Option<Confidence>,
    pub(crate) reprobed: bool,
    pub(crate) flaky: bool,
    /// The verdict differs from the ledger's previous verdict for this gate.
    pub(crate) flip: bool,
    /// A FAIL none of whose findings has a `file:line` locator.
    pub(crate) unactionable: bool,
    pub(crate) severity: GateSeverity,
    pub(crate) read_only: bool,
    pub(crate) command: Option<String>,
    pub(crate) exit_code: Option<i32>,
    pub(crate) duration_ms: Option<u64>,
    /// Why the status is what it is, when the exit code alone does not say (ERROR).
    pub(crate) reason: Option<String>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) evidence: Option<EvidenceFiles>,
    #[serde(skip)]
    pub(crate) attempts: Vec<Attempt>,
}

impl GateResult {
    /// A gate that did not run.
    pub(crate) fn skipped(name: &str, reason: SkipReason, gate: Option<&Gate>) -> Self {
        Self {
            name: name.to_owned(),
            status: GateStatus::Skip,
            skipped: Some(reason),
            confidence: None,
            reprobed: false,
            flaky: false,
            flip: false,
            unactionable: false,
            severity: gate.map_or(GateSeverity::Blocker, |g| g.severity),
            read_only: gate.map_or_else(
                || super::standard_gates::standard_gate(name).is_some_and(|s| s.read_only),
                |g| g.read_only,
            ),
            command: gate.map(|g| g.command.display()),
            exit_code: None,
            duration_ms: None,
            reason: None,
            findings: Vec::new(),
            evidence: None,
            attempts: Vec::new(),
        }
    }

    /// A gate that ran and was settled.
    pub(crate) fn ran(gate: &Gate, settled: Settled, evidence: EvidenceFiles) -> Self {
        let primary = settled.primary().cloned();
        let findings = primary
            .as_ref()
            .map(|a| a.findings.clone())
            .unwrap_or_default();
        let unactionable =
            settled.status == GateStatus::Fail && !findings.iter().any(|f| f.locator().is_some());
        let reason = match (&primary, settled.flaky) {
            (_, true) => Some(flaky_reason(&settled.attempts)),
            (Some(a), false) => a.reason(),
            (None, false) => None,
        };
        Self {
            name: gate.name.clone(),
            status: settled.status,
            skipped: None,
            confidence: Some(settled.confidence),
            reprobed: settled.reprobed,
            flaky: settled.flaky,
            flip: false,
            unactionable,
            severity: gate.severity,
            read_only: gate.read_only,
            command: Some(gate.command.display()),
            exit_code: primary.as_ref().and_then(Attempt::exit_code),
            duration_ms: Some(
                settled
                    .attempts
                    .iter()
                    .map(|a| a.finished_ms.saturating_sub(a.started_ms))
                    .sum(),
            ),
            reason,
            findings,
            evidence: Some(evidence),
            attempts: settled.attempts,
        }
    }

    /// The evidence of a gate that ran is gone: fail closed.
    pub(crate) fn lose_evidence(&mut self, why: String) {
        self.status = GateStatus::Error;
        self.reason = Some(why);
        self.unactionable = false;
    }
}

fn flaky_reason(attempts: &[Attempt]) -> String {
    let statuses: Vec<&str> = attempts.iter().map(|a| a.status().as_str()).collect();
    format!(
        "flaky: the re-probe disagreed ({}); no stable pass, so FAIL",
        statuses.join(" then ")
    )
}
