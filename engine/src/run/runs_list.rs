//! `spur runs` and `spur trace`: what the runs of a state directory look like, read from
//! their journals (newest first; a run id sorts by start time).

use serde::Serialize;

use super::journal::{self, Event, JournalContent, JournalError, Record};
use super::replay;
use super::run_id::RunId;
use crate::cost::UsageTotal;
use crate::graph::RunPath;
use crate::store::chain_key::key_for_reading;
use crate::store::state_dir::StateDir;

/// One line of `spur runs`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// The run's id.
    pub run_id: String,
    /// The pipeline's name.
    pub pipeline: String,
    /// The run's task, if any.
    pub wbs: Option<String>,
    /// `done`, `completed`, `failed`, `paused`, `interrupted` or `running` (no end
    /// recorded: in progress, or crashed).
    pub outcome: String,
    /// The state it is in (or ended in); none before the first state was entered.
    pub state: Option<String>,
    /// What stopped it (`action-failed`, `done-gate-denied`, `terminal-state`, …; `paused`,
    /// `interrupted`); none while it runs.
    pub reason: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// What its steps spent.
    pub usage: UsageTotal,
    /// `spur run --worktree`: its worktree and branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<super::git_worktree::WorktreeRecord>,
}

/// What a run's steps spent, from their `action-finished` records.
pub fn run_usage(records: &[Record]) -> UsageTotal {
    records
        .iter()
        .filter_map(|r| match &r.event {
            Event::ActionFinished { usage, .. } => usage.clone(),
            _ => None,
        })
        .collect()
}

/// Every run under `state_dir`, newest first. Unreadable journals are skipped.
pub fn list_runs(state_dir: &StateDir) -> Vec<RunSummary> {
    let Ok(entries) = std::fs::read_dir(state_dir.runs_dir()) else {
        return Vec::new();
    };
    let ids: Vec<RunId> = entries
        .filter_map(Result::ok)
        .filter_map(|e| RunId::parse(&e.file_name().to_string_lossy()).ok())
        .collect();
    let mut runs: Vec<RunSummary> = ids
        .iter()
        .filter_map(|id| summary(state_dir, id).ok())
        .collect();
    // Start time to the millisecond, then the id: newest first even within one second.
    runs.sort_by(|a, b| (&b.started_at, &b.run_id).cmp(&(&a.started_at, &a.run_id)));
    runs
}

/// Why a run reference (`spur continue RUN`, `spur trace RUN`, …) names no one run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunRefError {
    /// No run id starts with it (or, for `latest`, there is no run at all).
    #[error("no run {reference:?} in {state_dir}")]
    Unknown {
        /// What was given.
        reference: String,
        /// The state directory searched.
        state_dir: String,
    },
    /// More than one run id starts with it.
    #[error("{reference:?} is the start of {} run ids: {}", ids.len(), ids.join(", "))]
    Ambiguous {
        /// What was given.
        reference: String,
        /// The ids it starts (newest first).
        ids: Vec<String>,
    },
}

crate::diagnostic::coded_diagnostic! {
    RunRefError {
        Self::Unknown { .. } => crate::diagnostic::Code::RunRefUnknown,
            help("give a run id, a unique start of one, or `latest`; `spur runs` lists the runs of this state directory");
        Self::Ambiguous { .. } => crate::diagnostic::Code::RunRefAmbiguous,
            help("give more of the id");
    }
}

/// The run `reference` names: `latest` (the newest run), a whole run id, or the start of
/// exactly one run id of `state_dir`.
pub fn resolve_ref(state_dir: &StateDir, reference: &str) -> Result<RunId, RunRefError> {
    let unknown = || RunRefError::Unknown {
        reference: reference.to_owned(),
        state_dir: state_dir.root().display().to_string(),
    };
    if reference == "latest" {
        return list_runs(state_dir)
            .into_iter()
            .find_map(|r| RunId::parse(&r.run_id).ok())
            .ok_or_else(unknown);
    }
    if let Ok(id) = RunId::parse(reference) {
        return Ok(id);
    }
    let mut ids: Vec<RunId> = std::fs::read_dir(state_dir.runs_dir())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| RunId::parse(&e.file_name().to_string_lossy()).ok())
                .filter(|id| !reference.is_empty() && id.as_str().starts_with(reference))
                .collect()
        })
        .unwrap_or_default();
    ids.sort_by(|a, b| b.cmp(a));
    match ids.len() {
        0 => Err(unknown()),
        1 => Ok(ids.remove(0)),
        _ => Err(RunRefError::Ambiguous {
            reference: reference.to_owned(),
            ids: ids.iter().map(ToString::to_string).collect(),
        }),
    }
}

/// The summary of one run.
pub(crate) fn summary(state_dir: &StateDir, id: &RunId) -> Result<RunSummary, JournalError> {
    let records = trace(state_dir, id)?;
    summary_of(id, &records).ok_or_else(|| JournalError::NoStart {
        path: journal_path(state_dir, id),
    })
}

/// What a drawing of the run shows over its pipeline: the transitions it took and the
/// state it is in, or ended in (`spur graph RUN --format svg`, `spur ui`). `None` when the
/// records do not start with `run-started`.
pub fn run_path(records: &[Record]) -> Option<RunPath> {
    let p = replay::replay(records)?;
    Some(RunPath {
        taken: p.transitions.iter().map(|t| t.transition).collect(),
        current: p.finished.map(|f| f.state).or(p.state),
    })
}

/// The summary of the run `id` whose journal holds `records`; `None` when they do not
/// start with `run-started`.
pub fn summary_of(id: &RunId, records: &[Record]) -> Option<RunSummary> {
    let p = replay::replay(records)?;
    let (outcome, reason) = match (&p.finished, &p.paused, p.interrupted) {
        (Some(f), _, _) => (f.outcome.as_str(), Some(f.reason.as_str())),
        (None, Some(_), _) => ("paused", Some("paused")),
        (None, None, true) => ("interrupted", Some("interrupted")),
        (None, None, false) => ("running", None),
    };
    let (outcome, reason) = (outcome.to_owned(), reason.map(str::to_owned));
    Some(RunSummary {
        run_id: id.to_string(),
        pipeline: p.pipeline_name,
        wbs: p.wbs,
        outcome,
        state: p.finished.map(|f| f.state).or(p.state),
        reason,
        started_at: p.started_at,
        usage: run_usage(records),
        worktree: p.worktree,
    })
}

/// The journal records of one run (a torn last line is left out).
pub fn trace(state_dir: &StateDir, id: &RunId) -> Result<Vec<Record>, JournalError> {
    Ok(read_run(state_dir, id)?.records)
}

/// The journal of one run, read and checked with the key: its records, and whether they
/// are sealed and verified (a journal whose seals cannot be checked still reads).
pub fn read_run(state_dir: &StateDir, id: &RunId) -> Result<JournalContent, JournalError> {
    journal::read(&journal_path(state_dir, id), &key_for_reading(state_dir))
}

pub(crate) fn journal_path(state_dir: &StateDir, id: &RunId) -> std::path::PathBuf {
    state_dir.runs_dir().join(id.as_str()).join("journal.jsonl")
}

/// The event names of a trace, for quick summaries.
pub fn event_names(records: &[Record]) -> Vec<&'static str> {
    records.iter().map(|r| Event::name(&r.event)).collect()
}
