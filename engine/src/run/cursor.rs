//! Where the run loop stands within one visit of a state: how far onEnter and onExit got,
//! the transition chosen, whether the done gate let it through. A fresh visit starts
//! empty; a resume rebuilds it from the journal's replay.

use super::journal::PauseKind;
use super::replay::{Position, SequenceProgress};

#[derive(Debug, Clone)]
pub(super) struct Cursor {
    pub(super) state: usize,
    pub(super) iteration: u32,
    pub(super) enter: SequenceProgress,
    pub(super) enter_complete: bool,
    /// The operator answered during this visit: a `pause: true` state does not pause again.
    pub(super) answered: bool,
    /// This visit's `pause: true` stop was resumed.
    pub(super) resumed_from_pause: bool,
    pub(super) chosen: Option<usize>,
    pub(super) exit: SequenceProgress,
    /// The done gate, asked by this process, let the chosen transition through.
    pub(super) gate_allowed: bool,
    pub(super) last_action_ok: Option<bool>,
    /// The answer a resume brought for an hitl action.
    pub(super) answer: Option<String>,
}

impl Cursor {
    /// The start of a visit of `state`.
    pub(super) fn entering(state: usize, iteration: u32) -> Self {
        Self {
            state,
            iteration,
            enter: SequenceProgress::default(),
            enter_complete: false,
            answered: false,
            resumed_from_pause: false,
            chosen: None,
            exit: SequenceProgress::default(),
            gate_allowed: false,
            last_action_ok: None,
            answer: None,
        }
    }

    /// The visit the journal stopped in, at `state` (its index), going on with `answer`.
    pub(super) fn resumed(position: &Position, state: usize, answer: Option<String>) -> Self {
        Self {
            state,
            iteration: position.iteration,
            enter: position.enter.clone(),
            enter_complete: position.enter_complete,
            answered: position.answered_in_visit || answer.is_some(),
            resumed_from_pause: matches!(position.paused, Some((PauseKind::State, _, _))),
            chosen: position.chosen,
            exit: position.exit.clone(),
            // A done-gate record of an earlier process never counts: this one asks again.
            gate_allowed: false,
            last_action_ok: position.last_action_ok,
            answer,
        }
    }
}
