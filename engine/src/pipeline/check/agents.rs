//! Agents against the project: every `agent.run` names an agent that `.spur/config.yaml`
//! maps to a command (the step's `agent`, or `defaults.agent` when it names none). Checked
//! only where there is a configuration file to check against: `spur check` of a pipeline
//! outside any project says nothing about agents.

use crate::diagnostic::{did_you_mean, Code, Diagnostic};
use crate::pipeline::action_kind::ActionKind;
use crate::pipeline::model::Pipeline;
use crate::pipeline::templated::Templated;
use crate::run::agent_config::read_agents_config;
use crate::source::{Located, Span};
use crate::store::state_dir::StateDir;
use crate::template::{Segment, Template};

/// Warnings for the `agent.run` steps of `pipeline` whose agent the configuration of
/// `state_dir` does not map. A templated agent is checked by the default of the var it
/// names (the agent a run gets without `--var`); any other template is not checked.
pub fn check_agents(pipeline: &Pipeline, state_dir: &StateDir) -> Vec<Diagnostic> {
    let path = state_dir.config_path();
    // No file: no project to check against. A file that cannot be read fails each agent
    // step when it runs, with the reason; `spur agent`'s business, not the pipeline's.
    let Ok(Some(config)) = read_agents_config(&path) else {
        return Vec::new();
    };
    let mapped: Vec<&str> = config.agents.iter().map(|(n, _)| n.as_str()).collect();
    let mut out = Vec::new();
    for action in pipeline.actions() {
        let ActionKind::AgentRun(options) = &action.kind.value else {
            continue;
        };
        let (name, span, how) = match options.agent.as_ref().and_then(Templated::written_str) {
            Some(written) => match agent_name(pipeline, written) {
                Some((name, how)) => (name, written.span, how),
                None => continue,
            },
            None => match &config.default_agent {
                Some(name) => (name.clone(), action.kind.span, "`defaults.agent`"),
                None => {
                    let d = Diagnostic::warning(
                        Code::CheckUnmappedAgent,
                        &pipeline.source,
                        action.kind.span,
                        "`agent.run` names no agent and the project sets no default",
                    )
                    .label("no `agent`")
                    .help(format!(
                        "name one (`agent: NAME`), or set `defaults: {{ agent: NAME }}` in {}",
                        path.display()
                    ));
                    out.push(d);
                    continue;
                }
            },
        };
        if config.agent(&name).is_some() {
            continue;
        }
        let d = Diagnostic::warning(
            Code::CheckUnmappedAgent,
            &pipeline.source,
            span,
            format!(
                "agent `{name}` ({how}) has no command in {}",
                path.display()
            ),
        )
        .label("not under `agents:`");
        let d = match did_you_mean(&name, mapped.iter().copied()) {
            Some(s) => d.help(format!("did you mean `{s}`?")),
            None if mapped.is_empty() => d.help(format!(
                "map it: `agents: {{ {name}: {{ command: \"…\" }} }}`"
            )),
            None => d.help(format!(
                "mapped agents: {}; or map it: `agents: {{ {name}: {{ command: \"…\" }} }}`",
                mapped.join(", ")
            )),
        };
        out.push(d);
    }
    out
}

/// The agent `written` names, with how it was found: itself, or the default of the one var
/// it consists of.
fn agent_name(pipeline: &Pipeline, written: &Located<String>) -> Option<(String, &'static str)> {
    if !written.value.contains("${") {
        return Some((written.value.clone(), "as written"));
    }
    let template = Template::parse(&Located::new(written.value.clone(), Span::default())).ok()?;
    match template.segments.as_slice() {
        [Segment::Var(var)] => pipeline
            .var_default(&var.value)
            .filter(|d| !d.is_empty())
            .map(|d| (d.to_owned(), "the default of its var")),
        _ => None,
    }
}
