//! `spur run --dry-run`: walk the pipeline without running any action or any guard that
//! could have an effect. Guards that are decidable without running anything (no guard,
//! `always`, `never`, and `all`/`any`/`not` over those) are followed; the first state
//! whose choice depends on anything else is reported as a branch point with its candidates.

use serde::Serialize;

use crate::graph::TransitionGraph;
use crate::pipeline::{
    CheckedPipeline, CombinatorOptions, Guard, GuardKind, NestedGuard, NestedGuards,
};

/// A state the dry run passes through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DryStep {
    /// The state's id.
    pub state: String,
    /// The state declares `pause: true`: a real run would stop here.
    pub pauses: bool,
    /// onEnter action kinds, in order (not run).
    pub actions: Vec<String>,
}

/// A transition a real run might take out of a branch point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Its target state.
    pub to: String,
    /// Its guard's kind (`none` when unguarded).
    pub guard: String,
    /// Its `description`, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// Where the dry run stops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "stop", rename_all = "kebab-case")]
pub enum DryStop {
    /// The path reaches a terminal state.
    Terminal {
        /// The terminal state.
        state: String,
        /// It is a failure state.
        failure: bool,
    },
    /// The choice at `state` depends on guards that only a real run can evaluate.
    BranchPoint {
        /// The state with the choice.
        state: String,
        /// The transitions that might be taken, in the order they are tried.
        candidates: Vec<Candidate>,
    },
    /// No transition out of `state` can pass.
    NoPassingTransition {
        /// The state with no way on.
        state: String,
    },
    /// The decidable path comes back to `state`: it would loop until the iteration bound.
    Loop {
        /// The state reached again.
        state: String,
    },
}

/// What `spur run --dry-run` shows: the path that can be decided without running anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DryRun {
    /// The pipeline's name.
    pub pipeline: String,
    /// The states passed through, from the initial state.
    pub path: Vec<DryStep>,
    /// Where and why the walk stopped.
    #[serde(flatten)]
    pub stop: DryStop,
}

/// Decide what can be decided. `None`: the guard needs a real run.
fn decidable(guard: Option<&Guard>) -> Option<bool> {
    guard.map_or(Some(true), |g| decide(&g.kind.value))
}

fn decide(kind: &GuardKind) -> Option<bool> {
    let nested = |options: &CombinatorOptions| -> Option<Vec<bool>> {
        let NestedGuards::List(items) = &options.guards else {
            return None;
        };
        items
            .iter()
            .map(|item| match item {
                NestedGuard::Guard(g) => decide(&g.kind.value),
                NestedGuard::NotAMapping | NestedGuard::NoKind => None,
            })
            .collect()
    };
    match kind {
        GuardKind::Always => Some(true),
        GuardKind::Never => Some(false),
        GuardKind::All(o) => nested(o).map(|v| v.iter().all(|b| *b)),
        GuardKind::Any(o) => nested(o).map(|v| v.iter().any(|b| *b)),
        GuardKind::Not(o) => nested(o).map(|v| !v.iter().all(|b| *b)),
        _ => None,
    }
}

/// Walk `pipeline` from its initial state.
pub fn dry_run(checked: &CheckedPipeline) -> DryRun {
    let pipeline = checked.pipeline();
    let graph = TransitionGraph::new(pipeline);
    let mut path = Vec::new();
    let mut seen = vec![false; pipeline.states.len()];
    let mut current = graph.initial();
    let stop = loop {
        let Some(s) = current else {
            break DryStop::NoPassingTransition {
                state: pipeline.initial_state.value.clone(),
            };
        };
        let Some(state) = pipeline.states.get(s) else {
            break DryStop::NoPassingTransition {
                state: String::new(),
            };
        };
        let id = state.id.value.clone();
        if seen.get(s).copied().unwrap_or(false) {
            break DryStop::Loop { state: id };
        }
        if let Some(flag) = seen.get_mut(s) {
            *flag = true;
        }
        path.push(DryStep {
            state: id.clone(),
            pauses: state.pause,
            actions: state
                .on_enter
                .iter()
                .map(|a| a.kind.value.to_string())
                .collect(),
        });
        if graph.is_terminal(s) {
            break DryStop::Terminal {
                state: id,
                failure: graph.is_failure(s),
            };
        }
        let mut candidates = Vec::new();
        let mut next = None;
        for &t in graph.outgoing(s) {
            let Some(transition) = pipeline.transitions.get(t) else {
                continue;
            };
            let decision = decidable(transition.guard.as_ref());
            match decision {
                Some(false) => continue,
                Some(true) if candidates.is_empty() => {
                    next = graph.state_index(&transition.to.value);
                    break;
                }
                _ => {
                    candidates.push(Candidate {
                        to: transition.to.value.clone(),
                        guard: transition
                            .guard
                            .as_ref()
                            .map_or_else(|| "none".to_owned(), |g| g.kind.value.to_string()),
                        description: transition.description.as_ref().map(|d| d.value.clone()),
                    });
                    if decision == Some(true) {
                        break;
                    }
                }
            }
        }
        if !candidates.is_empty() {
            break DryStop::BranchPoint {
                state: id,
                candidates,
            };
        }
        match next {
            Some(n) => current = Some(n),
            None => break DryStop::NoPassingTransition { state: id },
        }
    };
    DryRun {
        pipeline: pipeline.name.value.clone(),
        path,
        stop,
    }
}
