//! The `Task` virtual object, keyed by wbs: the run lock of the task on the fleet, and the
//! task's records the done gate decides from (book: *Running a fleet*, *What lives
//! where*): its ledger's lines, sealed and shaped as a local ledger's, and the verdict
//! artifact spur last wrote for it. A run takes the lock (`lock`) before its first step
//! and gives it back (`unlock`) when it ends, so two runs of one task on two workers
//! cannot both go on, as two local runs cannot. Calls on one key are serialised by the
//! server, so a check and a take (or an append) are one step.
//!
//! The records are written only from other handlers (`ingress_private`): `record` by a
//! run's workflow with what its steps' spur calls appended, never a `done`; `certify` by
//! a run's workflow with what its done gate appended, the only way to `done`. A client of
//! the server's ingress, a step on a worker, can read them (`records`) and write nothing.

use restate_sdk::prelude::*;
use spur_engine::run::fleet_state::FleetWrite;
use spur_engine::store::ledger_record::LedgerRecord;

const HOLDER: &str = "holder";
const LEDGER: &str = "ledger";
const ARTIFACT: &str = "artifact";

/// The task's records, as `records` answers.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct TaskRecords {
    /// The ledger's lines, oldest first.
    pub ledger: Vec<String>,
    /// The verdict artifact's text, when a run wrote one.
    pub artifact: Option<String>,
}

/// The task's object.
pub struct Task;

#[restate_sdk::object]
impl Task {
    /// Take the lock for run `run_id`: `None` when taken (or held by that run already),
    /// else the run that holds it.
    #[handler]
    async fn lock(
        &self,
        ctx: ObjectContext<'_>,
        run_id: String,
    ) -> HandlerResult<Json<Option<String>>> {
        match ctx.get::<String>(HOLDER).await? {
            Some(holder) if holder != run_id => Ok(Json(Some(holder))),
            _ => {
                ctx.set(HOLDER, run_id);
                Ok(Json(None))
            }
        }
    }

    /// Give the lock back, if run `run_id` holds it.
    #[handler]
    async fn unlock(&self, ctx: ObjectContext<'_>, run_id: String) -> HandlerResult<()> {
        if ctx.get::<String>(HOLDER).await?.as_deref() == Some(run_id.as_str()) {
            ctx.clear(HOLDER);
        }
        Ok(())
    }

    /// The run holding the lock, if any.
    #[handler]
    async fn holder(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Option<String>>> {
        Ok(Json(ctx.get::<String>(HOLDER).await?))
    }

    /// The task's ledger and artifact.
    #[handler]
    async fn records(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<TaskRecords>> {
        Ok(Json(TaskRecords {
            ledger: ctx
                .get::<Json<Vec<String>>>(LEDGER)
                .await?
                .map(Json::into_inner)
                .unwrap_or_default(),
            artifact: ctx.get::<String>(ARTIFACT).await?,
        }))
    }

    /// Append what a run's steps' spur calls wrote (never a `done`).
    #[handler(ingress_private)]
    async fn record(&self, ctx: ObjectContext<'_>, write: Json<FleetWrite>) -> HandlerResult<()> {
        append(&ctx, &write.into_inner(), false).await
    }

    /// Append what a run's done gate wrote: the only way a task becomes done on the fleet.
    #[handler(ingress_private)]
    async fn certify(&self, ctx: ObjectContext<'_>, write: Json<FleetWrite>) -> HandlerResult<()> {
        append(&ctx, &write.into_inner(), true).await
    }
}

/// Append `write`'s ledger lines (and keep its artifact), refused whole when they do not
/// follow the ledger as it is, are not the task's records, or hold a `done` outside the
/// gate's write.
async fn append(ctx: &ObjectContext<'_>, write: &FleetWrite, certify: bool) -> HandlerResult<()> {
    let wbs = ctx.key().to_owned();
    let mut ledger = ctx
        .get::<Json<Vec<String>>>(LEDGER)
        .await?
        .map(Json::into_inner)
        .unwrap_or_default();
    if write.after != ledger.len() {
        return Err(TerminalError::new_with_code(
            409,
            format!(
                "task {wbs}'s ledger on the server has {} records; the write follows {}",
                ledger.len(),
                write.after
            ),
        )
        .into());
    }
    for line in &write.lines {
        let record: LedgerRecord = serde_json::from_str(line).map_err(|e| {
            TerminalError::new_with_code(400, format!("not a task ledger record: {e}"))
        })?;
        if record.wbs != wbs {
            return Err(TerminalError::new_with_code(
                400,
                format!("a record of task {} sent to task {wbs}", record.wbs),
            )
            .into());
        }
        if !certify && record.status().is_some_and(|s| s.to.is_done()) {
            return Err(TerminalError::new_with_code(
                403,
                format!("task {wbs} becomes done only through its run's done gate"),
            )
            .into());
        }
    }
    ledger.extend(write.lines.iter().cloned());
    ctx.set(LEDGER, Json(ledger));
    if let Some(artifact) = &write.artifact {
        ctx.set(ARTIFACT, artifact.clone());
    }
    Ok(())
}
