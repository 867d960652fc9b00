//! What a verify run runs and in which order: a topological order of `needs` (petgraph),
//! ties broken by the order the gates were given in, so the same config always yields the
//! same order (a cycle is a configuration error naming every gate on it) — and, for a
//! task, the gates planned from its task file: `evidence-command:<AC id>` for every
//! acceptance criterion that names a command (see [`evidence_command_gates`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;

use super::config_error::ConfigProblems;
use super::gate::{Gate, GateCommand, GateSeverity, DEFAULT_TIMEOUT};
use crate::answer::ac_identity::{AcIndex, Resolution};
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::task_file::{first_code_span, TaskFile};
use crate::verdict::{Artifact, EvidenceKind};

/// The name prefix of the gates planned from a task file's criteria.
pub(crate) const EVIDENCE_COMMAND_PREFIX: &str = "evidence-command:";

/// `evidence-command:<AC id>`: the gate that runs the command of criterion `id`.
pub(crate) fn evidence_command_gate_name(id: &str) -> String {
    format!("{EVIDENCE_COMMAND_PREFIX}{id}")
}

/// The gate names a task file makes required: `evidence-command:<AC id>` for each
/// criterion that names a command, in file order. (A row's own command, planned when the
/// criterion names none, depends on the artifact and is not required.)
pub(crate) fn commanded_gate_names(task: &TaskFile) -> Vec<String> {
    task.commanded()
        .map(|(ac, _)| evidence_command_gate_name(&ac.id))
        .collect()
}

/// The gates `spur verify --wbs` plans from the task file, in file order. A criterion that
/// names a command runs exactly that command, from the task file — whatever evidence type
/// the artifact's row claims, and never a value of the artifact. A criterion that names
/// none, whose row in `artifact` claims evidence type `command`, runs the first code span
/// of that row's evidence (the first such row). Each runs with `sh -c` in the project root,
/// with the default gate timeout, as a blocker that may write (so it runs alone, after the
/// configured gates).
pub(crate) fn evidence_command_gates(task: &TaskFile, artifact: Option<&Artifact>) -> Vec<Gate> {
    let mut from_rows: Vec<Option<String>> = vec![None; task.acceptance.len()];
    if let Some(artifact) = artifact {
        let index = AcIndex::new(&task.acceptance);
        for row in &artifact.acceptance_criteria {
            let claims_command = row
                .evidence_type
                .as_ref()
                .is_some_and(|t| t.kinds().contains(&EvidenceKind::Command));
            if !claims_command {
                continue;
            }
            let Resolution::One(i) = index.resolve(&row.id) else {
                continue;
            };
            let Some(slot) = from_rows.get_mut(i) else {
                continue;
            };
            if slot.is_none() {
                *slot = row
                    .evidence
                    .as_deref()
                    .and_then(first_code_span)
                    .map(str::to_owned);
            }
        }
    }
    task.acceptance
        .iter()
        .zip(from_rows)
        .filter_map(|(ac, from_row)| {
            let command = ac.command.clone().or(from_row)?;
            Some(Gate {
                name: evidence_command_gate_name(&ac.id),
                command: GateCommand::Shell(command),
                needs: Vec::new(),
                timeout: DEFAULT_TIMEOUT,
                read_only: false,
                severity: GateSeverity::Blocker,
                enabled: true,
                expect_file: None,
                findings_file: None,
                span: Span::default(),
                needs_span: Span::default(),
            })
        })
        .collect()
}

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
    fn plans_a_gate_per_commanded_criterion_and_per_command_row() {
        use crate::task_file::parse_task_file;
        use crate::verdict::{parse_artifact, ArtifactOutcome};
        use crate::verify::gate::GateCommand;
        let task = parse_task_file(
            Path::new("t.md"),
            "## Requirements\n- R1 x\n## Acceptance Criteria\n\
             - [ ] AC-1: `./check` passes\n- [ ] AC-2: it is polite\n- [ ] AC-3: it is short\n",
        )
        .unwrap();
        let ArtifactOutcome::Valid(artifact) = parse_artifact(
            br#"{"wbs":"T","verdict":"PASS","requirements":[{"id":"R1","status":"MET","evidence":"a:1"}],
                "acceptanceCriteria":[
                  {"id":"AC-1","status":"MET","evidenceType":"command","evidence":"`true`"},
                  {"id":"AC-2","status":"MET","evidenceType":"test+command","evidence":"`cargo test polite`"},
                  {"id":"AC-3","status":"MET","evidenceType":"static-ref","evidence":"`rm -rf x`"}]}"#,
        ) else {
            panic!("valid artifact")
        };
        let planned: Vec<_> = super::evidence_command_gates(&task, Some(&artifact))
            .into_iter()
            .map(|g| (g.name, g.command, g.read_only))
            .collect();
        let shell = |c: &str| GateCommand::Shell(c.to_owned());
        assert_eq!(
            planned,
            [
                ("evidence-command:AC-1".to_owned(), shell("./check"), false),
                (
                    "evidence-command:AC-2".to_owned(),
                    shell("cargo test polite"),
                    false
                ),
            ]
        );
        assert_eq!(
            super::commanded_gate_names(&task),
            ["evidence-command:AC-1"]
        );
        assert_eq!(super::evidence_command_gates(&task, None).len(), 1);
    }

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
