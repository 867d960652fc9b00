//! Why a run could not start or go on: one enum with a stable code per case. Each case
//! belongs to an exit class (usage 2, could-not-start 4, failed 1).

use super::guard_eval::GuardCompileError;
use super::journal::JournalError;
use super::lock::LockError;
use super::render::RenderError;
use super::replay_check::RecordDoesNotFit;
use super::vars::VarError;

use crate::diagnostic::{coded_diagnostic, Code};

/// Why a run could not start, could not be resumed, or broke while running.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A var is undefined or its value is invalid.
    #[error(transparent)]
    Var(#[from] VarError),
    /// The `wbs` var is not a valid task id.
    #[error(transparent)]
    InvalidWbs(#[from] crate::wbs::InvalidWbs),
    /// A template could not be rendered.
    #[error(transparent)]
    Template(#[from] RenderError),
    /// A guard could not be compiled (a jq expression).
    #[error(transparent)]
    GuardCompile(#[from] GuardCompileError),
    /// Vars the pipeline uses that have no value.
    #[error("the pipeline uses {} with no value: {}", if names.len() == 1 { "a var" } else { "vars" }, names.join(", "))]
    UnsetVars {
        /// Their names.
        names: Vec<String>,
    },
    /// `wbs` is empty and the pipeline's templates use it.
    #[error("the task var `wbs` is empty, and the pipeline's steps use ${{vars.wbs}}: they would run on no task (\"task :\")")]
    EmptyTask,
    /// `--force-done` was given to a run that has no task.
    #[error("--force-done was given, but this run has no task to force: the pipeline declares no `wbs` var")]
    ForceWithoutTask,
    /// The journal names a state the pipeline does not have.
    #[error("the pipeline has no state {0:?}")]
    UnknownState(String),
    /// The task is locked by another run.
    #[error(transparent)]
    Locked(#[from] LockError),
    /// No run with this id (the id, the state directory).
    #[error("no run {0} in {1}")]
    RunNotFound(String, String),
    /// The journal cannot be read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A journal record does not fit the run before it or its pipeline.
    #[error(transparent)]
    DoesNotFit(#[from] RecordDoesNotFit),
    /// The journal has no format version: an older spur wrote it.
    #[error("run {run_id} was written by an older spur (a journal without a format version): it cannot be resumed")]
    OlderJournal {
        /// The run.
        run_id: String,
    },
    /// The journal is chained by plain sha256 (format 1), not sealed with a key.
    #[error("run {run_id} cannot be resumed: its journal is not sealed with a key (format 1: written by a spur before keyed chains, or rewritten without the key)")]
    UnkeyedJournal {
        /// The run.
        run_id: String,
    },
    /// There is no key to seal the journal with.
    #[error(transparent)]
    Key(#[from] crate::store::chain_key::KeyError),
    /// The run's policy cannot be pinned or found.
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyError),
    /// The run being resumed already finished.
    #[error("run {run_id} already finished ({outcome} at {state})")]
    AlreadyFinished {
        /// The run.
        run_id: String,
        /// How it ended.
        outcome: super::outcome::Outcome,
        /// The state it ended in.
        state: String,
    },
    /// `spur retry` of a run that did not fail, or that has no state to go on from.
    #[error("run {run_id} cannot be retried: {why}")]
    NotRetryable {
        /// The run.
        run_id: String,
        /// Why not.
        why: String,
    },
    /// The pipeline's text changed since the run started (resume without
    /// `--allow-changed-pipeline`).
    #[error("the pipeline {path} changed since run {run_id} started")]
    PipelineChanged {
        /// The run.
        run_id: String,
        /// The pipeline file.
        path: String,
    },
    /// An action started and never finished: resuming could run it twice.
    #[error("action {index} ({kind}) of state {state:?} started and never finished: it may or may not have run")]
    Ambiguous {
        /// The run.
        run_id: String,
        /// The state whose action it is.
        state: String,
        /// The action's position in the state's list.
        index: usize,
        /// The action's kind.
        kind: String,
        /// The action's log file.
        log: String,
    },
    /// The run is paused for a question and no `--answer` was given.
    #[error("run {run_id} is waiting for an answer to {prompt:?}")]
    AnswerRequired {
        /// The run.
        run_id: String,
        /// The question.
        prompt: String,
        /// The accepted answers, comma-separated.
        choices: String,
    },
    /// The `--answer` is not one of the accepted answers.
    #[error("{answer:?} is not an answer to {prompt:?}")]
    AnswerInvalid {
        /// The answer given.
        answer: String,
        /// The question.
        prompt: String,
        /// The accepted answers, comma-separated.
        choices: String,
    },
    /// `--answer` was given to a run not paused for a question (the run id).
    #[error("run {0} is not paused for a question: --answer does not apply")]
    AnswerUnexpected(String),
    /// Appending to the journal failed.
    #[error("journal write failed: {0}")]
    JournalIo(#[source] std::io::Error),
    /// The durable-execution engine the run is journaled on (Restate) failed a step.
    #[error("the run engine failed: {0}")]
    Engine(String),
    /// An action on a run engine whose timeout is longer than the engine waits for a
    /// journaled step: it would be aborted and held as ambiguous. Refused before it runs.
    #[error("{state}[{index}] {kind} may run for {minutes} min (its timeout), longer than an action on a run engine may: {limit} min")]
    ActionTooLong {
        /// The state whose action it is.
        state: String,
        /// Its position in the state's list.
        index: usize,
        /// Its kind.
        kind: String,
        /// Its timeout, in whole minutes (rounded up).
        minutes: u64,
        /// The longest an action may run there, in minutes.
        limit: u64,
    },
    /// `secrets:` of `.spur/config.yaml` cannot be read (every finding, one line each).
    #[error("{path}: `secrets` cannot be read: {message}")]
    SecretConfig {
        /// The configuration file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A resumed run's secret vars, recorded as the marker, were not given again.
    #[error("run {run_id} has secret {} recorded redacted: {}", if names.len() == 1 { "var" } else { "vars" }, names.join(", "))]
    SecretNotGiven {
        /// The run.
        run_id: String,
        /// The secret vars missing.
        names: Vec<String>,
    },
    /// `spur continue --var NAME=…` for a var that is not secret.
    #[error("--var {0:?}: only a secret var is given again to a resumed run")]
    NotASecret(String),
    /// The run directory could not be created.
    #[error("cannot create the run directory {path}: {source}")]
    RunDir {
        /// The directory.
        path: String,
        /// The error creating it.
        #[source]
        source: std::io::Error,
    },
}

coded_diagnostic! {
    RunError {
        forward { Var, InvalidWbs, Template, GuardCompile, Locked, Journal, DoesNotFit, Key, Policy }
        Self::UnsetVars { .. } => Code::RunUnsetVar,
            help("declare each under `vars:` with a default, or pass it with --var NAME=VALUE");
        Self::EmptyTask => Code::RunEmptyTask,
            help("pass the task with --var wbs=ID (`spur task list` lists them)");
        Self::ForceWithoutTask => Code::UsageForceDoneWithoutTask,
            help("--force-done overrides the done gate of a task, and a run has one only when its pipeline declares `wbs` under `vars:` and `spur run` is given --var wbs=ID; drop --force-done (and --reason)");
        Self::UnknownState(..) => Code::RunUnknownState,
            help("run `spur check` on the pipeline");
        Self::RunNotFound(..) => Code::RunNotFound,
            help("`spur runs` lists the runs of this state directory");
        Self::UnkeyedJournal { run_id } => Code::JournalUnkeyed,
            help("a sha256 chain can be recomputed by anyone who can write the file, so nothing shows that \
                  this journal was not rewritten; start a new run with `spur run` (`spur trace {run_id}` \
                  still shows its history)");
        Self::AlreadyFinished { run_id, outcome, .. } => Code::RunFinished,
            help("{}", if *outcome == super::outcome::Outcome::Failed {
                format!("`spur retry {run_id}` goes on from where it failed; or start a new run with `spur run`")
            } else {
                "start a new run with `spur run`".to_owned()
            });
        Self::NotRetryable { run_id, .. } => Code::RunNotRetryable,
            help("`spur runs` shows how each run ended; `spur trace {run_id}` shows its history, and `spur run` starts a new one");
        Self::OlderJournal { run_id } => Code::JournalOlderFormat,
            help("nothing shows that its journal was not edited since; start a new run with `spur run` (`spur trace {run_id}` still shows its history)");
        Self::PipelineChanged { .. } => Code::RunPipelineChanged,
            help("resume with the pipeline text the run started with, or pass --allow-changed-pipeline to resume anyway");
        Self::Ambiguous { log, run_id, .. } => Code::RunAmbiguousAction,
            help("check its effects (log: {log}), then `spur continue {run_id} --rerun-ambiguous` to run it again");
        Self::AnswerRequired { choices, .. } => Code::RunAnswerRequired,
            help("pass --answer with one of: {choices}");
        Self::AnswerInvalid { choices, .. } => Code::RunAnswerInvalid,
            help("answer one of: {choices}");
        Self::AnswerUnexpected(..) => Code::RunAnswerUnexpected,
            help("resume it without --answer");
        Self::JournalIo(..) => Code::RunJournalIo,
            help("the state directory must be writable; the run stopped before the next side effect");
        Self::Engine(..) => Code::RunEngine,
            help("a worker that died is replaced and the run goes on from its last journaled step; a step that failed (the message says which) ended the run: `spur trace` shows how far it got");
        Self::ActionTooLong { .. } => Code::RunActionTooLong,
            help("lower the action's `timeoutMs` (or `defaults:` of .spur/config.yaml), split the work into shorter steps, or run the pipeline on this machine");
        Self::RunDir { .. } => Code::RunRunDir;
        Self::SecretConfig { .. } => Code::RunSecretConfig,
            help("write `secrets: [NAME, …]`: names of vars or environment variables");
        Self::SecretNotGiven { run_id, names } => Code::RunSecretNotGiven,
            help("spur never records a secret's value: give {} again, e.g. `spur continue {run_id} --var {}=…`", names.join(", "), names.first().map_or("NAME", String::as_str));
        Self::NotASecret(..) => Code::RunNotASecret,
            help("a resumed run keeps the vars it started with; only vars listed under `secrets:` are given again");
    }
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
    /// The exit class of this error (usage 2, could-not-start 4, failed 1).
    pub fn class(&self) -> ErrorClass {
        match self {
            RunError::Var(_)
            | RunError::InvalidWbs(_)
            | RunError::Template(_)
            | RunError::GuardCompile(_)
            | RunError::UnknownState(_)
            | RunError::UnsetVars { .. }
            | RunError::EmptyTask
            | RunError::ForceWithoutTask
            | RunError::RunNotFound(..)
            | RunError::AnswerRequired { .. }
            | RunError::AnswerInvalid { .. }
            | RunError::AnswerUnexpected(_)
            | RunError::SecretConfig { .. }
            | RunError::SecretNotGiven { .. }
            | RunError::NotASecret(_) => ErrorClass::Usage,
            RunError::Locked(_)
            | RunError::Journal(_)
            | RunError::DoesNotFit(_)
            | RunError::OlderJournal { .. }
            | RunError::UnkeyedJournal { .. }
            | RunError::Key(_)
            | RunError::Policy(_)
            | RunError::AlreadyFinished { .. }
            | RunError::NotRetryable { .. }
            | RunError::PipelineChanged { .. }
            | RunError::Ambiguous { .. }
            | RunError::RunDir { .. } => ErrorClass::CannotStart,
            RunError::JournalIo(_) | RunError::Engine(_) | RunError::ActionTooLong { .. } => {
                ErrorClass::Failed
            }
        }
    }
}
