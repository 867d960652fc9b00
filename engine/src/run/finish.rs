//! How a run ends: the terminal state's reason (declared on the transition that entered
//! it, else done or failed-check), one durable `run-finished`, and the outcome reported.

use super::cursor::Cursor;
use super::journal::Event;
use super::outcome::{Outcome, RunOutcome, StopReason};
use super::run_error::RunError;
use super::runner::Run;
use crate::pipeline::TerminalReason;

impl Run<'_, '_> {
    pub(super) fn finish_terminal(&mut self, c: &Cursor) -> Result<RunOutcome, RunError> {
        let declared = self
            .entered_via
            .and_then(|t| self.facts.pipeline.transitions.get(t))
            .and_then(|t| t.terminal_reason.as_ref())
            .map(|r| r.value);
        if self.facts.plan.graph.is_failure(c.state) {
            let reason = declared.unwrap_or(TerminalReason::FailedCheck);
            let detail = format!("reached failure state {:?}", self.facts.state_id(c.state));
            return self.finish(
                c,
                Outcome::Failed,
                StopReason::FailureState,
                reason,
                Some(detail),
            );
        }
        let outcome = if self.facts.wbs.is_some() {
            Outcome::Done
        } else {
            Outcome::Completed
        };
        let reason = declared.unwrap_or(TerminalReason::Done);
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
            detail,
        })
    }
}
