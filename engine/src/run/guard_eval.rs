//! Guard evaluation. Guards are compiled once when the run starts (jq
//! programs included, combinators unfolded) and evaluated with options templated just
//! before use. A guard that cannot be evaluated does not pass (fails closed), and says why.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use spur_guards::GuardResult;

use super::jq_guard::JqGuard;
use super::render::{render_options, OptionError, RenderContext};
use crate::diagnostic::{coded_diagnostic, Code};
use crate::pipeline::{
    FileExistsOptions, Guard, GuardKind, NestedGuard, NestedGuards, Options, ShellGuardOptions,
};

/// A guard ready to evaluate.
#[derive(Debug, Clone)]
pub(crate) enum CompiledGuard {
    Always,
    Never,
    ActionOk,
    Shell(ShellGuardOptions),
    Jq(Arc<JqGuard>),
    FileExists(FileExistsOptions),
    All(Vec<CompiledGuard>),
    Any(Vec<CompiledGuard>),
    /// Passes when its guards do not all pass (one guard: plain negation).
    Not(Vec<CompiledGuard>),
    /// `spur-guard-<kind>` on PATH.
    Plugin {
        kind: String,
        options: Options,
    },
}

/// A guard could not be compiled (the checker reports the same with spans).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("guard {kind:?}: {message}")]
pub struct GuardCompileError {
    pub(crate) kind: String,
    pub(crate) message: String,
}

coded_diagnostic! {
    GuardCompileError {
        Self { .. } => Code::RunGuardCompile,
            help("run `spur check` on the pipeline for details");
    }
}

impl CompiledGuard {
    pub(crate) fn compile(guard: &Guard, var_names: &[String]) -> Result<Self, GuardCompileError> {
        let kind = &guard.kind.value;
        let err = |message: &str| GuardCompileError {
            kind: kind.name().to_owned(),
            message: message.to_owned(),
        };
        Ok(match kind {
            GuardKind::Always => CompiledGuard::Always,
            GuardKind::Never => CompiledGuard::Never,
            GuardKind::ActionOk => CompiledGuard::ActionOk,
            GuardKind::Shell(options) => CompiledGuard::Shell(options.clone()),
            GuardKind::FileExists(options) => CompiledGuard::FileExists(options.clone()),
            GuardKind::Jq(options) => {
                let expr = options
                    .expr
                    .as_ref()
                    .ok_or_else(|| err("option `expr` is required"))?;
                CompiledGuard::Jq(Arc::new(
                    JqGuard::compile(
                        &expr.value,
                        options.file.clone(),
                        options.timeout_ms.clone(),
                        var_names,
                    )
                    .map_err(|e| err(&e))?,
                ))
            }
            GuardKind::All(options) | GuardKind::Any(options) | GuardKind::Not(options) => {
                let NestedGuards::List(items) = &options.guards else {
                    return Err(err("option `guards` must be a list of guards"));
                };
                let mut inner = Vec::with_capacity(items.len());
                for item in items {
                    inner.push(match item {
                        NestedGuard::Guard(nested) => CompiledGuard::compile(nested, var_names)?,
                        NestedGuard::NotAMapping => {
                            return Err(err("each entry of `guards` must be a guard mapping"))
                        }
                        NestedGuard::NoKind => {
                            return Err(err("a guard in `guards` has no `kind`"))
                        }
                    });
                }
                match kind {
                    GuardKind::All(_) => CompiledGuard::All(inner),
                    GuardKind::Any(_) => CompiledGuard::Any(inner),
                    _ => CompiledGuard::Not(inner),
                }
            }
            GuardKind::Plugin(name) => CompiledGuard::Plugin {
                kind: name.clone(),
                options: guard.options.clone(),
            },
        })
    }

    /// The guard's kind as written.
    pub(crate) fn kind(&self) -> &str {
        match self {
            CompiledGuard::Always => "always",
            CompiledGuard::Never => "never",
            CompiledGuard::ActionOk => "action-ok",
            CompiledGuard::Shell(_) => "shell",
            CompiledGuard::Jq(_) => "jq",
            CompiledGuard::FileExists(_) => "file-exists",
            CompiledGuard::All(_) => "all",
            CompiledGuard::Any(_) => "any",
            CompiledGuard::Not(_) => "not",
            CompiledGuard::Plugin { kind, .. } => kind,
        }
    }

    /// Whether the guard is, or holds, a jq guard whose filter is evaluated in the jq
    /// worker (one outside the bounded fragment evaluated in process).
    pub(crate) fn uses_jq_worker(&self) -> bool {
        match self {
            CompiledGuard::Jq(g) => g.needs_worker(),
            CompiledGuard::All(g) | CompiledGuard::Any(g) | CompiledGuard::Not(g) => {
                g.iter().any(CompiledGuard::uses_jq_worker)
            }
            _ => false,
        }
    }

    /// Whether the guard could run a process or a plugin (a dry run cannot decide it).
    pub(crate) fn has_side_effects(&self) -> bool {
        match self {
            CompiledGuard::Shell(_) | CompiledGuard::Plugin { .. } => true,
            CompiledGuard::All(g) | CompiledGuard::Any(g) | CompiledGuard::Not(g) => {
                g.iter().any(CompiledGuard::has_side_effects)
            }
            _ => false,
        }
    }
}

/// What a guard sees.
pub(crate) struct GuardContext<'a> {
    pub(crate) render: RenderContext<'a>,
    pub(crate) project_root: &'a Path,
    pub(crate) env: &'a [(String, String)],
    /// The last action of the current state succeeded (`None`: the state ran none).
    pub(crate) last_action_ok: Option<bool>,
    /// The last action's record, for the jq run context.
    pub(crate) last_action: &'a Value,
    /// How long a shell guard without its own `timeoutMs` may run.
    pub(crate) default_timeout: Duration,
    /// Where jq guards are evaluated (the run's jq worker).
    pub(crate) jq: &'a spur_guards::jq::JqSandbox,
}

/// A guard that could not be evaluated: it does not pass, and says why.
fn closed(detail: impl Into<String>) -> GuardResult {
    GuardResult::fail(detail, Duration::ZERO)
}

/// Evaluate a guard; never errors (an unevaluable guard does not pass).
pub(crate) fn evaluate(guard: &CompiledGuard, ctx: &GuardContext<'_>) -> GuardResult {
    match guard {
        CompiledGuard::Always => GuardResult::bare(true),
        CompiledGuard::Never => GuardResult::bare(false),
        CompiledGuard::ActionOk => match ctx.last_action_ok {
            Some(ok) => GuardResult::bare(ok),
            None => closed("the state ran no action"),
        },
        CompiledGuard::Shell(options) => shell(options, ctx),
        CompiledGuard::Jq(jq) => jq.evaluate(ctx),
        CompiledGuard::FileExists(options) => {
            match ctx.render.resolve_lenient(Some(&options.path)) {
                Ok(Some(path)) => spur_guards::file_exists_guard(&ctx.project_root.join(&path)),
                Ok(None) => closed("file-exists: option `path` is required"),
                Err(e) => closed(e.to_string()),
            }
        }
        CompiledGuard::All(guards) => {
            for g in guards {
                let r = evaluate(g, ctx);
                if !r.passed {
                    let detail = format!("{} did not pass{}", g.kind(), suffix(&r));
                    return GuardResult::fail(detail, Duration::ZERO);
                }
            }
            GuardResult::bare(true)
        }
        CompiledGuard::Any(guards) => {
            for g in guards {
                if evaluate(g, ctx).passed {
                    return GuardResult::pass(format!("{} passed", g.kind()), Duration::ZERO);
                }
            }
            GuardResult::bare(false)
        }
        CompiledGuard::Not(guards) => {
            let all = guards.iter().all(|g| evaluate(g, ctx).passed);
            GuardResult::bare(!all)
        }
        CompiledGuard::Plugin { kind, options } => plugin(kind, options, ctx),
    }
}

fn suffix(r: &GuardResult) -> String {
    r.detail_if_any()
        .map(|d| format!(": {d}"))
        .unwrap_or_default()
}

fn shell(options: &ShellGuardOptions, ctx: &GuardContext<'_>) -> GuardResult {
    let text = match ctx.render.shell(&options.command) {
        Ok(Some(text)) => text,
        Ok(None) | Err(OptionError::Invalid { .. }) => {
            return closed("shell: option `command` is required")
        }
        Err(e) => return closed(e.to_string()),
    };
    let cwd = match ctx.render.resolve_lenient(options.cwd.as_ref()) {
        Ok(Some(cwd)) => {
            let dir = ctx.project_root.join(&cwd);
            if !dir.is_dir() {
                return closed(format!(
                    "shell guard: {}",
                    crate::run::actions::shell::cwd_missing(&cwd, &dir)
                ));
            }
            dir
        }
        Ok(None) => ctx.project_root.to_path_buf(),
        Err(e) => return closed(e.to_string()),
    };
    // The variables the command's references read come last, so nothing overrides them.
    let mut env = ctx.env.to_vec();
    env.extend(text.env);
    if let Some(e) = crate::run::child_env::too_large_to_export(&env) {
        return closed(format!("shell guard: {e}"));
    }
    let timeout = match options.timeout_ms.as_ref().map(|t| ctx.render.resolve(t)) {
        None => Some(ctx.default_timeout),
        Some(Ok(t)) => t.or(Some(ctx.default_timeout)),
        Some(Err(OptionError::Render(e))) => return closed(e.to_string()),
        Some(Err(e)) => return closed(format!("shell guard: {e}")),
    };
    quiet_pass(spur_guards::shell_guard(
        &text.command,
        &env,
        Some(&cwd),
        timeout,
    ))
}

/// A shell or plugin guard that passed has nothing to explain.
fn quiet_pass(mut result: GuardResult) -> GuardResult {
    if result.passed {
        result.detail.clear();
    }
    result
}

fn plugin(kind: &str, options: &Options, ctx: &GuardContext<'_>) -> GuardResult {
    if let Some(e) = crate::run::child_env::too_large_to_export(ctx.env) {
        return closed(format!("{kind}: {e}"));
    }
    let options = match render_options(options, &ctx.render) {
        Ok(o) => o,
        Err(e) => return closed(e.to_string()),
    };
    let run = spur_guards::PluginRun {
        env: ctx.env,
        cwd: Some(ctx.project_root),
        timeout: None,
        log_file: None,
        on_start: None,
    };
    quiet_pass(spur_guards::plugin_guard(kind, &options, &run))
}
