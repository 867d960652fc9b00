//! Plugins: a guard or action kind spur does not know runs the executable
//! `spur-guard-<kind>` / `spur-action-<kind>` from PATH, with the (templated) options as
//! JSON on stdin. A guard plugin passes when it exits 0. An action plugin prints
//! `{"ok": bool, "data": any, "setVars": {name: string}}` on stdout.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::guard_result::GuardResult;
use spur_process::find_executable;
use spur_process::{ProcessSpec, ProcessStatus};

/// Stdout kept from an action plugin (its result JSON).
const PLUGIN_STDOUT_LIMIT: usize = 4 << 20;

/// Where and how to run a plugin.
#[derive(Debug, Clone, Default)]
pub struct PluginRun<'a> {
    /// Added to the plugin's environment (vars as variables of the same name). A `PATH`
    /// entry here is also where the plugin is looked up.
    pub env: &'a [(String, String)],
    /// The plugin's working directory (the caller's when `None`).
    pub cwd: Option<&'a Path>,
    /// How long it may run before it is killed (no limit when `None`).
    pub timeout: Option<Duration>,
    /// Both output streams are appended here.
    pub log_file: Option<&'a Path>,
    /// Told the plugin's process group once it runs (a run journals it).
    pub on_start: Option<spur_process::StartHook>,
}

/// Why an action plugin gave no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginError {
    /// The kind has characters that cannot be part of a program name.
    InvalidKind(String),
    /// No `spur-action-<kind>` on PATH.
    NotFound {
        /// The program looked for.
        program: String,
    },
    /// The program could not be started.
    FailedToStart {
        /// The program.
        program: String,
        /// Why it could not be started.
        why: String,
    },
    /// It ran out of time and was killed.
    TimedOut {
        /// The program.
        program: String,
        /// The time it was given.
        after: Duration,
    },
    /// It ended without printing a result (non-zero exit or a signal).
    Failed {
        /// The program.
        program: String,
        /// How it ended (exit code or signal).
        status: String,
        /// The last line it wrote to stderr.
        stderr: String,
    },
    /// Its stdout is not a result object.
    BadOutput {
        /// The program.
        program: String,
        /// What is wrong with the output.
        why: String,
    },
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginError::InvalidKind(kind) => write!(
                f,
                "`{kind}` is not a valid plugin kind (letters, digits, `.`, `_`, `-` only)"
            ),
            PluginError::NotFound { program } => write!(
                f,
                "unknown kind: no built-in and no plugin `{program}` on PATH"
            ),
            PluginError::FailedToStart { program, why } => {
                write!(f, "plugin `{program}` failed to start: {why}")
            }
            PluginError::TimedOut { program, after } => {
                write!(
                    f,
                    "plugin `{program}` timed out after {} ms",
                    after.as_millis()
                )
            }
            PluginError::Failed {
                program,
                status,
                stderr,
            } => {
                write!(f, "plugin `{program}` {status} without a result")?;
                if !stderr.is_empty() {
                    write!(f, ": {stderr}")?;
                }
                Ok(())
            }
            PluginError::BadOutput { program, why } => {
                write!(f, "plugin `{program}` printed an invalid result: {why}")
            }
        }
    }
}

impl std::error::Error for PluginError {}

/// What an action plugin reported.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginActionResult {
    /// `ok` from the result, and only if the plugin also exited 0.
    pub ok: bool,
    /// `data` from the result (`null` when absent).
    pub data: Value,
    /// Vars to set; numbers and booleans are turned into their JSON text.
    pub set_vars: BTreeMap<String, String>,
    /// What it printed on stderr (as captured): a run reads usage reports from it.
    pub stderr: Vec<u8>,
}

fn valid_kind(kind: &str) -> bool {
    !kind.is_empty()
        && !kind.starts_with('.')
        && kind
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// What kind of plugin: an action's (`spur-action-<kind>`) or a guard's (`spur-guard-<kind>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginRole {
    /// `spur-action-<kind>`.
    Action,
    /// `spur-guard-<kind>`.
    Guard,
}

impl PluginRole {
    fn prefix(self) -> &'static str {
        match self {
            PluginRole::Action => "spur-action-",
            PluginRole::Guard => "spur-guard-",
        }
    }
}

/// The plugin program for `kind` on this process's PATH, found as a run finds it: for a
/// static check that tells a plugin kind from a misspelt built-in one.
pub fn find_plugin(role: PluginRole, kind: &str) -> Option<PathBuf> {
    if !valid_kind(kind) {
        return None;
    }
    find_executable(&format!("{}{kind}", role.prefix()), None)
}

fn locate(prefix: &str, kind: &str, run: &PluginRun<'_>) -> Result<PathBuf, PluginError> {
    if !valid_kind(kind) {
        return Err(PluginError::InvalidKind(kind.to_owned()));
    }
    let program = format!("{prefix}{kind}");
    let path = run
        .env
        .iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| OsStr::new(value.as_str()));
    find_executable(&program, path).ok_or(PluginError::NotFound { program })
}

fn spec(program: &Path, options: &Value, run: &PluginRun<'_>) -> ProcessSpec {
    let mut spec = ProcessSpec::new(program, [""; 0])
        .stdin(options.to_string())
        .capture_limit(PLUGIN_STDOUT_LIMIT);
    for (name, value) in run.env {
        spec = spec.env(name, value);
    }
    if let Some(dir) = run.cwd {
        spec = spec.cwd(dir);
    }
    if let Some(log) = run.log_file {
        spec = spec.log(crate::bounded_read::open_log(log));
    }
    if let Some(timeout) = run.timeout {
        spec = spec.timeout(timeout);
    }
    if let Some(hook) = &run.on_start {
        spec = spec.on_start(hook.clone());
    }
    spec
}

/// Run `spur-guard-<kind>`; it passes when it exits 0. A missing plugin fails the guard
/// with a message naming the program looked for.
pub fn plugin_guard(kind: &str, options: &Value, run: &PluginRun<'_>) -> GuardResult {
    let started = Instant::now();
    let program = match locate("spur-guard-", kind, run) {
        Ok(path) => path,
        Err(e) => return GuardResult::fail(e.to_string(), started.elapsed()),
    };
    let outcome = spec(&program, options, run).run();
    let name = format!("spur-guard-{kind}");
    let detail = match &outcome.status {
        ProcessStatus::Exited(0) => format!("plugin `{name}` exited with code 0"),
        status => {
            let stderr = last_line(&outcome.stderr);
            if stderr.is_empty() {
                format!("plugin `{name}` {status}")
            } else {
                format!("plugin `{name}` {status}: {stderr}")
            }
        }
    };
    GuardResult {
        passed: outcome.success(),
        detail,
        duration: outcome.duration,
    }
}

/// Run `spur-action-<kind>` and parse its result.
pub fn plugin_action(
    kind: &str,
    options: &Value,
    run: &PluginRun<'_>,
) -> Result<PluginActionResult, PluginError> {
    let path = locate("spur-action-", kind, run)?;
    let program = format!("spur-action-{kind}");
    let outcome = spec(&path, options, run).run();
    match &outcome.status {
        ProcessStatus::FailedToStart(why) => {
            return Err(PluginError::FailedToStart {
                program,
                why: why.clone(),
            })
        }
        ProcessStatus::TimedOut => {
            return Err(PluginError::TimedOut {
                program,
                after: outcome.duration,
            })
        }
        _ => {}
    }
    let text = String::from_utf8_lossy(&outcome.stdout);
    if text.trim().is_empty() && !outcome.success() {
        return Err(PluginError::Failed {
            program,
            status: outcome.status.to_string(),
            stderr: last_line(&outcome.stderr),
        });
    }
    let bad = |why: String| PluginError::BadOutput {
        program: program.clone(),
        why,
    };
    let result: Value = serde_json::from_str(text.trim()).map_err(|e| bad(e.to_string()))?;
    let Value::Object(fields) = result else {
        return Err(bad("expected a JSON object {ok, data, setVars}".into()));
    };
    let ok = match fields.get("ok") {
        Some(Value::Bool(ok)) => *ok,
        Some(other) => return Err(bad(format!("`ok` must be a boolean, got {other}"))),
        None => return Err(bad("missing `ok`".into())),
    };
    let mut set_vars = BTreeMap::new();
    match fields.get("setVars") {
        None | Some(Value::Null) => {}
        Some(Value::Object(vars)) => {
            for (name, value) in vars {
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(_) | Value::Bool(_) => value.to_string(),
                    other => {
                        return Err(bad(format!("setVars.{name} must be a string, got {other}")))
                    }
                };
                set_vars.insert(name.clone(), text);
            }
        }
        Some(other) => return Err(bad(format!("`setVars` must be an object, got {other}"))),
    }
    Ok(PluginActionResult {
        ok: ok && outcome.success(),
        data: fields.get("data").cloned().unwrap_or(Value::Null),
        set_vars,
        stderr: outcome.stderr,
    })
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_end()
        .lines()
        .last()
        .unwrap_or("")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    fn plugin_dir(name: &str, script: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    fn path_env(dir: &tempfile::TempDir) -> Vec<(String, String)> {
        let path = format!("{}:/usr/bin:/bin", dir.path().display());
        vec![("PATH".to_owned(), path)]
    }

    #[test]
    fn guard_plugin_reads_options_on_stdin_and_passes_on_exit_zero() {
        let dir = plugin_dir("spur-guard-mine", r#"grep -q '"want":"yes"'"#);
        let env = path_env(&dir);
        let run = PluginRun {
            env: &env,
            ..PluginRun::default()
        };
        assert!(plugin_guard("mine", &json!({"want": "yes"}), &run).passed);
        let r = plugin_guard("mine", &json!({"want": "no"}), &run);
        assert!(!r.passed);
        assert_eq!(r.detail, "plugin `spur-guard-mine` exited with code 1");
    }

    #[test]
    fn a_missing_or_malformed_kind_fails_with_a_clear_message() {
        let env = vec![("PATH".to_owned(), "/nonexistent".to_owned())];
        let run = PluginRun {
            env: &env,
            ..PluginRun::default()
        };
        let r = plugin_guard("nope", &json!({}), &run);
        assert!(!r.passed);
        assert_eq!(
            r.detail,
            "unknown kind: no built-in and no plugin `spur-guard-nope` on PATH"
        );
        assert_eq!(
            plugin_action("../../bin/sh", &json!({}), &run),
            Err(PluginError::InvalidKind("../../bin/sh".into()))
        );
    }

    #[test]
    fn action_plugin_result_is_parsed() {
        let dir = plugin_dir(
            "spur-action-count",
            r#"cat >/dev/null; echo '{"ok": true, "data": {"n": 2}, "setVars": {"count": 2, "who": "me"}}'"#,
        );
        let env = path_env(&dir);
        let run = PluginRun {
            env: &env,
            ..PluginRun::default()
        };
        let result = plugin_action("count", &json!({}), &run).unwrap();
        assert!(result.ok);
        assert_eq!(result.data, json!({"n": 2}));
        assert_eq!(result.set_vars.get("count").map(String::as_str), Some("2"));
        assert_eq!(result.set_vars.get("who").map(String::as_str), Some("me"));
    }

    #[test]
    fn action_plugin_without_a_result_is_an_error() {
        let dir = plugin_dir("spur-action-broken", "echo oops >&2; exit 4");
        let env = path_env(&dir);
        let run = PluginRun {
            env: &env,
            ..PluginRun::default()
        };
        assert_eq!(
            plugin_action("broken", &json!({}), &run),
            Err(PluginError::Failed {
                program: "spur-action-broken".into(),
                status: "exited with code 4".into(),
                stderr: "oops".into(),
            })
        );
        let dir = plugin_dir("spur-action-chatty", "echo hello");
        let env = path_env(&dir);
        let run = PluginRun {
            env: &env,
            ..PluginRun::default()
        };
        assert!(matches!(
            plugin_action("chatty", &json!({}), &run),
            Err(PluginError::BadOutput { .. })
        ));
    }
}
