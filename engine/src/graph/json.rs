//! The graph as data (`spur graph --format json`): states with their kind flags, every
//! transition with its guard in short, and what the analysis found. States are named by id,
//! transitions by declaration index. The shape is documented in the book (graph.md).

use serde::Serialize;

use super::{GuardSummary, SimplePaths, TransitionGraph};
use crate::pipeline::Pipeline;

/// What `spur graph --format json` prints: states, transitions and the checker's analyses.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GraphDocument {
    pub(crate) name: String,
    pub(crate) initial_state: String,
    pub(crate) states: Vec<StateEntry>,
    pub(crate) transitions: Vec<TransitionEntry>,
    /// Each cycle's state ids in declaration order.
    pub(crate) cycles: Vec<Vec<String>>,
    /// States not reachable from the initial state.
    pub(crate) unreachable: Vec<String>,
    /// States from which no terminal state is reachable.
    pub(crate) cannot_terminate: Vec<String>,
    /// Transitions after an unconditional one from the same state.
    pub(crate) shadowed: Vec<ShadowedEntry>,
    /// The simple paths from the initial state, when asked for (`--paths`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathsDocument>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct StateEntry {
    pub(crate) id: String,
    pub(crate) initial: bool,
    pub(crate) terminal: bool,
    pub(crate) failure: bool,
    pub(crate) pause: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct TransitionEntry {
    pub(crate) index: usize,
    pub(crate) from: String,
    pub(crate) to: String,
    /// `null` for a transition without guard.
    pub(crate) guard: Option<GuardEntry>,
    /// Place among the transitions of `from`, from 1 (the first that passes wins).
    pub(crate) rank: usize,
    pub(crate) shadowed: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct GuardEntry {
    pub(crate) kind: String,
    pub(crate) summary: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ShadowedEntry {
    pub(crate) transition: usize,
    pub(crate) shadowed_by: usize,
}

/// Simple paths from the initial state to terminal states, as state ids.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PathsDocument {
    /// The most paths asked for.
    pub(crate) limit: usize,
    /// The search stopped early: more paths may exist.
    pub(crate) truncated: bool,
    pub(crate) paths: Vec<Vec<String>>,
}

impl PathsDocument {
    /// The paths `found`, as state ids; `limit` is the most that were asked for.
    pub fn new(pipeline: &Pipeline, found: &SimplePaths, limit: usize) -> PathsDocument {
        PathsDocument {
            limit,
            truncated: found.truncated,
            paths: found.paths.iter().map(|p| ids(pipeline, p)).collect(),
        }
    }
}

impl GraphDocument {
    /// The document of `pipeline` and its `graph`.
    pub fn new(pipeline: &Pipeline, graph: &TransitionGraph) -> GraphDocument {
        let states = pipeline
            .states
            .iter()
            .enumerate()
            .map(|(i, state)| StateEntry {
                id: state.id.value.clone(),
                initial: graph.initial() == Some(i),
                terminal: graph.is_terminal(i),
                failure: graph.is_failure(i),
                pause: state.pause,
            })
            .collect();
        let transitions = pipeline
            .transitions
            .iter()
            .enumerate()
            .map(|(index, t)| {
                let rank = graph
                    .state_index(&t.from.value)
                    .and_then(|s| graph.outgoing(s).iter().position(|&x| x == index))
                    .map_or(0, |r| r + 1);
                TransitionEntry {
                    index,
                    from: t.from.value.clone(),
                    to: t.to.value.clone(),
                    guard: t.guard.as_ref().map(|g| {
                        let summary = GuardSummary::of(g);
                        GuardEntry {
                            kind: summary.kind,
                            summary: summary.summary,
                        }
                    }),
                    rank,
                    shadowed: graph.is_shadowed(index),
                }
            })
            .collect();
        GraphDocument {
            name: pipeline.name.value.clone(),
            initial_state: pipeline.initial_state.value.clone(),
            states,
            transitions,
            cycles: graph.cycles().iter().map(|c| ids(pipeline, c)).collect(),
            unreachable: ids(pipeline, &graph.unreachable_states()),
            cannot_terminate: ids(pipeline, &graph.states_that_cannot_terminate()),
            shadowed: graph
                .shadowed_transitions()
                .into_iter()
                .map(|s| ShadowedEntry {
                    transition: s.transition,
                    shadowed_by: s.shadowed_by,
                })
                .collect(),
            paths: None,
        }
    }
}

fn ids(pipeline: &Pipeline, states: &[usize]) -> Vec<String> {
    states
        .iter()
        .filter_map(|&i| pipeline.states.get(i))
        .map(|s| s.id.value.clone())
        .collect()
}
