//! Templates in guard and action options: every `${…}` must name a known var, an
//! allow-listed environment variable or a built-in — an undefined name is an error here,
//! never an empty string at run time. An undeclared `${vars.X}` in an action's options is an
//! error, as in the reference engine; in a guard's options (which the reference does not
//! check) it is a warning, since the var may come from `--var` (the corpus relies on it)
//! and a run refuses to start without it.

use super::Context;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::pipeline::model::{OptionValue, Options};
use crate::source::Located;
use crate::template::{Builtin, Template, TemplateErrorKind};

/// Whose options a template is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    Action,
    Guard,
}

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for action in p.actions() {
        options(cx, &action.options, Owner::Action);
    }
    for t in &p.transitions {
        if let Some(guard) = &t.guard {
            options(cx, &guard.options, Owner::Guard);
        }
    }
}

fn options(cx: &mut Context<'_>, options: &Options, owner: Owner) {
    for (_, value) in &options.entries {
        value_templates(cx, value, owner);
    }
}

fn value_templates(cx: &mut Context<'_>, value: &OptionValue, owner: Owner) {
    match value {
        OptionValue::String(s) => string(cx, s, owner),
        OptionValue::List(items, _) => {
            for item in items {
                value_templates(cx, item, owner);
            }
        }
        OptionValue::Map(map) => options(cx, map, owner),
        OptionValue::Null(_) | OptionValue::Bool(_) | OptionValue::Number(_) => {}
    }
}

fn string(cx: &mut Context<'_>, value: &Located<String>, owner: Owner) {
    if !value.value.contains("${") {
        return;
    }
    let p = cx.pipeline;
    let template = match Template::parse_in(value, &p.source) {
        Ok(t) => t,
        Err(e) => {
            let help = match &e.kind {
                TemplateErrorKind::UnknownName(name) if cx.vars.contains(&name.as_str()) => {
                    format!("did you mean `${{vars.{name}}}`?")
                }
                TemplateErrorKind::UnknownName(name)
                    if name
                        .split_once('.')
                        .is_some_and(|(head, _)| Builtin::parse(head).is_some()) =>
                {
                    let head = name.split_once('.').map_or("", |(h, _)| h);
                    format!("`${{{head}}}` is a built-in value with no fields: write `${{{head}}}`")
                }
                TemplateErrorKind::UnknownName(_) => format!(
                    "placeholders are `${{vars.NAME}}`, `${{env.NAME}}` or one of {}",
                    Builtin::ALL
                        .map(|b| format!("`${{{}}}`", b.as_str()))
                        .join(", ")
                ),
                TemplateErrorKind::Unclosed => "close the placeholder with `}`".into(),
                TemplateErrorKind::Empty | TemplateErrorKind::InvalidName(_) => {
                    "names match ^[A-Za-z_][A-Za-z0-9_]*$".into()
                }
            };
            let d = Diagnostic::error(Code::CheckTemplate, &p.source, e.span, e.to_string())
                .label("invalid placeholder")
                .help(help);
            cx.push(d);
            return;
        }
    };
    for var in template.vars() {
        if cx.vars.contains(&var.value.as_str()) {
            continue;
        }
        // One edit from a known var: a typo (error). In an action's options: an error too,
        // as in the reference engine. In a guard's, the var may come from `--var`/`--vars`
        // at run time (the runner refuses to start without it), so it is a warning asking
        // to declare it — the corpus relies on this.
        let suggestion = did_you_mean(&var.value, cx.vars.iter().copied());
        let d = match suggestion {
            Some(s) => Diagnostic::error(
                Code::CheckUndefinedVar,
                &p.source,
                var.span,
                format!("`${{vars.{}}}` names an undefined var", var.value),
            )
            .label("undefined var")
            .help(format!("did you mean `${{vars.{s}}}`?")),
            None if owner == Owner::Action => Diagnostic::error(
                Code::CheckUndefinedVar,
                &p.source,
                var.span,
                format!(
                    "`${{vars.{}}}` names a var the pipeline does not declare",
                    var.value
                ),
            )
            .label("not declared under `vars:`")
            .help(format!(
                "declare it with a default: `vars: {{ {}: \"\" }}`",
                var.value
            )),
            None => Diagnostic::warning(
                Code::CheckUndeclaredVar,
                &p.source,
                var.span,
                format!("`${{vars.{}}}` names a var the pipeline does not declare", var.value),
            )
            .label("not declared under `vars:`")
            .help(format!(
                "declare it with a default (`{}: \"\"`); until then every run must pass it with `--var {}=…`, or it refuses to start",
                var.value, var.value
            )),
        };
        cx.push(d);
    }
    for env in template.envs() {
        if p.env_allow.iter().any(|a| a.value == env.value) {
            continue;
        }
        let d = Diagnostic::error(
            Code::CheckEnvNotAllowed,
            &p.source,
            env.span,
            format!("`${{env.{}}}` is not in `env.allow`", env.value),
        )
        .label("not allow-listed")
        .help(format!(
            "add it to the pipeline: `env: {{ allow: [{}] }}`",
            env.value
        ));
        cx.push(d);
    }
}
