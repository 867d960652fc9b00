//! `note`: record a message in the run (its log and the live output).

use super::{opt_str, ActionContext, ActionResult};

pub fn run(ctx: &mut ActionContext<'_>) -> ActionResult {
    let message = opt_str(ctx.options, "message")
        .unwrap_or_default()
        .to_owned();
    if let Err(e) = std::fs::write(ctx.log_path, format!("{message}\n")) {
        return ActionResult::failed(format!("note: cannot write its log: {e}"));
    }
    ActionResult {
        message: Some(message),
        ..ActionResult::ok()
    }
}
