//! `json.update`: rewrite a JSON file (`path`) with a jq expression (`expr`), atomically.
//! `$vars` and each var as `$name` are bound, as in jq guards.

use super::{project_path, ActionContext, ActionResult};
use crate::pipeline::JsonUpdateOptions;

pub fn run(ctx: &ActionContext<'_>, options: &JsonUpdateOptions) -> ActionResult {
    let (path, expr) = match (ctx.required(&options.path), ctx.required(&options.expr)) {
        (Ok(p), Ok(e)) => (p, e),
        (Err(e), _) | (_, Err(e)) => return ActionResult::failed(e),
    };
    let full = project_path(ctx, &path);
    let text = match std::fs::read_to_string(&full) {
        Ok(t) => t,
        Err(e) => return ActionResult::failed(format!("json.update: cannot read {path}: {e}")),
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
