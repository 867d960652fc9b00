//! The `jq` guard: `options.expr` compiled once when the run starts; evaluated against
//! `options.file` (a JSON file) or the run context `{vars, state, iteration, lastAction}`.
//! `$vars` and each var as `$name` are bound. Passes only when the first output is `true`.

use crate::source::Located;

use super::guard_eval::{GuardContext, GuardResult};

#[derive(Debug)]
pub struct JqGuard {
    expr: String,
    file: Option<Located<String>>,
}

impl JqGuard {
    pub fn compile(expr: &str, file: Option<Located<String>>, _var_names: &[String]) -> Result<Self, String> {
        Ok(Self {
            expr: expr.to_owned(),
            file,
        })
    }

    pub fn evaluate(&self, _ctx: &GuardContext<'_>) -> GuardResult {
        let _ = (&self.expr, &self.file);
        GuardResult {
            passed: false,
            detail: Some("jq guards are not wired yet".into()),
        }
    }
}

/// Evaluate `expr` once on `input` with the vars bound; the first output.
pub fn eval_first(
    expr: &str,
    _input: serde_json::Value,
    _vars: &super::vars::Vars,
) -> Result<serde_json::Value, String> {
    Err(format!("jq is not wired yet (expr {expr:?})"))
}
