//! Why a request to a lifecycle instance could not be made (a refused transition is not an
//! error: it is an answer, [`super::TransitionAnswer`]).

use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::run::journal::JournalError;
use crate::run::replay_check::RecordDoesNotFit;
use crate::run::vars::VarError;
use crate::run::RunError;
use crate::store::data_lock::DataLockError;
use crate::store::task_status::TaskError;

use super::entity::InvalidEntity;

/// A lifecycle request that could not be made: nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// Not `task:<wbs>` or `feature:<id>`.
    #[error(transparent)]
    Entity(#[from] InvalidEntity),
    /// The pipeline's name cannot name the instance's directory.
    #[error(
        "pipeline name {0:?} cannot name a lifecycle: it must match ^[A-Za-z0-9][A-Za-z0-9._-]*$"
    )]
    PipelineName(String),
    /// The pipeline does not declare the var the entity binds.
    #[error("{entity} binds the var `{var}`, which {pipeline} does not declare")]
    EntityVar {
        /// The entity.
        entity: String,
        /// The var its id goes into.
        var: &'static str,
        /// The pipeline's name.
        pipeline: String,
    },
    /// A state the request names is not one of the pipeline's.
    #[error("{what} {state:?} is not a state of {pipeline}")]
    UnknownState {
        /// What named it: `--to`, `--from`, the task's status.
        what: &'static str,
        /// The state named.
        state: String,
        /// The pipeline's name.
        pipeline: String,
        /// Its states, in order.
        states: Vec<String>,
    },
    /// A state a task's lifecycle moves into that is not a task status.
    #[error("state {0:?} is not a task status, so a task's lifecycle cannot move into it")]
    NotAStatus(String),
    /// `--from` for a task: its status is its ledger's.
    #[error("the status of {0} is its task ledger's: --from does not apply")]
    TaskStatusIsTheLedger(String),
    /// `--force-done` on a request that is not into a state the done gate guards.
    #[error("--force-done applies only to a task's transition into done, not into {0:?}")]
    ForceNotDone(String),
    /// The instance's journal is another entity's (or not an instance's).
    #[error("{path} is not the lifecycle journal of {expected}{}", found.as_deref().map(|f| format!(" (it is {f}'s)")).unwrap_or_default())]
    WrongInstance {
        /// The journal.
        path: PathBuf,
        /// The entity asked for.
        expected: String,
        /// The entity the journal names, if any.
        found: Option<String>,
    },
    /// The journal was written by a spur without format versions.
    #[error("{0} was written by an older spur (no format version)")]
    OlderJournal(PathBuf),
    /// The state directory could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `--var` is unusable.
    #[error(transparent)]
    Var(#[from] VarError),
    /// The journal cannot be read or is broken.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A record of the journal does not fit the instance before it or the pipeline.
    #[error(transparent)]
    DoesNotFit(#[from] RecordDoesNotFit),
    /// The task's status cannot be read or recorded.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// The task's data lock cannot be taken.
    #[error(transparent)]
    DataLock(#[from] DataLockError),
    /// What a run would fail on too (a guard that does not compile, `secrets:`).
    #[error(transparent)]
    Run(#[from] RunError),
}

coded_diagnostic! {
    LifecycleError {
        forward { Var, Journal, DoesNotFit, Task, DataLock, Run }
        Self::Entity(..) => Code::LifecycleEntity,
            help("the entity is `task:<wbs>` (binds the var `wbs`) or `feature:<id>` (binds `featureId`); ids match ^[A-Za-z0-9][A-Za-z0-9._-]*$");
        Self::PipelineName(..) => Code::LifecyclePipelineName,
            help("rename the pipeline: its name names the directory of its instances");
        Self::EntityVar { var, .. } => Code::LifecycleEntityVar,
            help("declare it: `vars: {{ {var}: \"\" }}`");
        Self::UnknownState { states, .. } => Code::LifecycleUnknownState,
            help("its states: {}", states.join(", "));
        Self::NotAStatus(..) => Code::LifecycleNotAStatus,
            help("a task status is a lower-case word (todo, wip, blocked, done…): rename the state");
        Self::TaskStatusIsTheLedger(..) => Code::LifecycleTaskStatus,
            help("drop --from: the instance is re-seeded from the task ledger (`spur task show WBS`)");
        Self::ForceNotDone(..) => Code::UsageForceDoneNeedsDone,
            help("drop --force-done and --reason");
        Self::WrongInstance { .. } => Code::LifecycleWrongInstance,
            help("spur does not go on from a journal that is not the instance's; move it away to start the instance afresh");
        Self::OlderJournal(..) => Code::JournalOlderFormat,
            help("move it away to start the instance afresh (its history stays readable with `spur trace`-like tools)");
        Self::Io { .. } => Code::LifecycleIo,
            help("the state directory must be writable; nothing was changed");
    }
}

impl LifecycleError {
    /// Whether the request itself is wrong (exit 2), rather than the instance or the
    /// state directory being unusable (exit 4).
    pub fn is_usage(&self) -> bool {
        match self {
            LifecycleError::Entity(_)
            | LifecycleError::PipelineName(_)
            | LifecycleError::EntityVar { .. }
            | LifecycleError::UnknownState { .. }
            | LifecycleError::NotAStatus(_)
            | LifecycleError::TaskStatusIsTheLedger(_)
            | LifecycleError::ForceNotDone(_)
            | LifecycleError::Var(_) => true,
            LifecycleError::Run(e) => e.class() == crate::run::run_error::ErrorClass::Usage,
            _ => false,
        }
    }
}
