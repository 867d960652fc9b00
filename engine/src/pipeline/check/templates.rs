//! Templates in guard and action options: every `${…}` must name a known var, an
//! allow-listed environment variable or a built-in — an undefined name is an error here,
//! never an empty string at run time.

use super::Context;
use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::pipeline::model::{OptionValue, Options};
use crate::source::Located;
use crate::template::{Builtin, Template, TemplateErrorKind};

pub(super) fn check(cx: &mut Context<'_>) {
    let p = cx.pipeline;
    for action in p.actions() {
        options(cx, &action.options);
    }
    for t in &p.transitions {
        if let Some(guard) = &t.guard {
            options(cx, &guard.options);
        }
    }
}

fn options(cx: &mut Context<'_>, options: &Options) {
    for (_, value) in &options.entries {
        value_templates(cx, value);
    }
}

fn value_templates(cx: &mut Context<'_>, value: &OptionValue) {
    match value {
        OptionValue::String(s) => string(cx, s),
        OptionValue::List(items, _) => {
            for item in items {
                value_templates(cx, item);
            }
        }
        OptionValue::Map(map) => options(cx, map),
        OptionValue::Null(_) | OptionValue::Bool(_) | OptionValue::Number(_) => {}
    }
}

fn string(cx: &mut Context<'_>, value: &Located<String>) {
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
        // One edit from a known var: a typo (error). Otherwise the var may come from
        // `--var`/`--vars` at run time (the runner refuses to start without it), so it is a
        // warning asking to declare it — the corpus relies on this.
        let d = match did_you_mean(&var.value, cx.vars.iter().copied()) {
            Some(s) => Diagnostic::error(
                Code::CheckUndefinedVar,
                &p.source,
                var.span,
                format!("`${{vars.{}}}` names an undefined var", var.value),
            )
            .label("undefined var")
            .help(format!("did you mean `${{vars.{s}}}`?")),
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
