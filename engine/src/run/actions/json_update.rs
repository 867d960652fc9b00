//! `json.update`: rewrite a JSON file (`path`) with a jq expression (`expr`), atomically.
//! `$vars` and each var as `$name` are bound, as in jq guards.

use super::{project_path, read_failure, ActionContext, ActionResult};
use crate::pipeline::JsonUpdateOptions;
use crate::store::bounded_read::read_bounded;

/// The largest JSON file it rewrites: 64 MiB (it is parsed whole, in memory).
const MAX_BYTES: u64 = 64 << 20;

pub fn run(ctx: &ActionContext<'_>, options: &JsonUpdateOptions) -> ActionResult {
    let (path, expr) = match (ctx.required(&options.path), ctx.required(&options.expr)) {
        (Ok(p), Ok(e)) => (p, e),
        (Err(e), _) | (_, Err(e)) => return ActionResult::failed(e),
    };
    let full = project_path(ctx, &path);
    let text = match read_bounded(&full, MAX_BYTES).map(String::from_utf8) {
        Ok(Ok(t)) => t,
        Ok(Err(_)) => {
            return ActionResult::failed(format!(
                "json.update: cannot read {path}: stream did not contain valid UTF-8"
            ))
        }
        Err(e) => {
            return ActionResult::failed(format!(
                "json.update: cannot read {path}: {}",
                read_failure(e)
            ))
        }
    };
    let input: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return ActionResult::failed(format!("json.update: {path} is not JSON: {e}")),
    };
    let output = match crate::run::jq_guard::eval_first(&expr, input, ctx.vars) {
        Ok(v) => v,
        Err(e) => return ActionResult::failed(format!("json.update: {e}")),
    };
    let mut bytes = match serde_json::to_vec_pretty(&output) {
        Ok(b) => b,
        Err(e) => return ActionResult::failed(format!("json.update: {e}")),
    };
    bytes.push(b'\n');
    match crate::store::atomic_file::write_atomic(&full, &bytes) {
        Ok(()) => ActionResult {
            message: Some(format!("updated {path}")),
            ..ActionResult::ok()
        },
        Err(e) => ActionResult::failed(format!("json.update: cannot write {path}: {e}")),
    }
}
