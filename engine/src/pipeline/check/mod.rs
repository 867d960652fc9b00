//! The static checker: every finding about a loaded pipeline,
//! as diagnostics with stable codes. One file per group of checks; `spur check` renders
//! them, and [`CheckedPipeline`] exists only for pipelines without errors.

mod agents;
mod checked;
mod decision;
pub(crate) mod jq;
mod kinds;
mod reachability;
mod shell_jq;
mod shell_templates;
mod states;
mod templates;
mod vars;

pub use agents::check_agents;
pub use checked::CheckedPipeline;

use crate::diagnostic::Diagnostic;
use crate::pipeline::model::{Action, Pipeline};

/// Vars the runtime always provides (the TypeScript runtime injects them too).
pub(crate) const RUNTIME_VARS: &[&str] = &["__runId", "__hitlAnswer", "__hitlInput"];

/// What the check groups share: the pipeline and the names templates may use.
struct Context<'p> {
    pipeline: &'p Pipeline,
    /// Declared vars, runtime vars, and vars that actions set.
    vars: Vec<&'p str>,
    diagnostics: Vec<Diagnostic>,
}

impl<'p> Context<'p> {
    fn new(pipeline: &'p Pipeline) -> Self {
        let mut vars: Vec<&str> = pipeline
            .vars
            .iter()
            .map(|v| v.name.value.as_str())
            .collect();
        vars.extend(RUNTIME_VARS);
        for action in pipeline.actions() {
            for var in action.kind.value.vars_set() {
                vars.push(var.value.as_str());
            }
        }
        vars.sort_unstable();
        vars.dedup();
        Self {
            pipeline,
            vars,
            diagnostics: Vec::new(),
        }
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }
}

impl Pipeline {
    /// Every action of every state (onEnter then onExit), in declaration order.
    pub(crate) fn actions(&self) -> impl Iterator<Item = &Action> {
        self.states
            .iter()
            .flat_map(|s| s.on_enter.iter().chain(s.on_exit.iter()))
    }
}

/// Check a loaded pipeline. Findings are ordered by their place in the file.
pub fn check(pipeline: &Pipeline) -> Vec<Diagnostic> {
    let mut cx = Context::new(pipeline);
    states::check(&mut cx);
    vars::check(&mut cx);
    kinds::check(&mut cx);
    decision::check(&mut cx);
    templates::check(&mut cx);
    shell_templates::check(&mut cx);
    reachability::check(&mut cx);
    shell_jq::check(&mut cx);
    let mut diagnostics = cx.diagnostics;
    sort(&mut diagnostics);
    diagnostics
}

/// Order findings by place in the file, then severity (errors first).
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        a.primary
            .span
            .offset
            .cmp(&b.primary.span.offset)
            .then(b.severity.cmp(&a.severity))
            .then(a.code.as_str().cmp(b.code.as_str()))
    });
}
