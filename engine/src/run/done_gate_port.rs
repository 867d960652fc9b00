//! The runner's view of the done gate: before a run with a wbs enters a success
//! terminal it asks the gate, and only an allow lets it in. The gate itself lives in
//! `crate::done_gate`; this port keeps the runner testable and the call in one place.

use super::outcome::DoneGateReport;
use crate::done_certificate::CertificateReport;
use crate::done_gate::{AllowReason, GateDecision};
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// What the runner asks.
#[derive(Debug, Clone)]
pub struct GateRequest<'a> {
    pub(crate) state_dir: &'a StateDir,
    pub(crate) wbs: &'a Wbs,
    pub(crate) run_id: &'a str,
    /// `--force-done --reason R`.
    pub(crate) force_reason: Option<&'a str>,
    /// The policy the run pinned.
    pub(crate) policy: &'a crate::policy::PolicySource,
}

/// What the gate answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateAnswer {
    /// The task was already done.
    Noop,
    /// Certified: a self-consistent PASS (in spur's artifact, or an external one the
    /// project allows), or forced (audited). Task status is now done.
    Allow {
        /// Why it allowed.
        reason: AllowReason,
        /// The effective verdict, when there was an artifact.
        verdict: Option<String>,
        /// The done certificate, when the project writes them.
        certificate: Option<CertificateReport>,
    },
    /// Not certified: the task stays as it was.
    Deny {
        /// The effective verdict (`UNKNOWN` when there was none to read).
        verdict: String,
        /// Why, naming the task, the artifact and how to re-verify.
        message: String,
    },
}

impl GateAnswer {
    /// The answer as reported (a run's outcome, a lifecycle request's answer) for task
    /// `wbs`, and whether it was a forced allow. One mapping for every asker.
    pub(crate) fn report(&self, wbs: &Wbs) -> (DoneGateReport, bool) {
        let (verdict, message, reason, certificate) = match self {
            GateAnswer::Noop => (
                None,
                Some(format!("task {wbs} was already done")),
                None,
                None,
            ),
            GateAnswer::Allow {
                reason,
                verdict,
                certificate,
            } => (verdict.clone(), None, Some(*reason), certificate.clone()),
            GateAnswer::Deny { verdict, message } => {
                (Some(verdict.clone()), Some(message.clone()), None, None)
            }
        };
        let forced = reason == Some(AllowReason::Forced);
        let report = DoneGateReport {
            decision: self.decision(),
            reason,
            verdict,
            message,
            certificate,
        };
        (report, forced)
    }

    pub(crate) fn decision(&self) -> GateDecision {
        match self {
            GateAnswer::Noop => GateDecision::Noop,
            GateAnswer::Allow { .. } => GateDecision::Allow,
            GateAnswer::Deny { .. } => GateDecision::Deny,
        }
    }
}

/// Who decides whether a task may be done: the runner and lifecycle requests ask through
/// this, so a caller can bring the gate of its own (the CLI's, with its messages).
pub trait DoneGate {
    /// Decide for `request` (and record an allow, as the real gate does).
    fn evaluate(&mut self, request: &GateRequest<'_>) -> GateAnswer;
}

/// The real gate: under the task's data lock, [`crate::done_gate::evaluate_done_transition`]
/// (which reads the task ledger and the artifact), then [`crate::done_gate::record_done`]:
/// the `done` record appended with the gate's token (the only way the ledger accepts done),
/// the view rewritten, the done certificate written when the project opts in. The lock
/// is taken here, after the run's task lock, and let go before the runner goes on.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskDoneGate;

impl DoneGate for TaskDoneGate {
    fn evaluate(&mut self, request: &GateRequest<'_>) -> GateAnswer {
        use crate::done_gate::{
            evaluate_done_transition, record_done, DoneDecision, DoneRequest, ForceReason,
        };
        use crate::store::data_lock::DataLock;
        use crate::store::task_status::ChangeContext;

        let deny = |message: String| GateAnswer::Deny {
            verdict: "UNKNOWN".to_owned(),
            message,
        };
        let force = match request.force_reason.map(ForceReason::new).transpose() {
            Ok(f) => f,
            Err(e) => return deny(e.to_string()),
        };
        let lock = match DataLock::acquire(request.state_dir, request.wbs) {
            Ok(lock) => lock,
            Err(e) => return deny(format!("task {} cannot be marked done: {e}", request.wbs)),
        };
        let user = crate::store::audit::current_user();
        let decision = evaluate_done_transition(&DoneRequest {
            lock: &lock,
            force: force.as_ref(),
            state_dir: request.state_dir,
            run_id: Some(request.run_id),
            user: &user,
            policy: request.policy,
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
                match record_done(&lock, request.state_dir, &done, &context, request.policy) {
                    // The ledger is the status: a view that could not be rewritten shows
                    // up in `spur audit verify` and is rewritten at the next change; a
                    // certificate that could not be written is reported with the allow.
                    Ok(recorded) => GateAnswer::Allow {
                        reason,
                        verdict: Some(verdict.to_string()),
                        certificate: recorded.certificate.report(request.wbs),
                    },
                    Err(e) => deny(format!(
                        "task {} was certified but its status could not be recorded: {e}",
                        request.wbs
                    )),
                }
            }
        }
    }
}
