//! Certifying the end: before a run with a wbs enters a success terminal it asks the done
//! gate, through its host and nowhere else, journals the decision, and ends failed on a
//! deny. Only an allow (or a task already done) lets it in.

use super::cursor::Cursor;
use super::done_gate_port::{GateAnswer, GateRequest};
use super::journal::Event;
use super::outcome::{DoneGateReport, Outcome, RunOutcome, StopReason};
use super::run_error::RunError;
use super::runner::Run;
use crate::pipeline::TerminalReason;

impl Run<'_, '_> {
    /// A success terminal of a run with a wbs: the gate must allow entering it.
    pub(super) fn needs_gate(&self, target: usize) -> bool {
        let graph = &self.facts.plan.graph;
        self.facts.wbs.is_some() && graph.is_terminal(target) && !graph.is_failure(target)
    }

    /// Ask the done gate (through the host, the only way); `Some(outcome)` when it denied
    /// (the run has ended failed). `transition` is none on entering the initial state.
    pub(super) fn ask_gate(
        &mut self,
        c: &Cursor,
        transition: Option<usize>,
    ) -> Result<Option<RunOutcome>, RunError> {
        let Some(wbs) = self.facts.wbs.clone() else {
            return Ok(None);
        };
        let answer = self.host.done_gate(&GateRequest {
            state_dir: &self.facts.settings.state_dir,
            wbs: &wbs,
            run_id: self.facts.run_id.as_str(),
            force_reason: self.facts.force_reason.as_deref(),
        });
        let (verdict, message, forced) = match &answer {
            GateAnswer::Noop => (None, Some(format!("task {wbs} was already done")), false),
            GateAnswer::Allow { forced, verdict } => (verdict.clone(), None, *forced),
            GateAnswer::Deny { verdict, message } => {
                (Some(verdict.clone()), Some(message.clone()), false)
            }
        };
        let decision = answer.decision();
        self.append(Event::DoneGate {
            state: self.facts.state_id(c.state).to_owned(),
            transition,
            decision,
            verdict: verdict.clone(),
            message: message.clone(),
            forced,
        })?;
        self.forced = forced;
        self.gate_report = Some(DoneGateReport {
            decision,
            verdict,
            message: message.clone(),
        });
        if let GateAnswer::Deny { .. } = answer {
            return self
                .finish(
                    c,
                    Outcome::Failed,
                    StopReason::DoneGateDenied,
                    TerminalReason::FailedCheck,
                    message,
                )
                .map(Some);
        }
        Ok(None)
    }
}
