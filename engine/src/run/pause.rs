//! Pausing: an hitl action no one at a terminal answered, or a `pause: true` state after
//! its onEnter. The pause is journaled; then the host may bring the answer and the run goes
//! on in the same call, or (this machine's host) the run stops paused for `spur continue`.

use super::actions::HitlQuestion;
use super::cursor::Cursor;
use super::host::{Pause, Resume};
use super::journal::{Event, PauseKind};
use super::outcome::{Outcome, RunOutcome, StopReason};
use super::run_error::RunError;
use super::runner::Run;
use crate::pipeline::TerminalReason;

impl Run<'_, '_> {
    /// The hitl action at `index` asks `question`; `Some(outcome)` when the run stops.
    pub(super) fn pause_for_answer(
        &mut self,
        c: &mut Cursor,
        index: usize,
        question: &HitlQuestion,
    ) -> Result<Option<RunOutcome>, RunError> {
        let state = self.facts.state_id(c.state).to_owned();
        self.append(Event::Paused {
            state: state.clone(),
            kind: PauseKind::Hitl,
            action: Some(index),
            prompt: Some(question.prompt.clone()),
        })?;
        let mut paused = self.paused(
            c,
            format!(
                "waiting for an answer to {:?} ({})",
                question.prompt,
                question.shown_choices("/")
            ),
        );
        paused.question = Some(question.clone());
        let pause = Pause::Question {
            state: &state,
            question,
            outcome: &paused,
        };
        let Some(resume) = self.host.wait_for_answer(&pause) else {
            return Ok(Some(paused));
        };
        self.go_on(c, resume, Some((index, question)))?;
        Ok(None)
    }

    /// A `pause: true` state after its onEnter; `Some(outcome)` when the run stops.
    pub(super) fn pause_state(&mut self, c: &mut Cursor) -> Result<Option<RunOutcome>, RunError> {
        let state = self.facts.state_id(c.state).to_owned();
        self.append(Event::Paused {
            state: state.clone(),
            kind: PauseKind::State,
            action: None,
            prompt: None,
        })?;
        let paused = self.paused(c, format!("state {state:?} pauses for the operator"));
        let pause = Pause::State {
            state: &state,
            outcome: &paused,
        };
        let Some(resume) = self.host.wait_for_answer(&pause) else {
            return Ok(Some(paused));
        };
        self.go_on(c, resume, None)?;
        Ok(None)
    }

    /// The host answered a pause within this call: go on as `spur continue` would, with
    /// `resumed` journaled and the answer (for `question`, the hitl action at its index)
    /// given to the action that asked.
    fn go_on(
        &mut self,
        c: &mut Cursor,
        resume: Resume,
        question: Option<(usize, &HitlQuestion)>,
    ) -> Result<(), RunError> {
        if let Some((_, q)) = question {
            match &resume.answer {
                None => {
                    return Err(RunError::AnswerRequired {
                        run_id: self.facts.run_id.to_string(),
                        prompt: q.prompt.clone(),
                        choices: q.shown_choices(", "),
                    })
                }
                Some(a) if !q.accepts(a) => {
                    return Err(RunError::AnswerInvalid {
                        answer: a.clone(),
                        prompt: q.prompt.clone(),
                        choices: q.shown_choices(", "),
                    })
                }
                Some(_) => {}
            }
        }
        self.append(Event::Resumed {
            answer: resume.answer.clone(),
            rerun_ambiguous: false,
            force_done_reason: None,
            answered_by: resume.answered_by.clone(),
        })?;
        if let Some(answer) = &resume.answer {
            self.vars.insert("__hitlAnswer".into(), answer.clone());
            c.answered = true;
        }
        match question {
            Some((index, _)) => {
                c.enter.awaiting_answer = Some(index);
                c.answer = resume.answer;
            }
            None => c.resumed_from_pause = true,
        }
        Ok(())
    }

    fn paused(&self, c: &Cursor, detail: String) -> RunOutcome {
        RunOutcome {
            run_id: self.facts.run_id.to_string(),
            pipeline: self.facts.pipeline.name.value.clone(),
            outcome: Outcome::Paused,
            state: self.facts.state_id(c.state).to_owned(),
            terminal_reason: TerminalReason::PausedOperator,
            reason: StopReason::Paused,
            iterations: c.iteration,
            forced: false,
            done_gate: None,
            question: None,
            detail: Some(detail),
        }
    }
}
