//! A checked pipeline prepared for running: its transition graph (the out-degree choice of
//! the next transition), every guard compiled once, and the environment names templates
//! may read.

use super::guard_eval::CompiledGuard;
use super::render::RenderContext;
use super::run_error::RunError;
use super::vars::Vars;
use crate::graph::TransitionGraph;
use crate::pipeline::Pipeline;

pub(crate) struct Plan {
    pub(crate) graph: TransitionGraph,
    /// Transition index → its compiled guard (`None`: no guard, passes).
    pub(crate) guards: Vec<Option<CompiledGuard>>,
    pub(crate) env_allow: Vec<String>,
}

impl Plan {
    pub(crate) fn new(pipeline: &Pipeline) -> Result<Self, RunError> {
        let var_names: Vec<String> = pipeline.vars.iter().map(|v| v.name.value.clone()).collect();
        let guards = pipeline
            .transitions
            .iter()
            .map(|t| {
                t.guard
                    .as_ref()
                    .map(|g| CompiledGuard::compile(g, &var_names))
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            graph: TransitionGraph::new(pipeline),
            guards,
            env_allow: pipeline.env_allow.iter().map(|e| e.value.clone()).collect(),
        })
    }
}

impl Plan {
    /// Whether any transition has a jq guard that the run's jq worker evaluates.
    pub(crate) fn uses_jq_worker(&self) -> bool {
        self.guards
            .iter()
            .flatten()
            .any(CompiledGuard::uses_jq_worker)
    }
}

/// What templates of an action or a guard may name, at `state` in `iteration`.
pub(crate) fn render_ctx<'a>(
    pipeline: &'a Pipeline,
    vars: &'a Vars,
    run_id: &'a str,
    state: &'a str,
    iteration: u32,
    env_allow: &'a [String],
) -> RenderContext<'a> {
    RenderContext {
        vars,
        env_allow,
        workflow: &pipeline.name.value,
        run_id,
        state,
        iteration,
    }
}
