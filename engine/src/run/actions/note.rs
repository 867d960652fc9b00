//! `note`: record a message in the run (its log and the live output).

use super::{ActionContext, ActionResult};
use crate::pipeline::NoteOptions;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &NoteOptions) -> ActionResult {
    let message = match ctx.optional(options.message.as_ref()) {
        Ok(message) => message.unwrap_or_default(),
        Err(e) => return ActionResult::failed(e),
    };
    if let Err(e) = std::fs::write(ctx.log_path, format!("{message}\n")) {
        return ActionResult::failed(format!("note: cannot write its log: {e}"));
    }
    ActionResult {
        message: Some(message),
        ..ActionResult::ok()
    }
}
