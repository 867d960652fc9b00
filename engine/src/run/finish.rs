//! How a run ends: the terminal state's reason (declared on the transition that entered
//! it; else failed-check for a failure state, cancelled for a state named cancelled or
//! canceled, done for any other), one durable `run-finished`, and the outcome reported.

use super::cursor::Cursor;
use super::journal::Event;
use super::outcome::{Outcome, RunOutcome, StopReason};
use super::run_error::RunError;
use super::runner::Run;
use crate::pipeline::TerminalReason;

impl Run<'_, '_> {
    /// The reason declared on transition `via`, when it is one of the pipeline's and
    /// enters `state` (a changed pipeline may number its transitions otherwise).
    fn declared_reason(&self, state: usize, via: Option<usize>) -> Option<TerminalReason> {
        let state_id = self.facts.state_id(state);
        via.and_then(|t| self.facts.pipeline.transitions.get(t))
            .filter(|t| t.to.value == state_id)
            .and_then(|t| t.terminal_reason.as_ref())
            .map(|r| r.value)
    }

    /// Why a run that ends at success terminal `state`, entered through `via`, ended.
    pub(super) fn success_reason(&self, state: usize, via: Option<usize>) -> TerminalReason {
        self.declared_reason(state, via)
            .unwrap_or_else(|| classified_success(self.facts.state_id(state)))
    }

    pub(super) fn finish_terminal(&mut self, c: &Cursor) -> Result<RunOutcome, RunError> {
        if self.facts.plan.graph.is_failure(c.state) {
            let reason = self
                .declared_reason(c.state, self.entered_via)
                .unwrap_or(TerminalReason::FailedCheck);
            let detail = format!("reached failure state {:?}", self.facts.state_id(c.state));
            return self.finish(
                c,
                Outcome::Failed,
                StopReason::FailureState,
                reason,
                Some(detail),
            );
        }
        // The one way to a done outcome: the gate of this process let the run in here.
        if let Some(denied) = self.gate_here(c)? {
            return Ok(denied);
        }
        let reason = self.success_reason(c.state, self.entered_via);
        let outcome = if self.needs_gate(c.state, self.entered_via) {
            Outcome::Done
        } else {
            Outcome::Completed
        };
        self.finish(c, outcome, StopReason::TerminalState, reason, None)
    }

    pub(super) fn finish(
        &mut self,
        c: &Cursor,
        outcome: Outcome,
        reason: StopReason,
        terminal_reason: TerminalReason,
        detail: Option<String>,
    ) -> Result<RunOutcome, RunError> {
        let state = self.facts.state_id(c.state).to_owned();
        self.append(Event::RunFinished {
            outcome,
            state: state.clone(),
            terminal_reason,
            reason,
            iterations: c.iteration,
        })?;
        Ok(RunOutcome {
            run_id: self.facts.run_id.to_string(),
            pipeline: self.facts.pipeline.name.value.clone(),
            outcome,
            state,
            terminal_reason,
            reason,
            iterations: c.iteration,
            forced: self.forced,
            done_gate: self.gate_report.clone(),
            question: None,
            detail,
        })
    }
}

/// The terminal reason of a success terminal that declares none: `cancelled` for a state
/// named cancelled or canceled, `done` for any other.
pub(crate) fn classified_success(state_id: &str) -> TerminalReason {
    if state_id.eq_ignore_ascii_case("cancelled") || state_id.eq_ignore_ascii_case("canceled") {
        TerminalReason::Cancelled
    } else {
        TerminalReason::Done
    }
}
