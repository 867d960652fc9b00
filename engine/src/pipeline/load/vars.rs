//! `vars:` (name → default string, declaration order) and `env.allow:` (the environment
//! variables templates may read). Names must be identifiers: vars become environment
//! variables of shell steps.

use crate::diagnostic::{Code, Diagnostic};
use crate::pipeline::model::VarDecl;
use crate::source::Located;
use crate::template::is_identifier;
use crate::yaml::{FromNode, Loader, Node, NodeValue};

use super::ENV_KEYS;

/// The `vars` mapping.
pub(crate) struct Vars(pub(crate) Vec<VarDecl>);

impl FromNode for Vars {
    const EXPECTED: &'static str = "a mapping of name to string";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let entries = match &node.value {
            NodeValue::Null => return Some(Vars(Vec::new())),
            NodeValue::Map(entries) => entries,
            _ => {
                cx.wrong_type(node, what, Self::EXPECTED);
                return Some(Vars(Vec::new()));
            }
        };
        let mut vars: Vec<VarDecl> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let Some(name) = key.key_text() else {
                cx.wrong_type(key, "a var name", "a string");
                continue;
            };
            if let Some(first) = vars.iter().find(|v| v.name.value == name) {
                let d = Diagnostic::error(
                    Code::CheckDuplicateKey,
                    cx.source,
                    key.span,
                    format!("var `{name}` is declared twice"),
                )
                .label("declared again here")
                .secondary(first.name.span, "first declared here")
                .help("remove one of the declarations");
                cx.push(d);
                continue;
            }
            if !is_identifier(&name) {
                let d = Diagnostic::error(
                    Code::CheckVarName,
                    cx.source,
                    key.span,
                    format!("invalid var name `{name}`"),
                )
                .label("not a valid name")
                .help("var names match ^[A-Za-z_][A-Za-z0-9_]*$ (they become environment variables of shell steps)");
                cx.push(d);
                continue;
            }
            let Some(default) = var_default(cx, &name, value) else {
                continue;
            };
            vars.push(VarDecl {
                name: Located::new(name, key.span),
                default,
            });
        }
        Some(Vars(vars))
    }
}

/// A var's default: a string, or a number or boolean read as its text (with a warning).
fn var_default(cx: &mut Loader<'_>, name: &str, value: &Node) -> Option<Located<String>> {
    match &value.value {
        NodeValue::String(s) => Some(Located::new(s.clone(), value.span)),
        NodeValue::Number(_) | NodeValue::Bool(_) => {
            let text = cx
                .source
                .text()
                .get(value.span.offset..value.span.end())
                .unwrap_or_default()
                .to_owned();
            let d = Diagnostic::warning(
                Code::CheckVarNotString,
                cx.source,
                value.span,
                format!(
                    "var `{name}` has a {} default; vars are strings",
                    match value.value {
                        NodeValue::Bool(_) => "boolean",
                        _ => "number",
                    }
                ),
            )
            .label(format!("read as the string \"{text}\""))
            .help(format!("quote it: `{name}: \"{text}\"`"));
            cx.push(d);
            Some(Located::new(text, value.span))
        }
        _ => {
            cx.wrong_type(value, &format!("the default of var `{name}`"), "a string");
            None
        }
    }
}

/// The `env` mapping: its `allow` list of environment variable names.
pub(crate) struct Env(pub(crate) Vec<Located<String>>);

impl FromNode for Env {
    const EXPECTED: &'static str = "a mapping";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let fields = cx.fields(node, what, ENV_KEYS)?;
        let Some(allow) = fields.get("allow") else {
            return Some(Env(Vec::new()));
        };
        // Unlike the dialect's other lists, `allow: ~` is not an empty list.
        let NodeValue::Seq(items) = &allow.value else {
            cx.wrong_type(allow, "`env.allow`", "a list of environment variable names");
            return None;
        };
        let mut names = Vec::new();
        for item in items {
            let Some(name) = cx.read::<Located<String>>(item, "an item of `env.allow`") else {
                continue;
            };
            if !is_identifier(&name.value) {
                let d = Diagnostic::error(
                    Code::CheckVarName,
                    cx.source,
                    item.span,
                    format!("invalid environment variable name `{}`", name.value),
                )
                .label("not a valid name")
                .help("names match ^[A-Za-z_][A-Za-z0-9_]*$");
                cx.push(d);
                continue;
            }
            names.push(name);
        }
        Some(Env(names))
    }
}

/// The `secrets` list: names whose values spur keeps out of its records.
pub(crate) struct Secrets(pub(crate) Vec<Located<String>>);

impl FromNode for Secrets {
    const EXPECTED: &'static str = "a list of var or environment variable names";

    fn from_node(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<Self> {
        let items = match &node.value {
            NodeValue::Null => return Some(Secrets(Vec::new())),
            NodeValue::Seq(items) => items,
            _ => {
                cx.wrong_type(node, what, Self::EXPECTED);
                return None;
            }
        };
        let mut names: Vec<Located<String>> = Vec::new();
        for item in items {
            let Some(name) = cx.read::<Located<String>>(item, "an item of `secrets`") else {
                continue;
            };
            if !names.iter().any(|n| n.value == name.value) {
                names.push(name);
            }
        }
        Some(Secrets(names))
    }
}

/// Each secret must name a declared var or an `env.allow` name: a secret that names nothing
/// (a typo) would redact nothing, and the value it was meant to hide would be recorded.
pub(crate) fn check_secrets(
    cx: &mut Loader<'_>,
    secrets: &[Located<String>],
    vars: &[VarDecl],
    env_allow: &[Located<String>],
) {
    let known = || {
        vars.iter()
            .map(|v| v.name.value.as_str())
            .chain(env_allow.iter().map(|e| e.value.as_str()))
    };
    for secret in secrets {
        if secret.value == "wbs" {
            let d = Diagnostic::error(
                Code::CheckSecretTaskId,
                cx.source,
                secret.span,
                "the task id `wbs` cannot be secret",
            )
            .label("the task id")
            .help(
                "the task id names the task's files under `.spur/` (its lock, view, ledger, \
                 verdict) and is recorded with every run: remove it from `secrets:`",
            );
            cx.push(d);
            continue;
        }
        if known().any(|k| k == secret.value) {
            continue;
        }
        let mut d = Diagnostic::error(
            Code::CheckSecretUnknown,
            cx.source,
            secret.span,
            format!(
                "secret `{}` names no declared var and no `env.allow` name",
                secret.value
            ),
        )
        .label("names nothing: its value would not be redacted");
        d = match crate::diagnostic::did_you_mean(&secret.value, known()) {
            Some(close) => d.help(format!("did you mean `{close}`?")),
            None => d.help(
                "declare it under `vars:`, or add the environment variable to `env.allow`; \
                 an environment variable of every pipeline can be listed under `secrets:` in \
                 `.spur/config.yaml`",
            ),
        };
        cx.push(d);
    }
}
