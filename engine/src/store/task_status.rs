//! Task status: the statuses a task can have, the one way to change one, and the status
//! spur acts on — the task ledger's (`store::task_ledger`), never a view's.
//!
//! Any status may be written freely except `done`: that one is written only from a
//! [`Done`] token, which only the done gate can make. Every change is a ledger append
//! under the task's data lock, after which the view `.spur/tasks/<wbs>.json` is rewritten.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::diagnostic::{coded_diagnostic, Code};
use crate::done_gate::Done;
use crate::store::audit::AuditAnchor;
use crate::store::data_lock::DataLock;
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::{self, Appended, LedgerError, NewRecord};
use crate::store::task_view::{self, TaskRecord, View};
use crate::wbs::Wbs;

/// A task status: lower-case, `^[a-z][a-z0-9-]*$`, at most 40 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Status(String);

/// The status of a task with no record yet.
pub(crate) const INITIAL_STATUS: &str = "todo";
const DONE: &str = "done";

impl Status {
    /// Any status but `done` (case-insensitive): `todo`, `in-progress`, `blocked`, …
    pub fn open(text: &str) -> Result<OpenStatus, StatusError> {
        let status = Self::any(text)?;
        if status.is_done() {
            return Err(StatusError::DoneNeedsTheGate);
        }
        Ok(OpenStatus(status))
    }

    fn any(text: &str) -> Result<Status, StatusError> {
        let lower = text.trim().to_ascii_lowercase();
        let mut chars = lower.chars();
        let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && lower.len() <= 40;
        if ok {
            Ok(Status(lower))
        } else {
            Err(StatusError::Invalid(text.to_owned()))
        }
    }

    /// `done`, certified by the gate.
    pub fn done(_certified: &Done) -> Status {
        Status(DONE.to_owned())
    }

    pub(crate) fn initial() -> Status {
        Status(INITIAL_STATUS.to_owned())
    }

    /// Whether this is `done`.
    pub fn is_done(&self) -> bool {
        self.0 == DONE
    }

    /// The status as written (`in-progress`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `text` names `done` (case-insensitive), i.e. must go through the gate.
    pub fn names_done(text: &str) -> bool {
        text.trim().eq_ignore_ascii_case(DONE)
    }
}

/// A status that is not `done`: the only kind [`StatusChange::To`] accepts. It has no
/// `Deserialize`, so it cannot be conjured from a file either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenStatus(Status);

impl OpenStatus {
    /// The status.
    pub fn status(&self) -> &Status {
        &self.0
    }
}

impl TryFrom<String> for Status {
    type Error = StatusError;
    /// Reading a record back: any well-formed status, `done` included.
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::any(&text)
    }
}

impl From<Status> for String {
    fn from(status: Status) -> String {
        status.0
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A status that cannot be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusError {
    /// Not a well-formed status (the text given).
    #[error("invalid status {0:?}")]
    Invalid(String),
    /// `done` was asked for directly; only the done gate can make a task done.
    #[error("done is certified only by the done gate")]
    DoneNeedsTheGate,
}

coded_diagnostic! {
    StatusError {
        Self::Invalid(..) => Code::UsageInvalidStatus,
            help("a status is a lower-case word such as todo, in-progress, blocked, review, cancelled or done");
        Self::DoneNeedsTheGate => Code::TaskDoneNeedsGate,
            help("use `spur task update WBS done`, which reads the verdict artifact");
    }
}

/// The change to make.
#[derive(Debug)]
pub enum StatusChange<'a> {
    /// Any status but done.
    To(OpenStatus),
    /// Done, as certified by the gate.
    Done(&'a Done),
}

/// Who and when, for the ledger.
#[derive(Debug, Clone)]
pub struct ChangeContext<'a> {
    /// Who (see `audit::current_user`).
    pub user: &'a str,
    /// The run making the change, if one is.
    pub run_id: Option<&'a str>,
    /// RFC 3339 UTC.
    pub time: String,
}

/// Why a task's status could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The ledger cannot be read, is broken, or refused the append.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The change is in the ledger, but the view could not be rewritten from it.
    #[error("the status change of task {wbs} is recorded in its ledger, but its view {path} could not be rewritten: {source}")]
    ViewWrite {
        /// The task.
        wbs: String,
        /// The view file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

coded_diagnostic! {
    TaskError {
        forward { Ledger }
        Self::ViewWrite { .. } => Code::TaskViewWriteFailed,
            help("the ledger is the task's status; the view is rewritten after the next change");
    }
}

/// The record of `wbs` its ledger says (no history and `todo` without a ledger). A broken
/// ledger is an error.
pub fn load(state_dir: &StateDir, wbs: &Wbs) -> Result<TaskRecord, TaskError> {
    let ledger = task_ledger::read(state_dir, wbs)?;
    Ok(TaskRecord::from_ledger(wbs, ledger.intact()?))
}

/// The current status of `wbs`: its ledger's (`todo` when it has no record). A broken
/// ledger is an error, never a status.
pub fn current_status(state_dir: &StateDir, wbs: &Wbs) -> Result<Status, TaskError> {
    let ledger = task_ledger::read(state_dir, wbs)?;
    ledger.intact()?;
    Ok(ledger.status())
}

/// Apply `change` to the locked task: append it to the ledger, then rewrite the view from
/// the ledger. A change to the current status appends nothing, and rewrites the view only
/// when the ledger has records and the view is not theirs (so a no-op repairs a tampered
/// view, but never erases an uncertified one). Returns the record the ledger now says.
pub fn record_change(
    lock: &DataLock,
    state_dir: &StateDir,
    change: StatusChange<'_>,
    context: &ChangeContext<'_>,
) -> Result<TaskRecord, TaskError> {
    let wbs = lock.wbs();
    let appended = task_ledger::append(lock, state_dir, NewRecord::Status(change), context)?;
    let record = TaskRecord::from_ledger(wbs, appended.records());
    let stale = match &appended {
        Appended::Written(_) => true,
        Appended::Unchanged(records) => {
            !records.is_empty()
                && task_view::read_view(state_dir, wbs) != View::Record(record.clone())
        }
    };
    if stale {
        write_view(state_dir, wbs, &record)?;
    }
    // The task file's `status:` is a view too: rewritten after a change, never on a no-op
    // (which would erase a hand-written `done` that `spur task show` reports uncertified).
    if matches!(appended, Appended::Written(_)) {
        crate::task::file_status::write_view(state_dir, wbs, &record.status).map_err(|e| {
            TaskError::ViewWrite {
                wbs: wbs.to_string(),
                path: e.path.display().to_string(),
                source: std::io::Error::other(e.message),
            }
        })?;
    }
    Ok(record)
}

/// Rewrite the view of the locked task from its ledger if the ledger has records and the
/// view is not theirs. Returns whether it was rewritten.
pub fn refresh_view(lock: &DataLock, state_dir: &StateDir) -> Result<bool, TaskError> {
    let wbs = lock.wbs();
    let ledger = task_ledger::read(state_dir, wbs)?;
    let records = ledger.intact()?;
    let record = TaskRecord::from_ledger(wbs, records);
    if records.is_empty() || task_view::read_view(state_dir, wbs) == View::Record(record.clone()) {
        return Ok(false);
    }
    write_view(state_dir, wbs, &record)?;
    Ok(true)
}

fn write_view(state_dir: &StateDir, wbs: &Wbs, record: &TaskRecord) -> Result<(), TaskError> {
    task_view::write_view(state_dir, wbs, record).map_err(|source| TaskError::ViewWrite {
        wbs: wbs.to_string(),
        path: state_dir.task_path(wbs).display().to_string(),
        source,
    })
}

/// Every forced override recorded in any task ledger, for cross-checking the audit log
/// (a record removed from the end of the log leaves a valid chain, but not a valid anchor).
/// Ledgers that cannot be read contribute their intact prefix: `spur audit verify` reports
/// them on their own.
pub fn audit_anchors(state_dir: &StateDir) -> Vec<AuditAnchor> {
    let mut anchors = Vec::new();
    for wbs in task_ledger::ledgered_tasks(state_dir) {
        let Ok(ledger) = task_ledger::read(state_dir, &wbs) else {
            continue;
        };
        for (record, change) in ledger.records.iter().filter_map(|r| Some((r, r.status()?))) {
            if let Some(audit_hash) = &change.audit_hash {
                anchors.push(AuditAnchor {
                    wbs: record.wbs.clone(),
                    time: record.at.clone(),
                    audit_hash: audit_hash.clone(),
                });
            }
        }
    }
    anchors
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::task_view::{read_view, ChangeVia, View};

    #[test]
    fn open_statuses_never_include_done() {
        assert_eq!(
            Status::open("In-Progress").unwrap().status().as_str(),
            "in-progress"
        );
        assert_eq!(Status::open("DONE"), Err(StatusError::DoneNeedsTheGate));
        assert_eq!(Status::open(" done "), Err(StatusError::DoneNeedsTheGate));
        for bad in ["", "1x", "a b", "x/y", "é", &"a".repeat(41)] {
            assert!(
                matches!(Status::open(bad), Err(StatusError::Invalid(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn records_changes_in_the_ledger_and_rewrites_the_view() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        let ctx = ChangeContext {
            user: "ada",
            run_id: None,
            time: "t".into(),
        };
        assert_eq!(current_status(&state, &wbs).unwrap().as_str(), "todo");
        let open = |s| StatusChange::To(Status::open(s).unwrap());
        let lock = DataLock::acquire(&state, &wbs).unwrap();
        record_change(&lock, &state, open("in-progress"), &ctx).unwrap();
        let record = record_change(&lock, &state, open("in-progress"), &ctx).unwrap();
        assert_eq!(record.history.len(), 1);
        assert_eq!(record.history[0].from.as_str(), "todo");
        assert_eq!(record.history[0].via, ChangeVia::Update);
        assert_eq!(load(&state, &wbs).unwrap(), record);
        assert_eq!(read_view(&state, &wbs), View::Record(record));
    }

    #[test]
    fn a_view_is_never_the_status() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        std::fs::create_dir_all(state.tasks_dir()).unwrap();
        std::fs::write(
            state.task_path(&wbs),
            r#"{"wbs":"T1","status":"done","history":[]}"#,
        )
        .unwrap();
        assert_eq!(current_status(&state, &wbs).unwrap().as_str(), "todo");
        std::fs::write(state.task_path(&wbs), "{\"status\": 3}").unwrap();
        assert_eq!(current_status(&state, &wbs).unwrap().as_str(), "todo");
    }

    #[test]
    fn a_broken_ledger_is_an_error_not_a_status() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        std::fs::create_dir_all(state.task_ledgers_dir()).unwrap();
        std::fs::write(state.task_ledger_path(&wbs), "{\"status\": 3}\n").unwrap();
        assert!(matches!(
            current_status(&state, &wbs),
            Err(TaskError::Ledger(LedgerError::Broken { .. }))
        ));
    }
}
