//! Why a run could not start or go on: one enum with a stable code per case. Each case
//! belongs to an exit class (usage 2, could-not-start 4, failed 1).

use super::guard_eval::GuardCompileError;
use super::journal::JournalError;
use super::lock::LockError;
use super::render::RenderError;
use super::vars::VarError;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RunError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Var(#[from] VarError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    InvalidWbs(#[from] crate::wbs::InvalidWbs),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Template(#[from] RenderError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    GuardCompile(#[from] GuardCompileError),
    #[error("the pipeline uses {} with no value: {}", if names.len() == 1 { "a var" } else { "vars" }, names.join(", "))]
    #[diagnostic(
        code(spur::run::unset_var),
        help("declare each under `vars:` with a default, or pass it with --var NAME=VALUE")
    )]
    UnsetVars { names: Vec<String> },
    #[error("--force-done was given, but this run has no task to force: the pipeline declares no `wbs` var")]
    #[diagnostic(
        code(spur::usage::force_done_without_task),
        help("--force-done overrides the done gate of a task; declare `wbs` under `vars:` and pass --var wbs=ID, or drop --force-done")
    )]
    ForceWithoutTask,
    #[error("the pipeline has no state {0:?}")]
    #[diagnostic(
        code(spur::run::unknown_state),
        help("run `spur check` on the pipeline")
    )]
    UnknownState(String),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Locked(#[from] LockError),
    #[error("no run {0} in {1}")]
    #[diagnostic(
        code(spur::run::not_found),
        help("`spur runs` lists the runs of this state directory")
    )]
    RunNotFound(String, String),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Journal(#[from] JournalError),
    #[error("run {run_id} already finished ({outcome} at {state})")]
    #[diagnostic(code(spur::run::finished), help("start a new run with `spur run`"))]
    AlreadyFinished {
        run_id: String,
        outcome: super::outcome::Outcome,
        state: String,
    },
    #[error("the pipeline {path} changed since run {run_id} started")]
    #[diagnostic(
        code(spur::run::pipeline_changed),
        help("resume with the pipeline text the run started with, or pass --allow-changed-pipeline to resume anyway")
    )]
    PipelineChanged { run_id: String, path: String },
    #[error("action {index} ({kind}) of state {state:?} started and never finished: it may or may not have run")]
    #[diagnostic(
        code(spur::run::ambiguous_action),
        help("check its effects (log: {log}), then `spur continue {run_id} --rerun-ambiguous` to run it again")
    )]
    Ambiguous {
        run_id: String,
        state: String,
        index: usize,
        kind: String,
        log: String,
    },
    #[error("run {run_id} is waiting for an answer to {prompt:?}")]
    #[diagnostic(
        code(spur::run::answer_required),
        help("pass --answer with one of: {choices}")
    )]
    AnswerRequired {
        run_id: String,
        prompt: String,
        choices: String,
    },
    #[error("{answer:?} is not an answer to {prompt:?}")]
    #[diagnostic(code(spur::run::answer_invalid), help("answer one of: {choices}"))]
    AnswerInvalid {
        answer: String,
        prompt: String,
        choices: String,
    },
    #[error("run {0} is not paused for a question: --answer does not apply")]
    #[diagnostic(code(spur::run::answer_unexpected), help("resume it without --answer"))]
    AnswerUnexpected(String),
    #[error("journal write failed: {0}")]
    #[diagnostic(
        code(spur::run::journal_io),
        help("the state directory must be writable; the run stopped before the next side effect")
    )]
    JournalIo(#[source] std::io::Error),
    #[error("cannot create the run directory {path}: {source}")]
    #[diagnostic(code(spur::run::run_dir))]
    RunDir {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The exit classes a run error maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Bad usage or invalid input (exit 2).
    Usage,
    /// Could not start: lock held, resume refused (exit 4).
    CannotStart,
    /// The run broke while running (exit 1).
    Failed,
}

impl RunError {
    pub fn class(&self) -> ErrorClass {
        match self {
            RunError::Var(_)
            | RunError::InvalidWbs(_)
            | RunError::Template(_)
            | RunError::GuardCompile(_)
            | RunError::UnknownState(_)
            | RunError::UnsetVars { .. }
            | RunError::ForceWithoutTask
            | RunError::RunNotFound(..)
            | RunError::AnswerRequired { .. }
            | RunError::AnswerInvalid { .. }
            | RunError::AnswerUnexpected(_) => ErrorClass::Usage,
            RunError::Locked(_)
            | RunError::Journal(_)
            | RunError::AlreadyFinished { .. }
            | RunError::PipelineChanged { .. }
            | RunError::Ambiguous { .. }
            | RunError::RunDir { .. } => ErrorClass::CannotStart,
            RunError::JournalIo(_) => ErrorClass::Failed,
        }
    }
}
