//! The `secrets:` key of `.spur/config.yaml`: names, for every pipeline of the project,
//! whose values spur keeps out of its records (book: *Secrets*). Only that key is read here.
//! A broken list refuses the run: read partly, it could leave a secret recorded.
//!
//! ```yaml
//! secrets: [GITHUB_TOKEN, apiKey]
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::source::SourceFile;
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::template::is_identifier;
use crate::yaml::{parse_config, Codes, Loader, Node, NodeValue, UnknownKeys};

use super::run_error::RunError;

const CODES: Codes = Codes {
    wrong_type: Code::RunSecretConfig,
    missing_key: Code::RunSecretConfig,
    unknown_key: Code::RunSecretConfig,
    duplicate_key: Code::RunSecretConfig,
};

/// The names of `secrets:` in the project's config; none without a file or a key.
pub(crate) fn config_secrets(state_dir: &StateDir) -> Result<Vec<String>, RunError> {
    let path = state_dir.config_path();
    let fail = |message: String| RunError::SecretConfig {
        path: path.display().to_string(),
        message,
    };
    let text = match read_string(&path, MAX_CONFIG_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_missing() => return Ok(Vec::new()),
        Err(e) => return Err(fail(e.to_string())),
    };
    let source = SourceFile::new(&path, text);
    let root = match parse_config(source.text()) {
        Ok(Some(root)) => root,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => {
            let (line, column) = source.line_column(e.span().offset);
            return Err(fail(format!("line {line}, column {column}: {e}")));
        }
    };
    let mut cx = Loader::new(&source, CODES);
    let names = read_secrets(&mut cx, &root);
    if cx.diagnostics.iter().any(Diagnostic::is_error) {
        let findings: Vec<String> = cx.diagnostics.iter().map(Diagnostic::one_line).collect();
        return Err(fail(findings.join("; ")));
    }
    Ok(names)
}

fn read_secrets(cx: &mut Loader<'_>, root: &Node) -> Vec<String> {
    let Some(top) = cx.fields_with(
        root,
        "the configuration file",
        &["secrets"],
        UnknownKeys::Ignore,
    ) else {
        return Vec::new();
    };
    let Some(node) = top.get("secrets").filter(|n| n.value != NodeValue::Null) else {
        return Vec::new();
    };
    let Some(names) = cx.read::<Vec<crate::source::Located<String>>>(node, "`secrets`") else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        if !is_identifier(&name.value) {
            let d = Diagnostic::error(
                Code::RunSecretConfig,
                cx.source,
                name.span,
                format!("invalid secret name `{}`", name.value),
            )
            .help("names match ^[A-Za-z_][A-Za-z0-9_]*$ (vars and environment variables)");
            cx.push(d);
            continue;
        }
        if name.value == "wbs" {
            let d = Diagnostic::error(
                Code::RunSecretConfig,
                cx.source,
                name.span,
                "the task id `wbs` cannot be secret",
            )
            .help(
                "the task id names the task's files under `.spur/` and is recorded with every run",
            );
            cx.push(d);
            continue;
        }
        out.push(name.value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(text: &str) -> Result<Vec<String>, RunError> {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.root()).unwrap();
        std::fs::write(state.config_path(), text).unwrap();
        config_secrets(&state)
    }

    #[test]
    fn names_are_read_and_a_bad_list_refuses() {
        assert_eq!(
            secrets("verify: {}\nsecrets: [GITHUB_TOKEN, apiKey]\n").unwrap(),
            ["GITHUB_TOKEN", "apiKey"]
        );
        assert!(secrets("agents: {}\n").unwrap().is_empty());
        assert!(matches!(
            secrets("secrets: token\n"),
            Err(RunError::SecretConfig { .. })
        ));
        assert!(matches!(
            secrets("secrets: [\"a-b\"]\n"),
            Err(RunError::SecretConfig { .. })
        ));
        assert!(matches!(
            secrets("secrets: [wbs]\n"),
            Err(RunError::SecretConfig { .. })
        ));
    }
}
