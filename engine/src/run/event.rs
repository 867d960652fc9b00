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
    Enter,
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
    RunStarted {
        /// The pipeline file as given on the command line.
        pipeline: String,
        pipeline_name: String,
        /// sha256 of the pipeline text: resume refuses a pipeline whose text changed.
        pipeline_sha256: String,
        /// The resolved vars (defaults < `--vars` < `--var`) the run started with.
        vars: BTreeMap<String, String>,
        wbs: Option<String>,
        /// `--force-done --reason R`: the reason, when the run was started forced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        force_done_reason: Option<String>,
    },
    StateEntered {
        state: String,
        iteration: u32,
    },
    ActionStarted {
        state: String,
        phase: Phase,
        index: usize,
        kind: String,
        /// The action's log file, relative to the run directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log: Option<String>,
    },
    ActionFinished {
        state: String,
        phase: Phase,
        index: usize,
        kind: String,
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        timed_out: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        duration_ms: u64,
        /// Vars the action set; merged after the whole sequence.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        set_vars: BTreeMap<String, String>,
        /// A line for people (a note's message, a gate's PASS/FAIL…).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    GuardEvaluated {
        state: String,
        /// Index of the transition in the pipeline's `transitions` list.
        transition: usize,
        to: String,
        kind: String,
        passed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        duration_us: u64,
    },
    Transition {
        transition: usize,
        from: String,
        to: String,
        /// The number of transitions taken so far, this one included.
        iteration: u32,
    },
    Paused {
        state: String,
        kind: PauseKind,
        /// For an hitl pause: the action waiting for the answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
    },
    Resumed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        rerun_ambiguous: bool,
        /// `spur continue --force-done --reason R`: the reason this resume forces with (the
        /// one `run-started` records is never used again).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        force_done_reason: Option<String>,
    },
    DoneGate {
        state: String,
        /// The transition the gate was asked for; none when the run starts in a success
        /// terminal.
        #[serde(
            default,
            deserialize_with = "transition_or_none",
            skip_serializing_if = "Option::is_none"
        )]
        transition: Option<usize>,
        decision: GateDecision,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verdict: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        forced: bool,
    },
    Interrupted {
        state: String,
    },
    RunFinished {
        outcome: Outcome,
        state: String,
        #[serde(with = "terminal_reason_text")]
        terminal_reason: TerminalReason,
        reason: StopReason,
        iterations: u32,
    },
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
            Event::ActionFinished { .. } => "action-finished",
            Event::GuardEvaluated { .. } => "guard-evaluated",
            Event::Transition { .. } => "transition",
            Event::Paused { .. } => "paused",
            Event::Resumed { .. } => "resumed",
            Event::DoneGate { .. } => "done-gate",
            Event::Interrupted { .. } => "interrupted",
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
