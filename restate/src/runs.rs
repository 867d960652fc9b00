//! The `Runs` virtual object: the ids of the runs sent to the engine, in the order they
//! started (`spur runs --engine restate`). One key, [`ALL`]; each `SpurRun` adds itself
//! with a one-way call when it starts.

use restate_sdk::prelude::*;

/// The one key of the object.
pub const ALL: &str = "all";

const IDS: &str = "ids";

/// The list of runs.
pub struct Runs;

#[restate_sdk::object]
impl Runs {
    /// Add run `run_id` (once: a replayed start adds nothing).
    #[handler]
    async fn add(&self, ctx: ObjectContext<'_>, run_id: String) -> HandlerResult<()> {
        let mut ids = ctx
            .get::<Json<Vec<String>>>(IDS)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        if !ids.contains(&run_id) {
            ids.push(run_id);
            ctx.set(IDS, Json(ids));
        }
        Ok(())
    }

    /// The run ids, oldest first.
    #[handler]
    async fn list(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<String>>> {
        Ok(ctx
            .get::<Json<Vec<String>>>(IDS)
            .await?
            .unwrap_or(Json(Vec::new())))
    }
}
