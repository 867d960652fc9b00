//! `shell`: `sh -c command` with every var in the environment, `cwd`, `timeoutMs`, `env`.

use spur_guards::process::ProcessSpec;

use super::{opt_millis, opt_str, process, process_result, project_path, required_str};
use super::{ActionContext, ActionResult};

pub fn run(ctx: &mut ActionContext<'_>) -> ActionResult {
    let command = match required_str(ctx.options, "shell", "command") {
        Ok(c) => c,
        Err(e) => return ActionResult::failed(e),
    };
    let timeout = match opt_millis(ctx.options, "shell", "timeoutMs") {
        Ok(t) => t,
        Err(e) => return ActionResult::failed(e),
    };
    let mut spec = process(ctx, ProcessSpec::shell(command));
    if let Some(cwd) = opt_str(ctx.options, "cwd") {
        spec = spec.cwd(project_path(ctx, cwd));
    }
    if let Some(serde_json::Value::Object(env)) = ctx.options.get("env") {
        for (k, v) in env {
            spec = spec.env(k, super::scalar_text(v));
        }
    }
    if let Some(t) = timeout {
        spec = spec.timeout(t);
    }
    process_result("shell command", &spec.run())
}
