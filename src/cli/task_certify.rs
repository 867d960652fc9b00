//! `spur task certify WBS [--force-done --reason R] [--json]`: run the done gate for a
//! task — the same as `spur task update WBS done`, which goes through here too. It is how
//! an uncertified task (a view that says done, no ledger record) becomes certified, or,
//! with `--force-done --reason`, is adopted, audited.

use std::process::ExitCode;

use spur_engine::done_certificate::{CertificateReport, Issued};
use spur_engine::done_gate::{
    evaluate_done_transition, record_done, DoneDecision, DoneRequest, ForceReason, GateDecision,
};
use spur_engine::policy::{PolicyError, PolicySource};
use spur_engine::store::audit::current_user;
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status::{self, ChangeContext, Status};
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::{CliResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The task id (wbs).
    wbs: String,
    /// Adopt the task as done whatever the verdict says; recorded in the audit log. Needs
    /// --reason.
    #[arg(long, requires = "reason")]
    force_done: bool,
    /// Why the override is justified (non-empty).
    #[arg(long, requires = "force_done")]
    reason: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, state_dir: &StateDir) -> CliResult {
    let wbs = Wbs::parse(&args.wbs).map_err(Failure::usage)?;
    let force = match (&args.reason, args.force_done) {
        (Some(reason), true) => Some(ForceReason::new(reason.as_str()).map_err(Failure::usage)?),
        _ => None,
    };
    // The same path as `spur task update WBS done`: a task with the lifecycle passes its
    // graph and `spur task check --as done` first.
    let outcome = super::task_status_change::change_status(
        state_dir,
        &super::task_status_change::ChangeRequest {
            wbs: &wbs,
            status: "done",
            force: force.as_ref(),
            no_lifecycle: false,
        },
    )?;
    Ok(outcome.render(&wbs, args.json))
}

/// What a status change did, for rendering.
#[derive(serde::Serialize)]
pub(super) struct Outcome {
    pub(super) decision: GateDecision,
    pub(super) reason: Option<&'static str>,
    pub(super) verdict: Option<String>,
    pub(super) message: String,
    pub(super) status: String,
    /// The done certificate of an allow, when the project writes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) certificate: Option<CertificateReport>,
}

/// The `--json` document, fields in the documented order.
#[derive(serde::Serialize)]
struct OutcomeJson<'a> {
    wbs: &'a str,
    #[serde(flatten)]
    outcome: &'a Outcome,
}

impl Outcome {
    /// Print it; exit 1 on deny, else 0 — also when the certificate could not be written:
    /// the exit code says what the gate did, the certificate is reported beside it.
    pub(super) fn render(&self, wbs: &Wbs, json: bool) -> ExitCode {
        if json {
            let document = OutcomeJson {
                wbs: wbs.as_str(),
                outcome: self,
            };
            outln!(
                "{}",
                serde_json::to_string_pretty(&document).unwrap_or_default()
            );
        } else if self.decision == GateDecision::Deny {
            eprintln!("denied: {}", self.message);
        } else {
            outln!("{}", self.message);
            if let Some(CertificateReport::Written { path }) = &self.certificate {
                outln!("  done certificate written: {path}");
            }
        }
        ExitCode::from(if self.decision == GateDecision::Deny {
            exit::FAILED
        } else {
            exit::SUCCESS
        })
    }
}

/// Ask the done gate for `wbs` and record an allow, all under the task's data lock: the
/// ledger read, the artifact read, the audit record and the ledger append see no other
/// writer of the task in between. A ledger that cannot be trusted is exit 2, before the
/// gate is asked.
pub(super) fn certify_done(
    state_dir: &StateDir,
    wbs: &Wbs,
    force: Option<&ForceReason>,
) -> Result<Outcome, Failure> {
    let policy = super::run_policy::policy_for(state_dir, Some(wbs))?;
    // A call from a run's step is on record as the run's.
    let run_id = match &policy {
        PolicySource::Pinned(pinned) => Some(pinned.run_id().to_owned()),
        PolicySource::Project => None,
    };
    let lock =
        DataLock::acquire(state_dir, wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
    let current = task_status::current_status(state_dir, wbs).map_err(Failure::usage)?;
    // A person's decision needs the approved policy (an override does not read it; a
    // config that cannot be read is the gate's to deny under).
    if force.is_none() {
        match super::run_policy::approve_on_first_use(state_dir, &policy) {
            Ok(()) | Err(PolicyError::Config(_)) => {}
            Err(e) => return Err(Failure::usage(miette::Report::new(e))),
        }
    }
    let user = current_user();
    let decision = evaluate_done_transition(&DoneRequest {
        lock: &lock,
        force,
        state_dir,
        run_id: run_id.as_deref(),
        user: &user,
        policy: &policy,
    });
    // The artifact's warnings (malformed artifact, self-inconsistent, other task) are
    // diagnostics: stderr, in every output mode.
    if let DoneDecision::Allow { evaluation, .. } | DoneDecision::Deny { evaluation, .. } =
        &decision
    {
        for warning in &evaluation.warnings {
            eprintln!("warning[{}]: {}", warning.code, warning.message);
        }
    }
    Ok(match decision {
        DoneDecision::Noop { message } => {
            // Certified already; a view that says otherwise is put back.
            if let Err(e) = task_status::refresh_view(&lock, state_dir) {
                eprintln!("warning: {e}");
            }
            Outcome {
                decision: GateDecision::Noop,
                reason: None,
                verdict: None,
                message,
                status: current.to_string(),
                certificate: None,
            }
        }
        DoneDecision::Allow {
            reason,
            done,
            verdict,
            message,
            ..
        } => {
            let context = ChangeContext {
                user: &user,
                run_id: run_id.as_deref(),
                time: spur_engine::store::timestamp::now(),
            };
            let recorded = record_done(&lock, state_dir, &done, &context, &policy)
                .map_err(|e| Failure::with_code(e, exit::FAILED))?;
            if let Some(e) = &recorded.view_error {
                eprintln!("warning: {e}");
            }
            let status = recorded
                .record
                .as_ref()
                .map_or_else(|| Status::done(&done).to_string(), |r| r.status.to_string());
            let certificate = recorded.certificate.report(wbs);
            if let Issued::Failed(error) = recorded.certificate {
                report_certificate_failure(wbs, error);
            }
            Outcome {
                decision: GateDecision::Allow,
                reason: Some(reason.as_str()),
                verdict: Some(verdict.to_string()),
                message,
                status,
                certificate,
            }
        }
        DoneDecision::Deny {
            verdict, message, ..
        } => Outcome {
            decision: GateDecision::Deny,
            reason: None,
            verdict: Some(verdict.to_string()),
            message,
            status: current.to_string(),
            certificate: None,
        },
    })
}

/// A certificate that could not be written: an error on stderr, in every output mode, that
/// says the task is done and how to get the certificate.
pub(super) fn report_certificate_failure(
    wbs: &Wbs,
    error: spur_engine::done_certificate::CertificateError,
) {
    let report = miette::Report::new(error).wrap_err(format!(
        "task {wbs} is done (recorded in its ledger), but its done certificate was not written; \
         once fixed, certify it again: {}",
        spur_engine::done_certificate::retry_command(wbs)
    ));
    eprintln!("{report:?}");
}
