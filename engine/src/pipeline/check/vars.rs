//! Declared vars: a var may not take the name of a built-in (`task`, `state`, `node`,
//! `iteration`, `run`, `runtime`), as the reference engine rejects these names too — a
//! pipeline that declares one means something else by `${task}` than what it renders.

use super::Context;
use crate::diagnostic::{Code, Diagnostic};
use crate::template::Builtin;

/// The names the reference engine reserves for its runtime builtins (its
/// `RESERVED_VAR_NAMES`: `workflow` and `runId` are not among them).
pub(crate) const RESERVED: [Builtin; 6] = [
    Builtin::Task,
    Builtin::State,
    Builtin::Node,
    Builtin::Iteration,
    Builtin::Run,
    Builtin::Runtime,
];

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for var in &p.vars {
        let name = var.name.value.as_str();
        if !RESERVED.iter().any(|b| b.as_str() == name) {
            continue;
        }
        let d = Diagnostic::error(
            Code::CheckReservedVar,
            &p.source,
            var.name.span,
            format!("var name `{name}` is reserved for the built-in `${{{name}}}`"),
        )
        .label("reserved name")
        .help(format!(
            "rename the var (and its `${{vars.{name}}}` uses); reserved: {}",
            RESERVED.map(Builtin::as_str).join(", ")
        ));
        cx.push(d);
    }
}
