//! A state's onEnter or onExit list, run from where the visit stands: an action finished
//! before a resume never runs again, each other one runs once through the host (its start
//! durable before it runs), and a failure ends the list as its `onError` says.

use super::actions::{self, ActionContext, ActionRun, HitlQuestion};
use super::child_env::process_env;
use super::cursor::Cursor;
use super::effect::ActionStep;
use super::journal::Phase;
use super::observer::RunObserver;
use super::plan::render_ctx;
use super::replay;
use super::run_error::RunError;
use super::runner::Run;
use crate::pipeline::{Action, ActionKind, OnError, TerminalReason};

/// How an action sequence ended.
pub(super) enum SequenceEnd {
    Done,
    Failed {
        reason: TerminalReason,
        detail: String,
    },
    NeedsAnswer {
        index: usize,
        question: HitlQuestion,
    },
}

impl Run<'_, '_> {
    /// Run the onEnter or onExit list from where the cursor stands.
    pub(super) fn sequence(
        &mut self,
        c: &mut Cursor,
        phase: Phase,
    ) -> Result<SequenceEnd, RunError> {
        let pipeline = self.facts.pipeline;
        let Some(state) = pipeline.states.get(c.state) else {
            return Ok(SequenceEnd::Done);
        };
        let list: &[Action] = match phase {
            Phase::Enter => &state.on_enter,
            Phase::Exit => &state.on_exit,
        };
        for (index, action) in list.iter().enumerate() {
            let progress = match phase {
                Phase::Enter => &mut c.enter,
                Phase::Exit => &mut c.exit,
            };
            let policy = action
                .on_error
                .as_ref()
                .map_or(pipeline.default_on_error.value, |o| o.value);
            if let Some(done) = progress.finished.get(&index) {
                // Finished before a resume: never run again.
                c.last_action_ok = Some(done.ok);
                if !done.ok && policy == OnError::Fail {
                    return Ok(SequenceEnd::Failed {
                        reason: failure_reason(&action.kind.value, false),
                        detail: format!(
                            "action {index} ({}) of {:?} failed",
                            action.kind.value, state.id.value
                        ),
                    });
                }
                continue;
            }
            let answer = if progress.awaiting_answer == Some(index) {
                c.answer.take()
            } else {
                None
            };
            progress.ambiguous = None;
            let result = self.run_action(c, phase, index, action, answer)?;
            let result = match result {
                ActionRun::NeedsAnswer(question) => {
                    return Ok(SequenceEnd::NeedsAnswer { index, question });
                }
                ActionRun::Finished(r) => r,
            };
            c.last_action_ok = Some(result.ok);
            let free_text = matches!(action.kind.value, ActionKind::HitlInput(_));
            if result.set_vars.contains_key("__hitlAnswer") || (free_text && result.ok) {
                c.answered = true;
            }
            // The next action of the list sees what this one set (the reference engine since
            // 0.4.35): merged now, as its `action-finished` record (durable before the next
            // action starts) holds them for a resume to replay. A failed action sets none.
            if result.ok {
                self.vars
                    .extend(result.set_vars.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            let progress = match phase {
                Phase::Enter => &mut c.enter,
                Phase::Exit => &mut c.exit,
            };
            progress
                .finished
                .insert(index, replay::FinishedAction { ok: result.ok });
            if !result.ok && policy == OnError::Fail {
                return Ok(SequenceEnd::Failed {
                    reason: failure_reason(&action.kind.value, result.timed_out),
                    detail: format!(
                        "action {index} ({}) of {:?} failed: {}",
                        action.kind.value,
                        state.id.value,
                        without_kind(
                            &action.kind.value.to_string(),
                            result.error.as_deref().unwrap_or_default()
                        )
                    ),
                });
            }
        }
        Ok(SequenceEnd::Done)
    }

    /// Run one action through the host, which journals its start durably before and its
    /// finish after.
    fn run_action(
        &mut self,
        c: &Cursor,
        phase: Phase,
        index: usize,
        action: &Action,
        answer: Option<String>,
    ) -> Result<ActionRun, RunError> {
        let state_id = self.facts.state_id(c.state).to_owned();
        let kind = action.kind.value.to_string();
        let (facts, vars) = (&self.facts, &self.vars);
        // A timeout that does not render is the action's own failure, reported when it runs.
        let timeout = actions::effective_timeout(
            &action.kind.value,
            &render_ctx(
                facts.pipeline,
                vars,
                facts.run_id.as_str(),
                &state_id,
                c.iteration,
                &facts.plan.env_allow,
            ),
            &facts.settings.timeouts,
        )
        .ok()
        .flatten();
        let step = ActionStep {
            state: &state_id,
            phase,
            index,
            kind: &kind,
            timeout_ms: timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        };
        let redactor = self.host.redactor();
        let mut body = |log_rel: &str,
                        observer: &mut dyn RunObserver,
                        on_start: Option<spur_process::StartHook>| {
            let render = render_ctx(
                facts.pipeline,
                vars,
                facts.run_id.as_str(),
                &state_id,
                c.iteration,
                &facts.plan.env_allow,
            );
            let env = process_env(facts, vars, &state_id, c.iteration);
            let log_path = facts.run_dir.join(log_rel);
            let mut ask = |q: &HitlQuestion| observer.ask(q);
            let mut ctx = ActionContext {
                action,
                render,
                vars,
                state_dir: &facts.settings.state_dir,
                project_root: facts.settings.state_dir.project_root(),
                run_dir: &facts.run_dir,
                run_id: facts.run_id.as_str(),
                log_path: &log_path,
                env: &env,
                answer: answer.as_deref(),
                timeouts: &facts.settings.timeouts,
                jq: &facts.settings.jq,
                http_allow: &facts.settings.http_allow,
                ask: &mut ask,
                redactor: &redactor,
                policy: &facts.policy,
                on_start,
            };
            actions::run(&mut ctx)
        };
        self.host.run_action(&step, &mut *self.observer, &mut body)
    }
}

/// The terminal reason of a failed action: a timeout, a failed agent, or a failed check.
fn failure_reason(kind: &ActionKind, timed_out: bool) -> TerminalReason {
    if timed_out {
        TerminalReason::FailedTimeout
    } else if matches!(kind, ActionKind::AgentRun(_)) {
        TerminalReason::FailedAgent
    } else {
        TerminalReason::FailedCheck
    }
}

/// An action's error without the `kind: ` its text starts with (the detail names the
/// kind already): "action 0 (agent.run) … failed: no agent …", not "… failed: agent.run: no
/// agent …".
pub(crate) fn without_kind<'e>(kind: &str, error: &'e str) -> &'e str {
    error
        .strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(error)
}
