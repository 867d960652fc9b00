//! `event.emit`: a named event with a payload. The reference puts it on its event bus
//! (`workflow.custom`); spur's record of a run is its journal, so the event is the step's
//! record: `event NAME: PAYLOAD` in its `action-finished` message (redacted like any).

use super::{ActionContext, ActionResult};
use crate::pipeline::EventEmitOptions;

/// The most of a payload the record keeps (as JSON text).
const PAYLOAD_LIMIT: usize = 4096;

pub(crate) fn run(ctx: &ActionContext<'_>, options: &EventEmitOptions) -> ActionResult {
    let resolved = (|| {
        let name = ctx.required(&options.name)?;
        let payload = ctx
            .optional(options.payload.as_ref())?
            .unwrap_or_else(|| serde_json::json!({}));
        Ok::<_, String>((name, payload))
    })();
    let (name, payload) = match resolved {
        Ok(r) => r,
        Err(e) => return ActionResult::failed(e),
    };
    let text = payload.to_string();
    if text.len() > PAYLOAD_LIMIT {
        return ActionResult::failed(format!(
            "event.emit: the payload of {name:?} is {} bytes as JSON, more than {PAYLOAD_LIMIT}",
            text.len()
        ));
    }
    let line = format!("event {name}: {text}");
    if let Err(e) = std::fs::write(ctx.log_path, format!("{line}\n")) {
        return ActionResult::failed(format!("event.emit: cannot write its log: {e}"));
    }
    ActionResult {
        message: Some(line),
        ..ActionResult::ok()
    }
}
