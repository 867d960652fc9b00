//! How a run ended (or paused): the value `spur run` renders and prints as `--json`.

use serde::Serialize;

use crate::pipeline::TerminalReason;

/// The four outcomes of DESIGN §10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A success terminal of a run with a wbs, certified by the done gate.
    Done,
    /// A success terminal of a run without a wbs.
    Completed,
    Failed,
    Paused,
}

impl Outcome {
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Paused => "paused",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Done, Self::Completed, Self::Failed, Self::Paused]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

/// Why the run stopped where it did (more specific than the terminal reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Entered a success terminal state.
    TerminalState,
    /// Entered a state listed in `failureStates`.
    FailureState,
    ActionFailed,
    NoPassingTransition,
    IterationBoundExceeded,
    DoneGateDenied,
    Paused,
    Interrupted,
}

impl StopReason {
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

/// The done gate's answer for a run, as reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DoneGateReport {
    /// `allow`, `deny` or `noop`.
    pub decision: String,
    pub verdict: Option<String>,
    pub message: Option<String>,
}

/// The result of `spur run` / `spur continue`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutcome {
    pub run_id: String,
    pub pipeline: String,
    pub outcome: Outcome,
    pub state: String,
    #[serde(serialize_with = "ser_reason")]
    pub terminal_reason: TerminalReason,
    #[serde(serialize_with = "ser_stop")]
    pub reason: StopReason,
    pub iterations: u32,
    pub forced: bool,
    pub done_gate: Option<DoneGateReport>,
    /// A sentence for people (which action failed, what the gate said…); not in `--json`.
    #[serde(skip)]
    pub detail: Option<String>,
}

fn ser_reason<S: serde::Serializer>(r: &TerminalReason, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.as_str())
}

fn ser_stop<S: serde::Serializer>(r: &StopReason, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.as_str())
}
