//! `file.read.into-var`: read a file (trailing newlines dropped) into a var.

use super::{project_path, read_failure, ActionContext, ActionResult};
use crate::pipeline::FileReadOptions;
use crate::run::vars::is_var_name;
use crate::store::bounded_read::{read_bounded, ReadError};

/// Files larger than this are refused: a var is a value, not a document.
const MAX_BYTES: u64 = 1 << 20;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &FileReadOptions) -> ActionResult {
    let (path, var) = match (ctx.required(&options.path), ctx.required(&options.var)) {
        (Ok(p), Ok(v)) => (p, v),
        (Err(e), _) | (_, Err(e)) => return ActionResult::failed(e),
    };
    if !is_var_name(&var) {
        return ActionResult::failed(format!(
            "file.read.into-var: {var:?} is not a valid var name"
        ));
    }
    match read_bounded(&project_path(ctx, &path), MAX_BYTES) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let value = text.trim_end_matches(['\n', '\r']).to_owned();
            let mut result = ActionResult::ok();
            result.set_vars.insert(var, value);
            result
        }
        Err(ReadError::TooLarge { .. }) => ActionResult::failed(format!(
            "file.read.into-var: {path} is larger than {MAX_BYTES} bytes"
        )),
        Err(e) => ActionResult::failed(format!(
            "file.read.into-var: cannot read {path}: {}",
            read_failure(e)
        )),
    }
}
