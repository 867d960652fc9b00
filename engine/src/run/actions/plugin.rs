//! Plugin actions: an unknown kind runs `spur-action-<kind>` from PATH with the templated
//! options as JSON on stdin; it answers `{"ok": bool, "data": …, "setVars": {…}}` on stdout.
//! No plugin on PATH → the action fails with a clear error.

use serde_json::Value;
use spur_guards::process::{ProcessSpec, ProcessStatus};

use super::{process, ActionContext, ActionResult};
use crate::run::vars::is_var_name;

pub fn run(ctx: &mut ActionContext<'_>) -> ActionResult {
    let program = format!("spur-action-{}", ctx.kind);
    let Some(path) = find_on_path(&program, ctx.env) else {
        return ActionResult::failed(format!(
            "unknown action kind {:?}: it is not built in and no plugin `{program}` is on PATH",
            ctx.kind
        ));
    };
    let input = serde_json::json!({
        "kind": ctx.kind,
        "options": ctx.options,
        "vars": ctx.vars,
        "runId": ctx.run_id,
    });
    let outcome = process(ctx, ProcessSpec::new(&path, std::iter::empty::<&str>()))
        .stdin(input.to_string())
        .run();
    let exit_code = match outcome.status {
        ProcessStatus::Exited(c) => Some(c),
        _ => None,
    };
    if !matches!(outcome.status, ProcessStatus::Exited(_)) {
        let mut r = ActionResult::failed(format!("plugin {program} {}", outcome.status));
        r.timed_out = matches!(outcome.status, ProcessStatus::TimedOut);
        return r;
    }
    let reply: Value = match serde_json::from_slice(&outcome.stdout) {
        Ok(v) => v,
        Err(e) => {
            return ActionResult {
                exit_code,
                ..ActionResult::failed(format!(
                    "plugin {program} did not answer JSON {{ok, data, setVars}} on stdout: {e}"
                ))
            }
        }
    };
    let ok = reply.get("ok").and_then(Value::as_bool).unwrap_or(false) && exit_code == Some(0);
    let mut result = if ok {
        ActionResult::ok()
    } else {
        let why = reply
            .get("error")
            .and_then(Value::as_str)
            .map_or_else(|| format!("plugin {program} reported failure"), |e| format!("plugin {program}: {e}"));
        ActionResult::failed(why)
    };
    result.exit_code = exit_code;
    if let Some(Value::Object(vars)) = reply.get("setVars") {
        for (name, value) in vars {
            if !is_var_name(name) {
                return ActionResult::failed(format!("plugin {program} set an invalid var name {name:?}"));
            }
            result.set_vars.insert(name.clone(), super::scalar_text(value));
        }
    }
    result
}

/// Find an executable named `program` on the PATH the action's processes see.
pub fn find_on_path(program: &str, env: &[(String, String)]) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PATH").ok())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
