//! Certifying the end: a run with a wbs enters or finishes at a success terminal whose
//! terminal reason is `done` only right after this process asked the done gate, through
//! its host and nowhere else, and journaled the answer; a deny ends the run failed. A gate
//! record an earlier process journaled never counts: a resumed run asks again.

use super::cursor::Cursor;
use super::done_gate_port::{GateAnswer, GateRequest};
use super::journal::Event;
use super::outcome::{Outcome, RunOutcome, StopReason};
use super::run_error::RunError;
use super::runner::Run;
use crate::pipeline::TerminalReason;

impl Run<'_, '_> {
    /// Whether entering `target` through transition `via` (none: the initial state, or the
    /// state the run already stands in) certifies the run's task, so that the gate must
    /// allow it: a success terminal whose terminal reason is `done`, in a run with a wbs.
    pub(super) fn needs_gate(&self, target: usize, via: Option<usize>) -> bool {
        let graph = &self.facts.plan.graph;
        self.facts.wbs.is_some()
            && graph.is_terminal(target)
            && !graph.is_failure(target)
            && self.success_reason(target, via) == TerminalReason::Done
    }

    /// The run stands in `c.state`: when that certifies its task and this process's gate has
    /// not let it in, ask now. `Some(outcome)` when the gate denied (the run has ended).
    pub(super) fn gate_here(&mut self, c: &Cursor) -> Result<Option<RunOutcome>, RunError> {
        if self.gated == Some(c.state) || !self.needs_gate(c.state, self.entered_via) {
            return Ok(None);
        }
        if let Some(denied) = self.ask_gate(c, None)? {
            return Ok(Some(denied));
        }
        self.gated = Some(c.state);
        Ok(None)
    }

    /// Ask the done gate (through the host, the only way); `Some(outcome)` when it denied
    /// (the run has ended failed). `transition` is none when the gate is asked for the
    /// state itself: the initial state, or the one a resumed run stands in.
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
        let (report, forced) = answer.report(&wbs);
        let message = report.message.clone();
        self.append(Event::DoneGate {
            state: self.facts.state_id(c.state).to_owned(),
            transition,
            decision: report.decision,
            verdict: report.verdict.clone(),
            message: message.clone(),
            forced,
        })?;
        self.forced = forced;
        self.gate_report = Some(report);
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
