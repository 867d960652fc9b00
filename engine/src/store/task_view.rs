//! The task view `.spur/tasks/<wbs>.json` (`{wbs, status, history}`): the task's status as
//! tools and people read it, rewritten (atomically) from the task ledger after every
//! append. spur never takes a status from it; it only compares it with the ledger.

use std::io;

use serde::{Deserialize, Serialize};

use crate::done_gate::AllowReason;
use crate::store::atomic_file::write_atomic;
use crate::store::bounded_read::{read_bounded, ReadError};
use crate::store::state_dir::StateDir;
use crate::store::task_ledger::{LedgerRecord, StatusRecord};
use crate::store::task_status::Status;
use crate::wbs::Wbs;

/// The most of a view that is read: a few hundred bytes per status change.
pub(crate) const MAX_TASK_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// How a status change was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "kebab-case")]
pub enum ChangeVia {
    /// `spur task update` to a status other than done.
    Update,
    /// The done gate allowed it: the verdict was a self-consistent PASS.
    DoneGatePass,
    /// The done gate allowed a self-consistent PASS in an artifact written or edited
    /// outside spur (`doneGate.externalVerdicts: allow`).
    DoneGateExternal,
    /// `--force-done --reason`: recorded in the audit log first.
    ForcedOverride {
        /// The `--reason`.
        reason: String,
        /// The hash of the audit record that authorised it.
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
    /// The status before.
    pub from: Status,
    /// The status after.
    pub to: Status,
    /// How the change was made.
    pub via: ChangeVia,
    /// Who made it.
    pub user: String,
    /// The run that made it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// A task's status record: the shape of the view, derived from the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task.
    pub(crate) wbs: String,
    /// Its status.
    pub status: Status,
    /// Every change, oldest first.
    pub history: Vec<HistoryEntry>,
}

impl TaskRecord {
    /// The record of `wbs` that its ledger `records` say: its `status` records (the other
    /// kinds are no status change).
    pub fn from_ledger(wbs: &Wbs, records: &[LedgerRecord]) -> Self {
        let history: Vec<HistoryEntry> = records
            .iter()
            .filter_map(|r| Some(history_entry(r, r.status()?)))
            .collect();
        Self {
            wbs: wbs.to_string(),
            status: history
                .last()
                .map_or_else(Status::initial, |h| h.to.clone()),
            history,
        }
    }
}

fn history_entry(record: &LedgerRecord, change: &StatusRecord) -> HistoryEntry {
    let via = match &change.gate {
        None => ChangeVia::Update,
        Some(gate) if gate.reason == AllowReason::Pass => ChangeVia::DoneGatePass,
        Some(gate) if gate.reason == AllowReason::External => ChangeVia::DoneGateExternal,
        Some(gate) => ChangeVia::ForcedOverride {
            reason: gate.force_reason.clone().unwrap_or_default(),
            audit_hash: change.audit_hash.clone().unwrap_or_default(),
        },
    };
    HistoryEntry {
        time: record.at.clone(),
        from: change.from.clone(),
        to: change.to.clone(),
        via,
        user: record.user.clone(),
        run_id: record.run.clone(),
    }
}

/// What is at a task's view path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum View {
    /// No view.
    Missing,
    /// A well-formed task record (whatever it says).
    Record(TaskRecord),
    /// Something that is not a task record, and why.
    Unreadable(String),
}

impl View {
    /// The status the view claims, if it is a record.
    pub(crate) fn status(&self) -> Option<&Status> {
        match self {
            View::Record(record) => Some(&record.status),
            View::Missing | View::Unreadable(_) => None,
        }
    }
}

/// Read the view of `wbs`, through the bounded reader (a step may have put anything there).
pub(crate) fn read_view(state_dir: &StateDir, wbs: &Wbs) -> View {
    match read_bounded(&state_dir.task_path(wbs), MAX_TASK_RECORD_BYTES) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(record) => View::Record(record),
            Err(e) => View::Unreadable(format!("it is not a task record: {e}")),
        },
        Err(ReadError::Missing) => View::Missing,
        Err(e) => View::Unreadable(format!("it cannot be read: {e}")),
    }
}

/// Replace the view of `wbs` with `record`, atomically.
pub(crate) fn write_view(state_dir: &StateDir, wbs: &Wbs, record: &TaskRecord) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(record).map_err(io::Error::other)?;
    text.push('\n');
    write_atomic(&state_dir.task_path(wbs), text.as_bytes())
}

/// The tasks that have a view (`.spur/tasks/<wbs>.json`), sorted.
pub(crate) fn viewed_tasks(state_dir: &StateDir) -> Vec<Wbs> {
    let Ok(entries) = std::fs::read_dir(state_dir.tasks_dir()) else {
        return Vec::new();
    };
    let mut tasks: Vec<Wbs> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let stem = name.to_str()?.strip_suffix(".json")?.to_owned();
            Wbs::parse(&stem).ok()
        })
        .collect();
    tasks.sort();
    tasks
}
