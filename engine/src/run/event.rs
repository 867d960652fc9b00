//! The journal's events: one per step of a run, named in kebab-case in each line's `event`
//! field, with camelCase fields. Which of them must be durable before the run goes on is
//! decided here, next to what each one means.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::outcome::{terminal_reason_text, Outcome, StopReason};
use crate::done_gate::GateDecision;
use crate::pipeline::TerminalReason;

/// Where an action sits: a state's `onEnter` or `onExit` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// In the state's `onEnter` list, run on entering it.
    Enter,
    /// In the state's `onExit` list, run on leaving it.
    Exit,
}

/// Why a run paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PauseKind {
    /// The state declares `pause: true`.
    State,
    /// An `hitl.confirm` / `hitl.select` action needs an answer and there is no terminal.
    Hitl,
}

/// One journal event. The `event` field names the variant in kebab-case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "event",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// The run began: written once, as the journal's first record.
    RunStarted {
        /// The pipeline file as given on the command line.
        pipeline: String,
        /// The pipeline's `name`.
        pipeline_name: String,
        /// sha256 of the pipeline text: resume refuses a pipeline whose text changed.
        pipeline_sha256: String,
        /// The resolved vars (defaults < `--vars` < `--var`) the run started with.
        vars: BTreeMap<String, String>,
        /// The task (`--wbs`) the run works on, if any; only a task run can be certified done.
        wbs: Option<String>,
        /// `--force-done --reason R`: the reason, when the run was started forced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        force_done_reason: Option<String>,
        /// sha256 of the gate's policy (`verify`, `doneGate` of `.spur/config.yaml`) as the
        /// run started: the run and every spur call from its steps use that policy
        /// (`crate::policy`). Absent in journals from before policies were pinned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        policy_sha256: Option<String>,
        /// `spur run --worktree`: the run's git worktree and branch; `continue` and
        /// `retry` go back into it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worktree: Option<super::git_worktree::WorktreeRecord>,
    },
    /// The run entered a state.
    StateEntered {
        /// The state's id.
        state: String,
        /// Transitions taken before entering it.
        iteration: u32,
    },
    /// An action began: written (durably) before it runs, so a crash mid-action is visible.
    ActionStarted {
        /// The state whose action list holds it.
        state: String,
        /// Which of the state's lists holds it.
        phase: Phase,
        /// Its position in that list, from 0.
        index: usize,
        /// The action's kind as written (`shell`, `hitl.confirm`, …).
        kind: String,
        /// The action's log file, relative to the run directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<String>,
        /// How long it may run, in milliseconds: its own `timeoutMs`, else the default for
        /// its kind. Absent for an action without a limit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// An action's process started: its process group and its leader's start time,
    /// written (durably) once it runs and before it is waited for, so that a resume after a
    /// crash can kill the group if it still runs — only that group, since ids are reused.
    /// Between the action's `action-started` and its `action-finished`; one per process.
    ActionProcess {
        /// The state whose action list holds it.
        state: String,
        /// Which of the state's lists holds it.
        phase: Phase,
        /// Its position in that list, from 0.
        index: usize,
        /// The process group (its leader's pid).
        pgid: i32,
        /// The leader's start time (`/proc/<pid>/stat` field 22, clock ticks since boot);
        /// absent where it cannot be read (not Linux).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start_time: Option<u64>,
        /// The spur process that started it, and that process's start time: a resume
        /// leaves the group of a spur that still runs alone.
        spur_pid: i32,
        /// The start time of `spur_pid`, as `start_time`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spur_start_time: Option<u64>,
    },
    /// An action ended, pairing the `action-started` with the same state, phase and index.
    ActionFinished {
        /// The state whose action list holds it.
        state: String,
        /// Which of the state's lists holds it.
        phase: Phase,
        /// Its position in that list, from 0.
        index: usize,
        /// The action's kind as written.
        kind: String,
        /// Whether the action succeeded.
        ok: bool,
        /// Why it failed, when it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The action ran out of time and was killed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        timed_out: bool,
        /// The process's exit code, when it exited on its own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// Wall-clock time the action took, in milliseconds.
        duration_ms: u64,
        /// Vars the action set; merged at once, so the next action sees them.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        set_vars: BTreeMap<String, String>,
        /// A line for people (a note's message, a gate's PASS/FAIL…).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// What the step spent, as its agent (or its `spurUsage` lines) reported it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<crate::cost::Usage>,
        /// A fleet run in a worktree: the commit of the run's tree as the action left it,
        /// pushed to the run's branch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
    },
    /// A transition's guard was evaluated in the current state.
    GuardEvaluated {
        /// The state the run was in.
        state: String,
        /// Index of the transition in the pipeline's `transitions` list.
        transition: usize,
        /// The target state of the transition.
        to: String,
        /// The guard's kind (`shell`, `jq`, …), or `none` for an unguarded transition.
        kind: String,
        /// Whether the guard passed (the transition is taken).
        passed: bool,
        /// What the guard reported besides pass or fail (an error, a jq result), when anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// Time the evaluation took, in microseconds.
        duration_us: u64,
    },
    /// The run took a transition.
    Transition {
        /// Index of the transition in the pipeline's `transitions` list.
        transition: usize,
        /// The state left.
        from: String,
        /// The state entered.
        to: String,
        /// The number of transitions taken so far, this one included.
        iteration: u32,
    },
    /// The run stopped to wait for a person; `spur continue` resumes it.
    Paused {
        /// The state the run paused in.
        state: String,
        /// What it waits for.
        kind: PauseKind,
        /// For an hitl pause: the action waiting for the answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<usize>,
        /// For an hitl pause: the question shown to the person.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
    },
    /// A paused or interrupted run was picked up again by `spur continue`.
    Resumed {
        /// The answer given with `--answer`, for an hitl pause.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        /// `--rerun-ambiguous`: rerun an action that started but never finished instead of refusing.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        rerun_ambiguous: bool,
        /// `spur continue --force-done --reason R`: the reason this resume forces with (the
        /// one `run-started` records is never used again).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        force_done_reason: Option<String>,
        /// `spur continue --answered-by WHO`: who gave the answer (`spur ui` says the user
        /// it runs as and the page's address).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answered_by: Option<String>,
    },
    /// `spur retry`: a failed run goes on. Written right after its failed `run-finished`;
    /// the run re-enters `state` (the one it failed in, or the one it left for a failure
    /// terminal) and runs its onEnter again, with a fresh iteration bound.
    Retried {
        /// The state the run re-enters.
        state: String,
        /// Transitions taken before the retry; the iteration bound counts from here.
        iteration: u32,
        /// `spur retry --force-done --reason R`: the reason this retry forces with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        force_done_reason: Option<String>,
    },
    /// The done gate was asked to certify the task before entering a success terminal.
    DoneGate {
        /// The state the run was in when it asked.
        state: String,
        /// The transition the gate was asked for; none when the run starts in a success
        /// terminal.
        #[serde(
            default,
            deserialize_with = "transition_or_none",
            skip_serializing_if = "Option::is_none"
        )]
        transition: Option<usize>,
        /// What the gate decided.
        decision: GateDecision,
        /// The task's verdict the gate read, when it read one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verdict: Option<String>,
        /// Why the gate denied, or a note (the task was already done).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// The gate allowed because the run was started or resumed with `--force-done`.
        forced: bool,
    },
    /// The run was stopped by a signal (SIGINT/SIGTERM); it can be resumed.
    Interrupted {
        /// The state it was in.
        state: String,
    },
    /// The journal is a lifecycle instance's (`crate::lifecycle`), driven from outside:
    /// written once, right after `run-started`. Such a journal is never resumed as a run.
    LifecycleBound {
        /// The entity whose lifecycle it is, e.g. `task:0592`.
        entity: String,
    },
    /// A request from outside to move a lifecycle instance to `to`; the records up to the
    /// next request are its answer.
    TransitionRequested {
        /// The state the instance was in when the request came.
        state: String,
        /// The state asked for.
        to: String,
        /// The vars the request's guards see (pipeline defaults, `--var`, the entity's var).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        vars: BTreeMap<String, String>,
        /// `--force-done --reason R` given to the request.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        force_done_reason: Option<String>,
    },
    /// A lifecycle instance's state set to its entity's status as the entity's owner records
    /// it (the file wins): no guard, no transition, never into a state the done gate guards
    /// unless the entity is already done.
    Reseeded {
        /// The state the instance was in.
        from: String,
        /// The entity's status, a state of the pipeline.
        to: String,
    },
    /// A request to move a lifecycle instance was refused; it stays where it was.
    TransitionDenied {
        /// The state it stays in.
        state: String,
        /// The state asked for.
        to: String,
        /// Why.
        reason: DenialReason,
        /// What refused it, for people (the guard, the gate's message).
        detail: String,
    },
    /// The run ended: written once, as the journal's last record.
    RunFinished {
        /// How the run ended.
        outcome: Outcome,
        /// The state it ended in.
        state: String,
        /// Why a terminal state ended it (success or failure), or that none did.
        #[serde(with = "terminal_reason_text")]
        terminal_reason: TerminalReason,
        /// What stopped the run.
        reason: StopReason,
        /// Transitions taken in the whole run.
        iterations: u32,
    },
}

/// Why a lifecycle transition was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DenialReason {
    /// The pipeline has no transition from the current state to the one asked for.
    NoSuchTransition,
    /// No transition to it has a guard that passed.
    GuardFailed,
    /// The done gate did not certify the task.
    DoneGateDenied,
    /// The structural check the caller brings (`spur task check --as STATUS` for a task's
    /// testing and done) did not pass.
    CheckFailed,
}

impl DenialReason {
    /// The reason as written in the journal and the JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoSuchTransition => "no-such-transition",
            Self::GuardFailed => "guard-failed",
            Self::DoneGateDenied => "done-gate-denied",
            Self::CheckFailed => "check-failed",
        }
    }
}

/// Journals written before the transition was optional recorded "no transition" as
/// `usize::MAX` (18446744073709551615); read that as none.
fn transition_or_none<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let index = Option::<u64>::deserialize(d)?;
    Ok(index
        .and_then(|i| usize::try_from(i).ok())
        .filter(|&i| i != usize::MAX))
}

impl Event {
    /// The kebab-case name of the event, as written in the `event` field.
    pub fn name(&self) -> &'static str {
        match self {
            Event::RunStarted { .. } => "run-started",
            Event::StateEntered { .. } => "state-entered",
            Event::ActionStarted { .. } => "action-started",
            Event::ActionProcess { .. } => "action-process",
            Event::ActionFinished { .. } => "action-finished",
            Event::GuardEvaluated { .. } => "guard-evaluated",
            Event::Transition { .. } => "transition",
            Event::Paused { .. } => "paused",
            Event::Resumed { .. } => "resumed",
            Event::Retried { .. } => "retried",
            Event::DoneGate { .. } => "done-gate",
            Event::Interrupted { .. } => "interrupted",
            Event::LifecycleBound { .. } => "lifecycle-bound",
            Event::TransitionRequested { .. } => "transition-requested",
            Event::Reseeded { .. } => "reseeded",
            Event::TransitionDenied { .. } => "transition-denied",
            Event::RunFinished { .. } => "run-finished",
        }
    }

    /// Whether this record guards a side effect and so must reach the disk before it
    /// happens. Guard results and state entries are informational: they are flushed by
    /// the next durable record.
    pub(crate) fn is_durable(&self) -> bool {
        !matches!(
            self,
            Event::StateEntered { .. } | Event::GuardEvaluated { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::journal::Record;

    #[test]
    fn a_gate_asked_for_no_transition_omits_it_and_reads_the_old_sentinel_as_none() {
        let gate = |transition| Event::DoneGate {
            state: "done".into(),
            transition,
            decision: GateDecision::Deny,
            verdict: Some("UNKNOWN".into()),
            message: None,
            forced: false,
        };
        let text = serde_json::to_string(&gate(None)).unwrap();
        assert!(!text.contains("transition"), "{text}");
        let old = r#"{"seq":2,"at":"t","event":"done-gate","state":"done","transition":18446744073709551615,"decision":"deny","verdict":"UNKNOWN","forced":false}"#;
        let record: Record = serde_json::from_str(old).unwrap();
        assert_eq!(record.event, gate(None));
        let kept = old.replace("18446744073709551615", "4");
        let record: Record = serde_json::from_str(&kept).unwrap();
        assert_eq!(record.event, gate(Some(4)));
    }
}
