//! `run.artifact`: record a path and its kind in the run (`artifacts.jsonl` of the run
//! directory, with the file's sha256 when it is a readable regular file) — never the body.

use super::{project_path, worktree, ActionContext, ActionResult};
use crate::pipeline::ArtifactOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &ArtifactOptions) -> ActionResult {
    let resolved = (|| {
        let path = ctx.required_opt(options.path.as_ref(), "path")?;
        let kind = match ctx.optional(options.artifact_kind.as_ref())? {
            Some(kind) => Some(kind),
            None => ctx.optional(options.kind.as_ref())?,
        };
        Ok::<_, String>((path, kind.unwrap_or_else(|| "file".to_owned())))
    })();
    let (path, kind) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    let sha256 = worktree::file_sha256(&project_path(ctx, &path))
        .ok()
        .map(|digest| crate::store::digest::hex(&digest));
    let line = serde_json::json!({
        "path": path,
        "kind": kind,
        "runId": ctx.run_id,
        "sha256": sha256,
    });
    let record = ctx.run_dir.join("artifacts.jsonl");
    match crate::store::atomic_file::append_line_durable(&record, &line.to_string()) {
        Ok(()) => ActionResult {
            message: Some(format!("artifact {kind}: {path}")),
            ..ActionResult::ok()
        },
        Err(e) => ActionResult::failed(format!(
            "run.artifact: cannot record {path} in {}: {e}",
            record.display()
        )),
    }
}
