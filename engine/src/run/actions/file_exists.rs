//! `file.exists`: ok when the file exists (or, with `negate: true`, when it does not), as
//! the reference's action; the `file-exists` guard's check, as a step of a state.

use super::{project_path, ActionContext, ActionResult};
use crate::pipeline::FileExistsActionOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &FileExistsActionOptions) -> ActionResult {
    let resolved = (|| {
        Ok::<_, String>((
            ctx.required(&options.path)?,
            ctx.flag(options.negate.as_ref())?,
        ))
    })();
    let (path, negate) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    let checked = spur_guards::file_exists_guard(&project_path(ctx, &path));
    if checked.passed != negate {
        ActionResult {
            message: Some(checked.detail),
            ..ActionResult::ok()
        }
    } else if negate {
        ActionResult::failed(format!("file.exists: {} (negate: true)", checked.detail))
    } else {
        ActionResult::failed(format!("file.exists: {}", checked.detail))
    }
}
