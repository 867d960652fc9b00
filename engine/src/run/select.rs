//! Choosing the transition out of a state: its own transitions in declaration order, the
//! first whose guard passes; every guard evaluated is journaled through the host, with its
//! result and duration.

use super::child_env::process_env;
use super::cursor::Cursor;
use super::effect::GuardStep;
use super::guard_eval::{self, CompiledGuard, GuardContext};
use super::plan::render_ctx;
use super::run_error::RunError;
use super::runner::Run;
use spur_guards::GuardResult;

impl Run<'_, '_> {
    /// Try the current state's transitions in declaration order; journal each guard.
    pub(super) fn select(&mut self, c: &Cursor) -> Result<Option<usize>, RunError> {
        let pipeline = self.facts.pipeline;
        let state_id = self.facts.state_id(c.state).to_owned();
        let outgoing: Vec<usize> = self.facts.plan.graph.outgoing(c.state).to_vec();
        // Building the process environment costs allocations; only shell and plugin guards
        // need it (this keeps a loop of `always` guards at the journal's cost).
        let needs_env = outgoing.iter().any(|&t| {
            self.facts
                .plan
                .guards
                .get(t)
                .and_then(Option::as_ref)
                .is_some_and(CompiledGuard::has_side_effects)
        });
        let env = if needs_env {
            process_env(&self.facts, &self.vars, &state_id, c.iteration)
        } else {
            Vec::new()
        };
        let last_action = serde_json::json!({ "ok": c.last_action_ok });
        for t in outgoing {
            let Some(transition) = pipeline.transitions.get(t) else {
                continue;
            };
            let guard = self.facts.plan.guards.get(t).and_then(Option::as_ref);
            let step = GuardStep {
                state: &state_id,
                transition: t,
                to: &transition.to.value,
                kind: guard.map_or("none", CompiledGuard::kind),
            };
            let (facts, vars) = (&self.facts, &self.vars);
            let mut body = || match guard {
                None => GuardResult::bare(true),
                Some(guard) => {
                    let ctx = GuardContext {
                        render: render_ctx(
                            facts.pipeline,
                            vars,
                            facts.run_id.as_str(),
                            &state_id,
                            c.iteration,
                            &facts.plan.env_allow,
                        ),
                        project_root: facts.settings.state_dir.project_root(),
                        env: &env,
                        last_action_ok: c.last_action_ok,
                        last_action: &last_action,
                        jq: &facts.settings.jq,
                        default_timeout: facts.settings.timeouts.guard,
                    };
                    guard_eval::evaluate(guard, &ctx)
                }
            };
            let result = self.host.run_guard(&step, &mut *self.observer, &mut body)?;
            if result.passed {
                return Ok(Some(t));
            }
        }
        Ok(None)
    }
}
