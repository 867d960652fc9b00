//! Run vars: precedence (pipeline defaults < `--vars JSON` < `--var k=v`, later wins) and
//! the values every template and shell step sees. Values are strings.

use std::collections::BTreeMap;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::pipeline::Pipeline;

/// The vars of a run, by name.
pub type Vars = BTreeMap<String, String>;

/// A var given on the command line is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    #[error("--var {0:?} is not of the form name=value")]
    NotAPair(String),
    #[error("{0:?} is not a valid var name")]
    BadName(String),
    #[error("--vars is not valid JSON: {0}")]
    Json(String),
    #[error("--vars must be a JSON object of name → value")]
    NotAnObject,
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
        Self::NotScalar(..) => Code::UsageVarsJson,
            help("vars are strings; numbers and booleans are converted");
    }
}

/// Whether `name` can be a var (and so an environment variable).
pub fn is_var_name(name: &str) -> bool {
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
            return Err(VarError::NotAPair(pair.clone()));
        };
        if !is_var_name(name) {
            return Err(VarError::BadName(name.to_owned()));
        }
        vars.insert(name.to_owned(), value.to_owned());
    }
    Ok(vars)
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
}
