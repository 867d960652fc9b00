//! The `jq` guard: `options.expr` compiled once when the run starts (embedded jq,
//! `spur_guards::jq`); evaluated against `options.file` (a JSON file, templated path) or
//! the run context `{vars, state, iteration, lastAction}`. `$vars` and each declared var
//! as `$name` are bound. Passes only when the first output is `true`. The evaluation runs in
//! the run's jq worker process under `options.timeoutMs` (default 1 s), an input cap and the
//! worker's memory and stack limits: a filter that passes any of them fails closed, named.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use spur_guards::jq::{JqLimits, JqProgram, JqSandbox};
use spur_guards::GuardResult;

use super::guard_eval::GuardContext;
use super::render::OptionError;
use super::vars::Vars;
use crate::pipeline::Templated;

#[derive(Debug)]
pub(crate) struct JqGuard {
    program: JqProgram,
    /// The declared var names bound as `$name` (after `$vars`).
    var_names: Vec<String>,
    /// Not a string: no file, the run context is the input.
    file: Option<Templated<String>>,
    timeout_ms: Option<Templated<Duration>>,
}

impl JqGuard {
    pub(crate) fn compile(
        expr: &str,
        file: Option<Templated<String>>,
        timeout_ms: Option<Templated<Duration>>,
        var_names: &[String],
    ) -> Result<Self, String> {
        let (program, var_names) = compile(expr, var_names)?;
        Ok(Self {
            program,
            var_names,
            file,
            timeout_ms,
        })
    }

    /// Whether its filter is evaluated in the run's jq worker (see
    /// `spur_guards::jq::JqProgram::needs_worker`).
    pub(crate) fn needs_worker(&self) -> bool {
        self.program.needs_worker()
    }

    pub(crate) fn evaluate(&self, ctx: &GuardContext<'_>) -> GuardResult {
        let closed = |why: String| GuardResult::fail(why, Duration::ZERO);
        let timeout = match self.timeout_ms.as_ref().map(|t| ctx.render.resolve(t)) {
            None | Some(Ok(None)) => spur_guards::jq::DEFAULT_TIMEOUT,
            Some(Ok(Some(t))) => t,
            Some(Err(OptionError::Render(e))) => return closed(e.to_string()),
            Some(Err(e)) => return closed(format!("jq guard: {e}")),
        };
        let limits = JqLimits {
            timeout,
            ..JqLimits::default()
        };
        let values = bind(&self.var_names, ctx.render.vars);
        match ctx.render.resolve_lenient(self.file.as_ref()) {
            Ok(Some(path)) => {
                let full = ctx.project_root.join(Path::new(&path));
                spur_guards::jq_file_guard(ctx.jq, &self.program, &full, &values, &limits)
            }
            Ok(None) => {
                let input = serde_json::json!({
                    "vars": ctx.render.vars,
                    "state": ctx.render.state,
                    "iteration": ctx.render.iteration,
                    "lastAction": ctx.last_action,
                });
                spur_guards::jq_guard_passes(ctx.jq, &self.program, &input, &values, &limits)
            }
            Err(e) => closed(e.to_string()),
        }
    }
}

/// Compile with `$vars` plus each var name that is a valid jq variable.
fn compile(expr: &str, var_names: &[String]) -> Result<(JqProgram, Vec<String>), String> {
    let names: Vec<String> = var_names
        .iter()
        .filter(|n| n.as_str() != "vars")
        .cloned()
        .collect();
    let mut all: Vec<&str> = vec!["vars"];
    all.extend(names.iter().map(String::as_str));
    let program = JqProgram::compile(expr, &all).map_err(|e| e.to_string())?;
    Ok((program, names))
}

/// Values for `$vars` and each `$name`, in compile order (an unset var is `null`).
fn bind(names: &[String], vars: &Vars) -> Vec<Value> {
    let mut values = Vec::with_capacity(names.len() + 1);
    values.push(serde_json::to_value(vars).unwrap_or(Value::Null));
    values.extend(names.iter().map(|n| {
        vars.get(n)
            .map_or(Value::Null, |v| Value::String(v.clone()))
    }));
    values
}

/// Evaluate `expr` once on `input` with the vars bound, in `sandbox`; the first output
/// (`json.update`).
pub(crate) fn eval_first(
    sandbox: &JqSandbox,
    expr: &str,
    input: Value,
    vars: &Vars,
) -> Result<Value, String> {
    let names: Vec<String> = vars.keys().cloned().collect();
    let (program, names) = compile(expr, &names)?;
    let values = bind(&names, vars);
    sandbox
        .first(&program, &input, &values, &JqLimits::default())
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("jq expression {expr:?} produced no output"))
}
