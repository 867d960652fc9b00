//! Run vars: precedence (pipeline defaults < `--vars JSON` < `--var k=v`, later wins) and
//! the values every template and shell step sees. Values are strings.

use std::collections::BTreeMap;

use crate::diagnostic::{coded_diagnostic, did_you_mean, Code};
use crate::pipeline::Pipeline;

/// The vars of a run, by name.
pub(crate) type Vars = BTreeMap<String, String>;

/// A var given on the command line is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    /// A `--var` without `=`: the argument when it is a declared var's name (`--var wbs`),
    /// else none — it may be a value given without its name, and a secret's.
    #[error("{} is not of the form name=value", .0.as_ref().map_or("a --var argument (not shown: it may be a value)".to_owned(), |a| format!("--var {a:?}")))]
    NotAPair(Option<String>),
    /// A var name that is not `[A-Za-z_][A-Za-z0-9_]*` (the name).
    #[error("{0:?} is not a valid var name")]
    BadName(String),
    /// `--vars` is not valid JSON (the parser's message).
    #[error("--vars is not valid JSON: {0}")]
    Json(String),
    /// `--vars` is JSON but not an object.
    #[error("--vars must be a JSON object of name → value")]
    NotAnObject,
    /// A var the pipeline does not declare.
    #[error("{flag} {name:?}: the pipeline declares no var of that name{}", .suggestion.as_ref().map(|s| format!(" (did you mean {s:?}?)")).unwrap_or_default())]
    Undeclared {
        /// `--var` or `--vars`.
        flag: &'static str,
        /// The name as given.
        name: String,
        /// The declared var closest to it, if any is close.
        suggestion: Option<String>,
        /// Every var the pipeline declares, in declaration order.
        declared: Vec<String>,
    },
    /// A `--vars` value that is an array, object or null (its name).
    #[error("--vars value of {0:?} is not a string, number or boolean")]
    NotScalar(String),
}

coded_diagnostic! {
    VarError {
        Self::NotAPair(..) => Code::UsageVarSyntax,
            help("write --var wbs=0592");
        Self::BadName(..) => Code::UsageVarName,
            help("var names match ^[A-Za-z_][A-Za-z0-9_]*$ (they become environment variables)");
        Self::Json(..) => Code::UsageVarsJson,
            help(r#"pass an object, e.g. --vars '{{"wbs":"0592"}}'"#);
        Self::NotAnObject => Code::UsageVarsJson,
            help(r#"pass an object, e.g. --vars '{{"wbs":"0592"}}'"#);
        Self::Undeclared { declared, .. } => Code::UsageUndeclaredVar,
            help("{}", declared_help(declared));
        Self::NotScalar(..) => Code::UsageVarsJson,
            help("vars are strings; numbers and booleans are converted");
    }
}

fn declared_help(declared: &[String]) -> String {
    if declared.is_empty() {
        "this pipeline declares no vars; declare one under `vars:` to set it".to_owned()
    } else {
        format!(
            "the pipeline declares: {}; a var must be declared under `vars:` to be set",
            declared.join(", ")
        )
    }
}

/// Whether `name` can be a var (and so an environment variable).
pub(crate) fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Resolve a run's vars: pipeline defaults, then `--vars JSON`, then each `--var k=v`.
pub fn resolve(
    pipeline: &Pipeline,
    vars_json: Option<&str>,
    pairs: &[String],
) -> Result<Vars, VarError> {
    let mut vars: Vars = pipeline
        .vars
        .iter()
        .map(|v| (v.name.value.clone(), v.default.value.clone()))
        .collect();
    if let Some(json) = vars_json {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| VarError::Json(e.to_string()))?;
        let serde_json::Value::Object(map) = value else {
            return Err(VarError::NotAnObject);
        };
        for (name, value) in map {
            if !is_var_name(&name) {
                return Err(VarError::BadName(name));
            }
            declared(pipeline, "--vars", &name)?;
            let text = match value {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                _ => return Err(VarError::NotScalar(name)),
            };
            vars.insert(name, text);
        }
    }
    for pair in pairs {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(VarError::NotAPair(shown_pair(pipeline, pair)));
        };
        if !is_var_name(name) {
            return Err(VarError::BadName(name.to_owned()));
        }
        declared(pipeline, "--var", name)?;
        vars.insert(name.to_owned(), value.to_owned());
    }
    Ok(vars)
}

/// A `--var` argument without `=`, as an error may show it: only a declared var's name.
pub(crate) fn shown_pair(pipeline: &Pipeline, pair: &str) -> Option<String> {
    pipeline
        .vars
        .iter()
        .any(|v| v.name.value == pair)
        .then(|| pair.to_owned())
}

/// A var set from the command line must be one the pipeline declares: a typo (`wsb` for
/// `wbs`) would otherwise run the pipeline on its default and, for the `wbs`, without its
/// task and its done gate.
fn declared(pipeline: &Pipeline, flag: &'static str, name: &str) -> Result<(), VarError> {
    // A var a template uses without declaring it (the corpus's planning pipeline reads
    // `${vars.design_approved}` in a guard) is given with --var: that is its only source.
    if pipeline.vars.iter().any(|v| v.name.value == name)
        || super::preflight::template_vars(pipeline).contains(name)
    {
        return Ok(());
    }
    let names: Vec<String> = pipeline.vars.iter().map(|v| v.name.value.clone()).collect();
    Err(VarError::Undeclared {
        flag,
        name: name.to_owned(),
        suggestion: did_you_mean(name, names.iter().map(String::as_str)).map(str::to_owned),
        declared: names,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_names_are_identifiers() {
        assert!(is_var_name("wbs"));
        assert!(is_var_name("__hitlAnswer"));
        assert!(!is_var_name("1a"));
        assert!(!is_var_name("a-b"));
        assert!(!is_var_name(""));
    }

    #[test]
    fn a_var_a_guard_uses_without_declaring_it_may_be_given_others_may_not() {
        let text = "name: p\ninitialState: a\nvars: { x: '1' }\nstates: [{id: a}, {id: b}]\n\
                    transitions:\n  - from: a\n    to: b\n    guard: { kind: shell, options: { command: 'test \"${vars.approved}\" = true' } }\n";
        let source = crate::source::SourceFile::new("p.yaml", text);
        let loaded = crate::pipeline::load(&source).unwrap();
        let p = &loaded.pipeline;
        let vars = resolve(p, None, &["approved=true".to_owned()]).unwrap();
        assert_eq!(vars.get("approved").map(String::as_str), Some("true"));
        assert!(matches!(
            resolve(p, None, &["aproved=true".to_owned()]),
            Err(VarError::Undeclared { .. })
        ));
    }
}
