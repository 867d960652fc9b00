//! Replay: rebuild where a run stands from its journal, so `spur continue` (or a resume
//! after a crash) picks up exactly there. Committed transitions are never lost or
//! repeated; an action with a start and no finish is reported as ambiguous.

use std::collections::BTreeMap;

use super::journal::{Event, PauseKind, Phase, Record};
use super::outcome::{Outcome, StopReason};
use crate::done_gate::GateDecision;
use crate::pipeline::TerminalReason;

/// A finished action of the current state visit (the vars it set are in
/// [`Position::vars`] from its record on).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FinishedAction {
    pub(crate) ok: bool,
}

/// Progress through one action list (`onEnter` or `onExit`) of the current visit.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SequenceProgress {
    pub(crate) finished: BTreeMap<usize, FinishedAction>,
    /// An action that started and has no finish record: it may or may not have run.
    pub(crate) ambiguous: Option<usize>,
    /// An hitl action waiting for `spur continue --answer`.
    pub(crate) awaiting_answer: Option<usize>,
}

impl SequenceProgress {
    fn start(&mut self, index: usize) {
        self.ambiguous = Some(index);
    }

    fn finish(&mut self, index: usize, action: FinishedAction) {
        if self.ambiguous == Some(index) {
            self.ambiguous = None;
        }
        if self.awaiting_answer == Some(index) {
            self.awaiting_answer = None;
        }
        self.finished.insert(index, action);
    }
}

/// The done-gate decision recorded for the pending transition.
#[derive(Debug, Clone, PartialEq)]
pub struct GateRecord {
    /// `None` when the gate was asked on entering the initial state.
    pub transition: Option<usize>,
    /// What the gate decided.
    pub decision: GateDecision,
    pub(crate) verdict: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) forced: bool,
}

/// How the run ended, when it did.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedRecord {
    /// How the run ended.
    pub outcome: Outcome,
    pub(crate) state: String,
    /// The terminal reason of the ending.
    pub terminal_reason: TerminalReason,
    /// What stopped the run.
    pub reason: StopReason,
    pub(crate) iterations: u32,
}

/// A committed transition.
#[derive(Debug, Clone, PartialEq)]
pub struct CommittedTransition {
    pub(crate) seq: u64,
    /// Index of the transition in the pipeline's `transitions` list.
    pub transition: usize,
    /// The state left.
    pub from: String,
    /// The state entered.
    pub to: String,
}

/// Where a run stands, rebuilt from its journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub(crate) pipeline: String,
    pub(crate) pipeline_name: String,
    pub(crate) pipeline_sha256: String,
    /// The run's task, if any.
    pub wbs: Option<String>,
    /// The entity, when the journal is a lifecycle instance's (`lifecycle-bound`).
    pub lifecycle: Option<String>,
    /// `--force-done --reason`: the reason the run was started with, if forced.
    pub force_done_reason: Option<String>,
    /// The sha256 of the policy the run pinned, if it recorded one.
    pub(crate) policy_sha256: Option<String>,
    /// `spur run --worktree`: the run's worktree, as `run-started` recorded it.
    pub worktree: Option<super::git_worktree::WorktreeRecord>,
    pub(crate) started_at: String,
    /// Vars in effect: the start vars plus every recorded `setVars` (merged at its
    /// `action-finished`, as the run merged it before its next action) and answer.
    pub vars: BTreeMap<String, String>,
    /// The current state; `None` before the initial state was entered.
    pub state: Option<String>,
    pub(crate) iteration: u32,
    pub(crate) enter: SequenceProgress,
    /// onEnter finished (a pause or a guard evaluation followed).
    pub(crate) enter_complete: bool,
    /// The last action's result (for `action-ok`): of this visit, or carried from the
    /// visits before when this one has run none yet.
    pub(crate) last_action_ok: Option<bool>,
    /// The paused record not yet followed by `resumed`.
    pub paused: Option<(PauseKind, Option<usize>, Option<String>)>,
    /// The operator answered during this visit (a `pause: true` state then does not pause
    /// a second time).
    pub(crate) answered_in_visit: bool,
    /// The transition chosen in this visit (the last passing guard), not yet committed.
    pub(crate) chosen: Option<usize>,
    pub(crate) exit: SequenceProgress,
    /// The done gate's decision for the pending transition, if asked.
    pub gate: Option<GateRecord>,
    /// The run was interrupted and nothing has run or resumed since.
    pub interrupted: bool,
    /// How the run ended, when it did.
    pub finished: Option<FinishedRecord>,
    /// The transitions taken, in order.
    pub transitions: Vec<CommittedTransition>,
    /// Transitions taken before the last `spur retry`: the iteration bound counts from here.
    pub(crate) bound_base: u32,
    /// The state the last `retried` re-entered, until the next transition.
    pub(crate) retried_into: Option<String>,
    /// How many times the run was retried.
    pub retries: u32,
    pub(crate) last_seq: u64,
}

impl Position {
    /// The ambiguous action of the current visit, if any.
    pub fn ambiguous(&self) -> Option<(Phase, usize)> {
        if let Some(i) = self.exit.ambiguous {
            return Some((Phase::Exit, i));
        }
        self.enter.ambiguous.map(|i| (Phase::Enter, i))
    }
}

/// Rebuild the position from complete records (the first is `run-started`), taking each
/// record as it is: for showing a run. A resume checks each record first
/// (`super::replay_check`).
pub fn replay(records: &[Record]) -> Option<Position> {
    let (first, rest) = records.split_first()?;
    let mut p = Position::started(first)?;
    for record in rest {
        p.apply(record);
    }
    Some(p)
}

impl Position {
    /// Where a run stands right after its `run-started` record; `None` for another record.
    pub(crate) fn started(first: &Record) -> Option<Self> {
        let Event::RunStarted {
            pipeline,
            pipeline_name,
            pipeline_sha256,
            vars,
            wbs,
            force_done_reason,
            policy_sha256,
            worktree,
        } = &first.event
        else {
            return None;
        };
        Some(Self {
            pipeline: pipeline.clone(),
            pipeline_name: pipeline_name.clone(),
            pipeline_sha256: pipeline_sha256.clone(),
            wbs: wbs.clone(),
            lifecycle: None,
            force_done_reason: force_done_reason.clone(),
            policy_sha256: policy_sha256.clone(),
            worktree: worktree.clone(),
            started_at: first.at.clone(),
            vars: vars.clone(),
            state: None,
            iteration: 0,
            enter: SequenceProgress::default(),
            enter_complete: false,
            last_action_ok: None,
            paused: None,
            answered_in_visit: false,
            chosen: None,
            exit: SequenceProgress::default(),
            gate: None,
            interrupted: false,
            finished: None,
            transitions: Vec::new(),
            bound_base: 0,
            retried_into: None,
            retries: 0,
            last_seq: first.seq,
        })
    }

    /// Where the run stands after `record` too.
    pub(crate) fn apply(&mut self, record: &Record) {
        self.last_seq = record.seq;
        apply(self, record);
    }
}

fn apply(p: &mut Position, record: &Record) {
    match &record.event {
        Event::RunStarted { .. } => {}
        Event::StateEntered { state, iteration } => {
            p.state = Some(state.clone());
            p.iteration = *iteration;
        }
        Event::ActionStarted { phase, index, .. } => {
            p.interrupted = false;
            match phase {
                Phase::Enter => p.enter.start(*index),
                Phase::Exit => p.exit.start(*index),
            }
        }
        // A process of the open action: what a resume kills if it still runs, nothing the
        // run's position depends on.
        Event::ActionProcess { .. } => {}
        Event::ActionFinished {
            phase,
            index,
            ok,
            set_vars,
            ..
        } => {
            let action = FinishedAction { ok: *ok };
            p.last_action_ok = Some(*ok);
            p.vars
                .extend(set_vars.iter().map(|(k, v)| (k.clone(), v.clone())));
            match phase {
                Phase::Enter => p.enter.finish(*index, action),
                Phase::Exit => p.exit.finish(*index, action),
            }
        }
        Event::GuardEvaluated {
            transition, passed, ..
        } => {
            complete_enter(p);
            if *passed {
                p.chosen = Some(*transition);
            }
        }
        Event::Transition {
            transition,
            from,
            to,
            iteration,
        } => {
            complete_enter(p);
            p.transitions.push(CommittedTransition {
                seq: record.seq,
                transition: *transition,
                from: from.clone(),
                to: to.clone(),
            });
            // The new visit starts here, durably: state-entered only repeats it.
            p.state = Some(to.clone());
            p.iteration = *iteration;
            p.enter = SequenceProgress::default();
            p.exit = SequenceProgress::default();
            p.enter_complete = false;
            // `last_action_ok` carries into the new visit until an action of it finishes.
            p.answered_in_visit = false;
            p.chosen = None;
            p.gate = None;
            p.paused = None;
            p.retried_into = None;
        }
        Event::Paused {
            kind,
            action,
            prompt,
            ..
        } => {
            if *kind == PauseKind::State {
                complete_enter(p);
            } else if let Some(i) = action {
                if p.enter.ambiguous == Some(*i) {
                    p.enter.ambiguous = None;
                }
                p.enter.awaiting_answer = Some(*i);
            }
            p.paused = Some((*kind, *action, prompt.clone()));
        }
        Event::Resumed { answer, .. } => {
            p.interrupted = false;
            if let Some(answer) = answer {
                p.answered_in_visit = true;
                p.vars.insert("__hitlAnswer".to_owned(), answer.clone());
            }
            p.paused = None;
        }
        // A new visit of `state`, after the failed end: onEnter runs again.
        Event::Retried {
            state, iteration, ..
        } => {
            p.finished = None;
            p.interrupted = false;
            p.state = Some(state.clone());
            p.iteration = *iteration;
            p.bound_base = *iteration;
            p.retried_into = Some(state.clone());
            p.retries += 1;
            p.enter = SequenceProgress::default();
            p.exit = SequenceProgress::default();
            p.enter_complete = false;
            p.answered_in_visit = false;
            p.chosen = None;
            p.gate = None;
            p.paused = None;
        }
        Event::DoneGate {
            transition,
            decision,
            verdict,
            message,
            forced,
            ..
        } => {
            p.gate = Some(GateRecord {
                transition: *transition,
                decision: *decision,
                verdict: verdict.clone(),
                message: message.clone(),
                forced: *forced,
            });
        }
        Event::Interrupted { .. } => p.interrupted = true,
        Event::LifecycleBound { entity } => p.lifecycle = Some(entity.clone()),
        // A request starts afresh: no guard of an earlier one counts for it.
        Event::TransitionRequested { .. } | Event::TransitionDenied { .. } => {
            p.chosen = None;
            p.gate = None;
        }
        // The state set from outside, as a new visit (no transition taken).
        Event::Reseeded { to, .. } => {
            p.state = Some(to.clone());
            p.enter = SequenceProgress::default();
            p.exit = SequenceProgress::default();
            p.enter_complete = false;
            p.last_action_ok = None;
            p.answered_in_visit = false;
            p.chosen = None;
            p.gate = None;
            p.paused = None;
        }
        Event::RunFinished {
            outcome,
            state,
            terminal_reason,
            reason,
            iterations,
        } => {
            p.finished = Some(FinishedRecord {
                outcome: *outcome,
                state: state.clone(),
                terminal_reason: *terminal_reason,
                reason: *reason,
                iterations: *iterations,
            });
        }
    }
}

/// The onEnter sequence is over (guards are evaluated only after it).
fn complete_enter(p: &mut Position) {
    p.enter_complete = true;
}
