//! Actions (DESIGN §4): one file per built-in kind; anything else is a plugin
//! `spur-action-<kind>`. An action receives its options already templated and returns an
//! [`ActionResult`]; it never touches the journal (the runner records start and finish).

mod agent;
mod artifact;
mod command_gate;
mod file_read;
mod fingerprint;
mod hitl;
mod json_update;
mod note;
mod plugin;
mod shell;
mod verdict_derive;
mod verify_run;
pub mod worktree;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::vars::Vars;
use crate::store::state_dir::StateDir;

pub use hitl::HitlQuestion;

/// The built-in action kinds.
pub const BUILT_IN: [&str; 12] = [
    "shell",
    "note",
    "file.read.into-var",
    "hitl.confirm",
    "hitl.select",
    "agent.run",
    "command.gate",
    "proof.fingerprint",
    "run.artifact",
    "json.update",
    "verdict.derive",
    "verify.run",
];

/// Option keys rendered as shell text (escaped per quoting context) rather than plain text.
pub fn shell_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "shell" => &["command"],
        _ => &[],
    }
}

/// What an action may use besides its options.
pub struct ActionContext<'a> {
    pub kind: &'a str,
    pub options: &'a Value,
    pub vars: &'a Vars,
    pub state_dir: &'a StateDir,
    /// Where shell steps run: the directory that holds the state directory.
    pub project_root: &'a Path,
    pub run_dir: &'a Path,
    pub run_id: &'a str,
    /// The action's log file (both output streams of any process it runs).
    pub log_path: &'a Path,
    /// Environment for processes: every var plus `SPUR_*` and PATH.
    pub env: &'a [(String, String)],
    /// The operator's answer, when the run resumed an hitl action with `--answer`.
    pub answer: Option<&'a str>,
    /// Ask the operator on a terminal; `None` when there is none.
    pub ask: &'a mut dyn FnMut(&HitlQuestion) -> Option<String>,
}

/// How an action ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionResult {
    pub ok: bool,
    pub error: Option<String>,
    pub timed_out: bool,
    pub exit_code: Option<i32>,
    pub set_vars: Vars,
    /// A line for people (a note's message, an agent's answer file…).
    pub message: Option<String>,
}

impl ActionResult {
    pub fn ok() -> Self {
        Self {
            ok: true,
            ..Self::default()
        }
    }

    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            ok: false,
            error: Some(error.into()),
            ..Self::default()
        }
    }
}

/// An action either finishes or needs an operator's answer first (hitl without a TTY).
#[derive(Debug, Clone, PartialEq)]
pub enum ActionRun {
    Finished(ActionResult),
    NeedsAnswer(HitlQuestion),
}

/// Run one action.
pub fn run(ctx: &mut ActionContext<'_>) -> ActionRun {
    let finished = |r| ActionRun::Finished(r);
    match ctx.kind {
        "shell" => finished(shell::run(ctx)),
        "note" => finished(note::run(ctx)),
        "file.read.into-var" => finished(file_read::run(ctx)),
        "hitl.confirm" | "hitl.select" => hitl::run(ctx),
        "agent.run" => finished(agent::run(ctx)),
        "command.gate" => finished(command_gate::run(ctx)),
        "proof.fingerprint" => finished(fingerprint::run(ctx)),
        "run.artifact" => finished(artifact::run(ctx)),
        "json.update" => finished(json_update::run(ctx)),
        "verdict.derive" => finished(verdict_derive::run(ctx)),
        "verify.run" => finished(verify_run::run(ctx)),
        _ => finished(plugin::run(ctx)),
    }
}

// ---- option helpers shared by the kinds -----------------------------------------------------

pub(crate) fn opt_str<'v>(options: &'v Value, key: &str) -> Option<&'v str> {
    options.get(key).and_then(Value::as_str)
}

/// A required string option, or the error message naming it.
pub(crate) fn required_str<'v>(
    options: &'v Value,
    kind: &str,
    key: &str,
) -> Result<&'v str, String> {
    match options.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(Value::String(_)) => Err(format!("{kind}: option `{key}` is empty")),
        Some(_) => Err(format!("{kind}: option `{key}` must be a string")),
        None => Err(format!("{kind}: option `{key}` is required")),
    }
}

pub(crate) fn opt_bool(options: &Value, key: &str) -> bool {
    match options.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => false,
    }
}

/// A duration in milliseconds, written as a number or (after templating) a string.
pub fn opt_millis(options: &Value, kind: &str, key: &str) -> Result<Option<Duration>, String> {
    let millis = match options.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
        Some(_) => None,
    };
    match millis {
        Some(0) | None => Err(format!(
            "{kind}: option `{key}` must be a positive number of milliseconds"
        )),
        Some(ms) => Ok(Some(Duration::from_millis(ms))),
    }
}

/// JSON scalar as var text (strings as is, others as JSON).
pub(crate) fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A path option resolved against the project root.
pub(crate) fn project_path(ctx: &ActionContext<'_>, rel: &str) -> PathBuf {
    let p = Path::new(rel);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        ctx.project_root.join(p)
    }
}

/// A process spec with the run's environment, cwd and log file.
pub(crate) fn process(
    ctx: &ActionContext<'_>,
    spec: spur_guards::process::ProcessSpec,
) -> spur_guards::process::ProcessSpec {
    let mut spec = spec.cwd(ctx.project_root).log_file(ctx.log_path);
    for (k, v) in ctx.env {
        spec = spec.env(k, v);
    }
    spec
}

/// Turn a finished process into an action result (last stderr line in the error).
pub(crate) fn process_result(
    what: &str,
    outcome: &spur_guards::process::ProcessOutcome,
) -> ActionResult {
    use spur_guards::process::ProcessStatus;
    let exit_code = match outcome.status {
        ProcessStatus::Exited(c) => Some(c),
        _ => None,
    };
    if outcome.status.success() {
        return ActionResult {
            ok: true,
            exit_code,
            ..ActionResult::default()
        };
    }
    let last_err = String::from_utf8_lossy(&outcome.stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default();
    ActionResult {
        ok: false,
        error: Some(format!("{what} {}{last_err}", outcome.status)),
        timed_out: matches!(outcome.status, ProcessStatus::TimedOut),
        exit_code,
        ..ActionResult::default()
    }
}
