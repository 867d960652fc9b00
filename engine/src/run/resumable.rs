//! Whether a journaled run may go on, judged before anything runs: its journal is of this
//! format (sealed with a key), unbroken and verified with the key, every record fits the run before it and the pipeline, the run is
//! not finished, its pipeline text is the one it started with (unless allowed), an hitl
//! pause gets a valid answer and only a pause gets one, a force applies to a run with a
//! task, and an action that started and never finished runs again only when asked to.

use std::path::PathBuf;

use super::actions::HitlQuestion;
use super::host::RunHost;
use super::journal::{self, Event, JournalContent, JournalError, JournalFormat, PauseKind, Phase};
use super::plan::{render_ctx, Plan};
use super::replay::{self, Position};
use super::replay_check::{replay_checked, Against};
use super::run_error::RunError;
use super::run_id::RunId;
use super::runner::{ResumeRequest, RunSettings};
use crate::pipeline::Pipeline;
use crate::store::chain_key::key_for_reading;
use crate::store::digest::sha256_hex;
use crate::store::state_dir::StateDir;
use crate::wbs::Wbs;

/// A run that may go on, with the task lock held.
pub(super) struct Resumable {
    /// The journal as read under the lock: the one the run continues.
    pub(super) content: JournalContent,
    pub(super) position: Position,
    pub(super) plan: Plan,
    /// The index of the state the run stands in.
    pub(super) state: usize,
    pub(super) wbs: Option<Wbs>,
}

/// How the run is to go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GoOn {
    /// `spur continue`: a paused, interrupted or crashed run, from where it stopped.
    Continue,
    /// `spur retry`: a failed run, re-entering the state a retry goes on from.
    Retry,
}

/// Read the run's journal, take its task lock, and check that it may go on.
pub(super) fn check(
    request: &ResumeRequest<'_>,
    mode: GoOn,
    settings: &RunSettings,
    host: &mut dyn RunHost,
) -> Result<Resumable, RunError> {
    let pipeline = request.pipeline.pipeline();
    let run_id = &request.run_id;
    let run_dir = run_id.dir_in(&settings.state_dir);
    // Take the task lock before judging the journal: a run still in progress holds it (its
    // unfinished action is running, not ambiguous), and the journal read after the lock is
    // the one we continue.
    let no_start = || {
        RunError::Journal(JournalError::NoStart {
            path: run_dir.join("journal.jsonl"),
        })
    };
    let first = host.read_journal(run_id)?;
    let wbs = replay::replay(&first.records)
        .ok_or_else(no_start)?
        .wbs
        .as_deref()
        .map(Wbs::parse)
        .transpose()?;
    if let Some(w) = &wbs {
        host.lock_task(w, run_id)?;
    }
    let content = host.read_journal(run_id)?;
    match content.format {
        JournalFormat::Unversioned => {
            return Err(RunError::OlderJournal {
                run_id: run_id.to_string(),
            })
        }
        JournalFormat::Unkeyed => {
            return Err(RunError::UnkeyedJournal {
                run_id: run_id.to_string(),
            })
        }
        JournalFormat::Current => {}
    }
    let content = content.verified(&run_dir.join("journal.jsonl"))?;
    let plan = Plan::new(pipeline)?;
    let recorded_sha = replay::replay(&content.records)
        .ok_or_else(no_start)?
        .pipeline_sha256;
    let unchanged = recorded_sha == sha256_hex(pipeline.source.text().as_bytes());
    let against = if unchanged {
        Against::Pipeline(pipeline, &plan)
    } else {
        Against::Themselves
    };
    let position =
        replay_checked(&content.records, against, run_id.as_str())?.ok_or_else(no_start)?;
    // Before anything is decided or re-run: no process of this run's actions is left.
    super::left_groups::kill(&content.records);
    // A lifecycle instance's journal is moved by `spur lifecycle request`, never resumed
    // as a run (a step may have copied one under `<protected>/runs/`).
    if let Some(entity) = &position.lifecycle {
        return Err(RunError::DoesNotFit(super::replay_check::RecordDoesNotFit {
            run_id: run_id.to_string(),
            seq: 2,
            event: "lifecycle-bound",
            what: format!(
                "it is the journal of {entity}'s lifecycle instance, not of a run: `spur lifecycle request` moves it"
            ),
        }));
    }
    if mode == GoOn::Retry {
        return retryable(request, content, position, plan, wbs, unchanged);
    }
    if let Some(f) = &position.finished {
        return Err(RunError::AlreadyFinished {
            run_id: run_id.to_string(),
            outcome: f.outcome,
            state: f.state.clone(),
        });
    }
    if !unchanged && !request.allow_changed_pipeline {
        return Err(RunError::PipelineChanged {
            run_id: run_id.to_string(),
            path: position.pipeline.clone(),
        });
    }
    let state_id = match &position.state {
        Some(s) => s.clone(),
        None => pipeline.initial_state.value.clone(),
    };
    let state = plan
        .graph
        .state_index(&state_id)
        .ok_or_else(|| RunError::UnknownState(state_id.clone()))?;
    let at = Stop {
        pipeline,
        plan: &plan,
        position: &position,
        run_id,
        state,
        state_id: &state_id,
    };
    if request.force_done_reason.is_some() && wbs.is_none() {
        return Err(RunError::ForceWithoutTask);
    }
    at.check_answer(request.answer.as_deref())?;
    if !request.rerun_ambiguous {
        at.check_ambiguous(&run_dir)?;
    }
    Ok(Resumable {
        content,
        position,
        plan,
        state,
        wbs,
    })
}

/// A failed run that `spur retry` may take up again: the state it re-enters.
fn retryable(
    request: &ResumeRequest<'_>,
    content: JournalContent,
    position: Position,
    plan: Plan,
    wbs: Option<Wbs>,
    unchanged: bool,
) -> Result<Resumable, RunError> {
    let pipeline = request.pipeline.pipeline();
    let run_id = request.run_id.to_string();
    let state_id = super::retry::retry_state(&position, Some(pipeline)).map_err(|why| {
        RunError::NotRetryable {
            run_id: run_id.clone(),
            why,
        }
    })?;
    if !unchanged && !request.allow_changed_pipeline {
        return Err(RunError::PipelineChanged {
            run_id,
            path: position.pipeline.clone(),
        });
    }
    if request.force_done_reason.is_some() && wbs.is_none() {
        return Err(RunError::ForceWithoutTask);
    }
    let state = plan
        .graph
        .state_index(&state_id)
        .ok_or_else(|| RunError::UnknownState(state_id.clone()))?;
    Ok(Resumable {
        content,
        position,
        plan,
        state,
        wbs,
    })
}

/// Where the journal stopped.
struct Stop<'a> {
    pipeline: &'a Pipeline,
    plan: &'a Plan,
    position: &'a Position,
    run_id: &'a RunId,
    state: usize,
    state_id: &'a str,
}

impl Stop<'_> {
    /// What kind of stop are we resuming from, and is the answer right for it?
    fn check_answer(&self, answer: Option<&str>) -> Result<(), RunError> {
        let (pipeline, position, run_id) = (self.pipeline, self.position, self.run_id);
        let awaiting = position
            .paused
            .as_ref()
            .filter(|(kind, _, _)| *kind == PauseKind::Hitl)
            .and_then(|(_, action, _)| *action);
        if let Some(index) = awaiting {
            let question = pipeline
                .states
                .get(self.state)
                .and_then(|s| s.on_enter.get(index))
                .map(|a| {
                    HitlQuestion::of(
                        &a.kind.value,
                        &render_ctx(
                            pipeline,
                            &position.vars,
                            run_id.as_str(),
                            self.state_id,
                            position.iteration,
                            &self.plan.env_allow,
                        ),
                    )
                });
            let question = match question {
                Some(Ok(q)) => q,
                _ => HitlQuestion::confirm(None),
            };
            match answer {
                None => {
                    return Err(RunError::AnswerRequired {
                        run_id: run_id.to_string(),
                        choices: question.shown_choices(", "),
                        prompt: question.prompt,
                    })
                }
                Some(a) if !question.accepts(a) => {
                    return Err(RunError::AnswerInvalid {
                        answer: a.to_owned(),
                        choices: question.shown_choices(", "),
                        prompt: question.prompt,
                    })
                }
                Some(_) => {}
            }
        } else if answer.is_some() && position.paused.is_none() {
            return Err(RunError::AnswerUnexpected(run_id.to_string()));
        }
        Ok(())
    }

    /// An action that started and never finished may or may not have run: refuse.
    fn check_ambiguous(&self, run_dir: &std::path::Path) -> Result<(), RunError> {
        let Some((phase, index)) = self.position.ambiguous() else {
            return Ok(());
        };
        let kind = self
            .pipeline
            .states
            .get(self.state)
            .and_then(|s| match phase {
                Phase::Enter => s.on_enter.get(index),
                Phase::Exit => s.on_exit.get(index),
            })
            .map(|a| a.kind.value.to_string())
            .unwrap_or_default();
        Err(RunError::Ambiguous {
            run_id: self.run_id.to_string(),
            state: self.state_id.to_owned(),
            index,
            kind,
            log: run_dir.join("actions").display().to_string(),
        })
    }
}

/// The pipeline file a run was started with (from its journal's `run-started`).
pub fn recorded_pipeline(state_dir: &StateDir, run_id: &RunId) -> Result<PathBuf, RunError> {
    let path = run_id.dir_in(state_dir).join("journal.jsonl");
    if !path.exists() {
        return Err(RunError::RunNotFound(
            run_id.to_string(),
            state_dir.root().display().to_string(),
        ));
    }
    let content = journal::read(&path, &key_for_reading(state_dir))?;
    match content.format {
        JournalFormat::Unversioned => {
            return Err(RunError::OlderJournal {
                run_id: run_id.to_string(),
            })
        }
        JournalFormat::Unkeyed => {
            return Err(RunError::UnkeyedJournal {
                run_id: run_id.to_string(),
            })
        }
        JournalFormat::Current => {}
    }
    match content.records.first().map(|r| &r.event) {
        Some(Event::RunStarted { pipeline, .. }) => Ok(PathBuf::from(pipeline)),
        _ => Err(RunError::Journal(JournalError::NoStart { path })),
    }
}
