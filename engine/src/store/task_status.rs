//! Task status (`.spur/tasks/<wbs>.json`): the current status and the history of every
//! change — when, by whom, and how (a plain update, the done gate's PASS, a forced override).
//!
//! Any status may be written freely except `done`: that one is written only from a
//! [`Done`] token, which only the done gate can make.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diagnostic::{coded_diagnostic, Code};
use crate::done_gate::{Done, DoneVia};
use crate::store::atomic_file::write_atomic;
use crate::store::audit::AuditAnchor;
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::file_lock::FileLock;
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// A task status: lower-case, `^[a-z][a-z0-9-]*$`, at most 40 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Status(String);

/// The most of a task record that is read: a few hundred bytes per status change.
pub const MAX_TASK_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// The status of a task with no record yet.
pub const INITIAL_STATUS: &str = "todo";
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

    pub fn initial() -> Status {
        Status(INITIAL_STATUS.to_owned())
    }

    pub fn is_done(&self) -> bool {
        self.0 == DONE
    }

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
    #[error("invalid status {0:?}")]
    Invalid(String),
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

/// How a status change was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "kebab-case")]
pub enum ChangeVia {
    /// `spur task update` to a status other than done.
    Update,
    /// The done gate allowed it: the verdict was a self-consistent PASS.
    DoneGatePass,
    /// `--force-done --reason`: recorded in the audit log first.
    ForcedOverride {
        reason: String,
        #[serde(rename = "auditHash")]
        audit_hash: String,
    },
}

/// One change in a task's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// RFC 3339 UTC.
    pub time: String,
    pub from: Status,
    pub to: Status,
    pub via: ChangeVia,
    pub user: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// A task's status record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub wbs: String,
    pub status: Status,
    pub history: Vec<HistoryEntry>,
}

/// The change to make.
#[derive(Debug)]
pub enum StatusChange<'a> {
    /// Any status but done.
    To(OpenStatus),
    /// Done, as certified by the gate.
    Done(&'a Done),
}

/// Who and when, for the history.
#[derive(Debug, Clone)]
pub struct ChangeContext<'a> {
    pub user: &'a str,
    pub run_id: Option<&'a str>,
    pub time: String,
}

/// Why a task record could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("could not read task status {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("task status {path} is not a valid task record: {problem}")]
    Corrupt { path: String, problem: String },
    #[error("could not write task status {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

coded_diagnostic! {
    TaskError {
        Self::Read { .. } => Code::TaskReadFailed;
        Self::Corrupt { .. } => Code::TaskCorruptRecord,
            help("fix or remove the file; its history is the record of how the task's status changed");
        Self::Write { .. } => Code::TaskWriteFailed;
    }
}

/// The record of `wbs`, or `None` when it has none yet.
pub fn load(state_dir: &StateDir, wbs: &Wbs) -> Result<Option<TaskRecord>, TaskError> {
    read_record(&state_dir.task_path(wbs))
}

/// The current status of `wbs` (`todo` when it has no record).
pub fn current_status(state_dir: &StateDir, wbs: &Wbs) -> Result<Status, TaskError> {
    Ok(load(state_dir, wbs)?.map_or_else(Status::initial, |r| r.status))
}

fn read_record(path: &Path) -> Result<Option<TaskRecord>, TaskError> {
    let bytes = match read_bounded(path, MAX_TASK_RECORD_BYTES) {
        Ok(b) => b,
        Err(ReadError::Missing) => return Ok(None),
        Err(e) => {
            return Err(TaskError::Read {
                path: path.display().to_string(),
                source: e.into(),
            })
        }
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| TaskError::Corrupt {
            path: path.display().to_string(),
            problem: e.to_string(),
        })
}

/// Apply `change` to the record of `wbs` atomically (under a per-task lock, so concurrent
/// updates never lose a history entry). A change to the current status records nothing
/// and returns the record unchanged.
pub fn record_change(
    state_dir: &StateDir,
    wbs: &Wbs,
    change: StatusChange<'_>,
    context: &ChangeContext<'_>,
) -> Result<TaskRecord, TaskError> {
    let path = state_dir.task_path(wbs);
    let write_err = |source| TaskError::Write {
        path: path.display().to_string(),
        source,
    };
    let lock_path = path.with_file_name(format!(".{wbs}.lock"));
    let _lock = FileLock::exclusive(&lock_path).map_err(write_err)?;
    let mut record = read_record(&path)?.unwrap_or_else(|| TaskRecord {
        wbs: wbs.to_string(),
        status: Status::initial(),
        history: Vec::new(),
    });
    let (to, via) = match change {
        StatusChange::To(OpenStatus(status)) => (status, ChangeVia::Update),
        StatusChange::Done(done) => (
            Status::done(done),
            match done.via() {
                DoneVia::Pass => ChangeVia::DoneGatePass,
                DoneVia::Forced { reason, audit_hash } => ChangeVia::ForcedOverride {
                    reason: reason.clone(),
                    audit_hash: audit_hash.clone(),
                },
            },
        ),
    };
    if to == record.status {
        return Ok(record);
    }
    record.history.push(HistoryEntry {
        time: context.time.clone(),
        from: record.status.clone(),
        to: to.clone(),
        via,
        user: context.user.to_owned(),
        run_id: context.run_id.map(str::to_owned),
    });
    record.status = to;
    let mut text =
        serde_json::to_string_pretty(&record).map_err(|e| write_err(std::io::Error::other(e)))?;
    text.push('\n');
    write_atomic(&path, text.as_bytes()).map_err(write_err)?;
    Ok(record)
}

/// Every forced override recorded in any task's history, for cross-checking the audit log
/// (a record removed from the end of the log leaves a valid chain, but not a valid anchor).
/// Records that cannot be read are skipped: `spur task show` reports them.
pub fn audit_anchors(state_dir: &StateDir) -> Vec<AuditAnchor> {
    let Ok(entries) = std::fs::read_dir(state_dir.root().join("tasks")) else {
        return Vec::new();
    };
    let mut anchors = Vec::new();
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let Ok(Some(record)) = read_record(&path) else {
            continue;
        };
        for entry in &record.history {
            if let ChangeVia::ForcedOverride { audit_hash, .. } = &entry.via {
                anchors.push(AuditAnchor {
                    wbs: record.wbs.clone(),
                    time: entry.time.clone(),
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
    fn records_changes_with_history_and_skips_no_ops() {
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
        record_change(&state, &wbs, open("in-progress"), &ctx).unwrap();
        let record = record_change(&state, &wbs, open("in-progress"), &ctx).unwrap();
        assert_eq!(record.history.len(), 1);
        assert_eq!(record.history[0].from.as_str(), "todo");
        assert_eq!(record.history[0].via, ChangeVia::Update);
        assert_eq!(load(&state, &wbs).unwrap(), Some(record));
    }

    #[test]
    fn a_corrupt_record_is_an_error_not_a_reset() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        std::fs::create_dir_all(dir.path().join(".spur/tasks")).unwrap();
        std::fs::write(state.task_path(&wbs), "{\"status\": 3}").unwrap();
        assert!(matches!(
            current_status(&state, &wbs),
            Err(TaskError::Corrupt { .. })
        ));
    }

    #[test]
    fn a_fifo_as_the_record_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        let wbs = Wbs::parse("T1").unwrap();
        std::fs::create_dir_all(dir.path().join(".spur/tasks")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(state.task_path(&wbs))
            .status()
            .unwrap();
        assert!(made.success());
        let err = current_status(&state, &wbs).unwrap_err();
        assert!(err.to_string().contains("it is a FIFO"), "{err}");
    }
}
