//! `proof.fingerprint`: sha256 over the working tree's files and `taskFile` into `var`;
//! with `expect`, fails when the fingerprint differs (a proof input changed).

use sha2::{Digest, Sha256};

use super::{opt_str, project_path, required_str, worktree, ActionContext, ActionResult};

pub fn run(ctx: &mut ActionContext<'_>) -> ActionResult {
    let var = match required_str(ctx.options, "proof.fingerprint", "var") {
        Ok(v) => v,
        Err(e) => return ActionResult::failed(e),
    };
    let tree = match worktree::fingerprint(ctx.project_root, ctx.state_dir.root()) {
        Ok(t) => t,
        Err(e) => {
            return ActionResult::failed(format!("proof.fingerprint: cannot read the tree: {e}"))
        }
    };
    let mut hasher = Sha256::new();
    hasher.update(tree.as_bytes());
    if let Some(task_file) = opt_str(ctx.options, "taskFile").filter(|t| !t.is_empty()) {
        hasher.update([0]);
        match std::fs::read(project_path(ctx, task_file)) {
            Ok(bytes) => hasher.update(Sha256::digest(&bytes)),
            Err(e) => {
                return ActionResult::failed(format!(
                    "proof.fingerprint: cannot read taskFile {task_file}: {e}"
                ))
            }
        }
    }
    let digest = format!("sha256:{}", crate::store::digest::hex(&hasher.finalize()));
    if let Some(expect) = opt_str(ctx.options, "expect").filter(|e| !e.is_empty()) {
        if expect != digest {
            return ActionResult::failed(format!(
                "proof.fingerprint: a proof input changed: expected {expect}, now {digest}"
            ));
        }
    }
    let mut result = ActionResult::ok();
    result.message = Some(digest.clone());
    result.set_vars.insert(var.to_owned(), digest);
    result
}
