//! The transition graph of a pipeline: states as nodes, transitions as edges (petgraph
//! `StableDiGraph`), plus each state's outgoing transitions in declaration order so the
//! runner picks the next transition in O(transitions of the current state). The checker asks
//! it for reachability, dead ends, cycles and shadowed transitions; `spur graph` renders it.

use std::collections::HashMap;

use petgraph::algo::tarjan_scc;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::{Dfs, EdgeRef, Reversed, Walker};

use crate::pipeline::{GuardKind, Pipeline, Transition};

mod dot;
mod json;
mod label;
mod layout;
mod mermaid;
mod svg;

pub use dot::{to_dot, to_dot_with_path};
pub use json::{GraphDocument, PathsDocument};
pub(crate) use label::{transition_label, GuardSummary};
pub use mermaid::to_mermaid;
pub use svg::{to_svg, RunPath};

/// Longest path (in states) that [`TransitionGraph::simple_paths`] follows; deeper paths are
/// cut and reported as truncated.
pub(crate) const MAX_PATH_STATES: usize = 256;

/// How many transition steps [`TransitionGraph::simple_paths`] may explore in total before it
/// gives up (and reports truncation): path enumeration is exponential in the worst case.
pub(crate) const PATH_SEARCH_BUDGET: usize = 200_000;

/// The graph of one pipeline. Built in time linear in states + transitions.
///
/// State indices are indices into `pipeline.states`, transition indices into
/// `pipeline.transitions`. A transition whose `from` or `to` names no state is not an edge
/// (the checker reports it); when only its `to` is unknown it is still listed by
/// `outgoing`, because the runner would try it.
#[derive(Debug, Clone)]
pub struct TransitionGraph {
    graph: StableDiGraph<usize, usize>,
    /// State index → node.
    nodes: Vec<NodeIndex>,
    /// State id → state index (the first declaration wins for a duplicated id).
    index: HashMap<String, usize>,
    /// State index → transition indices from it, in declaration order.
    outgoing: Vec<Vec<usize>>,
    terminal: Vec<bool>,
    failure: Vec<bool>,
    initial: Option<usize>,
    /// Transition index → the earlier unconditional transition from the same state that
    /// shadows it.
    shadowed_by: Vec<Option<usize>>,
}

/// A transition that can never be taken: an earlier transition from the same state passes
/// unconditionally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shadowed {
    pub(crate) transition: usize,
    pub(crate) shadowed_by: usize,
}

/// Simple paths from the initial state to terminal states.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimplePaths {
    /// State indices, initial first, a terminal state last.
    pub paths: Vec<Vec<usize>>,
    /// The search stopped early (path limit, depth limit or search budget): more paths may
    /// exist.
    pub truncated: bool,
}

/// A transition passes without condition: no guard, or guard kind `always`.
pub(crate) fn is_unconditional(transition: &Transition) -> bool {
    transition
        .guard
        .as_ref()
        .is_none_or(|g| matches!(g.kind.value, GuardKind::Always))
}

impl TransitionGraph {
    /// The graph of `pipeline`.
    pub fn new(pipeline: &Pipeline) -> TransitionGraph {
        let state_count = pipeline.states.len();
        let mut graph = StableDiGraph::with_capacity(state_count, pipeline.transitions.len());
        let mut index = HashMap::with_capacity(state_count);
        let mut nodes = Vec::with_capacity(state_count);
        for (i, state) in pipeline.states.iter().enumerate() {
            nodes.push(graph.add_node(i));
            index.entry(state.id.value.clone()).or_insert(i);
        }

        let mut outgoing = vec![Vec::new(); state_count];
        let mut unconditional = Vec::with_capacity(pipeline.transitions.len());
        for (t, transition) in pipeline.transitions.iter().enumerate() {
            unconditional.push(is_unconditional(transition));
            let Some(&from) = index.get(transition.from.value.as_str()) else {
                continue;
            };
            if let Some(list) = outgoing.get_mut(from) {
                list.push(t);
            }
            if let (Some(&to), Some(&a)) =
                (index.get(transition.to.value.as_str()), nodes.get(from))
            {
                if let Some(&b) = nodes.get(to) {
                    graph.add_edge(a, b, t);
                }
            }
        }

        let declared = |ids: &[crate::source::Located<String>]| {
            let mut flags = vec![false; state_count];
            for id in ids {
                if let Some(&i) = index.get(id.value.as_str()) {
                    flags[i] = true;
                }
            }
            flags
        };
        let mut terminal = declared(&pipeline.terminal_states);
        for (flag, out) in terminal.iter_mut().zip(&outgoing) {
            *flag |= out.is_empty();
        }
        let failure = declared(&pipeline.failure_states);
        let initial = index.get(pipeline.initial_state.value.as_str()).copied();

        let mut shadowed_by = vec![None; pipeline.transitions.len()];
        for out in &outgoing {
            let mut first_unconditional = None;
            for &t in out {
                match first_unconditional {
                    Some(by) => shadowed_by[t] = Some(by),
                    None if unconditional[t] => first_unconditional = Some(t),
                    None => {}
                }
            }
        }

        TransitionGraph {
            graph,
            nodes,
            index,
            outgoing,
            terminal,
            failure,
            initial,
            shadowed_by,
        }
    }

    /// Number of states (including ones with a duplicated id).
    pub fn state_count(&self) -> usize {
        self.nodes.len()
    }

    /// Index of the state with id `id`.
    pub fn state_index(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The initial state, when `initialState` names one.
    pub fn initial(&self) -> Option<usize> {
        self.initial
    }

    /// Transition indices from `state_index`, in declaration order (empty for an unknown
    /// index).
    pub(crate) fn outgoing(&self, state_index: usize) -> &[usize] {
        self.outgoing.get(state_index).map_or(&[], Vec::as_slice)
    }

    /// Declared in `terminalStates`, or without outgoing transitions
    /// (same rule as [`Pipeline::is_terminal`]).
    pub fn is_terminal(&self, state_index: usize) -> bool {
        self.terminal.get(state_index).copied().unwrap_or(false)
    }

    /// Listed in `failureStates`.
    pub fn is_failure(&self, state_index: usize) -> bool {
        self.failure.get(state_index).copied().unwrap_or(false)
    }

    /// States not reachable from the initial state, ascending. Empty when the initial state
    /// is unknown (the checker reports that instead).
    pub fn unreachable_states(&self) -> Vec<usize> {
        let Some(start) = self.initial.and_then(|i| self.nodes.get(i)) else {
            return Vec::new();
        };
        let mut reached = vec![false; self.nodes.len()];
        for node in Dfs::new(&self.graph, *start).iter(&self.graph) {
            reached[self.graph[node]] = true;
        }
        unmarked(&reached)
    }

    /// States from which no terminal state can be reached (reachable from the initial state
    /// or not), ascending.
    pub fn states_that_cannot_terminate(&self) -> Vec<usize> {
        let reversed = Reversed(&self.graph);
        let mut reaches_terminal = vec![false; self.nodes.len()];
        let mut dfs = Dfs::empty(reversed);
        for (i, node) in self.nodes.iter().enumerate() {
            if self.terminal[i] && !reaches_terminal[i] {
                dfs.move_to(*node);
                while let Some(n) = dfs.next(reversed) {
                    reaches_terminal[self.graph[n]] = true;
                }
            }
        }
        unmarked(&reaches_terminal)
    }

    /// Cycles: strongly connected components of more than one state, and states with a
    /// transition to themselves. Each cycle's states ascending; cycles ordered by their first
    /// state.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let mut cycles: Vec<Vec<usize>> = tarjan_scc(&self.graph)
            .into_iter()
            .filter(|scc| match scc.as_slice() {
                [single] => self.graph.contains_edge(*single, *single),
                _ => true,
            })
            .map(|scc| {
                let mut states: Vec<usize> = scc.into_iter().map(|n| self.graph[n]).collect();
                states.sort_unstable();
                states
            })
            .collect();
        cycles.sort_unstable();
        cycles
    }

    /// Transitions declared after an unconditional one from the same state, in transition
    /// order. Each is shadowed by the first unconditional transition before it.
    pub fn shadowed_transitions(&self) -> Vec<Shadowed> {
        self.shadowed_by
            .iter()
            .enumerate()
            .filter_map(|(transition, by)| {
                by.map(|shadowed_by| Shadowed {
                    transition,
                    shadowed_by,
                })
            })
            .collect()
    }

    /// Transition `t` comes after an unconditional transition from the same state.
    pub(crate) fn is_shadowed(&self, t: usize) -> bool {
        self.shadowed_by.get(t).is_some_and(Option::is_some)
    }

    /// Distinct successor states of `state` through transitions that can be taken (not
    /// shadowed), in the declaration order of the transitions leading to them.
    fn successors(&self, state: usize) -> Vec<usize> {
        let Some(&node) = self.nodes.get(state) else {
            return Vec::new();
        };
        // petgraph lists a node's edges newest first; sort by transition index instead.
        let mut edges: Vec<(usize, usize)> = self
            .graph
            .edges(node)
            .filter(|e| !self.is_shadowed(*e.weight()))
            .map(|e| (*e.weight(), self.graph[e.target()]))
            .collect();
        edges.sort_unstable();
        let mut seen = Vec::with_capacity(edges.len());
        for (_, to) in edges {
            if !seen.contains(&to) {
                seen.push(to);
            }
        }
        seen
    }

    /// Simple paths (no state twice) from the initial state to each terminal state, found
    /// depth-first following transitions in declaration order, at most `limit` of them. A
    /// path stops at the first terminal state it reaches; shadowed transitions are never
    /// taken, so no path uses one. `truncated` says the search stopped
    /// early: `limit` reached with more paths left, a path longer than `MAX_PATH_STATES`,
    /// or `PATH_SEARCH_BUDGET` steps explored.
    pub fn simple_paths(&self, limit: usize) -> SimplePaths {
        let mut result = SimplePaths::default();
        let Some(start) = self.initial else {
            return result;
        };
        let mut on_path = vec![false; self.nodes.len()];
        let mut path = vec![start];
        on_path[start] = true;
        // One frame per state on the path: its successors and the next one to try.
        let mut stack: Vec<(Vec<usize>, usize)> = Vec::new();
        if self.terminal[start] {
            if limit == 0 {
                result.truncated = true;
            } else {
                result.paths.push(path);
            }
            return result;
        }
        stack.push((self.successors(start), 0));
        let mut budget = PATH_SEARCH_BUDGET;

        while let Some((successors, next)) = stack.last_mut() {
            let Some(&to) = successors.get(*next) else {
                stack.pop();
                if let Some(left) = path.pop() {
                    on_path[left] = false;
                }
                continue;
            };
            *next += 1;
            if on_path[to] {
                continue;
            }
            if budget == 0 {
                result.truncated = true;
                break;
            }
            budget -= 1;
            if self.terminal[to] {
                if result.paths.len() == limit {
                    result.truncated = true;
                    break;
                }
                let mut found = path.clone();
                found.push(to);
                result.paths.push(found);
                continue;
            }
            if path.len() + 1 >= MAX_PATH_STATES {
                // Any path through `to` would be longer than the bound.
                result.truncated = true;
                continue;
            }
            path.push(to);
            on_path[to] = true;
            stack.push((self.successors(to), 0));
        }
        result
    }
}

/// Indices whose flag is false.
fn unmarked(flags: &[bool]) -> Vec<usize> {
    flags
        .iter()
        .enumerate()
        .filter(|(_, &f)| !f)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Guard, OnError, Options, State, DEFAULT_ITERATION_BOUND};
    use crate::source::{Located, SourceFile, Span};

    fn loc<T>(value: T) -> Located<T> {
        Located::new(value, Span::default())
    }

    /// A pipeline from state ids and `(from, to, guard kind)` transitions; `terminal` and
    /// `failure` as declared lists.
    fn pipeline(
        initial: &str,
        states: &[&str],
        transitions: &[(&str, &str, Option<&str>)],
        terminal: &[&str],
        failure: &[&str],
    ) -> Pipeline {
        Pipeline {
            source: SourceFile::new("t.yaml", ""),
            dialect: Default::default(),
            name: loc("t".to_owned()),
            version: None,
            description: None,
            initial_state: loc(initial.to_owned()),
            terminal_states: terminal.iter().map(|s| loc((*s).to_owned())).collect(),
            failure_states: failure.iter().map(|s| loc((*s).to_owned())).collect(),
            iteration_bound: loc(DEFAULT_ITERATION_BOUND),
            default_on_error: loc(OnError::Fail),
            vars: Vec::new(),
            env_allow: Vec::new(),
            secrets: Vec::new(),
            states: states
                .iter()
                .map(|id| State {
                    id: loc((*id).to_owned()),
                    description: None,
                    pause: false,
                    on_enter: Vec::new(),
                    on_exit: Vec::new(),
                    span: Span::default(),
                })
                .collect(),
            transitions: transitions
                .iter()
                .map(|(from, to, guard)| Transition {
                    from: loc((*from).to_owned()),
                    to: loc((*to).to_owned()),
                    description: None,
                    trigger: None,
                    guard: guard.map(|kind| {
                        Guard::new(loc(kind.to_owned()), Options::default(), Span::default())
                    }),
                    terminal_reason: None,
                    span: Span::default(),
                })
                .collect(),
        }
    }

    /// precheck → implement ⇄ review → done | failed
    fn review_loop() -> Pipeline {
        pipeline(
            "precheck",
            &["precheck", "implement", "review", "done", "failed"],
            &[
                ("precheck", "implement", Some("shell")),
                ("precheck", "failed", Some("always")),
                ("implement", "review", None),
                ("review", "done", Some("jq")),
                ("review", "implement", Some("shell")),
                ("review", "failed", Some("always")),
            ],
            &["done", "failed"],
            &["failed"],
        )
    }

    #[test]
    fn outgoing_lists_transitions_of_a_state_in_declaration_order() {
        let p = review_loop();
        let g = TransitionGraph::new(&p);
        let review = g.state_index("review").unwrap();
        assert_eq!(g.outgoing(review), &[3, 4, 5]);
        assert_eq!(g.outgoing(g.state_index("done").unwrap()), &[] as &[usize]);
        assert_eq!(g.outgoing(99), &[] as &[usize]);
        assert_eq!(g.state_index("nope"), None);
    }

    #[test]
    fn unknown_endpoints_are_not_edges_but_a_known_source_still_lists_them() {
        let p = pipeline(
            "a",
            &["a", "b"],
            &[
                ("a", "ghost", Some("shell")),
                ("ghost", "b", None),
                ("a", "b", None),
            ],
            &[],
            &[],
        );
        let g = TransitionGraph::new(&p);
        assert_eq!(g.outgoing(0), &[0, 2]);
        assert_eq!(g.unreachable_states(), Vec::<usize>::new());
        assert!(g.is_terminal(1));
        assert!(!g.is_terminal(0));
    }

    #[test]
    fn finds_states_unreachable_from_the_initial_state() {
        let p = pipeline(
            "a",
            &["a", "b", "island", "c"],
            &[("a", "b", None), ("island", "c", None)],
            &[],
            &[],
        );
        let g = TransitionGraph::new(&p);
        assert_eq!(g.unreachable_states(), vec![2, 3]);
    }

    #[test]
    fn no_unreachable_states_are_reported_when_the_initial_state_is_unknown() {
        let p = pipeline("ghost", &["a", "b"], &[("a", "b", None)], &[], &[]);
        let g = TransitionGraph::new(&p);
        assert_eq!(g.initial(), None);
        assert!(g.unreachable_states().is_empty());
        assert_eq!(g.simple_paths(10), SimplePaths::default());
    }

    #[test]
    fn finds_states_that_cannot_reach_a_terminal() {
        // spin ⇄ loop never leave; stuck → spin; a → done.
        let p = pipeline(
            "a",
            &["a", "spin", "loop", "stuck", "done"],
            &[
                ("a", "done", Some("shell")),
                ("a", "spin", None),
                ("spin", "loop", None),
                ("loop", "spin", None),
                ("stuck", "spin", None),
            ],
            &["done"],
            &[],
        );
        let g = TransitionGraph::new(&p);
        assert_eq!(g.states_that_cannot_terminate(), vec![1, 2, 3]);
    }

    #[test]
    fn a_state_without_outgoing_transitions_counts_as_terminal() {
        let p = pipeline("a", &["a", "end"], &[("a", "end", None)], &[], &[]);
        let g = TransitionGraph::new(&p);
        assert!(g.is_terminal(1));
        assert!(g.states_that_cannot_terminate().is_empty());
    }

    #[test]
    fn cycles_are_multi_state_components_and_self_loops() {
        let p = pipeline(
            "a",
            &["a", "b", "c", "retry", "done"],
            &[
                ("a", "b", Some("shell")),
                ("b", "c", Some("shell")),
                ("c", "b", Some("shell")),
                ("c", "retry", Some("shell")),
                ("retry", "retry", Some("shell")),
                ("retry", "done", None),
            ],
            &["done"],
            &[],
        );
        let g = TransitionGraph::new(&p);
        assert_eq!(g.cycles(), vec![vec![1, 2], vec![3]]);
    }

    #[test]
    fn an_acyclic_pipeline_has_no_cycles() {
        let p = pipeline("a", &["a", "b"], &[("a", "b", None)], &[], &[]);
        assert!(TransitionGraph::new(&p).cycles().is_empty());
    }

    #[test]
    fn transitions_after_an_unconditional_one_are_shadowed() {
        let p = pipeline(
            "a",
            &["a", "b", "c", "d"],
            &[
                ("a", "b", Some("shell")),
                ("a", "c", Some("always")),
                ("b", "d", None),
                ("a", "d", Some("shell")),
                ("a", "b", None),
                ("b", "c", Some("jq")),
            ],
            &[],
            &[],
        );
        let g = TransitionGraph::new(&p);
        assert_eq!(
            g.shadowed_transitions(),
            vec![
                Shadowed {
                    transition: 3,
                    shadowed_by: 1
                },
                Shadowed {
                    transition: 4,
                    shadowed_by: 1
                },
                Shadowed {
                    transition: 5,
                    shadowed_by: 2
                },
            ]
        );
    }

    #[test]
    fn a_guarded_fallback_list_shadows_nothing() {
        let g = TransitionGraph::new(&review_loop());
        assert!(g.shadowed_transitions().is_empty());
    }

    #[test]
    fn simple_paths_follow_declaration_order_and_never_repeat_a_state() {
        let p = review_loop();
        let g = TransitionGraph::new(&p);
        let paths = g.simple_paths(100);
        let named: Vec<Vec<&str>> = paths
            .paths
            .iter()
            .map(|path| {
                path.iter()
                    .map(|&i| p.states[i].id.value.as_str())
                    .collect()
            })
            .collect();
        assert_eq!(
            named,
            vec![
                vec!["precheck", "implement", "review", "done"],
                vec!["precheck", "implement", "review", "failed"],
                vec!["precheck", "failed"],
            ]
        );
        assert!(!paths.truncated);
    }

    #[test]
    fn simple_paths_never_take_a_shadowed_transition() {
        let p = pipeline(
            "a",
            &["a", "b", "done"],
            &[
                ("a", "b", None),
                ("a", "done", Some("shell")),
                ("b", "done", None),
            ],
            &[],
            &[],
        );
        let g = TransitionGraph::new(&p);
        assert_eq!(g.simple_paths(10).paths, vec![vec![0, 1, 2]]);
    }

    #[test]
    fn simple_paths_say_when_the_limit_cut_them_short() {
        let g = TransitionGraph::new(&review_loop());
        let paths = g.simple_paths(2);
        assert_eq!(paths.paths.len(), 2);
        assert!(paths.truncated);
        // Exactly as many paths as exist is not truncation.
        let exact = g.simple_paths(3);
        assert_eq!(exact.paths.len(), 3);
        assert!(!exact.truncated);
    }

    #[test]
    fn simple_paths_stop_at_the_search_budget_on_exponential_graphs() {
        // A ladder of diamonds: 2^40 paths to the end, which no search could list.
        let mut states = Vec::new();
        let mut transitions = Vec::new();
        let names: Vec<(String, String, String)> = (0..40)
            .map(|i| (format!("s{i}"), format!("l{i}"), format!("r{i}")))
            .collect();
        for (s, l, r) in &names {
            states.extend([s.as_str(), l.as_str(), r.as_str()]);
        }
        states.push("end");
        for (i, (s, l, r)) in names.iter().enumerate() {
            let next = names.get(i + 1).map_or("end", |n| n.0.as_str());
            transitions.push((s.as_str(), l.as_str(), Some("shell")));
            transitions.push((s.as_str(), r.as_str(), None));
            transitions.push((l.as_str(), next, None));
            transitions.push((r.as_str(), next, None));
        }
        let p = pipeline("s0", &states, &transitions, &[], &[]);
        let g = TransitionGraph::new(&p);
        let paths = g.simple_paths(usize::MAX);
        assert!(paths.truncated);
        assert!(!paths.paths.is_empty());
        assert!(paths.paths.iter().all(|p| p.len() == 81));
    }

    #[test]
    fn a_terminal_initial_state_is_its_own_path() {
        let p = pipeline("only", &["only"], &[], &[], &[]);
        let g = TransitionGraph::new(&p);
        assert_eq!(g.simple_paths(5).paths, vec![vec![0]]);
        assert!(g.simple_paths(0).truncated);
    }

    #[test]
    fn failure_states_are_flagged() {
        let p = review_loop();
        let g = TransitionGraph::new(&p);
        assert!(g.is_failure(g.state_index("failed").unwrap()));
        assert!(!g.is_failure(g.state_index("done").unwrap()));
        assert!(g.is_terminal(g.state_index("done").unwrap()));
    }
}
