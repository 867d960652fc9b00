//! The order gates run in: a topological order of `needs` (petgraph), ties broken by the
//! order the gates were given in, so the same config always yields the same order. A cycle
//! is a configuration error naming every gate on it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;

use super::config_error::ConfigProblems;
use super::gate::Gate;
use crate::diagnostic::Diagnostic;
use crate::source::SourceFile;

/// Sort `gates` so that every gate comes after the gates it needs. Needs must name gates
/// in the list (the config checks that first; unknown names are ignored here).
pub(crate) fn topological_order(
    gates: Vec<Gate>,
    source: &SourceFile,
) -> Result<Vec<Gate>, Vec<Diagnostic>> {
    let graph = needs_graph(&gates);
    let mut indegree: Vec<usize> = graph
        .node_indices()
        .map(|n| graph.neighbors_directed(n, Direction::Incoming).count())
        .collect();
    let mut ready: BinaryHeap<Reverse<usize>> = indegree
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == 0)
        .map(|(i, _)| Reverse(i))
        .collect();
    let mut order = Vec::with_capacity(gates.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for next in graph.neighbors_directed(NodeIndex::new(i), Direction::Outgoing) {
            let d = &mut indegree[next.index()];
            *d -= 1;
            if *d == 0 {
                ready.push(Reverse(next.index()));
            }
        }
    }
    if order.len() < gates.len() {
        return Err(cycles(&graph, &gates, source));
    }
    let mut slots: Vec<Option<Gate>> = gates.into_iter().map(Some).collect();
    Ok(order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect())
}

/// Edges point from a needed gate to the gate that needs it.
fn needs_graph(gates: &[Gate]) -> DiGraph<usize, ()> {
    let mut graph = DiGraph::with_capacity(gates.len(), gates.len());
    for i in 0..gates.len() {
        graph.add_node(i);
    }
    for (i, gate) in gates.iter().enumerate() {
        for need in &gate.needs {
            if let Some(j) = gates.iter().position(|g| &g.name == need) {
                graph.update_edge(NodeIndex::new(j), NodeIndex::new(i), ());
            }
        }
    }
    graph
}

fn cycles(graph: &DiGraph<usize, ()>, gates: &[Gate], source: &SourceFile) -> Vec<Diagnostic> {
    let problems = ConfigProblems { source };
    let mut errors = Vec::new();
    for mut component in petgraph::algo::tarjan_scc(graph) {
        let looped = component.len() > 1
            || component
                .first()
                .is_some_and(|n| graph.contains_edge(*n, *n));
        if !looped {
            continue;
        }
        component.sort();
        let cycle = cycle_through(graph, &component);
        let names: Vec<String> = cycle
            .iter()
            .chain(cycle.first())
            .filter_map(|n| gates.get(n.index()))
            .map(|g| g.name.clone())
            .collect();
        let spans: Vec<_> = cycle
            .iter()
            .filter_map(|n| gates.get(n.index()))
            .map(|g| g.needs_span)
            .collect();
        errors.push((names.first().cloned(), problems.needs_cycle(&names, &spans)));
    }
    errors.sort_by(|a, b| a.0.cmp(&b.0));
    errors.into_iter().map(|(_, d)| d).collect()
}

/// One simple cycle inside a strongly connected component, starting at its first node and
/// following `needs` (a → b: a needs b).
fn cycle_through(graph: &DiGraph<usize, ()>, component: &[NodeIndex]) -> Vec<NodeIndex> {
    let Some(&start) = component.first() else {
        return Vec::new();
    };
    // Depth-first search for a path back to `start`, staying inside the component.
    let mut path = vec![start];
    let mut stack = vec![graph
        .neighbors_directed(start, Direction::Incoming)
        .collect::<Vec<_>>()];
    let mut seen = vec![start];
    while let Some(frontier) = stack.last_mut() {
        let Some(next) = frontier.pop() else {
            stack.pop();
            path.pop();
            continue;
        };
        if next == start {
            return path;
        }
        if !component.contains(&next) || seen.contains(&next) {
            continue;
        }
        seen.push(next);
        path.push(next);
        stack.push(
            graph
                .neighbors_directed(next, Direction::Incoming)
                .collect(),
        );
    }
    component.to_vec()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::diagnostic::Code;
    use crate::verify::config::VerifyConfig;

    #[test]
    fn orders_by_needs_then_by_declaration() {
        let config = VerifyConfig::parse(
            Path::new("c.yaml"),
            "verify:\n  gates:\n    c: {command: x, needs: [b]}\n    a: {command: x}\n    b: {command: x, needs: [a]}\n    d: {command: x}\n",
        )
        .unwrap();
        let names: Vec<_> = config.gates.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
    }

    #[test]
    fn a_cycle_is_an_error_naming_its_gates_and_spans() {
        let text = "verify:\n  gates:\n    a: {command: x, needs: [c]}\n    b: {command: x, needs: [a]}\n    c: {command: x, needs: [b]}\n    d: {command: x, needs: [d]}\n    e: {command: x}\n";
        let err = VerifyConfig::parse(Path::new("c.yaml"), text).unwrap_err();
        let cycles: Vec<_> = err
            .diagnostics()
            .iter()
            .map(|d| {
                assert_eq!(d.code, Code::VerifyNeedsCycle);
                let spans = std::iter::once(&d.primary).chain(&d.secondary);
                for label in spans {
                    assert!(text[label.span.offset..].starts_with('['), "{label:?}");
                }
                (d.message.clone(), d.secondary.len() + 1)
            })
            .collect();
        assert_eq!(
            cycles,
            [
                (
                    "gates need each other in a cycle: a → c → b → a (a → b: a needs b)".to_owned(),
                    3
                ),
                (
                    "gates need each other in a cycle: d → d (a → b: a needs b)".to_owned(),
                    1
                ),
            ]
        );
    }
}
