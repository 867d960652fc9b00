//! What a request to a lifecycle instance got: the transition made, or why not.

use serde::Serialize;

use crate::run::event::DenialReason;
use crate::run::outcome::DoneGateReport;

/// How the request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestOutcome {
    /// The instance took the transition.
    Allowed,
    /// It was refused; the instance stays where it was.
    Denied,
    /// The instance is in the state asked for already (and has no transition to itself):
    /// nothing was done or recorded.
    Unchanged,
}

/// The answer to a request, as `--json` prints it (fields in this order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransitionAnswer {
    /// `allowed`, `denied` or `unchanged`.
    pub outcome: RequestOutcome,
    /// The entity (`task:0592`).
    pub entity: String,
    /// The pipeline's name.
    pub pipeline: String,
    /// The state the request started from (after any reseed).
    pub from: String,
    /// The state asked for.
    pub to: String,
    /// The state the instance is in now.
    pub state: String,
    /// The index of the transition taken, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition: Option<usize>,
    /// The instance was first set to the entity's status: `[from, to]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reseeded: Option<[String; 2]>,
    /// Why it was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denied: Option<Denial>,
    /// The done gate's answer, when it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_gate: Option<DoneGateReport>,
    /// A task's status in its ledger after the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_status: Option<String>,
    /// The instance's journal.
    pub journal: String,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Denial {
    /// `no-such-transition`, `guard-failed` or `done-gate-denied`.
    pub reason: DenialReason,
    /// What refused it: the edge and its guard, or the gate's message.
    pub detail: String,
}
