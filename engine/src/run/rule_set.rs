//! Rule presets for `rule.check`: `.spur/rules/<preset>.yaml`, where the reference keeps a
//! project's rules too (`.spur/rules/`). The reference's rules are evaluators of its own rule
//! engine; spur's are commands, as its verify gates are: a rule passes when its command
//! exits 0, and is a finding of its severity otherwise.
//!
//! ```yaml
//! rules:
//!   - id: no-todo
//!     description: no TODO left in src/
//!     severity: warning          # error (default) | warning | info
//!     command: "! grep -rn TODO src"
//!     timeoutMs: 60000           # else the shell steps' default
//!     enabled: true
//! ```

use std::path::PathBuf;
use std::time::Duration;

use crate::diagnostic::{Code, Diagnostic};
use crate::source::SourceFile;
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::yaml::{parse_config, Codes, FromNode, Loader, Loose, Node};

const CODES: Codes = Codes {
    wrong_type: Code::RunRuleConfig,
    missing_key: Code::RunRuleConfig,
    unknown_key: Code::RunRuleConfig,
    duplicate_key: Code::RunRuleConfig,
};
const RULE_KEYS: &[&str] = &[
    "id",
    "description",
    "severity",
    "command",
    "timeoutMs",
    "enabled",
];

/// How grave a finding is, in the reference's order (`failOn` takes the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "info" => Some(Self::Info),
            "warning" => Some(Self::Warning),
            "error" => Some(Self::Error),
            _ => None,
        }
    }

    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// One rule of a preset.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub(crate) id: String,
    pub(crate) severity: Severity,
    pub(crate) command: String,
    pub(crate) timeout: Option<Duration>,
    pub(crate) enabled: bool,
}

/// Why a preset cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RuleSetError {
    /// The name cannot name a file under `.spur/rules/`.
    InvalidName(String),
    /// No such preset file.
    Missing(PathBuf),
    /// The file is there and does not read (findings joined).
    Invalid { path: PathBuf, message: String },
}

impl std::fmt::Display for RuleSetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidName(name) => write!(
                f,
                "preset {name:?} is not a preset name (letters, digits, '.', '_', '-')"
            ),
            Self::Missing(path) => write!(f, "no preset file {}", path.display()),
            Self::Invalid { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

/// The rules of `preset`, read from `.spur/rules/<preset>.yaml`.
pub(crate) fn read_preset(state_dir: &StateDir, preset: &str) -> Result<Vec<Rule>, RuleSetError> {
    if crate::wbs::Wbs::parse(preset).is_err() {
        return Err(RuleSetError::InvalidName(preset.to_owned()));
    }
    let path = state_dir
        .root()
        .join("rules")
        .join(format!("{preset}.yaml"));
    let invalid = |message: String| RuleSetError::Invalid {
        path: path.clone(),
        message,
    };
    let text = match read_string(&path, MAX_CONFIG_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_missing() => return Err(RuleSetError::Missing(path)),
        Err(e) => return Err(invalid(e.to_string())),
    };
    let source = SourceFile::new(&path, text);
    let root = match parse_config(source.text()) {
        Ok(Some(root)) => root,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => {
            let (line, column) = source.line_column(e.span().offset);
            return Err(invalid(format!("line {line}, column {column}: {e}")));
        }
    };
    let mut cx = Loader::new(&source, CODES);
    let rules = cx
        .fields(&root, "a rule preset", &["rules"])
        .and_then(|top| cx.field::<Vec<Rule>>(&top, "rules", "the preset"))
        .unwrap_or_default();
    if cx.diagnostics.iter().any(Diagnostic::is_error) {
        let findings: Vec<String> = cx.diagnostics.iter().map(Diagnostic::one_line).collect();
        return Err(invalid(findings.join("; ")));
    }
    Ok(rules)
}

impl FromNode for Rule {
    const EXPECTED: &'static str = "a mapping";

    fn from_node(cx: &mut Loader<'_>, node: &Node, _what: &str) -> Option<Self> {
        let fields = cx.fields(node, "a rule", RULE_KEYS)?;
        let id: String = cx.required::<Loose<String>>(&fields, "id", "a rule")?.0;
        let what = format!("rule `{id}`");
        let command: String = cx.required(&fields, "command", &what)?;
        let severity = match fields.get("severity") {
            None => Severity::Error,
            Some(node) => {
                let written: String = cx.read(node, &format!("`severity` of {what}"))?;
                match Severity::parse(&written) {
                    Some(s) => s,
                    None => {
                        cx.wrong_type(
                            node,
                            &format!("`severity` of {what}"),
                            "error, warning or info",
                        );
                        return None;
                    }
                }
            }
        };
        let timeout = cx
            .field::<Loose<u64>>(&fields, "timeoutMs", &what)
            .map(|ms| Duration::from_millis(ms.0.max(1)));
        let enabled = cx
            .field::<Loose<bool>>(&fields, "enabled", &what)
            .is_none_or(|e| e.0);
        let _description: Option<String> = cx
            .field::<Option<String>>(&fields, "description", &what)
            .flatten();
        Some(Rule {
            id,
            severity,
            command,
            timeout,
            enabled,
        })
    }
}
