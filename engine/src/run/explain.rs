//! Why a run failed, read back from its journal for people: what the pipeline says about
//! the way it failed (the `description` of the transition into the failure state, or of the
//! state it stopped in), the guards that did not pass and why, the actions that failed or
//! exited non-zero with their logs' last lines, the done gate's denial, and where
//! `spur retry` goes on from.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::journal::{Event, Phase, Record};
use super::outcome::{Outcome, StopReason};
use super::replay;
use crate::done_gate::GateDecision;
use crate::pipeline::Pipeline;

/// How many of a log's last lines are shown, and how much of its end is read for them.
const TAIL_LINES: usize = 8;
const TAIL_BYTES: u64 = 8 * 1024;
/// A shown log line is cut after this many characters.
const LINE_CHARS: usize = 200;

/// Why a run failed, for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureExplanation {
    /// The state whose visit failed: the one the run stopped in, or the one it left for a
    /// failure state.
    pub state: String,
    /// The pipeline's words for this way of failing: the `description` of the transition
    /// into the failure state, else of the state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where `description` comes from (`transition precheck → failed`, `state test`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description_of: Option<String>,
    /// The guards of that visit that did not pass.
    pub guards: Vec<GuardNotPassed>,
    /// The actions of that visit that failed or exited non-zero.
    pub actions: Vec<ActionTrouble>,
    /// The done gate's denial, when it denied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_gate: Option<String>,
    /// The state `spur retry` goes on from, when the run can be retried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_from: Option<String>,
}

/// A guard that did not pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardNotPassed {
    /// The transition's target.
    pub to: String,
    /// The guard's kind.
    pub kind: String,
    /// Why, as the guard said it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// An action that failed, or that exited non-zero (a soft-failing gate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionTrouble {
    /// `onEnter` or `onExit`.
    pub phase: Phase,
    /// Its position in the list.
    pub index: usize,
    /// Its kind.
    pub kind: String,
    /// Whether the run counted it as failed.
    pub ok: bool,
    /// Its error, or its message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Its exit code, when it exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Its log file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<PathBuf>,
    /// The log's last lines (control characters shown as `?`).
    pub tail: Vec<String>,
}

/// Why the run whose journal is `records` failed; `None` unless it ended failed.
/// `run_dir` is the run's directory (its logs), `pipeline` the pipeline it ran.
pub fn explain(
    records: &[Record],
    pipeline: &Pipeline,
    run_dir: &Path,
) -> Option<FailureExplanation> {
    let position = replay::replay(records)?;
    let finished = position.finished.clone()?;
    if finished.outcome != Outcome::Failed {
        return None;
    }
    // The visits: each starts at a transition or a retry (the first at the start).
    let mut starts = vec![0];
    for (i, r) in records.iter().enumerate() {
        if matches!(r.event, Event::Transition { .. } | Event::Retried { .. }) {
            starts.push(i);
        }
    }
    let last_start = starts.last().copied().unwrap_or(0);
    let into_failure_state = finished.reason == StopReason::FailureState;
    // A failure state has nothing of its own to show: the visit before it does.
    let (visit, state, description_of, description) = match records.get(last_start) {
        Some(Record {
            event:
                Event::Transition {
                    transition,
                    from,
                    to,
                    ..
                },
            ..
        }) if into_failure_state => {
            let before = starts.iter().rev().nth(1).copied().unwrap_or(0);
            let said = pipeline
                .transitions
                .get(*transition)
                .filter(|t| t.from.value == *from && t.to.value == *to)
                .and_then(|t| t.description.as_ref())
                .map(|d| (format!("transition {from} → {to}"), d.value.clone()))
                .or_else(|| state_description(pipeline, to));
            (
                records.get(before..last_start).unwrap_or_default(),
                from.clone(),
                said.as_ref().map(|(of, _)| of.clone()),
                said.map(|(_, d)| d),
            )
        }
        _ => {
            let said = state_description(pipeline, &finished.state);
            (
                records.get(last_start..).unwrap_or_default(),
                finished.state.clone(),
                said.as_ref().map(|(of, _)| of.clone()),
                said.map(|(_, d)| d),
            )
        }
    };
    let guards = visit
        .iter()
        .filter_map(|r| match &r.event {
            Event::GuardEvaluated {
                to,
                kind,
                passed: false,
                detail,
                ..
            } => Some(GuardNotPassed {
                to: to.clone(),
                kind: kind.clone(),
                reason: detail.clone(),
            }),
            _ => None,
        })
        .collect();
    let actions = troubled_actions(visit, run_dir);
    let done_gate = visit.iter().rev().find_map(|r| match &r.event {
        Event::DoneGate {
            decision: GateDecision::Deny,
            message,
            ..
        } => Some(message.clone().unwrap_or_else(|| "denied".to_owned())),
        _ => None,
    });
    Some(FailureExplanation {
        state,
        description: description.map(|d| d.trim().to_owned()),
        description_of,
        guards,
        actions,
        done_gate,
        retry_from: super::retry::retry_state(&position, Some(pipeline)).ok(),
    })
}

fn state_description(pipeline: &Pipeline, state: &str) -> Option<(String, String)> {
    pipeline
        .state(state)
        .and_then(|s| s.description.as_ref())
        .map(|d| (format!("state {state}"), d.value.clone()))
}

/// The actions of `visit` that failed or exited non-zero, each with its log's last lines.
fn troubled_actions(visit: &[Record], run_dir: &Path) -> Vec<ActionTrouble> {
    let mut logs: Vec<((Phase, usize), Option<String>)> = Vec::new();
    let mut out = Vec::new();
    for r in visit {
        match &r.event {
            Event::ActionStarted {
                phase, index, log, ..
            } => logs.push(((*phase, *index), log.clone())),
            Event::ActionFinished {
                phase,
                index,
                kind,
                ok,
                error,
                exit_code,
                message,
                ..
            } if !ok || exit_code.is_some_and(|c| c != 0) => {
                let log = logs
                    .iter()
                    .rev()
                    .find(|(at, _)| *at == (*phase, *index))
                    .and_then(|(_, log)| log.as_deref())
                    .filter(|log| inside(Path::new(log)))
                    .map(|log| run_dir.join(log));
                let tail = log.as_deref().map(tail).unwrap_or_default();
                out.push(ActionTrouble {
                    phase: *phase,
                    index: *index,
                    kind: kind.clone(),
                    ok: *ok,
                    message: error.clone().or_else(|| message.clone()),
                    exit_code: *exit_code,
                    log,
                    tail,
                });
            }
            _ => {}
        }
    }
    out
}

/// A log path the run could have written: relative, and never up out of the run directory.
fn inside(log: &Path) -> bool {
    log.components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// The last lines of the log at `path` (a regular file; nothing otherwise), read from its
/// last few KiB, with control characters shown as `?` and long lines cut.
fn tail(path: &Path) -> Vec<String> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Vec::new();
    };
    if !meta.is_file() {
        return Vec::new();
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let from = meta.len().saturating_sub(TAIL_BYTES);
    if file.seek(SeekFrom::Start(from)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(TAIL_BYTES).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A read from the middle of the file starts mid-line: drop that part line.
    if from > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let lines: Vec<String> = lines
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .map(shown_line)
        .collect();
    let skip = lines.len().saturating_sub(TAIL_LINES);
    lines.into_iter().skip(skip).collect()
}

fn shown_line(line: &str) -> String {
    let mut shown: String = line
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .take(LINE_CHARS)
        .collect();
    if line.chars().count() > LINE_CHARS {
        shown.push('…');
    }
    shown
}
