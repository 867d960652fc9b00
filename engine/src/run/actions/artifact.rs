//! `run.artifact`: record a path and its kind in the run (`artifacts.jsonl` of the run
//! directory, with the file's sha256 when it exists) — never the body.

use super::{opt_str, project_path, required_str, ActionContext, ActionResult};

pub fn run(ctx: &mut ActionContext<'_>) -> ActionResult {
    let path = match required_str(ctx.options, "run.artifact", "path") {
        Ok(p) => p,
        Err(e) => return ActionResult::failed(e),
    };
    let kind = opt_str(ctx.options, "artifactKind")
        .or_else(|| opt_str(ctx.options, "kind"))
        .unwrap_or("file");
    let sha256 = std::fs::read(project_path(ctx, path))
        .ok()
        .map(|bytes| crate::store::digest::sha256_hex(&bytes));
    let line = serde_json::json!({
        "path": path,
        "kind": kind,
        "runId": ctx.run_id,
        "sha256": sha256,
    });
    match crate::store::atomic_file::append_line_durable(
        &ctx.run_dir.join("artifacts.jsonl"),
        &line.to_string(),
    ) {
        Ok(()) => ActionResult {
            message: Some(format!("artifact {kind}: {path}")),
            ..ActionResult::ok()
        },
        Err(e) => ActionResult::failed(format!("run.artifact: cannot record {path}: {e}")),
    }
}
