//! `spur task update WBS STATUS` for a task with the lifecycle: a request to the task's
//! lifecycle instance (`task:<wbs>` of the project's task lifecycle, or the one spur
//! ships), with `spur task check --as STATUS` brought as its structural check and the
//! done gate — the same one `spur task certify` runs, with its messages — for `done`.

use spur_engine::done_gate::{effective_verdict, AllowReason, ForceReason, GateDecision};
use spur_engine::lifecycle::{request_transition, EntityKey, RequestOutcome, TransitionRequest};
use spur_engine::run::step_timeouts::StepTimeouts;
use spur_engine::run::{DenialReason, DoneGate, Durability, GateAnswer, GateRequest, RunSettings};
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status;
use spur_engine::task::lifecycle_gate::structural_check;
use spur_engine::task_file::TaskDocument;
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_certify::{certify_done, Outcome};
use super::Failure;

/// Move `wbs` (whose task file is `document`) into `to` (canonical) through its lifecycle.
pub(super) fn through_lifecycle(
    state_dir: &StateDir,
    wbs: &Wbs,
    document: &TaskDocument,
    to: &'static str,
    force: Option<&ForceReason>,
) -> Result<Outcome, Failure> {
    let lifecycle = spur_engine::lifecycle::project_lifecycle(
        state_dir,
        spur_engine::lifecycle::EntityKind::Task,
    )
    .map_err(Failure::usage)?;
    let entity = EntityKey::of_task(wbs);
    let settings = lifecycle_settings(state_dir, Some(wbs))?;
    let project_root = state_dir.project_root().to_path_buf();
    let path = document.path().to_path_buf();
    let check = |target: &str| {
        // Read again: what is checked is the file as it is when the edge is tried.
        let document = TaskDocument::read(&path).map_err(|e| e.to_string())?;
        let from = task_status::current_status(state_dir, wbs)
            .map(|s| s.to_string())
            .unwrap_or_default();
        structural_check(&document, wbs, &from, target, &project_root).map_err(|e| e.to_string())
    };
    let mut gate = CertifyGate {
        state_dir,
        wbs,
        force,
        outcome: None,
    };
    let answer = request_transition(
        &TransitionRequest {
            pipeline: &lifecycle.pipeline,
            pipeline_path: lifecycle.path.clone(),
            entity,
            to: to.to_owned(),
            current: None,
            vars: Vec::new(),
            force_done_reason: force.map(|f| f.as_str().to_owned()),
            structural_check: Some(&check),
        },
        &settings,
        &mut gate,
    )
    .map_err(status_change_failure)?;
    let status = answer.task_status.clone().unwrap_or_default();
    // Whatever the gate said, as `spur task certify` says it.
    match gate.outcome {
        Some(Err(failure)) => return Err(failure),
        Some(Ok(mut outcome)) => {
            outcome.status = status;
            return Ok(outcome);
        }
        None => {}
    }
    Ok(match (answer.outcome, answer.denied) {
        (RequestOutcome::Allowed, _) => Outcome {
            decision: GateDecision::Allow,
            reason: None,
            verdict: None,
            message: format!("task {wbs}: {} → {}", answer.from, answer.state),
            status,
            certificate: None,
        },
        (RequestOutcome::Unchanged, _) if to == "done" && status != "done" => Outcome {
            decision: GateDecision::Deny,
            reason: None,
            verdict: None,
            message: format!(
                "task {wbs}: its lifecycle stands in done, but its ledger says {status}: only the done gate's record is done"
            ),
            status,
            certificate: None,
        },
        (RequestOutcome::Unchanged, _) => Outcome {
            decision: GateDecision::Noop,
            reason: None,
            verdict: None,
            message: format!("task {wbs} is already {}; nothing to do", answer.state),
            status,
            certificate: None,
        },
        (RequestOutcome::Denied, denial) => Outcome {
            decision: GateDecision::Deny,
            reason: None,
            verdict: (to == "done").then(|| effective_verdict(state_dir, wbs).to_string()),
            message: match denial {
                // The check's refusal says which task stays where itself.
                Some(d) if d.reason == DenialReason::CheckFailed => d.detail,
                Some(d) => format!("task {wbs} stays {}: {}", answer.from, d.detail),
                None => format!("task {wbs} stays {}", answer.from),
            },
            status,
            certificate: None,
        },
    })
}

/// The lifecycle's guards run as a run's would: spur itself as `spurBin`, the project's
/// step timeouts, the gate's policy of this call (a run's pin, from a run's step).
pub(super) fn lifecycle_settings(
    state_dir: &StateDir,
    wbs: Option<&Wbs>,
) -> Result<RunSettings, Failure> {
    let loaded =
        StepTimeouts::load(state_dir).map_err(|e| Failure::usage(miette::Report::new(e)))?;
    let durability = match std::env::var("SPUR_JOURNAL_FSYNC").as_deref() {
        Ok("0") => Durability::Unsafe,
        _ => Durability::Fsync,
    };
    Ok(RunSettings {
        state_dir: state_dir.clone(),
        durability,
        path_prefix: None,
        spur_bin: std::env::current_exe().ok(),
        timeouts: loaded.timeouts,
        // A lifecycle request runs guards only, never an `http.request` step.
        http_allow: spur_engine::run::http_allow::HttpAllowList::default(),
        policy: super::run_policy::policy_for(state_dir, wbs)?,
        run_socket: None,
        // Its jq guards run in a jq worker, as a run's do.
        jq: super::jq::sandbox(),
    })
}

/// The done gate of a lifecycle request from `spur task update`: `certify_done`, its
/// outcome kept for the answer.
struct CertifyGate<'a> {
    state_dir: &'a StateDir,
    wbs: &'a Wbs,
    force: Option<&'a ForceReason>,
    outcome: Option<Result<Outcome, Failure>>,
}

impl DoneGate for CertifyGate<'_> {
    fn evaluate(&mut self, _request: &GateRequest<'_>) -> GateAnswer {
        let outcome = certify_done(self.state_dir, self.wbs, self.force);
        let answer = match &outcome {
            Err(_) => GateAnswer::Deny {
                verdict: "UNKNOWN".to_owned(),
                message: format!("task {} cannot be certified (see the error)", self.wbs),
            },
            Ok(outcome) => match outcome.decision {
                GateDecision::Noop => GateAnswer::Noop,
                GateDecision::Allow => GateAnswer::Allow {
                    reason: match outcome.reason {
                        Some("forced") => AllowReason::Forced,
                        Some("external") => AllowReason::External,
                        _ => AllowReason::Pass,
                    },
                    verdict: outcome.verdict.clone(),
                    certificate: outcome.certificate.clone(),
                },
                GateDecision::Deny => GateAnswer::Deny {
                    verdict: outcome
                        .verdict
                        .clone()
                        .unwrap_or_else(|| "UNKNOWN".to_owned()),
                    message: outcome.message.clone(),
                },
            },
        };
        self.outcome = Some(outcome);
        answer
    }
}

/// A lifecycle request that could not be decided, for `task update` and `feature update`:
/// bad input exits 2, anything else 1.
pub(super) fn status_change_failure(e: spur_engine::lifecycle::LifecycleError) -> Failure {
    let code = if e.is_usage() {
        exit::USAGE
    } else {
        exit::FAILED
    };
    Failure::with_code(miette::Report::new(e), code)
}
