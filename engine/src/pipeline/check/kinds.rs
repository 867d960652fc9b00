//! Guard and action kinds, and the options a built-in kind cannot work without.
//!
//! An unknown kind may be a plugin (`spur-guard-<kind>`, `spur-action-<kind>` on PATH), so
//! it is a warning — unless it is one typo away from a built-in kind: then it is almost
//! certainly a mistake, and for guards (which decide routing) an error.

use super::{jq, Context, ACTION_KINDS, GUARD_KINDS};
use crate::diagnostic::{did_you_mean, Diagnostic, Severity};
use crate::pipeline::model::{Guard, OptionValue, Options};

/// Options each built-in kind requires, as (kind, option).
const REQUIRED: &[(&str, &str)] = &[
    ("shell", "command"),
    ("jq", "expr"),
    ("file-exists", "path"),
    ("all", "guards"),
    ("any", "guards"),
    ("not", "guards"),
    ("file.read.into-var", "path"),
    ("file.read.into-var", "var"),
    ("proof.fingerprint", "var"),
    ("command.gate", "executable"),
    ("json.update", "path"),
    ("json.update", "expr"),
];

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for action in p.actions() {
        let kind = action.kind.value.as_str();
        if ACTION_KINDS.contains(&kind) {
            required(cx, kind, &action.options, action.kind.span, "action");
        } else {
            let d = Diagnostic::warning(
                "spur::check::unknown-action-kind",
                &p.source,
                action.kind.span,
                format!("unknown action kind `{kind}`"),
            )
            .label("not a built-in action");
            let d = match did_you_mean(kind, ACTION_KINDS.iter().copied()) {
                Some(s) => d.help(format!(
                    "did you mean `{s}`? Otherwise spur runs the plugin `spur-action-{kind}` from PATH"
                )),
                None => d.help(format!(
                    "spur runs the plugin `spur-action-{kind}` from PATH; without it the action fails"
                )),
            };
            cx.push(d);
        }
    }
    for t in &p.transitions {
        if let Some(guard) = &t.guard {
            check_guard(cx, guard);
        }
    }
}

fn check_guard(cx: &mut Context<'_>, guard: &Guard) {
    let p = cx.pipeline;
    let kind = guard.kind.value.as_str();
    if !GUARD_KINDS.contains(&kind) {
        let suggestion = did_you_mean(kind, GUARD_KINDS.iter().copied());
        let severity = if suggestion.is_some() {
            Severity::Error
        } else {
            Severity::Warning
        };
        let d = Diagnostic::new(
            severity,
            "spur::check::unknown-guard-kind",
            &p.source,
            guard.kind.span,
            format!("unknown guard kind `{kind}`"),
        )
        .label("not a built-in guard")
        .help(match suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "spur runs the plugin `spur-guard-{kind}` from PATH (built-in kinds: {})",
                GUARD_KINDS.join(", ")
            ),
        });
        cx.push(d);
        return;
    }
    required(cx, kind, &guard.options, guard.kind.span, "guard");
    match kind {
        "jq" => {
            if let Some(expr) = guard.options.get_str("expr") {
                // A templated expression is only complete at run time.
                if !expr.value.contains("${") {
                    let vars = cx.vars.clone();
                    jq::check_expr(&p.source, expr, &vars, &mut cx.diagnostics);
                }
            }
        }
        "all" | "any" | "not" => {
            if let Some(OptionValue::List(items, _)) = guard.options.get("guards") {
                for item in items {
                    if let OptionValue::Map(options) = item {
                        if let Some(nested) = nested_guard(options) {
                            check_guard(cx, &nested);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// A guard written inside `options.guards` of a combinator.
fn nested_guard(options: &Options) -> Option<Guard> {
    let kind = options.get_str("kind")?.clone();
    let inner = match options.get("options") {
        Some(OptionValue::Map(o)) => o.clone(),
        _ => Options {
            entries: Vec::new(),
            span: kind.span,
        },
    };
    Some(Guard {
        kind,
        options: inner,
        span: options.span,
    })
}

fn required(
    cx: &mut Context<'_>,
    kind: &str,
    options: &Options,
    kind_span: crate::source::Span,
    what: &str,
) {
    for (k, option) in REQUIRED {
        if *k == kind && options.get(option).is_none() {
            let d = Diagnostic::error(
                "spur::check::missing-option",
                &cx.pipeline.source,
                kind_span,
                format!("{what} `{kind}` needs the option `{option}`"),
            )
            .label(format!("no `options.{option}`"))
            .help(format!("add `options: {{ {option}: … }}`"));
            cx.push(d);
        }
    }
}
