//! The `Task` virtual object, keyed by wbs: the run lock of the task on the fleet. A run
//! takes it (`lock`) before its first step and gives it back (`unlock`) when it ends, so
//! two runs of one task on two workers cannot both go on, as two local runs cannot. Calls
//! on one key are serialised by the server, so a check and a take are one step.

use restate_sdk::prelude::*;

const HOLDER: &str = "holder";

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
}
