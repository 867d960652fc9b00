//! Actions: one file per built-in kind; anything else is a plugin
//! `spur-action-<kind>`. An action reads its typed options, each rendered just before
//! use, and returns an [`ActionResult`]; it never touches the journal (the runner records
//! start and finish).

mod agent;
mod artifact;
mod command_gate;
mod doctor_probe;
mod event_emit;
mod file_exists;
mod file_read;
mod fingerprint;
mod hitl;
mod http_request;
mod json_update;
mod note;
mod plugin;
mod response_validate;
mod result_file;
mod rule_check;
pub(crate) mod shell;
mod verdict_derive;
mod verify_run;
pub(crate) mod worktree;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::render::{OptionError, RenderContext};
use super::step_timeouts::StepTimeouts;
use super::vars::Vars;
use crate::diagnostic::Code;
use crate::pipeline::{Action, ActionKind, FromRendered, ShellText, Templated};
use crate::store::bounded_read::ReadError;
use crate::store::state_dir::StateDir;

pub use hitl::HitlQuestion;

/// What an action may use besides its options.
pub(crate) struct ActionContext<'a> {
    pub(crate) action: &'a Action,
    /// What the action's templates may refer to now.
    pub(crate) render: RenderContext<'a>,
    pub(crate) vars: &'a Vars,
    pub(crate) state_dir: &'a StateDir,
    /// Where shell steps run: the directory that holds the state directory.
    pub(crate) project_root: &'a Path,
    pub(crate) run_dir: &'a Path,
    pub(crate) run_id: &'a str,
    /// The action's log file (both output streams of any process it runs).
    pub(crate) log_path: &'a Path,
    /// Environment for processes: every var plus `SPUR_*` and PATH.
    pub(crate) env: &'a [(String, String)],
    /// The operator's answer, when the run resumed an hitl action with `--answer`.
    pub(crate) answer: Option<&'a str>,
    /// The timeouts of steps that set none.
    pub(crate) timeouts: &'a StepTimeouts,
    /// Where `json.update` evaluates its expression (the run's jq worker).
    pub(crate) jq: &'a spur_guards::jq::JqSandbox,
    /// Where `http.request` may connect.
    pub(crate) http_allow: &'a super::http_allow::HttpAllowList,
    /// Ask the operator on a terminal; `None` when there is none.
    pub(crate) ask: &'a mut dyn FnMut(&HitlQuestion) -> Option<String>,
    /// The run's secrets, for what an action writes itself (verify evidence).
    pub(crate) redactor: &'a crate::redact::Redactor,
    /// The policy the run pinned (`verify.run` runs its gates).
    pub(crate) policy: &'a crate::policy::PolicySource,
    /// Journals the group of each process the action starts (`action-process`), so a
    /// resume can kill it; `None` for a host that keeps no such record.
    pub(crate) on_start: Option<spur_process::StartHook>,
}

/// How an action ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionResult {
    pub(crate) ok: bool,
    pub(crate) error: Option<String>,
    pub(crate) timed_out: bool,
    pub(crate) exit_code: Option<i32>,
    pub(crate) set_vars: Vars,
    /// A line for people (a note's message, an agent's answer file…).
    pub(crate) message: Option<String>,
    /// What the step spent, when it reported it.
    pub(crate) usage: Option<crate::cost::Usage>,
}

impl ActionResult {
    pub(crate) fn ok() -> Self {
        Self {
            ok: true,
            ..Self::default()
        }
    }

    pub(crate) fn failed(error: impl Into<String>) -> Self {
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
    /// It ran to the end, with this result.
    Finished(ActionResult),
    /// It asks this question and no one at a terminal answered; the run pauses.
    NeedsAnswer(HitlQuestion),
}

/// A step's failure that carries a stable code: `message; help: … [code]`.
pub(crate) fn coded(code: Code, message: impl std::fmt::Display, help: &str) -> String {
    format!("{message}; help: {help} [{code}]")
}

/// Run one action.
pub(crate) fn run(ctx: &mut ActionContext<'_>) -> ActionRun {
    let finished = |r| ActionRun::Finished(r);
    let action = ctx.action;
    let starts_a_process = matches!(
        action.kind.value,
        ActionKind::Shell(_)
            | ActionKind::AgentRun(_)
            | ActionKind::CommandGate(_)
            | ActionKind::DoctorProbe(_)
            | ActionKind::RuleCheck(_)
            | ActionKind::Plugin(_)
    );
    if starts_a_process {
        if let Some(e) = super::child_env::too_large_to_export(ctx.env) {
            return finished(ActionResult::failed(format!("{}: {e}", ctx.kind())));
        }
    }
    match &action.kind.value {
        ActionKind::Shell(o) => finished(shell::run(ctx, o)),
        ActionKind::Note(o) => finished(note::run(ctx, o)),
        ActionKind::FileReadIntoVar(o) => finished(file_read::run(ctx, o)),
        ActionKind::HitlConfirm(_) | ActionKind::HitlSelect(_) | ActionKind::HitlInput(_) => {
            hitl::run(ctx)
        }
        ActionKind::FileExists(o) => finished(file_exists::run(ctx, o)),
        ActionKind::FileRead(o) => finished(file_read::run_text(ctx, o)),
        ActionKind::EventEmit(o) => finished(event_emit::run(ctx, o)),
        ActionKind::RuleCheck(o) => finished(rule_check::run(ctx, o)),
        ActionKind::ResponseValidate(o) => finished(response_validate::run(ctx, o)),
        ActionKind::HttpRequest(o) => finished(http_request::run(ctx, o)),
        ActionKind::AgentRun(o) => finished(agent::run(ctx, o)),
        ActionKind::CommandGate(o) => finished(command_gate::run(ctx, o)),
        ActionKind::ProofFingerprint(o) => finished(fingerprint::run(ctx, o)),
        ActionKind::RunArtifact(o) => finished(artifact::run(ctx, o)),
        ActionKind::JsonUpdate(o) => finished(json_update::run(ctx, o)),
        ActionKind::VerdictDerive(o) => finished(verdict_derive::run(ctx, o)),
        ActionKind::VerifyRun(o) => finished(verify_run::run(ctx, o)),
        ActionKind::DoctorProbe(o) => finished(doctor_probe::run(ctx, o)),
        ActionKind::Plugin(name) => finished(plugin::run(ctx, name)),
    }
}

// ---- options, resolved for this run, errors naming the kind ----------------------------

impl ActionContext<'_> {
    /// The action's kind as written.
    pub(crate) fn kind(&self) -> &str {
        self.action.kind.value.name()
    }

    fn failed(&self, e: OptionError) -> String {
        format!("{}: {e}", self.kind())
    }

    /// `option` rendered and typed.
    pub(crate) fn resolve<T: FromRendered>(
        &self,
        option: &Templated<T>,
    ) -> Result<Option<T>, String> {
        self.render.resolve(option).map_err(|e| self.failed(e))
    }

    /// An option that counts as absent when its value is of the wrong type.
    pub(crate) fn optional<T: FromRendered>(
        &self,
        option: Option<&Templated<T>>,
    ) -> Result<Option<T>, String> {
        self.render
            .resolve_lenient(option)
            .map_err(|e| self.failed(e.into()))
    }

    /// A non-empty text option the action cannot do without.
    pub(crate) fn required<T: FromRendered + Into<String>>(
        &self,
        option: &Templated<T>,
    ) -> Result<String, String> {
        let key = option.key();
        match self.render.resolve(option) {
            Ok(Some(text)) => {
                let text: String = text.into();
                if text.is_empty() {
                    Err(format!("{}: option `{key}` is empty", self.kind()))
                } else {
                    Ok(text)
                }
            }
            Ok(None) | Err(OptionError::Invalid { .. }) => {
                Err(format!("{}: option `{key}` must be a string", self.kind()))
            }
            Err(e) => Err(self.failed(e)),
        }
    }

    /// A non-empty shell command, its templates as references (`crate::shell_text`).
    pub(crate) fn shell_text(&self, option: &Templated<ShellText>) -> Result<ShellText, String> {
        let key = option.key();
        match self.render.shell(option) {
            Ok(Some(text)) if text.command.is_empty() => {
                Err(format!("{}: option `{key}` is empty", self.kind()))
            }
            Ok(Some(text)) => Ok(text),
            Ok(None) | Err(OptionError::Invalid { .. }) => {
                Err(format!("{}: option `{key}` must be a string", self.kind()))
            }
            Err(e) => Err(self.failed(e)),
        }
    }

    /// [`ActionContext::required`] for an option the loader lets be absent.
    pub(crate) fn required_opt(
        &self,
        option: Option<&Templated<String>>,
        key: &str,
    ) -> Result<String, String> {
        match option {
            Some(option) => self.required(option),
            None => Err(format!("{}: option `{key}` is required", self.kind())),
        }
    }

    /// A flag: false when absent.
    pub(crate) fn flag(&self, option: Option<&Templated<bool>>) -> Result<bool, String> {
        Ok(match option {
            Some(option) => self.resolve(option)?.unwrap_or(false),
            None => false,
        })
    }

    /// How long the action may run: its own `timeoutMs`, else the default for its kind
    /// (shell and agent steps); `None` is no limit.
    pub(crate) fn timeout(&self) -> Result<Option<Duration>, String> {
        effective_timeout(&self.action.kind.value, &self.render, self.timeouts)
            .map_err(|e| self.failed(e))
    }

    /// A duration in milliseconds (`timeoutMs`).
    pub(crate) fn millis(
        &self,
        option: Option<&Templated<Duration>>,
    ) -> Result<Option<Duration>, String> {
        option.map_or(Ok(None), |o| self.resolve(o))
    }
}

/// How long an action of `kind` may run: its own `timeoutMs`, else the default of
/// `timeouts` for shell and agent steps; `None` is no limit. Recorded in `action-started`.
pub(crate) fn effective_timeout(
    kind: &ActionKind,
    render: &RenderContext<'_>,
    timeouts: &StepTimeouts,
) -> Result<Option<Duration>, OptionError> {
    let own = |option: Option<&Templated<Duration>>| option.map_or(Ok(None), |o| render.resolve(o));
    Ok(match kind {
        ActionKind::Shell(o) => Some(own(o.timeout_ms.as_ref())?.unwrap_or(timeouts.shell)),
        ActionKind::AgentRun(o) => Some(own(o.timeout_ms.as_ref())?.unwrap_or(timeouts.agent)),
        ActionKind::CommandGate(o) => own(o.timeout_ms.as_ref())?,
        ActionKind::HttpRequest(o) => {
            Some(own(o.timeout_ms.as_ref())?.unwrap_or(http_request::DEFAULT_TIMEOUT))
        }
        _ => None,
    })
}

/// Why a file could not be read: for a missing file the operating system's words, as
/// actions have always given them; the bounded reader's otherwise.
pub(crate) fn read_failure(e: ReadError) -> String {
    match e {
        ReadError::Missing => std::io::Error::from_raw_os_error(libc::ENOENT).to_string(),
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
    spec: spur_process::ProcessSpec,
) -> spur_process::ProcessSpec {
    let mut spec = spec
        .cwd(ctx.project_root)
        .log(crate::store::bounded_read::open_log(ctx.log_path));
    if let Some(hook) = &ctx.on_start {
        spec = spec.on_start(hook.clone());
    }
    for (k, v) in ctx.env {
        spec = spec.env(k, v);
    }
    spec
}

/// The `spurUsage` lines a step's process printed on stderr, into its result; a report
/// that is refused fails the step.
pub(crate) fn with_reported_usage(
    mut result: ActionResult,
    what: &str,
    stderr: &[u8],
) -> ActionResult {
    match crate::cost::usage_line::read_all(stderr) {
        Ok(usage) => result.usage = usage,
        Err(why) => {
            result.ok = false;
            result.error = Some(coded(
                Code::CostReportRefused,
                format!("{what}: {why}"),
                "a usage report is one line `{\"spurUsage\": {\"inputTokens\": N, \"outputTokens\": N, \"costUsd\": X}}` on stderr (book: Cost and budgets)",
            ));
        }
    }
    result
}

/// Turn a finished process into an action result (last stderr line in the error).
pub(crate) fn process_result(what: &str, outcome: &spur_process::ProcessOutcome) -> ActionResult {
    use spur_process::ProcessStatus;
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
