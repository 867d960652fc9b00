//! Graphviz DOT: states in declaration order (the initial one marked by an arrow from a dot,
//! success terminals green double circles, failure terminals red double octagons, pause
//! states dashed), then one edge per transition labelled with its guard.

use std::fmt::Write;

use super::{transition_label, RunPath, TransitionGraph};
use crate::pipeline::Pipeline;

const SUCCESS: &str = r##"shape=doublecircle, style=filled, color="#2e7d32", fillcolor="#c8e6c9""##;
const FAILURE: &str =
    r##"shape=doubleoctagon, style=filled, color="#c62828", fillcolor="#ffcdd2""##;
const PAUSE: &str = r#"style="rounded,dashed""#;
const SHADOWED: &str = r#"style=dotted, color=gray50, fontcolor=gray50"#;

/// The pipeline as a DOT digraph. Nodes are named `s0`, `s1`… by state index (labels carry
/// the ids), so any id is safe; transitions whose `from` or `to` is unknown are left out.
pub fn to_dot(pipeline: &Pipeline, graph: &TransitionGraph) -> String {
    to_dot_with_path(pipeline, graph, None)
}

/// [`to_dot`] with a run's path drawn over it: the transitions it took in blue, the state it
/// is in (or ended in) ringed in orange.
pub fn to_dot_with_path(
    pipeline: &Pipeline,
    graph: &TransitionGraph,
    path: Option<&RunPath>,
) -> String {
    let taken = |t: usize| path.is_some_and(|p| p.taken.contains(&t));
    let current = path
        .and_then(|p| p.current.as_deref())
        .and_then(|id| graph.state_index(id));
    let mut out = String::new();
    let name = quote(&pipeline.name.value);
    // Writing into a String cannot fail.
    let _ = writeln!(out, "digraph {name} {{");
    let _ = writeln!(out, "  label={name};");
    let _ = writeln!(out, "  labelloc=t;");
    let _ = writeln!(
        out,
        "  node [shape=box, style=rounded, fontname=\"Helvetica\"];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];");
    if let Some(initial) = graph.initial() {
        let _ = writeln!(out, "  start [shape=point, width=0.15, label=\"\"];");
        let _ = writeln!(out, "  start -> s{initial};");
    }
    for (i, state) in pipeline.states.iter().enumerate() {
        let mut label = state.id.value.clone();
        let style = if graph.is_terminal(i) && graph.is_failure(i) {
            FAILURE
        } else if graph.is_terminal(i) {
            SUCCESS
        } else if state.pause {
            label.push_str("\n(pause)");
            PAUSE
        } else {
            ""
        };
        let separator = if style.is_empty() { "" } else { ", " };
        let here = if current == Some(i) {
            r##", penwidth=4, color="#ef6c00""##
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  s{i} [label={}{separator}{style}{here}];",
            quote(&label)
        );
    }
    for (t, transition) in pipeline.transitions.iter().enumerate() {
        let (Some(from), Some(to)) = (
            graph.state_index(&transition.from.value),
            graph.state_index(&transition.to.value),
        ) else {
            continue;
        };
        let label = transition_label(pipeline, graph, t);
        let mut attributes = Vec::new();
        if !label.is_empty() {
            attributes.push(format!("label={}", quote(&label)));
        }
        if graph.is_shadowed(t) {
            attributes.push(SHADOWED.to_owned());
        }
        if taken(t) {
            attributes.push(r##"color="#1565c0", penwidth=2.5"##.to_owned());
        }
        if attributes.is_empty() {
            let _ = writeln!(out, "  s{from} -> s{to};");
        } else {
            let _ = writeln!(out, "  s{from} -> s{to} [{}];", attributes.join(", "));
        }
    }
    out.push_str("}\n");
    out
}

/// A DOT double-quoted string. Inside one, only `"` needs escaping, but a backslash starts
/// an escape in labels (`\n`, `\l`, `\N`…), so a literal one is doubled; line breaks become
/// `\n` (centered line) and other control characters a space.
fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            c if c.is_control() => quoted.push(' '),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quotes_backslashes_and_line_breaks_are_escaped() {
        assert_eq!(quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(quote("x\ny\r"), r#""x\ny ""#);
        assert_eq!(quote("$x | <y> & {z}"), r#""$x | <y> & {z}""#);
    }
}
