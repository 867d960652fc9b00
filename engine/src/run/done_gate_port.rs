//! The runner's view of the done gate: before a run with a wbs enters a success
//! terminal it asks the gate, and only an allow lets it in. The gate itself lives in
//! `crate::done_gate`; this port keeps the runner testable and the call in one place.

use crate::done_gate::GateDecision;
use crate::store::state_dir::StateDir;
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

impl GateAnswer {
    pub fn decision(&self) -> GateDecision {
        match self {
            GateAnswer::Noop => GateDecision::Noop,
            GateAnswer::Allow { .. } => GateDecision::Allow,
            GateAnswer::Deny { .. } => GateDecision::Deny,
        }
    }
}

pub trait DoneGate {
    fn evaluate(&mut self, request: &GateRequest<'_>) -> GateAnswer;
}

/// The real gate: [`crate::done_gate::evaluate_done_transition`], then the task status
/// becomes done with the gate's token (the only way the status store accepts done).
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskDoneGate;

impl DoneGate for TaskDoneGate {
    fn evaluate(&mut self, request: &GateRequest<'_>) -> GateAnswer {
        use crate::done_gate::{evaluate_done_transition, DoneDecision, DoneRequest, ForceReason};
        use crate::store::task_status::{self, ChangeContext, StatusChange};

        let deny = |message: String| GateAnswer::Deny {
            verdict: "UNKNOWN".to_owned(),
            message,
        };
        let current = match task_status::current_status(request.state_dir, request.wbs) {
            Ok(s) => s,
            Err(e) => return deny(format!("task {} cannot be marked done: {e}", request.wbs)),
        };
        let force = match request.force_reason.map(ForceReason::new).transpose() {
            Ok(f) => f,
            Err(e) => return deny(e.to_string()),
        };
        let user = crate::store::audit::current_user();
        let decision = evaluate_done_transition(&DoneRequest {
            wbs: request.wbs,
            current: &current,
            force: force.as_ref(),
            state_dir: request.state_dir,
            run_id: Some(request.run_id),
            user: &user,
        });
        match decision {
            DoneDecision::Noop { .. } => GateAnswer::Noop,
            DoneDecision::Deny {
                verdict, message, ..
            } => GateAnswer::Deny {
                verdict: verdict.to_string(),
                message,
            },
            DoneDecision::Allow {
                reason,
                done,
                verdict,
                ..
            } => {
                let context = ChangeContext {
                    user: &user,
                    run_id: Some(request.run_id),
                    time: crate::store::timestamp::now(),
                };
                match task_status::record_change(
                    request.state_dir,
                    request.wbs,
                    StatusChange::Done(&done),
                    &context,
                ) {
                    Ok(_) => GateAnswer::Allow {
                        forced: reason == crate::done_gate::AllowReason::Forced,
                        verdict: Some(verdict.to_string()),
                    },
                    Err(e) => deny(format!(
                        "task {} was certified but its status could not be written: {e}",
                        request.wbs
                    )),
                }
            }
        }
    }
}
