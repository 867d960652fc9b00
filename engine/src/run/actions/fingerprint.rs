//! `proof.fingerprint`: sha256 over the working tree's files and `taskFile` into `var`;
//! with `expect`, fails when the fingerprint differs (a proof input changed).

use sha2::{Digest, Sha256};

use super::{project_path, read_failure, worktree, ActionContext, ActionResult};
use crate::pipeline::FingerprintOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &FingerprintOptions) -> ActionResult {
    let resolved = (|| {
        let var = ctx.required(&options.var)?;
        let non_empty = |t: Option<String>| t.filter(|t| !t.is_empty());
        let task_file = non_empty(ctx.optional(options.task_file.as_ref())?);
        let expect = non_empty(ctx.optional(options.expect.as_ref())?);
        Ok::<_, String>((var, task_file, expect))
    })();
    let (var, task_file, expect) = match resolved {
        Ok(r) => r,
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
    if let Some(task_file) = task_file {
        hasher.update([0]);
        match worktree::file_sha256(&project_path(ctx, &task_file)) {
            Ok(digest) => hasher.update(digest),
            Err(e) => {
                return ActionResult::failed(format!(
                    "proof.fingerprint: cannot read taskFile {task_file}: {}",
                    read_failure(e)
                ))
            }
        }
    }
    let digest = format!("sha256:{}", crate::store::digest::hex(&hasher.finalize()));
    if let Some(expect) = expect {
        if expect != digest {
            return ActionResult::failed(format!(
                "proof.fingerprint: a proof input changed: expected {expect}, now {digest}"
            ));
        }
    }
    let mut result = ActionResult::ok();
    result.message = Some(digest.clone());
    result.set_vars.insert(var, digest);
    result
}
