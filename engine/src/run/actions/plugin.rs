//! Plugin actions: an unknown kind runs `spur-action-<kind>` from PATH with the templated
//! options as JSON on stdin; it answers `{"ok": bool, "data": …, "setVars": {…}}` on stdout
//! (`spur_guards::plugin_action`). No plugin on PATH → the action fails with a clear error.

use super::{with_reported_usage, ActionContext, ActionResult};
use crate::run::render::render_options;
use crate::run::vars::is_var_name;

pub(crate) fn run(ctx: &ActionContext<'_>, kind: &str) -> ActionResult {
    let options = match render_options(&ctx.action.options, &ctx.render) {
        Ok(options) => options,
        Err(e) => return ActionResult::failed(format!("{kind}: {e}")),
    };
    let run = spur_guards::PluginRun {
        env: ctx.env,
        cwd: Some(ctx.project_root),
        timeout: None,
        log_file: Some(ctx.log_path),
        on_start: ctx.on_start.clone(),
    };
    match spur_guards::plugin_action(kind, &options, &run) {
        Err(e) => ActionResult {
            timed_out: matches!(e, spur_guards::PluginError::TimedOut { .. }),
            ..ActionResult::failed(format!("action {kind:?}: {e}"))
        },
        Ok(reply) => {
            if let Some(bad) = reply.set_vars.keys().find(|k| !is_var_name(k)) {
                return ActionResult::failed(format!(
                    "plugin spur-action-{kind} set an invalid var name {bad:?}"
                ));
            }
            let mut result = if reply.ok {
                ActionResult::ok()
            } else {
                ActionResult::failed(format!("plugin spur-action-{kind} reported ok: false"))
            };
            result.set_vars = reply.set_vars;
            if !reply.data.is_null() {
                result.message = Some(reply.data.to_string());
            }
            with_reported_usage(result, &format!("spur-action-{kind}"), &reply.stderr)
        }
    }
}
