//! The `Audit` virtual object: the project's audit hash chain on the fleet (a forced
//! override's records), one key ([`ALL`]) so its appends are serialised by the server.
//! Lines keep the local audit log's shape and seals. Appended only from other handlers
//! (a run's workflow, with what its done gate wrote); read by anyone. It also lists the
//! tasks whose ledgers the server holds.

use restate_sdk::prelude::*;

/// The one key of the object.
pub const ALL: &str = "all";

const LINES: &str = "lines";
const TASKS: &str = "tasks";

/// Lines that follow the chain's first `after` lines.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct AuditAppend {
    /// How many lines the writer started from.
    pub after: usize,
    /// The lines it appended.
    pub lines: Vec<String>,
}

/// The audit chain.
pub struct Audit;

#[restate_sdk::object]
impl Audit {
    /// The chain's lines, oldest first.
    #[handler]
    async fn lines(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<String>>> {
        Ok(ctx
            .get::<Json<Vec<String>>>(LINES)
            .await?
            .unwrap_or(Json(Vec::new())))
    }

    /// The tasks whose ledgers the server holds (`spur audit verify --engine restate`).
    #[handler]
    async fn tasks(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<String>>> {
        Ok(ctx
            .get::<Json<Vec<String>>>(TASKS)
            .await?
            .unwrap_or(Json(Vec::new())))
    }

    /// Note that task `wbs` has a ledger on the server.
    #[handler(ingress_private)]
    async fn add_task(&self, ctx: ObjectContext<'_>, wbs: String) -> HandlerResult<()> {
        let mut tasks = ctx
            .get::<Json<Vec<String>>>(TASKS)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        if !tasks.contains(&wbs) {
            tasks.push(wbs);
            ctx.set(TASKS, Json(tasks));
        }
        Ok(())
    }

    /// Append lines, refused when the chain has moved on since the writer read it.
    #[handler(ingress_private)]
    async fn append(&self, ctx: ObjectContext<'_>, append: Json<AuditAppend>) -> HandlerResult<()> {
        let append = append.into_inner();
        let mut lines = ctx
            .get::<Json<Vec<String>>>(LINES)
            .await?
            .map(Json::into_inner)
            .unwrap_or_default();
        if append.after != lines.len() {
            return Err(TerminalError::new_with_code(
                409,
                format!(
                    "the audit chain on the server has {} records; the write follows {}",
                    lines.len(),
                    append.after
                ),
            )
            .into());
        }
        lines.extend(append.lines);
        ctx.set(LINES, Json(lines));
        Ok(())
    }
}
