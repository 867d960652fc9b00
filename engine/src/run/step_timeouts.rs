//! How long a shell step, an agent step and a shell guard may run when the step says nothing:
//! a built-in default per kind, which `defaults:` in `.spur/config.yaml` can change.
//!
//! ```yaml
//! defaults:
//!   timeoutMs: 900000          # every kind below that does not say otherwise
//!   shell: {timeoutMs: 600000}
//!   agent: {timeoutMs: 3600000, name: claude}   # or `agent: claude`: the default agent
//!   guard: {timeoutMs: 60000}  # shell guards
//! ```
//!
//! A step's own `timeoutMs` wins over all of these. An unknown key is a warning with
//! did-you-mean; a value that is not a whole number of 1 or more is an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic};
use crate::source::{Located, SourceFile};
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::yaml::{parse_config, Codes, Fields, Loader, Loose, Node, NodeValue, UnknownKeys};

/// Built-in: a shell step (a build, a test suite) may run 10 minutes.
pub const SHELL_DEFAULT: Duration = Duration::from_secs(10 * 60);
/// Built-in: an agent step (a model working on a task) may run 60 minutes.
pub const AGENT_DEFAULT: Duration = Duration::from_secs(60 * 60);
/// Built-in: a shell guard (a check that decides a transition) may run 60 seconds.
pub const GUARD_DEFAULT: Duration = Duration::from_secs(60);

const CODES: Codes = Codes {
    wrong_type: Code::RunDefaultsConfig,
    missing_key: Code::RunDefaultsConfig,
    unknown_key: Code::RunDefaultsConfig,
    duplicate_key: Code::RunDefaultsConfig,
};
const DEFAULTS_KEYS: &[&str] = &["timeoutMs", "shell", "agent", "guard"];
const KIND_KEYS: &[&str] = &["timeoutMs"];
/// `defaults.agent` also names the default agent (`name`), read by `run/agent_config.rs`.
const AGENT_KEYS: &[&str] = &["timeoutMs", "name"];

/// The timeout of each kind of step that does not set its own `timeoutMs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepTimeouts {
    /// `shell` actions.
    pub shell: Duration,
    /// `agent.run` actions.
    pub agent: Duration,
    /// `shell` guards.
    pub guard: Duration,
}

impl Default for StepTimeouts {
    fn default() -> Self {
        Self {
            shell: SHELL_DEFAULT,
            agent: AGENT_DEFAULT,
            guard: GUARD_DEFAULT,
        }
    }
}

/// The timeouts a project configures, with what `defaults:` holds that spur ignores.
#[derive(Debug, Clone)]
pub struct LoadedTimeouts {
    /// The timeouts.
    pub timeouts: StepTimeouts,
    /// Unknown keys under `defaults:` (with did-you-mean).
    pub warnings: Vec<Diagnostic>,
}

/// Why `defaults:` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DefaultsConfigErrors {
    /// The file exists but could not be read (not a regular file, too large, …).
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// `defaults:` has errors.
    #[error("`defaults:` in {} cannot be used", path.display())]
    Invalid {
        /// The configuration file.
        path: PathBuf,
        /// Every problem found: the errors, then the warnings.
        errors: Vec<Diagnostic>,
    },
}

coded_diagnostic! {
    DefaultsConfigErrors {
        Self::Unreadable { .. } => Code::RunDefaultsConfig,
            help("check that the file is a readable regular file");
        Self::Invalid { errors, .. } => Code::RunDefaultsConfig,
            help("`defaults` holds `timeoutMs` and `shell`, `agent`, `guard`, each `{{timeoutMs: N}}` (milliseconds, 1 or more); `agent` may also be the default agent's name, or hold it as `name`"),
            related(errors);
    }
}

impl StepTimeouts {
    /// Read `defaults:` from `<state dir>/config.yaml`; no file, or no `defaults:`, is the
    /// built-in defaults. Other sections are other readers' and are not looked at.
    pub fn load(state_dir: &StateDir) -> Result<LoadedTimeouts, DefaultsConfigErrors> {
        let path = state_dir.config_path();
        match read_string(&path, MAX_CONFIG_BYTES) {
            Ok(text) => Self::parse(&path, &text),
            Err(e) if e.is_missing() => Ok(LoadedTimeouts {
                timeouts: Self::default(),
                warnings: Vec::new(),
            }),
            Err(e) => Err(DefaultsConfigErrors::Unreadable {
                path,
                reason: e.to_string(),
            }),
        }
    }

    /// [`StepTimeouts::load`] on the text of the file.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<LoadedTimeouts, DefaultsConfigErrors> {
        let source = SourceFile::new(path, text);
        let mut cx = Loader::new(&source, CODES);
        let timeouts = match parse_config(text) {
            // A file that is not YAML is reported by the readers of its other sections.
            Ok(Some(root)) => read(&mut cx, &root),
            Ok(None) | Err(_) => Self::default(),
        };
        let (errors, warnings): (Vec<_>, Vec<_>) =
            cx.diagnostics.into_iter().partition(Diagnostic::is_error);
        if errors.is_empty() {
            Ok(LoadedTimeouts { timeouts, warnings })
        } else {
            // The warnings too: an unknown key is often the misspelt one that is wrong.
            Err(DefaultsConfigErrors::Invalid {
                path: path.to_path_buf(),
                errors: errors.into_iter().chain(warnings).collect(),
            })
        }
    }
}

fn read(cx: &mut Loader<'_>, root: &Node) -> StepTimeouts {
    let mut timeouts = StepTimeouts::default();
    let Some(top) = cx.fields_with(
        root,
        "the configuration file",
        &["defaults"],
        UnknownKeys::Ignore,
    ) else {
        return timeouts;
    };
    let Some(section) = top.get("defaults").filter(|n| n.value != NodeValue::Null) else {
        return timeouts;
    };
    let Some(fields) = cx.fields_with(section, "`defaults`", DEFAULTS_KEYS, UnknownKeys::Warn)
    else {
        return timeouts;
    };
    if let Some(all) = millis(cx, &fields, "`defaults.timeoutMs`") {
        timeouts = StepTimeouts {
            shell: all,
            agent: all,
            guard: all,
        };
    }
    for (key, slot, keys) in [
        ("shell", &mut timeouts.shell, KIND_KEYS),
        ("agent", &mut timeouts.agent, AGENT_KEYS),
        ("guard", &mut timeouts.guard, KIND_KEYS),
    ] {
        let Some(node) = fields.get(key).filter(|n| n.value != NodeValue::Null) else {
            continue;
        };
        // `defaults.agent: NAME` names the default agent (`run/agent_config.rs`): no timeout.
        if key == "agent" && matches!(node.value, NodeValue::String(_)) {
            continue;
        }
        let what = format!("`defaults.{key}`");
        let Some(kind) = cx.fields_with(node, &what, keys, UnknownKeys::Warn) else {
            continue;
        };
        if let Some(t) = millis(cx, &kind, &format!("`defaults.{key}.timeoutMs`")) {
            *slot = t;
        }
    }
    timeouts
}

/// `timeoutMs` of `fields`: a whole number of milliseconds, 1 or more.
fn millis(cx: &mut Loader<'_>, fields: &Fields<'_>, what: &str) -> Option<Duration> {
    let node = fields.get("timeoutMs")?;
    let value = cx
        .read::<Option<Located<Loose<u64>>>>(node, what)
        .flatten()?;
    if value.value.0 == 0 {
        let d = Diagnostic::error(
            Code::RunDefaultsConfig,
            cx.source,
            node.pointed(),
            format!("{what} must be 1 or more milliseconds, not 0"),
        )
        .label("a timeout of 0 would fail every step")
        .help("leave it out to keep the built-in default");
        cx.push(d);
        return None;
    }
    Some(Duration::from_millis(value.value.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LoadedTimeouts, DefaultsConfigErrors> {
        StepTimeouts::parse(Path::new(".spur/config.yaml"), text)
    }

    #[test]
    fn the_built_in_defaults_hold_without_a_defaults_section() {
        let loaded = parse("agents: {a: {command: x}}\n").unwrap();
        assert_eq!(loaded.timeouts, StepTimeouts::default());
        assert_eq!(loaded.timeouts.shell, Duration::from_secs(600));
        assert_eq!(loaded.timeouts.agent, Duration::from_secs(3600));
        assert_eq!(loaded.timeouts.guard, Duration::from_secs(60));
        assert!(loaded.warnings.is_empty());
    }

    #[test]
    fn a_kind_wins_over_the_common_default() {
        let loaded = parse("defaults:\n  timeoutMs: 300\n  agent: {timeoutMs: 5000}\n").unwrap();
        let t = loaded.timeouts;
        assert_eq!(t.shell, Duration::from_millis(300));
        assert_eq!(t.guard, Duration::from_millis(300));
        assert_eq!(t.agent, Duration::from_millis(5000));
    }

    #[test]
    fn an_unknown_key_warns_with_did_you_mean_and_a_bad_value_is_an_error() {
        let loaded = parse("defaults:\n  timeoutMS: 300\n  shell: {timeout: 1}\n").unwrap();
        assert_eq!(loaded.timeouts, StepTimeouts::default());
        assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
        assert!(
            loaded.warnings[0].one_line().contains("timeoutMs"),
            "{}",
            loaded.warnings[0].one_line()
        );
        for bad in [
            "defaults: {timeoutMs: 0}\n",
            "defaults: {guard: {timeoutMs: soon}}\n",
            "defaults: 3\n",
        ] {
            let error = parse(bad).unwrap_err();
            assert!(
                matches!(error, DefaultsConfigErrors::Invalid { .. }),
                "{bad}"
            );
        }
    }
}
