//! The `SpurRun` workflow, keyed by run id: `run` drives one run of spur's runner on a
//! blocking thread, journaling each host call as a step; `answer` resolves the promise of
//! the pause the run waits at; `status` tells whether it waits.

use std::sync::Arc;

use restate_sdk::prelude::*;
use spur_engine::run::journal::Record;
use spur_engine::run::PauseNote;
use tokio::sync::mpsc;

use crate::audit::{AuditAppend, AuditClient, ALL as AUDIT_ALL};
use crate::bridge::{Call, ChannelJournal, ToRunner};
use crate::protocol::{AnswerBody, RunReply, RunRequest, RunStatus};
use crate::runs::{RunsClient, ALL};
use crate::task::TaskClient;
use spur_engine::run::fleet_state::{FleetRecords, FleetWrite};

fn run_id_of(ctx: &WorkflowContext<'_>) -> String {
    ctx.key().to_owned()
}
use crate::worker::Worker;

/// The state key naming the promise a paused run waits on.
const PAUSE: &str = "pause";

/// The state key holding the [`PauseNote`] of the pause the run waits at.
const NOTE: &str = "pause-note";

/// The state key counting the run's journaled batches of records; batch `i` is kept
/// under `records i` (`spur trace`, `spur runs` read them while the run goes on).
const BATCHES: &str = "batches";

/// The step names the journaled host gives its batches of records.
const RECORDS_STEP: &str = "records ";

/// The server's records of task `wbs` and the audit chain, as `FleetRecords` JSON.
async fn task_records(ctx: &WorkflowContext<'_>, wbs: &str) -> Result<String, String> {
    let task = ctx
        .object_client::<TaskClient>(wbs.to_owned())
        .records()
        .call()
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    let audit = ctx
        .object_client::<AuditClient>(AUDIT_ALL)
        .lines()
        .call()
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    serde_json::to_string(&FleetRecords {
        ledger: task.ledger,
        artifact: task.artifact,
        audit,
    })
    .map_err(|e| e.to_string())
}

/// Send a writer's `FleetWrite` (JSON) to the handlers: its audit lines first (only the
/// gate's write has any), then its ledger lines.
async fn task_write(
    ctx: &WorkflowContext<'_>,
    wbs: &str,
    write: &str,
    certify: bool,
) -> Result<(), String> {
    let write: FleetWrite = serde_json::from_str(write).map_err(|e| e.to_string())?;
    if !write.audit.is_empty() {
        if !certify {
            return Err("only the done gate appends to the audit chain".to_owned());
        }
        ctx.object_client::<AuditClient>(AUDIT_ALL)
            .append(Json(AuditAppend {
                after: write.audit_after,
                lines: write.audit.clone(),
            }))
            .call()
            .await
            .map_err(|e| e.to_string())?;
    }
    let task = ctx.object_client::<TaskClient>(wbs.to_owned());
    let sent = if certify {
        task.certify(Json(write)).call().await
    } else {
        task.record(Json(write)).call().await
    };
    sent.map_err(|e| e.to_string())?;
    ctx.object_client::<AuditClient>(AUDIT_ALL)
        .add_task(wbs.to_owned())
        .send();
    Ok(())
}

/// The workflow, serving runs with `worker`.
pub struct SpurRun {
    pub(crate) worker: Arc<dyn Worker>,
}

#[restate_sdk::workflow]
impl SpurRun {
    /// Run the request to its end: an outcome, an ambiguous action, or an error.
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        request: Json<RunRequest>,
    ) -> Result<Json<RunReply>, HandlerError> {
        let run_id = ctx.key().to_owned();
        ctx.object_client::<RunsClient>(ALL)
            .add(run_id.clone())
            .send();
        let mut batches: u64 = 0;
        // The task whose lock this run took, released when the run ends.
        let mut locked: Option<String> = None;
        let (calls, mut from_runner) = mpsc::unbounded_channel();
        let worker = Arc::clone(&self.worker);
        let request = request.into_inner();
        let runner = tokio::task::spawn_blocking(move || {
            let mut journal = ChannelJournal { calls };
            worker.run(&run_id, request, &mut journal)
        });
        while let Some(call) = from_runner.recv().await {
            match call {
                Call::Step {
                    name,
                    to_runner,
                    value,
                } => {
                    let is_batch = name.starts_with(RECORDS_STEP);
                    let execute = to_runner.clone();
                    let journaled = ctx
                        .run(|| async move {
                            execute
                                .send(ToRunner::Execute)
                                .map_err(|_| HandlerError::from("the runner stopped"))?;
                            // A body that cannot make its value journals that it failed:
                            // the same on every replay, and the run stops with it.
                            value
                                .await
                                .map_err(|_| HandlerError::from("the runner stopped"))?
                                .map_err(|why| TerminalError::new(why).into())
                        })
                        .name(name)
                        .await;
                    match journaled {
                        Ok(v) => {
                            if is_batch {
                                ctx.set(&format!("{RECORDS_STEP}{batches}"), v.clone());
                                batches += 1;
                                ctx.set(BATCHES, batches);
                            }
                            let _ = to_runner.send(ToRunner::Done(v));
                        }
                        // A step's body failed (journaled): the runner ends the run with
                        // it, and its reply is the run's.
                        Err(e) => {
                            let _ = to_runner.send(ToRunner::Failed(e.message().to_owned()));
                        }
                    }
                }
                Call::Lock { wbs, reply } => {
                    let holder = ctx
                        .object_client::<TaskClient>(wbs.clone())
                        .lock(run_id_of(&ctx))
                        .call()
                        .await;
                    let holder = holder.map(Json::into_inner);
                    if matches!(holder, Ok(None)) {
                        locked = Some(wbs);
                    }
                    let _ = reply.send(holder.map_err(|e| e.to_string()));
                }
                Call::TaskRecords { wbs, reply } => {
                    let records = task_records(&ctx, &wbs).await;
                    let _ = reply.send(records);
                }
                Call::TaskWrite {
                    wbs,
                    write,
                    certify,
                    reply,
                } => {
                    let written = task_write(&ctx, &wbs, &write, certify).await;
                    let _ = reply.send(written);
                }
                Call::Promise { name, note, reply } => {
                    ctx.set(PAUSE, name.clone());
                    ctx.set(NOTE, note);
                    let answer = ctx.promise::<String>(&name).await;
                    ctx.clear(PAUSE);
                    ctx.clear(NOTE);
                    let _ = reply.send(answer.map_err(|e| e.to_string()));
                }
            }
        }
        let reply = runner.await.map_err(HandlerError::from)?;
        if let Some(wbs) = locked {
            ctx.object_client::<TaskClient>(wbs)
                .unlock(run_id_of(&ctx))
                .send();
        }
        Ok(Json(reply))
    }

    /// Answer the pause the run waits at (`spur continue`): the hitl answer (ignored by a
    /// `pause: true` state) and who gave it, journaled in the run's `resumed`. An answer
    /// the question does not accept is refused here, before it reaches the run (there it
    /// would end the run).
    #[handler]
    async fn answer(
        &self,
        ctx: SharedWorkflowContext<'_>,
        body: Json<AnswerBody>,
    ) -> HandlerResult<()> {
        let given = body.into_inner().into_pause_answer();
        let answer = given.answer.clone();
        let Some(pause) = ctx.get::<String>(PAUSE).await? else {
            return Err(TerminalError::new("the run is not paused").into());
        };
        let note = ctx.get::<String>(NOTE).await?;
        let question = note
            .and_then(|n| serde_json::from_str::<PauseNote>(&n).ok())
            .and_then(|n| n.outcome.question);
        if let Some(q) = question {
            if !q.accepts(&answer) {
                return Err(TerminalError::new_with_code(
                    400,
                    format!(
                        "{answer:?} is not an answer to {:?} (answers: {})",
                        q.prompt,
                        q.shown_choices(", ")
                    ),
                )
                .into());
            }
        }
        let value = serde_json::to_string(&given)
            .map_err(|e| TerminalError::new(format!("cannot keep the answer: {e}")))?;
        ctx.resolve_promise::<String>(&pause, value);
        Ok(())
    }

    /// Whether the run waits at a pause, and which.
    #[handler]
    async fn status(&self, ctx: SharedWorkflowContext<'_>) -> HandlerResult<Json<RunStatus>> {
        let note = ctx.get::<String>(NOTE).await?;
        Ok(Json(RunStatus {
            paused: ctx.get::<String>(PAUSE).await?,
            note: note.and_then(|n| serde_json::from_str(&n).ok()),
        }))
    }

    /// The run's journal records so far (none for a run the engine does not know).
    #[handler]
    async fn records(&self, ctx: SharedWorkflowContext<'_>) -> HandlerResult<Json<Vec<Record>>> {
        let batches = ctx.get::<u64>(BATCHES).await?.unwrap_or(0);
        let mut records = Vec::new();
        for i in 0..batches {
            let Some(text) = ctx.get::<String>(&format!("{RECORDS_STEP}{i}")).await? else {
                continue;
            };
            let batch: Vec<Record> = serde_json::from_str(&text)
                .map_err(|e| TerminalError::new(format!("batch {i} of the run's records: {e}")))?;
            records.extend(batch);
        }
        Ok(Json(records))
    }
}
