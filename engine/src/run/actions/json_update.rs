//! `json.update`: rewrite a JSON file (`path`) with a jq expression (`expr`), atomically.
//! `$vars` and each var as `$name` are bound, as in jq guards. When the file is a task's
//! verdict artifact (`.spur/run/<wbs>-verdict.json`), the read-modify-write holds the
//! task's data lock, as every other writer of the artifact does, and the write is recorded
//! in the task ledger as spur's when what it read was spur's (`done_gate::provenance`).

use std::path::Path;

use super::{project_path, read_failure, ActionContext, ActionResult};
use crate::done_gate::provenance::{record_rewrite, Rewrite};
use crate::pipeline::JsonUpdateOptions;
use crate::store::bounded_read::read_bounded;
use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::VerdictWriter;
use crate::wbs::Wbs;

/// The largest JSON file it rewrites: 64 MiB (it is parsed whole, in memory).
const MAX_BYTES: u64 = 64 << 20;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &JsonUpdateOptions) -> ActionResult {
    let (path, expr) = match (ctx.required(&options.path), ctx.required(&options.expr)) {
        (Ok(p), Ok(e)) => (p, e),
        (Err(e), _) | (_, Err(e)) => return ActionResult::failed(e),
    };
    let full = project_path(ctx, &path);
    let lock = match verdict_task(ctx.state_dir, &full)
        .map(|wbs| DataLock::acquire(ctx.state_dir, &wbs))
        .transpose()
    {
        Ok(lock) => lock,
        Err(e) => return ActionResult::failed(format!("json.update: {e}")),
    };
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
    let output = match crate::run::jq_guard::eval_first(ctx.jq, &expr, input, ctx.vars) {
        Ok(v) => v,
        Err(e) => return ActionResult::failed(format!("json.update: {e}")),
    };
    let mut bytes = match serde_json::to_vec_pretty(&output) {
        Ok(b) => b,
        Err(e) => return ActionResult::failed(format!("json.update: {e}")),
    };
    bytes.push(b'\n');
    if let Err(e) = crate::store::atomic_file::write_atomic(&full, &bytes) {
        return ActionResult::failed(format!("json.update: cannot write {path}: {e}"));
    }
    let Some(lock) = lock else {
        return ActionResult {
            message: Some(format!("updated {path}")),
            ..ActionResult::ok()
        };
    };
    match record_rewrite(
        &lock,
        ctx.state_dir,
        &full,
        text.as_bytes(),
        &bytes,
        VerdictWriter::JsonUpdate,
        Some(ctx.run_id),
    ) {
        Ok(Rewrite::Recorded) => ActionResult {
            message: Some(format!("updated {path}")),
            ..ActionResult::ok()
        },
        Ok(Rewrite::External) => ActionResult {
            message: Some(format!(
                "updated {path}; it was written or edited outside spur before, so it still is \
                 (the done gate denies it unless doneGate.externalVerdicts is allow)"
            )),
            ..ActionResult::ok()
        },
        Err(e) => ActionResult::failed(format!("json.update: {e}")),
    }
}

/// The task whose verdict artifact `path` is, if it is one: a `<wbs>-verdict.json` in the
/// state dir's `run/` (compared as real paths when both exist, so `./` or a symbolic link
/// in the way does not hide it).
fn verdict_task(state_dir: &StateDir, path: &Path) -> Option<Wbs> {
    let name = path.file_name()?.to_str()?;
    let wbs = Wbs::parse(name.strip_suffix("-verdict.json")?).ok()?;
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let dir = path.parent()?;
    (real(dir) == real(&state_dir.run_dir())).then_some(wbs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_a_verdict_artifact_when_it_sees_one() {
        let tmp = tempfile::tempdir().unwrap();
        let state = StateDir::at(tmp.path().join(".spur"));
        std::fs::create_dir_all(state.run_dir()).unwrap();
        let t1 = Wbs::parse("T1").unwrap();
        assert_eq!(
            verdict_task(&state, &state.verdict_path(&t1)),
            Some(t1.clone())
        );
        let dotted = tmp.path().join("./.spur/run/T1-verdict.json");
        assert_eq!(verdict_task(&state, &dotted), Some(t1));
        for other in [
            tmp.path().join(".spur/run/notes.json"),
            tmp.path().join("T1-verdict.json"),
            tmp.path().join(".spur/run/_project-verdict.json"),
        ] {
            assert_eq!(verdict_task(&state, &other), None, "{}", other.display());
        }
    }
}
