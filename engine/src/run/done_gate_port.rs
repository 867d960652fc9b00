//! The runner's view of the done gate (DESIGN §6): before a run with a wbs enters a success
//! terminal it asks the gate, and only an allow lets it in. The gate itself lives in
//! `crate::done_gate`; this port keeps the runner testable and the call in one place.

use crate::state_dir::StateDir;
use crate::wbs::Wbs;

/// What the runner asks.
#[derive(Debug, Clone)]
pub struct GateRequest<'a> {
    pub state_dir: &'a StateDir,
    pub wbs: &'a Wbs,
    pub run_id: &'a str,
    /// `--force-done --reason R`.
    pub force_reason: Option<&'a str>,
}

/// What the gate answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateAnswer {
    /// The task was already done.
    Noop,
    /// Certified: a self-consistent PASS, or forced (audited). Task status is now done.
    Allow {
        forced: bool,
        verdict: Option<String>,
    },
    Deny {
        verdict: String,
        message: String,
    },
}

pub trait DoneGate {
    fn evaluate(&mut self, request: &GateRequest<'_>) -> GateAnswer;
}
