//! Guard and action kinds, the options a built-in kind cannot work without (the loader,
//! typing the options, records which are not written), and jq guards compiled.
//!
//! An unknown kind may be a plugin (`spur-guard-<kind>`, `spur-action-<kind>` on PATH): one
//! found on PATH is not reported; one not found is a warning — unless it is one typo away
//! from a built-in kind: then it is almost certainly a mistake, and an error.

use super::{jq, Context};
use crate::diagnostic::{did_you_mean, Code, Diagnostic, Severity};
use crate::pipeline::action_kind::ActionKind;
use crate::pipeline::guard_kind::{GuardKind, NestedGuard, NestedGuards};
use spur_guards::{find_plugin, PluginRole};
use std::fmt::Display;

use crate::pipeline::model::Guard;
use crate::source::Located;

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for action in p.actions() {
        let ActionKind::Plugin(kind) = &action.kind.value else {
            missing(cx, &action.kind, &action.missing_options, "action");
            continue;
        };
        // A plugin that is there is what the author meant: nothing to say.
        if find_plugin(PluginRole::Action, kind).is_some() {
            continue;
        }
        let d = match did_you_mean(kind, ActionKind::NAMES) {
            Some(s) => Diagnostic::error(
                Code::CheckUnknownActionKind,
                &p.source,
                action.kind.span,
                format!("unknown action kind `{kind}`"),
            )
            .label("not a built-in action, and no plugin on PATH")
            .help(format!(
                "did you mean `{s}`? (a plugin would be `spur-action-{kind}` on PATH)"
            )),
            None => Diagnostic::warning(
                Code::CheckUnknownActionKind,
                &p.source,
                action.kind.span,
                format!("unknown action kind `{kind}`"),
            )
            .label("not a built-in action")
            .help(format!(
                "spur runs the plugin `spur-action-{kind}` from PATH; without it the action fails"
            )),
        };
        cx.push(d);
    }
    for t in &p.transitions {
        if let Some(guard) = &t.guard {
            check_guard(cx, guard);
        }
    }
}

fn check_guard(cx: &mut Context<'_>, guard: &Guard) {
    let p = cx.pipeline;
    match &guard.kind.value {
        GuardKind::Plugin(kind) if find_plugin(PluginRole::Guard, kind).is_some() => {}
        GuardKind::Plugin(kind) => {
            let suggestion = did_you_mean(kind, GuardKind::NAMES);
            let severity = if suggestion.is_some() {
                Severity::Error
            } else {
                Severity::Warning
            };
            let d = Diagnostic::new(
                severity,
                Code::CheckUnknownGuardKind,
                &p.source,
                guard.kind.span,
                format!("unknown guard kind `{kind}`"),
            )
            .label("not a built-in guard")
            .help(match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!(
                    "spur runs the plugin `spur-guard-{kind}` from PATH (built-in kinds: {})",
                    GuardKind::NAMES.join(", ")
                ),
            });
            cx.push(d);
        }
        _ => missing(cx, &guard.kind, &guard.missing_options, "guard"),
    }
    match &guard.kind.value {
        GuardKind::Jq(options) => {
            // A templated expression is only complete at run time.
            if let Some(expr) = options.expr.as_ref().filter(|e| !e.value.contains("${")) {
                let vars = cx.vars.clone();
                jq::check_expr(&p.source, expr, &vars, &mut cx.diagnostics);
            }
        }
        GuardKind::All(options) | GuardKind::Any(options) | GuardKind::Not(options) => {
            if let NestedGuards::List(items) = &options.guards {
                for item in items {
                    if let NestedGuard::Guard(nested) = item {
                        check_guard(cx, nested);
                    }
                }
            }
        }
        _ => {}
    }
}

fn missing(cx: &mut Context<'_>, kind: &Located<impl Display>, options: &[String], what: &str) {
    for option in options {
        let d = Diagnostic::error(
            Code::CheckMissingOption,
            &cx.pipeline.source,
            kind.span,
            format!("{what} `{}` needs the option `{option}`", kind.value),
        )
        .label(format!("no `options.{option}`"))
        .help(format!("add `options: {{ {option}: … }}`"));
        cx.push(d);
    }
}
