//! The values that cross the engine: a run request (client → workflow) and its reply
//! (workflow → client). The reply holds the run's records so the client shows the run's
//! progress as a local run does; action logs stay on the worker.

use serde::{Deserialize, Serialize};
use spur_engine::run::journal::Record;
use spur_engine::run::RunOutcome;

/// Start a run of a pipeline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRequest {
    /// The pipeline file as the client named it (recorded in `run-started`).
    pub pipeline_path: String,
    /// The pipeline's text: every worker runs the same pipeline.
    pub pipeline_text: String,
    /// `--var NAME=VALUE`, in order.
    pub vars: Vec<String>,
    /// `--vars JSON`.
    pub vars_json: Option<String>,
    /// `--force-done --reason R`.
    pub force_done_reason: Option<String>,
    /// `--worktree`: the run's tree is the branch `spur/<run-id>` of a git remote, from
    /// this commit; each worker works in a worktree of its own checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<spur_engine::run::fleet_tree::TreeSpec>,
}

/// How a run ended, as the workflow answers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunReply {
    /// Every journal record of the run, in order.
    pub records: Vec<Record>,
    /// The outcome, when the run reached one.
    pub outcome: Option<RunOutcome>,
    /// The outcome's sentence for people (not part of its JSON).
    pub detail: Option<String>,
    /// Why the run stopped without an outcome.
    pub error: Option<ReplyError>,
    /// A run in a worktree: its branch on the remote and the commit its last step left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<spur_engine::run::git_worktree::WorktreeRecord>,
}

/// A run that stopped without an outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplyError {
    /// Its stable code (`spur::run::ambiguous-action`, …).
    pub code: String,
    /// The error's message.
    pub message: String,
    /// The ambiguous action, when that is why.
    pub ambiguous: Option<AmbiguousAction>,
    /// The task whose lock another run holds, when that is why.
    #[serde(default)]
    pub locked: Option<LockedTask>,
}

/// A task whose run lock another run holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LockedTask {
    /// The task.
    pub wbs: String,
    /// The run holding it, when known.
    pub holder: Option<String>,
    /// Where the lock is.
    pub path: String,
}

/// An action that started and never finished, held for a person's decision.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AmbiguousAction {
    /// The state whose action it is.
    pub state: String,
    /// Its position in the state's list.
    pub index: usize,
    /// Its kind.
    pub kind: String,
    /// Its log, relative to the run directory of the worker that started it.
    pub log: String,
}

/// What a run waits on, from the workflow's `status` handler.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunStatus {
    /// The promise of the pause it waits at, if it is paused.
    pub paused: Option<String>,
    /// What it waits for there.
    #[serde(default)]
    pub note: Option<spur_engine::run::PauseNote>,
}

/// What `SpurRun/answer` takes: the answer and who gave it, or a bare JSON string (an
/// answer from no one named, e.g. a `curl` by hand).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AnswerBody {
    /// `"ship"`.
    Text(String),
    /// `{"answer": "ship", "answeredBy": "ada"}`.
    Named(spur_engine::run::PauseAnswer),
}

impl AnswerBody {
    /// The value the run's pause is resolved with.
    pub fn into_pause_answer(self) -> spur_engine::run::PauseAnswer {
        match self {
            AnswerBody::Text(answer) => spur_engine::run::PauseAnswer {
                answer,
                answered_by: None,
            },
            AnswerBody::Named(given) => given,
        }
    }
}
