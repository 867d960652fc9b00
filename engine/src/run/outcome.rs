//! How a run ended (or paused): the value `spur run` renders and prints as `--json`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::done_certificate::CertificateReport;
use crate::done_gate::{AllowReason, GateDecision};
use crate::pipeline::TerminalReason;

/// The four outcomes of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A success terminal of a run with a wbs, certified by the done gate.
    Done,
    /// A success terminal that certifies nothing: the run has no wbs, or the ending's
    /// terminal reason is not `done` (a cancellation).
    Completed,
    /// The run ended in failure: a failure state, a failed action, a denied gate, no way on.
    Failed,
    /// The run waits at a pause for a person; `spur continue` resumes it.
    Paused,
}

impl Outcome {
    /// The outcome as written in output and the journal (`done`, `failed`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Paused => "paused",
        }
    }

    /// The outcome named by `s`, as [`Outcome::as_str`] writes it.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Done, Self::Completed, Self::Failed, Self::Paused]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the run stopped where it did (more specific than the terminal reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Entered a success terminal state.
    TerminalState,
    /// Entered a state listed in `failureStates`.
    FailureState,
    /// An action failed and its `onError` is `fail`.
    ActionFailed,
    /// No transition out of the state passed its guard.
    NoPassingTransition,
    /// The run took `iterationBound` transitions without ending.
    IterationBoundExceeded,
    /// The done gate refused to certify the task.
    DoneGateDenied,
    /// The run paused for a person.
    Paused,
    /// The run was stopped by a signal.
    Interrupted,
}

impl StopReason {
    /// The reason as written in output and the journal (`action-failed`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::TerminalState => "terminal-state",
            StopReason::FailureState => "failure-state",
            StopReason::ActionFailed => "action-failed",
            StopReason::NoPassingTransition => "no-passing-transition",
            StopReason::IterationBoundExceeded => "iteration-bound-exceeded",
            StopReason::DoneGateDenied => "done-gate-denied",
            StopReason::Paused => "paused",
            StopReason::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The done gate's answer for a run, as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoneGateReport {
    /// `allow`, `noop` or `deny`.
    pub decision: GateDecision,
    /// Why it allowed: `pass`, `forced`, or `external` (a PASS in an artifact written or
    /// edited outside spur, accepted by `doneGate.externalVerdicts: allow`). Absent for
    /// noop and deny.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<AllowReason>,
    /// The effective verdict the gate read, when it read one.
    pub verdict: Option<String>,
    /// The gate's message: why it allowed, did nothing, or denied.
    pub message: Option<String>,
    /// The done certificate of an allow, when the project writes them: written, or why
    /// not (the task is done either way).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<CertificateReport>,
}

/// The result of `spur run` / `spur continue`. Deserialized where a worker of a fleet
/// sends it to the client (without `detail`, sent beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutcome {
    /// The run's id.
    pub run_id: String,
    pub(crate) pipeline: String,
    /// How the run ended.
    pub outcome: Outcome,
    /// The state it stopped in.
    pub state: String,
    /// The terminal reason of the ending.
    #[serde(with = "terminal_reason_text")]
    pub terminal_reason: TerminalReason,
    /// What stopped it.
    pub reason: StopReason,
    /// Transitions taken.
    pub iterations: u32,
    /// The done gate allowed because of `--force-done`.
    pub forced: bool,
    /// What the done gate answered, when the run asked it.
    pub done_gate: Option<DoneGateReport>,
    /// The question a run paused for an answer waits on (`spur continue RUN --answer A`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<super::actions::HitlQuestion>,
    /// A sentence for people (which action failed, what the gate said…); not in `--json`.
    #[serde(skip)]
    pub detail: Option<String>,
}

/// A [`TerminalReason`] as its kebab-case word (the pipeline's own spelling), for the
/// run outcome and the journal.
pub(super) mod terminal_reason_text {
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    use crate::pipeline::TerminalReason;

    pub(crate) fn serialize<S: Serializer>(
        reason: &TerminalReason,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(reason.as_str())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TerminalReason, D::Error> {
        let word = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        TerminalReason::parse(&word)
            .ok_or_else(|| D::Error::custom(format!("unknown terminal reason {word:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde spelling is the `as_str` spelling: journals and `--json` say the same word.
    #[test]
    fn serde_words_are_the_as_str_words() {
        let word = |v: serde_json::Value| v.as_str().unwrap_or_default().to_owned();
        for o in [
            Outcome::Done,
            Outcome::Completed,
            Outcome::Failed,
            Outcome::Paused,
        ] {
            assert_eq!(word(serde_json::to_value(o).unwrap()), o.as_str());
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
        }
        for r in [
            StopReason::TerminalState,
            StopReason::FailureState,
            StopReason::ActionFailed,
            StopReason::NoPassingTransition,
            StopReason::IterationBoundExceeded,
            StopReason::DoneGateDenied,
            StopReason::Paused,
            StopReason::Interrupted,
        ] {
            let text = serde_json::to_value(r).unwrap();
            assert_eq!(word(text.clone()), r.as_str());
            assert_eq!(serde_json::from_value::<StopReason>(text).unwrap(), r);
        }
        for d in [GateDecision::Noop, GateDecision::Allow, GateDecision::Deny] {
            assert_eq!(word(serde_json::to_value(d).unwrap()), d.as_str());
        }
    }
}
