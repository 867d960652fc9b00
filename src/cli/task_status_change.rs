//! A task's status change, as `spur task update WBS STATUS` and `spur task record
//! --transition STATUS` make it. A task whose task file has the lifecycle (frontmatter with
//! `status:`) first has its file's claim recorded (file wins), then the change is a request
//! to the task's lifecycle instance (`task:<wbs>` of the task lifecycle, journaled): its
//! edge, `spur task check --as STATUS` for testing and done, its guards, and for done the
//! done gate. `--no-lifecycle` skips the instance (its edges and guards), never the
//! structural check or the done gate. A bare task (no task file, or one without
//! frontmatter) takes any status, and done through the done gate.

use spur_engine::diagnostic::Code;
use spur_engine::done_gate::{ForceReason, GateDecision};
use spur_engine::store::audit::current_user;
use spur_engine::store::data_lock::DataLock;
use spur_engine::store::state_dir::StateDir;
use spur_engine::store::task_status::{self, ChangeContext, Status, StatusChange};
use spur_engine::task::file_status::reconcile;
use spur_engine::task::lifecycle_gate::{lifecycle_document, structural_check};
use spur_engine::task::status_name::{canonical_status, TASK_STATUSES};
use spur_engine::task_file::TaskDocument;
use spur_engine::wbs::Wbs;

use super::failure::exit;
use super::task_certify::{certify_done, Outcome};
use super::task_lifecycle::through_lifecycle;
use super::Failure;

/// What was asked.
pub(super) struct ChangeRequest<'a> {
    pub(super) wbs: &'a Wbs,
    /// The status as typed.
    pub(super) status: &'a str,
    pub(super) force: Option<&'a ForceReason>,
    /// Skip the lifecycle graph (never the structural check or the done gate).
    pub(super) no_lifecycle: bool,
}

/// Make the change. A refusal (lifecycle, check, gate) is an outcome with decision
/// `deny` (exit 1); input that is not usable is a failure (exit 2).
pub(super) fn change_status(
    state_dir: &StateDir,
    request: &ChangeRequest<'_>,
) -> Result<Outcome, Failure> {
    let wbs = request.wbs;
    let document = lifecycle_document(state_dir, wbs).map_err(Failure::usage)?;
    let Some(document) = document else {
        return change_bare(state_dir, request);
    };
    let Some(to) = canonical_status(request.status) else {
        return Err(Failure::usage(miette::miette!(
            code = Code::UsageInvalidStatus,
            help = format!(
                "the task statuses are {} (any case; `in-progress` is wip, `completed` done)",
                TASK_STATUSES.join(", ")
            ),
            "{:?} is not a task status",
            request.status
        )));
    };
    check_force(request, to == "done")?;
    let user = current_user();
    let context = ChangeContext {
        user: &user,
        run_id: None,
        time: spur_engine::store::timestamp::now(),
    };
    let lock =
        DataLock::acquire(state_dir, wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
    // Read again under the lock: what is checked is what no other spur writer changes.
    let document = TaskDocument::read(document.path()).map_err(Failure::usage)?;
    if let Err(e) = reconcile(&lock, state_dir, &document, &context) {
        return Err(Failure::with_code(e, exit::FAILED));
    }
    let current = task_status::current_status(state_dir, wbs).map_err(Failure::usage)?;
    if current.as_str() == to {
        return if to == "done" {
            drop(lock);
            certify_done(state_dir, wbs, request.force)
        } else {
            let open = Status::open(to).map_err(Failure::usage)?;
            record_open(&lock, state_dir, wbs, &current, open, &context)
        };
    }
    if !request.no_lifecycle {
        // The instance takes the locks it needs (the gate the data lock) itself.
        drop(lock);
        return through_lifecycle(state_dir, wbs, &document, to, request.force);
    }
    if let Err(refused) = structural_check(
        &document,
        wbs,
        current.as_str(),
        to,
        state_dir.project_root(),
    ) {
        return Ok(Outcome {
            decision: GateDecision::Deny,
            reason: None,
            verdict: None,
            message: refused.to_string(),
            status: current.to_string(),
            certificate: None,
        });
    }
    if to == "done" {
        // The gate takes the data lock itself.
        drop(lock);
        return certify_done(state_dir, wbs, request.force);
    }
    let open = Status::open(to).map_err(Failure::usage)?;
    record_open(&lock, state_dir, wbs, &current, open, &context)
}

/// A task without the lifecycle: any well-formed status, done through the gate.
fn change_bare(state_dir: &StateDir, request: &ChangeRequest<'_>) -> Result<Outcome, Failure> {
    let wbs = request.wbs;
    let to_done = Status::names_done(request.status);
    check_force(request, to_done)?;
    if to_done {
        return certify_done(state_dir, wbs, request.force);
    }
    let open = Status::open(request.status).map_err(Failure::usage)?;
    let lock =
        DataLock::acquire(state_dir, wbs).map_err(|e| Failure::with_code(e, exit::FAILED))?;
    let current = task_status::current_status(state_dir, wbs).map_err(Failure::usage)?;
    let user = current_user();
    let context = ChangeContext {
        user: &user,
        run_id: None,
        time: spur_engine::store::timestamp::now(),
    };
    record_open(&lock, state_dir, wbs, &current, open, &context)
}

fn check_force(request: &ChangeRequest<'_>, to_done: bool) -> Result<(), Failure> {
    if request.force.is_some() && !to_done {
        return Err(Failure::usage(miette::miette!(
            code = Code::UsageForceDoneNeedsDone,
            help = "use `spur task update WBS done --force-done --reason \"why\"`",
            "--force-done applies only to the status done, not {:?}",
            request.status
        )));
    }
    Ok(())
}

/// Append a change to a status other than done (under `lock`), or say it is a no-op.
fn record_open(
    lock: &DataLock,
    state_dir: &StateDir,
    wbs: &Wbs,
    current: &Status,
    open: task_status::OpenStatus,
    context: &ChangeContext<'_>,
) -> Result<Outcome, Failure> {
    let noop = open.status() == current;
    let record = task_status::record_change(lock, state_dir, StatusChange::To(open), context)
        .map_err(|e| Failure::with_code(e, exit::FAILED))?;
    Ok(if noop {
        Outcome {
            decision: GateDecision::Noop,
            reason: None,
            verdict: None,
            message: format!("task {wbs} is already {current}; nothing to do"),
            status: current.to_string(),
            certificate: None,
        }
    } else {
        Outcome {
            decision: GateDecision::Allow,
            reason: None,
            verdict: None,
            message: format!("task {wbs}: {current} → {}", record.status),
            status: record.status.to_string(),
            certificate: None,
        }
    })
}
