//! Mermaid `stateDiagram-v2`: `[*] -->` the initial state, terminal states `--> [*]`, success
//! and failure terminals and pause states in their own classes, one edge per transition
//! labelled with its guard.

use std::fmt::Write;

use super::{transition_label, TransitionGraph};
use crate::pipeline::Pipeline;

/// The pipeline as a mermaid state diagram. States are named `s0`, `s1`… by index and
/// declared with their id as description (`state "precheck" as s0`), so ids with `-` or
/// other characters mermaid reads as syntax are safe; transitions whose `from` or `to` is
/// unknown are left out.
pub fn to_mermaid(pipeline: &Pipeline, graph: &TransitionGraph) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = writeln!(out, "---");
    let _ = writeln!(out, "title: {}", title(&pipeline.name.value));
    let _ = writeln!(out, "---");
    let _ = writeln!(out, "stateDiagram-v2");
    let _ = writeln!(out, "  classDef success fill:#c8e6c9,stroke:#2e7d32");
    let _ = writeln!(out, "  classDef failure fill:#ffcdd2,stroke:#c62828");
    let _ = writeln!(out, "  classDef pause stroke-dasharray:5 5");
    let mut classes: [(&str, Vec<String>); 3] = [
        ("success", Vec::new()),
        ("failure", Vec::new()),
        ("pause", Vec::new()),
    ];
    for (i, state) in pipeline.states.iter().enumerate() {
        let class = if graph.is_terminal(i) && graph.is_failure(i) {
            Some(1)
        } else if graph.is_terminal(i) {
            Some(0)
        } else if state.pause {
            Some(2)
        } else {
            None
        };
        let suffix = if class == Some(2) { " (pause)" } else { "" };
        let _ = writeln!(out, "  state \"{}{suffix}\" as s{i}", text(&state.id.value));
        if let Some((_, members)) = class.and_then(|c| classes.get_mut(c)) {
            members.push(format!("s{i}"));
        }
    }
    if let Some(initial) = graph.initial() {
        let _ = writeln!(out, "  [*] --> s{initial}");
    }
    for (t, transition) in pipeline.transitions.iter().enumerate() {
        let (Some(from), Some(to)) = (
            graph.state_index(&transition.from.value),
            graph.state_index(&transition.to.value),
        ) else {
            continue;
        };
        let label = transition_label(pipeline, graph, t);
        if label.is_empty() {
            let _ = writeln!(out, "  s{from} --> s{to}");
        } else {
            let _ = writeln!(out, "  s{from} --> s{to} : {}", text(&label));
        }
    }
    for i in (0..pipeline.states.len()).filter(|&i| graph.is_terminal(i)) {
        let _ = writeln!(out, "  s{i} --> [*]");
    }
    for (class, members) in &classes {
        if !members.is_empty() {
            let _ = writeln!(out, "  class {} {class}", members.join(","));
        }
    }
    out
}

/// Text safe in a state description or an edge label: mermaid ends a label at `:`, `;` or a
/// line end, reads `#…;` as an entity, `%%` as a comment, and hands the rest to HTML, so
/// every character that could mean something is written as a numeric entity (`#58;`), which
/// mermaid turns back into the character when it draws.
fn text(raw: &str) -> String {
    let mut safe = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '\n' | '\r' | '\t' => safe.push(' '),
            c if c.is_control() => safe.push(' '),
            '"' | '#' | ':' | ';' | '%' | '<' | '>' | '&' | '{' | '}' | '[' | ']' | '|' | '\\'
            | '`' => {
                let _ = write!(safe, "#{};", u32::from(c));
            }
            c => safe.push(c),
        }
    }
    safe
}

/// The front-matter title: a YAML double-quoted scalar.
fn title(name: &str) -> String {
    serde_json::Value::String(name.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn characters_mermaid_reads_as_syntax_become_entities() {
        assert_eq!(
            text(r#"test "$x" = a; b: c # d < e > f & g | h"#),
            "test #34;$x#34; = a#59; b#58; c #35; d #60; e #62; f #38; g #124; h"
        );
        assert_eq!(text("%% no\ncomment"), "#37;#37; no comment");
    }
}
