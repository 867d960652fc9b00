//! `engine:` of `.spur/config.yaml`: where `spur run` sends runs. Absent (or
//! `kind: local`): runs stay on this machine. Read like every other section: an unknown
//! key, a wrong type or a missing `ingress` is an error pointing at its place in the file.
//!
//! ```yaml
//! engine: {kind: restate, ingress: "http://127.0.0.1:8080", admin: "http://127.0.0.1:9070"}
//! ```

use std::path::{Path, PathBuf};

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic};
use crate::source::{Located, SourceFile};
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::yaml::{parse_config, Codes, Loader, NodeValue, UnknownKeys};

const CODES: Codes = Codes {
    wrong_type: Code::UsageEngine,
    missing_key: Code::UsageEngine,
    unknown_key: Code::UsageEngine,
    duplicate_key: Code::UsageEngine,
};

/// Which engine runs a project's pipelines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EngineConfig {
    /// This machine, `.spur/` (the default).
    #[default]
    Local,
    /// A Restate server: its ingress (runs) and admin (registration) URLs.
    Restate {
        /// e.g. `http://127.0.0.1:8080`.
        ingress: String,
        /// e.g. `http://127.0.0.1:9070`.
        admin: Option<String>,
        /// The git remote that carries a run's tree between workers (`--worktree`);
        /// [`super::fleet_tree::DEFAULT_REMOTE`] when absent.
        remote: Option<String>,
    },
}

/// Why `engine:` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EngineConfigError {
    /// The file exists but could not be read (not a regular file, too large, …).
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `engine:` has errors.
    #[error("`engine:` in {} cannot be used", path.display())]
    Invalid {
        /// The configuration file.
        path: PathBuf,
        /// Every problem found.
        errors: Vec<Diagnostic>,
    },
}

coded_diagnostic! {
    EngineConfigError {
        Self::Unreadable { .. } => Code::UsageEngine,
            help("check that the file is a readable regular file");
        Self::Invalid { errors, .. } => Code::UsageEngine,
            help("write `engine: {{kind: restate, ingress: URL, admin: URL, remote: origin}}` or `engine: {{kind: local}}`"),
            related(errors);
    }
}

impl EngineConfig {
    /// Read `engine:` from `<state dir>/config.yaml`; no file or no `engine:` is local.
    pub fn load(state_dir: &StateDir) -> Result<Self, EngineConfigError> {
        let path = state_dir.config_path();
        match read_string(&path, MAX_CONFIG_BYTES) {
            Ok(text) => Self::parse(&path, &text),
            Err(e) if e.is_missing() => Ok(Self::Local),
            Err(e) => Err(EngineConfigError::Unreadable {
                path,
                reason: e.to_string(),
            }),
        }
    }

    /// `engine:` of `text`, the configuration file at `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, EngineConfigError> {
        let source = SourceFile::new(path, text);
        let mut cx = Loader::new(&source, CODES);
        let mut config = Self::Local;
        // A file that is not YAML is reported by the readers of its other sections.
        if let Ok(Some(root)) = parse_config(text) {
            let engine = cx
                .fields_with(
                    &root,
                    "the configuration file",
                    &["engine"],
                    UnknownKeys::Ignore,
                )
                .and_then(|top| top.get("engine").filter(|n| n.value != NodeValue::Null))
                .and_then(|engine| {
                    cx.fields(engine, "`engine`", &["kind", "ingress", "admin", "remote"])
                });
            if let Some(engine) = engine {
                let kind: Option<Located<String>> = cx.required(&engine, "kind", "`engine`");
                let ingress: Option<String> = cx.field(&engine, "ingress", "`engine`");
                let admin: Option<String> = cx.field(&engine, "admin", "`engine`");
                let remote: Option<String> = cx.field(&engine, "remote", "`engine`");
                match kind.as_ref().map(|k| k.value.as_str()) {
                    Some("local") => {}
                    Some("restate") => match ingress {
                        Some(ingress) => {
                            config = Self::Restate {
                                ingress,
                                admin,
                                remote,
                            }
                        }
                        None => cx.missing(&engine, "ingress", "`engine` of kind restate"),
                    },
                    Some(other) => {
                        let span = kind.as_ref().map_or(engine.span, |k| k.span);
                        cx.push(
                            Diagnostic::error(
                                Code::UsageEngine,
                                &source,
                                span,
                                format!("`{other}` is not an engine"),
                            )
                            .label("not an engine")
                            .help("`kind` is `local` or `restate`"),
                        );
                    }
                    None => {}
                }
            }
        }
        if cx.diagnostics.iter().any(Diagnostic::is_error) {
            return Err(EngineConfigError::Invalid {
                path: path.to_path_buf(),
                errors: cx.diagnostics,
            });
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<EngineConfig, EngineConfigError> {
        EngineConfig::parse(Path::new("config.yaml"), text)
    }

    fn messages(e: EngineConfigError) -> Vec<String> {
        match e {
            EngineConfigError::Invalid { errors, .. } => {
                errors.iter().map(|d| d.to_string()).collect()
            }
            EngineConfigError::Unreadable { reason, .. } => vec![reason],
        }
    }

    #[test]
    fn absent_or_local_is_local_and_restate_needs_its_ingress() {
        assert_eq!(parse("").unwrap(), EngineConfig::Local);
        assert_eq!(parse("defaults: {}\n").unwrap(), EngineConfig::Local);
        assert_eq!(
            parse("engine: {kind: local}\n").unwrap(),
            EngineConfig::Local
        );
        assert_eq!(
            parse("engine: {kind: restate, ingress: 'http://h:8080'}\n").unwrap(),
            EngineConfig::Restate {
                ingress: "http://h:8080".into(),
                admin: None,
                remote: None,
            }
        );
        assert_eq!(
            parse("engine: {kind: restate, ingress: 'http://h:8080', remote: fleet}\n").unwrap(),
            EngineConfig::Restate {
                ingress: "http://h:8080".into(),
                admin: None,
                remote: Some("fleet".into()),
            }
        );
        let e = messages(parse("engine: {kind: restate}\n").unwrap_err());
        assert!(e.iter().any(|m| m.contains("`ingress`")), "{e:?}");
    }

    #[test]
    fn an_unknown_key_or_kind_is_an_error() {
        let e = messages(parse("engine: {kind: restate, ingres: 'http://h:8080'}\n").unwrap_err());
        assert!(e.iter().any(|m| m.contains("ingres")), "{e:?}");
        let e = messages(parse("engine: {kind: temporal}\n").unwrap_err());
        assert!(
            e.iter().any(|m| m.contains("`temporal` is not an engine")),
            "{e:?}"
        );
        let e = messages(parse("engine: restate\n").unwrap_err());
        assert!(!e.is_empty());
    }
}
