//! The done gate a run asks, for a task with a task file: the task's lifecycle moves into
//! `done` (its edge, `spur task check --as done`, its guards, then the done gate), so a run
//! certifies only a task its lifecycle lets be done — one in `testing`, in the shipped
//! graph. A bare task (no task file, or one without `status:`) is certified by the gate
//! alone, as before.

use crate::done_gate::{AllowReason, GateDecision};
use crate::lifecycle::{request_transition, EntityKey, RequestOutcome, TransitionRequest};
use crate::run::done_gate_port::{DoneGate, GateAnswer, GateRequest};
use crate::run::{RunSettings, TaskDoneGate};
use crate::store::audit::current_user;
use crate::store::data_lock::DataLock;
use crate::store::task_status::ChangeContext;
use crate::task_file::TaskDocument;

use super::file_status::reconcile;
use super::lifecycle_gate::{lifecycle_document, structural_check};

/// The runner's done gate: through the task's lifecycle when it has one.
#[derive(Debug, Clone)]
pub struct LifecycleDoneGate {
    settings: RunSettings,
}

impl LifecycleDoneGate {
    /// A gate for runs made with `settings` (the lifecycle's guards run as a run's would).
    pub fn new(settings: RunSettings) -> Self {
        Self { settings }
    }
}

/// The real gate, asked on behalf of the run (its run id in the ledger and the audit log),
/// not of the lifecycle instance.
struct OnBehalfOf<'a> {
    run_id: &'a str,
}

impl DoneGate for OnBehalfOf<'_> {
    fn evaluate(&mut self, request: &GateRequest<'_>) -> GateAnswer {
        TaskDoneGate.evaluate(&GateRequest {
            run_id: self.run_id,
            ..request.clone()
        })
    }
}

impl DoneGate for LifecycleDoneGate {
    fn evaluate(&mut self, request: &GateRequest<'_>) -> GateAnswer {
        let deny = |message: String| GateAnswer::Deny {
            verdict: "UNKNOWN".to_owned(),
            message,
        };
        let wbs = request.wbs;
        let document = match lifecycle_document(request.state_dir, wbs) {
            Ok(Some(document)) => document,
            Ok(None) => return TaskDoneGate.evaluate(request),
            Err(e) => return deny(format!("task {wbs}: its task file cannot be read: {e}")),
        };
        // The file's claim first (file wins, never for done), as `spur task update` does.
        if let Err(e) = record_claim(request, document.path()) {
            return deny(format!("task {wbs}: {e}"));
        }
        let lifecycle = match crate::lifecycle::project_lifecycle(
            request.state_dir,
            crate::lifecycle::EntityKind::Task,
        ) {
            Ok(lifecycle) => lifecycle,
            Err(e) => return deny(format!("task {wbs}: {e}")),
        };
        let entity = EntityKey::of_task(wbs);
        let project_root = request.state_dir.project_root().to_path_buf();
        let check = |to: &str| {
            let document = TaskDocument::read(document.path()).map_err(|e| e.to_string())?;
            let from = crate::store::task_status::current_status(request.state_dir, wbs)
                .map(|s| s.to_string())
                .unwrap_or_default();
            structural_check(&document, wbs, &from, to, &project_root).map_err(|e| e.to_string())
        };
        let mut settings = self.settings.clone();
        settings.policy = request.policy.clone();
        let answer = request_transition(
            &TransitionRequest {
                pipeline: &lifecycle.pipeline,
                pipeline_path: lifecycle.path.clone(),
                entity,
                to: "done".to_owned(),
                current: None,
                vars: Vec::new(),
                force_done_reason: request.force_reason.map(str::to_owned),
                structural_check: Some(&check),
            },
            &settings,
            &mut OnBehalfOf {
                run_id: request.run_id,
            },
        );
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => return deny(format!("task {wbs}: its lifecycle cannot move: {e}")),
        };
        match (answer.outcome, answer.done_gate, answer.denied) {
            // The instance stands in done only as the ledger's done record says: anything
            // else is not the gate's noop.
            (RequestOutcome::Unchanged, _, _) if answer.task_status.as_deref() == Some("done") => {
                GateAnswer::Noop
            }
            (RequestOutcome::Unchanged, _, _) => deny(format!(
                "task {wbs}: its lifecycle stands in done, but its ledger says {}",
                answer.task_status.as_deref().unwrap_or("nothing")
            )),
            (RequestOutcome::Allowed, Some(report), _) => match report.decision {
                GateDecision::Noop => GateAnswer::Noop,
                _ => GateAnswer::Allow {
                    reason: report.reason.unwrap_or(AllowReason::Pass),
                    verdict: report.verdict,
                    certificate: report.certificate,
                },
            },
            (RequestOutcome::Allowed, None, _) => deny(format!(
                "task {wbs}: its lifecycle moved into done without the done gate"
            )),
            (RequestOutcome::Denied, report, denial) => GateAnswer::Deny {
                verdict: report.and_then(|r| r.verdict).unwrap_or_else(|| {
                    crate::done_gate::effective_verdict(request.state_dir, wbs).to_string()
                }),
                message: format!(
                    "task {wbs}: its lifecycle ({}) refused {} → done ({}): {}",
                    answer.pipeline,
                    answer.from,
                    denial.as_ref().map_or("refused", |d| d.reason.as_str()),
                    denial.map(|d| d.detail).unwrap_or_default()
                ),
            },
        }
    }
}

/// Record the task file's status claim in the ledger when it wins (see `file_status`).
fn record_claim(request: &GateRequest<'_>, path: &std::path::Path) -> Result<(), String> {
    let lock = DataLock::acquire(request.state_dir, request.wbs).map_err(|e| e.to_string())?;
    let document = TaskDocument::read(path).map_err(|e| e.to_string())?;
    let user = current_user();
    let context = ChangeContext {
        user: &user,
        run_id: Some(request.run_id),
        time: crate::store::timestamp::now(),
    };
    reconcile(&lock, request.state_dir, &document, &context)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
